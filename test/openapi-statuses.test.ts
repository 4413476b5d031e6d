import { test } from 'tap'
import Fastify, { type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, {
  APIError, APIView, AsyncBulkAPIViewSet, AsyncGenericViewSet, ConditionalMixin, Get, MemoryRepository, PaginationFilter, Post, Throws, View, asyncRepository, mix
} from '../lib/index.js'
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
  /** ConditionalMixin: etag or conditionalRequests; with requirePreconditions. */
  conditional: boolean
  requirePreconditions: boolean
  /** Statuses the route declares it raises (Throws, errors, responses). */
  declared: number[]
}

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE'])
const DETAIL = new Set(['retrieve', 'update', 'partialUpdate', 'destroy'])
const CONFLICTS = new Set(['create', 'update', 'partialUpdate', 'bulkCreate', 'bulkUpdate', 'updateMany'])

/**
 * Every error status a route can answer, from its configuration alone, written from the
 * HTTP side rather than from the library's code: Fastify's body handling (400 malformed, 413,
 * 415), validation (400), the standard actions (404 on a missing row, 409 on a clash), the
 * conditional requests of RFC 9110 (304 on reads, 412 on detail writes) and RFC 6585 (428),
 * and what the route declares.
 */
function possibleStatuses (facts: Facts, detail: boolean): number[] {
  const out = new Set<number>(facts.declared)
  const body = BODY_METHODS.has(facts.method)
  if (facts.validates || body) out.add(400)
  if (body) { out.add(413); out.add(415) }
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

test('the example API: every route documents exactly the statuses its configuration can answer', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
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
        conditional: items && !route.endsWith('/bulk'),
        requirePreconditions: false,
        declared: []
      }
      t.same(documentedErrors(operation), possibleStatuses(facts, route.includes('{')), `${method.toUpperCase()} ${route}`)
      seen++
    }
  }
  t.equal(seen, 11, 'every operation')
})

test('a richer app: plain views, custom routes, Throws, conditional views that require preconditions, bulk', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'RichItem' })
  class Gone extends APIError { static override status = 410 }
  class Pages extends PaginationFilter { static override fields = { name: Type.String() } }
  class Items extends mix(ConditionalMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String() })
    static override bulkUpdateSchema = Item
    static override updateSchema = Type.Object({ name: Type.String() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = Pages
    static override conditionalRequests = true
    static override requirePreconditions = true
    static override repository = asyncRepository(new MemoryRepository()) as never

    @Get('/archived', { responseSchema: Type.Array(Item) })
    @Throws(Gone)
    archived () { return [] }
  }
  class Plain extends View {
    @Get('/ping') ping () { return 'pong' }
    @Post('/echo') echo () { return {} }
  }
  class Lookup extends APIView {
    @Get('/:code', { schema: { params: Type.Object({ code: Type.String({ minLength: 2 }) }) } }) find () { return {} }
  }
  const app = Fastify()
  const facts = new Map<string, Facts>()
  const configured = { Items: { conditional: true, requirePreconditions: true }, Plain: { conditional: false, requirePreconditions: false }, Lookup: { conditional: false, requirePreconditions: false } }
  // The route options Fastify is given: what is validated, which action, which view.
  app.addHook('onRoute', (route: RouteOptions) => {
    const view = (route.config as { view?: keyof typeof configured } | undefined)?.view
    // HEAD routes Fastify adds beside GET share the GET's operation in the document.
    if (view === undefined || route.method === 'HEAD') return
    const schema = route.schema ?? {}
    const action = (route.config as { action: string }).action
    facts.set(`${String(route.method)} ${route.url}`, {
      method: String(route.method),
      action: ['archived', 'ping', 'echo', 'find'].includes(action) ? undefined : action,
      validates: ['params', 'querystring', 'headers', 'body'].some((part) => (schema as Record<string, unknown>)[part] !== undefined),
      ...configured[view],
      declared: action === 'archived' ? [410] : []
    })
  })
  await app.register(swagger, swaggerOptions({ info: { title: 'Rich', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }, Plain, { view: Lookup, prefix: '/codes' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  t.ok(facts.size >= 14, 'every route was seen')
  for (const [key, fact] of facts) {
    const [method, url] = key.split(' ')
    const route = url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')
    const operation = doc.paths[route][method.toLowerCase()]
    t.same(documentedErrors(operation), possibleStatuses(fact, route.includes('{')), key)
  }
  // And what the server answers is among them.
  const answers: Array<[string, string, number]> = [['GET', '/ping', 200], ['POST', '/echo', 415], ['GET', '/codes/x', 400], ['GET', '/items/archived', 200]]
  for (const [method, url, status] of answers) {
    const res = await app.inject({ method: method as 'GET', url, ...(method === 'POST' ? { payload: 'x', headers: { 'content-type': 'text/csv' } } : {}) })
    t.equal(res.statusCode, status, `${method} ${url}`)
  }
  const put = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'a' } })
  t.equal(put.statusCode, 428, 'requirePreconditions answers 428, documented above')
})
