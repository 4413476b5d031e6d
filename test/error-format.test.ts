// Error formats (docs/errors.md#error-formats): one declaration of how errors are answered and
// documented. What a client sees, through app.inject() and real sockets: every kind of error in
// the declared format and its media type, which declaration wins, the document that describes
// those answers, and real answers checked against the documented schemas.
import { test, type Test } from 'tap'
import net from 'node:net'
import Fastify, { type FastifyInstance, type LightMyRequestResponse, type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { FormatRegistry, Type, type Static, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { Validator } from '@seriousme/openapi-schema-validator'
import views, {
  APIView, Catch, Get, Post, Throws, ViewRouter, configureApp, mix, registerView
} from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import {
  BadRequest, ConfigurationError, Conflict, ContentTooLarge, ErrorFormat, NotFound, PROBLEM_CONTENT_TYPE,
  PROBLEM_FORMAT, RequestValidationError, TooManyRequests, Unauthorized, UnprocessableContent, UnsupportedMediaType,
  URITooLong, errorClassSchema, problemClientErrorHandler, problemErrorHandler, problemFormat, problemFrameworkErrors,
  problemNotFoundHandler, type APIErrorClass, type Problem
} from '../lib/errors.js'
import { AsyncGenericViewSet, CursorPaginationFilter, MemoryRepository, PaginationFilter, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { caught } from './helpers.js'

// ---------------------------------------------------------------------------------------------
// The custom format: `{ errors: { body: [...] } }`, validation failures answered 422.

const ERRORS_TYPE = 'application/vnd.example.errors+json'

const ErrorBody = Type.Object({
  errors: Type.Object({ body: Type.Array(Type.String(), { minItems: 1 }) }, { additionalProperties: false })
}, { $id: 'ErrorBody', additionalProperties: false })
type ErrorBody = Static<typeof ErrorBody>
const checkErrorBody = TypeCompiler.Compile(ErrorBody)

/** One message per invalid value (`/name: Expected ...`), or the detail when there is none. */
const messagesOf = (problem: Problem): string[] =>
  problem.errors === undefined || problem.errors.length === 0 ? [problem.detail] : problem.errors.map((e) => `${e.pointer.slice(1)}: ${e.detail}`)

const customFormat = (): ErrorFormat<typeof ErrorBody> => new ErrorFormat({
  contentType: ERRORS_TYPE,
  validationStatus: 422,
  body: (problem) => ({ errors: { body: messagesOf(problem) } }),
  schema: ErrorBody
})

/** Asserts an answer in the custom format: status, media type, a body its schema accepts. */
function inFormat (t: Test, res: LightMyRequestResponse, status: number, why: string): ErrorBody {
  t.equal(res.statusCode, status, `${why}: ${status}`)
  t.equal(String(res.headers['content-type']).split(';')[0], ERRORS_TYPE, `${why}: the format's media type`)
  const body = res.json()
  t.ok(checkErrorBody.Check(body), `${why}: the body matches the format's schema`)
  t.notMatch(res.body, /"(type|title|instance|status)":/, `${why}: nothing of the problem document leaks through`)
  return body as ErrorBody
}

const Thing = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const LimitQuery = Type.Object({ limit: Type.Integer({ minimum: 1 }) })
const TenantHeaders = Type.Object({ 'X-Tenant': Type.String({ minLength: 2 }) })
const Numbers = Type.Object({ values: Type.Array(Type.Integer()) })
const IdsQuery = Type.Object({ ids: Type.Array(Type.Integer()) })

class LookupFailed extends Error {}

class Shop extends APIView {
  static override raises = new Map([[LookupFailed, { status: 404, detail: 'No such thing.' }]])

  @Post('/things', { schema: { body: Thing } })
  create (request: ViewRequest<{ body: typeof Thing }>) { return { name: request.body.name } }

  @Get('/things/:id', { schema: { params: IdParams } })
  retrieve (request: ViewRequest<{ params: typeof IdParams }>) { return { id: request.params.id } }

  @Get('/search', { schema: { querystring: LimitQuery } })
  search () { return [] }

  // Routes without a body: one ignores content sent anyway (the default), the other refuses it.
  @Post('/ping', { statusCode: 200 })
  ping () { return { pong: true } }

  @Post('/ping-strict', { statusCode: 200, unexpectedContent: 'refuse' })
  pingStrict () { return { pong: true } }

  @Get('/tenant', { schema: { headers: TenantHeaders } })
  tenant () { return {} }

  @Post('/numbers', { schema: { body: Numbers } })
  numbers () { return {} }

  @Get('/ids', { schema: { querystring: IdsQuery } })
  ids () { return [] }

  @Get('/secret')
  secret (): never { throw new Unauthorized('Sign in first.', { headers: { 'www-authenticate': 'Bearer realm="shop"' } }) }

  @Get('/boom')
  boom (): never { throw new Error('database password is hunter2') }

  @Get('/refused')
  refused (): never { throw new BadRequest('Not like that.') }

  @Get('/plain-400')
  plain400 (): never { throw Object.assign(new Error('a client error that is no validation'), { statusCode: 400 }) }

  @Get('/own-validation')
  ownValidation (): never { throw new RequestValidationError('The coupon is invalid.', { errors: [{ detail: 'expired', pointer: '#/coupon', in: 'query', parameter: 'coupon' }] }) }

  @Get('/typed-validation')
  typedValidation (): never { throw new RequestValidationError('Typed.', { type: 'https://example.com/problems/coupon', title: 'Invalid coupon' }) }

  @Get('/own-answer')
  @Throws(Conflict)
  ownAnswer () { return this.reply.code(409).type(ERRORS_TYPE).send({ conflictWith: 2, note: 'sent by the view itself' }) }

  @Get('/caught')
  @Catch(LookupFailed)
  caughtLookup (): never { throw new LookupFailed('internal lookup detail') }
}

/** An app declared in the custom format, with its own Fastify routes beside the views. */
async function customApp (t: Test, bodyLimit = 1024, format = customFormat()): Promise<FastifyInstance> {
  const app = Fastify({ bodyLimit, frameworkErrors: format.frameworkErrors })
  configureApp(app, { errorFormat: format })
  app.get('/plain', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] } } }, async () => ({ ok: true }))
  app.post('/plain', { schema: { body: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] } } }, async () => ({ ok: true }))
  app.get('/plain-headers', { schema: { headers: { type: 'object', properties: { 'x-n': { type: 'integer' } }, required: ['x-n'] } } }, async () => ({ ok: true }))
  app.get('/plain-boom', async () => { throw new Error('connection string postgres://admin:pw@db') })
  app.get('/plain-any', { schema: { querystring: { type: 'object', minProperties: 1 } } }, async () => ({ ok: true }))
  await app.register(views, { views: [{ view: Shop, prefix: '' }] })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

const JSON_TYPE = { 'content-type': 'application/json' }

test('a custom format declared with configureApp: every kind of error, on view routes and plain routes, in its body and media type', async (t) => {
  const app = await customApp(t)

  t.test('validation of each part is a 422', async (t) => {
    const body = inFormat(t, await app.inject({ method: 'POST', url: '/things', payload: { name: '', price: -1 } }), 422, 'body')
    t.same(body.errors.body.map((m) => m.split(':')[0]).sort(), ['/name', '/price'], 'one message per invalid member')
    t.same(inFormat(t, await app.inject('/things/abc'), 422, 'params').errors.body.length, 1)
    t.match(inFormat(t, await app.inject('/search?limit=0'), 422, 'query').errors.body[0], /^\/limit: /)
    t.match(inFormat(t, await app.inject('/search'), 422, 'a missing query parameter').errors.body[0], /limit/)
    t.match(inFormat(t, await app.inject({ url: '/tenant', headers: { 'x-tenant': 'a' } }), 422, 'headers').errors.body[0], /x-tenant/i)
    t.equal((await app.inject({ url: '/tenant', headers: { 'x-tenant': 'ab' } })).statusCode, 200, 'a valid request passes')
  })

  t.test('what is not a validation failure keeps its status', async (t) => {
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/things', headers: JSON_TYPE, payload: '{"name":' }), 400, 'malformed JSON').errors.body.length, 1)
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/things', headers: JSON_TYPE, payload: '{"name":"x","price":1,"__proto__":{"a":1}}' }), 400, 'prototype poisoning').errors.body.length, 1)
    t.same(inFormat(t, await app.inject('/refused'), 400, 'a BadRequest the view throws').errors.body, ['Not like that.'])
    t.same(inFormat(t, await app.inject('/plain-400'), 400, 'an error with statusCode 400 and no validation context').errors.body, ['a client error that is no validation'])
    t.same(inFormat(t, await app.inject('/nowhere'), 404, 'an unknown route').errors.body, ['Route GET /nowhere not found.'])
    t.same(inFormat(t, await app.inject('/nowhere?x=1'), 404, 'an unknown route with a query').errors.body, ['Route GET /nowhere not found.'], 'the query is not echoed')
    t.same(inFormat(t, await app.inject('/caught'), 404, 'a caught exception').errors.body, ['No such thing.'])
    t.equal(inFormat(t, await app.inject({ method: 'POST', url: '/things', headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(2000), price: 1 }) }), 413, 'over bodyLimit')
      .errors.body.length, 1)
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'text/csv' }, payload: 'name\nx' }), 415, 'a media type no parser takes').errors.body,
      ['This route takes application/json, not text/csv.'])
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/things', headers: { 'content-type': 'text/plain' }, payload: 'x' }), 415, 'a media type with a parser, on a JSON route').errors.body,
      ['This route takes application/json, not text/plain.'], 'a 415, not a 422: the JSON-only refusal comes before the validation status')
    const ignored = await app.inject({ method: 'GET', url: '/search?limit=1', headers: JSON_TYPE, payload: '{}' })
    t.equal(ignored.statusCode, 200, 'content on a GET that takes none: ignored, no error')
    t.same(ignored.json(), [])
    t.same((await app.inject({ method: 'POST', url: '/ping', headers: JSON_TYPE, payload: '{"not json' })).json(), { pong: true }, 'content on a POST that takes none: read and dropped')
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/ping', headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(2000) }) }), 413, 'content past bodyLimit on a route that takes none').errors.body,
      ['Request body is too large'])
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/ping-strict', headers: JSON_TYPE, payload: '{}' }), 415, 'content on a route that refuses it').errors.body,
      ['This route takes no content.'])
    const notAllowed = await app.inject({ method: 'DELETE', url: '/things/1' })
    t.same(inFormat(t, notAllowed, 405, 'a method the path is not served with').errors.body, ['/things/1 does not take DELETE; it takes GET, HEAD, OPTIONS.'])
    t.equal(notAllowed.headers.allow, 'GET, HEAD, OPTIONS', 'the 405 names the methods in Allow')
  })

  t.test('an APIError keeps its headers; a server error says nothing of itself', async (t) => {
    const res = await app.inject('/secret')
    t.same(inFormat(t, res, 401, 'Unauthorized').errors.body, ['Sign in first.'])
    t.equal(res.headers['www-authenticate'], 'Bearer realm="shop"', 'its www-authenticate header is sent')
    for (const url of ['/boom', '/plain-boom']) {
      const boom = await app.inject(url)
      t.same(inFormat(t, boom, 500, url).errors.body, ['An unexpected error occurred.'], `${url}: a generic detail`)
      t.notMatch(boom.body, /hunter2|postgres|admin|Error|at /, `${url}: no internal message, no stack`)
    }
  })

  t.test('an error body the view sends itself goes out as it is, not through the documented schema', async (t) => {
    const res = await app.inject('/own-answer')
    t.equal(res.statusCode, 409)
    t.equal(String(res.headers['content-type']).split(';')[0], ERRORS_TYPE)
    t.same(res.json(), { conflictWith: 2, note: 'sent by the view itself' }, 'every member kept: an error status in the format\'s media type is serialized with JSON.stringify')
  })

  t.test('a RequestValidationError the view throws itself follows the validation status', async (t) => {
    t.same(inFormat(t, await app.inject('/own-validation'), 422, 'thrown by the view').errors.body, ['/coupon: expired'])
    // With a problem type of its own, its title is not the status phrase, and stays (see the problem format test below).
    t.same(inFormat(t, await app.inject('/typed-validation'), 422, 'with a type of its own').errors.body, ['Typed.'])
  })

  t.test('the application\'s own routes (Ajv) answer in the format, validation as 422', async (t) => {
    t.match(inFormat(t, await app.inject('/plain?n=x'), 422, 'plain route, query').errors.body[0], /^\/n: must be integer/)
    t.match(inFormat(t, await app.inject('/plain'), 422, 'plain route, missing query member').errors.body[0], /^\/n: must have required property 'n'/)
    t.match(inFormat(t, await app.inject({ method: 'POST', url: '/plain', payload: { name: '' } }), 422, 'plain route, body').errors.body[0], /^\/name: /)
    t.match(inFormat(t, await app.inject({ url: '/plain-headers', headers: { 'x-n': 'x' } }), 422, 'plain route, headers').errors.body[0], /^\/x-n: /)
    t.same(inFormat(t, await app.inject('/plain-any'), 422, 'plain route, the query as a whole').errors.body, [': must NOT have fewer than 1 properties'])
    t.equal(inFormat(t, await app.inject({ method: 'POST', url: '/plain', headers: JSON_TYPE, payload: '{' }), 400, 'plain route, malformed JSON').errors.body.length, 1)
    t.match(inFormat(t, await app.inject({ method: 'POST', url: '/plain', headers: { 'content-type': 'text/csv' }, payload: 'a' }), 415, 'plain route, unknown media type').errors.body[0], /^Unsupported Media Type/)
    t.same(inFormat(t, await app.inject({ method: 'POST', url: '/plain', headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(2000) }) }), 413, 'plain route, over bodyLimit').errors.body,
      ['Request body is too large'])
  })

  t.test('frameworkErrors: a URL Fastify\'s router cannot decode', async (t) => {
    t.match(inFormat(t, await app.inject('/things/%'), 400, 'GET /things/%').errors.body[0], /not a valid url component/)
    t.match(inFormat(t, await app.inject('/items/%'), 400, 'GET /items/% (no such route either)').errors.body[0], /not a valid url component/)
  })
})

/** Sends raw bytes and reads until the server closes the connection. */
async function rawRequest (port: number, request: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => { socket.end(request) })
    let data = ''
    socket.on('data', (chunk) => { data += chunk.toString() })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
}

/** The status, headers and body of a raw HTTP/1.1 answer. */
function parseRaw (raw: string): { status: number, headers: Record<string, string>, body: string } {
  const [head, ...rest] = raw.split('\r\n\r\n')
  const [statusLine, ...lines] = head.split('\r\n')
  const headers = Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]))
  return { status: Number(statusLine.split(' ')[1]), headers, body: rest.join('\r\n\r\n') }
}

test('over a real socket: requests Node cannot parse are answered in the format, then the connection closes', async (t) => {
  const app = await customApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as net.AddressInfo

  const garbage = parseRaw(await rawRequest(port, 'THIS IS NOT HTTP\r\n\r\n'))
  t.equal(garbage.status, 400, 'a malformed request line: 400')
  t.equal(garbage.headers['content-type'], ERRORS_TYPE, 'in the format\'s media type')
  t.equal(garbage.headers.connection, 'close')
  t.same(JSON.parse(garbage.body), { errors: { body: ['The request could not be parsed.'] } })
  t.equal(Number(garbage.headers['content-length']), Buffer.byteLength(garbage.body), 'Content-Length is the body\'s byte length')

  const overflow = parseRaw(await rawRequest(port, `GET /things/1 HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(20_000)}\r\n\r\n`))
  t.equal(overflow.status, 431, 'headers over Node\'s limit: 431')
  t.equal(overflow.headers['content-type'], ERRORS_TYPE)
  t.same(JSON.parse(overflow.body), { errors: { body: ['The request headers are too large.'] } })

  const mismatch = parseRaw(await rawRequest(port, 'POST /things HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: 5\r\n\r\n{"name":"x","price":1}'))
  t.equal(mismatch.status, 400, 'more bytes than declared: the first request is cut short, malformed JSON')
  t.equal(mismatch.headers['content-type'], ERRORS_TYPE, 'answered in the format')

  // An invalid request that Node parses goes through Fastify: the same format over the wire.
  const invalid = await fetch(`http://127.0.0.1:${port}/things/abc`)
  t.equal(invalid.status, 422)
  t.equal(invalid.headers.get('content-type')?.split(';')[0], ERRORS_TYPE)
  t.ok(checkErrorBody.Check(await invalid.json()))
})

test('the clientError listener of a format, on sockets in every state', async (t) => {
  const format = customFormat()
  const written: string[] = []
  let destroyed = 0
  const socket = {
    destroyed: false,
    writable: true,
    bytesWritten: 0,
    write (s: string) { written.push(s) },
    destroy () { destroyed++ }
  }
  const as = (s: object): net.Socket => s as unknown as net.Socket
  format.clientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), as(socket))
  format.clientErrorHandler(Object.assign(new Error('r'), { code: 'ECONNRESET' }), as(socket))
  format.clientErrorHandler(new Error('gone'), as({ ...socket, destroyed: true }))
  format.clientErrorHandler(new Error('unwritable'), as({ ...socket, writable: false }))
  format.clientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), as({ ...socket, _httpMessage: { headersSent: true } }))
  format.clientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), as({ ...socket, _httpMessage: { headersSent: false } }))
  format.clientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), as({ ...socket, _httpMessage: null, bytesWritten: 10 }))
  t.equal(written.length, 2, 'answered only where nothing was sent yet')
  t.match(written[0], /^HTTP\/1\.1 408 Request Timeout\r\nContent-Length: \d+\r\nContent-Type: application\/vnd\.example\.errors\+json\r\nConnection: close\r\n\r\n\{"errors":\{"body":\["The request was not received in time\."\]\}\}$/)
  t.match(written[1], /^HTTP\/1\.1 408 /, 'a response not started yet: answered')
  t.equal(destroyed, 5, 'every socket but a reset or destroyed one is destroyed')
})

// ---------------------------------------------------------------------------------------------
// Which declaration wins.

/** A format that names itself in its media type and body. */
function tagged (name: string, validationStatus: 400 | 422): ErrorFormat {
  const Body = Type.Object({ format: Type.Literal(name), status: Type.Integer(), detail: Type.String() }, { $id: `${name}Error` })
  return new ErrorFormat({ contentType: `application/vnd.${name}+json`, validationStatus, body: (problem) => ({ format: name, status: problem.status, detail: problem.detail }), schema: Body })
}

class Probe extends APIView {
  @Get('/:id', { schema: { params: IdParams } })
  find (request: ViewRequest<{ params: typeof IdParams }>) { return { id: request.params.id } }
}

/** Which format answered a request, and with which status. */
async function answeredBy (app: FastifyInstance, url: string): Promise<string> {
  const res = await app.inject(url)
  const type = String(res.headers['content-type']).split(';')[0]
  return `${type} ${res.statusCode}`
}

test('precedence: a registration entry over a router over the plugin over configureApp; a child context inherits the app\'s format', async (t) => {
  const [app0, plugin, router, entry] = [tagged('app', 422), tagged('plugin', 400), tagged('router', 422), tagged('entry', 400)]
  const app = Fastify()
  configureApp(app, { errorFormat: app0 })
  await app.register(swagger, swaggerOptions({ info: { title: 'Precedence', version: '1.0.0' } }))
  app.get('/own', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}))
  const routed = new ViewRouter({ prefix: '/router', errorFormat: router })
    .registerView(Probe, { prefix: '/inherit' })
    .registerView(Probe, { prefix: '/own', errorFormat: entry })
  // configureApp: false, so the plugin's format is a level around its views, not the app's.
  await app.register(views, {
    configureApp: false,
    errorFormat: plugin,
    views: [{ view: Probe, prefix: '/plugin' }, { view: Probe, prefix: '/entry', errorFormat: entry }, routed]
  })
  registerView(app, Probe, { prefix: '/direct' })
  registerView(app, Probe, { prefix: '/direct-entry', errorFormat: entry })
  new ViewRouter({ prefix: '/bare-router', errorFormat: router }).registerView(Probe, { prefix: '' }).register(app)
  registerView(app, Shop) // no options at all: no standard actions, served where its routes say
  await app.register(async (child) => {
    child.get('/child-own', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}))
    registerView(child, Probe, { prefix: '/child-direct' })
    await child.register(views, { views: [{ view: Probe, prefix: '/child-plugin' }] })
  })
  await app.ready()
  t.teardown(() => app.close())

  const expected: Record<string, string> = {
    '/plugin/x': 'application/vnd.plugin+json 400',
    '/entry/x': 'application/vnd.entry+json 400',
    '/router/inherit/x': 'application/vnd.router+json 422',
    '/router/own/x': 'application/vnd.entry+json 400',
    '/direct/x': 'application/vnd.app+json 422',
    '/direct-entry/x': 'application/vnd.entry+json 400',
    '/bare-router/x': 'application/vnd.router+json 422',
    '/things/x': 'application/vnd.app+json 422',
    '/child-direct/x': 'application/vnd.app+json 422',
    '/child-plugin/x': 'application/vnd.app+json 422',
    '/own?n=x': 'application/vnd.app+json 422',
    '/child-own?n=x': 'application/vnd.app+json 422',
    '/nowhere': 'application/vnd.app+json 404',
    '/plugin/1/unknown': 'application/vnd.app+json 404'
  }
  for (const [url, answer] of Object.entries(expected)) t.equal(await answeredBy(app, url), answer, `GET ${url}: ${answer}`)

  // The document follows the same declaration: each operation's errors in its own format.
  const doc = app.swagger() as unknown as Doc
  const typesOf = (path: string): string[] => [
    ...new Set(
      Object.entries(doc.paths[path].get.responses).filter(([s]) => Number(s) >= 400).flatMap(
        ([, r]) => Object.keys(r.content ?? {})
      )
    )
  ]
  t.same(typesOf('/plugin/{id}'), ['application/vnd.plugin+json'])
  t.same(typesOf('/entry/{id}'), ['application/vnd.entry+json'])
  t.same(typesOf('/router/inherit/{id}'), ['application/vnd.router+json'])
  t.same(typesOf('/router/own/{id}'), ['application/vnd.entry+json'])
  t.same(typesOf('/direct/{id}'), ['application/vnd.app+json'])
  t.same(typesOf('/child-plugin/{id}'), ['application/vnd.app+json'])
  t.same(Object.keys(doc.paths['/plugin/{id}'].get.responses).sort(), ['200', '400', '414'], 'a 400 format documents the failed validation as 400')
  t.same(Object.keys(doc.paths['/direct/{id}'].get.responses).sort(), ['200', '400', '414', '422'], 'a 422 format documents it as 422; 400 and 414 stay for a path the router refuses')
  t.same(Object.keys(doc.components.schemas).filter((name) => name.endsWith('Error')).sort(), ['appError', 'entryError', 'pluginError', 'routerError'], 'each format\'s schema a component')
  t.notOk(Object.keys(doc.components.schemas).some((name) => name.endsWith('Problem')), 'no problem+json component: no route answers it')
})

test('the plugin\'s errorFormat configures the app: its views, its own routes and its 404s', async (t) => {
  const format = tagged('plugged', 422)
  const app = Fastify()
  await app.register(views, { errorFormat: format, views: [{ view: Probe, prefix: '/p' }] })
  app.get('/after', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}))
  await app.ready()
  t.teardown(() => app.close())
  t.equal(await answeredBy(app, '/p/x'), 'application/vnd.plugged+json 422')
  t.equal(await answeredBy(app, '/after?n=x'), 'application/vnd.plugged+json 422', 'a route added after the plugin')
  t.equal(await answeredBy(app, '/missing'), 'application/vnd.plugged+json 404')
  t.same((await app.inject('/missing')).json(), { format: 'plugged', status: 404, detail: 'Route GET /missing not found.' })

  // The plugin with a format and no views: views registered by hand afterwards answer in it.
  const byHand = Fastify()
  await byHand.register(views, { errorFormat: format })
  registerView(byHand, Probe, { prefix: '/r' })
  await byHand.ready()
  t.teardown(() => byHand.close())
  t.equal(await answeredBy(byHand, '/r/x'), 'application/vnd.plugged+json 422')
})

test('configureApp twice: the same format is fine, another is refused with FV_ERR_ERROR_FORMAT', async (t) => {
  const a = tagged('a', 422)
  const app = Fastify()
  t.equal(configureApp(app, { errorFormat: a }), app, 'returns the app')
  t.equal(configureApp(app, { errorFormat: a }), app, 'the same format again')
  t.equal(configureApp(app), app, 'no format: the one it has')
  await app.register(views, { errorFormat: a, views: [{ view: Probe, prefix: '/p' }] })
  await app.register(views, { views: [{ view: Probe, prefix: '/q' }] })
  const error = await caught(() => configureApp(app, { errorFormat: tagged('b', 422) }))
  t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
  t.equal((error as ConfigurationError).code, 'FV_ERR_ERROR_FORMAT')
  t.match((error as Error).message,
    /configured with one error format and is now given another \(application\/vnd\.a\+json, validation 422, then application\/vnd\.b\+json, validation 422\)/)
  await app.ready()
  t.teardown(() => app.close())
  t.equal(await answeredBy(app, '/p/x'), 'application/vnd.a+json 422')
  t.equal(await answeredBy(app, '/q/x'), 'application/vnd.a+json 422')

  // The default, named or not, is one format; a fresh problemFormat() is another instance.
  const plain = Fastify()
  configureApp(plain)
  t.equal(configureApp(plain, { errorFormat: PROBLEM_FORMAT }), plain, 'configureApp(app) then PROBLEM_FORMAT: the same')
  const refused = await caught(() => configureApp(plain, { errorFormat: problemFormat() }))
  t.equal((refused as ConfigurationError).code, 'FV_ERR_ERROR_FORMAT', 'an equal but distinct problemFormat() is refused')
  t.match((refused as Error).message, /\(problem\+json, then application\/problem\+json, validation 400\)/)
  await plain.close()
})

test('a child context may declare its own format with configureApp: its routes and its prefix\'s 404s', async (t) => {
  const [outer, inner] = [tagged('outer', 400), tagged('inner', 422)]
  const app = Fastify()
  configureApp(app, { errorFormat: outer })
  await app.register(async (child) => {
    configureApp(child, { errorFormat: inner })
    registerView(child, Probe, { prefix: '/p' })
    child.get('/own', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}))
  }, { prefix: '/v2' })
  await app.register(async (sibling) => {
    // Configured in a sibling without a prefix: `/` already has its 404 handler, the error handler is set again.
    configureApp(sibling)
    registerView(sibling, Probe, { prefix: '/s' })
  })
  registerView(app, Probe, { prefix: '/p' })
  await app.ready()
  t.teardown(() => app.close())
  t.equal(await answeredBy(app, '/v2/p/x'), 'application/vnd.inner+json 422')
  t.equal(await answeredBy(app, '/v2/own?n=x'), 'application/vnd.inner+json 422')
  t.equal(await answeredBy(app, '/v2/nowhere'), 'application/vnd.inner+json 404', 'the child\'s prefix has its own 404s')
  t.equal(await answeredBy(app, '/p/x'), 'application/vnd.outer+json 400')
  t.equal(await answeredBy(app, '/s/x'), 'application/vnd.outer+json 400', 'a sibling configured without a format inherits the app\'s')
  t.equal(await answeredBy(app, '/nowhere'), 'application/vnd.outer+json 404')
})

test('the plugin refuses to leave earlier routes behind, and checks an opted-out app at ready, whatever the format', async (t) => {
  const early = Fastify()
  early.get('/early', async () => ({}))
  const error = await caught(() => early.register(views, { errorFormat: customFormat() }))
  t.equal((error as ConfigurationError).code, 'FV_ERR_CONFIGURE_FIRST', 'a route before the plugin')
  t.match((error as Error).message, /1 route was added before the plugin \(\/early \(GET, HEAD\)\), so it keeps Fastify's JSON errors/)
  await early.close()

  const many = Fastify()
  for (let i = 0; i < 6; i++) many.get(`/early-${i}`, async () => ({}))
  const manyError = await caught(() => many.register(views, { errorFormat: customFormat() }))
  t.match((manyError as Error).message, /6 routes were added before the plugin \(.*, \.\.\.\), so they keep Fastify's JSON errors/, 'the first five named')
  await many.close()

  const optedOut = Fastify()
  await optedOut.register(views, { configureApp: false, errorFormat: customFormat(), views: [{ view: Probe, prefix: '/p' }] })
  const notReady = await caught(() => optedOut.ready())
  t.equal((notReady as ConfigurationError).code, 'FV_ERR_CONFIGURE_FIRST', 'configureApp: false and no error handler')
  await optedOut.close()
})

test('the plugin, with a format, still warns of a store it cannot describe and refuses an entry that is not a view', async (t) => {
  const lines: string[] = []
  class Unreachable extends MemoryRepository<Static<typeof Item>> {
    async describeColumns (): Promise<void> { throw new Error('connection refused') }
  }
  class Described extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override detailParams = IdParams
    static override repository = asyncRepository(new Unreachable({ rows: rows() })) as never
  }
  const app = Fastify({ logger: { level: 'warn', stream: { write: (line: string) => { lines.push(line) } } } })
  await app.register(views, { errorFormat: customFormat(), views: [{ view: Described, prefix: '/described' }] })
  await app.ready()
  t.teardown(() => app.close())
  t.ok(lines.some((line) => line.includes("the columns of Described's table could not be read")), 'a warning, and the app starts')
  inFormat(t, await app.inject('/described/abc'), 422, 'its views answer in the format all the same')

  class NotAView {}
  for (const [entry, given] of [[{ prefix: '/x' }, '{"prefix":"/x"}'], [null, 'null'], [NotAView, 'the class NotAView']] as Array<[unknown, string]>) {
    const wrong = Fastify()
    const error = await caught(() => wrong.register(views, { errorFormat: customFormat(), views: [entry as never] }))
    t.equal((error as ConfigurationError).code, 'FV_ERR_VIEW_ENTRY', `${given}: not a view`)
    t.match((error as Error).message, `; got ${given}`)
    await wrong.close()
  }
  // A bare class is an entry too, and is registered in the plugin's format.
  const bare = Fastify()
  await bare.register(views, { errorFormat: customFormat(), views: [Shop] })
  await bare.ready()
  t.teardown(() => bare.close())
  inFormat(t, await bare.inject('/things/abc'), 422, 'a view given as a bare class')
})

test('an ErrorFormat refuses what it cannot work with', async (t) => {
  const body = (problem: Problem): Problem => problem
  const cases: Array<[string, () => unknown, RegExp]> = [
    ['validationStatus 418', () => new ErrorFormat({ validationStatus: 418 as 422, body, schema: Type.Unknown() }), /validationStatus must be 400 or 422; got 418/],
    ['no body', () => new ErrorFormat({ body: undefined as never, schema: Type.Unknown() }), /needs body/],
    ['a null schema', () => new ErrorFormat<TSchema>({ body, schema: null as never }), /needs body/],
    ['a string schema', () => new ErrorFormat<TSchema>({ body, schema: 'Problem' as never }), /needs body/]
  ]
  for (const [why, act, message] of cases) {
    const error = await caught(act)
    t.equal((error as ConfigurationError).code, 'FV_ERR_ERROR_FORMAT', why)
    t.match((error as Error).message, message, why)
  }
  const defaults = new ErrorFormat({ body, schema: (_errors, status) => Type.Object({ status: Type.Literal(status) }) })
  t.equal(defaults.contentType, 'application/json', 'default media type')
  t.equal(defaults.validationStatus, 400, 'default validation status')
  t.same(defaults.schemaFor([NotFound], 404), Type.Object({ status: Type.Literal(404) }), 'a schema function is called per status')
  t.same(defaults.serialize({ type: 'about:blank', title: 'Gone', status: 410, detail: 'x' }), { contentType: 'application/json', payload: '{"type":"about:blank","title":"Gone","status":410,"detail":"x"}' })
  t.equal(problemFormat({ validationStatus: 422 }).contentType, PROBLEM_CONTENT_TYPE)
  t.equal(problemErrorHandler, PROBLEM_FORMAT.errorHandler, 'the problem handlers are the default format\'s')
  t.equal(problemNotFoundHandler, PROBLEM_FORMAT.notFoundHandler)
  t.equal(problemFrameworkErrors, PROBLEM_FORMAT.frameworkErrors)
  t.equal(problemClientErrorHandler, PROBLEM_FORMAT.clientErrorHandler)
})

test('problemFormat({ validationStatus: 422 }): problems with status 422 and its title; the rest unchanged', async (t) => {
  const app = Fastify({ bodyLimit: 1024 })
  configureApp(app, { errorFormat: problemFormat({ validationStatus: 422 }) })
  app.get('/plain', { schema: { querystring: { type: 'object', properties: { n: { type: 'integer' } } } } }, async () => ({}))
  app.get('/plain-any', { schema: { querystring: { type: 'object', minProperties: 1 } } }, async () => ({}))
  await app.register(views, { views: [{ view: Shop, prefix: '' }] })
  await app.ready()
  t.teardown(() => app.close())
  const invalid = await app.inject({ method: 'POST', url: '/things', payload: { name: '', price: 1 } })
  t.equal(invalid.statusCode, 422)
  t.match(invalid.headers['content-type'], /^application\/problem\+json/)
  t.match(invalid.json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'The request body is invalid.', instance: '/things', errors: [{ pointer: '#/name' }] })
  t.match((await app.inject('/plain?n=x')).json(), { status: 422, title: 'Unprocessable Entity', detail: 'The query string is invalid.', errors: [{ pointer: '#/n', in: 'query', parameter: 'n' }] })
  t.same((await app.inject('/plain-any')).json().errors, [{ detail: 'must NOT have fewer than 1 properties', pointer: '#', in: 'query', parameter: '' }], 'the query as a whole: no parameter name')
  t.match((await app.inject('/things/0')).json(), { status: 422, detail: 'The path parameters are invalid.', errors: [{ in: 'path', parameter: 'id' }] })
  t.match((await app.inject('/typed-validation')).json(), { status: 422, type: 'https://example.com/problems/coupon', title: 'Invalid coupon' }, 'a typed problem keeps its own title')
  t.match((await app.inject({ method: 'POST', url: '/things', headers: JSON_TYPE, payload: '{' })).json(), { status: 400, title: 'Bad Request' }, 'malformed JSON stays 400')
  t.match((await app.inject('/refused')).json(), { status: 400, title: 'Bad Request', detail: 'Not like that.' }, 'a BadRequest stays 400')
})

test('a hand-made validation error on a plain route: entries from whatever it carries', async (t) => {
  const app = Fastify()
  configureApp(app, { errorFormat: problemFormat({ validationStatus: 422 }) })
  app.get('/bare', async () => { throw Object.assign(new Error('Bare.'), { statusCode: 400, validationContext: 'cookies', validation: [{}] }) })
  app.get('/none', async () => { throw Object.assign(new Error('None.'), { statusCode: 400, validationContext: 'body' }) })
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/bare')).json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'Bare.', instance: '/bare', errors: [{ detail: 'is invalid', pointer: '#' }] },
    'no message, no path, a part with no location: the entry says what it can')
  t.same((await app.inject('/none')).json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, detail: 'The request body is invalid.', instance: '/none', errors: [] })
})

// ---------------------------------------------------------------------------------------------
// The document.

type Media = { schema?: { $ref?: string } }
type Operation = {
  operationId: string,
  requestBody?: unknown,
  responses: Record<string, { content?: Record<string, Media> }>
}
type Doc = { paths: Record<string, Record<string, Operation>>, components: { schemas: Record<string, unknown> } }

const Item = Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1 }) }, { $id: 'FmtItem' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }) })
class Pages extends PaginationFilter { static override fields = { name: Type.String() } }
class Cursors extends CursorPaginationFilter { static override fields = { name: Type.String() } }

const rows = (): Array<Static<typeof Item>> => [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }, { id: 3, name: 'chair' }]

/** A small viewset with bulk actions, a cursor-paged list, an unvalidated custom action and one that throws. */
function viewsFor () {
  const store = new MemoryRepository<Static<typeof Item>>({ rows: rows(), unique: ['name'] })
  class Items extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override bulkUpdateSchema = Item
    static override detailParams = IdParams
    static override filter = Pages
    static override repository = asyncRepository(store) as never
    static override errors = [Unauthorized]

    @Get('/ping')
    ping () { return { pong: true } }
  }
  class Feed extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override detailParams = IdParams
    static override filter = Cursors
    static override repository = asyncRepository(new MemoryRepository<Static<typeof Item>>({ rows: rows(), unique: ['name'] })) as never
  }
  return { Items, Feed }
}

interface Facts { validates: boolean, body: boolean }

/** A documented app over the viewset; what each view route validates, from the route Fastify is given. */
async function documented (t: Test, format: ErrorFormat | undefined, bodyLimit = 2048): Promise<{
  app: FastifyInstance,
  doc: Doc,
  facts: Map<string, Facts>
}> {
  // The router's own refusals (a path parameter not valid percent-encoding, or too long) in the format too.
  const app = Fastify({ bodyLimit, frameworkErrors: (format ?? PROBLEM_FORMAT).frameworkErrors })
  configureApp(app, format === undefined ? {} : { errorFormat: format })
  const facts = new Map<string, Facts>()
  app.addHook('onRoute', (route: RouteOptions) => {
    if ((route.config)?.view === undefined || route.method === 'HEAD') return
    const schema = (route.schema ?? {}) as Record<string, unknown>
    const path = route.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    facts.set(`${String(route.method).toLowerCase()} ${path}`, { validates: ['params', 'querystring', 'headers', 'body'].some((part) => schema[part] !== undefined), body: schema.body !== undefined })
  })
  await app.register(swagger, swaggerOptions({ info: { title: 'Formats', version: '1.0.0' } }))
  const { Items, Feed } = viewsFor()
  await app.register(views, { views: [{ view: Items, prefix: '/items' }, { view: Feed, prefix: '/feed' }] })
  await app.ready()
  t.teardown(() => app.close())
  return { app, doc: JSON.parse(JSON.stringify(app.swagger())) as Doc, facts }
}

/** Every documented error response: operation key, status, response. */
function errorResponses (doc: Doc): Array<[string, number, { content?: Record<string, Media> }]> {
  return Object.entries(doc.paths).flatMap(([path, operations]) => Object.entries(operations).flatMap(([method,
    operation]) =>
    Object.entries(operation.responses).filter(([status]) => Number(status) >= 400).map(([status, response]) => [`${method} ${path}`, Number(status), response] as [string, number, typeof response])))
}

/**
 * The component a TypeBox schema should be in the document: its own `$id` is the component's
 * name, and a nested schema with an `$id` is a reference to its own component.
 */
function componentOf (schema: TSchema): unknown {
  const shown = (value: unknown, root: boolean): unknown => {
    if (Array.isArray(value)) return value.map((member) => shown(member, false))
    if (typeof value !== 'object' || value === null) return value
    const source = value as Record<string, unknown>
    if (!root && typeof source.$id === 'string') return { $ref: `#/components/schemas/${source.$id}` }
    return Object.fromEntries(Object.entries(source).filter(([key]) => !(root && key === '$id')).map(([key, member]) => [key, shown(member, false)]))
  }
  return shown(JSON.parse(JSON.stringify(schema)), true)
}

test('the document of a custom format: every error response in its media type and its component; 422 where a route validates, 400 where it takes a body', async (t) => {
  const { doc, facts } = await documented(t, customFormat())
  const responses = errorResponses(doc)
  t.ok(responses.length > 20, `${responses.length} error responses`)
  for (const [key, status, response] of responses) {
    t.same(Object.keys(response.content ?? {}), [ERRORS_TYPE], `${key} ${status}: the format's media type only`)
    t.same(response.content?.[ERRORS_TYPE].schema, { $ref: '#/components/schemas/ErrorBody' }, `${key} ${status}: the format's component`)
  }
  t.same(doc.components.schemas.ErrorBody, componentOf(ErrorBody), 'the component is the format\'s schema')
  t.same(Object.keys(doc.components.schemas).filter((name) => /Problem/.test(name)), [], 'no problem component in the document')
  t.equal(facts.size, Object.values(doc.paths).reduce((n, operations) => n + Object.keys(operations).length, 0), 'every operation is a view route seen')
  for (const [key, { validates, body }] of facts) {
    const [method, path] = key.split(' ')
    const statuses = Object.keys(doc.paths[path][method].responses).map(Number)
    t.equal(statuses.includes(422), validates, `${key}: 422 ${validates ? '' : 'not '}documented (${validates ? 'validates' : 'validates nothing'})`)
    // A body that is not JSON, or a path parameter that is not valid percent-encoding: malformed, a 400 under 422 too.
    const malformed = body || path.includes('{')
    t.equal(statuses.includes(400), malformed, `${key}: 400 ${malformed ? '' : 'not '}documented (${malformed ? 'a body or a path parameter' : 'neither a body nor a path parameter'})`)
  }
  t.notOk(facts.get('get /items/ping')!.validates, 'the unvalidated custom action is among them')
  const result = await new Validator().validate(doc)
  t.same(result, { valid: true }, JSON.stringify(result.errors ?? []).slice(0, 2000))
})

test('problemFormat({ validationStatus: 422 }) documents UnprocessableContentProblem; the default document is unchanged', async (t) => {
  const { doc, facts } = await documented(t, problemFormat({ validationStatus: 422 }))
  for (const [key, status, response] of errorResponses(doc)) t.same(Object.keys(response.content ?? {}), [PROBLEM_CONTENT_TYPE], `${key} ${status}: problem+json`)
  for (const [key, { validates, body }] of facts) {
    const [method, path] = key.split(' ')
    const responses = doc.paths[path][method].responses
    if (validates) t.same(responses[422].content?.[PROBLEM_CONTENT_TYPE].schema, { $ref: '#/components/schemas/UnprocessableContentProblem' }, `${key}: 422`)
    else t.notOk(responses[422], `${key}: no 422`)
    if (body || path.includes('{')) t.same(responses[400].content?.[PROBLEM_CONTENT_TYPE].schema, { $ref: '#/components/schemas/BadRequestProblem' }, `${key}: 400`)
    else t.notOk(responses[400], `${key}: no 400`)
  }
  t.same(doc.components.schemas.UnprocessableContentProblem, componentOf(errorClassSchema(UnprocessableContent)))
  const result = await new Validator().validate(doc)
  t.same(result, { valid: true }, JSON.stringify(result.errors ?? []).slice(0, 2000))

  const { doc: byDefault, facts: defaultFacts } = await documented(t, undefined)
  for (const [key, { validates }] of defaultFacts) {
    const [method, path] = key.split(' ')
    const responses = byDefault.paths[path][method].responses
    t.notOk(responses[422], `${key}: no 422 by default`)
    if (validates || path.includes('{')) t.same(responses[400].content?.[PROBLEM_CONTENT_TYPE].schema, { $ref: '#/components/schemas/BadRequestProblem' }, `${key}: BadRequestProblem`)
    else t.notOk(responses[400], `${key}: no 400`)
  }
  t.notOk(byDefault.components.schemas.UnprocessableContentProblem)
  const { doc: fresh } = await documented(t, problemFormat())
  t.same(fresh, byDefault, 'a fresh problemFormat() documents exactly what the default does')
  const { doc: named } = await documented(t, PROBLEM_FORMAT)
  t.same(named, byDefault, 'and so does PROBLEM_FORMAT named')
})

test('an error status documented by hand with only a description', async (t) => {
  class Slow extends APIView {
    @Get('/slow', { responses: { 429: { description: 'Slow down.' } } })
    slow (): never { throw new TooManyRequests() }
  }
  const app = Fastify()
  configureApp(app, { errorFormat: customFormat() })
  await app.register(swagger, swaggerOptions({ info: { title: 'Slow', version: '1.0.0' } }))
  await app.register(views, { views: [Slow] })
  await app.ready()
  t.teardown(() => app.close())
  inFormat(t, await app.inject('/slow'), 429, 'answered in the format, with a body')
  const documented = (app.swagger() as unknown as Doc).paths['/slow'].get.responses[429]
  t.equal((documented as { description?: string }).description, 'Slow down.')
  t.same(Object.keys(documented.content ?? {}), [ERRORS_TYPE], 'documented with the body it is answered with')
  t.same(documented.content?.[ERRORS_TYPE].schema, { $ref: '#/components/schemas/ErrorBody' }, 'the format\'s body')
})

// ---------------------------------------------------------------------------------------------
// Real answers against the documented schemas.

/** A second custom format: a schema per status, from the classes the document names. */
const ValidationBody = Type.Object({
  message: Type.String(),
  invalid: Type.Array(Type.Object({ at: Type.String(), why: Type.String() }), { maxItems: 20 })
}, { $id: 'ValidationBody', additionalProperties: false })
const otherBodies = new Map<number, TSchema>()
const otherBody = (status: number): TSchema => {
  let schema = otherBodies.get(status)
  if (schema === undefined) otherBodies.set(status, schema = Type.Object({ error: Type.String(), status: Type.Literal(status) }, { $id: `Error${status}`, additionalProperties: false }))
  return schema
}
const schemaCalls: Array<[string[], number]> = []
const perStatusFormat = (): ErrorFormat => new ErrorFormat({
  validationStatus: 422,
  body: (problem) => problem.status === 400 || problem.status === 422
    ? { message: problem.detail, invalid: (problem.errors ?? []).map((e) => ({ at: e.pointer, why: e.detail })) }
    : { error: problem.detail, status: problem.status },
  schema: (errors, status) => {
    schemaCalls.push([errors.map((cls) => cls.name), status])
    return status === 400 || status === 422 ? ValidationBody : otherBody(status)
  }
})

/** A request that gets `status` from `method path`, for each status the viewset documents. */
function probeFor (method: string, path: string, status: number): {
  method: string,
  url: string,
  headers?: Record<string, string>,
  payload?: string
} | undefined {
  const detail = path.endsWith('{id}')
  const url = path.replace('{id}', '1')
  const bodies: Record<string, string> = {
    'post /items': '{"name":"stool"}',
    'put /items/{id}': '{"name":"lamp 2"}',
    'patch /items/{id}': '{"name":"lamp 3"}',
    'post /items/bulk': '[{"name":"bench"}]',
    'put /items/bulk': '[{"id":1,"name":"lamp"}]',
    'patch /items/bulk': '{"name":"shelf"}',
    'post /feed': '{"name":"post"}',
    'put /feed/{id}': '{"name":"lamp 4"}',
    'patch /feed/{id}': '{"name":"lamp 5"}'
  }
  const body = bodies[`${method} ${path}`]
  const withBody = body === undefined ? {} : { headers: JSON_TYPE, payload: body }
  const bulkFilter = path === '/items/bulk' && (method === 'patch' || method === 'delete') ? '?name=lamp' : ''
  const M = method.toUpperCase()
  switch (status) {
    case 400: return body === undefined ? { method: M, url: path.replace('{id}', '%zz') } : { method: M, url, headers: JSON_TYPE, payload: '{"name":' }
    case 414: return { method: M, url: path.replace('{id}', '1'.repeat(101)), ...withBody }
    case 401: return undefined // documented by the view's `errors`, raised by nothing here
    case 404: return detail ? { method: M, url: path.replace('{id}', '999'), ...withBody } : path === '/items/bulk' && method === 'put' ? { method: M, url, headers: JSON_TYPE, payload: '[{"id":999,"name":"ghost"}]' } : undefined
    case 409: return { method: M, url: url + bulkFilter, headers: JSON_TYPE, payload: path === '/items/bulk' ? (method === 'post' ? '[{"name":"desk"}]' : method === 'put' ? '[{"id":1,"name":"desk"}]' : '{"name":"desk"}') : '{"name":"desk"}' }
    case 413: return { method: M, url: url + bulkFilter, headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(4096) }) }
    case 415: return body === undefined ? { method: M, url: url + bulkFilter, headers: JSON_TYPE, payload: '{}' } : { method: M, url: url + bulkFilter, headers: { 'content-type': 'text/csv' }, payload: 'a' }
    case 422:
      if (detail) return { method: M, url: path.replace('{id}', 'abc'), ...withBody }
      if (body !== undefined && path !== '/items/bulk') return { method: M, url, headers: JSON_TYPE, payload: '{"name":""}' }
      if (path === '/items/bulk' && method === 'post') return { method: M, url, headers: JSON_TYPE, payload: '[{"name":""}]' }
      if (path === '/items/bulk' && method === 'put') return { method: M, url, headers: JSON_TYPE, payload: '[{"id":1,"name":""}]' }
      if (path === '/items/bulk') return { method: M, url, ...withBody } // no filter
      return { method: M, url: `${url}?page_size=0` }
  }
  return undefined
}

// The problem schemas say `type` and `instance` are URI references; the library's validators never
// check a problem, so TypeBox knows no such format until told (any string the URL parser takes
// relative to a base is one).
if (!FormatRegistry.Has('uri-reference')) FormatRegistry.Set('uri-reference', (value) => URL.canParse(value, 'http://example.com/'))

for (const [name, makeFormat, mediaType] of [
  ['one schema for every status (ErrorBody)', customFormat, ERRORS_TYPE],
  ['a schema per status', perStatusFormat, 'application/json'],
  ['problem+json with 422', () => problemFormat({ validationStatus: 422 }), PROBLEM_CONTENT_TYPE]
] as Array<[string, () => ErrorFormat, string]>) {
  test(`every documented error status of the viewset, answered for real, matches its documented schema: ${name}`, async (t) => {
    schemaCalls.length = 0
    const format = makeFormat()
    const { app, doc } = await documented(t, format)
    // The TypeBox schema behind each component the document names.
    const known = new Map<string, TSchema>([[ErrorBody.$id!, ErrorBody], [ValidationBody.$id!, ValidationBody]])
    for (const schema of otherBodies.values()) known.set(schema.$id!, schema)
    for (const cls of [
      BadRequest,
      Unauthorized,
      NotFound,
      Conflict,
      ContentTooLarge,
      URITooLong,
      UnsupportedMediaType,
      UnprocessableContent
    ] as APIErrorClass[]) {
      const schema = errorClassSchema(cls)
      known.set(schema.$id!, schema)
    }
    let checked = 0
    for (const [key, status, response] of errorResponses(doc)) {
      const [method, path] = key.split(' ')
      const ref = response.content?.[mediaType].schema?.$ref
      t.ok(ref, `${key} ${status}: a named schema`)
      const component = ref!.slice('#/components/schemas/'.length)
      const schema = known.get(component)!
      t.same(doc.components.schemas[component], componentOf(schema), `${key} ${status}: ${component} is the schema the format gave`)
      const probe = probeFor(method, path, status)
      if (probe === undefined) {
        t.ok(status === 401 || (status === 404 && !path.includes('{')), `${key} ${status}: nothing here raises it`)
        continue
      }
      const res = await app.inject({ method: probe.method as 'GET', url: probe.url, headers: probe.headers, ...(probe.payload === undefined ? {} : { payload: probe.payload }) })
      t.equal(res.statusCode, status, `${key} ${status}: a real request gets it (${probe.method} ${probe.url})`)
      t.equal(String(res.headers['content-type']).split(';')[0], mediaType, `${key} ${status}: in the format's media type`)
      const check = TypeCompiler.Compile(schema)
      const body: unknown = res.json()
      t.ok(check.Check(body), `${key} ${status}: the body matches ${component}` + (check.Check(body) ? '' : ` ${JSON.stringify([...check.Errors(body)].slice(0, 3))} ${res.body}`))
      checked++
    }
    t.ok(checked >= 30, `${checked} answers checked against their documented schemas`)
    if (makeFormat === perStatusFormat) {
      const calls = new Map(schemaCalls.map(([classes, status]) => [`${status} ${classes.join(',')}`, true]))
      t.ok(calls.has('404 NotFound'), 'the schema function is given the classes of a status: 404 NotFound')
      t.ok(calls.has('422 UnprocessableContent'), '422 UnprocessableContent')
      t.ok(calls.has('400 BadRequest'), '400 BadRequest')
      t.ok(calls.has('415 UnsupportedMediaType'), '415 UnsupportedMediaType')
    }
  })
}

test('library-thrown validation failures follow the format\'s validation status', async (t) => {
  const format = customFormat()
  const { app, doc } = await documented(t, format)
  const cases: Array<[string, {
    method: string,
    url: string,
    headers?: Record<string, string>,
    payload?: string
  }, string]> = [
    ['a bulk delete with no filter', { method: 'DELETE', url: '/items/bulk' }, 'delete /items/bulk'],
    ['a bulk update of many with no filter', { method: 'PATCH', url: '/items/bulk', headers: JSON_TYPE, payload: '{"name":"x"}' }, 'patch /items/bulk'],
    ['a bulk update naming an id twice', { method: 'PUT', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"id":1,"name":"a"},{"id":1,"name":"b"}]' }, 'put /items/bulk'],
    ['a merge patch whose result is invalid', { method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"name":""}' }, 'patch /items/{id}'],
    ['a JSON Patch whose result is invalid', { method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/json-patch+json' }, payload: '[{"op":"remove","path":"/name"}]' }, 'patch /items/{id}'],
    ['a cursor that is not one', { method: 'GET', url: '/feed?cursor=not-a-cursor' }, 'get /feed']
  ]
  for (const [why, request, key] of cases) {
    const res = await app.inject({ method: request.method as 'GET', url: request.url, headers: request.headers, ...(request.payload === undefined ? {} : { payload: request.payload }) })
    const body = inFormat(t, res, 422, why)
    t.ok(body.errors.body.length >= 1, `${why}: says what is wrong (${body.errors.body.join('; ')})`)
    const [method, path] = key.split(' ')
    t.ok(doc.paths[path][method].responses[422], `${why}: 422 is documented on ${key}`)
  }
  // The rows are untouched by the refused writes.
  t.same((await app.inject('/items?page_size=10')).json().items, rows())
})

// ---------------------------------------------------------------------------------------------
// Hostile requests.

test('a body with a thousand invalid members: the answer stays bounded (20 per part)', async (t) => {
  const app = await customApp(t, 1024 * 1024)
  const payload = JSON.stringify({ values: Array.from({ length: 1000 }, (_, i) => `v${i}`) })
  const res = await app.inject({ method: 'POST', url: '/numbers', headers: JSON_TYPE, payload })
  const body = inFormat(t, res, 422, 'a thousand strings for integers')
  t.equal(body.errors.body.length, 20, 'at most 20 entries')
  t.same(body.errors.body.slice(0, 2).map((m) => m.split(':')[0]), ['/values/0', '/values/1'], 'the first ones, in order')
  t.ok(res.body.length < 2000, `a small answer (${res.body.length} bytes) for a large request (${payload.length} bytes)`)

  const query = '/ids?' + Array.from({ length: 500 }, (_, i) => `ids=${i}x`).join('&')
  const ids = inFormat(t, await app.inject(query), 422, 'five hundred values that are not integers in the query')
  t.equal(ids.errors.body.length, 20, 'at most 20 entries for the query too')
  t.equal((await app.inject('/ids?ids=1&ids=2')).statusCode, 200, 'valid ids pass')

  const plain = inFormat(t, await app.inject('/plain?' + Array.from({ length: 500 }, (_, i) => `n=${i}x`).join('&')), 422, 'five hundred values on a plain route')
  t.equal(plain.errors.body.length, 1, 'Fastify\'s Ajv stops at the first error')
})

test('50 concurrent invalid requests over real sockets: all 422 in the format, none mixed up', async (t) => {
  const app = await customApp(t)
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as net.AddressInfo
  const answers = await Promise.all(Array.from({ length: 50 }, async (_, i) => {
    const res = await fetch(`http://127.0.0.1:${port}/things`, { method: 'POST', headers: JSON_TYPE, body: JSON.stringify({ name: '', price: -i - 1, [`extra${i}`]: i }) })
    return { i, status: res.status, type: res.headers.get('content-type')?.split(';')[0], body: await res.json() as ErrorBody }
  }))
  for (const { i, status, type, body } of answers) {
    t.equal(status, 422, `request ${i}: 422`)
    t.equal(type, ERRORS_TYPE, `request ${i}: the format's media type`)
    t.ok(checkErrorBody.Check(body), `request ${i}: the format's body`)
    t.ok(body.errors.body.some((m) => m.startsWith(`/extra${i}:`)), `request ${i}: its own answer (names extra${i})`)
    t.notOk(body.errors.body.some((m) => /\/extra(\d+):/.exec(m)?.[1] !== undefined && /\/extra(\d+):/.exec(m)![1] !== String(i)), `request ${i}: nobody else's`)
  }
})

test('a format whose body throws or gives nothing: the problem document is sent instead, never a crash or an empty answer', async (t) => {
  for (const [name, body] of [['throws', () => { throw new Error('broken format') }], ['gives undefined', () => undefined]] as Array<[string, () => never]>) {
    const format = new ErrorFormat({ contentType: 'application/vnd.broken+json', schema: Type.Unknown(), body })
    const app = Fastify()
    configureApp(app, { errorFormat: format })
    app.get('/boom', async () => { throw new NotFound('Nothing here.') })
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.close())
    const res = await app.inject('/boom')
    t.equal(res.statusCode, 404, `${name}: the status stays`)
    t.equal(String(res.headers['content-type']).split(';')[0], PROBLEM_CONTENT_TYPE, `${name}: a problem document`)
    t.equal(res.json().detail, 'Nothing here.')
    t.equal((await app.inject('/nowhere')).json().status, 404, `${name}: the not-found handler too`)
    // The clientError listener runs outside any request: a throw there would be uncaught.
    const { port } = app.server.address() as { port: number }
    const raw = await new Promise<string>((resolve) => {
      const socket = net.connect(port, '127.0.0.1', () => socket.end('NOT HTTP\r\n\r\n'))
      let text = ''
      socket.on('data', (chunk) => { text += chunk.toString() })
      socket.on('close', () => resolve(text))
    })
    t.match(raw, /^HTTP\/1\.1 400 Bad Request\r\n[\s\S]*Content-Type: application\/problem\+json\r\n[\s\S]*"status":400/, `${name}: a request Node cannot parse gets the problem, and the process lives`)
  }
})

test('under a 422 format only a 400 validation failure becomes 422: one raised with a status of its own keeps it', async (t) => {
  class Picky extends APIView {
    @Get('/picky') picky (): never { throw new RequestValidationError('Not now.', { status: 409 }) }
    @Get('/plain') plain (): never { throw new RequestValidationError('Not so.') }
  }
  const app = Fastify()
  configureApp(app, { errorFormat: problemFormat({ validationStatus: 422 }) })
  await app.register(views, { views: [Picky] })
  t.teardown(() => app.close())
  const kept = await app.inject('/picky')
  t.equal(kept.statusCode, 409)
  t.equal(kept.json().title, 'Conflict')
  const moved = await app.inject('/plain')
  t.equal(moved.statusCode, 422)
  t.equal(moved.json().title, 'Unprocessable Entity', 'an about:blank problem takes the phrase of its new status')
})
