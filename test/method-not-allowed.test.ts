// A path served with other methods: 405 with Allow (RFC 9110 §15.5.6), and OPTIONS answered with
// Allow and Accept-Patch (RFC 9110 §9.3.7, RFC 5789 §3.1), in the application's error format.
import { test, type Test } from 'tap'
import { connect } from 'node:net'
import Fastify, { type FastifyInstance } from 'fastify'
import cors from '@fastify/cors'
import { Type } from '@sinclair/typebox'
import views, {
  APIView, Get, Patch, Post, configureApp, mix, AsyncListAPIView, AsyncRetrieveAPIView
} from '../lib/index.js'
import { PROBLEM_FORMAT } from '../lib/errors.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { buildApp } from '../examples/app.js'
import { buildApp as buildLibrary } from '../examples/library/app.js'
import { buildApp as buildConduit } from '../examples/error-format/app.js'
import { problem } from './helpers.js'

const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

type Doc = { paths: Record<string, Record<string, { requestBody?: { content?: Record<string, unknown> } }>> }

/** A document path as a request path: each parameter given a value its schema takes. */
const concrete = (path: string): string => path.replace(/\{[^}]+\}/g, '1')

/** The methods a path's operations document, as `Allow` lists them (HEAD beside GET, OPTIONS last). */
function documentedAllow (operations: Record<string, unknown>): string {
  const served = new Set(Object.keys(operations).map((m) => m.toUpperCase()))
  if (served.has('GET')) served.add('HEAD')
  return [...METHODS.filter((m) => served.has(m)), 'OPTIONS'].join(', ')
}

/**
 * Every path of an app's document, every method it lacks: a 405 problem (in the app's format,
 * `expectBody` checks it) with the `Allow` its operations imply, and OPTIONS a 204 with the same
 * `Allow` and, where PATCH takes patch documents, `Accept-Patch`. Returns the requests sent.
 */
async function walk (
  t: Test,
  app: FastifyInstance,
  expectBody: (res: Awaited<ReturnType<FastifyInstance['inject']>>) => void,
  alsoMatched: Record<string, { by: string, methods: readonly string[] }> = {}
): Promise<number> {
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  let sent = 0
  for (const [path, documented] of Object.entries(doc.paths)) {
    // A path another route's pattern also matches (`/items/bulk` is an `/items/{id}` for GET) is served with its methods too.
    const matched = alsoMatched[path]
    const theirs = matched === undefined ? [] : matched.methods.map((method) => [method, doc.paths[matched.by][method]])
    const operations = { ...documented, ...Object.fromEntries(theirs) }
    const allow = documentedAllow(operations)
    const url = concrete(path)
    for (const method of METHODS) {
      if (allow.split(', ').includes(method)) continue
      const res = await app.inject({ method, url })
      sent++
      t.equal(res.statusCode, 405, `${method} ${path}: 405`)
      t.equal(res.headers.allow, allow, `${method} ${path}: Allow ${allow}`)
      if (method !== 'HEAD') expectBody(res)
    }
    const options = await app.inject({ method: 'OPTIONS', url })
    sent++
    t.equal(options.statusCode, 204, `OPTIONS ${path}: 204`)
    t.equal(options.headers.allow, allow, `OPTIONS ${path}: Allow ${allow}`)
    t.equal(options.body, '', `OPTIONS ${path}: no body`)
    const patchTypes = Object.keys(operations.patch?.requestBody?.content ?? {})
    t.equal(options.headers['accept-patch'], patchTypes.length > 0 ? patchTypes.join(', ') : undefined,
      `OPTIONS ${path}: ${patchTypes.length > 0 ? 'Accept-Patch lists the patch formats' : 'no Accept-Patch'}`)
  }
  return sent
}

test('every path of the examples answers 405 with Allow for each method it lacks, and OPTIONS with Allow', async (t) => {
  const shop = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => shop.close())
  const problemBody = (res: Awaited<ReturnType<FastifyInstance['inject']>>): void => {
    const body = problem(t, res, 405)
    t.same([body.type, body.title], ['about:blank', 'Method Not Allowed'], 'a problem of its status')
    t.match(body.detail, /^\/\S* does not take [A-Z]+; it takes [A-Z, ]+\.$/, 'the detail names the method and what the path takes')
  }
  // `/items/events` is an `/items/{id}` for the methods its own route lacks: they reach the item's routes (a 400 there).
  const shopMatched = {
    '/items/bulk': { by: '/items/{id}', methods: ['get'] },
    '/items/events': { by: '/items/{id}', methods: ['put', 'patch', 'delete'] }
  }
  t.comment(`shop: ${await walk(t, shop, problemBody, shopMatched)} requests`)
  t.equal((await shop.inject({ method: 'OPTIONS', url: '/items/bulk' })).headers['accept-patch'], 'application/json',
    'the bulk PATCH takes JSON only, though /items/{id} beside it takes patch documents')
  const options = await shop.inject({ method: 'OPTIONS', url: '/items/1' })
  t.equal(options.headers['accept-patch'], 'application/json, application/merge-patch+json, application/json-patch+json', 'the item\'s three patch formats')
  const library = await buildLibrary({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => library.close())
  t.comment(`library: ${await walk(t, library, problemBody)} requests`)
})

test('the 405 is in the application\'s error format', async (t) => {
  const app = await buildConduit()
  t.teardown(() => app.close())
  const sent = await walk(t, app, (res) => {
    t.match(res.headers['content-type'], /^application\/json/, 'the format\'s media type')
    t.same(Object.keys(res.json<{ errors: { body: string[] } }>().errors), ['body'], 'the format\'s body')
  })
  t.ok(sent > 5)
  const res = await app.inject({ method: 'DELETE', url: '/articles' })
  t.same(res.json(), { errors: { body: ['/articles does not take DELETE; it takes GET, HEAD, POST, OPTIONS.'] } })
})

test('what counts as the same path: the router\'s own matching, with the application\'s options', async (t) => {
  const Id = Type.Object({ id: Type.Integer() })
  const statics = { responseSchema: Id, detailParams: Id }
  class Items extends mix(AsyncListAPIView, AsyncRetrieveAPIView).with(statics, {
    async list () { return [] },
    async retrieve () { return { id: 1 } }
  }) {}
  const strict = Fastify()
  configureApp(strict)
  strict.get('/mine', async () => 'mine')
  await strict.register(views, { views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => strict.close())
  const cases: Array<[string, string, number, string?]> = [
    ['DELETE', '/items', 405, 'GET, HEAD, OPTIONS'],
    ['POST', '/items/1', 405, 'GET, HEAD, OPTIONS'],
    ['DELETE', '/items?x=1', 405, 'GET, HEAD, OPTIONS'],
    ['DELETE', '/it%65ms', 405, 'GET, HEAD, OPTIONS'],
    ['POST', '/mine', 405, 'GET, HEAD, OPTIONS'],
    ['PROPFIND', '/items', 405, 'GET, HEAD, OPTIONS'],
    ['TRACE', '/items', 405, 'GET, HEAD, OPTIONS'],
    ['DELETE', '/ITEMS', 404],
    ['DELETE', '/items/1/x', 404],
    ['DELETE', '//items', 404],
    ['DELETE', '/nowhere', 404],
    ['OPTIONS', '/nowhere', 404],
    ['OPTIONS', '*', 404]
  ]
  for (const [method, url, status, allow] of cases) {
    const res = await strict.inject({ method: method as 'GET', url })
    t.equal(res.statusCode, status, `${method} ${url}: ${status}`)
    t.equal(res.headers.allow, allow, `${method} ${url}: Allow ${allow ?? 'absent'}`)
    if (method !== 'HEAD' && method !== 'OPTIONS') problem(t, res, status)
  }
  const routerOptions = { ignoreTrailingSlash: true, caseSensitive: false, ignoreDuplicateSlashes: true }
  const lenient = Fastify({ routerOptions })
  configureApp(lenient)
  await lenient.register(views, { views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => lenient.close())
  for (const url of ['/items/', '/ITEMS', '//items', '/Items/1/']) {
    const res = await lenient.inject({ method: 'DELETE', url })
    t.equal(res.statusCode, 405, `DELETE ${url}: a path of the router's, under its options`)
    t.equal(res.headers.allow, 'GET, HEAD, OPTIONS')
  }
})

test('a prefixed context, a view without configureApp, and a not-found handler of the app\'s own', async (t) => {
  class Health extends APIView {
    @Get('/health', { responseSchema: Type.Object({ ok: Type.Boolean() }) }) health () { return { ok: true } }
    @Post('/health/ping', { statusCode: 200, responseSchema: Type.Object({ ok: Type.Boolean() }) }) ping () { return { ok: true } }
  }
  const prefixed = Fastify()
  configureApp(prefixed)
  await prefixed.register(async (api) => { await api.register(views, { views: [Health] }) }, { prefix: '/api' })
  t.teardown(() => prefixed.close())
  const res = await prefixed.inject({ method: 'PUT', url: '/api/health' })
  t.equal(problem(t, res, 405).detail, '/api/health does not take PUT; it takes GET, HEAD, OPTIONS.')
  t.equal((await prefixed.inject({ method: 'GET', url: '/api/health/ping' })).headers.allow, 'POST, OPTIONS')

  // configureApp: false with the app's own handlers: its own not-found handler answers, as it chose.
  const own = Fastify()
  own.setErrorHandler((error, _request, reply) => reply.send(error))
  own.setNotFoundHandler((_request, reply) => reply.code(404).send({ mine: true }))
  await own.register(views, { views: [Health], configureApp: false })
  t.teardown(() => own.close())
  const mine = await own.inject({ method: 'PUT', url: '/health' })
  t.same([mine.statusCode, mine.json()], [404, { mine: true }], 'the app\'s own not-found handler is kept')

  // ... and it may call the format's handler to answer 405 and OPTIONS too.
  const delegating = Fastify()
  delegating.setErrorHandler(PROBLEM_FORMAT.errorHandler)
  delegating.setNotFoundHandler((request, reply) => { PROBLEM_FORMAT.notFoundHandler(request, reply) })
  await delegating.register(views, { views: [Health], configureApp: false })
  t.teardown(() => delegating.close())
  t.equal((await delegating.inject({ method: 'PUT', url: '/health' })).statusCode, 405)
  t.equal((await delegating.inject({ method: 'OPTIONS', url: '/health' })).headers.allow, 'GET, HEAD, OPTIONS')
})

test('a CORS plugin still answers its preflights; its OPTIONS * route does not make a path exist', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  // Registered after the views: @fastify/cors adds OPTIONS * and an onRequest hook.
  await app.register(cors, { origin: 'https://shop.example', methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] })
  t.teardown(() => app.close())
  const preflight = await app.inject({
    method: 'OPTIONS',
    url: '/items/1',
    headers: { origin: 'https://shop.example', 'access-control-request-method': 'PATCH', 'access-control-request-headers': 'content-type' }
  })
  t.equal(preflight.statusCode, 204, 'the preflight is the CORS plugin\'s')
  t.equal(preflight.headers['access-control-allow-origin'], 'https://shop.example')
  t.match(preflight.headers['access-control-allow-methods'], /PATCH/)
  const simple = await app.inject({ method: 'GET', url: '/items', headers: { origin: 'https://shop.example' } })
  t.equal(simple.headers['access-control-allow-origin'], 'https://shop.example', 'and it decorates the view\'s answers')
  const wrong = await app.inject({ method: 'DELETE', url: '/items', headers: { origin: 'https://shop.example' } })
  t.equal(problem(t, wrong, 405).status, 405, 'a wrong method is still a 405')
  t.equal(wrong.headers.allow, 'GET, HEAD, POST, OPTIONS')
  t.equal(wrong.headers['access-control-allow-origin'], 'https://shop.example', 'with the CORS headers, so a browser reads it')
  t.equal(problem(t, await app.inject({ method: 'DELETE', url: '/nowhere' }), 404).status, 404, 'OPTIONS * alone does not make /nowhere exist')
})

test('over a real socket: 405 and OPTIONS answers are complete HTTP messages on a kept connection', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as { port: number }
  const answer = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (chunk) => {
      text += chunk.toString()
      if ((text.match(/HTTP\/1\.1 /g) ?? []).length === 4 && text.endsWith('"status":"ok"}')) { socket.end(); resolve(text) }
    })
    socket.on('error', reject)
    socket.write('DELETE /items HTTP/1.1\r\nHost: x\r\n\r\n' +
      'OPTIONS /items/1 HTTP/1.1\r\nHost: x\r\n\r\n' +
      'PUT /health HTTP/1.1\r\nHost: x\r\n\r\n' +
      'GET /health HTTP/1.1\r\nHost: x\r\n\r\n')
    setTimeout(() => { socket.destroy(); resolve(text) }, 3000)
  })
  const parts = answer.split(/(?=HTTP\/1\.1 )/)
  t.match(parts[0], /^HTTP\/1\.1 405 Method Not Allowed\r\n[\s\S]*allow: GET, HEAD, POST, OPTIONS\r\n[\s\S]*content-type: application\/problem\+json/i)
  t.match(parts[1], /^HTTP\/1\.1 204 No Content\r\n[\s\S]*allow: GET, HEAD, PUT, PATCH, DELETE, OPTIONS\r\n/i)
  t.match(parts[1], /accept-patch: application\/json, application\/merge-patch\+json, application\/json-patch\+json/i)
  t.notMatch(parts[1], /content-length/i, 'a 204 carries no Content-Length')
  t.match(parts[2], /^HTTP\/1\.1 405 [\s\S]*allow: GET, HEAD, OPTIONS\r\n[\s\S]*"status":405/i, 'a PUT where only GET is: a 405 problem')
  t.match(parts[3], /^HTTP\/1\.1 200 /, 'the connection serves the next request')
  // A method Node cannot parse never reaches a route: Node's 400, through the clientError listener.
  const unknown = await new Promise<string>((resolve, reject) => {
    const socket = connect(port, '127.0.0.1')
    let text = ''
    socket.on('data', (chunk) => { text += chunk.toString() })
    socket.on('close', () => resolve(text))
    socket.on('error', reject)
    socket.write('FROB /items HTTP/1.1\r\nHost: x\r\n\r\n')
  })
  t.match(unknown, /^HTTP\/1\.1 400 /, 'an unknown method: 400, not 5xx')
})

test('an adversary: unknown methods and path variants on every path, 24 concurrent copies each: nothing changes, nothing answers 5xx', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  for (const name of ['lamp', 'desk']) await app.inject({ method: 'POST', url: '/items', payload: { name, price: 1 } })
  const rows = async (): Promise<string> => (await app.inject('/items?page_size=100')).body
  const before = await rows()
  const variants = (path: string): string[] => [path, `${path}/`, path.toUpperCase(), `/${path}`, path.replace('i', '%69'), `${path}%2F`, `${path};x=1`, `${path}?id=1`, `${path}/..`, `${path}%00`, `${path}/${'a'.repeat(2000)}`]
  // Each path with the methods it is not served with, OPTIONS and methods the server serves nowhere.
  const unknown = ['OPTIONS', 'PROPFIND', 'TRACE', 'COPY', 'MOVE', 'LOCK', 'SEARCH', 'MKCOL', 'UNLOCK']
  const lacking: Record<string, string[]> = {
    '/items': ['DELETE', 'PUT', 'PATCH'],
    '/items/1': ['POST'],
    '/items/bulk': [],
    '/health': ['DELETE', 'PUT', 'PATCH', 'POST'],
    '/docs': ['DELETE', 'PUT', 'PATCH', 'POST']
  }
  let sent = 0
  const statuses = new Set<number>()
  for (const [path, wrong] of Object.entries(lacking)) {
    const methods = [...wrong, ...unknown]
    for (const url of variants(path)) {
      const answers = await Promise.all(methods.flatMap((method) => Array.from({ length: 24 }, async () =>
        // A body the wrong method could act on if it reached a route.
        await app.inject({ method: method as 'GET', url, headers: { 'content-type': 'application/json' }, payload: method === 'OPTIONS' ? undefined : '{"name":"x","price":0}' }))))
      sent += answers.length
      for (const res of answers) {
        statuses.add(res.statusCode)
        if (res.statusCode >= 500) t.fail(`${url}: ${res.statusCode} ${res.body}`)
      }
    }
  }
  t.equal(await rows(), before, 'no row changed')
  t.comment(`${sent} requests, statuses ${[...statuses].sort().join(', ')}`)
  t.ok([...statuses].every((status) => status < 500))
})

test('a generic viewset\'s paths under another detail route, HEAD routes off, and a view registered twice', async (t) => {
  const store = new MemoryRepository<{ slug: string, name: string }>({ rows: [{ slug: 'a', name: 'A' }], idField: 'slug' })
  class Tags extends AsyncGenericViewSet.with({ responseSchema: Type.Object({ slug: Type.String(), name: Type.String() }), updateSchema: Type.Object({ name: Type.String() }), detailRoute: '/:slug', detailParams: Type.Object({ slug: Type.String() }) }) {
    static override repository = asyncRepository(store) as never
  }
  const app = Fastify({ exposeHeadRoutes: false })
  configureApp(app)
  await app.register(views, { views: [{ view: Tags, prefix: '/tags' }, { view: Tags, prefix: '/labels' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'POST', url: '/tags/a' })).headers.allow, 'GET, PUT, PATCH, DELETE, OPTIONS', 'no HEAD where the app exposes none')
  t.equal((await app.inject({ method: 'OPTIONS', url: '/labels/a' })).headers.allow, 'GET, PUT, PATCH, DELETE, OPTIONS')
  const tags = (await app.inject({ method: 'OPTIONS', url: '/tags/a' })).headers['accept-patch']
  t.match(tags, /^application\/json/, 'the PATCH of /tags/:slug lists its formats')
  t.equal((await app.inject({ method: 'OPTIONS', url: '/labels/a' })).headers['accept-patch'], tags, 'and the same view\'s second registration its own')
})

test('Accept-Patch of a path\'s PATCH: any route of a view, under the router\'s options, beside constraints; Allow in the usual order', async (t) => {
  class Notes extends APIView {
    @Patch('/notes/:id', { schema: { body: Type.Object({ text: Type.String() }) }, responseSchema: Type.Object({ text: Type.String() }) })
    edit (request: { body: { text: string } }) { return request.body }

    @Patch('/touch', { statusCode: 204 })
    touch () { return undefined }
  }
  const app = Fastify({ routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } })
  configureApp(app)
  await app.register(views, {
    views: [
      { view: Notes, constraints: { host: 'a.example' } },
      { view: Notes, constraints: { host: 'b.example' } }
    ]
  })
  app.route({ method: ['DELETE', 'TRACE'], url: '/trace', handler: async () => 'gone' })
  t.teardown(() => app.close())
  const only = await app.inject({ method: 'OPTIONS', url: '/NOTES/1/' })
  // Both registrations match only under their host: Fastify's router finds neither without it.
  t.equal(only.statusCode, 404, 'a path served only under a constraint is not looked at')
  const open = Fastify({ routerOptions: { caseSensitive: false, ignoreTrailingSlash: true } })
  configureApp(open)
  await open.register(views, { views: [Notes] })
  open.route({ method: ['DELETE', 'TRACE'], url: '/trace', handler: async () => 'gone' })
  t.teardown(() => open.close())
  const notes = await open.inject({ method: 'OPTIONS', url: '/NOTES/1/' })
  t.same([notes.statusCode, notes.headers.allow, notes.headers['accept-patch']], [204, 'PATCH, OPTIONS', 'application/json'],
    'a path served by PATCH alone, matched under the application\'s router options')
  const touch = await open.inject({ method: 'OPTIONS', url: '/touch' })
  t.same([touch.headers.allow, touch.headers['accept-patch']], ['PATCH, OPTIONS', undefined], 'a PATCH that takes no body: no Accept-Patch')
  t.equal((await open.inject({ method: 'GET', url: '/trace' })).headers.allow, 'DELETE, TRACE, OPTIONS', 'the usual methods first, then the others')
})
