/**
 * What a telemetry (issue 51: `prometheusMetrics`, `otelTracing`) costs a retrieve, counted by
 * `npm run bench:instructions`. One scenario per store and telemetry, each served in a process of its own,
 * `telemetry-<store>-<kind>`:
 *
 *   store  `retrieve`: GET /items/:id over a 20-item in-memory repository (the `peers-retrieve` view);
 *          `sqlite`: GET /:id of a 1,000-row SQLite file (the `sqlite-retrieve` view), one SELECT.
 *   kind   `prometheus`: `prometheusMetrics()`, a registry of its own;
 *          `otel-api`: `otelTracing()` without an SDK (the API's no-op tracer and context manager);
 *          `otel-sdk`: `otelTracing()` with a BasicTracerProvider and an AsyncLocalStorageContextManager
 *            registered globally, a BatchSpanProcessor over an exporter that discards the spans (an
 *            application's setup, examples/telemetry.ts, less the export);
 *          `otel-sdk-noop`: the same with a NoopSpanProcessor: spans made and ended, nothing processes them.
 *
 * Each has the hand-written route (`baseline`), the view with no telemetry (`views`) and the same view
 * observed (`views-<kind>`). A telemetry subscribes to the library's SQL channel for the whole process and
 * the SDK sets OpenTelemetry's globals, so these scenarios are listed only in a process that serves one of
 * them alone: bench:instructions names it (`instructions-child.js <scenario> ...`), or `npm run bench` with
 * BENCH_SCENARIOS naming it and nothing else. The default load run neither registers them nor pays for them.
 * On SQLite the in-process `views` is therefore not "off": its statements are published to the telemetry's
 * subscriber (only the action's own are traced or, for Prometheus, all of them are timed); `sqlite-retrieve`'s
 * `view` is the same route with no subscriber.
 */
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import type { SpanExporter, SpanProcessor } from '@opentelemetry/sdk-trace-base'
import { mix, views } from '../../lib/index.js'
import type { ViewClass } from '../../lib/types.js'
import type { Telemetry } from '../../lib/routes/telemetry.js'
import {
  AsyncGenericCreateAPIView, AsyncGenericListAPIView, AsyncGenericRetrieveAPIView,
  type AsyncRepository, type Criteria
} from '../../lib/generics.js'
import { sqliteRetrieveRoutes } from './sqlite.js'
import type { Scenario } from './types.js'

type Store = 'retrieve' | 'sqlite'
type Kind = 'prometheus' | 'otel-api' | 'otel-sdk' | 'otel-sdk-noop'
const KINDS: readonly Kind[] = ['prometheus', 'otel-api', 'otel-sdk', 'otel-sdk-noop']
const KIND_LABELS: Record<Kind, string> = {
  prometheus: 'prometheusMetrics() (prom-client, a registry of its own)',
  'otel-api': 'otelTracing() with no OpenTelemetry SDK: the API\'s no-op tracer and context manager',
  'otel-sdk': 'otelTracing() with a global BasicTracerProvider (BatchSpanProcessor over an exporter that discards) and AsyncLocalStorageContextManager',
  'otel-sdk-noop': 'otelTracing() with a global BasicTracerProvider (NoopSpanProcessor) and AsyncLocalStorageContextManager'
}

/** The telemetry a variant is observed by; the SDK's globals set first where it needs them (this process serves this scenario alone). */
async function telemetryOf (kind: Kind): Promise<Telemetry> {
  if (kind === 'prometheus') {
    const { prometheusMetrics } = await import('../../lib/prometheus.js')
    return prometheusMetrics()
  }
  const { otelTracing } = await import('../../lib/opentelemetry.js')
  if (kind === 'otel-sdk' || kind === 'otel-sdk-noop') {
    const { context, trace } = await import('@opentelemetry/api')
    const { AsyncLocalStorageContextManager } = await import('@opentelemetry/context-async-hooks')
    const { BasicTracerProvider, BatchSpanProcessor, NoopSpanProcessor } = await import('@opentelemetry/sdk-trace-base')
    // Every batch accepted and dropped: ExportResultCode.SUCCESS is 0.
    const discard: SpanExporter = { export (_spans, done) { done({ code: 0 }) }, async shutdown () {} }
    const processor: SpanProcessor = kind === 'otel-sdk' ? new BatchSpanProcessor(discard) : new NoopSpanProcessor()
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [processor] }))
  }
  return otelTracing()
}

// ---------------------------------------------------------------------------
// The in-memory retrieve: the peers-retrieve scenario's item, store and view.

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String({ format: 'date-time' })
})
type Item = Static<typeof Item>
const ItemIn = Type.Object(
  { name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }), tags: Type.Array(Type.String()) }
)
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const DETAIL_ID = 7
const ITEMS: Item[] = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `Item ${i + 1}`,
  price: Math.round((4.99 + i * 1.25) * 100) / 100,
  tags: ['catalog', `shelf-${i % 4}`],
  updated_at: new Date(Date.UTC(2026, 0, 1 + i, 10, 0, 0, 500)).toISOString()
}))
const get = async (id: number): Promise<Item | null> => ITEMS[id - 1] ?? null
const unused = async (): Promise<never> => { throw new Error('not used by the telemetry scenarios') }
const repository: AsyncRepository<Item> = {
  list: async () => ITEMS,
  get: (criteria: Criteria) => get(criteria.id as number),
  create: unused,
  count: unused,
  update: unused,
  delete: unused
}

class MemoryItems extends mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericRetrieveAPIView)<{
  item: Item,
  create: Static<typeof ItemIn>,
  params: Static<typeof IdParams>
}> {
  static override responseSchema = Item
  static override createSchema = ItemIn
  static override detailParams = IdParams
  static override repository = repository
}

async function registerMemory (app: FastifyInstance, root: string, kind: Kind): Promise<void> {
  app.get<{ Params: Static<typeof IdParams> }>(`${root}/fastify/items/:id`, { schema: { params: IdParams, response: { 200: Item } } },
    async function getItem (request, reply) {
      const item = await get(request.params.id)
      if (item === null) return reply.callNotFound()
      return item
    })
  await registerViews(app, kind, MemoryItems, `${root}/view/items`, `${root}/observed/items`)
}

// ---------------------------------------------------------------------------
// The SQLite retrieve: the sqlite-retrieve scenario's table, hand-written route and view.

async function registerSqlite (app: FastifyInstance, root: string, kind: Kind): Promise<void> {
  const { Items } = sqliteRetrieveRoutes(app, 'telemetry', root)
  await registerViews(app, kind, Items, `${root}/view`, `${root}/observed`)
}

/** The view twice, each in a context of its own: as it is, and observed by the telemetry. */
async function registerViews (
  app: FastifyInstance, kind: Kind, view: ViewClass, plain: string, observed: string
): Promise<void> {
  // configureApp: false: the benchmark's app is configured once, by the process that serves it.
  await app.register(async (scope) => {
    await scope.register(views, { configureApp: false, views: [{ view, prefix: plain }] })
  })
  const telemetry = await telemetryOf(kind)
  await app.register(async (scope) => {
    await scope.register(views, { configureApp: false, telemetry, views: [{ view, prefix: observed }] })
  })
}

// ---------------------------------------------------------------------------

function telemetryScenario (store: Store, kind: Kind): Scenario {
  const name = `telemetry-${store}-${kind}`
  const root = `/${name}`
  const memory = store === 'retrieve'
  const url = (variant: string): string => memory ? `${root}/${variant}/items/${DETAIL_ID}` : `${root}/${variant}/500`
  return {
    name,
    description: (memory
      ? `GET /items/:id of item ${DETAIL_ID} of a 20-item in-memory repository (the peers-retrieve view)`
      : 'GET /:id of one row of a 1,000-row SQLite table (WAL file), the example API\'s Item (the sqlite-retrieve view)') +
      `, observed by ${KIND_LABELS[kind]}; served alone (bench:instructions)`,
    rounds: 4,
    duration: 1.5,
    warmup: 1,
    register: (app) => memory ? registerMemory(app, root, kind) : registerSqlite(app, root, kind),
    baseline: {
      name: 'baseline',
      label: memory ? 'hand-written Fastify route, TypeBox schemas (params and response)' : 'hand-written Fastify route running a prepared SELECT ... WHERE id = ?',
      request: { method: 'GET', path: url('fastify') }
    },
    variants: [
      {
        name: 'views',
        label: memory ? 'the generic view, defaults, no telemetry' : 'GenericRetrieveAPIView over SqliteRepository, no telemetry on the route (the process\'s SQL channel has the telemetry\'s subscriber)',
        request: { method: 'GET', path: url('view') }
      },
      { name: `views-${kind}`, label: `the same view observed by ${KIND_LABELS[kind]}`, request: { method: 'GET', path: url('observed') } }
    ],
    // What telemetry costs is reported, not judged.
    ratioTarget: null
  }
}

/** The names of the scenarios this process was asked to serve, when it serves one alone. */
function servedAlone (): string | undefined {
  // instructions-child.js <scenario> <variant>...; the load server is forked without arguments.
  if (process.argv[1]?.endsWith('instructions-child.js') === true) return process.argv[2]
  const named = (process.env.BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '')
  return named.length === 1 ? named[0] : undefined
}

const alone = servedAlone()
/** The telemetry scenarios: in a process that serves one of them alone, that one; otherwise none. */
export const telemetryScenarios: Scenario[] = (['retrieve', 'sqlite'] as const)
  .flatMap((store) => KINDS.map((kind) => telemetryScenario(store, kind)))
  .filter((scenario) => scenario.name === alone)
