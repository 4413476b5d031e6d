import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { mix, views } from '../../lib/index.js'
import { asyncRepository, AsyncGenericRetrieveAPIView, GenericCreateAPIView, GenericRetrieveAPIView } from '../../lib/generics.js'
import { GenericBulkCreateAPIView } from '../../lib/bulk.js'
import { ConditionalMixin } from '../../lib/conditional.js'
import { Item as ExampleItem } from '../../examples/app.js'
import { SqliteRepository, type SqlTableOptions } from '../../lib/stores/sql/index.js'
import type { ViewClass } from '../../lib/types.js'
import type { BatchScenario, Scenario } from './types.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
type Item = Static<typeof Item>
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
/** The example API's path parameters. */
const ExampleParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) })
type ExampleItem = Static<typeof ExampleItem>
const BATCH = 1000
const TABLE = { table: 'items', columns: ['id', 'name', 'price'] } satisfies SqlTableOptions<Item>

/**
 * A SQLite file as the example API uses one (WAL, synchronous = NORMAL), in the
 * system's temporary folder, removed when the benchmark server exits.
 */
function openDatabase (name: string): Database.Database {
  const file = path.join(tmpdir(), `fastify-views-bench-${name}-${process.pid}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price REAL NOT NULL CHECK (price >= 0))')
  process.once('exit', () => { db.close(); for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true }) })
  return db
}

/** `count` items with distinct names, so no item clashes with another. */
const bulkBody = (count: number): string => JSON.stringify(Array.from({ length: count }, (_, i) => ({ name: `Item ${i + 1}`, price: Math.round((1 + i * 0.37) * 100) / 100 })))
const BULK_BODY = bulkBody(BATCH)
const PREFIX = '/sqlite-bulk'

/**
 * The routes of a SQLite bulk-create scenario under `prefix`: reset and count, a hand-written
 * route running a raw better-sqlite3 transaction, and a view answering POST (one item) and
 * POST /bulk. Each scenario has a SQLite file of its own.
 */
async function registerBulkCreate (app: FastifyInstance, prefix: string, file: string): Promise<void> {
  const db = openDatabase(file)
  app.post(`${prefix}/reset`, async (_request, reply) => { db.exec('DELETE FROM items'); return reply.code(204).send() })
  app.get(`${prefix}/count`, { schema: { response: { 200: Type.Object({ count: Type.Integer() }) } } }, async () => db.prepare('SELECT COUNT(*) AS count FROM items').get())

  // The floor: the same rows, the same validation and serialization, one raw transaction.
  const insert = db.prepare('INSERT INTO items (name, price) VALUES (?, ?) RETURNING *')
  const insertAll = db.transaction((rows: Array<Static<typeof ItemIn>>) =>
    rows.map((row) => insert.get(row.name, row.price)))
  app.post<{ Body: Array<Static<typeof ItemIn>> }>(`${prefix}/raw`, { schema: { body: Type.Array(ItemIn), response: { 201: Type.Array(Item) } } },
    async (request, reply) => { reply.code(201); return insertAll(request.body) })

  class Items extends mix(GenericBulkCreateAPIView, GenericCreateAPIView)<{
    item: Item,
    create: Static<typeof ItemIn>
  }> {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override repository = new SqliteRepository(db, TABLE) as never
  }
  await app.register(views, { configureApp: false, views: [{ view: Items, prefix: `${prefix}/view` }] })
}

/** Create 1,000 rows in SQLite: one bulk request through the view, 1,000 single POSTs, or a raw better-sqlite3 transaction. */
export const sqliteBulkCreate: BatchScenario = {
  kind: 'batch',
  name: 'sqlite-bulk-create',
  description: `create ${BATCH.toLocaleString('en-US')} rows in a SQLite file (WAL, synchronous NORMAL, UNIQUE name): one POST /bulk through ` +
    `GenericBulkCreateAPIView over SqliteRepository, ${BATCH} single POSTs through GenericCreateAPIView, or one POST to a hand-written route ` +
    'running a raw better-sqlite3 transaction of the same INSERT ... RETURNING statements; the table is emptied before every run',
  register: (app: FastifyInstance) => registerBulkCreate(app, PREFIX, 'bulk'),
  items: BATCH,
  reset: { method: 'POST', path: `${PREFIX}/reset`, expectStatus: 204 },
  check: { request: { method: 'GET', path: `${PREFIX}/count` }, body: JSON.stringify({ count: BATCH }) },
  reference: 'view-bulk',
  repetitions: 6,
  ways: [
    {
      name: 'view-bulk',
      label: `1 POST /bulk of ${BATCH} items: GenericBulkCreateAPIView over SqliteRepository (one transaction), 201 with the rows`,
      request: { method: 'POST', path: `${PREFIX}/view/bulk`, headers: { 'content-type': 'application/json' }, body: BULK_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    },
    {
      name: 'raw-transaction',
      label: `1 POST of ${BATCH} items to a hand-written route: a raw better-sqlite3 transaction of prepared INSERT ... RETURNING`,
      request: { method: 'POST', path: `${PREFIX}/raw`, headers: { 'content-type': 'application/json' }, body: BULK_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    },
    {
      name: 'view-single-c1',
      label: `${BATCH} POSTs of one item each, one after the other on 1 keep-alive connection: GenericCreateAPIView over SqliteRepository`,
      request: { method: 'POST', path: `${PREFIX}/view`, headers: { 'content-type': 'application/json' }, body: '{"name":"Item [<id>]","price":9.99}', expectStatus: 201 },
      amount: BATCH,
      connections: 1,
      numbered: true
    }
  ]
}

/** Rows of the large bulk create. */
const LARGE_BATCH = 10_000
const LARGE_BODY = bulkBody(LARGE_BATCH)
const LARGE_PREFIX = '/sqlite-bulk-10k'

/**
 * Create 10,000 rows in SQLite in one request: the view's POST /bulk against the hand-written
 * route running a raw better-sqlite3 transaction of the same inserts, both with the library's
 * and Fastify's defaults (no maxBatchSize; the 365 kB body is within the 1 MiB bodyLimit).
 */
export const sqliteBulkCreate10k: BatchScenario = {
  kind: 'batch',
  name: 'sqlite-bulk-create-10k',
  description: `create ${LARGE_BATCH.toLocaleString('en-US')} rows in a SQLite file (WAL, synchronous NORMAL, UNIQUE name) in one POST of ` +
    `${Math.round(LARGE_BODY.length / 1000)} kB: GenericBulkCreateAPIView over SqliteRepository (defaults: no maxBatchSize) against a hand-written route ` +
    'running a raw better-sqlite3 transaction of the same INSERT ... RETURNING statements, both with the same schemas; the table is emptied before every run',
  register: (app: FastifyInstance) => registerBulkCreate(app, LARGE_PREFIX, 'bulk-10k'),
  items: LARGE_BATCH,
  reset: { method: 'POST', path: `${LARGE_PREFIX}/reset`, expectStatus: 204 },
  check: { request: { method: 'GET', path: `${LARGE_PREFIX}/count` }, body: JSON.stringify({ count: LARGE_BATCH }) },
  reference: 'raw-transaction',
  target: { way: 'view-bulk', maxRatio: 1.5, label: 'the view\'s bulk create costs at most 1.5× the raw transaction' },
  // A run takes a few hundred ms: 8 repetitions cost a few seconds. BENCH_BATCH_REPS=30 for figures worth reporting.
  repetitions: 8,
  ways: [
    {
      name: 'view-bulk',
      label: `1 POST /bulk of ${LARGE_BATCH} items: GenericBulkCreateAPIView over SqliteRepository (one transaction), 201 with the rows`,
      request: { method: 'POST', path: `${LARGE_PREFIX}/view/bulk`, headers: { 'content-type': 'application/json' }, body: LARGE_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    },
    {
      name: 'raw-transaction',
      label: `1 POST of ${LARGE_BATCH} items to a hand-written route: a raw better-sqlite3 transaction of prepared INSERT ... RETURNING`,
      request: { method: 'POST', path: `${LARGE_PREFIX}/raw`, headers: { 'content-type': 'application/json' }, body: LARGE_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    }
  ]
}

const RETRIEVE = '/sqlite-retrieve'
const EXAMPLE_TABLE = { table: 'items', columns: ['id', 'name', 'price', 'updated_at'], touchColumn: 'updated_at' } satisfies SqlTableOptions<ExampleItem>

/**
 * sqlite-retrieve's table (1,000 example items in a WAL file named after `name`) and its hand-written
 * route, `${root}/fastify/:id`, with the view that reads the same row: what each retrieve over SQLite
 * is measured against (sqlite-retrieve, the telemetry scenarios).
 */
export function sqliteRetrieveRoutes (
  app: FastifyInstance,
  name: string,
  root: string
): { db: Database.Database, Items: ViewClass } {
  const db = openDatabase(name)
  db.exec('ALTER TABLE items ADD COLUMN updated_at TEXT NOT NULL DEFAULT \'\'')
  const insert = db.prepare('INSERT INTO items (name, price, updated_at) VALUES (?, ?, ?)')
  db.transaction(() => { for (let i = 1; i <= 1000; i++) insert.run(`Item ${i}`, i, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString()) })()
  const select = db.prepare('SELECT id, name, price, updated_at FROM items WHERE id = ?')
  app.get<{ Params: { id: number } }>(`${root}/fastify/:id`, { schema: { params: ExampleParams, response: { 200: ExampleItem } } },
    async function getItem (request, reply) {
      const item = select.get(request.params.id)
      if (item === undefined) return reply.callNotFound()
      return item
    })
  class Items extends GenericRetrieveAPIView<{ item: ExampleItem, params: { id: number } }> {
    static override responseSchema = ExampleItem
    static override detailParams = ExampleParams
    static override repository = new SqliteRepository<ExampleItem>(db, EXAMPLE_TABLE)
  }
  return { db, Items }
}

/**
 * GET one row by id from SQLite, with the example API's own `Item` (an `updated_at`
 * date-time included): the sync generic retrieve with defaults, and the example's own
 * configuration (ETag and Last-Modified, the async family over `asyncRepository`),
 * against a hand-written route running the same query.
 */
export const sqliteRetrieve: Scenario = {
  name: 'sqlite-retrieve',
  description: 'GET /:id of one row of a 1,000-row SQLite table (WAL file), the example API\'s Item { id, name, price, updated_at: date-time }: ' +
    'GenericRetrieveAPIView over SqliteRepository with defaults, and the example\'s ETag\'d view, vs a hand-written route with the same schemas running a prepared SELECT',
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    const { db, Items } = sqliteRetrieveRoutes(app, 'retrieve', RETRIEVE)
    // The example's configuration of its items view, retrieve only.
    class ExampleItems extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView)<{
      item: ExampleItem,
      params: { id: number }
    }> {
      static override responseSchema = ExampleItem
      static override detailParams = ExampleParams
      static override conditional = { etag: true, lastModifiedField: 'updated_at' }
      static override repository = asyncRepository<ExampleItem, SqliteRepository<ExampleItem>>(
        new SqliteRepository<ExampleItem>(db, EXAMPLE_TABLE)
      )
    }
    await app.register(views, { configureApp: false, views: [{ view: Items, prefix: `${RETRIEVE}/view` }, { view: ExampleItems, prefix: `${RETRIEVE}/example` }] })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route running a prepared SELECT ... WHERE id = ?, params and response schemas',
    request: { method: 'GET', path: `${RETRIEVE}/fastify/500` }
  },
  variants: [
    {
      name: 'view',
      label: 'GenericRetrieveAPIView over SqliteRepository, defaults (validateResponse = true)',
      request: { method: 'GET', path: `${RETRIEVE}/view/500` }
    },
    {
      name: 'example-etag',
      label: 'the example\'s view: mix(ConditionalMixin, AsyncGenericRetrieveAPIView), etag and lastModifiedField, over asyncRepository(SqliteRepository): a 200 with ETag and Last-Modified',
      request: { method: 'GET', path: `${RETRIEVE}/example/500` }
    }
  ]
}
