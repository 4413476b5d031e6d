import { mkdirSync } from 'node:fs'
import path from 'node:path'
import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import views, { APIView, Events, Get, configureApp, mix } from 'fastify-views'
import type { EventStreamContext } from 'fastify-views/types'
import { problemFrameworkErrors } from 'fastify-views/errors'
import { AsyncGenericViewSet, PaginationFilter, SparseFieldsMixin, type AsyncBulkRepository, type AsyncRepository } from 'fastify-views/generics'
import { AsyncBulkAPIViewSet } from 'fastify-views/bulk'
import { ConditionalMixin } from 'fastify-views/conditional'
import { AsyncSqliteRepository, PostgresRepository, type SqlTableOptions } from 'fastify-views/sql'
import { swaggerOptions } from 'fastify-views/swagger'
import { memoryCache, redisCache, type CacheStore } from 'fastify-views/cache'
import { ChangeFeed } from 'fastify-views/streams'
import type { ExampleTelemetry } from './telemetry.js'

export const Item = Type.Object({
  id: Type.Integer({ description: 'Assigned by the server.' }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  price: Type.Number({ minimum: 0, description: 'In the shop\'s currency.' }),
  updated_at: Type.String({ format: 'date-time', description: 'Set by the server on every change; the Last-Modified of the item.' })
}, { $id: 'Item', examples: [{ id: 1, name: 'Desk lamp', price: 24.5, updated_at: '2026-01-01T10:00:00.000Z' }] })
type Item = Static<typeof Item>
export const ItemIn = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  price: Type.Number({ minimum: 0 })
}, { $id: 'ItemIn', examples: [{ name: 'Desk lamp', price: 24.5 }] })
const ItemPatch = Type.Partial(ItemIn, { $id: 'ItemPatch' })
const ItemParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) })
const ItemUpdate = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }), ...ItemIn.properties }, { $id: 'ItemUpdate' })

/** GET /items: page / page_size, a `name` filter, `sort` on name and price. */
// Made with .with(), the field names keep their literal types: the view checks them against its rows.
class ItemFilter extends PaginationFilter.with({ fields: { name: Type.String() }, orderingFields: ['name', 'price'], maxPageSize: 100, defaultPageSize: 20 }) {}

// `satisfies` keeps the column names checked against the item (a misspelt one is a compile error).
const TABLE = { table: 'items', columns: ['id', 'name', 'price', 'updated_at'], touchColumn: 'updated_at' } satisfies SqlTableOptions<Item>

/** One change of an item, as the database records it: `seq` grows with each, in the order they commit. */
type ItemChange = { seq: number, item_id: number } & (
  | { kind: 'created' | 'updated', name: string, price: number, updated_at: string }
  | { kind: 'deleted', name: null, price: null, updated_at: null })
const CHANGES = { table: 'item_changes', columns: ['seq', 'item_id', 'kind', 'name', 'price', 'updated_at'], idColumn: 'seq' } satisfies SqlTableOptions<ItemChange>
const ItemId = Type.Object({ id: Type.Integer() }, { $id: 'ItemId' })

// Triggers record every write of an item (a view's, a bulk write's, another program's) in the same
// transaction, so the log and the table never disagree. SQLite commits one write at a time, so `seq`
// follows the commits.
const SQLITE_CHANGES = `
  CREATE TABLE IF NOT EXISTS item_changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, item_id INTEGER NOT NULL,
    kind TEXT NOT NULL, name TEXT, price REAL, updated_at TEXT);
  CREATE TRIGGER IF NOT EXISTS items_created AFTER INSERT ON items BEGIN
    INSERT INTO item_changes (item_id, kind, name, price, updated_at) VALUES (NEW.id, 'created', NEW.name, NEW.price, NEW.updated_at); END;
  CREATE TRIGGER IF NOT EXISTS items_updated AFTER UPDATE ON items BEGIN
    INSERT INTO item_changes (item_id, kind, name, price, updated_at) VALUES (NEW.id, 'updated', NEW.name, NEW.price, NEW.updated_at); END;
  CREATE TRIGGER IF NOT EXISTS items_deleted AFTER DELETE ON items BEGIN
    INSERT INTO item_changes (item_id, kind) VALUES (OLD.id, 'deleted'); END;`

// PostgreSQL numbers rows as they are inserted, not as they commit: the trigger takes a lock held to the
// commit, so that writes of items record their changes one after the other and `seq` follows the commits.
const POSTGRES_CHANGES = `
  CREATE TABLE IF NOT EXISTS item_changes (seq INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, item_id INTEGER NOT NULL,
    kind TEXT NOT NULL, name TEXT, price DOUBLE PRECISION, updated_at TEXT);
  CREATE OR REPLACE FUNCTION item_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
    PERFORM pg_advisory_xact_lock(20261129);
    IF TG_OP = 'DELETE' THEN
      INSERT INTO item_changes (item_id, kind) VALUES (OLD.id, 'deleted'); RETURN OLD;
    END IF;
    INSERT INTO item_changes (item_id, kind, name, price, updated_at)
      VALUES (NEW.id, CASE TG_OP WHEN 'INSERT' THEN 'created' ELSE 'updated' END, NEW.name, NEW.price, NEW.updated_at);
    RETURN NEW;
  END $$;
  CREATE OR REPLACE TRIGGER items_changed AFTER INSERT OR UPDATE OR DELETE ON items FOR EACH ROW EXECUTE FUNCTION item_changed();`

/** `sqlite:<path>` (or nothing: `./data/shop.db`), or a `postgres://` URL. */
export interface StoreOptions {
  databaseUrl?: string
  /** `memory` (this process) or a `redis://` URL (every instance that uses it): cache the item reads; unset, nothing is cached. */
  cacheUrl?: string
  /** On SQLite, how long a call waits in all for another process's lock before it answers 503 (ms; the repository's default, 5000). */
  sqliteLockTimeout?: number
  /** What observes the API (examples/telemetry.ts): telemetries, the metrics `GET /metrics` answers, `@fastify/otel`'s request spans. */
  telemetry?: Partial<ExampleTelemetry>
}

/** The example's items through the asynchronous protocol, whichever store holds them. */
type ItemRepository = AsyncRepository<Item> & AsyncBulkRepository<Item>

interface Store { repository: ItemRepository, changes: AsyncRepository<ItemChange>, close: () => Promise<void> | void }

/**
 * Node's own SQLite driver (`node:sqlite`), which needs no native build. Loaded here rather than
 * imported, so that an older Node gets this message rather than an unknown module.
 */
function sqlite (): typeof import('node:sqlite') {
  // Typed as always there; an older Node has no such module, or no getBuiltinModule at all (before 20.16).
  const module: typeof import('node:sqlite') | undefined = typeof process.getBuiltinModule === 'function' ? process.getBuiltinModule('node:sqlite') : undefined
  if (module === undefined) throw new Error(`The example's SQLite store needs node:sqlite, in Node.js 22.13 or later; this is Node.js ${process.version}`)
  return module
}

async function openStore ({ databaseUrl, sqliteLockTimeout }: StoreOptions): Promise<Store> {
  if (databaseUrl !== undefined && /^postgres(ql)?:\/\//.test(databaseUrl)) {
    const pool = new pg.Pool({ connectionString: databaseUrl })
    pool.on('error', () => {})
    // One instance at a time: instances started together would otherwise create the same objects at once.
    await pool.query(`BEGIN; SELECT pg_advisory_xact_lock(20261128);
      CREATE TABLE IF NOT EXISTS items (
      id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
      name TEXT NOT NULL, price DOUBLE PRECISION NOT NULL CHECK (price >= 0), updated_at TEXT NOT NULL);
      ${POSTGRES_CHANGES} COMMIT`)
    return {
      repository: new PostgresRepository<Item>(pool, TABLE),
      changes: new PostgresRepository<ItemChange>(pool, CHANGES),
      close: () => pool.end()
    }
  }
  if (databaseUrl !== undefined && !databaseUrl.startsWith('sqlite:')) throw new Error('DATABASE_URL must be sqlite:<path> or postgres://...')
  const file = databaseUrl === undefined ? './data/shop.db' : databaseUrl.slice('sqlite:'.length)
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  // Before the server listens, the driver's blocking wait for a lock (five seconds) is harmless:
  // processes started together on one new file take turns turning on WAL and creating the table.
  const db = new (sqlite().DatabaseSync)(file, { timeout: 5000 })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec(`CREATE TABLE IF NOT EXISTS items (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL CHECK (price >= 0), updated_at TEXT NOT NULL); ${SQLITE_CHANGES}`)
  // From here on, a call that meets another process's lock waits off the event loop and runs
  // again (the repository sets the connection's busy timeout to 0); one class body serves both
  // stores through the async protocol (docs/deployment.md).
  const repository = new AsyncSqliteRepository<Item>(db, TABLE, { lockTimeout: sqliteLockTimeout })
  const changes = new AsyncSqliteRepository<ItemChange>(db, CHANGES, { lockTimeout: sqliteLockTimeout })
  return { repository, changes, close: () => { db.close() } }
}

/**
 * `/items`: every CRUD verb and the four bulk verbs on `/items/bulk` (PATCH and DELETE
 * select by `name`), with ETag and Last-Modified on reads, 304 and 412, and `?fields=` on reads.
 */
function itemsView (repository: ItemRepository, changes: ChangeFeed<ItemChange>, cached: boolean) {
  // Every schema is given once: the types of the actions (getLocation's item below) and the
  // field lastModifiedField may name are read from them.
  return class Items extends mix(ConditionalMixin, SparseFieldsMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet).with({
    responseSchema: Item,
    createSchema: ItemIn,
    updateSchema: ItemIn,
    partialUpdateSchema: ItemPatch,
    bulkUpdateSchema: ItemUpdate,
    detailParams: ItemParams,
    filter: ItemFilter,
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository
  }, {
    getLocation (item) { return `/items/${item.id}` }
  }) {
    static override apiDescription = 'The shop\'s items. Reads carry an ETag and a Last-Modified; send If-Match with a write to change only what you read.'
    static override maxBatchSize = 1000
    // With a cache store (CACHE_URL): reads kept a minute, invalidated by every write, on every
    // instance sharing the store; creates safe to retry with Idempotency-Key (docs/cache.md).
    static override cache = cached ? { ttl: 60, idempotency: true } : undefined
    // `Accept: application/x-ndjson` (or `application/json; stream=array`) on /items: every item, read a
    // thousand at a time, in the list's order and filters (docs/streaming.md).
    static override listStream = true

    /** GET /items/events: each change of an item as it commits; a client that reconnects gets what it missed. */
    @Events('/events', {
      events: { created: Item, updated: Item, deleted: ItemId },
      summary: 'Item changes, live',
      operationId: 'streamItemChanges',
      description: 'Server-sent events: `created` and `updated` carry the item, `deleted` its id. Reconnect with Last-Event-ID to receive what was missed.'
    })
    events (_request: unknown, stream: EventStreamContext) {
      return itemEvents(changes.follow({ after: stream.lastEventId, signal: stream.signal }), changes)
    }
  }
}

/** The change log's rows as events, each with its `seq` as id. */
async function * itemEvents (rows: AsyncIterable<ItemChange>, changes: ChangeFeed<ItemChange>) {
  for await (const row of rows) {
    const id = changes.idOf(row)
    if (row.kind === 'deleted') yield { event: row.kind, id, data: { id: row.item_id } }
    else {
      const { name, price, updated_at: updatedAt } = row
      yield { event: row.kind, id, data: { id: row.item_id, name, price, updated_at: updatedAt } }
    }
  }
}

/** `/health`: a plain APIView with one custom route. */
export class Health extends APIView {
  static override apiDescription = 'Whether the server is up, for load balancers and orchestrators.'
  @Get('/', { responseSchema: Type.Object({ status: Type.Literal('ok') }), summary: 'Liveness probe', description: 'Answers 200 while the process serves requests.' })
  health () { return { status: 'ok' as const } }
}

/**
 * How long the server gives a client (ms), so that one that trickles its headers or its body, or
 * holds an idle connection, cannot keep a socket forever. Why these values: docs/deployment.md#time-outs.
 */
export const TIMEOUTS = {
  /** The request line and headers must have arrived this long after the request began: 408 otherwise. */
  headersTimeout: 10_000,
  /** The whole request, body included: 408 otherwise. Fastify's default is 0, no limit. */
  requestTimeout: 30_000,
  /** How often Node checks the two above: a slow client is cut at most this much later. */
  connectionsCheckingInterval: 1_000,
  /** An idle keep-alive connection is closed after this (Node adds one second); longer than a balancer's idle time-out. */
  keepAliveTimeout: 72_000
} as const

/**
 * Builds the example API: `/items` on the chosen store, `/health`, Swagger UI at `/docs`. Fastify's
 * options override the example's (`requestTimeout`, `keepAliveTimeout`, and `http`, which replaces
 * both of `headersTimeout` and `connectionsCheckingInterval`).
 */
export async function buildApp (options: FastifyHttpOptions<Server> & StoreOptions = {}): Promise<FastifyInstance> {
  const { databaseUrl, sqliteLockTimeout, cacheUrl, telemetry, ...fastifyOptions } = options
  if (cacheUrl !== undefined && cacheUrl !== 'memory' && !/^rediss?:\/\//.test(cacheUrl)) throw new Error('CACHE_URL must be memory or redis://...')
  const store = await openStore({ databaseUrl, sqliteLockTimeout })
  const app = Fastify({
    bodyLimit: 4 * 1024 * 1024,
    frameworkErrors: problemFrameworkErrors,
    requestTimeout: TIMEOUTS.requestTimeout,
    keepAliveTimeout: TIMEOUTS.keepAliveTimeout,
    // Node's own settings: Fastify hands `http` to http.createServer.
    http: {
      headersTimeout: TIMEOUTS.headersTimeout,
      connectionsCheckingInterval: TIMEOUTS.connectionsCheckingInterval
    },
    ...fastifyOptions
  })
  // First, so that every route answers problem+json whatever is registered after.
  configureApp(app, { cache: await cacheStore(app, cacheUrl), telemetry: telemetry?.telemetry })
  // The request's span (`@fastify/otel`), the parent of the views' own, starts before any other hook.
  if (telemetry?.http !== undefined) await app.register(telemetry.http.plugin())
  app.addHook('onClose', async () => { await store.close() })
  await app.register(swagger, swaggerOptions({
    info: { title: 'Shop', version: '1.0.0', description: 'The fastify-views example API.', license: { name: 'MIT', identifier: 'MIT' } },
    // Relative: the document is right whatever host and port the server listens on.
    servers: [{ url: '/', description: 'This server' }],
    // The example has no authentication: every operation is public, and says so.
    security: []
  }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  // The feed reads the log once a second for every client of /items/events, and at once after a write through this instance.
  const changes = new ChangeFeed(store.changes, { key: 'seq' })
  app.addHook('onResponse', (request, reply, done) => {
    if (request.method !== 'GET' && request.method !== 'HEAD' && reply.statusCode < 400) changes.notify()
    done()
  })
  const { metrics } = telemetry ?? {}
  // Not an operation of the API: left out of its document.
  if (metrics !== undefined) app.get('/metrics', { schema: { hide: true } }, metrics.handler)
  await app.register(views, { views: [{ view: itemsView(store.repository, changes, cacheUrl !== undefined), prefix: '/items' }, { view: Health, prefix: '/health' }] })
  return app
}

/** The example without a database file or a cache: what `fastify-views openapi` loads to write its document (docs/openapi.md). */
export async function documentedApp (): Promise<FastifyInstance> {
  return await buildApp({ databaseUrl: 'sqlite::memory:', logger: false })
}

/**
 * The cache store `CACHE_URL` names: `memory`, this process's own; a `redis://` URL, shared by every
 * instance that uses it. While Redis does not answer, reads are served uncached and writes of items
 * are refused with a 503, so that no instance serves what another's write made stale (docs/cache.md).
 */
async function cacheStore (app: FastifyInstance, cacheUrl: string | undefined): Promise<CacheStore | undefined> {
  if (cacheUrl === undefined) return undefined
  if (cacheUrl === 'memory') return memoryCache()
  const { Redis } = await import('ioredis')
  const redis = new Redis(cacheUrl, { connectTimeout: 500, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  redis.on('error', (error) => { app.log.debug({ err: error }, 'redis') })
  // A client that is not connected refuses quit() (no offline queue), and would go on reconnecting.
  app.addHook('onClose', async () => { await redis.quit().catch(() => { redis.disconnect() }) })
  // Served once connected, or after a second without: until then every read is served uncached
  // and every write of an item refused (503), as while Redis is down.
  await new Promise((resolve) => { redis.once('ready', resolve); setTimeout(resolve, 1000).unref() })
  return redisCache(redis)
}
