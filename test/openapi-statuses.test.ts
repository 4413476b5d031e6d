import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { APIError, APIView, Forbidden, Get, NotFound, Post, Throws, View, configureApp, mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, PaginationFilter, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'

type Operation = { operationId: string, parameters?: Array<{ in: string }>, requestBody?: unknown, responses: Record<string, unknown> }
type Doc = { paths: Record<string, Record<string, Operation>> }

/** What a route is configured with, as far as its possible answers go. */
interface Facts {
  method: string
  /** The standard action, or undefined for a custom route. */
  action: string | undefined
  /** Whether a path, query or header schema is validated, or a body is read. */
  validates: boolean
  /** Whether the operation takes a body (documents a request body). */
  body: boolean
  /** ConditionalMixin: etag or conditionalRequests; with requirePreconditions. */
  conditional: boolean
  requirePreconditions: boolean
  /** Statuses the route declares it raises (Throws, errors, responses). */
  declared: number[]
}

const DETAIL = new Set(['retrieve', 'update', 'partialUpdate', 'destroy'])
const CONFLICTS = new Set(['create', 'update', 'partialUpdate', 'bulkCreate', 'bulkUpdate', 'updateMany'])

/**
 * Every error status a route can answer, from its configuration alone, written from the
 * HTTP side rather than from the library's code: the handling of a body (400 malformed, 413,
 * 415 for another media type), content on a route that takes none (415, before it is read:
 * no 413), validation (400), the standard actions (404 on a missing row, 409 on a clash), the
 * conditional requests of RFC 9110 (304 on reads, 412 on detail writes) and RFC 6585 (428),
 * and what the route declares.
 */
function possibleStatuses (facts: Facts, detail: boolean): number[] {
  const out = new Set<number>(facts.declared)
  if (facts.validates) out.add(400)
  if (facts.body) out.add(413)
  out.add(415)
  if (facts.action !== undefined && (DETAIL.has(facts.action) || facts.action === 'bulkUpdate')) out.add(404)
  if (facts.action !== undefined && CONFLICTS.has(facts.action)) out.add(409)
  if (facts.conditional && facts.method === 'GET') out.add(304)
  if (facts.conditional && detail && ['PUT', 'PATCH', 'DELETE'].includes(facts.method)) {
    out.add(412)
    if (facts.requirePreconditions) out.add(428)
  }
  return [...out].sort()
}

const documentedErrors = (operation: Operation): number[] => Object.keys(operation.responses).map(Number).filter((s) => s === 304 || s >= 400).sort()

/** One request a client can get wrong, and the status it must get. */
interface Probe { why: string, status: number, method: string, url: string, headers?: Record<string, string>, payload?: unknown }

/** A route as a client reaches it: where its rows are, and a body it accepts. */
interface Target {
  /** The operation's path in the document (`/items/{id}`). */
  route: string
  facts: Facts
  /** The route with an existing row's parameters, or as it is. */
  url: string
  /** The same route for a row that does not exist, and with a parameter that fails validation. */
  missing?: string
  invalid?: string
  /** A body the route accepts, so that a request with it reaches the view. */
  body?: unknown
}

const JSON_TYPE = { 'content-type': 'application/json' }

/**
 * The bad requests a route's configuration lets a client send, each with the status the HTTP
 * side gives it; route-specific ones (a duplicate, a declared error) are added by the caller.
 */
function probesFor ({ facts, url, missing, invalid, body }: Target, bodyLimit: number): Probe[] {
  const { method } = facts
  const out: Probe[] = []
  const withBody = (probe: Probe): Probe => body === undefined ? probe : { ...probe, headers: { ...JSON_TYPE, ...probe.headers }, payload: JSON.stringify(body) }
  // A conditional write that names no version is a 428 before anything else is looked at. A
  // strong tag names one, and lets the request through to what the probe is about: a target
  // that is malformed (400) or missing (404) is answered before any precondition.
  const anyVersion = facts.conditional && ['PUT', 'PATCH', 'DELETE'].includes(method) && missing !== undefined ? { 'if-match': '"some-version"' } : undefined
  if (facts.body) {
    out.push({ why: 'malformed JSON', status: 400, method, url, headers: JSON_TYPE, payload: '{"name":' })
    out.push({ why: 'a media type no parser takes', status: 415, method, url, headers: { 'content-type': 'text/csv' }, payload: 'name\nlamp' })
    out.push({ why: 'a body over bodyLimit', status: 413, method, url, headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  } else {
    out.push({ why: 'content on a route that takes none', status: 415, method, url, headers: JSON_TYPE, payload: '{}' })
    out.push({ why: 'content over bodyLimit on a route that takes none', status: 415, method, url, headers: JSON_TYPE, payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  }
  if (invalid !== undefined) out.push(withBody({ why: 'a path parameter that fails validation', status: 400, method, url: invalid, headers: anyVersion }))
  if (missing !== undefined) out.push(withBody({ why: 'a row that does not exist', status: 404, method, url: missing, headers: anyVersion }))
  if (facts.conditional && missing !== undefined && ['PUT', 'PATCH', 'DELETE'].includes(method)) {
    out.push(withBody({ why: 'a version that is not current', status: 412, method, url, headers: { 'if-match': '"stale"' } }))
    if (facts.requirePreconditions) out.push(withBody({ why: 'no version named', status: 428, method, url }))
  }
  return out
}

/**
 * Sends each probe, and checks what a client generated from the document relies on: the answer
 * is the expected one, a problem when it is an error, and documented on that operation. Returns
 * the error statuses each operation answered.
 */
async function send (t: Test, app: FastifyInstance, doc: Doc, probes: Array<Probe & { route: string }>): Promise<Map<string, Set<number>>> {
  const answered = new Map<string, Set<number>>()
  for (const { route, why, status, method, url, headers, payload } of probes) {
    const key = `${method} ${route}`
    const res = await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as string }) })
    t.equal(res.statusCode, status, `${key}, ${why}: ${status}`)
    if (res.statusCode >= 400) t.match(res.headers['content-type'], /^application\/problem\+json/, `${key}, ${why}: a problem`)
    t.ok(doc.paths[route][method.toLowerCase()].responses[String(res.statusCode)], `${key}, ${why}: ${res.statusCode} is documented`)
    if (!answered.has(key)) answered.set(key, new Set())
    if (res.statusCode === 304 || res.statusCode >= 400) answered.get(key)!.add(res.statusCode)
  }
  return answered
}

/** The current tag of a resource, for a conditional GET that must answer 304. */
async function tagOf (app: FastifyInstance, url: string): Promise<string> {
  return (await app.inject(url)).headers.etag as string
}

/** Bodies the example's routes accept. */
const EXAMPLE_BODIES: Record<string, unknown> = {
  'POST /items': { name: 'lamp', price: 1 },
  'PUT /items/{id}': { name: 'lamp', price: 2 },
  'PATCH /items/{id}': { price: 3 },
  'POST /items/bulk': [{ name: 'lamp', price: 1 }],
  'PUT /items/bulk': [{ id: 1, name: 'lamp', price: 1 }],
  'PATCH /items/bulk': { price: 4 }
}

test('the example API: every route documents exactly the statuses its configuration can answer, and answers them', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const { id } = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json() as { id: number }
  const probes: Array<Probe & { route: string }> = []
  const actionOf = (operationId: string): string | undefined =>
    // Longest first: `updateManyItems` is updateMany, not update.
    ['partialUpdate', 'updateMany', 'bulkCreate', 'bulkUpdate', 'bulkDelete', 'retrieve', 'destroy', 'create', 'update', 'list'].find((a) => operationId.startsWith(a))
  let seen = 0
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const items = route.startsWith('/items')
      const facts: Facts = {
        method: method.toUpperCase(),
        action: actionOf(operation.operationId),
        // Header parameters of a conditional view are documented, not validated; the rest is.
        validates: (operation.parameters ?? []).some((p) => p.in !== 'header') || operation.requestBody !== undefined,
        body: operation.requestBody !== undefined,
        conditional: items && !route.endsWith('/bulk'),
        requirePreconditions: false,
        declared: []
      }
      t.same(documentedErrors(operation), possibleStatuses(facts, route.includes('{')), `${method.toUpperCase()} ${route}`)
      seen++
      const detail = route.endsWith('{id}')
      const target: Target = {
        route,
        facts,
        url: route.replace('{id}', String(id)) + (route === '/items/bulk' && ['patch', 'delete'].includes(method) ? '?name=lamp' : ''),
        missing: detail ? route.replace('{id}', '999999') : undefined,
        invalid: detail ? route.replace('{id}', 'abc') : undefined,
        body: EXAMPLE_BODIES[`${method.toUpperCase()} ${route}`]
      }
      for (const probe of probesFor(target, 4 * 1024 * 1024)) probes.push({ ...probe, route })
    }
  }
  t.equal(seen, 11, 'every operation')

  probes.push(
    { route: '/items', why: 'the current tag', status: 304, method: 'GET', url: '/items', headers: { 'if-none-match': await tagOf(app, '/items') } },
    { route: '/items/{id}', why: 'the current tag', status: 304, method: 'GET', url: `/items/${id}`, headers: { 'if-none-match': await tagOf(app, `/items/${id}`) } },
    { route: '/items', why: 'a page size over the maximum', status: 400, method: 'GET', url: '/items?page_size=101' },
    { route: '/items', why: 'a negative price', status: 400, method: 'POST', url: '/items', headers: JSON_TYPE, payload: '{"name":"lamp","price":-1}' },
    { route: '/items/bulk', why: 'an id no row has', status: 404, method: 'PUT', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"id":999999,"name":"ghost","price":1}]' },
    { route: '/items/bulk', why: 'no filter', status: 400, method: 'DELETE', url: '/items/bulk' },
    { route: '/items/bulk', why: 'no filter', status: 400, method: 'PATCH', url: '/items/bulk', headers: JSON_TYPE, payload: '{"price":2}' },
    { route: '/items/bulk', why: 'an item that fails validation', status: 400, method: 'POST', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"name":"","price":1}]' }
  )
  const answered = await send(t, app, doc, probes)
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${route}`
      // 409 is documented on writes because a store's unique column answers it; the example's
      // table has none but its key, which no body carries.
      const reachable = documentedErrors(operation).filter((status) => status !== 409)
      t.same([...(answered.get(key) ?? [])].sort(), reachable, `${key}: every documented error but 409 was answered`)
    }
  }
})

test('a richer app (bulk, conditional, filters, pagination, custom and plain routes): the document matches the configuration, every answer is documented, every documented error is answered', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1 }) }, { $id: 'RichItem' })
  const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }) })
  const IdParams = Type.Object({ id: Type.Integer() })
  class Gone extends APIError { static override status = 410 }
  class Pages extends PaginationFilter { static override fields = { name: Type.String() } }
  const store = new MemoryRepository({ rows: [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }, { id: 3, name: 'chair' }], unique: ['name'] })
  class Items extends mix(ConditionalMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override bulkUpdateSchema = Item
    static override detailParams = IdParams
    static override filter = Pages
    static override etag = true
    static override requirePreconditions = true
    static override repository = asyncRepository(store) as never

    @Get('/archived', { responseSchema: Type.Array(Item), schema: { querystring: Type.Object({ purged: Type.Optional(Type.Boolean()) }) } })
    @Throws(Gone)
    archived (request: { query: { purged?: boolean } }) {
      if (request.query.purged === true) throw new Gone()
      return []
    }
  }
  // Hand-rolled validators: the view says it answers 304 itself.
  class Documents extends ConditionalMixin {
    static override conditionalRequests = true
    @Get('/:id', { schema: { params: IdParams }, responseSchema: Type.Object({ id: Type.Integer() }) })
    @Throws(NotFound)
    find (request: { params: { id: number } }) {
      if (request.params.id !== 1) throw new NotFound()
      return this.checkEtag('"v1"') ?? { id: 1 }
    }
  }
  class Plain extends View {
    @Get('/ping') ping () { return 'pong' }
    @Post('/echo') echo () { return {} }
  }
  class Lookup extends APIView {
    static override errors = [Forbidden]
    @Get('/:code', { schema: { params: Type.Object({ code: Type.String({ minLength: 2 }) }) } })
    find (request: { params: { code: string } }) {
      if (request.params.code === 'secret') throw new Forbidden()
      return {}
    }
  }
  const bodyLimit = 2048
  const app = Fastify({ bodyLimit })
  configureApp(app)
  const facts = new Map<string, Facts>()
  const configured = {
    Items: { conditional: true, requirePreconditions: true },
    Documents: { conditional: true, requirePreconditions: false },
    Plain: { conditional: false, requirePreconditions: false },
    Lookup: { conditional: false, requirePreconditions: false }
  }
  const declared: Record<string, number[]> = { 'GET /items/archived': [410], 'GET /documents/:id': [404], 'GET /codes/:code': [403] }
  const custom = new Set(['archived', 'find', 'ping', 'echo'])
  // The route options Fastify is given: what is validated, which action, which view.
  app.addHook('onRoute', (route: RouteOptions) => {
    const view = (route.config as { view?: keyof typeof configured } | undefined)?.view
    // HEAD routes Fastify adds beside GET share the GET's operation in the document.
    if (view === undefined || route.method === 'HEAD') return
    const schema = route.schema ?? {}
    const action = (route.config as { action: string }).action
    const key = `${String(route.method)} ${route.url}`
    facts.set(key, {
      method: String(route.method),
      action: custom.has(action) ? undefined : action,
      validates: ['params', 'querystring', 'headers', 'body'].some((part) => (schema as Record<string, unknown>)[part] !== undefined),
      body: (schema as Record<string, unknown>).body !== undefined,
      ...configured[view],
      declared: declared[key] ?? []
    })
  })
  await app.register(swagger, swaggerOptions({ info: { title: 'Rich', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }, { view: Documents, prefix: '/documents' }, Plain, { view: Lookup, prefix: '/codes' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const operations = Object.values(doc.paths).flatMap((methods) => Object.keys(methods))
  t.equal(facts.size, operations.length, 'every operation was seen as a route')

  // The document against the configuration, both ways.
  const toRoute = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
  for (const [key, fact] of facts) {
    const [method, url] = key.split(' ')
    t.same(documentedErrors(doc.paths[toRoute(url)][method.toLowerCase()]), possibleStatuses(fact, url.includes(':')), `${key}: documented = possible`)
  }

  // The server against the document, both ways: each answer is documented, and each
  // documented error is one a real request gets.
  const bodies: Record<string, unknown> = {
    'POST /items': { name: 'lamp 2' },
    'PUT /items/:id': { name: 'lamp 3' },
    'PATCH /items/:id': { name: 'lamp 4' },
    'POST /items/bulk': [{ name: 'stool' }],
    'PUT /items/bulk': [{ id: 1, name: 'lamp' }],
    'PATCH /items/bulk': { name: 'table' }
  }
  const probes: Array<Probe & { route: string }> = []
  for (const [key, fact] of facts) {
    const url = key.split(' ')[1]
    const detail = url.endsWith('/:id')
    const target: Target = {
      route: toRoute(url),
      facts: fact,
      url: url.replace(':id', '1').replace(':code', 'abc'),
      missing: detail ? url.replace(':id', '999') : undefined,
      invalid: detail ? url.replace(':id', 'abc') : url.endsWith(':code') ? url.replace(':code', 'x') : undefined,
      body: bodies[key]
    }
    for (const probe of probesFor(target, bodyLimit)) probes.push({ ...probe, route: target.route })
  }
  const conditionalGet = async (route: string, url: string): Promise<Probe & { route: string }> =>
    ({ route, why: 'the current tag', status: 304, method: 'GET', url, headers: { 'if-none-match': await tagOf(app, url) } })
  probes.push(
    await conditionalGet('/items', '/items'),
    await conditionalGet('/items/{id}', '/items/1'),
    await conditionalGet('/items/archived', '/items/archived'),
    await conditionalGet('/documents/{id}', '/documents/1'),
    { route: '/items', why: 'a page size under 1', status: 400, method: 'GET', url: '/items?page_size=0' },
    { route: '/items/archived', why: 'a query that fails validation', status: 400, method: 'GET', url: '/items/archived?purged=maybe' },
    { route: '/items/archived', why: 'the declared Gone', status: 410, method: 'GET', url: '/items/archived?purged=true' },
    { route: '/codes/{code}', why: 'the view\'s Forbidden', status: 403, method: 'GET', url: '/codes/secret' },
    { route: '/items', why: 'a name another row has', status: 409, method: 'POST', url: '/items', headers: JSON_TYPE, payload: '{"name":"desk"}' },
    { route: '/items', why: 'an invalid body', status: 400, method: 'POST', url: '/items', headers: JSON_TYPE, payload: '{"name":""}' },
    { route: '/items/{id}', why: 'a name another row has', status: 409, method: 'PUT', url: '/items/1', headers: { ...JSON_TYPE, 'if-match': await tagOf(app, '/items/1') }, payload: '{"name":"desk"}' },
    { route: '/items/{id}', why: 'a name another row has', status: 409, method: 'PATCH', url: '/items/1', headers: { ...JSON_TYPE, 'if-match': await tagOf(app, '/items/1') }, payload: '{"name":"desk"}' },
    { route: '/items/bulk', why: 'a name another row has', status: 409, method: 'POST', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"name":"desk"}]' },
    { route: '/items/bulk', why: 'an id no row has', status: 404, method: 'PUT', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"id":999,"name":"ghost"}]' },
    { route: '/items/bulk', why: 'a name another row has', status: 409, method: 'PUT', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"id":1,"name":"desk"}]' },
    { route: '/items/bulk', why: 'one name for several rows', status: 409, method: 'PATCH', url: '/items/bulk?name=lamp', headers: JSON_TYPE, payload: '{"name":"desk"}' },
    { route: '/items/bulk', why: 'no filter', status: 400, method: 'DELETE', url: '/items/bulk' }
  )
  const answered = await send(t, app, doc, probes)
  for (const route of Object.keys(doc.paths)) {
    for (const [method, operation] of Object.entries(doc.paths[route])) {
      const key = `${method.toUpperCase()} ${route}`
      t.same([...(answered.get(key) ?? [])].sort(), documentedErrors(operation), `${key}: every documented error was answered`)
    }
  }
})
