// Content where none is expected: a route without a body ignores it (read within bodyLimit and
// dropped, never parsed), a route may refuse it, and a route may take an optional body.
import { test } from 'tap'
import { request as httpRequest } from 'node:http'
import { connect } from 'node:net'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import { Type as Type1 } from 'typebox'
import views, { APIView, Delete, Get, Override, Post, ViewRouter, configureApp } from '../lib/index.js'
import { MemoryRepository, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'
import { problem } from './helpers.js'

const Pong = Type.Object({ pong: Type.Boolean() })

/** What a route without a body saw of the request: its body and the headers of content. */
const seen: Array<{ body: unknown, type?: string, length?: string, encoding?: string }> = []
const record = (request: FastifyRequest): void => {
  seen.push({ body: request.body, type: request.headers['content-type'], length: request.headers['content-length'], encoding: request.headers['transfer-encoding'] })
}

class Tools extends APIView {
  @Post('/ping', { statusCode: 200, responseSchema: Pong })
  ping (request: FastifyRequest) { record(request); return { pong: true } }

  @Delete('/ping')
  remove (request: FastifyRequest) { record(request) }

  @Get('/ping', { responseSchema: Pong })
  read (request: FastifyRequest) { record(request); return { pong: true } }

  @Post('/strict', { statusCode: 200, responseSchema: Pong, unexpectedContent: 'refuse' })
  strict () { return { pong: true } }
}

async function tools (bodyLimit = 64): Promise<FastifyInstance> {
  const app = Fastify({ bodyLimit })
  configureApp(app)
  await app.register(views, { views: [{ view: Tools, prefix: '/tools' }] })
  await app.ready()
  return app
}

/** Every kind of content a client sends by habit or by mistake. */
const CONTENT: Array<[string, Record<string, string>, string]> = [
  ['an empty JSON object', { 'content-type': 'application/json' }, '{}'],
  ['a JSON body the route never asked for', { 'content-type': 'application/json; charset=utf-8' }, '{"user":{"email":"jake@jake.jake"}}'],
  ['malformed JSON', { 'content-type': 'application/json' }, '{"user":'],
  ['prototype poisoning', { 'content-type': 'application/json' }, '{"__proto__":{"polluted":true}}'],
  ['text', { 'content-type': 'text/plain' }, 'hello'],
  ['a type no parser takes', { 'content-type': 'application/xml' }, '<user/>'],
  ['a patch type', { 'content-type': 'application/merge-patch+json' }, '{"a":null}'],
  ['an invalid media type', { 'content-type': '/' }, 'x'],
  ['no media type', {}, 'raw bytes'],
  ['a form', { 'content-type': 'application/x-www-form-urlencoded' }, 'a=1&b=2']
]

test('content on a route without a body is ignored: answered as if absent, never parsed, whatever its media type', async (t) => {
  const app = await tools()
  t.teardown(() => app.close())
  for (const [what, headers, payload] of CONTENT) {
    for (const [method, status] of [['POST', 200], ['DELETE', 204], ['GET', 200], ['HEAD', 200]] as const) {
      seen.length = 0
      const res = await app.inject({ method, url: '/tools/ping', headers, payload })
      t.equal(res.statusCode, status, `${method} with ${what}: ${status}`)
      if (method === 'POST' || method === 'GET') t.same(res.json(), { pong: true }, `${method} with ${what}: the route's answer`)
      if (method === 'HEAD') continue
      t.equal(seen[0]?.body, undefined, `${method} with ${what}: the route sees no body`)
      if (method !== 'GET') {
        t.same([seen[0]?.type, seen[0]?.length, seen[0]?.encoding], [undefined, undefined, undefined], `${method} with ${what}: nor any header of content`)
      }
    }
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing was polluted')
})

test('ignored content is bounded by bodyLimit: at the limit it is served, past it a 413 on the methods whose content is read', async (t) => {
  const app = await tools(64)
  t.teardown(() => app.close())
  const at = 'x'.repeat(64)
  const over = 'x'.repeat(65)
  for (const method of ['POST', 'DELETE'] as const) {
    t.ok((await app.inject({ method, url: '/tools/ping', headers: { 'content-type': 'application/json' }, payload: at })).statusCode < 300, `${method} at the limit: served`)
    const res = await app.inject({ method, url: '/tools/ping', headers: { 'content-type': 'application/json' }, payload: over })
    t.equal(problem(t, res, 413).detail, 'Request body is too large', `${method} one byte over: Fastify's own 413, as for a body`)
  }
  const get = await app.inject({ method: 'GET', url: '/tools/ping', headers: { 'content-type': 'application/json' }, payload: over })
  t.equal(get.statusCode, 200, 'a GET never reads its content, so it is never too large')
  const route = Fastify({ bodyLimit: 1024 })
  class Small extends APIView {
    @Post('/small', { statusCode: 200, responseSchema: Pong, bodyLimit: 8 })
    small () { return { pong: true } }
  }
  await route.register(views, { views: [Small] })
  t.teardown(() => route.close())
  t.equal((await route.inject({ method: 'POST', url: '/small', payload: '12345678' })).statusCode, 200, 'the route\'s own bodyLimit: at it, served')
  t.equal((await route.inject({ method: 'POST', url: '/small', payload: '123456789' })).statusCode, 413, 'past it, a 413')
})

/** Sends raw HTTP on one connection and reads until the server closes it or `until` is seen. */
async function raw (port: number, text: string, until?: RegExp): Promise<{ answer: string, closed: boolean }> {
  return await new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let answer = ''
    let done = false
    const finish = (closed: boolean): void => {
      if (done) return
      done = true
      socket.destroy()
      resolve({ answer, closed })
    }
    socket.on('data', (chunk) => {
      answer += chunk.toString('latin1')
      if (until !== undefined && until.test(answer)) finish(false)
    })
    socket.on('end', () => finish(true))
    socket.on('close', () => finish(true))
    socket.on('error', reject)
    socket.write(text)
    setTimeout(() => finish(false), 3000)
  })
}

test('over a real socket: ignored content keeps the connection for the next request; past the limit, or unannounced on a GET, the answer closes it', async (t) => {
  const app = await tools(64)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const next = 'GET /tools/ping HTTP/1.1\r\nHost: x\r\n\r\n'
  const twoAnswers = /HTTP\/1\.1 200[\s\S]*HTTP\/1\.1 200/
  // POST and GET with content within the limit, then a second request on the same connection.
  for (const method of ['POST', 'GET', 'DELETE']) {
    const first = `${method} /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 12\r\n\r\n{"a":"1234"}`
    const { answer, closed } = await raw(port, first + next, /HTTP\/1\.1 (200|204)[\s\S]*HTTP\/1\.1 200[\s\S]*\r\n\r\n\{"pong":true\}/)
    t.notOk(closed, `${method} within the limit: the connection stays open`)
    t.match(answer, method === 'DELETE' ? /^HTTP\/1\.1 204[\s\S]*HTTP\/1\.1 200/ : twoAnswers, `${method} within the limit: both requests answered on one connection`)
  }
  // Chunked content, of no announced length, within and past the limit.
  const chunked = (method: string, size: number): string =>
    `${method} /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n${size.toString(16)}\r\n${'x'.repeat(size)}\r\n0\r\n\r\n`
  const within = await raw(port, chunked('POST', 60) + next, twoAnswers)
  t.match(within.answer, twoAnswers, 'chunked POST within the limit: read, dropped, and the next request answered')
  const over = await raw(port, chunked('POST', 100) + next)
  t.match(over.answer, /^HTTP\/1\.1 413 /, 'chunked POST past the limit: 413')
  t.match(over.answer, /connection: close/i, 'and the connection is closed')
  t.ok(over.closed, 'closed by the server')
  t.notMatch(over.answer, /HTTP\/1\.1 200/, 'the request after it is never read')
  const declared = await raw(port, 'POST /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 1000000000\r\n\r\n')
  t.match(declared.answer, /^HTTP\/1\.1 413 [\s\S]*connection: close/i, 'a declared length past the limit: 413 before reading, the connection closed')
  const getChunked = await raw(port, chunked('GET', 10))
  t.match(getChunked.answer, /^HTTP\/1\.1 200 [\s\S]*connection: close/i, 'a chunked GET: answered, and closed rather than read')
  const getLarge = await raw(port, 'GET /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\n' + 'x'.repeat(1000))
  t.match(getLarge.answer, /^HTTP\/1\.1 200 [\s\S]*connection: close/i, 'a GET with content past the limit: answered, and closed')
  const getAt = await raw(port, 'GET /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Length: 64\r\n\r\n' + 'x'.repeat(64) + next, twoAnswers)
  t.match(getAt.answer, twoAnswers, 'a GET with content exactly at the limit: discarded, and the connection serves the next request')
  t.notMatch(getAt.answer, /connection: close/i)
})

test('content past the limit in many chunks: one 413, nothing else answered or logged', async (t) => {
  const logged: Array<{ level: number, msg: string }> = []
  const app = Fastify({ bodyLimit: 64, logger: { level: 'info', stream: { write: (line: string) => { logged.push(JSON.parse(line)) } } } })
  configureApp(app)
  await app.register(views, { views: [{ view: Tools, prefix: '/tools' }] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const chunks = Array.from({ length: 40 }, () => 'a\r\n' + 'x'.repeat(10) + '\r\n').join('')
  const { answer } = await raw(port, `POST /tools/ping HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n${chunks}0\r\n\r\n`)
  t.equal((answer.match(/HTTP\/1\.1 /g) ?? []).length, 1, 'one answer')
  t.match(answer, /^HTTP\/1\.1 413 /)
  t.same(logged.filter((entry) => entry.level >= 40), [], 'no warning or error logged (the hook settles once)')
})

test('content a client stops sending halfway: the action never runs', async (t) => {
  const app = await tools(1024)
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  seen.length = 0
  for (const method of ['POST', 'DELETE']) {
    const socket = connect(port, '127.0.0.1')
    await new Promise<void>((resolve) => socket.on('connect', resolve))
    socket.write(`${method} /tools/ping HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"half":`)
    await new Promise((resolve) => setTimeout(resolve, 50))
    socket.destroy()
  }
  await new Promise((resolve) => setTimeout(resolve, 100))
  t.same(seen, [], 'neither the POST nor the DELETE ran with content cut short')
  t.equal((await app.inject({ method: 'POST', url: '/tools/ping', payload: '{}' })).statusCode, 200, 'and the server serves the next request')
})

test('a route may refuse content: unexpectedContent on a route, a registration entry, a router; the bulk DELETE refuses by default', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
  const store = new MemoryRepository<{ id: number, name: string }>({ rows: [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }] })
  class Items extends AsyncBulkAPIViewSet {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String() })
    static override bulkUpdateSchema = Item
    static override updateSchema = Type.Object({ name: Type.String() })
    static override filter = null
    static override allowUnfiltered = true
    static override repository = asyncRepository(store) as never
  }
  class Lenient extends Items {
    @Override({ unexpectedContent: 'ignore' })
    override bulkDelete (request: FastifyRequest) { return super.bulkDelete(request) }
  }
  class Free extends APIView {
    @Get('/free', { responseSchema: Pong }) free () { return { pong: true } }
    @Post('/free', { statusCode: 200, responseSchema: Pong }) post () { return { pong: true } }
  }
  const app = Fastify()
  configureApp(app)
  await app.register(views, {
    views: [
      { view: Items, prefix: '/items' },
      { view: Lenient, prefix: '/lenient' },
      { view: Free, prefix: '/entry', unexpectedContent: 'refuse' },
      new ViewRouter({ prefix: '/router', unexpectedContent: 'refuse' }).registerView(Free, { prefix: '' }),
      { view: Free, prefix: '/open' }
    ]
  })
  t.teardown(() => app.close())
  const json = { 'content-type': 'application/json' }
  const refused = await app.inject({ method: 'DELETE', url: '/items/bulk', headers: json, payload: '{"name":"lamp"}' })
  t.equal(problem(t, refused, 415).detail, 'This route takes no content.', 'bulk DELETE with criteria in a body: refused')
  t.equal(store.list({}).length, 2, 'and nothing deleted')
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk', headers: json, payload: '' })).statusCode, 204, 'an empty body with a JSON media type is no content: the bulk DELETE runs')
  t.equal(store.list({}).length, 0, 'every row deleted, as the query (none) selects them all')
  store.create({ id: 3, name: 'chair' })
  t.equal((await app.inject({ method: 'DELETE', url: '/lenient/bulk', headers: json, payload: '{}' })).statusCode, 204, 'Override({ unexpectedContent: \'ignore\' }): ignored')
  for (const prefix of ['/entry', '/router']) {
    for (const method of ['GET', 'POST'] as const) {
      const res = await app.inject({ method, url: `${prefix}/free`, headers: json, payload: '{}' })
      t.equal(problem(t, res, 415).detail, 'This route takes no content.', `${method} ${prefix}/free: refused`)
      t.equal((await app.inject({ method, url: `${prefix}/free` })).statusCode, 200, `${method} ${prefix}/free without content: served`)
    }
  }
  t.equal((await app.inject({ method: 'POST', url: '/open/free', headers: json, payload: '{}' })).statusCode, 200, 'the same view registered without the option: ignored')
})

test('an optional body: this JSON, or nothing', async (t) => {
  const Follow = Type.Object({ user: Type.Object({ email: Type.String({ format: 'email' }) }) })
  const got: unknown[] = []
  class Profiles extends APIView {
    @Post('/:username/follow', {
      statusCode: 200,
      schema: { params: Type.Object({ username: Type.String() }), body: Type.Optional(Follow) },
      responseSchema: Type.Object({ following: Type.String(), by: Type.Union([Type.String(), Type.Null()]) })
    })
    follow (request: FastifyRequest<{ Params: { username: string }, Body: { user: { email: string } } | undefined }>) {
      got.push(request.body)
      return { following: request.params.username, by: request.body?.user.email ?? null }
    }

    // The same from a schema of the typebox 1.x line.
    @Post('/:username/mute', {
      statusCode: 200,
      schema: { body: Type1.Optional(Type1.Object({ reason: Type1.String() })) },
      responseSchema: Type.Object({ reason: Type.Union([Type.String(), Type.Null()]) })
    })
    mute (request: FastifyRequest<{ Body: { reason: string } | undefined }>) {
      return { reason: request.body?.reason ?? null }
    }

    // A body that must be sent, beside them.
    @Post('/:username/block', { statusCode: 204, schema: { body: Follow } })
    block () { return undefined }
  }
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'Profiles', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Profiles, prefix: '/profiles' }] })
  // A route of the app's own, with no schema at all.
  app.post('/plain', async () => 'plain')
  t.teardown(() => app.close())
  const url = '/profiles/jake/follow'
  const none = await app.inject({ method: 'POST', url })
  t.same(none.json(), { following: 'jake', by: null }, 'no content: no body')
  const empty = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' } })
  t.same(empty.json(), { following: 'jake', by: null }, 'an empty request that keeps a JSON media type: no body, not a 400')
  const nul = await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: 'null' })
  t.same(nul.json(), { following: 'jake', by: null }, 'JSON null: no body')
  const sent = await app.inject({ method: 'POST', url, payload: { user: { email: 'jake@jake.jake' } } })
  t.same(sent.json(), { following: 'jake', by: 'jake@jake.jake' }, 'a body sent is the body')
  t.same(got, [undefined, undefined, undefined, { user: { email: 'jake@jake.jake' } }], 'the action saw undefined for each kind of nothing')
  const invalid = problem(t, await app.inject({ method: 'POST', url, payload: { user: { email: 'nope' } } }), 400)
  t.equal(invalid.errors[0].pointer, '#/user/email', 'a body sent is validated as usual')
  t.equal(problem(t, await app.inject({ method: 'POST', url, payload: {} }), 400).status, 400, 'an empty object is a body, and must have its members')
  t.equal(problem(t, await app.inject({ method: 'POST', url, headers: { 'content-type': 'application/json' }, payload: '{' }), 400).status, 400, 'malformed JSON is a 400')
  const text = await app.inject({ method: 'POST', url, headers: { 'content-type': 'text/plain' }, payload: 'x' })
  t.equal(problem(t, text, 415).status, 415, 'another media type is a 415')
  t.same((await app.inject({ method: 'POST', url: '/profiles/jake/mute' })).json(), { reason: null }, 'typebox 1.x: no content, no body')
  t.same((await app.inject({ method: 'POST', url: '/profiles/jake/mute', payload: { reason: 'noise' } })).json(), { reason: 'noise' }, 'typebox 1.x: the body sent')
  type Doc = { paths: Record<string, Record<string, { requestBody?: { required?: boolean } }>> }
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  t.equal(doc.paths['/profiles/{username}/follow'].post.requestBody?.required, false, 'the operation says the body may be left out')
  t.equal(doc.paths['/profiles/{username}/mute'].post.requestBody?.required, false, 'with typebox 1.x too')
  t.equal(doc.paths['/profiles/{username}/block'].post.requestBody?.required, true, 'a body that must be sent stays required')
  t.equal(doc.paths['/plain'].post.requestBody, undefined, 'the app\'s own route without a schema is documented as before')
})

test('the document says what a route without a body answers: 413 where content is read, nothing on GET, 415 where refused', async (t) => {
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'Tools', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Tools, prefix: '/tools' }] })
  t.teardown(() => app.close())
  await app.ready()
  type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown>, requestBody?: unknown }>> }
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const statuses = (path: string, method: string): string[] => Object.keys(doc.paths[path][method].responses)
  t.same(statuses('/tools/ping', 'get').filter((s) => s === '413' || s === '415'), [], 'GET: neither')
  t.same(statuses('/tools/ping', 'post').filter((s) => s === '413' || s === '415'), ['413'], 'POST: 413 past bodyLimit')
  t.same(statuses('/tools/ping', 'delete').filter((s) => s === '413' || s === '415'), ['413'], 'DELETE: 413 past bodyLimit')
  t.same(statuses('/tools/strict', 'post').filter((s) => s === '413' || s === '415'), ['415'], 'refused: 415, never 413')
  t.equal(doc.paths['/tools/ping'].post.requestBody, undefined, 'and still no request body')
})

test('the example: a JSON body on a body-less POST, DELETE and GET is answered as if absent', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const json = { 'content-type': 'application/json' }
  const { id } = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json<{ id: number }>()
  const list = await app.inject({ method: 'GET', url: '/items', headers: json, payload: '{}' })
  t.equal(list.statusCode, 200, 'GET /items with {}')
  t.equal((await app.inject({ method: 'GET', url: '/health', headers: json, payload: '{}' })).statusCode, 200, 'GET /health with {}')
  t.equal((await app.inject({ method: 'GET', url: `/items/${id}`, headers: json, payload: '{"x":1}' })).statusCode, 200, 'GET /items/:id with a body')
  t.equal((await app.inject({ method: 'DELETE', url: `/items/${id}`, headers: json, payload: '{}' })).statusCode, 204, 'DELETE /items/:id with {}')
  t.equal((await app.inject({ method: 'GET', url: `/items/${id}` })).statusCode, 404, 'deleted')
  const bulk = await app.inject({ method: 'DELETE', url: '/items/bulk?name=lamp', headers: json, payload: '{"name":"lamp"}' })
  t.equal(problem(t, bulk, 415).detail, 'This route takes no content.', 'the bulk DELETE still refuses criteria in a body')
})

test('an adversary: hostile content on every body-less route of the example, 24 concurrent copies: nothing changes, nothing answers 5xx', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', bodyLimit: 4096 })
  t.teardown(() => app.close())
  for (const name of ['lamp', 'desk', 'chair']) await app.inject({ method: 'POST', url: '/items', payload: { name, price: 1 } })
  const rows = async (): Promise<string> => (await app.inject('/items?page_size=100')).body
  const before = await rows()
  const deep = '['.repeat(100_000) + ']'.repeat(100_000)
  const hostile: Array<[string, Record<string, string>, string]> = [
    ['deeply nested JSON, past any depth limit', { 'content-type': 'application/json' }, deep.slice(0, 4096)],
    ['content at the limit', { 'content-type': 'application/json' }, 'x'.repeat(4096)],
    ['content over the limit', { 'content-type': 'application/json' }, 'x'.repeat(4097)],
    ['a repeated key', { 'content-type': 'application/json' }, '{' + Array.from({ length: 400 }, (_, i) => `"a":${i}`).join(',') + '}'],
    ['prototype poisoning', { 'content-type': 'application/json' }, '{"constructor":{"prototype":{"polluted":true}}}'],
    ['a type no route takes', { 'content-type': 'application/x-evil' }, '\u0000\u0001\u0002'],
    ['a media type with a hostile parameter', { 'content-type': 'application/json; charset=' + 'x'.repeat(2000) }, '{}']
  ]
  // The body-less routes whose answer does not change state: reads, and deletes of an id that does not exist.
  const targets: Array<[string, string]> = [['GET', '/items'], ['GET', '/items/1'], ['HEAD', '/items/1'], ['GET', '/health'], ['DELETE', '/items/999'], ['DELETE', '/items/bulk?name=nobody'], ['OPTIONS', '/items']]
  let sent = 0
  const statuses = new Set<number>()
  for (const [what, headers, payload] of hostile) {
    const answers = await Promise.all(targets.flatMap(([method, url]) => Array.from({ length: 24 }, async () =>
      await app.inject({ method: method as 'GET', url, headers, payload }))))
    sent += answers.length
    for (const res of answers) {
      statuses.add(res.statusCode)
      if (res.statusCode >= 500) t.fail(`${what}: ${res.statusCode} ${res.body}`)
    }
  }
  t.equal(await rows(), before, 'no row changed')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'nothing was polluted')
  t.same([...statuses].every((status) => status < 500), true, `${sent} requests, statuses ${[...statuses].sort().join(', ')}`)
})

test('the real socket: a body on a body-less POST of a published client suite is served, as Fastify would', async (t) => {
  const app = await tools()
  t.teardown(() => app.close())
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const answer = await new Promise<{ status: number, body: string }>((resolve, reject) => {
    const req = httpRequest(`${address}/tools/ping`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('error', reject)
    req.end(JSON.stringify({ user: { email: 'jake@jake.jake' } }))
  })
  t.same([answer.status, JSON.parse(answer.body)], [200, { pong: true }])
})
