import { spawn, spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance, type FastifyPluginCallback, type FastifyReply } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { Redis } from 'ioredis'
import { configureApp, mix, views } from '../../lib/index.js'
import { GenericListAPIView, GenericRetrieveAPIView } from '../../lib/generics.js'
import { ConditionalMixin, etagOf } from '../../lib/conditional.js'
import { memoryCache, redisCache, type CacheOptions, type CacheStore } from '../../lib/cache.js'
import { SqliteRepository, type SqlTableOptions } from '../../lib/stores/sql/index.js'
import type { RequestSpec } from '../protocol.js'
import type { Scenario, VariantDefinition } from './types.js'

// Cached reads (docs/cache.md) over SQLite: a retrieve and a 20-item list, uncached, cached in
// process (memoryCache) and in Redis (redisCache), against the same Redis cache written by hand;
// and the conditional GET a cache answers 304 without reading, against the 304 ConditionalMixin
// computes from the database and the 304 @fastify/caching answers from its store of ETags.

const PREFIX = '/cache'

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  price: Type.Number(),
  updated_at: Type.String({ format: 'date-time' })
})
type Item = Static<typeof Item>
const IdParams = Type.Object({ id: Type.Integer() })
const ItemList = Type.Array(Item)

/** The rows of the table: every one is in the list. */
const ROWS = 20
/** The row every retrieve asks for. */
const DETAIL_ID = 7
/** Long enough that no entry expires during a run (the largest jitter takes off 10 %): every request of a hit variant is a hit. */
const TTL_SECONDS = 86_400
/** What the library sends with a cached read of an application without authentication (`cache.shared` unset, no `maxAge`); the hand-written routes send it too. */
const CACHE_CONTROL = 'private, no-cache'
const JSON_TYPE = 'application/json; charset=utf-8'

const TABLE = { table: 'items', columns: ['id', 'name', 'description', 'price', 'updated_at'] } satisfies SqlTableOptions<Item>

/** About 100 characters of text, different for each item. */
const description = (n: number): string =>
  `Item ${n}: ${'a sturdy, well-made thing for everyday use, sold by the piece and shipped within two days; '.repeat(2)}`.slice(0, 100)

const rows = (): Item[] => Array.from({ length: ROWS }, (_, i) => ({
  id: i + 1,
  name: `Item ${i + 1}`,
  description: description(i + 1),
  price: Math.round((4.99 + i * 1.25) * 100) / 100,
  updated_at: new Date(Date.UTC(2026, 0, 1 + i, 10, 0, 0, 500)).toISOString()
}))

/** What every variant of a kind answers, byte for byte (checked at start), and the strong ETag of it (the SHA-1 every 304 variant is asked with). */
const RETRIEVE_BODY = JSON.stringify(rows()[DETAIL_ID - 1])
const LIST_BODY = JSON.stringify(rows())
const RETRIEVE_TAG = etagOf(RETRIEVE_BODY)
const LIST_TAG = etagOf(LIST_BODY)

/** An in-memory SQLite database: the 20 rows (NOT NULL, as the response schema takes no null). */
function openDatabase (): Database.Database {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL, price REAL NOT NULL, updated_at TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO items (id, name, description, price, updated_at) VALUES (?, ?, ?, ?, ?)')
  db.transaction(() => {
    for (const row of rows()) insert.run(row.id, row.name, row.description, row.price, row.updated_at)
  })()
  return db
}

// ---------------------------------------------------------------------------
// Redis: a throwaway server for the process (nothing saved to disk), as test/redis-server.ts starts one

/** Whether `redis-server` is on the PATH. */
const hasRedis = (): boolean => spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' }).stdout.trim() !== ''

async function freePort (): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer()
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
    server.on('error', reject)
  })
}

/** Starts redis-server on `port` of the loopback, stopped (and its folder removed) when this process exits; resolves once it accepts connections. */
async function startRedis (port: number): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-bench-redis-'))
  const child = spawn('redis-server', [
    '--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--protected-mode', 'no', '--loglevel', 'warning'
  ], { stdio: 'ignore' })
  process.once('exit', () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    rmSync(dir, { recursive: true, force: true })
  })
  for (let attempt = 0; attempt < 100; attempt++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited (${child.exitCode}) before it accepted connections`)
    const open = await new Promise<boolean>((resolve) => {
      const socket = net.connect(port, '127.0.0.1')
      socket.once('connect', () => { socket.end(); resolve(true) })
      socket.once('error', () => resolve(false))
    })
    if (open) return
    await sleep(50)
  }
  throw new Error('redis-server did not accept connections within 5 s')
}

// ---------------------------------------------------------------------------
// @fastify/caching, a peer of the benchmarks (benchmarks/package.json)

/** The part of @fastify/caching this scenario uses: the plugin, its `cache` option, `reply.etag`, and its store (abstract-cache's protocol). */
type CachingPlugin = FastifyPluginCallback<{ cache?: unknown }>
type CachingReply = FastifyReply & { etag: (value: string, lifetime?: number) => FastifyReply }
interface CachingStore {
  set: (key: { id: string, segment: string }, value: unknown, ttl: number, done: (error: unknown) => void) => void
}
/** The segment the plugin keeps its tags in by default (its `cacheSegment`). */
const CACHING_SEGMENT = 'fastify-caching'

// Required from benchmarks/ (this file runs from build/benchmarks/scenarios/), by names tsc does not
// follow: the root's `npm run typecheck` runs without the peers installed.
const peers = createRequire(new URL('../../../benchmarks/package.json', import.meta.url))
const loadCaching = (): CachingPlugin => peers('@fastify/caching') as CachingPlugin
/** A store as the plugin makes one when given none: abstract-cache's default, an in-process LRU of 100,000 items (its own dependency). */
const cachingStore = (): CachingStore => (createRequire(peers.resolve('@fastify/caching'))('abstract-cache') as () => CachingStore)()

// ---------------------------------------------------------------------------
// The routes

/** The stores the served routes and the probe's share: the probe's requests fill them. */
interface Stores {
  memory: CacheStore
  /** `undefined` when redis-server is not installed: the Redis routes answer 503 saying so. */
  redis: { client: Redis, store: CacheStore } | undefined
  /** @fastify/caching's store of tags: the one it makes by default. */
  caching: CachingStore
}

const CACHE: CacheOptions = { ttl: TTL_SECONDS, resource: 'items' }

/**
 * Every route of the scenario, on `app`, over `db`: each variant in a context of its own. The contexts
 * are registered, not awaited: each loads after this function, within Fastify's plugin timeout of its
 * own (10 s), which all of them together can outlast under Valgrind (`npm run bench:instructions`).
 */
function registerRoutes (app: FastifyInstance, db: Database.Database, stores: Stores): void {
  const selectOne = db.prepare('SELECT id, name, description, price, updated_at FROM items WHERE id = ?')
  const selectAll = db.prepare('SELECT id, name, description, price, updated_at FROM items ORDER BY id')

  // Hand-written, no cache: the runner's baseline.
  app.register(async (scope) => {
    scope.get<{ Params: { id: number } }>(`${PREFIX}/baseline/items/:id`, { schema: { params: IdParams, response: { 200: Item } } },
      async function getItem (request, reply) {
        const item = selectOne.get(request.params.id) as Item | undefined
        if (item === undefined) return reply.callNotFound()
        return item
      })
  })

  // Hand-written, the same Redis cache by hand: GET the key and send the string; else read, serialize, SET.
  const redis = stores.redis
  app.register(async (scope) => {
    const base = `${PREFIX}/hand-redis/items`
    if (redis === undefined) {
      const missing = async (_request: unknown, reply: FastifyReply) => reply.code(503).send({ message: 'redis-server is not installed: the Redis variants of the cache scenario need it (Debian: apt-get install redis-server)' })
      scope.get(`${base}/:id`, missing)
      scope.get(base, missing)
      return
    }
    const { client } = redis
    const cached = (reply: FastifyReply, body: string, hit: boolean): FastifyReply =>
      reply.header('content-type', JSON_TYPE).header('x-cache', hit ? 'HIT' : 'MISS').header('cache-control', CACHE_CONTROL).send(body)
    scope.get<{ Params: { id: number } }>(`${base}/:id`, { schema: { params: IdParams, response: { 200: Item } } },
      async function getItem (request, reply) {
        const key = `hand:items:${request.params.id}`
        const hit = await client.get(key)
        if (hit !== null) return cached(reply, hit, true)
        const item = selectOne.get(request.params.id) as Item | undefined
        if (item === undefined) return reply.callNotFound()
        const body = reply.serialize(item) as string // the route's compiled serializer writes a string
        await client.set(key, body, 'EX', TTL_SECONDS)
        return cached(reply, body, false)
      })
    scope.get(base, { schema: { response: { 200: ItemList } } }, async function listItems (_request, reply) {
      const key = 'hand:items:list'
      const hit = await client.get(key)
      if (hit !== null) return cached(reply, hit, true)
      const body = reply.serialize(selectAll.all()) as string
      await client.set(key, body, 'EX', TTL_SECONDS)
      return cached(reply, body, false)
    })
  })

  // @fastify/caching on hand-written routes: each 200 stores its ETag (the SHA-1 of the body, as the
  // views'), and its onRequest hook answers 304 to an If-None-Match found in that store.
  app.register(async (scope) => {
    await scope.register(loadCaching(), { cache: stores.caching })
    const base = `${PREFIX}/fastify-caching/items`
    const tagged = (reply: FastifyReply, body: string): FastifyReply =>
      (reply as CachingReply).etag(etagOf(body), TTL_SECONDS * 1000).header('content-type', JSON_TYPE).send(body)
    scope.get<{ Params: { id: number } }>(`${base}/:id`, { schema: { params: IdParams, response: { 200: Item } } },
      async function getItem (request, reply) {
        const item = selectOne.get(request.params.id) as Item | undefined
        if (item === undefined) return reply.callNotFound()
        return tagged(reply, reply.serialize(item) as string)
      })
    scope.get(base, { schema: { response: { 200: ItemList } } }, async function listItems (_request, reply) {
      return tagged(reply, reply.serialize(selectAll.all()) as string)
    })
  })

  // The views: GenericListAPIView and GenericRetrieveAPIView over SqliteRepository, defaults
  // (the response check on); each family with and without ConditionalMixin's etag.
  const repository = new SqliteRepository<Item>(db, TABLE)
  class Items extends GenericListAPIView.with({ responseSchema: Item, repository }) {}
  class ItemDetail extends GenericRetrieveAPIView.with({ responseSchema: Item, detailParams: IdParams, repository }) {}
  class CachedItems extends Items { static override cache = CACHE }
  class CachedItemDetail extends ItemDetail { static override cache = CACHE }
  class TaggedItems extends mix(ConditionalMixin, GenericListAPIView).with({
    responseSchema: Item, repository, conditional: { etag: true }
  }) {}
  class TaggedItemDetail extends mix(ConditionalMixin, GenericRetrieveAPIView).with({
    responseSchema: Item, detailParams: IdParams, repository, conditional: { etag: true }
  }) {}
  class CachedTaggedItems extends TaggedItems { static override cache = CACHE }
  class CachedTaggedItemDetail extends TaggedItemDetail { static override cache = CACHE }

  // A context's name, its views, and its store: none (`undefined`), or `null` when Redis is missing.
  type ViewClass = typeof Items | typeof ItemDetail | typeof TaggedItems | typeof TaggedItemDetail
  type Served = [string, ViewClass[], CacheStore | undefined | null]
  const served: Served[] = [
    ['views', [Items, ItemDetail], undefined],
    ['memory', [CachedItems, CachedItemDetail], stores.memory],
    ['redis', [CachedItems, CachedItemDetail], redis === undefined ? null : redis.store],
    ['etag', [TaggedItems, TaggedItemDetail], undefined],
    ['etag-memory', [CachedTaggedItems, CachedTaggedItemDetail], stores.memory],
    ['etag-redis', [CachedTaggedItems, CachedTaggedItemDetail], redis === undefined ? null : redis.store]
  ]
  for (const [name, classes, store] of served) {
    const prefix = `${PREFIX}/${name}/items`
    app.register(async (scope) => {
      if (store === null) {
        scope.get(`${prefix}/:id`, async (_request, reply) => reply.code(503).send({ message: 'redis-server is not installed' }))
        scope.get(prefix, async (_request, reply) => reply.code(503).send({ message: 'redis-server is not installed' }))
        return
      }
      // configureApp: false: the app around is configured already. A store only where the views cache.
      await scope.register(views, {
        configureApp: false,
        ...(store === undefined ? {} : { cache: store }),
        views: classes.map((view) => ({ view, prefix }))
      })
    })
  }
}

// ---------------------------------------------------------------------------
// The variants

const get = (route: string, kind: 'retrieve' | 'list', tag?: string): RequestSpec => ({
  method: 'GET',
  path: `${PREFIX}/${route}/items${kind === 'retrieve' ? `/${DETAIL_ID}` : ''}`,
  ...(tag === undefined ? {} : { headers: { 'if-none-match': tag }, expectStatus: 304 })
})

/** The 200s of one kind (retrieve or list): uncached view, cached in memory and in Redis, Redis by hand. */
function answers (kind: 'retrieve' | 'list', what: string): VariantDefinition[] {
  const other = kind === 'list' ? { sameBodyAsBaseline: false } : {}
  return [
    { name: `${kind}-views`, label: `${what}: the view, no cache (a SELECT, the response check, serialization)`, request: get('views', kind), ...other },
    { name: `${kind}-memory`, label: `${what}: the same view with static cache = { ttl }, memoryCache(): a hit`, request: get('memory', kind), ...other },
    { name: `${kind}-redis`, label: `${what}: the same view with static cache = { ttl }, redisCache(ioredis client): a hit (one EVALSHA)`, request: get('redis', kind), ...other },
    { name: `${kind}-hand-redis`, label: `${what}: hand-written route, the same ioredis client by hand: GET key, send the string`, request: get('hand-redis', kind), ...other }
  ]
}

/** The 304s of one kind: from the cache (memory, Redis), from the database, from @fastify/caching. */
function notModified (kind: 'retrieve' | 'list', tag: string): VariantDefinition[] {
  const no = { sameBodyAsBaseline: false }
  return [
    { name: `${kind}-304-db`, label: 'If-None-Match, mix(ConditionalMixin, view) with etag, no cache: SELECT, check, serialize, SHA-1, 304', request: get('etag', kind, tag), ...no },
    { name: `${kind}-304-memory`, label: 'the same view with static cache, memoryCache(): the stored answer\'s ETag matches, 304 without a read', request: get('etag-memory', kind, tag), ...no },
    { name: `${kind}-304-redis`, label: 'the same view with static cache, redisCache(): the stored answer\'s ETag matches, 304 without a read', request: get('etag-redis', kind, tag), ...no },
    { name: `${kind}-304-fastify-caching`, label: 'hand-written route under @fastify/caching: its onRequest hook finds the tag in its store, 304', request: get('fastify-caching', kind, tag), ...no }
  ]
}

/** The variants that must answer from the cache: `x-cache: HIT`, checked at start. */
const HITS = ['memory', 'redis', 'hand-redis', 'etag-memory', 'etag-redis']

// ---------------------------------------------------------------------------
// The probe: same answers, real hits

/**
 * Once, as the scenario's routes start, on an app of its own that shares the stores:
 * every 200 of a kind answers the same status, content type and body bytes as the hand-written
 * uncached route; every 304 answers 304 with the ETag of that body; a cached route answers
 * `x-cache: HIT` (it is asked until it does: a miss saves its answer without waiting for the store).
 * Its requests fill the stores, so the served routes hit from their first request.
 */
async function assertSameAnswers (db: Database.Database, stores: Stores): Promise<void> {
  // No plugin timeout: under Valgrind this app takes longer than Fastify's 10 s to load.
  const probe = configureApp(Fastify({ logger: false, pluginTimeout: 0 }))
  probe.register(async (scope) => { registerRoutes(scope, db, stores) })
  await probe.ready()
  try {
    const ask = async (request: RequestSpec) => {
      const { method, path, headers: asked } = request
      const response = await probe.inject({ method, url: path, ...(asked === undefined ? {} : { headers: asked }) })
      const { statusCode: status, body, headers } = response
      const text = `${status} ${JSON.stringify(headers)} ${body.slice(0, 300)}`
      return { status, body, type: headers['content-type'], etag: headers.etag, cache: headers['x-cache'], text }
    }
    /** Asks until the answer comes from the cache (two tries are enough in process; Redis saves after the answer is sent). */
    const hit = async (request: RequestSpec) => {
      for (let attempt = 0; attempt < 50; attempt++) {
        const answer = await ask(request)
        if (answer.cache === 'HIT') return answer
        await sleep(20)
      }
      throw new Error(`cache: ${request.path}${request.headers === undefined ? '' : ' with If-None-Match'} never answered x-cache: HIT`)
    }
    for (const [kind, body, tag] of [['retrieve', RETRIEVE_BODY, RETRIEVE_TAG], ['list', LIST_BODY, LIST_TAG]] as const) {
      // Without redis-server, its routes answer 503 saying so: only a run that asks for them fails.
      const served = (route: string): boolean => stores.redis !== undefined || !route.includes('redis')
      const routes = ['baseline', 'views', 'memory', 'redis', 'hand-redis', 'fastify-caching', 'etag', 'etag-memory', 'etag-redis'].filter(served)
      for (const route of kind === 'list' ? routes.filter((r) => r !== 'baseline') : routes) {
        const first = await ask(get(route, kind))
        const answer = HITS.includes(route) ? await hit(get(route, kind)) : first
        if (answer.status !== 200 || answer.type !== JSON_TYPE || answer.body !== body) {
          throw new Error(`cache: ${route} ${kind} answers otherwise than expected\n  expected: 200 ${JSON_TYPE} ${body.slice(0, 300)}\n  got: ${answer.text}`)
        }
        if ((route.startsWith('etag') || route === 'fastify-caching') && first.etag !== tag) {
          throw new Error(`cache: ${route} ${kind} sent the ETag ${String(first.etag)}, not the SHA-1 ${tag} its 304 variant sends`)
        }
      }
      for (const route of ['etag', 'etag-memory', 'etag-redis', 'fastify-caching'].filter(served)) {
        const request = get(route, kind, tag)
        const answer = HITS.includes(route) ? await hit(request) : await ask(request)
        if (answer.status !== 304 || answer.body !== '') throw new Error(`cache: ${route} ${kind} with If-None-Match answered ${answer.text}`)
      }
    }
  } finally {
    await probe.close()
  }
}

/** GET one row and a 20-item list of SQLite: uncached, cached in process and in Redis, Redis by hand; and the 304 of each way. */
export const cacheScenario: Scenario = {
  name: 'cache',
  description: `GET /:id (id ${DETAIL_ID}) and GET of the ${ROWS} rows of an in-memory SQLite table through generic views over SqliteRepository: ` +
    'uncached, cached (static cache, ttl a day) in memoryCache() and in redisCache() over a throwaway redis-server, every request a hit; ' +
    'a hand-written route caching the same in the same Redis by hand; and conditional GETs answered 304 from the cache, ' +
    'from the database (ConditionalMixin etag, no cache) and by @fastify/caching from its store of ETags',
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  ratioTarget: null,
  async register (app: FastifyInstance) {
    const db = openDatabase()
    let redis: Stores['redis']
    if (hasRedis()) {
      const port = await freePort()
      await startRedis(port)
      const client = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 1 })
      await client.connect()
      process.once('exit', () => { client.disconnect() })
      app.addHook('onClose', async () => { await client.quit() })
      // A timeout far above the default 250 ms: a lookup in flight across a major collection (seconds under
      // Valgrind) or a descheduled process would time out and read the database, and this variant must hit.
      // The timeout changes no work on a request that does not reach it.
      redis = { client, store: redisCache(client, { timeout: 10_000 }) }
    }
    const stores: Stores = { memory: memoryCache(), redis, caching: cachingStore() }
    // @fastify/caching's store holds the two tags from the start, as its onSend hook stores them after a
    // 200 (the probe checks that its 200s send them): its conditional GETs answer 304 from the first.
    for (const tag of [RETRIEVE_TAG, LIST_TAG]) {
      stores.caching.set({ id: tag, segment: CACHING_SEGMENT }, true, TTL_SECONDS * 1000, () => {})
    }
    registerRoutes(app, db, stores)
    // The probe goes on beside the app's start, not awaited: under Valgrind (`npm run bench:instructions`)
    // it takes longer than the 10 s Fastify gives a plugin (or an onReady hook). It is done before anything
    // is measured: natively within a second, during the runner's sanity check; under Valgrind during the
    // warm-up of the first variant. Until then a cached route's first requests may miss (and answer the
    // same, from the database). A difference, or a route that never hits, ends the process.
    assertSameAnswers(db, stores).catch((error: unknown) => {
      console.error(error)
      process.exit(1)
    })
  },
  baseline: {
    name: 'baseline',
    label: 'hand-written Fastify route, no cache: a prepared SELECT ... WHERE id = ?, params and response schemas',
    request: get('baseline', 'retrieve')
  },
  variants: [
    ...answers('retrieve', 'GET /:id'),
    ...answers('list', `GET of ${ROWS} rows`),
    ...notModified('retrieve', RETRIEVE_TAG),
    ...notModified('list', LIST_TAG)
  ],
  comparisons: [
    ...(['retrieve', 'list'] as const).flatMap((kind) => [
      { subject: `${kind}-memory`, reference: `${kind}-views`, label: `${kind}: a memory hit against the uncached view`, informational: true },
      { subject: `${kind}-redis`, reference: `${kind}-views`, label: `${kind}: a Redis hit against the uncached view`, informational: true },
      { subject: `${kind}-redis`, reference: `${kind}-hand-redis`, label: `${kind}: the view's Redis hit against the same cache by hand`, informational: true },
      { subject: `${kind}-304-memory`, reference: `${kind}-304-db`, label: `${kind}: a 304 from the memory cache against one from the database`, informational: true },
      { subject: `${kind}-304-redis`, reference: `${kind}-304-db`, label: `${kind}: a 304 from Redis against one from the database`, informational: true },
      { subject: `${kind}-304-fastify-caching`, reference: `${kind}-304-memory`, label: `${kind}: @fastify/caching's 304 against the view's from the memory cache`, informational: true }
    ])
  ]
}
