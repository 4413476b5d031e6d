import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, Post, Route, configureApp, mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, PaginationFilter, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'
import { problem } from './helpers.js'

/** Every media type a client may send, and `undefined`: content without a Content-Type. */
const MEDIA_TYPES = [
  'application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/merge-patch+json', 'application/json-patch+json',
  'application/problem+json', 'application/vnd.api+json', 'text/plain', 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x',
  'application/xml', 'application/octet-stream', undefined
] as const

/** A JSON Patch (RFC 6902) any item takes. */
const JSON_PATCH = [{ op: 'replace', path: '/price', value: 5 }]
type Operation = { requestBody?: { content: Record<string, unknown> } }
type Doc = { paths: Record<string, Record<string, Operation>> }

/** The document of an app, as a client reads it. */
async function documentOf (app: FastifyInstance): Promise<Doc> {
  await app.ready()
  return JSON.parse(JSON.stringify(app.swagger())) as Doc
}

/** The media type without parameters, lower-cased (RFC 9110 §8.3.1): what an operation lists. */
const essence = (type: string): string => type.split(';')[0].trim().toLowerCase()

/** What a route is sent: where, and a body it would accept in each of its formats. */
interface Where {
  /** The URL of an operation; a DELETE of one object may create the object it deletes. */
  url: (path: string, method: string) => string | Promise<string>
  /** A body the operation accepts in `format` (JSON by default), or content for a route that takes none. */
  body: (path: string, method: string, type: string | undefined) => string
  /** The stored rows, to show nothing was written. */
  rows: () => Promise<string>
}

type Responses = { responses?: Record<string, unknown> }

/** Whether an operation answers a stream of events (its 200 is `text/event-stream`). */
const eventStream = (operation: object): boolean =>
  JSON.stringify((operation as Responses).responses?.['200'] ?? {}).includes('"text/event-stream"')

/**
 * Walks every operation of the document and sends each media type: the ones its request body
 * lists are taken (not a 415), every other one is a 415 problem and writes nothing. An operation
 * without a request body ignores content (docs/routing.md#media-types): it answers its success
 * status as if none had been sent, unless it documents a 415 (a route that refuses content). A GET
 * is sent as HEAD too. Returns how many requests were sent.
 */
async function walk (t: Test, app: FastifyInstance, doc: Doc, where: Where): Promise<number> {
  let sent = 0
  for (const [path, operations] of Object.entries(doc.paths)) {
    for (const [lower, operation] of Object.entries(operations)) {
      // An event stream's answer never ends, which inject waits for: test/events.test.ts sends it content over a socket.
      if (eventStream(operation)) continue
      const listed = Object.keys(operation.requestBody?.content ?? {})
      const documented = Object.keys((operation as Responses).responses ?? {})
      const ignores = operation.requestBody === undefined && !documented.includes('415')
      const success = Number(documented.find((status) => status.startsWith('2')))
      const methods = lower === 'get' ? ['GET', 'HEAD'] : [lower.toUpperCase()]
      for (const method of methods) {
        for (const type of MEDIA_TYPES) {
          const takes = type !== undefined && listed.includes(essence(type))
          const before = await where.rows()
          const res = await app.inject({
            method: method as 'GET',
            url: await where.url(path, method),
            headers: type === undefined ? {} : { 'content-type': type },
            payload: where.body(path, method, type)
          })
          sent++
          const what = `${method} ${path} with ${type ?? 'no media type'}`
          if (takes) {
            t.ok(res.statusCode >= 200 && res.statusCode < 300, `${what}: listed, so taken (${res.statusCode})`)
            continue
          }
          if (ignores) {
            t.equal(res.statusCode, success, `${what}: no request body, so the content is ignored and the route answers ${success}`)
            continue
          }
          t.equal(res.statusCode, 415, `${what}: not listed (${listed.join(', ') || 'no request body'}), so 415`)
          if (method === 'HEAD') t.equal(res.body, '', `${what}: no body`)
          else {
            const body = problem(t, res, 415)
            const named = listed.length === 0 ? 'no content.' : listed.join(', ')
            t.ok(body.detail.startsWith(`This route takes ${named}`), `${what}: the detail names what the route takes (${body.detail})`)
          }
          t.equal(await where.rows(), before, `${what}: nothing written`)
        }
      }
    }
  }
  return sent
}

test('the example API: every route takes exactly the media types its operation lists, and answers 415 to every other; a route without a body ignores content', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const doc = await documentOf(app)
  const { id } = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json<{ id: number }>()
  const bodies: Record<string, unknown> = {
    'POST /items': { name: 'lamp', price: 1 },
    'PUT /items/{id}': { name: 'lamp', price: 2 },
    'PATCH /items/{id}': { price: 3 },
    'POST /items/bulk': [{ name: 'lamp', price: 1 }],
    'PUT /items/bulk': [{ id, name: 'lamp', price: 1 }],
    'PATCH /items/bulk': { price: 4 },
    // What a client that mistook the query for a body would send: without the refusal, ignored.
    'DELETE /items/bulk': { name: 'lamp' }
  }
  // A DELETE of one item deletes one made for it, so that every media type finds one.
  const fresh = async (): Promise<number> => (await app.inject({ method: 'POST', url: '/items', payload: { name: 'spare', price: 1 } })).json<{ id: number }>().id
  const sent = await walk(t, app, doc, {
    url: async (path, method) => path.replace('{id}', String(method === 'DELETE' && path.includes('{id}') ? await fresh() : id)) +
      (path === '/items/bulk' && ['PATCH', 'DELETE'].includes(method) ? '?name=lamp' : ''),
    body: (path, method, type) => JSON.stringify(type === 'application/json-patch+json' ? JSON_PATCH : bodies[`${method} ${path}`] ?? { name: 'lamp' }),
    rows: async () => (await app.inject('/items?page_size=100')).body
  })
  t.equal(Object.values(doc.paths).flatMap((methods) => Object.keys(methods)).length, 12, 'every operation of the example, the event stream among them')
  t.comment(`${sent} requests`)
  t.same(Object.keys(doc.paths['/items/{id}'].patch.requestBody!.content), ['application/json', 'application/merge-patch+json', 'application/json-patch+json'],
    'the example\'s PATCH takes the three patch formats; the other body routes, JSON alone')
})

test('a full viewset with patch formats, custom routes with and without a body: every route walked from the document', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1 }), price: Type.Number() }, { $id: 'MediaItem' })
  const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number() })
  const ItemUpdate = Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1 }), price: Type.Number() })
  const store = new MemoryRepository<{ id: number, name: string, price: number }>({ rows: [{ id: 1, name: 'lamp', price: 1 }, { id: 2, name: 'desk', price: 2 }] })
  class ByName extends PaginationFilter { static override fields = { name: Type.String() } }
  class Items extends mix(ConditionalMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override bulkUpdateSchema = ItemUpdate
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = ByName
    static override patch = { formats: ['json', 'merge-patch', 'json-patch'] as const }
    static override conditional = { etag: true }
    static override repository = asyncRepository(store) as never
  }
  const echoed: unknown[] = []
  class Tools extends APIView {
    @Post('/echo', { schema: { body: Type.Object({ text: Type.String() }) }, responseSchema: Type.Object({ text: Type.String() }) })
    echo (request: { body: { text: string } }) { echoed.push(request.body); return request.body }

    @Post('/ping', { statusCode: 200, responseSchema: Type.Object({ pong: Type.Boolean() }) })
    ping () { echoed.push('ping'); return { pong: true } }

    @Get('/time', { responseSchema: Type.Object({ now: Type.String() }) })
    time () { return { now: 'now' } }
  }
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'Media', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }, { view: Tools, prefix: '/tools' }] })
  t.teardown(() => app.close())
  const doc = await documentOf(app)
  t.same(Object.keys(doc.paths['/items/{id}'].patch.requestBody!.content), ['application/json', 'application/merge-patch+json', 'application/json-patch+json'])
  const json: Record<string, unknown> = {
    'POST /items': { name: 'stool', price: 1 },
    'PUT /items/{id}': { name: 'lamp', price: 2 },
    'PATCH /items/{id}': { price: 3 },
    'POST /items/bulk': [{ name: 'chair', price: 1 }],
    'PUT /items/bulk': [{ id: 1, name: 'lamp', price: 1 }],
    'PATCH /items/bulk': { price: 4 },
    'DELETE /items/bulk': { name: 'lamp' },
    'POST /tools/echo': { text: 'hi' }
  }
  let next = 10
  const sent = await walk(t, app, doc, {
    url: (path, method) => {
      if (method !== 'DELETE' || !path.includes('{id}')) return path.replace('{id}', '1') + (path === '/items/bulk' && ['PATCH', 'DELETE'].includes(method) ? '?name=lamp' : '')
      store.create({ id: ++next, name: 'spare', price: 1 })
      return path.replace('{id}', String(next))
    },
    body: (path, method, type) => JSON.stringify(type === 'application/json-patch+json' ? JSON_PATCH : json[`${method} ${path}`] ?? { text: 'hi' }),
    rows: async () => JSON.stringify([store.list({}), echoed.length])
  })
  t.comment(`${sent} requests`)
  t.equal((await app.inject({ method: 'DELETE', url: '/items/2', headers: { 'content-type': 'application/json', 'if-match': '*' } })).statusCode, 204,
    'an empty body with a JSON media type is no content: a DELETE is served')
  t.equal((await app.inject({ method: 'POST', url: '/tools/ping', headers: { 'content-type': 'application/json', 'content-length': '0' } })).statusCode, 200,
    'and so is a POST without a body schema')
})

test('content on a route that refuses it (unexpectedContent: refuse): refused unread, whatever its size or framing', async (t) => {
  class Tools extends APIView {
    @Post('/ping', { statusCode: 200, responseSchema: Type.Object({ pong: Type.Boolean() }), unexpectedContent: 'refuse' })
    ping () { return { pong: true } }
  }
  const app = Fastify({ bodyLimit: 16 })
  await app.register(views, { views: [Tools] })
  t.teardown(() => app.close())
  const large = await app.inject({ method: 'POST', url: '/ping', headers: { 'content-type': 'application/json' }, payload: JSON.stringify({ text: 'x'.repeat(64) }) })
  t.equal(problem(t, large, 415).detail, 'This route takes no content.', 'over bodyLimit: a 415, not a 413, since nothing is read')
  const malformed = await app.inject({ method: 'POST', url: '/ping', headers: { 'content-type': 'application/json' }, payload: '{' })
  t.equal(problem(t, malformed, 415).status, 415, 'malformed JSON: a 415, not a 400, since nothing is parsed')
  const chunked = await app.inject({ method: 'POST', url: '/ping', headers: { 'transfer-encoding': 'chunked' } })
  t.equal(problem(t, chunked, 415).status, 415, 'content of unannounced length (Transfer-Encoding) is content')
  t.equal((await app.inject({ method: 'POST', url: '/ping' })).statusCode, 200, 'no content: served')
  t.equal((await app.inject({ method: 'POST', url: '/ping', headers: { 'content-type': 'application/json', 'content-length': '0' } })).statusCode, 200,
    'an empty body with a JSON media type is no content')
  const typeOnly = await app.inject({ method: 'GET', url: '/ping', headers: { 'content-type': 'text/plain' } })
  t.equal(problem(t, typeOnly, 405).status, 405, 'a method the path is not served with is a 405')
})

test('content on a GET that refuses it is refused by its handler: the route\'s dependencies, of every phase, answer first', async (t) => {
  const { Unauthorized } = await import('../lib/errors.js')
  const refuse = (): never => { throw new Unauthorized() }
  class Guarded extends APIView {
    @Get('/validated', { dependencies: [{ preValidation: refuse }], responseSchema: Type.Object({ ok: Type.Boolean() }) })
    validated () { return { ok: true } }

    @Get('/handled', { dependencies: [{ preHandler: refuse }], responseSchema: Type.Object({ ok: Type.Boolean() }) })
    handled () { return { ok: true } }

    @Get('/open', { responseSchema: Type.Object({ ok: Type.Boolean() }) })
    open () { return { ok: true } }

    // A HEAD route the view declares itself, not the one Fastify adds beside a GET (which takes the GET's hooks).
    @Route('/head', { methods: ['HEAD'], dependencies: [{ preValidation: refuse }] })
    head () { return undefined }
  }
  const app = Fastify()
  await app.register(views, { views: [{ view: Guarded, unexpectedContent: 'refuse' }] })
  t.teardown(() => app.close())
  for (const path of ['/validated', '/handled']) {
    const res = await app.inject({ method: 'GET', url: path, headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })
    problem(t, res, 401)
    const head = await app.inject({ method: 'HEAD', url: path, headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })
    t.equal(head.statusCode, 401, `HEAD ${path}: the dependency first too`)
  }
  const declared = await app.inject({ method: 'HEAD', url: '/head', headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })
  t.equal(declared.statusCode, 401, 'a declared HEAD route: its dependency first too, no refusal before parsing')
  const open = await app.inject({ method: 'GET', url: '/open', headers: { 'content-type': 'application/json' }, payload: '{"x":1}' })
  t.equal(problem(t, open, 415).detail, 'This route takes no content.', 'without a dependency, the content is refused')
  t.equal((await app.inject({ method: 'GET', url: '/open' })).statusCode, 200, 'and none is served')
})

test('the patch media types are parsed only for the routes that list them: not by other view routes, nor by the app\'s own', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
  const store = new MemoryRepository<{ id: number, name: string, price: number }>({ rows: [{ id: 1, name: 'lamp', price: 1 }] })
  class Items extends mix(AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(store) as never
  }
  const app = Fastify()
  configureApp(app)
  // The app's own routes, before and after the views, in the same context.
  app.post('/before', async (request) => ({ got: request.body }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  app.post('/after', async (request) => ({ got: request.body }))
  app.post('/typed', { schema: { body: { type: 'object' } } }, async (request) => ({ got: request.body }))
  app.patch('/documented', {
    schema: { body: { content: { 'application/merge-patch+json': { schema: { type: 'object' } } } } }
  }, async (request) => ({ got: request.body }))
  t.teardown(() => app.close())
  for (const url of ['/before', '/after']) {
    t.same((await app.inject({ method: 'POST', url, payload: { a: 1 } })).json(), { got: { a: 1 } }, `${url}: JSON as before`)
    for (const type of ['application/merge-patch+json', 'application/json-patch+json']) {
      const res = await app.inject({ method: 'POST', url, headers: { 'content-type': type }, payload: '{"a":1}' })
      t.equal(problem(t, res, 415).detail, 'Unsupported Media Type', `${url} with ${type}: Fastify's own 415, as without a parser`)
    }
  }
  const typed = await app.inject({ method: 'POST', url: '/typed', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"a":1}' })
  t.equal(problem(t, typed, 415).detail, 'Unsupported Media Type', 'an app route with a JSON body schema: Fastify\'s 415 too, not a view route\'s')
  const documented = await app.inject({ method: 'PATCH', url: '/documented', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"a":1}' })
  t.same(documented.json(), { got: { a: 1 } }, 'an app route that lists the type in its body is parsed')
  const patched = await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/merge-patch+json; charset=utf-8' }, payload: '{"price":2}' })
  t.equal(patched.json().price, 2, 'the view route that lists the type takes it')
  const created = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"name":"x","price":1}' })
  t.equal(problem(t, created, 415).detail, 'This route takes application/json, not application/merge-patch+json.', 'a view route of another action: its own 415')
  const nowhere = await app.inject({ method: 'POST', url: '/nowhere', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{}' })
  t.equal(problem(t, nowhere, 404).status, 404, 'no route: the 404, as without a parser')
  t.equal((store.list({})).length, 1, 'nothing was created')
})

test('a parser the app registered for a patch type is kept; the app\'s poisoning options apply to the library\'s', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
  const viewOver = (
    store: MemoryRepository<{ id: number, name: string, price: number }>
  ) => class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(store) as never
  }
  const seen: string[] = []
  const own = Fastify()
  configureApp(own)
  own.addContentTypeParser('application/merge-patch+json', { parseAs: 'string' }, (_request, body, done) => {
    seen.push(body as string)
    done(null, JSON.parse(body as string))
  })
  own.post('/mine', async (request) => ({ got: request.body }))
  await own.register(views, { views: [{ view: viewOver(new MemoryRepository({ rows: [{ id: 1, name: 'lamp', price: 1 }] })), prefix: '/items' }] })
  t.teardown(() => own.close())
  t.equal((await own.inject({ method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"price":2}' })).json().price, 2)
  t.same((await own.inject({ method: 'POST', url: '/mine', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"a":1}' })).json(), { got: { a: 1 } },
    'the app\'s parser serves the app\'s routes as the app chose')
  t.same(seen, ['{"price":2}', '{"a":1}'], 'the app\'s own parser read both')
  const created = await own.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"name":"x","price":1}' })
  t.equal(problem(t, created, 415).status, 415, 'a JSON-only view route still refuses what the app\'s parser read')

  const poisoned = '{"price":2,"__proto__":{"polluted":true}}'
  const strict = Fastify()
  await strict.register(views, { views: [{ view: viewOver(new MemoryRepository({ rows: [{ id: 1, name: 'lamp', price: 1 }] })), prefix: '/items' }] })
  t.teardown(() => strict.close())
  problem(t, await strict.inject({ method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: poisoned }), 400)
  const lenient = Fastify({ onProtoPoisoning: 'remove' })
  await lenient.register(views, { views: [{ view: viewOver(new MemoryRepository({ rows: [{ id: 1, name: 'lamp', price: 1 }] })), prefix: '/items' }] })
  t.teardown(() => lenient.close())
  const removed = await lenient.inject({ method: 'PATCH', url: '/items/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: poisoned })
  t.same([removed.statusCode, removed.json().price], [200, 2], 'onProtoPoisoning: remove drops the key and keeps the rest')
})

test('a route with its own error handler is given the 415 of any media type it does not take, before parsing', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
  class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override patch = { formats: ['json', 'merge-patch'] as const }
    static override repository = asyncRepository(new MemoryRepository({ rows: [{ id: 1, name: 'lamp', price: 1 }] })) as never
  }
  const seen: Array<{ statusCode: number, message: string }> = []
  const app = Fastify()
  await app.register(views, {
    views: [{
      view: Items,
      prefix: '/items',
      errorHandler (error, _request, reply) {
        seen.push(error as { statusCode: number, message: string })
        return reply.code((error as { statusCode: number }).statusCode).send({ own: true })
      }
    }]
  })
  t.teardown(() => app.close())
  const cases: Array<[string, string, string | undefined, string]> = [
    ['POST', '/items', 'application/merge-patch+json', 'This route takes application/json, not application/merge-patch+json.'],
    ['POST', '/items', 'application/vnd.api+json', 'This route takes application/json, not application/vnd.api+json.'],
    ['POST', '/items', undefined, 'This route takes application/json; the content has no media type.'],
    ['PATCH', '/items/1', undefined, 'This route takes application/json, application/merge-patch+json; the content has no media type.']
  ]
  for (const [method, url, type, detail] of cases) {
    const res = await app.inject({ method: method as 'GET', url, headers: type === undefined ? {} : { 'content-type': type }, payload: '{"name":"x","price":1}' })
    t.same([res.statusCode, res.json()], [415, { own: true }], `${method} ${url} with ${type ?? 'no media type'}: the route's own handler answers the 415`)
    t.equal(seen.at(-1)?.message, detail)
  }
  const json = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'Application/JSON; charset=UTF-8' }, payload: '{"name":"x","price":1}' })
  t.equal(json.statusCode, 201, 'JSON in any letter case, with parameters, passes')
  for (const [method, status] of [['GET', 200], ['DELETE', 204]] as const) {
    const res = await app.inject({ method, url: '/items/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"name":"x"}' })
    t.equal(res.statusCode, status, `${method} /items/1 with content: ignored, the route's error handler is not called`)
  }
  t.equal(seen.length, cases.length, 'the error handler saw the refusals only')
})

test('a standard action without a body schema takes any JSON, and documents it', async (t) => {
  const { AsyncCreateAPIView } = await import('../lib/index.js')
  class Free extends AsyncCreateAPIView {
    override async create (request: { body: unknown }) { return request.body as object }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Free', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Free, prefix: '/free' }] })
  t.teardown(() => app.close())
  const doc = await documentOf(app) as Doc & {
    paths: Record<string, Record<string, { responses: Record<string, unknown> }>>
  }
  t.same(doc.paths['/free'].post.requestBody, { required: true, content: { 'application/json': { schema: {} } } }, 'application/json, any JSON')
  t.same(Object.keys(doc.paths['/free'].post.responses), ['201', '400', '409', '413', '415'], 'the 400 of malformed JSON, the 413 and the 415 of a body')
  t.same((await app.inject({ method: 'POST', url: '/free', payload: { anything: [1] } })).json(), { anything: [1] })
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/free', headers: { 'content-type': 'text/plain' }, payload: 'x' }), 415).detail,
    'This route takes application/json, not text/plain.')
  // A type Fastify has no parser for: its refusal, turned into the route's own 415.
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/free', headers: { 'content-type': 'application/xml' }, payload: '<x/>' }), 415).detail,
    'This route takes application/json, not application/xml.')
})

test('content sent in chunks, of no announced length, is content: ignored by a route that takes none, refused by one that refuses it (a real socket)', async (t) => {
  class Ping extends APIView {
    @Post('/ping', { responseSchema: Type.Object({ ok: Type.Boolean() }) })
    ping () { return { ok: true } }

    @Post('/strict', { responseSchema: Type.Object({ ok: Type.Boolean() }), unexpectedContent: 'refuse' })
    strict () { return { ok: true } }
  }
  const app = Fastify()
  await app.register(views, { views: [Ping] })
  t.teardown(() => app.close())
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const { request } = await import('node:http')
  type Answer = { status: number, body: string }
  const send = async (path: string, chunks: string[]): Promise<Answer> => await new Promise((resolve, reject) => {
    // No Content-Length: Node sends Transfer-Encoding: chunked.
    const req = request(`${address}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    req.on('error', reject)
    for (const chunk of chunks) req.write(chunk)
    req.end()
  })
  const ignored = await send('/ping', ['{"a":', '1}'])
  t.same([ignored.status, JSON.parse(ignored.body)], [201, { ok: true }], 'ignored: served')
  const refused = await send('/strict', ['{"a":', '1}'])
  t.equal(refused.status, 415)
  t.equal((JSON.parse(refused.body) as { detail: string }).detail, 'This route takes no content.')
})

test('a 415 names the media type sent without its parameters; a body of another type over the limit stays a 413', async (t) => {
  class Items extends APIView {
    @Post('/', { schema: { body: Type.Object({ name: Type.String() }) }, responseSchema: Type.Object({ name: Type.String() }) })
    create (request: { body: { name: string } }) { return request.body }
  }
  const app = Fastify({ bodyLimit: 64 })
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'text/plain ; charset=utf-8' }, payload: 'x' }), 415).detail,
    'This route takes application/json, not text/plain.', 'the space before the parameters is not part of the type')
  // Fastify parses text/plain, and refuses it over bodyLimit before any validation: that refusal is the answer.
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'text/plain' }, payload: 'x'.repeat(100) }), 413).status, 413)
})

test('a patch route refuses another media type with a 415 naming the formats it takes in Accept-Patch', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
  class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override updateSchema = Type.Object({ name: Type.String() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override patch = { formats: ['merge-patch', 'json-patch'] as const }
    static override repository = asyncRepository(new MemoryRepository<{ id: number, name: string }>({ rows: [{ id: 1, name: 'lamp' }] })) as never
  }
  const app = Fastify()
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const refused = await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'content-type': 'text/plain' }, payload: 'name=desk' })
  t.equal(problem(t, refused, 415).detail, 'This route takes application/merge-patch+json, application/json-patch+json, not text/plain.')
  t.equal(refused.headers['accept-patch'], 'application/merge-patch+json, application/json-patch+json', 'Accept-Patch lists each format, comma-separated')
})

test('a value thrown that is no Error, on a request naming a media type but carrying no content, is the generic 500 problem', async (t) => {
  class Odd extends APIView {
    @Get('/', { responseSchema: Type.Object({}) })
    get (): never { throw null } // eslint-disable-line no-throw-literal
  }
  const app = Fastify({ logger: false })
  await app.register(views, { views: [Odd] })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/', headers: { 'content-type': 'text/plain' } })
  t.equal(problem(t, res, 500).detail, 'An unexpected error occurred.')
})
