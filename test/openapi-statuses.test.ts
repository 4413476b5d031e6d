import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type RouteOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import { fullFormats } from 'ajv-formats/dist/formats.js'
import views, { APIView, Get, Post, RetrieveAPIView, Throws, View, configureApp, mix } from '../lib/index.js'
import type { Dependency, ViewClass } from '../lib/types.js'
import {
  APIError, ErrorFormat, Forbidden, NotFound, PROBLEM_CONTENT_TYPE, PROBLEM_FORMAT, TooManyRequests, Unauthorized,
  problemFrameworkErrors, type APIErrorClass
} from '../lib/errors.js'
import {
  AsyncGenericViewSet, CursorPaginationFilter, MemoryRepository, OffsetLimitFilter, PaginationFilter, asyncRepository
} from '../lib/generics.js'
import { AsyncBulkAPIViewSet, AsyncGenericBulkDestroyAPIView } from '../lib/bulk.js'
import { ConditionalMixin, type ConditionalOptions } from '../lib/conditional.js'
import { checksObjectPermissions } from '../lib/views/generic/object-permissions.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'
import { buildApp as buildLibrary } from '../examples/library/app.js'
import { libraryViews } from '../examples/library/views.js'
import type { LibraryStore } from '../examples/library/store.js'

type Operation = {
  operationId: string,
  parameters?: Array<{ in: string }>,
  requestBody?: unknown,
  responses: Record<string, { content?: Record<string, unknown> }>
}
type Doc = { paths: Record<string, Record<string, Operation>> }
type ValidationStatus = 400 | 422

/** What a route is configured with, as far as its possible answers go. */
interface Facts {
  method: string
  /** The standard action, or undefined for a custom route. */
  action: string | undefined
  /** Whether a path, query or header schema is validated, or a body is read. */
  validates: boolean
  /** Whether the operation takes a body (documents a request body). */
  body: boolean
  /** A route without a body that refuses content (`unexpectedContent: 'refuse'`, the bulk DELETE's default) rather than ignoring it. */
  refusesContent?: boolean
  /** Whether the route names one object: a parameter in the view's own part of the path. */
  detail: boolean
  /** ConditionalMixin: etag or conditionalRequests; with requirePreconditions. */
  conditional: boolean
  requirePreconditions: boolean
  /** A detail action answers 404 when it finds nothing (raiseOnNone, on unless turned off). */
  raiseOnNone?: boolean
  /** A nested view, which reads its parent first. */
  parent?: boolean
  /** The view has a checkObjectPermissions of its own. */
  objectPermissions?: boolean
  /** Statuses the route declares it raises (Throws, errors, dependencies, responses). */
  declared: number[]
}

const DETAIL = new Set(['retrieve', 'update', 'partialUpdate', 'destroy', 'restore'])
const CONFLICTS = new Set(['create', 'update', 'partialUpdate', 'bulkCreate', 'bulkUpdate', 'updateMany', 'restore'])
/** The actions that act on objects the client names, where an object permission can refuse. */
const OBJECT_ACTIONS = new Set(['retrieve', 'update', 'partialUpdate', 'destroy', 'restore', 'bulkUpdate', 'updateMany', 'bulkDelete'])
const STANDARD = new Set([...DETAIL, ...CONFLICTS, 'list', 'bulkDelete'])
const UNSAFE = new Set(['PUT', 'PATCH', 'DELETE'])
const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])
/** Methods whose content is never read (RFC 9110 §9.3.1): on a route without a body, it is neither parsed nor refused. */
const UNREAD = new Set(['GET', 'HEAD'])
/** The actions that refuse content by default: a bulk DELETE whose criteria were sent in a body would act on more than meant. */
const REFUSE_CONTENT = new Set(['bulkDelete'])

/**
 * Every error status a route can answer, from its configuration alone, written from the
 * HTTP side rather than from the library's code: the handling of a body (400 malformed, 413,
 * 415 for another media type), content on a route that takes none (ignored: read and dropped
 * within bodyLimit, 413 past it, but never read on a GET or HEAD, so no status at all; or, where
 * the route refuses content, 415 before it is read: no 413), validation (400, or the format's
 * 422: a body that is not even JSON stays a 400), the standard actions (404 on a missing row
 * unless raiseOnNone is off, 409 on a clash), a nested view's parent (404 on every route), object
 * permissions (403 where an object is named), the conditional requests of RFC 9110 (304 on
 * reads, 412 on detail writes) and RFC 6585 (428), a path parameter the router refuses (400
 * malformed, 414 too long), and what the route declares.
 */
function possibleStatuses (facts: Facts, path: string, validationStatus: ValidationStatus = 400): number[] {
  const out = new Set<number>(facts.declared)
  if (facts.validates) out.add(validationStatus)
  if (facts.body) out.add(400).add(413).add(415)
  else if (facts.refusesContent === true) out.add(415)
  else if (!UNREAD.has(facts.method)) out.add(413)
  // A path parameter that is not valid percent-encoding (400) or is longer than maxParamLength (414): Fastify's router.
  if (/[:{*]/.test(path)) out.add(400).add(414)
  const action = facts.action ?? ''
  if ((DETAIL.has(action) && facts.raiseOnNone !== false) || action === 'bulkUpdate' || facts.parent === true) out.add(404)
  if (facts.objectPermissions === true && OBJECT_ACTIONS.has(action)) out.add(403)
  if (CONFLICTS.has(action)) out.add(409)
  if (facts.conditional && facts.method === 'GET') out.add(304)
  if (facts.conditional && facts.detail && UNSAFE.has(facts.method)) {
    out.add(412)
    if (facts.requirePreconditions) out.add(428)
  }
  return [...out].sort()
}

/** A route of a view, as its registration serves it. */
interface ViewRoute {
  view: ViewClass
  method: string
  /** The route's name: its standard action, or the view's method that serves it. */
  action: string
  /** The part of the URL after the view's prefix (`/:id`, `/bulk`, ``). */
  path: string
  validates: boolean
  body: boolean
  /** The dependencies around the view: a router's and its registration's. */
  around: readonly Dependency[]
  /** What its `@Throws` declares (a custom route). */
  throws?: readonly APIErrorClass[]
}

/** The statics of a view that change what its routes can answer, by the names the docs give them. */
type Configured = ViewClass & {
  conditional?: ConditionalOptions
  raiseOnNone?: boolean
  parent?: unknown
  errors?: APIErrorClass[]
  actionDependencies?: Record<string, Dependency[] | undefined>
  unsafeDependencies?: Dependency[]
  /** The throttles of an action (`throttles`, `actionThrottles`): a 429 past their budget. */
  getThrottles?: (action: string) => readonly unknown[]
}

const errorsOf = (dependencies: readonly Dependency[]): APIErrorClass[] => dependencies.flatMap((d) => typeof d === 'function' ? [] : d.errors ?? [])

/** The facts of a view's route, read from the view's statics and the levels it is registered under. */
function factsOf (route: ViewRoute): Facts {
  const klass = route.view as Configured
  const dependencies = [
    ...route.around,
    ...(SAFE.has(route.method) ? [] : klass.unsafeDependencies ?? []),
    ...(klass.actionDependencies?.[route.action] ?? [])
  ]
  return {
    method: route.method,
    action: STANDARD.has(route.action) ? route.action : undefined,
    validates: route.validates,
    body: route.body,
    refusesContent: !route.body && REFUSE_CONTENT.has(route.action),
    detail: route.path.includes(':'),
    conditional: klass.conditional?.etag === true || klass.conditional?.requests === true,
    requirePreconditions: klass.conditional?.require === true,
    raiseOnNone: klass.raiseOnNone !== false,
    parent: klass.parent != null,
    objectPermissions: checksObjectPermissions(klass),
    declared: [...errorsOf(dependencies), ...klass.errors ?? [], ...route.throws ?? []].map((cls) => cls.status)
  }
}

/** The standard action of an operation, from its operationId; longest first: `updateManyItems` is updateMany, not update. */
const actionOf = (operationId: string): string | undefined =>
  ['partialUpdate', 'updateMany', 'bulkCreate', 'bulkUpdate', 'bulkDelete', 'retrieve', 'restore', 'destroy', 'create', 'update', 'list'].find((a) => operationId.startsWith(a))

/** A Fastify URL (`/members/:memberId/loans`) as the document writes it (`/members/{memberId}/loans`). */
const toRoute = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

const documentedErrors = (operation: Operation): number[] => Object.keys(operation.responses).map(Number).filter(
  (s) => s === 304 || s >= 400
).sort()

/** One request a client can get wrong, and the status it must get. */
interface Probe {
  why: string,
  status: number,
  method: string,
  url: string,
  headers?: Record<string,
  string> | undefined,
  payload?: unknown,
  /** The request consumes what it names (a DELETE served): sent after every other probe, so that none of them finds its target gone or its tag changed. */
  consumes?: boolean
}

/** A route as a client reaches it: where its rows are, and a body it accepts. */
interface Target {
  /** The operation's path in the document (`/items/{id}`). */
  route: string
  facts: Facts
  /** The route with an existing row's parameters, or as it is. */
  url: string
  /** The same route for a row that does not exist, and with a parameter that fails validation. */
  missing?: string | undefined
  invalid?: string | undefined
  /** The same route under a parent that does not exist (a nested view). */
  orphan?: string | undefined
  /** A body the route accepts, so that a request with it reaches the view. */
  body?: unknown
  /** Who asks: headers every probe sends (a signed-in member). */
  headers?: Record<string, string> | undefined
  /** Headers a dependency refuses (401): someone it does not know. */
  stranger?: Record<string, string> | undefined
  /**
   * For a route without a body that ignores content (not a GET): where a request with content is
   * served as one without it (a row no other probe uses: a DELETE removes it), the status it
   * answers, and the headers it needs besides (the current tag where a precondition is required).
   */
  spare?: { url: string, status: number, headers?: Record<string, string> } | undefined
}

const JSON_TYPE = { 'content-type': 'application/json' }

/**
 * The bad requests a route's configuration lets a client send, each with the status the HTTP
 * side gives it; route-specific ones (a duplicate, a declared error) are added by the caller.
 */
function probesFor (
  { facts, url, missing, invalid, orphan, body, headers: asker, stranger, spare }: Target,
  bodyLimit: number,
  format: ErrorFormat = PROBLEM_FORMAT
): Probe[] {
  const { method } = facts
  const { validationStatus } = format
  const out: Probe[] = []
  const as = (
    headers?: Record<string, string>
  ): Record<string, string> | undefined => asker === undefined ? headers : { ...asker, ...headers }
  const withBody = (probe: Probe): Probe => body === undefined
    ? probe
    : {
        ...probe,
        headers: { ...JSON_TYPE, ...probe.headers },
        payload: JSON.stringify(body)
      }
  // A conditional write that names no version is a 428 before anything else is looked at. A
  // strong tag names one, and lets the request through to what the probe is about: a target
  // that is malformed (400) or missing (404) is answered before any precondition.
  const anyVersion = facts.conditional && facts.detail && UNSAFE.has(method) ? { 'if-match': '"some-version"' } : undefined
  if (facts.body) {
    out.push({ why: 'malformed JSON', status: 400, method, url, headers: as(JSON_TYPE), payload: '{"name":' })
    out.push({ why: 'a media type no parser takes', status: 415, method, url, headers: as({ 'content-type': 'text/csv' }), payload: 'name\nlamp' })
    out.push({ why: 'a body over bodyLimit', status: 413, method, url, headers: as(JSON_TYPE), payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  } else if (facts.refusesContent === true) {
    out.push({ why: 'content on a route that refuses it', status: 415, method, url, headers: as(JSON_TYPE), payload: '{}' })
    out.push({ why: 'content over bodyLimit on a route that refuses it: refused unread', status: 415, method, url, headers: as(JSON_TYPE), payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  } else if (UNREAD.has(method)) {
    // Never read: served as without content, whatever it is and however long.
    out.push({ why: 'malformed JSON on a GET that takes no content: never read', status: 200, method, url, headers: as(JSON_TYPE), payload: '{"name":' })
    out.push({ why: 'content over bodyLimit on a GET that takes no content: never read, never refused', status: 200, method, url, headers: as(JSON_TYPE), payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  } else {
    if (spare === undefined) throw new Error(`${method} ${url}: a route that ignores content needs a spare target to show it served`)
    out.push({
      why: 'malformed JSON on a route that takes no content: read, dropped unparsed, and the request served',
      status: spare.status,
      method,
      url: spare.url,
      headers: as({ ...JSON_TYPE, ...spare.headers }),
      payload: '{"name":',
      consumes: method === 'DELETE'
    })
    out.push({ why: 'content over bodyLimit on a route that takes no content', status: 413, method, url, headers: as({ ...JSON_TYPE, ...anyVersion }), payload: JSON.stringify({ name: 'x'.repeat(bodyLimit) }) })
  }
  if (invalid !== undefined) out.push(withBody({ why: 'a path parameter that fails validation', status: validationStatus, method, url: invalid, headers: as(anyVersion) }))
  if (invalid?.includes('abc') === true) {
    // Fastify's router answers these before any route runs, in the app's format when the app passes it `frameworkErrors`.
    out.push(withBody({ why: 'a path parameter that is not valid percent-encoding', status: 400, method, url: invalid.replaceAll('abc', '%zz'), headers: as(anyVersion) }))
    out.push(withBody({ why: 'a path parameter over maxParamLength', status: 414, method, url: invalid.replaceAll('abc', '1'.repeat(101)), headers: as(anyVersion) }))
  }
  if (missing !== undefined) out.push(withBody({ why: 'a row that does not exist', status: 404, method, url: missing, headers: as(anyVersion) }))
  if (orphan !== undefined) out.push(withBody({ why: 'a parent that does not exist', status: 404, method, url: orphan, headers: as(anyVersion) }))
  if (stranger !== undefined) out.push(withBody({ why: 'someone the dependency does not know', status: 401, method, url, headers: { ...asker, ...stranger } }))
  if (anyVersion !== undefined && missing !== undefined) {
    out.push(withBody({ why: 'a version that is not current', status: 412, method, url, headers: as({ 'if-match': '"stale"' }) }))
    if (facts.requirePreconditions) out.push(withBody({ why: 'no version named', status: 428, method, url, headers: as() }))
  }
  return out
}

/** How a route's error answers are checked: their media type, and their body against the documented schema. */
interface Answers {
  contentType: string
  bodies?: DocumentedBodies
}

const PROBLEMS: Answers = { contentType: PROBLEM_CONTENT_TYPE }

/** Checks a body against the schema its operation documents for a status and media type; the errors, or undefined. */
type DocumentedBodies = (
  route: string,
  method: string,
  status: number,
  contentType: string,
  body: unknown
) => string | undefined

/** Compiles the document's response schemas with Ajv, its components resolved in the document itself. */
function documentedBodies (doc: Doc): DocumentedBodies {
  const ajv = new Ajv2020({ strict: false, formats: fullFormats })
  ajv.addSchema(doc, 'openapi')
  const compiled = new Map<string, ValidateFunction>()
  const token = (part: string): string => encodeURIComponent(part.replaceAll('~', '~0').replaceAll('/', '~1'))
  return (route, method, status, contentType, body) => {
    if (doc.paths[route]?.[method]?.responses[String(status)]?.content?.[contentType] === undefined) return `no ${contentType} body documented for ${status}`
    const pointer = ['paths', route, method, 'responses', String(status), 'content', contentType, 'schema'].map(token).join('/')
    let validate = compiled.get(pointer)
    if (validate === undefined) compiled.set(pointer, validate = ajv.compile({ $ref: `openapi#/${pointer}` }))
    return validate(body) ? undefined : ajv.errorsText(validate.errors)
  }
}

/**
 * Sends each probe, and checks what a client generated from the document relies on: the answer
 * is the expected one, an error in the format's media type whose body the document describes,
 * and documented on that operation. Returns the error statuses each operation answered.
 */
async function send (
  t: Test,
  app: FastifyInstance,
  doc: Doc,
  probes: Array<Probe & { route: string }>,
  answers: Answers = PROBLEMS
): Promise<Map<string, Set<number>>> {
  const answered = new Map<string, Set<number>>()
  // What a probe consumes (a row it deletes) goes last: no other probe finds it gone or its tag changed.
  const consuming = probes.filter((probe) => probe.consumes === true)
  const ordered = [...probes.filter((probe) => probe.consumes !== true), ...consuming]
  for (const { route, why, status, method, url, headers, payload } of ordered) {
    const key = `${method} ${route}`
    const res = await app.inject({ method: method as 'GET', url, headers, ...(payload === undefined ? {} : { payload: payload as string }) })
    t.equal(res.statusCode, status, `${key}, ${why}: ${status}`)
    if (res.statusCode >= 400) {
      t.equal(String(res.headers['content-type']).split(';')[0], answers.contentType, `${key}, ${why}: the format's media type`)
      const unlike = answers.bodies?.(route, method.toLowerCase(), res.statusCode, answers.contentType, res.json())
      if (answers.bodies !== undefined) t.ok(unlike === undefined, `${key}, ${why}: the documented body${unlike === undefined ? '' : ` (${unlike})`}`)
    }
    t.ok(doc.paths[route][method.toLowerCase()].responses[String(res.statusCode)], `${key}, ${why}: ${res.statusCode} is documented`)
    if (!answered.has(key)) answered.set(key, new Set())
    if (res.statusCode === 304 || res.statusCode >= 400) answered.get(key)!.add(res.statusCode)
  }
  return answered
}

/** The current tag of a resource, for a conditional GET that must answer 304. */
async function tagOf (app: FastifyInstance, url: string, headers?: Record<string, string>): Promise<string> {
  return (await app.inject({ url, headers })).headers.etag as string
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
  const { id } = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json<{ id: number }>()
  // A row for the DELETE that ignores its content: served, it removes the row.
  const spare = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'spare', price: 1 } })).json<{ id: number }>().id
  const probes: Array<Probe & { route: string }> = []
  let seen = 0
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      seen++
      // The event stream: no validators (every read is new), the 400 of a Last-Event-ID it cannot read, and an
      // answer that never ends, which inject would wait for; test/events.test.ts sends it its errors over a socket.
      if (operation.responses['200']?.content?.['text/event-stream'] !== undefined) {
        t.same(documentedErrors(operation), [400], `${method.toUpperCase()} ${route}: the 400 of its Last-Event-ID`)
        continue
      }
      const items = route.startsWith('/items')
      const facts: Facts = {
        method: method.toUpperCase(),
        action: actionOf(operation.operationId),
        // Header parameters of a conditional view are documented, not validated; the rest is.
        validates: (operation.parameters ?? []).some((p) => p.in !== 'header') || operation.requestBody !== undefined,
        body: operation.requestBody !== undefined,
        refusesContent: operation.requestBody === undefined && REFUSE_CONTENT.has(actionOf(operation.operationId) ?? ''),
        detail: route.includes('{'),
        conditional: items && !route.endsWith('/bulk'),
        requirePreconditions: false,
        declared: []
      }
      t.same(documentedErrors(operation), possibleStatuses(facts, route), `${method.toUpperCase()} ${route}`)
      const detail = route.endsWith('{id}')
      const target: Target = {
        route,
        facts,
        url: route.replace('{id}', String(id)) + (route === '/items/bulk' && ['patch', 'delete'].includes(method) ? '?name=lamp' : ''),
        missing: detail ? route.replace('{id}', '999999') : undefined,
        invalid: detail ? route.replace('{id}', 'abc') : undefined,
        body: EXAMPLE_BODIES[`${method.toUpperCase()} ${route}`],
        spare: method === 'delete' && detail ? { url: route.replace('{id}', String(spare)), status: 204 } : undefined
      }
      for (const probe of probesFor(target, 4 * 1024 * 1024)) probes.push({ ...probe, route })
    }
  }
  t.equal(seen, 12, 'every operation')

  probes.push(
    { route: '/items', why: 'the current tag', status: 304, method: 'GET', url: '/items', headers: { 'if-none-match': await tagOf(app, '/items') } },
    { route: '/items/{id}', why: 'the current tag', status: 304, method: 'GET', url: `/items/${id}`, headers: { 'if-none-match': await tagOf(app, `/items/${id}`) } },
    { route: '/items', why: 'a page size over the maximum', status: 400, method: 'GET', url: '/items?page_size=101' },
    { route: '/items', why: 'a negative price', status: 400, method: 'POST', url: '/items', headers: JSON_TYPE, payload: '{"name":"lamp","price":-1}' },
    { route: '/items/bulk', why: 'an id no row has', status: 404, method: 'PUT', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"id":999999,"name":"ghost","price":1}]' },
    { route: '/items/bulk', why: 'no filter', status: 400, method: 'DELETE', url: '/items/bulk' },
    { route: '/items/bulk', why: 'no filter', status: 400, method: 'PATCH', url: '/items/bulk', headers: JSON_TYPE, payload: '{"price":2}' },
    { route: '/items/bulk', why: 'an item that fails validation', status: 400, method: 'POST', url: '/items/bulk', headers: JSON_TYPE, payload: '[{"name":"","price":1}]' },
    { route: '/items/events', why: 'a Last-Event-ID it cannot read', status: 400, method: 'GET', url: '/items/events', headers: { 'last-event-id': 'x' } }
  )
  const answered = await send(t, app, doc, probes, { ...PROBLEMS, bodies: documentedBodies(doc) })
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
    static override conditional = { etag: true, require: true }
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
    static override conditional = { requests: true }
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
  const app = Fastify({ bodyLimit, frameworkErrors: problemFrameworkErrors })
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
      refusesContent: (schema as Record<string, unknown>).body === undefined && REFUSE_CONTENT.has(action),
      detail: route.url.includes(':'),
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
  for (const [key, fact] of facts) {
    const [method, url] = key.split(' ')
    t.same(documentedErrors(doc.paths[toRoute(url)][method.toLowerCase()]), possibleStatuses(fact, url), `${key}: documented = possible`)
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
  // Where a request that takes no content is served with some: a row only the DELETE removes, named by its current tag (preconditions are required).
  const spareId = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'spare' } })).json<{ id: number }>().id
  const spares: Record<string, Target['spare']> = {
    'DELETE /items/:id': { url: `/items/${spareId}`, status: 204, headers: { 'if-match': await tagOf(app, `/items/${spareId}`) } },
    'POST /echo': { url: '/echo', status: 201 }
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
      body: bodies[key],
      spare: spares[key]
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
    { route: '/codes/{code}', why: 'a path parameter over maxParamLength', status: 414, method: 'GET', url: '/codes/' + 'c'.repeat(101) },
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
  const answered = await send(t, app, doc, probes, { ...PROBLEMS, bodies: documentedBodies(doc) })
  for (const route of Object.keys(doc.paths)) {
    for (const [method, operation] of Object.entries(doc.paths[route])) {
      const key = `${method.toUpperCase()} ${route}`
      t.same([...(answered.get(key) ?? [])].sort(), documentedErrors(operation), `${key}: every documented error was answered`)
    }
  }
})

// The lending library (examples/library): who asks is the x-member-id header, and what they may do its rules (auth.ts).
const ADA = { 'x-member-id': '1' }
const GRACE = { 'x-member-id': '2' }
const MELVIL = { 'x-member-id': '3' } // the librarian
const NOBODY = { 'x-member-id': '999' }

/** Where each of the library's operations has its rows, who asks, and a body it accepts (docs/example-library.md). */
const LIBRARY_TARGETS: Record<string, Omit<Target, 'route' | 'facts'>> = {
  'POST /members': { url: '/members', body: { member: { name: 'Jane Eyre', email: 'jane@example.org' } } },
  // A librarian reads any member's record: a member reads her own only, which no other id names.
  'GET /members/{id}': { url: '/members/1', missing: '/members/999', invalid: '/members/abc', headers: MELVIL },
  // Members 4, 5 and 6, signed up first; 6 deleted before the probes, and restored by the POST whose content is ignored.
  'DELETE /members/{id}': { url: '/members/4', missing: '/members/999', invalid: '/members/abc', headers: MELVIL, spare: { url: '/members/5', status: 204 } },
  'POST /members/{id}/restore': {
    url: '/members/6/restore', missing: '/members/999/restore', invalid: '/members/abc/restore', headers: MELVIL, spare: { url: '/members/6/restore', status: 200 }
  },
  'GET /books': { url: '/books' },
  'POST /books': { url: '/books', headers: MELVIL, body: { book: { title: 'Middlemarch', author: 'George Eliot', year: 1871 } } },
  'GET /books/{id}': { url: '/books/1', missing: '/books/999', invalid: '/books/abc' },
  'PUT /books/{id}': { url: '/books/1', missing: '/books/999', invalid: '/books/abc', headers: MELVIL, body: { book: { title: 'Emma', author: 'Jane Austen', year: 1815 } } },
  'PATCH /books/{id}': { url: '/books/1', missing: '/books/999', invalid: '/books/abc', headers: MELVIL, body: { book: { year: 1814 } } },
  'GET /reading-list': { url: '/reading-list', headers: ADA },
  'POST /reading-list': { url: '/reading-list', headers: ADA, body: { book_id: 1 } },
  // Ada saved books 3 and 5: 5 is unsaved by the DELETE whose content is ignored.
  'DELETE /reading-list/{book_id}': { url: '/reading-list/3', missing: '/reading-list/999', invalid: '/reading-list/abc', headers: ADA, spare: { url: '/reading-list/5', status: 204 } },
  // Grace's loans: loan 1 is hers (Dune, book 3).
  'GET /members/{memberId}/loans': { url: '/members/2/loans', invalid: '/members/abc/loans', orphan: '/members/99/loans', headers: GRACE },
  'POST /members/{memberId}/loans': { url: '/members/2/loans', invalid: '/members/abc/loans', orphan: '/members/99/loans', headers: GRACE, body: { loan: { book_id: 4 } } },
  'GET /members/{memberId}/loans/{id}': { url: '/members/2/loans/1', missing: '/members/2/loans/999', invalid: '/members/2/loans/abc', orphan: '/members/99/loans/1', headers: GRACE },
  'PATCH /members/{memberId}/loans/{id}': {
    url: '/members/2/loans/1', missing: '/members/2/loans/999', invalid: '/members/2/loans/abc', orphan: '/members/99/loans/1', headers: GRACE, body: { loan: { due_at: '2026-03-01T09:00:00.000Z' } }
  },
  // Loan 3, Grace's loan of book 6 that the test makes first, is returned by the DELETE whose content is ignored.
  'DELETE /members/{memberId}/loans/{id}': {
    url: '/members/2/loans/1', missing: '/members/2/loans/999', invalid: '/members/2/loans/abc', orphan: '/members/99/loans/1', headers: GRACE, spare: { url: '/members/2/loans/3', status: 204 }
  }
}

/**
 * Documented errors no request can get from the library as it is written, and why: the
 * document says what the configuration allows, the example's code allows less.
 */
const LIBRARY_UNREACHABLE: Record<string, number[]> = {
  // 409 is documented on writes because a store's unique column answers it; books have none but
  // their key, and a loan's change sets only its due date.
  'POST /books': [409],
  'PUT /books/{id}': [409],
  'PATCH /books/{id}': [409],
  'PATCH /members/{memberId}/loans/{id}': [409]
}

/**
 * The operations whose rules can refuse a signed-in member (403): the catalogue's writes
 * (`ReadOnly.or(IsLibrarian)`), and a loan made for another member (`IsBorrower.or(IsLibrarian)`
 * holds of what a create stores). Every other rule either lets every member through or scopes
 * what she reads and writes, where another's row is a 404.
 */
const LIBRARY_FORBIDDEN = new Set(['POST /books', 'PUT /books/{id}', 'PATCH /books/{id}', 'POST /members/{memberId}/loans',
  // Deleting and restoring members are the librarians' (IsLibrarian), and so is reading deleted ones (?deleted=).
  'GET /members/{id}', 'DELETE /members/{id}', 'POST /members/{id}/restore'])

/** The writes of the library, each throttled: the requests that spend a member's budget, as Melvil. */
const LIBRARY_WRITES: Array<Probe & { route: string }> = [
  { route: '/members', method: 'POST', url: '/members', payload: '{"member":{"name":"Jo March","email":"jo@example.org"}}' },
  { route: '/members/{id}', method: 'DELETE', url: '/members/4' },
  { route: '/members/{id}/restore', method: 'POST', url: '/members/6/restore' },
  { route: '/books', method: 'POST', url: '/books', payload: '{"book":{"title":"Emma","author":"Jane Austen","year":1815}}' },
  { route: '/books/{id}', method: 'PUT', url: '/books/1', payload: '{"book":{"title":"Emma","author":"Jane Austen","year":1815}}' },
  { route: '/books/{id}', method: 'PATCH', url: '/books/1', payload: '{"book":{"year":1}}' },
  { route: '/reading-list', method: 'POST', url: '/reading-list', payload: '{"book_id":1}' },
  { route: '/reading-list/{book_id}', method: 'DELETE', url: '/reading-list/1' },
  { route: '/members/{memberId}/loans', method: 'POST', url: '/members/2/loans', payload: '{"loan":{"book_id":2}}' },
  { route: '/members/{memberId}/loans/{id}', method: 'PATCH', url: '/members/2/loans/1', payload: '{"loan":{"due_at":"2026-03-01T09:00:00.000Z"}}' },
  { route: '/members/{memberId}/loans/{id}', method: 'DELETE', url: '/members/2/loans/1' }
].map((probe) => ({
  ...probe,
  why: 'a member past the budget of writes',
  status: 429,
  headers: { ...MELVIL, ...probe.payload === undefined ? {} : JSON_TYPE }
}))

test('the library example: every operation documents exactly the statuses its configuration can answer, answers each of them, and documents every answer', async (t) => {
  const app = await buildLibrary({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const lent = await app.inject({ method: 'POST', url: '/members/2/loans', headers: GRACE, payload: { loan: { book_id: 6 } } })
  t.equal(lent.headers.location, '/members/2/loans/3', 'the loan the DELETE with content returns')
  for (const name of ['amy', 'beth', 'meg']) {
    await app.inject({ method: 'POST', url: '/members', payload: { member: { name, email: `${name}@example.org` } } })
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/members/6', headers: MELVIL })).statusCode, 204, 'the member the restores find deleted')
  // The views buildApp registers, made again to read their configuration: the router's and each
  // registration's dependencies, and each view's statics. Nothing of the store is read to make them.
  const router = libraryViews({} as LibraryStore)
  const registrations = router.entries.map(({ view, options }) => ({
    view,
    prefix: toRoute(router.prefix + (options.prefix ?? '')),
    around: [...router.options.dependencies ?? [], ...options.dependencies ?? []]
  })).sort((a, b) => b.prefix.length - a.prefix.length)

  const probes: Array<Probe & { route: string }> = []
  let seen = 0
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${route}`
      const registration = registrations.find(
        ({ view, prefix }) => route === prefix || route === prefix + toRoute(view.detailRoute) || route === `${prefix}${toRoute(view.detailRoute)}/restore`
      )
      if (registration === undefined) {
        t.fail(`${key}: no view serves it`)
        continue
      }
      const facts = factsOf({
        view: registration.view,
        method: method.toUpperCase(),
        action: actionOf(operation.operationId) ?? operation.operationId,
        path: route.slice(registration.prefix.length).replace(/\{(\w+)\}/g, ':$1'),
        // Header parameters of a conditional view are documented, not validated; the rest is.
        validates: (operation.parameters ?? []).some((p) => p.in !== 'header') || operation.requestBody !== undefined,
        body: operation.requestBody !== undefined,
        around: registration.around
      })
      // Access: an x-member-id that names nobody is a 401 on every route; the rules' 403; a write past its budget, a 429.
      const action = actionOf(operation.operationId) ?? operation.operationId
      const throttled = ((registration.view as Configured).getThrottles?.(action).length ?? 0) > 0
      facts.declared.push(401, ...LIBRARY_FORBIDDEN.has(key) ? [403] : [], ...throttled ? [429] : [])
      t.equal(throttled, LIBRARY_WRITES.some((write) => key === `${write.method} ${write.route}`), `${key}: throttled if and only if it writes`)
      t.same(documentedErrors(operation), possibleStatuses(facts, route), `${key}: documented = possible`)
      seen++
      // Every route knows who asks (the router's dependency): a member id naming nobody is a 401.
      const target: Target = { route, facts, ...LIBRARY_TARGETS[key], stranger: NOBODY }
      t.ok(LIBRARY_TARGETS[key], `${key}: a target`)
      for (const probe of probesFor(target, 1024 * 1024)) probes.push({ ...probe, route })
    }
  }
  t.equal(seen, 17, 'every operation')

  const json = (headers: Record<string, string>) => ({ ...headers, ...JSON_TYPE })
  probes.push(
    { route: '/books', why: 'the current tag', status: 304, method: 'GET', url: '/books', headers: { 'if-none-match': await tagOf(app, '/books') } },
    { route: '/books/{id}', why: 'the reader\'s current tag', status: 304, method: 'GET', url: '/books/3', headers: { ...ADA, 'if-none-match': await tagOf(app, '/books/3', ADA) } },
    { route: '/books', why: 'a limit over the maximum', status: 400, method: 'GET', url: '/books?limit=51' },
    { route: '/books/{id}', why: 'a path parameter with a character no URI holds', status: 400, method: 'GET', url: '/books/a|b' },
    { route: '/members', why: 'a body outside its envelope', status: 400, method: 'POST', url: '/members', headers: JSON_TYPE, payload: '{"name":"Jane","email":"jane@example.org"}' },
    { route: '/members', why: 'an email taken', status: 409, method: 'POST', url: '/members', headers: JSON_TYPE, payload: '{"member":{"name":"Ada","email":"ada@example.org"}}' },
    { route: '/members/{id}', why: 'no member named', status: 401, method: 'GET', url: '/members/1' },
    { route: '/members/{id}', why: 'deleted members, asked by a member who is not a librarian', status: 403, method: 'GET', url: '/members/1?deleted=include', headers: ADA },
    { route: '/members/{id}', why: 'a member who is not a librarian', status: 403, method: 'DELETE', url: '/members/2', headers: ADA },
    { route: '/members/{id}/restore', why: 'a member who is not a librarian', status: 403, method: 'POST', url: '/members/6/restore', headers: ADA },
    { route: '/members/{id}/restore', why: 'a member who is not deleted', status: 409, method: 'POST', url: '/members/2/restore', headers: MELVIL },
    { route: '/books', why: 'a member who is not a librarian', status: 403, method: 'POST', url: '/books', headers: json(ADA), payload: '{"book":{"title":"Emma","author":"Jane Austen","year":1815}}' },
    { route: '/books/{id}', why: 'a member who is not a librarian', status: 403, method: 'PUT', url: '/books/1', headers: json(ADA), payload: '{"book":{"title":"Emma","author":"Jane Austen","year":1815}}' },
    { route: '/books/{id}', why: 'a member who is not a librarian', status: 403, method: 'PATCH', url: '/books/1', headers: json(ADA), payload: '{"book":{"year":1}}' },
    { route: '/reading-list', why: 'a book saved already', status: 409, method: 'POST', url: '/reading-list', headers: json(ADA), payload: '{"book_id":3}' },
    { route: '/members/{memberId}/loans', why: 'a book that is lent', status: 409, method: 'POST', url: '/members/2/loans', headers: json(GRACE), payload: '{"loan":{"book_id":3}}' },
    { route: '/members/{memberId}/loans', why: 'borrowing for another member', status: 403, method: 'POST', url: '/members/2/loans', headers: json(ADA), payload: '{"loan":{"book_id":4}}' },
    { route: '/members/{memberId}/loans', why: 'another member\'s loans: none for her', status: 200, method: 'GET', url: '/members/2/loans', headers: ADA },
    { route: '/members/{memberId}/loans/{id}', why: 'another member\'s loan', status: 404, method: 'GET', url: '/members/2/loans/1', headers: ADA },
    { route: '/members/{memberId}/loans/{id}', why: 'another member\'s loan', status: 404, method: 'PATCH', url: '/members/2/loans/1', headers: json(ADA), payload: '{"loan":{"due_at":"2026-03-01T09:00:00.000Z"}}' },
    { route: '/members/{memberId}/loans/{id}', why: 'another member\'s loan', status: 404, method: 'DELETE', url: '/members/2/loans/1', headers: ADA }
  )
  const answered = await send(t, app, doc, probes, { ...PROBLEMS, bodies: documentedBodies(doc) })
  // Then Melvil spends his budget of writes (on a book that does not exist), and every write is a 429.
  let spent = 0
  while ((await app.inject({ method: 'PATCH', url: '/books/999', headers: json(MELVIL), payload: '{"book":{"year":1}}' })).statusCode !== 429 && spent < 60) spent++
  t.ok(spent < 60, 'the budget is spent within 60 writes, the ones the probes made included')
  const throttled = await send(t, app, doc, LIBRARY_WRITES, { ...PROBLEMS, bodies: documentedBodies(doc) })
  for (const [key, statuses] of throttled) answered.set(key, new Set([...answered.get(key) ?? [], ...statuses]))
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${route}`
      const unreachable = LIBRARY_UNREACHABLE[key] ?? []
      t.same([...(answered.get(key) ?? [])].sort(), documentedErrors(operation).filter((status) => !unreachable.includes(status)), `${key}: every documented error was answered${unreachable.length > 0 ? ` but ${unreachable.join(', ')}` : ''}`)
    }
  }
})

// One app whose views together use every mixin and feature that adds an error status.
const MixItem = Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1, maxLength: 40 }) }, { $id: 'MixItem' })
const MixItemIn = Type.Object({ name: Type.String({ minLength: 1, maxLength: 40 }) })
const MixComment = Type.Object({ id: Type.Integer(), item_id: Type.Integer(), text: Type.String({ minLength: 1 }) }, { $id: 'MixComment' })
const MixCommentIn = Type.Object({ text: Type.String({ minLength: 1 }) })
const MixTag = Type.Object({ id: Type.Integer(), label: Type.String({ minLength: 1 }) }, { $id: 'MixTag' })
const MixTagIn = Type.Object({ label: Type.String({ minLength: 1 }) })
const MixIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
type MixItemRow = Static<typeof MixItem>

/** A bearer token stands for signing in: anything but `Bearer ok` is a 401. */
const signedIn: Dependency = {
  onRequest: async (request) => {
    if (request.headers.authorization !== 'Bearer ok') throw new Unauthorized('Sign in with Bearer ok.')
  },
  errors: [Unauthorized]
}
const SIGNED_IN = { authorization: 'Bearer ok' }

/** The error format of the second run: `{ errors: { body: [...] } }`, and 422 for a request that fails validation. */
const ErrorsBody = Type.Object({ errors: Type.Object({ body: Type.Array(Type.String()) }) })
const ERRORS_FORMAT = new ErrorFormat({
  contentType: 'application/vnd.mix.errors+json',
  validationStatus: 422,
  body: (problem) => ({ errors: { body: [problem.detail, ...(problem.errors ?? []).map((e) => `${e.pointer}: ${e.detail}`)] } }),
  schema: ErrorsBody
})

/** The views, on fresh stores: each run gets its own rows. */
function mixinViews () {
  const items = new MemoryRepository<MixItemRow>({ rows: [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }, { id: 3, name: 'locked' }], unique: ['name'] })
  const comments = new MemoryRepository({ rows: [{ id: 1, item_id: 1, text: 'bright' }, { id: 2, item_id: 1, text: 'dim' }], unique: ['text'] })
  const tags = new MemoryRepository({ rows: [{ id: 1, label: 'red' }, { id: 2, label: 'blue' }], unique: ['label'] })

  /**
   * `/items`: a generic viewset with the four bulk verbs, filters paged by number, ETags that
   * every write must name (428), every patch format, object permissions and an action that throws.
   */
  class Items extends mix(ConditionalMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = MixItem
    static override createSchema = MixItemIn
    static override updateSchema = MixItemIn
    static override bulkUpdateSchema = MixItem
    static override detailParams = MixIdParams
    static override filter = PaginationFilter.with(
      { fields: { name: Type.String() }, maxPageSize: 10, defaultPageSize: 10 }
    )

    static override maxBatchSize = 3
    static override conditional = { etag: true, require: true }
    static override patch = { formats: ['json', 'merge-patch', 'json-patch'] as const }
    static override repository = asyncRepository(items) as never

    override checkObjectPermissions (item: unknown): void {
      if ((item as MixItemRow).name === 'locked') throw new Forbidden('This item is locked.')
    }

    @Get('/stats', { responseSchema: Type.Object({ count: Type.Integer() }), schema: { querystring: Type.Object({ burst: Type.Optional(Type.Boolean()) }) } })
    @Throws(TooManyRequests)
    stats (request: { query: { burst?: boolean } }) {
      if (request.query.burst === true) throw new TooManyRequests()
      return { count: 3 }
    }
  }

  /** `/items/:itemId/comments`: nested under an item, paged by cursor, in an envelope, deleted in bulk, with a route of its own. */
  class Comments extends mix(AsyncGenericBulkDestroyAPIView, AsyncGenericViewSet) {
    static override responseSchema = MixComment
    static override createSchema = MixCommentIn
    static override detailParams = MixIdParams
    static override prefixParams = Type.Object({ itemId: Type.Integer({ minimum: 1 }) })
    static override parent = { repository: asyncRepository(items), lookup: { id: 'itemId' }, scope: { item_id: 'id' }, name: 'Item' }
    static override filter = CursorPaginationFilter.with({ fields: { text: Type.String() }, orderingFields: ['id'], maxPageSize: 10, defaultPageSize: 10 })
    static override envelope = 'comment'
    static override repository = asyncRepository(comments) as never

    @Get('/count', { responseSchema: Type.Object({ count: Type.Integer() }) })
    count () {
      return { count: 2 }
    }
  }

  /** `/tags`: paged by offset and limit, for signed-in clients only (a dependency of its registration). */
  class Tags extends AsyncGenericViewSet {
    static override responseSchema = MixTag
    static override createSchema = MixTagIn
    static override detailParams = MixIdParams
    static override filter = OffsetLimitFilter.with(
      { fields: { label: Type.String() }, maxPageSize: 10, defaultPageSize: 10 }
    )

    static override patch = { formats: ['json', 'merge-patch'] as const }
    static override repository = asyncRepository(tags) as never
  }

  /** `GET /user`: the signed-in client's own record, always there: no path parameter, no 404. */
  class Me extends RetrieveAPIView {
    static override detailRoute = ''
    static override detailParams = Type.Object({})
    static override raiseOnNone = false
    static override responseSchema = Type.Object({ name: Type.String() })
    static override actionDependencies = { retrieve: [signedIn] }
    override retrieve () {
      return { name: 'Ada' }
    }
  }

  return { Items, Comments, Tags, Me }
}

/** Bodies the mixin app's routes accept. */
const MIXIN_BODIES: Record<string, unknown> = {
  'POST /items': { name: 'stool' },
  'PUT /items/:id': { name: 'lamp 2' },
  'PATCH /items/:id': { name: 'lamp 3' },
  'POST /items/bulk': [{ name: 'stool' }],
  'PUT /items/bulk': [{ id: 1, name: 'lamp' }],
  'PATCH /items/bulk': { name: 'table' },
  'POST /items/:itemId/comments': { comment: { text: 'new' } },
  'PUT /items/:itemId/comments/:id': { comment: { text: 'changed' } },
  'PATCH /items/:itemId/comments/:id': { comment: { text: 'changed' } },
  'POST /tags': { label: 'green' },
  'PUT /tags/:id': { label: 'pink' },
  'PATCH /tags/:id': { label: 'pink' }
}

/** Keywords that say nothing about which values a schema accepts. */
const ANNOTATIONS = new Set(['type', 'properties', 'title', 'description', '$id', '$schema', 'examples', 'default'])

/** Whether a query or header schema refuses anything: an object schema with no member and no constraint accepts every object. */
const checksSomething = (schema: Record<string, unknown> | undefined): boolean =>
  schema !== undefined && (Object.keys(schema.properties ?? {}).length > 0 || Object.keys(schema).some(
    (key) => !ANNOTATIONS.has(key)
  ))

async function checkMixinApp (t: Test, format: ErrorFormat | undefined): Promise<void> {
  const validationStatus = format?.validationStatus ?? 400
  const { Items, Comments, Tags, Me } = mixinViews()
  const registrations = [
    { view: Items, prefix: '/items' },
    { view: Comments, prefix: '/items/:itemId/comments' },
    { view: Tags, prefix: '/tags', dependencies: [signedIn] },
    { view: Me, prefix: '/user' }
  ]
  const byName = new Map<string, { view: ViewClass, dependencies?: Dependency[] }>(
    registrations.map((entry) => [entry.view.name, entry])
  )
  const throws: Record<string, APIErrorClass[]> = { 'GET /items/stats': [TooManyRequests] }
  const bodyLimit = 2048
  // The router's errors in the format too, as both examples do.
  const app = Fastify({ bodyLimit, frameworkErrors: (format ?? PROBLEM_FORMAT).frameworkErrors })
  configureApp(app, format === undefined ? {} : { errorFormat: format })
  t.teardown(() => app.close())
  // The route options Fastify is given: which view, which action, what is validated.
  const routes = new Map<string, ViewRoute>()
  app.addHook('onRoute', (route: RouteOptions) => {
    const config = route.config
    // HEAD routes Fastify adds beside GET share the GET's operation in the document.
    if (config?.view === undefined || route.method === 'HEAD') return
    const schema = (route.schema ?? {}) as Record<string, Record<string, unknown> | undefined>
    const url = route.url
    const body = schema.body !== undefined
    const registration = byName.get(config.view)!
    routes.set(`${String(route.method)} ${url}`, {
      view: registration.view,
      method: String(route.method),
      action: config.action!,
      path: url.slice(config.prefix!.length),
      // A params schema refuses something only where the URL has parameters.
      validates: body || (schema.params !== undefined && url.includes(':')) || checksSomething(schema.querystring) || checksSomething(schema.headers),
      body,
      around: registration.dependencies ?? [],
      throws: throws[`${String(route.method)} ${url}`]
    })
  })
  await app.register(swagger, swaggerOptions({ info: { title: 'Mixins', version: '1.0.0' } }))
  await app.register(views, { views: registrations })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  t.equal(routes.size, Object.values(doc.paths).flatMap((methods) => Object.keys(methods)).length, 'every operation was seen as a route')
  t.equal(routes.size, 26, 'every route: 11 of Items, 8 of Comments, 6 of Tags, 1 of Me')

  // The document against the configuration, both ways.
  for (const [key, route] of routes) {
    const [method, url] = key.split(' ')
    t.same(documentedErrors(doc.paths[toRoute(url)][method.toLowerCase()]), possibleStatuses(factsOf(route), url, validationStatus), `${key}: documented = possible`)
  }
  t.same(documentedErrors(doc.paths['/user'].get), [401], 'GET /user: no 400, no 404: nothing to validate, nothing to miss; no 413 or 415: a GET\'s content is never read')

  // Rows only the DELETEs whose content is ignored remove: an item (named by its current tag, as
  // every write must be), a comment of item 1, a tag.
  const made = async (url: string, payload: unknown, headers?: Record<string, string>): Promise<string> => {
    const res = await app.inject({ method: 'POST', url, headers, payload: payload as object })
    t.equal(res.statusCode, 201, `a spare row under ${url}`)
    // A comment comes in its envelope.
    const row = res.json<{ id?: number, comment?: { id: number } }>()
    return `${url}/${row.id ?? row.comment!.id}`
  }
  const spareItem = await made('/items', { name: 'spare' })
  const spares: Record<string, Target['spare']> = {
    'DELETE /items/:id': { url: spareItem, status: 204, headers: { 'if-match': await tagOf(app, spareItem) } },
    'DELETE /items/:itemId/comments/:id': { url: await made('/items/1/comments', { comment: { text: 'spare' } }), status: 204 },
    'DELETE /tags/:id': { url: await made('/tags', { label: 'spare' }, SIGNED_IN), status: 204 }
  }

  // The server against the document, both ways.
  const probes: Array<Probe & { route: string }> = []
  for (const [key, route] of routes) {
    const url = key.split(' ')[1]
    const facts = factsOf(route)
    const concrete = (u: string): string => u.replace(':itemId', '1').replace(':id', '1')
    const target: Target = {
      route: toRoute(url),
      facts,
      url: concrete(url),
      missing: url.endsWith('/:id') ? concrete(url).replace(/\/1$/, '/999') : undefined,
      invalid: url.includes(':') ? url.replace(':itemId', 'abc').replace(':id', 'abc') : undefined,
      // Bulk DELETE names a filter, without which it answers 400 before the parent is read.
      orphan: url.includes(':itemId') ? concrete(url).replace('/items/1/', '/items/999/') + (url.endsWith('/bulk') ? '?text=dim' : '') : undefined,
      body: MIXIN_BODIES[key],
      headers: route.view === Tags || route.view === Me ? SIGNED_IN : undefined,
      stranger: route.view === Tags || route.view === Me ? { authorization: 'Bearer wrong' } : undefined,
      spare: spares[key]
    }
    for (const probe of probesFor(target, bodyLimit, format)) probes.push({ ...probe, route: target.route })
  }
  const V = validationStatus
  const tag = await tagOf(app, '/items/1')
  const json = (headers?: Record<string, string>) => ({ ...JSON_TYPE, ...headers })
  const fresh = { 'if-match': tag }
  const probe = (
    route: string,
    why: string,
    status: number,
    method: string,
    url: string,
    headers?: Record<string, string>,
    payload?: unknown
  ): Probe & { route: string } =>
    ({ route, why, status, method, url, headers, ...(payload === undefined ? {} : { payload: typeof payload === 'string' ? payload : JSON.stringify(payload) }) })
  probes.push(
    // Items: conditional reads, pages, the action's own error.
    probe('/items', 'the current tag', 304, 'GET', '/items', { 'if-none-match': await tagOf(app, '/items') }),
    probe('/items/{id}', 'the current tag', 304, 'GET', '/items/1', { 'if-none-match': tag }),
    probe('/items/stats', 'the current tag', 304, 'GET', '/items/stats', { 'if-none-match': await tagOf(app, '/items/stats') }),
    probe('/items', 'a page size under 1', V, 'GET', '/items?page_size=0'),
    probe('/items/stats', 'a query that fails validation', V, 'GET', '/items/stats?burst=maybe'),
    probe('/items/stats', 'the declared TooManyRequests', 429, 'GET', '/items/stats?burst=true'),
    // Items: bodies that fail validation, clashes, object permissions.
    probe('/items', 'an invalid body', V, 'POST', '/items', json(), { name: '' }),
    probe('/items', 'a name another row has', 409, 'POST', '/items', json(), { name: 'desk' }),
    probe('/items/{id}', 'an invalid body', V, 'PUT', '/items/1', json(fresh), { name: '' }),
    probe('/items/{id}', 'a name another row has', 409, 'PUT', '/items/1', json(fresh), { name: 'desk' }),
    probe('/items/{id}', 'a name another row has', 409, 'PATCH', '/items/1', json(fresh), { name: 'desk' }),
    probe('/items/{id}', 'a locked item', 403, 'GET', '/items/3'),
    probe('/items/{id}', 'a locked item', 403, 'PUT', '/items/3', json({ 'if-match': await tagOf(app, '/items/1') }), { name: 'free' }),
    probe('/items/{id}', 'a locked item', 403, 'PATCH', '/items/3', json({ 'if-match': '"any"' }), { name: 'free' }),
    probe('/items/{id}', 'a locked item', 403, 'DELETE', '/items/3', { 'if-match': '"any"' }),
    // Items: patch documents (docs/patch.md).
    probe('/items/{id}', 'a merge patch whose result fails the schema', V, 'PATCH', '/items/1', { 'content-type': 'application/merge-patch+json', ...fresh }, { name: 5 }),
    probe('/items/{id}', 'a JSON Patch whose result fails the schema', V, 'PATCH', '/items/1', { 'content-type': 'application/json-patch+json', ...fresh }, [{ op: 'replace', path: '/name', value: '' }]),
    probe('/items/{id}', 'a JSON Patch that cannot be applied', 400, 'PATCH', '/items/1', { 'content-type': 'application/json-patch+json', ...fresh }, [{ op: 'remove', path: '/nothing' }]),
    probe('/items/{id}', 'a JSON Patch test that fails', 400, 'PATCH', '/items/1', { 'content-type': 'application/json-patch+json', ...fresh }, [{ op: 'test', path: '/name', value: 'desk' }]),
    probe('/items/{id}', 'a JSON Patch that is not JSON', 400, 'PATCH', '/items/1', { 'content-type': 'application/json-patch+json', ...fresh }, '[{"op":'),
    probe('/items/{id}', 'a JSON Patch with a clash', 409, 'PATCH', '/items/1', { 'content-type': 'application/json-patch+json', ...fresh }, [{ op: 'replace', path: '/name', value: 'desk' }]),
    // Items: the bulk verbs.
    probe('/items/bulk', 'an item that fails validation', V, 'POST', '/items/bulk', json(), [{ name: '' }]),
    probe('/items/bulk', 'a name another row has', 409, 'POST', '/items/bulk', json(), [{ name: 'desk' }]),
    probe('/items/bulk', 'a batch over maxBatchSize', 413, 'POST', '/items/bulk', json(), [{ name: 'a' }, { name: 'b' }, { name: 'c' }, { name: 'd' }]),
    probe('/items/bulk', 'an id no row has', 404, 'PUT', '/items/bulk', json(), [{ id: 999, name: 'ghost' }]),
    probe('/items/bulk', 'one id twice', V, 'PUT', '/items/bulk', json(), [{ id: 1, name: 'a' }, { id: 1, name: 'b' }]),
    probe('/items/bulk', 'a name another row has', 409, 'PUT', '/items/bulk', json(), [{ id: 1, name: 'desk' }]),
    probe('/items/bulk', 'a locked item', 403, 'PUT', '/items/bulk', json(), [{ id: 3, name: 'free' }]),
    probe('/items/bulk', 'no filter', V, 'PATCH', '/items/bulk', json(), { name: 'table' }),
    probe('/items/bulk', 'a name another row has', 409, 'PATCH', '/items/bulk?name=lamp', json(), { name: 'desk' }),
    probe('/items/bulk', 'a locked item', 403, 'PATCH', '/items/bulk?name=locked', json(), { name: 'free' }),
    probe('/items/bulk', 'no filter', V, 'DELETE', '/items/bulk'),
    probe('/items/bulk', 'a locked item', 403, 'DELETE', '/items/bulk?name=locked'),
    // Comments: cursor pages, the envelope, clashes.
    probe('/items/{itemId}/comments', 'a cursor that is not one', V, 'GET', '/items/1/comments?cursor=abc'),
    probe('/items/{itemId}/comments', 'a body outside its envelope', V, 'POST', '/items/1/comments', json(), { text: 'new' }),
    probe('/items/{itemId}/comments', 'a text another comment has', 409, 'POST', '/items/1/comments', json(), { comment: { text: 'dim' } }),
    probe('/items/{itemId}/comments/{id}', 'a text another comment has', 409, 'PUT', '/items/1/comments/1', json(), { comment: { text: 'dim' } }),
    probe('/items/{itemId}/comments/{id}', 'a text another comment has', 409, 'PATCH', '/items/1/comments/1', json(), { comment: { text: 'dim' } }),
    probe('/items/{itemId}/comments/bulk', 'no filter', V, 'DELETE', '/items/1/comments/bulk'),
    // Tags: offset pages, clashes.
    probe('/tags', 'a limit over the maximum', V, 'GET', '/tags?limit=11', SIGNED_IN),
    probe('/tags', 'an invalid body', V, 'POST', '/tags', json(SIGNED_IN), { label: '' }),
    probe('/tags', 'a label another tag has', 409, 'POST', '/tags', json(SIGNED_IN), { label: 'blue' }),
    probe('/tags/{id}', 'a label another tag has', 409, 'PUT', '/tags/1', json(SIGNED_IN), { label: 'blue' }),
    probe('/tags/{id}', 'a merge patch with a clash', 409, 'PATCH', '/tags/1', { 'content-type': 'application/merge-patch+json', ...SIGNED_IN }, { label: 'blue' }),
    probe('/tags/{id}', 'a merge patch whose result fails the schema', V, 'PATCH', '/tags/1', { 'content-type': 'application/merge-patch+json', ...SIGNED_IN }, { label: '' })
  )
  const bodies = documentedBodies(doc)
  const contentType = format?.contentType ?? PROBLEM_CONTENT_TYPE
  t.ok(bodies('/items/{id}', 'get', 404, contentType, { detail: 5 }), 'the body check refuses a body of another shape')
  const answered = await send(t, app, doc, probes, { contentType, bodies })
  for (const [route, operations] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${route}`
      t.same([...(answered.get(key) ?? [])].sort(), documentedErrors(operation), `${key}: every documented error was answered`)
    }
  }
}

test('a viewset with each mixin (filters, the three paginations, conditional requests required, bulk, patch formats, nesting, object permissions, dependencies, Throws, an envelope, a singleton), in problem+json: documented = possible, every answer documented, every documented error answered', async (t) => {
  await checkMixinApp(t, undefined)
})

test('the same app in an error format of its own with 422 for validation: the statuses change as the format says, every error in its media type and documented body', async (t) => {
  await checkMixinApp(t, ERRORS_FORMAT)
})
