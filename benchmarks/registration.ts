/**
 * Registration cost: the time to register N resources and reach `ready()`, and the heap
 * they hold once registered (after a full GC), for a generic viewset per resource
 * (six CRUD routes with their schemas, OpenAPI included) against the same routes
 * written by hand with the same schemas. Each way runs in a fresh process, several
 * times, and the median is reported.
 *
 *   node --expose-gc build/benchmarks/registration.js [resources[,resources...]] [repetitions]
 *
 * Several sizes (`10,200,1000`) add a table of how time and heap grow. `npm run bench` runs
 * it after the load scenarios, for BENCH_REGISTRATION sizes (default 10, 200 and 1,000
 * resources), BENCH_REGISTRATION_REPS times each (default 3); BENCH_SCENARIOS=registration alone.
 */
import { execFileSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { views } from '../lib/index.js'
import type { ViewEntry } from '../lib/types.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { fixed, median, table } from './stats.js'

type Way = 'views' | 'fastify' | 'empty'

const resourceSchema = (n: number) => ({
  item: Type.Object({ id: Type.Integer(), name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }), tags: Type.Array(Type.String()), updated_at: Type.String({ format: 'date-time' }) }, { $id: `Resource${n}` }),
  input: Type.Object(
    { name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }), tags: Type.Array(Type.String()) }
  ),
  params: Type.Object({ id: Type.Integer({ minimum: 1 }) })
})

async function build (way: Way, resources: number): Promise<FastifyInstance> {
  const app = Fastify({ logger: false })
  if (way === 'views') {
    const registrations: ViewEntry[] = []
    for (let n = 0; n < resources; n++) {
      const { item, input, params } = resourceSchema(n)
      class Resource extends AsyncGenericViewSet<{
        item: Static<typeof item>,
        create: Static<typeof input>,
        update: Static<typeof input>,
        params: Static<typeof params>
      }> {
        static override responseSchema = item
        static override createSchema = input
        static override updateSchema = input
        static override detailParams = params
        static override repository = asyncRepository<Static<typeof item>, MemoryRepository<Static<typeof item>>>(new MemoryRepository<Static<typeof item>>({ touchField: 'updated_at' }))
      }
      registrations.push({ view: Resource, prefix: `/r${n}` })
    }
    await app.register(views, { views: registrations })
  } else if (way === 'fastify') {
    for (let n = 0; n < resources; n++) {
      const { item, input, params } = resourceSchema(n)
      const store = new MemoryRepository<Static<typeof item>>({ touchField: 'updated_at' })
      const detail = { params, response: { 200: item } }
      app.get(`/r${n}`, { schema: { response: { 200: Type.Array(item) } } }, async () => store.list({}, { orderBy: [] }, {}))
      app.post<{ Body: Static<typeof input> }>(`/r${n}`, { schema: { body: input, response: { 201: item } } }, async (request, reply) => reply.code(201).send(store.create(request.body, {})))
      app.get<{ Params: Static<typeof params> }>(`/r${n}/:id`, { schema: detail }, async (request) => store.get({ id: request.params.id }, {}))
      app.put<{ Params: Static<typeof params>, Body: Static<typeof input> }>(`/r${n}/:id`, { schema: { ...detail, body: input } }, async (request) => store.update({ id: request.params.id }, request.body, {}))
      app.patch<{ Params: Static<typeof params>, Body: Partial<Static<typeof input>> }>(`/r${n}/:id`, { schema: { ...detail, body: Type.Partial(input) } }, async (request) => store.update({ id: request.params.id }, request.body, {}))
      app.delete<{ Params: Static<typeof params> }>(`/r${n}/:id`, { schema: { params } }, async (request, reply) => reply.code(204).send(store.delete({ id: request.params.id }, {}) ? undefined : undefined))
    }
  }
  await app.ready()
  return app
}

/** One measurement in this process: prints `{ ms, heapMB }` as JSON. */
async function measureOnce (way: Way, resources: number): Promise<void> {
  const gc = (globalThis as { gc?: () => void }).gc!
  gc()
  const heapBefore = process.memoryUsage().heapUsed
  const started = process.hrtime.bigint()
  const app = await build(way, resources)
  const ms = Number(process.hrtime.bigint() - started) / 1e6
  gc()
  const heapMB = (process.memoryUsage().heapUsed - heapBefore) / 2 ** 20
  console.log(JSON.stringify({ ms, heapMB }))
  await app.close()
}

interface Sample { ms: number, heapMB: number }
/** The medians of one size: register + ready time and heap held, per way. */
type SizeResult = Record<Way, Sample>

/** Runs each way `repetitions` times in fresh processes, interleaved, and prints the medians. */
export function reportRegistration (resources = 200, repetitions = 5): SizeResult {
  const script = fileURLToPath(import.meta.url)
  const results: Record<Way, Sample[]> = { views: [], fastify: [], empty: [] }
  for (let r = 0; r < repetitions; r++) {
    for (const way of ['empty', 'fastify', 'views'] as Way[]) {
      // A fresh process per measurement: nothing compiled or cached by an earlier one.
      const out = execFileSync(process.execPath, ['--expose-gc', script, 'measure', way, String(resources)], { encoding: 'utf8', env: { ...process.env, NODE_OPTIONS: '' } })
      results[way].push(JSON.parse(out.trim().split('\n').pop()!) as Sample)
    }
  }
  const ms = (way: Way): number => median(results[way].map((x) => x.ms))
  const heap = (way: Way): number => median(results[way].map((x) => x.heapMB))
  console.log(`\n## Registration: ${resources} resources, six CRUD routes each (${resources * 6} routes), median of ${repetitions} fresh processes\n`)
  console.log(table(['way', 'register + ready (ms)', 'heap held (MB)', 'ms per route', 'kB per route'], [
    ['fastify-views: one AsyncGenericViewSet per resource (OpenAPI kept)', fixed(ms('views'), 0), fixed(heap('views'), 1), fixed(ms('views') / (resources * 6), 3), fixed(heap('views') * 1024 / (resources * 6), 1)],
    ['hand-written: six routes per resource, the same schemas', fixed(ms('fastify'), 0), fixed(heap('fastify'), 1), fixed(ms('fastify') / (resources * 6), 3), fixed(heap('fastify') * 1024 / (resources * 6), 1)],
    ['an empty Fastify app (the floor)', fixed(ms('empty'), 0), fixed(heap('empty'), 1), '', '']
  ], [false, true, true, true, true]))
  const of = (way: Way): Sample => ({ ms: ms(way), heapMB: heap(way) })
  return { views: of('views'), fastify: of('fastify'), empty: of('empty') }
}

/**
 * The registration measurement at several sizes (10, 200 and 1,000 resources by default),
 * each as `reportRegistration` prints it, then how time and heap grow with the size: the
 * views against the hand-written routes, and the cost of each route past the empty app.
 */
export function reportRegistrationGrowth (sizes: number[], repetitions = 5): void {
  const rows: string[][] = []
  for (const resources of sizes) {
    const r = reportRegistration(resources, repetitions)
    const routes = resources * 6
    const perRoute = (s: Sample): string => `${fixed((s.ms - r.empty.ms) / routes, 3)} ms, ${fixed((s.heapMB - r.empty.heapMB) * 1024 / routes, 1)} kB`
    rows.push([
      String(resources), String(routes),
      fixed(r.views.ms, 0), fixed(r.fastify.ms, 0), `${fixed(r.views.ms / r.fastify.ms, 2)}×`,
      fixed(r.views.heapMB, 1), fixed(r.fastify.heapMB, 1), `${fixed(r.views.heapMB / r.fastify.heapMB, 2)}×`,
      perRoute(r.views), perRoute(r.fastify)
    ])
  }
  if (sizes.length < 2) return
  console.log(`\n## Registration growth: median of ${repetitions} fresh processes per size and way; per route: past the empty app\n`)
  console.log(table(
    ['resources', 'routes', 'views ms', 'hand-written ms', 'time ×', 'views heap MB', 'hand-written heap MB', 'heap ×', 'views per route', 'hand-written per route'],
    rows,
    [true, true, true, true, true, true, true, true, true, true]
  ))
}

/** `10,200,1000` -> `[10, 200, 1000]`. */
export function registrationSizes (text: string): number[] {
  const sizes = text.split(',').map((s) => Number(s.trim()))
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n <= 0)) throw new Error(`registration sizes must be positive integers, comma-separated, got ${JSON.stringify(text)}`)
  return sizes
}

if (process.argv[2] === 'measure') {
  await measureOnce(process.argv[3] as Way, Number(process.argv[4]))
} else if (process.argv[1] === fileURLToPath(import.meta.url)) {
  reportRegistrationGrowth(registrationSizes(process.argv[2] ?? '200'), Number(process.argv[3] ?? 5))
}
