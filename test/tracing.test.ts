import { test, type Test } from 'tap'
import { randomUUID } from 'node:crypto'
import { tracingChannel } from 'node:diagnostics_channel'
import { setTimeout as wait } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse, type RouteOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import { SpanKind, SpanStatusCode, context, trace, type Span, type Tracer } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import {
  BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan
} from '@opentelemetry/sdk-trace-base'
import { FastifyOtelInstrumentation } from '@fastify/otel'
import views, { APIView, Get, configureApp } from '../lib/index.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { apiKeyAuth } from '../lib/access.js'
import type { Principal } from '../lib/access/principal.js'
import type { SqlStatementMessage, Telemetry } from '../lib/types.js'
import { otelTracing } from '../lib/opentelemetry.js'
import { buildApp } from '../examples/app.js'
import { openEvents } from './example-checks.js'
import { postgres } from './pg-server.js'
import { problem } from './helpers.js'

// Traces of view routes (otelTracing), collected with the SDK's in-memory exporter: the span of each action
// (its name, attributes, status and parent: @fastify/otel's request span, the active span, or none), a client
// span per SQL statement beneath it, with placeholders and never a bound value, the bulk batch's span; on the
// example over SQLite and PostgreSQL, an event stream over a socket, an authenticated route. Then an adversary:
// a tracer that throws, statements outside requests, two applications with two tracers in one process, the
// channels given back when the applications close, and an application without telemetry paying nothing.

// One context manager for the process, as an application's SDK registers it: the active context follows awaits.
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())

// The library's channels, by the names it publishes them under.
const sqlChannel = tracingChannel('fastify-views:sql')
const bulkChannel = tracingChannel('fastify-views:bulk')

/** The name of the tracer the views' spans are made with. */
const SCOPE = 'fastify-views-test'

/** otelTracing's `createContextKey('fastify-views action')` is `Symbol.for`: one key for every otelTracing. */
/** otelTracing's `end` sets enduser.id before it ends the span, inside one guard: a principalId that throws loses the span. */

interface Collector {
  exporter: InMemorySpanExporter
  provider: BasicTracerProvider
  tracer: Tracer
}

/** A tracer provider whose spans end up in memory, each as it ends. */
function collector (): Collector {
  const exporter = new InMemorySpanExporter()
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] })
  return { exporter, provider, tracer: provider.getTracer(SCOPE) }
}

const idOf = (span: ReadableSpan): string => span.spanContext().spanId
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId
const named = (spans: readonly ReadableSpan[], name: string): ReadableSpan[] =>
  spans.filter((span) => span.name === name)
/** The spans whose parent is `parent`, in the order they ended. */
const childrenOf = (spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] =>
  spans.filter((span) => parentOf(span) === idOf(parent) && span.spanContext().traceId === parent.spanContext().traceId)
const statementsOf = (spans: readonly ReadableSpan[], parent: ReadableSpan): ReadableSpan[] =>
  childrenOf(spans, parent).filter((span) => span.kind === SpanKind.CLIENT)

/** The one span named `name` among `spans` (an assertion when there is not exactly one). */
function only (t: Test, spans: readonly ReadableSpan[], name: string): ReadableSpan {
  const found = named(spans, name)
  t.equal(found.length, 1, `one ${name} span (${spans.map((span) => span.name).join(', ')})`)
  if (found[0] === undefined) throw new Error(`no ${name} span among ${spans.map((span) => span.name).join(', ')}`)
  return found[0]
}

/**
 * A request through `inject`, and the spans that ended while it was served. An action's span ends on the
 * response's `close`, which light-my-request emits on the next tick after the response resolved: a turn of
 * the event loop later every span of the request has ended.
 */
async function traced (
  exporter: InMemorySpanExporter, app: FastifyInstance, options: InjectOptions
): Promise<{ res: LightMyRequestResponse, spans: ReadableSpan[] }> {
  const before = exporter.getFinishedSpans().length
  const res = await app.inject(options)
  await new Promise((resolve) => setImmediate(resolve))
  return { res, spans: exporter.getFinishedSpans().slice(before) }
}

/** Waits (10 ms at a time, at most 10 s) until `done` holds. */
async function until (what: string, done: () => boolean): Promise<void> {
  for (const started = Date.now(); !done(); await wait(10)) {
    if (Date.now() - started > 10_000) throw new Error(`not within 10 s: ${what}`)
  }
}

/** Every text a span carries: its name, its attributes' values, its events' names and attributes. */
function textsOf (span: ReadableSpan): string[] {
  return [
    span.name,
    ...Object.values(span.attributes).map(String),
    ...span.events.flatMap((event) => [event.name, ...Object.values(event.attributes ?? {}).map(String)])
  ]
}

/** The attributes of an action's span as otelTracing sets them, for `t.same`. */
function actionAttributes (
  view: string, action: string, route: string, method: string, status: number
): Record<string, unknown> {
  return {
    'fastify_views.view': view,
    'fastify_views.action': action,
    'http.route': route,
    'http.request.method': method,
    'http.response.status_code': status
  }
}

/** A statement's span: a CLIENT span named after its operation and table, its text with placeholders. */
function checkStatement (
  t: Test, span: ReadableSpan, system: string, operation: string, table: string | undefined, text: RegExp
): void {
  t.equal(span.kind, SpanKind.CLIENT, `${span.name}: a client span`)
  t.equal(span.name, table === undefined ? operation : `${operation} ${table}`)
  t.match(span.attributes, {
    'db.system.name': system,
    'db.operation.name': operation,
    'db.query.summary': span.name
  })
  t.equal(span.attributes['db.collection.name'], table, `${span.name}: its table`)
  t.match(span.attributes['db.query.text'], text, `${span.name}: its text`)
  t.equal(span.status.code, SpanStatusCode.UNSET)
}

/** A view of the test's own whose action throws a plain Error: a 500. */
class Broken extends APIView {
  @Get('/')
  explode (): never {
    throw new Error('kaboom')
  }

  /** A 503 the action answers itself: a server error without an exception. */
  @Get('/unavailable')
  unavailable () {
    return this.reply.code(503).type('application/problem+json').send({ title: 'Service Unavailable', status: 503 })
  }

  /** A statement published by hand that throws something that is not an Error. */
  @Get('/odd')
  odd () {
    try {
      tracingChannel<object, { sql: string, database: string }>('fastify-views:sql').traceSync(() => {
        // eslint-disable-next-line no-throw-literal -- what a careless driver might throw
        throw 'not an Error'
      }, { sql: 'SELECT 1', database: 'sqlite' })
    } catch {}
    return { ok: true }
  }
}

interface ExampleOptions {
  /** @fastify/otel's request spans, the views' parents. */
  http?: boolean
  /** Registers more before the app is ready (a view of the test's own). */
  more?: (app: FastifyInstance) => Promise<void>
  /** The tracing telemetry (default: otelTracing with the collector's tracer). */
  telemetry?: Telemetry
  logs?: string[]
}

/** The example over `databaseUrl`, traced into `traces`; ready, and closed by the test's teardown. */
async function example (
  t: Test, databaseUrl: string, traces: Collector, options: ExampleOptions = {}
): Promise<FastifyInstance> {
  let http: FastifyOtelInstrumentation | undefined
  if (options.http === true) {
    http = new FastifyOtelInstrumentation()
    http.setTracerProvider(traces.provider)
  }
  const { logs } = options
  const logger = logs === undefined ? false : { level: 'warn', stream: { write: (line: string) => { logs.push(line) } } }
  const app = await buildApp({
    databaseUrl,
    logger,
    telemetry: { telemetry: [options.telemetry ?? otelTracing({ tracer: traces.tracer })], http }
  })
  t.teardown(() => app.close())
  await options.more?.(app)
  await app.ready()
  return app
}

/** Counts the statements published on the SQL channel while it is open (a subscriber of the test's own). */
function countStatements (t: Test): { texts: string[] } {
  const seen = { texts: [] as string[] }
  const subscriber = {
    start: (message: unknown) => { seen.texts.push((message as SqlStatementMessage).sql) },
    end: () => {},
    asyncStart: () => {},
    asyncEnd: () => {},
    error: () => {}
  }
  sqlChannel.subscribe(subscriber)
  t.teardown(() => { sqlChannel.unsubscribe(subscriber) })
  return seen
}

/**
 * The list, the create, the 412 (and a 404) on the example, and what their spans say: shared by SQLite and
 * PostgreSQL. With `httpSpans`, each action's span is the child of @fastify/otel's request span; else a root span.
 */
async function listCreateAndPrecondition (
  t: Test, app: FastifyInstance, exporter: InMemorySpanExporter, system: string, placeholder: RegExp, secret: string,
  httpSpans: boolean
): Promise<ReadableSpan[]> {
  const all: ReadableSpan[] = []
  const parentCheck = (spans: ReadableSpan[], action: ReadableSpan, route: string): void => {
    if (!httpSpans) {
      t.equal(parentOf(action), undefined, `${action.name}: a root span without @fastify/otel`)
      return
    }
    const request = only(t, spans, 'request')
    t.equal(request.attributes['http.route'], route, '@fastify/otel\'s request span')
    t.equal(parentOf(action), idOf(request), `${action.name}: the child of @fastify/otel's request span`)
    t.equal(action.spanContext().traceId, request.spanContext().traceId, 'in its trace')
  }

  // A create: one INSERT, its values bound, never in the text.
  const created = await traced(exporter, app, { method: 'POST', url: '/items', payload: { name: secret, price: 3 } })
  all.push(...created.spans)
  t.equal(created.res.statusCode, 201)
  const id = created.res.json().id as number
  const create = only(t, created.spans, 'Items.create')
  t.equal(create.kind, SpanKind.INTERNAL)
  t.same(create.attributes, actionAttributes('Items', 'create', '/items', 'POST', 201), 'no enduser.id, no stream, completed')
  t.equal(create.status.code, SpanStatusCode.UNSET)
  t.same(create.events, [])
  parentCheck(created.spans, create, '/items')
  const insert = statementsOf(created.spans, create)
  t.same(insert.map((span) => span.name), ['INSERT items'], 'the create\'s INSERT, the child of its action')
  checkStatement(t, insert[0], system, 'INSERT', 'items', new RegExp(`^INSERT INTO "items" \\("name", "price", "updated_at"\\) VALUES \\(${placeholder.source}, ${placeholder.source}, ${placeholder.source}\\)`))

  // A list: a page and its count, in one read-only transaction, each statement the child of Items.list.
  const listed = await traced(exporter, app, { method: 'GET', url: '/items' })
  all.push(...listed.spans)
  t.equal(listed.res.statusCode, 200)
  t.ok(listed.res.json().items.some((item: { name: string }) => item.name === secret), 'the list has the item')
  const list = only(t, listed.spans, 'Items.list')
  t.same(list.attributes, actionAttributes('Items', 'list', '/items', 'GET', 200))
  t.equal(list.status.code, SpanStatusCode.UNSET)
  parentCheck(listed.spans, list, '/items')
  const reads = statementsOf(listed.spans, list)
  t.same(reads.map((span) => span.name), ['BEGIN', 'SELECT items', 'SELECT items', 'COMMIT'], 'BEGIN, the page, the count, COMMIT')
  checkStatement(t, reads[0], system, 'BEGIN', undefined, /^BEGIN/)
  checkStatement(t, reads[1], system, 'SELECT', 'items', /^SELECT "id", "name", "price", "updated_at" FROM "items" ORDER BY "id"/)
  checkStatement(t, reads[2], system, 'SELECT', 'items', /^SELECT COUNT\(\*\) AS n FROM "items"/)
  checkStatement(t, reads[3], system, 'COMMIT', undefined, /^COMMIT$/)
  t.equal(listed.spans.filter((span) => span.kind === SpanKind.CLIENT).length, 4, 'no statement span elsewhere')

  // A filter whose value is the secret: bound, never in the text.
  const filtered = await traced(exporter, app, { method: 'GET', url: `/items?name=${encodeURIComponent(secret)}` })
  all.push(...filtered.spans)
  t.equal(filtered.res.json().total_items, 1)
  const page = statementsOf(filtered.spans, only(t, filtered.spans, 'Items.list'))[1]
  t.match(page.attributes['db.query.text'], new RegExp(`WHERE "name" = ${placeholder.source}`), 'the filter\'s value a placeholder')

  // A 412: the precondition's read is the child of Items.update; a client's mistake is no error of the span.
  const etag = (await app.inject({ method: 'GET', url: `/items/${id}` })).headers.etag
  t.ok(typeof etag === 'string' && etag !== '"stale"')
  const refused = await traced(exporter, app, {
    method: 'PUT', url: `/items/${id}`, headers: { 'if-match': '"stale"' }, payload: { name: `${secret}-put`, price: 4 }
  })
  all.push(...refused.spans)
  problem(t, refused.res, 412)
  const update = only(t, refused.spans, 'Items.update')
  t.same(update.attributes, actionAttributes('Items', 'update', '/items/:id', 'PUT', 412), 'no error.type')
  t.equal(update.status.code, SpanStatusCode.UNSET, 'a 412 leaves the status unset')
  t.same(update.events, [], 'no exception event')
  parentCheck(refused.spans, update, '/items/:id')
  const precondition = statementsOf(refused.spans, update)
  t.same(precondition.map((span) => span.name), ['SELECT items'], 'the precondition\'s read, and no write')
  checkStatement(t, precondition[0], system, 'SELECT', 'items', new RegExp(`WHERE "id" = ${placeholder.source}$`))

  // A 404 is the client's too.
  const missing = await traced(exporter, app, { method: 'GET', url: '/items/2000000000' })
  all.push(...missing.spans)
  t.equal(missing.res.statusCode, 404)
  const retrieve = only(t, missing.spans, 'Items.retrieve')
  t.equal(retrieve.attributes['http.response.status_code'], 404)
  t.equal(retrieve.status.code, SpanStatusCode.UNSET)
  return all
}

/** A bulk create in a transaction: BEGIN, the INSERTs, COMMIT under Items.bulkCreate, and the batch's span beside them. */
async function bulkCreate (
  t: Test, app: FastifyInstance, exporter: InMemorySpanExporter, system: string, secret: string
): Promise<ReadableSpan[]> {
  const items = [1, 2, 3].map((n) => ({ name: `${secret}-${n}`, price: n }))
  const { res, spans } = await traced(exporter, app, { method: 'POST', url: '/items/bulk', payload: items })
  t.equal(res.statusCode, 201)
  const action = only(t, spans, 'Items.bulkCreate')
  t.same(action.attributes, actionAttributes('Items', 'bulkCreate', '/items/bulk', 'POST', 201))
  const statements = statementsOf(spans, action)
  t.same(statements.map((span) => span.name), ['BEGIN', 'INSERT items', 'INSERT items', 'INSERT items', 'COMMIT'],
    'the transaction\'s statements, children of the action')
  for (const span of statements) t.equal(span.attributes['db.system.name'], system)
  const batch = only(t, spans, 'Items.bulkCreate batch')
  t.equal(parentOf(batch), idOf(action), 'the batch: a child of the action')
  t.equal(batch.kind, SpanKind.INTERNAL)
  t.same(batch.attributes, { 'fastify_views.view': 'Items', 'fastify_views.action': 'bulkCreate', 'fastify_views.batch.items': 3 })
  t.same(childrenOf(spans, batch), [], 'the statements are its siblings, not its children')
  return spans
}

/**
 * No span of the views carries a value the requests sent: texts have placeholders, filters and bodies are not
 * recorded. (@fastify/otel's request span is its own: its `url.path` has the query string.)
 */
function noBoundValues (t: Test, all: readonly ReadableSpan[], secret: string): void {
  const spans = all.filter((span) => span.instrumentationScope.name === SCOPE)
  t.ok(spans.length > 10, `${spans.length} spans looked at`)
  const leaks = spans.filter((span) => textsOf(span).some((text) => text.includes(secret)))
  t.same(leaks.map((span) => span.name), [], 'no span carries a bound value')
}

test('on the example over SQLite with @fastify/otel: a list, a create, a bulk create in a transaction, a 412 and a 500', async (t) => {
  const traces = collector()
  const { exporter } = traces
  const published = countStatements(t)
  const app = await example(t, 'sqlite::memory:', traces, {
    http: true,
    more: async (app) => { await app.register(views, { views: [{ view: Broken, prefix: '/broken' }] }) }
  })
  t.same(exporter.getFinishedSpans(), [], 'starting the application makes no span')
  const secret = `Secret-${randomUUID()}`
  const all = await listCreateAndPrecondition(t, app, exporter, 'sqlite', /\?/, secret, true)
  all.push(...await bulkCreate(t, app, exporter, 'sqlite', secret))
  t.ok(published.texts.length > 10, 'the statements were published')

  // A 500: the action threw a plain Error.
  const failed = await traced(exporter, app, { method: 'GET', url: '/broken' })
  all.push(...failed.spans)
  problem(t, failed.res, 500)
  const broken = only(t, failed.spans, 'Broken.explode')
  t.same(broken.attributes, { ...actionAttributes('Broken', 'explode', '/broken', 'GET', 500), 'error.type': 'Error' })
  t.same(broken.status, { code: SpanStatusCode.ERROR, message: 'kaboom' }, 'ERROR, with the error\'s message')
  t.equal(broken.events.length, 1)
  t.equal(broken.events[0].name, 'exception')
  t.match(broken.events[0].attributes, { 'exception.type': 'Error', 'exception.message': 'kaboom' })
  t.equal(parentOf(broken), idOf(only(t, failed.spans, 'request')), 'the child of @fastify/otel\'s request span')

  // A 503 the action answered itself: ERROR, its status the error's type, no exception event.
  const unavailable = await traced(exporter, app, { method: 'GET', url: '/broken/unavailable' })
  const answered = only(t, unavailable.spans, 'Broken.unavailable')
  t.equal(answered.attributes['error.type'], '503')
  t.equal(answered.status.code, SpanStatusCode.ERROR)
  t.equal(answered.events.length, 0)
  // A statement that threw a string: its span an error with that text.
  const odd = await traced(exporter, app, { method: 'GET', url: '/broken/odd' })
  t.same(only(t, odd.spans, 'SELECT').status, { code: SpanStatusCode.ERROR, message: 'not an Error' })

  noBoundValues(t, all, secret)
})

const started = await postgres()

test('on the example over PostgreSQL: the same spans, db.system.name postgresql, $n placeholders', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  t.teardown(() => { server.stop() })
  const traces = collector()
  const { exporter } = traces
  const app = await example(t, server.url, traces, { http: true })
  t.same(exporter.getFinishedSpans(), [], 'starting the application (its tables, its columns read) makes no span')
  const secret = `Secret-${randomUUID()}`
  const all = await listCreateAndPrecondition(t, app, exporter, 'postgresql', /\$\d+/, secret, true)
  all.push(...await bulkCreate(t, app, exporter, 'postgresql', secret))
  noBoundValues(t, all, secret)

  // Concurrent requests over the pool: each action's statement beneath its own span, none crossed.
  const before = exporter.getFinishedSpans().length
  const answers = await Promise.all(Array.from({ length: 8 }, () => app.inject({ method: 'GET', url: '/items/1' })))
  t.same(answers.map((res) => res.statusCode), Array(8).fill(200))
  await until('eight retrieve spans', () => named(exporter.getFinishedSpans().slice(before), 'Items.retrieve').length === 8)
  const spans = exporter.getFinishedSpans().slice(before)
  t.same(named(spans, 'Items.retrieve').map((action) => statementsOf(spans, action).map((span) => span.name)),
    Array(8).fill(['SELECT items']), 'one SELECT beneath each action')
})

test('without @fastify/otel: the action span is a root, or the child of the span active around the request', async (t) => {
  const traces = collector()
  const { exporter, tracer } = traces
  const app = await example(t, 'sqlite::memory:', traces)
  const secret = `Secret-${randomUUID()}`
  const all = await listCreateAndPrecondition(t, app, exporter, 'sqlite', /\?/, secret, false)
  noBoundValues(t, all, secret)

  const outer = tracer.startSpan('test request')
  // The inject's promise is awaited inside: light-my-request starts the request when it is awaited.
  const { res, spans } = await context.with(trace.setSpan(context.active(), outer), async () =>
    await traced(exporter, app, { method: 'GET', url: '/items/1' }))
  outer.end()
  t.equal(res.statusCode, 200)
  const retrieve = only(t, spans, 'Items.retrieve')
  t.equal(parentOf(retrieve), outer.spanContext().spanId, 'the child of the active span')
  t.equal(retrieve.spanContext().traceId, outer.spanContext().traceId, 'in its trace')
  t.same(statementsOf(spans, retrieve).map((span) => span.name), ['SELECT items'])
  t.notOk(spans.some((span) => span.kind === SpanKind.CLIENT && parentOf(span) === outer.spanContext().spanId),
    'the statement beneath the action, not the outer span')
})

test('statements: false traces the actions and the batches, not the statements', async (t) => {
  const traces = collector()
  const { exporter } = traces
  const app = await example(t, 'sqlite::memory:', traces, { telemetry: otelTracing({ tracer: traces.tracer, statements: false }) })
  const { res, spans } = await traced(exporter, app, { method: 'POST', url: '/items/bulk', payload: [{ name: 'a', price: 1 }] })
  t.equal(res.statusCode, 201)
  t.same(spans.map((span) => span.name).sort(), ['Items.bulkCreate', 'Items.bulkCreate batch'])
  t.equal(sqlChannel.hasSubscribers, false, 'nothing listens to the statements')
})

/** A principal of the test's own: the library's type is an application's, declared elsewhere. */
const asPrincipal = (member: { id: number, name: string }): Principal => member as unknown as Principal
const MEMBERS = new Map([['key-ada-0123456789', asPrincipal({ id: 7, name: 'ada' })]])
const ADA = { 'x-api-key': 'key-ada-0123456789' }
const Note = Type.Object({ id: Type.Integer(), title: Type.String() })
interface NoteRow { id: number, title: string }

interface NotesApp { app: FastifyInstance, exporter: InMemorySpanExporter, notes: SqliteRepository<NoteRow> }

/**
 * An application of the test's own over SQLite (better-sqlite3's protocol through node:sqlite): API keys
 * for authentication, `/me` (a hand-written action that reads the notes) and `/notes` (a generic view
 * set; a title is unique), traced with `principalId` when given.
 */
async function notesApp (
  t: Test, principalId?: (principal: Principal) => string | number | undefined
): Promise<NotesApp> {
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  const db = new DatabaseSync(':memory:')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL UNIQUE); INSERT INTO notes (title) VALUES (\'first\')')
  const notes = new SqliteRepository<NoteRow>(db, { table: 'notes', columns: ['id', 'title'] })

  class Me extends APIView {
    @Get('/', { responseSchema: Type.Object({ name: Type.Union([Type.String(), Type.Null()]), notes: Type.Integer() }) })
    me () {
      const principal = this.request.principal as unknown as { name: string } | null
      return { name: principal?.name ?? null, notes: notes.list({}).length }
    }
  }
  class Notes extends GenericViewSet.with({
    responseSchema: Note,
    createSchema: Type.Object({ title: Type.String() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    repository: notes
  }) {}

  const traces = collector()
  const app = Fastify({ logger: false })
  await app.register(views, {
    auth: { authenticators: [apiKeyAuth({ lookup: (key) => MEMBERS.get(key) })] },
    telemetry: otelTracing({ tracer: traces.tracer, ...(principalId === undefined ? {} : { principalId }) }),
    views: [{ view: Me, prefix: '/me' }, { view: Notes, prefix: '/notes' }]
  })
  t.teardown(async () => {
    await app.close()
    db.close()
  })
  await app.ready()
  return { app, exporter: traces.exporter, notes }
}

test('principalId: enduser.id only when the application gives one, and only for a principal', async (t) => {
  const me = async (target: NotesApp, headers: Record<string, string> = {}) => {
    const { res, spans } = await traced(target.exporter, target.app, { url: '/me', headers })
    const action = only(t, spans, 'Me.me')
    t.same(statementsOf(spans, action).map((span) => span.name), ['SELECT notes'], 'the handler\'s own statement beneath its action')
    return { res, action }
  }

  const without = await notesApp(t)
  const ada = await me(without, ADA)
  t.same(ada.res.json(), { name: 'ada', notes: 1 })
  t.notOk('enduser.id' in ada.action.attributes, 'no principalId: no span says who asked')

  const withId = await notesApp(t, (principal) => (principal as unknown as { id: number }).id)
  const identified = await me(withId, ADA)
  t.same(identified.res.json(), { name: 'ada', notes: 1 })
  t.equal(identified.action.attributes['enduser.id'], '7', 'the principal\'s id, as a string')
  const anonymous = await me(withId)
  t.same(anonymous.res.json(), { name: null, notes: 1 })
  t.notOk('enduser.id' in anonymous.action.attributes, 'an anonymous request: none')
  const refused = await traced(withId.exporter, withId.app, { url: '/me', headers: { 'x-api-key': 'key-unknown' } })
  t.equal(refused.res.statusCode, 401)
  const action = only(t, refused.spans, 'Me.me')
  t.equal(action.attributes['http.response.status_code'], 401)
  t.notOk('enduser.id' in action.attributes, 'a refused key: none')
  t.equal(action.status.code, SpanStatusCode.UNSET)

  // A repository called by the test, outside any request, with or without a span of the test's own active.
  const before = withId.exporter.getFinishedSpans().length
  const published = countStatements(t)
  t.equal(withId.notes.list({}).length, 1)
  const outer = collector().tracer.startSpan('not a request')
  context.with(trace.setSpan(context.active(), outer), () => { withId.notes.create({ title: 'second' }) })
  outer.end()
  t.match(published.texts, [/^SELECT/, /^INSERT/], 'the statements were published')
  t.same(withId.exporter.getFinishedSpans().slice(before), [], 'statements outside an action make no span')
})

test('a statement that fails: its span an error with the driver\'s message, no bound value; the 409 is no error of the action', async (t) => {
  const { app, exporter } = await notesApp(t)
  const secret = `Secret-${randomUUID()}`
  t.equal((await app.inject({ method: 'POST', url: '/notes', payload: { title: secret }, headers: ADA })).statusCode, 201)
  const { res, spans } = await traced(exporter, app, { method: 'POST', url: '/notes', payload: { title: secret }, headers: ADA })
  problem(t, res, 409)
  const create = only(t, spans, 'Notes.create')
  t.equal(create.status.code, SpanStatusCode.UNSET, 'a conflict is the client\'s')
  const [insert] = statementsOf(spans, create)
  t.equal(insert?.name, 'INSERT notes')
  t.same(insert.status, { code: SpanStatusCode.ERROR, message: 'UNIQUE constraint failed: notes.title' })
  t.match(insert.events, [{ name: 'exception', attributes: { 'exception.message': 'UNIQUE constraint failed: notes.title' } }])
  t.notOk(spans.some((span) => textsOf(span).some((text) => text.includes(secret))), 'the title in no span')
})

test('a principalId that throws: the request is answered, and its span still ends', async (t) => {
  const { app, exporter } = await notesApp(t, () => { throw new TypeError('not a member') })
  const { res, spans } = await traced(exporter, app, { url: '/me', headers: ADA })
  t.same(res.json(), { name: 'ada', notes: 1 }, 'answered')
  t.same(spans.map((span) => span.name), ['SELECT notes', 'Me.me'], 'the action\'s span ended, without enduser.id')
})

test('an event stream over a socket: its span lasts while the client listens, and says it was not completed', async (t) => {
  const traces = collector()
  const { exporter } = traces
  const app = await example(t, 'sqlite::memory:', traces)
  const live = await openEvents(app)
  t.teardown(live.close)
  t.equal(live.status, 200)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'Watched', price: 1 } })).statusCode, 201)
  const [event] = await live.next(1)
  t.equal(event.event, 'created')
  t.same(named(exporter.getFinishedSpans(), 'Items.events'), [], 'the stream\'s span is open while the client listens')
  live.close()
  await until('the stream\'s span ends', () => named(exporter.getFinishedSpans(), 'Items.events').length === 1)
  const spans = exporter.getFinishedSpans()
  const stream = only(t, spans, 'Items.events')
  t.equal(stream.kind, SpanKind.INTERNAL)
  t.same(stream.attributes, {
    ...actionAttributes('Items', 'events', '/items/events', 'GET', 200),
    'fastify_views.stream': 'events',
    'fastify_views.response.completed': false
  })
  t.equal(stream.status.code, SpanStatusCode.UNSET, 'a client that leaves is no error')
  t.equal(parentOf(stream), undefined, 'a root span')
  t.ok(statementsOf(spans, stream).some((span) => span.name === 'SELECT item_changes'), 'the stream\'s reads of the log beneath it')
  const create = only(t, spans, 'Items.create')
  t.not(create.spanContext().traceId, stream.spanContext().traceId, 'the write that woke the stream is a trace of its own')
})

test('a ChangeFeed\'s poller is no request\'s: its statements are not traced, not even as a child of the stream that started it', async (t) => {
  const traces = collector()
  const { exporter } = traces
  const app = await example(t, 'sqlite::memory:', traces)
  const published = countStatements(t)
  const reads = (): number => published.texts.filter((sql) => sql.includes('FROM "item_changes"')).length
  // The first follower reads the log (its newest row, then what follows it) and starts the feed's poller, which reads it too.
  const first = await openEvents(app)
  t.teardown(first.close)
  await until('the first follower\'s reads and the first poll', () => reads() >= 4)
  // The second reads it twice as well; the poller is running already.
  const second = await openEvents(app)
  t.teardown(second.close)
  await until('the second follower\'s reads', () => reads() >= 6)
  first.close()
  await until('the first stream\'s span ends', () => named(exporter.getFinishedSpans(), 'Items.events').length === 1)
  const gone = named(exporter.getFinishedSpans(), 'Items.events')[0]
  const ended = exporter.getFinishedSpans().length
  // The poller reads the log once a second while the second client follows: one read after the first left.
  const polled = reads()
  await until('a poll after the first follower left', () => reads() > polled)
  second.close()
  await until('the second stream\'s span ends', () => named(exporter.getFinishedSpans(), 'Items.events').length === 2)
  const left = named(exporter.getFinishedSpans(), 'Items.events')[1]
  // SQLite's statements run synchronously: those that ended after the first stream's span began after it ended.
  const late = exporter.getFinishedSpans().slice(ended).filter((span) => span.kind === SpanKind.CLIENT)
  t.same(late.filter((span) => parentOf(span) === idOf(gone)).map((span) => span.name), [],
    'no statement beneath a stream\'s span after its client left')
  // Had the second stream's own reads come after the first left, they are its; the poller's are no one's.
  t.same(late.filter((span) => parentOf(span) !== idOf(left)).map((span) => span.name), [],
    'no span for the poller\'s statements')
  const statements = exporter.getFinishedSpans().filter((span) => span.kind === SpanKind.CLIENT)
  t.ok(statements.length < reads(), `fewer statement spans (${statements.length}) than the log's reads (${reads()})`)
})

/** A tracer of the SDK whose spans throw when they end (an exporter that fails, as a span processor would say). */
function endThrows (tracer: Tracer): Tracer {
  return {
    startSpan: (...args: Parameters<Tracer['startSpan']>): Span =>
      Object.assign(tracer.startSpan(...args), { end (): never { throw new Error('the span cannot end') } }),
    startActiveSpan: () => { throw new Error('not used') }
  }
}

/** A tracer that cannot make a span. */
const startThrows: Tracer = {
  startSpan: (): never => { throw new Error('no span today') },
  startActiveSpan: (): never => { throw new Error('no span today') }
}

/** Every operation of the example once, with its answer; all must be right whatever the tracer does. */
async function everyAnswer (t: Test, app: FastifyInstance): Promise<void> {
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 3 } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: 1, name: 'Lamp', price: 3 })
  const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'a', price: 1 }, { name: 'b', price: 2 }] })
  t.equal(bulk.statusCode, 201)
  t.equal(bulk.json().length, 2)
  const list = await app.inject({ method: 'GET', url: '/items' })
  t.equal(list.statusCode, 200)
  t.equal(list.json().total_items, 3)
  const read = await app.inject({ method: 'GET', url: '/items/1' })
  t.equal(read.statusCode, 200)
  problem(t, await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': '"stale"' }, payload: { name: 'x', price: 1 } }), 412)
  const put = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': read.headers.etag as string }, payload: { name: 'x', price: 1 } })
  t.equal(put.statusCode, 200)
  problem(t, await app.inject({ method: 'GET', url: '/broken' }), 500)
  t.equal((await app.inject({ method: 'DELETE', url: '/items/2' })).statusCode, 204)
}

/** The library's telemetry warnings: its log lines and process warnings, while the test runs. */
function telemetryWarnings (t: Test, logs: string[]): () => string[] {
  const warnings: string[] = []
  const heard = (warning: Error): void => { if (warning.name === 'FastifyViewsTelemetryWarning') warnings.push(warning.message) }
  process.on('warning', heard)
  t.teardown(() => { process.off('warning', heard) })
  return () => [...logs.filter((line) => line.includes('fastify-views: the tracer threw')), ...warnings]
}

for (const [name, tracerOf] of [
  ['whose startSpan throws', (): Tracer => startThrows],
  ['whose spans throw when they end', (traces: Collector): Tracer => endThrows(traces.tracer)]
] as const) {
  test(`a tracer ${name}: every request is answered as without it, and one warning says so`, async (t) => {
    const traces = collector()
    const logs: string[] = []
    const warnings = telemetryWarnings(t, logs)
    const app = await example(t, 'sqlite::memory:', traces, {
      http: true,
      logs,
      telemetry: otelTracing({ tracer: tracerOf(traces) }),
      more: async (app) => { await app.register(views, { views: [{ view: Broken, prefix: '/broken' }] }) }
    })
    await everyAnswer(t, app)
    for (let i = 0; i < 5; i++) t.equal((await app.inject({ method: 'GET', url: '/items?page_size=1' })).statusCode, 200)
    // A process warning is emitted on the next tick.
    await new Promise((resolve) => setImmediate(resolve))
    t.equal(warnings().length, 1, `one warning in all, not one per request: ${warnings().join(' | ')}`)
    t.match(warnings()[0], /fastify-views: the tracer threw; what it observes goes unrecorded \(reported once a minute\)/)
    t.ok(named(traces.exporter.getFinishedSpans(), 'request').length >= 8, '@fastify/otel\'s spans are unaffected')
  })
}

test('two applications in one process, two tracers: each application\'s spans in its own exporter only, each statement once', async (t) => {
  const [one, two] = [collector(), collector()]
  const appOne = await example(t, 'sqlite::memory:', one)
  const appTwo = await example(t, 'sqlite::memory:', two)
  const created = await traced(one.exporter, appOne, { method: 'POST', url: '/items', payload: { name: 'One', price: 1 } })
  t.equal(created.res.statusCode, 201)
  const listed = await traced(two.exporter, appTwo, { method: 'GET', url: '/items' })
  t.equal(listed.res.statusCode, 200)
  t.same(one.exporter.getFinishedSpans().map((span) => span.name), ['INSERT items', 'Items.create'], 'the first: its create only')
  t.same(two.exporter.getFinishedSpans().map((span) => span.name), ['BEGIN', 'SELECT items', 'SELECT items', 'COMMIT', 'Items.list'],
    'the second: its list only')
  for (const { exporter } of [one, two]) {
    const spans = exporter.getFinishedSpans()
    for (const span of spans.filter((span) => span.kind === SpanKind.CLIENT)) {
      t.ok(spans.some((action) => idOf(action) === parentOf(span)), `${span.name}: its parent in the same exporter`)
    }
  }
})

test('two applications, two tracers: a closed application stops tracing; when both are closed the channels are given back', async (t) => {
  const [one, two] = [collector(), collector()]
  const appOne = await example(t, 'sqlite::memory:', one)
  const appTwo = await example(t, 'sqlite::memory:', two)
  t.equal(sqlChannel.hasSubscribers, true)
  t.equal(bulkChannel.hasSubscribers, true)
  await appOne.close()
  t.equal(sqlChannel.hasSubscribers, true, 'the second still listens')
  const after = await traced(two.exporter, appTwo, { method: 'POST', url: '/items/bulk', payload: [{ name: 'Two', price: 2 }] })
  t.equal(after.res.statusCode, 201)
  t.same(after.spans.map((span) => span.name), ['BEGIN', 'INSERT items', 'COMMIT', 'Items.bulkCreate batch', 'Items.bulkCreate'],
    'the second traces its statements and its batch')
  t.same(one.exporter.getFinishedSpans(), [], 'the closed application\'s tracer sees nothing')
  await appTwo.close()
  t.equal(sqlChannel.hasSubscribers, false, 'both closed: nothing listens to the statements')
  t.equal(bulkChannel.hasSubscribers, false, 'nor to the batches')
})

test('one otelTracing shared by two applications: the channels are given back when the last closes', async (t) => {
  const traces = collector()
  const shared = otelTracing({ tracer: traces.tracer })
  const first = await example(t, 'sqlite::memory:', traces, { telemetry: shared })
  const second = await example(t, 'sqlite::memory:', traces, { telemetry: shared })
  await first.close()
  t.equal(sqlChannel.hasSubscribers, true, 'one application still uses it')
  const { spans } = await traced(traces.exporter, second, { method: 'POST', url: '/items', payload: { name: 'x', price: 1 } })
  t.same(spans.map((span) => span.name), ['INSERT items', 'Items.create'], 'its statements traced once')
  await second.close()
  t.equal(sqlChannel.hasSubscribers, false)
  t.equal(bulkChannel.hasSubscribers, false)
})

test('without telemetry a route pays nothing: no hook of its own, nothing listens to the channels', async (t) => {
  t.equal(sqlChannel.hasSubscribers, false, 'no application of this file listens any longer')
  const Row = Type.Object({ id: Type.Integer(), name: Type.String() })
  const IdParams = Type.Object({ id: Type.Integer() })
  class Rows extends GenericViewSet.with({ responseSchema: Row, detailParams: IdParams, repository: new MemoryRepository({ rows: [{ id: 1, name: 'a' }] }) }) {}
  const seen: string[] = []
  const ignoring: Telemetry = {
    observe: (route) => {
      seen.push(`${route.method} ${route.route} ${route.view}.${route.action}`)
      return undefined
    }
  }
  const appWith = async (telemetry: Telemetry | undefined) => {
    const app = Fastify({ logger: false })
    configureApp(app, telemetry === undefined ? {} : { telemetry })
    const routes: Array<{ url: string, method: unknown, hooks: Record<string, string[]> }> = []
    app.addHook('onRoute', (route: RouteOptions) => {
      const hooks: Record<string, string[]> = {}
      for (const phase of ['onRequest', 'preValidation', 'preHandler', 'onSend', 'onResponse', 'onError'] as const) {
        const list = route[phase] as unknown
        const each: Array<{ name: string }> = Array.isArray(list) ? list : list === undefined ? [] : [list]
        hooks[phase] = each.map((hook) => hook.name)
      }
      routes.push({ url: route.url, method: route.method, hooks })
    })
    await app.register(views, {
      views: [{ view: Rows, prefix: '/rows' }]
    })
    t.teardown(() => app.close())
    await app.ready()
    return { app, routes, printed: app.printRoutes({ includeHooks: true, commonPrefix: false }) }
  }
  const bare = await appWith(undefined)
  const ignored = await appWith(ignoring)
  const observed = await appWith(otelTracing({ tracer: collector().tracer }))
  t.same([...seen].sort(), [
    'DELETE /rows/:id Rows.destroy', 'GET /rows Rows.list', 'GET /rows/:id Rows.retrieve', 'PATCH /rows/:id Rows.partialUpdate',
    'POST /rows Rows.create', 'PUT /rows/:id Rows.update'
  ], 'a telemetry is shown every operation, once')
  t.equal(bare.printed, ignored.printed, 'a telemetry that observes nothing leaves every route as it was')
  t.same(bare.routes, ignored.routes)
  t.notMatch(bare.printed, /observed/, 'no hook of the telemetry\'s')
  t.match(observed.printed, /observedRequest/, 'where a telemetry observes, its hook is there')
  t.same(observed.routes.map((route) => [route.hooks.onRequest[0], route.hooks.onError[0]]),
    observed.routes.map(() => ['observedRequest', 'observedError']))
  const withoutObservers = observed.routes.map((route) => ({
    ...route,
    hooks: { ...route.hooks, onRequest: route.hooks.onRequest.slice(1), onError: route.hooks.onError.slice(1) }
  }))
  t.same(withoutObservers,
    bare.routes, 'and only its hooks are added: observedRequest first, observedError first')
  await observed.app.close()
  t.equal(sqlChannel.hasSubscribers, false, 'the application without telemetry: nothing listens to the statements')
  t.equal(bulkChannel.hasSubscribers, false, 'nor to the batches')
  t.equal((await bare.app.inject({ method: 'GET', url: '/rows/1' })).statusCode, 200)
})
