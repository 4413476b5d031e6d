import { test } from 'tap'
import net from 'node:net'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import views, { APIView, Catch, CatchDefined, Get, Post, View, configureApp } from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import {
  APIError, BadRequest, Conflict, ContentTooLarge, Forbidden, InternalServerError, MethodNotAllowed, NotFound,
  PreconditionFailed, PreconditionRequired, ServiceUnavailable, TooManyRequests, Unauthorized, UnprocessableContent,
  UnsupportedMediaType, URITooLong, isAPIErrorClass, statusTitle, type APIErrorClass
} from '../lib/errors.js'
import { build, problem } from './helpers.js'

const Body = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const Anything = Type.Array(Type.Unknown())
// A tree: checking it recurses as deep as the body is nested.
const Tree = Type.Recursive((This) => Type.Object({ children: Type.Array(This) }))
const KindParams = Type.Object({ kind: Type.String() })
const WhichQuery = Type.Object({ which: Type.String() })

class LookupFailed extends Error {}
class OutOfStock extends Error {}
class Unmapped extends Error {}
class SpecificLookup extends LookupFailed {}

class Shop extends APIView {
  static override raises = new Map<abstract new (...args: never[]) => unknown, string | {
    status: number,
    detail: string
  }>([
      [LookupFailed, { status: 404, detail: 'No such product.' }],
      [OutOfStock, 'The product is out of stock.']
    ])

  @Post('/items', { schema: { body: Body } })
  create (request: ViewRequest<{ body: typeof Body }>) { return { ok: request.body.name } }

  @Post('/deep', { schema: { body: Anything } })
  deep () { return { ok: true } }

  @Post('/tree', { schema: { body: Tree } })
  tree () { return { ok: true } }

  @Get('/boom')
  boom (): never { throw new Error('database password is hunter2') }

  @Get('/boom-async')
  async boomAsync (): Promise<never> { throw new TypeError('secret internal state') }

  @Get('/teapot')
  teapot (): never { throw Object.assign(new Error('I am a teapot'), { statusCode: 418 }) }

  @Get('/teapot-302')
  teapot302 (): never { throw Object.assign(new Error('I am a teapot'), { statusCode: 302 }) }

  @Get('/teapot-600')
  teapot600 (): never { throw Object.assign(new Error('I am a teapot'), { statusCode: 600 }) }

  @Get('/teapot-text')
  teapotText (): never { throw Object.assign(new Error('I am a teapot'), { statusCode: '418' }) }

  @Get('/api-error/:kind', { schema: { params: KindParams } })
  apiError (request: ViewRequest<{ params: typeof KindParams }>): never {
    switch (request.params.kind) {
      case 'unauthorized': throw new Unauthorized(undefined, { headers: { 'www-authenticate': 'Bearer' } })
      case 'conflict': throw new Conflict('Name taken.', { extensions: { name: 'duplicate' } })
      case 'limit': throw new TooManyRequests(undefined, { headers: { 'retry-after': 30 } })
      case 'unavailable': throw new ServiceUnavailable('The database is unavailable.')
      case 'internal': throw new InternalServerError()
      case 'typed': throw new APIError('Payment required.', { status: 402, type: 'https://example.com/problems/payment' })
      default: throw new BadRequest()
    }
  }

  @Get('/catch-sync')
  @Catch(LookupFailed)
  catchSync (): never { throw new LookupFailed('internal lookup detail') }

  @Get('/catch-async')
  @Catch(OutOfStock)
  async catchAsync (): Promise<never> { throw new OutOfStock('internal stock detail') }

  @Catch(LookupFailed, { status: 409, detail: 'Given directly.' })
  @Get('/catch-explicit')
  async catchExplicit (): Promise<never> { throw new LookupFailed() }

  @Get('/catch-other')
  @Catch(LookupFailed)
  catchOther (): never { throw new Unmapped('not caught') }

  @Get('/catch-subclass')
  @Catch(LookupFailed)
  catchSubclass (): never { throw new SpecificLookup() }

  @Get('/catch-ok')
  @Catch(LookupFailed)
  async catchOk () { return { fine: true } }

  @Get('/defined-sync')
  @CatchDefined
  definedSync (): never { throw new OutOfStock() }

  @Get('/defined-async')
  @CatchDefined
  async definedAsync (): Promise<never> { throw new LookupFailed() }

  @Get('/defined-unmapped')
  @CatchDefined
  async definedUnmapped (): Promise<never> { throw new Unmapped('internal') }

  @Get('/stacked', { schema: { querystring: WhichQuery } })
  @Catch(OutOfStock)
  @Catch(LookupFailed, { status: 410, detail: 'Gone.' })
  stacked (request: ViewRequest<{ querystring: typeof WhichQuery }>): never {
    if (request.query.which === 'stock') throw new OutOfStock()
    throw new LookupFailed()
  }
}

const appFor = async () => build({ views: [Shop] }, { bodyLimit: 4096 })

test('validation errors: 400 with one entry per pointer', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/items', payload: { name: '', price: '5', extra: 1 } })
  const body = problem(t, res, 400)
  t.equal(body.title, 'Bad Request')
  t.equal(body.detail, 'The request body is invalid.')
  t.equal(body.instance, '/items')
  t.same(body.errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/extra', '#/name', '#/price'])
  t.ok(body.errors.every((e: { detail: string }) => typeof e.detail === 'string' && e.detail.length > 0))
})

test('a JSON body keeps its types: "5", null and true are not numbers', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  for (const price of ['5', null, true]) {
    const body = problem(t, await app.inject({ method: 'POST', url: '/items', payload: { name: 'x', price } }), 400)
    t.same(body.errors.map((e: { pointer: string }) => e.pointer), ['#/price'], `price ${JSON.stringify(price)}`)
  }
  const missing = problem(t, await app.inject({ method: 'POST', url: '/items' }), 400)
  t.same(missing.errors, [{ detail: 'Expected object', pointer: '#' }], 'a missing body points at the root')
})

test('malformed JSON is a 400 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{"name": "x",' }), 400)
  t.equal(body.title, 'Bad Request')
})

test('an empty body declared as JSON is a 400 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '' }), 400)
})

test('an unsupported content type is a 415 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/xml' }, payload: '<a/>' }), 415)
  t.equal(body.title, 'Unsupported Media Type')
})

test('a body over the limit is a 413 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/items', payload: { name: 'x'.repeat(5000), price: 1 } }), 413)
  t.equal(body.title, 'Payload Too Large')
})

test('prototype poisoning payloads are a 400 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  for (const payload of ['{"name":"x","price":1,"__proto__":{"admin":true}}', '{"name":"x","price":1,"constructor":{"prototype":{"admin":true}}}']) {
    const body = problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload }), 400)
    t.equal(body.title, 'Bad Request', 'secure-json-parse refuses it before any handler sees it')
  }
})

async function rawRequest (port: number, request: string): Promise<string> {
  return new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => { socket.end(request) })
    let data = ''
    socket.on('data', (chunk) => { data += chunk.toString() })
    socket.on('end', () => resolve(data))
    socket.on('error', reject)
  })
}

test('a Content-Length that does not match the body is a 400 problem', async (t) => {
  const app = Fastify()
  await app.register((await import('../lib/index.js')).views, { views: [Shop] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as net.AddressInfo
  const head = 'POST /items HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n'
  const body = '{"name":"x","price":1}'

  // Declares more than it sends, then closes its side: Node's parser reports the early end.
  const short = await rawRequest(port, `${head}Content-Length: 100\r\n\r\n${body}`)
  t.match(short, /^HTTP\/1\.1 400/, 'fewer bytes than declared: 400')
  t.match(short, /content-type: application\/problem\+json/i)
  t.match(short, /"detail":"The request could not be parsed\."/)

  // Declares less than it sends: the rest is parsed as a broken next request.
  const long = await rawRequest(port, `${head}Content-Length: 5\r\n\r\n${body}`)
  t.match(long, /HTTP\/1\.1 400 Bad Request\r\nContent-Length: \d+\r\nContent-Type: application\/problem\+json/, 'more bytes than declared: 400 problem')
  t.match(long, /"detail":"The request could not be parsed\."/)
  t.same(JSON.parse(long.slice(long.indexOf('\r\n\r\n') + 4)), { type: 'about:blank', title: 'Bad Request', status: 400, detail: 'The request could not be parsed.' },
    'the whole problem, without instance: there is no request to name')
})

test('a Content-Length mismatch that the body reader detects is a 400 problem with the route instance', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json', 'content-length': '100' }, payload: '{"name":"x","price":1}' }), 400)
  t.equal(body.instance, '/items')
  t.match(body.detail, /Content-Length/)
})

test('the client error handler answers timeouts and oversized headers, and leaves reset sockets alone', async (t) => {
  const { problemClientErrorHandler } = await import('../lib/errors.js')
  const written: string[] = []
  let destroyed = 0
  const socket = {
    destroyed: false,
    writable: true,
    bytesWritten: 0,
    write (s: string) { written.push(s) },
    destroy () { destroyed++ }
  }
  problemClientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), socket as unknown as net.Socket)
  problemClientErrorHandler(Object.assign(new Error('h'), { code: 'HPE_HEADER_OVERFLOW' }), socket as unknown as net.Socket)
  problemClientErrorHandler(Object.assign(new Error('r'), { code: 'ECONNRESET' }), socket as unknown as net.Socket)
  problemClientErrorHandler(new Error('gone'), { ...socket, writable: false } as unknown as net.Socket)
  problemClientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), { ...socket, _httpMessage: { headersSent: true } } as unknown as net.Socket)
  problemClientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), { ...socket, _httpMessage: { headersSent: false } } as unknown as net.Socket)
  problemClientErrorHandler(Object.assign(new Error('t'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' }), { ...socket, _httpMessage: null, bytesWritten: 120 } as unknown as net.Socket)
  t.match(written[0], /^HTTP\/1\.1 408 Request Timeout/)
  t.match(written[1], /^HTTP\/1\.1 431 Request Header Fields Too Large/)
  t.match(written[2], /^HTTP\/1\.1 408 Request Timeout/, 'a response that has not started yet: the problem')
  t.equal(written.length, 3, 'nothing is written to a reset or unwritable socket, nor once a response has started or been sent')
  t.equal(destroyed, 6)
})

test('a deeply nested body never becomes a stack overflow 500', async (t) => {
  const app = await build({ views: [Shop] }, { bodyLimit: 10 * 1024 * 1024 })
  t.teardown(() => app.close())
  const depth = 1_000_000
  const deep = problem(t, await app.inject({ method: 'POST', url: '/deep', headers: { 'content-type': 'application/json' }, payload: '['.repeat(depth) + ']'.repeat(depth) }), 400)
  t.same(deep.errors, [{ detail: 'Nested more than 128 levels deep', pointer: '#' + '/0'.repeat(128) }], 'an array of anything nests at most maxBodyDepth levels: the first too deep is named')
  t.equal((await app.inject({ method: 'POST', url: '/deep', headers: { 'content-type': 'application/json' }, payload: '['.repeat(128) + ']'.repeat(128) })).statusCode, 201, 'exactly 128 is accepted')
  const nested = (n: number, leaf: string): string => '{"children":['.repeat(n) + leaf + ']}'.repeat(n)
  t.equal((await app.inject({ method: 'POST', url: '/tree', payload: JSON.parse(nested(50, '')) })).statusCode, 201, 'a recursive schema checks a shallow tree')
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/tree', headers: { 'content-type': 'application/json' }, payload: nested(50, '1') }), 400).errors[0].pointer.split('/children/0').length, 51,
    'an invalid leaf 50 levels down is named by its pointer')
  for (const [depth, leaf] of [[2_000, '1'], [100_000, '']] as const) {
    const body = problem(t, await app.inject({ method: 'POST', url: '/tree', headers: { 'content-type': 'application/json' }, payload: nested(depth, leaf) }), 400)
    t.same(body.errors, [{ detail: 'Nested more than 128 levels deep', pointer: '#' + '/children/0'.repeat(64) }], `${depth} levels of a recursive schema: a 400 naming where, checked before the recursion`)
  }
  // With the bound lifted, a recursive schema meets the stack: still a 400, without a pointer.
  class Unbounded extends Shop {
    static override maxBodyDepth = Number.POSITIVE_INFINITY
  }
  const unbounded = await build({ views: [Unbounded] }, { bodyLimit: 10 * 1024 * 1024 })
  t.teardown(() => unbounded.close())
  const body = problem(t, await unbounded.inject({ method: 'POST', url: '/tree', headers: { 'content-type': 'application/json' }, payload: nested(100_000, '') }), 400)
  t.same([body.detail, body.errors], ['The request body is invalid. It is nested too deeply to be checked.', [{ detail: 'Nested too deeply', pointer: '#' }]],
    'maxBodyDepth = Infinity: 100,000 levels of a recursive schema are a 400, not a stack overflow')
})

test('a validator that fails for another reason than depth is a 500 problem, not a 400', async (t) => {
  const { FormatRegistry } = await import('@sinclair/typebox')
  FormatRegistry.Set('exploding', () => { throw new Error('format checker bug') })
  class Broken extends APIView {
    @Post('/', { schema: { body: Type.Object({ code: Type.String({ format: 'exploding' }) }) } })
    create () { return { ok: true } }
  }
  const app = await build({ views: [Broken] })
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/', payload: { code: 'x' } }), 500)
  t.equal(body.detail, 'An unexpected error occurred.', 'a bug in a format checker is the fault of the server')
  FormatRegistry.Delete('exploding')
})

test('an unknown route is a 404 problem', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject('/nowhere?x=1'), 404)
  t.equal(body.instance, '/nowhere', 'instance is the path without the query')
  t.equal(body.detail, 'Route GET /nowhere not found.')
  // A path that is no URI reference is escaped byte by byte, in UTF-8, as two upper-case hex digits.
  t.equal(problem(t, await app.inject('/a|bé'), 404).instance, '/a%7Cb%C3%A9', 'instance escapes what a URI cannot hold')
})

test('an unhandled exception is a generic 500 problem, logged, with nothing internal', async (t) => {
  const lines: string[] = []
  const app = await build({ views: [Shop] }, { logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } })
  t.teardown(() => app.close())
  for (const url of ['/boom', '/boom-async']) {
    const res = await app.inject(url)
    const body = problem(t, res, 500)
    t.equal(body.detail, 'An unexpected error occurred.')
    t.notMatch(res.body, /hunter2|secret|TypeError|Error:/)
  }
  t.equal(lines.length, 2, 'both failures were logged')
  t.match(lines[0], /hunter2/, 'the log keeps the real message')
})

test('a non-API error with a 4xx statusCode keeps its status and message', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const body = problem(t, await app.inject('/teapot'), 418)
  t.equal(body.detail, 'I am a teapot')
  t.equal(problem(t, await app.inject('/teapot-text'), 500).detail, 'An unexpected error occurred.', 'a statusCode that is no number is no status: a 500')
  t.equal(problem(t, await app.inject('/teapot-600'), 500).detail, 'An unexpected error occurred.', 'nor is one past 599')
  t.equal(problem(t, await app.inject('/teapot-302'), 500).detail, 'An unexpected error occurred.', 'nor one below 400: an error is never answered as a success or a redirect')
})

test('APIError family: status, title, headers, extensions, custom type', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const unauthorized = await app.inject('/api-error/unauthorized')
  problem(t, unauthorized, 401)
  t.equal(unauthorized.headers['www-authenticate'], 'Bearer')

  const conflict = problem(t, await app.inject('/api-error/conflict'), 409)
  t.equal(conflict.detail, 'Name taken.')
  t.equal(conflict.name, 'duplicate', 'extension members are sent')

  const limited = await app.inject('/api-error/limit')
  problem(t, limited, 429)
  t.equal(limited.headers['retry-after'], '30')

  t.equal(problem(t, await app.inject('/api-error/unavailable'), 503).detail, 'The database is unavailable.', 'an APIError detail is for the client')
  t.equal(problem(t, await app.inject('/api-error/internal'), 500).detail, 'An unexpected error occurred.')

  const typed = problem(t, await app.inject('/api-error/typed'), 402)
  t.equal(typed.type, 'https://example.com/problems/payment')
  t.equal(typed.title, 'Payment Required')
  t.equal(problem(t, await app.inject('/api-error/x'), 400).detail, 'The request is invalid.')
})

test('error classes', async (t) => {
  t.equal(new NotFound().status, 404)
  t.equal(new NotFound().statusCode, 404)
  t.equal(new NotFound().title, 'Not Found')
  t.equal(new NotFound('Item 3 does not exist').detail, 'Item 3 does not exist')
  t.equal(new Forbidden().name, 'Forbidden')
  t.ok(new Conflict() instanceof APIError)
  t.ok(isAPIErrorClass(BadRequest))
  t.ok(isAPIErrorClass(APIError))
  t.notOk(isAPIErrorClass(Error))
  t.notOk(isAPIErrorClass('BadRequest'))
  t.notOk(isAPIErrorClass(null), 'null is no class, and no TypeError')
  t.notOk(isAPIErrorClass({ prototype: new NotFound() }), 'an object with an APIError prototype member is no class')
  t.notOk('cause' in new NotFound(), 'an error raised without a cause has none, as an Error has none')
  t.strictSame(Object.keys(new NotFound().toProblem()), ['type', 'title', 'status', 'detail'], 'a problem without instance or errors has no such members')
  t.strictSame(Object.keys(new NotFound().toProblem('/x')), ['type', 'title', 'status', 'detail', 'instance'])
  t.equal(statusTitle(599), 'Error', 'an unknown status has a generic title')
  const cause = new Error('root')
  t.equal(new BadRequest('x', { cause }).cause, cause)
  t.same(new BadRequest('x', { errors: [{ detail: 'd', pointer: '#/a' }] }).toProblem(), {
    type: 'about:blank', title: 'Bad Request', status: 400, detail: 'x', errors: [{ detail: 'd', pointer: '#/a' }]
  })
})

test('Catch and CatchDefined map exceptions through raises, on sync and async methods', async (t) => {
  const app = await appFor()
  t.teardown(() => app.close())
  const cases: Array<[string, number, string]> = [
    ['/catch-sync', 404, 'No such product.'],
    ['/catch-async', 400, 'The product is out of stock.'],
    ['/catch-explicit', 409, 'Given directly.'],
    ['/catch-subclass', 404, 'No such product.'],
    ['/defined-sync', 400, 'The product is out of stock.'],
    ['/defined-async', 404, 'No such product.'],
    ['/stacked?which=stock', 400, 'The product is out of stock.'],
    ['/stacked?which=lookup', 410, 'Gone.']
  ]
  for (const [url, status, detail] of cases) {
    const body = problem(t, await app.inject(url), status)
    t.equal(body.detail, detail, url)
  }
  t.equal(problem(t, await app.inject('/catch-other'), 500).detail, 'An unexpected error occurred.', 'other exceptions are not caught')
  t.equal(problem(t, await app.inject('/defined-unmapped'), 500).detail, 'An unexpected error occurred.')
  t.same((await app.inject('/catch-ok')).json(), { fine: true }, 'a method that does not throw is untouched')
})

test('raises as a plain array literal: its pairs map exceptions and are documented; a malformed entry fails at registration', async (t) => {
  class PagerDown extends Error {}
  class Busy extends Error {}
  const Which = Type.Object({ which: Type.String() })
  class Escalations extends APIView {
    // No annotation: TypeScript types it as an array of arrays, which raises takes.
    static override raises = [[PagerDown, { status: 503, detail: 'The pager is down.' }], [Busy, 'Everyone is busy.']]
    @Post('/escalate', { schema: { body: Which } })
    @CatchDefined
    escalate (request: ViewRequest<{ body: typeof Which }>) {
      if (request.body.which === 'pager') throw new PagerDown()
      if (request.body.which === 'busy') throw new Busy()
      return { paged: true }
    }
  }
  const app = await build({ views: [Escalations] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/escalate', payload: { which: 'pager' } }), 503).detail, 'The pager is down.')
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/escalate', payload: { which: 'busy' } }), 400).detail, 'Everyone is busy.')
  t.equal((await app.inject({ method: 'POST', url: '/escalate', payload: { which: 'none' } })).statusCode, 201)
  for (const [raises, index] of [
    [[[PagerDown, { status: 503 }]], 0],
    [[[Busy, 'Busy.'], [PagerDown, 'Down.', 'extra']], 1],
    [[['PagerDown', 'Down.']], 0],
    [new Map([[PagerDown, 42]]), 0]
  ] as const) {
    class Malformed extends APIView {
      static override raises = raises as never
      @Get('/')
      @CatchDefined
      show () { return {} }
    }
    await t.rejects(build({ views: [Malformed] }), { code: 'FV_ERR_RAISES', message: new RegExp(`^Malformed\\.raises\\[${index}\\] is not a pair`) }, JSON.stringify(raises, (_, v: unknown) => typeof v === 'function' ? v.name : v))
  }
})

test('Catch on a type missing from raises, without its own detail, fails at registration', async (t) => {
  class Bad extends APIView {
    @Get('/')
    @Catch(Unmapped)
    get () { return {} }
  }
  await t.rejects(build({ views: [Bad] }), { name: 'TypeError', message: /Bad\.get: @Catch\(Unmapped\) needs an entry in Bad\.raises/ })
})

test('Catch applies to methods that are not routes, and to static misuse it refuses', async (t) => {
  class Helper extends View {
    @Catch(LookupFailed, { detail: 'mapped' })
    lookup (): never { throw new LookupFailed() }

    @Get('/')
    get () { return this.lookup() }
  }
  const app = await build({ views: [Helper] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/'), 400).detail, 'mapped')
  t.throws(() => {
    class StaticRoute extends View {
      // @ts-expect-error route decorators refuse static methods
      @Get('/') static get () { return {} }
    }
    return StaticRoute
  }, { name: 'TypeError', message: /public instance methods/ })
})

test('configureApp makes the rest of the app answer problem+json too, and is idempotent', async (t) => {
  const app = Fastify()
  configureApp(app)
  configureApp(app)
  app.post('/plain', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } } }, querystring: { type: 'object', properties: { q: { type: 'integer' } } } } }, async () => ({ ok: true }))
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/plain', payload: {} }), 400)
  t.equal(body.detail, 'The request body is invalid.')
  t.same(body.errors, [{ detail: "must have required property 'n'", pointer: '#/n' }], 'Ajv errors of plain routes get pointers')
  const query = problem(t, await app.inject({ method: 'POST', url: '/plain?q=abc', payload: { n: 1 } }), 400)
  t.same(query.errors, [{ detail: 'must be integer', pointer: '#/q', in: 'query', parameter: 'q' }])
  problem(t, await app.inject('/missing'), 404)
})

test('the plugin can leave the app-wide handlers alone, to an error handler of the app\'s own; with none at all it refuses to start', async (t) => {
  const app = Fastify()
  app.setErrorHandler(async (error, _request, reply) => await reply.code(500).send({ mine: String(error) }))
  await app.register(views, { views: [Shop], configureApp: false })
  t.teardown(() => app.close())
  const res = await app.inject('/nowhere')
  t.equal(res.statusCode, 404)
  t.match(res.headers['content-type'], /^application\/json/, "Fastify's own 404")
  problem(t, await app.inject('/boom'), 500)
  const forgotten = Fastify()
  await forgotten.register(views, { views: [Shop], configureApp: false })
  await t.rejects(async () => { await forgotten.ready() }, { code: 'FV_ERR_CONFIGURE_FIRST', message: /^fastify-views: configureApp: false, but no error handler was set on the application/ })
})

test('each APIError class thrown without a detail answers the default detail docs/errors.md lists', async (t) => {
  const classes: Array<[APIErrorClass, number, string]> = [
    [APIError, 500, 'An unexpected error occurred.'],
    [BadRequest, 400, 'The request is invalid.'],
    [Unauthorized, 401, 'Authentication is required.'],
    [Forbidden, 403, 'You do not have permission to perform this action.'],
    [NotFound, 404, 'The resource does not exist.'],
    [MethodNotAllowed, 405, 'The method is not allowed on this resource.'],
    [Conflict, 409, 'The request conflicts with the current state of the resource.'],
    [PreconditionFailed, 412, 'A precondition of the request failed.'],
    [ContentTooLarge, 413, 'The request content is too large.'],
    [URITooLong, 414, 'The request URI is too long.'],
    [UnsupportedMediaType, 415, 'The media type of the request is not supported.'],
    [UnprocessableContent, 422, 'The request cannot be processed.'],
    [PreconditionRequired, 428, 'The request must be conditional.'],
    [TooManyRequests, 429, 'Too many requests.'],
    [InternalServerError, 500, 'An unexpected error occurred.'],
    [ServiceUnavailable, 503, 'The service is unavailable.']
  ]
  const Index = Type.Object({ n: Type.Integer() })
  class Thrower extends View {
    @Get('/:n', { schema: { params: Index } })
    get (request: ViewRequest<{ params: typeof Index }>): never {
      const n = Number(request.params.n)
      const [Klass] = classes[Math.abs(n)]
      // A negative index: raised with its class's own status given again, which changes nothing.
      throw n < 0 ? new Klass(undefined, { status: Klass.status }) : new Klass()
    }
  }
  const app = await build({ views: [Thrower] })
  t.teardown(() => app.close())
  for (const [i, [Klass, status, detail]] of classes.entries()) {
    t.equal(problem(t, await app.inject(`/${i}`), status).detail, detail, `${Klass.name}: ${detail}`)
    if (i > 0) t.equal(problem(t, await app.inject(`/-${i}`), status).detail, detail, `${Klass.name} with its own status: ${detail}`)
  }
})

test('titles and default details follow the status of a class or of a Catch', async (t) => {
  class Gone extends APIError { static override status = 410 }
  t.equal(new Gone().title, 'Gone')
  t.equal(new Gone().detail, 'Gone.')
  t.equal(new APIError(undefined, { status: 409 }).detail, 'Conflict.')
  t.equal(new APIError().detail, 'An unexpected error occurred.')
  class Thrower extends View {
    @Get('/')
    @Catch(RangeError, { status: 409 })
    get (): never { throw new RangeError('internal') }
  }
  const app = await build({ views: [Thrower] })
  t.teardown(() => app.close())
  const body = problem(t, await app.inject('/'), 409)
  t.same([body.title, body.detail], ['Conflict', 'Conflict.'])
})

test('a View without raises: CatchDefined catches nothing, Catch(Type) alone is refused at registration', async (t) => {
  class Bare extends View {
    @Get('/')
    @CatchDefined
    get (): never { throw new LookupFailed('internal') }
  }
  const app = await build({ views: [Bare] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/'), 500).detail, 'An unexpected error occurred.')
  class BareCatch extends View {
    @Get('/')
    @Catch(LookupFailed)
    get () { return {} }
  }
  await t.rejects(build({ views: [BareCatch] }), { name: 'TypeError' })
})

test('toProblem reads errors from other validators and unusual shapes', async (t) => {
  const { toProblem } = await import('../lib/http/problem.js')
  const request = { url: '/x?y=1' } as unknown as import('fastify').FastifyRequest
  const validation = Object.assign(new Error('bad'), {
    statusCode: 400,
    validationContext: 'headers',
    validation: [{ params: {} }, { instancePath: '/a', message: 'm', params: { missingProperty: 'b' } }]
  })
  t.same(toProblem(validation, request).problem.errors, [
    { detail: 'is invalid', pointer: '#', in: 'header', parameter: '' },
    { detail: 'm', pointer: '#/a/b', in: 'header', parameter: 'a' }
  ])
  const unknownPart = Object.assign(new Error('odd'), { statusCode: 400, validationContext: 'cookies' })
  t.match(toProblem(unknownPart, request).problem, { detail: 'odd', errors: [] })
  t.equal(toProblem('not an error', request).problem.status, 500)
})
