// Per-row checks in bulk writes (object permissions): `bulkUpdate` calls `options.precondition`,
// `updateMany` and `deleteMany` call `kwargs.precondition`, on each current row, in the write's
// transaction; one refusal and nothing is written. The same cases on the memory store, SQLite
// (this run's driver, sync and async repositories; node-sqlite.test.ts reruns this file) and
// PostgreSQL (once, in the better-sqlite3 run).
import t0, { type Test } from 'tap'
import type { FastifyRequest } from 'fastify'
import pg from 'pg'
import { Type } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import type { ViewEntry } from '../lib/types.js'
import { Forbidden } from '../lib/errors.js'
import { AsyncGenericViewSet, GenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../lib/bulk.js'
import { AsyncSqliteRepository, PostgresRepository, SqlBuilder, SqliteRepository } from '../lib/stores/sql/index.js'
import type { AsyncBulkRepository, AsyncRepository } from '../lib/stores/repository.js'
import { build, problem } from './helpers.js'
import { driver, openSqlite } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'
import { Product, ProductFilter, SEED_ROWS, TableOptions, createTable, type ProductT } from './sql-cases.js'

/** Only the rows of the request's user (`x-user`) may be written; the others are a 403. */
function ownRows (request: FastifyRequest) {
  const user = request.headers['x-user']
  return (row: unknown): void => {
    if ((row as ProductT).tenant !== user) throw new Forbidden(`Row ${(row as ProductT).id} is not yours.`)
  }
}

/** Bulk and CRUD views whose every write checks each row it changes. */
function bulkViews (repository: unknown, family: 'sync' | 'async'): ViewEntry[] {
  const Sync = mix(BulkAPIViewSet, GenericViewSet)
  // The two families differ in their types only: the runtime does not await what is not a promise.
  const Base = (family === 'sync' ? Sync : mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)) as typeof Sync
  class Products extends Base {
    static override responseSchema = Product
    // Every field: a memory store keeps exactly what a create gives it.
    static override createSchema = Type.Omit(Product, ['id'])
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override filter = ProductFilter
    static override repository = repository as never
    override getRepositoryOptions () { return { precondition: ownRows(this.request) } }
  }
  return [{ view: Products, prefix: '/products' }]
}

type Repo = AsyncRepository<ProductT> & AsyncBulkRepository<ProductT>

/** Row 3 (Desk, 120) belongs to user b; the others to user a. */
async function rowChecks (t: Test, repository: Repo, family: 'sync' | 'async', view: unknown, snapshot: () => Promise<unknown>): Promise<void> {
  const app = await build({ views: bulkViews(view, family) })
  t.teardown(() => app.close())
  const before = await snapshot()
  const as = (user: string) => ({ 'x-user': user })
  const refused = [
    { method: 'PATCH', url: '/products/bulk?price__gt=0', payload: { price: 1 } },
    { method: 'DELETE', url: '/products/bulk?price__gt=0' },
    { method: 'PUT', url: '/products/bulk', payload: [{ id: 1, name: 'Lamp', price: 2 }, { id: 3, name: 'Desk', price: 2 }, { id: 4, name: 'Chair', price: 2 }] }
  ] as const
  for (const request of refused) {
    const res = await app.inject({ ...request, headers: as('a') })
    t.equal(problem(t, res, 403).detail, 'Row 3 is not yours.', `${request.method} ${request.url}: one forbidden row among many`)
    t.same(await snapshot(), before, `${request.method}: nothing written`)
  }
  const patched = await app.inject({ method: 'PATCH', url: '/products/bulk?category=light', headers: as('a'), payload: { price: 7 } })
  t.same(patched.json().map((p: ProductT) => [p.id, p.price]).sort(), [[1, 7], [2, 7]], 'every row the user\'s own: written')
  t.equal((await app.inject({ method: 'PUT', url: '/products/bulk', headers: as('b'), payload: [{ id: 3, name: 'Desk', price: 99 }] })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/products/bulk?price__gt=90', headers: as('b') })).statusCode, 204, 'user b deletes its row')
  t.same((await repository.list({}, { orderBy: [] })).map((p) => p.id).sort(), [1, 2, 4, 5])
  problem(t, await app.inject({ method: 'PUT', url: '/products/bulk', headers: as('a'), payload: [{ id: 3, name: 'Desk', price: 1 }] }), 404)

  // Every selected row is judged, as reads see it; the key is an option, never a criterion.
  const seen: number[] = []
  const record = (row: unknown): void => { seen.push((row as ProductT).id) }
  t.same((await repository.updateMany({ description: 'seen' }, { price__lt: 40, precondition: record })).map((p) => p.id).sort(), [1, 2, 5])
  t.same(seen.sort(), [1, 2, 5], 'updateMany judged each row it wrote')
  seen.length = 0
  await repository.bulkUpdate([{ id: 4, name: 'Chair', price: 1 }, { id: 2, name: 'Lantern', price: 1 }], { precondition: record })
  t.same(seen.sort(), [2, 4], 'bulkUpdate judged each item\'s row')
  seen.length = 0
  await repository.deleteMany({ description: 'seen', precondition: record })
  t.same(seen.sort(), [1, 2, 5], 'deleteMany too')
  t.same((await repository.list({}, { orderBy: [] })).map((p) => p.id), [4])
  for (const precondition of ['yes', null, 1]) {
    await t.rejects(repository.deleteMany({ precondition }), { code: 'FV_ERR_OPTION_IS_CRITERION', message: /"precondition" is the check of each row a write changes, a function/ },
      `precondition ${JSON.stringify(precondition)} is no criterion`)
  }
  t.same((await repository.list({}, { orderBy: [] })).map((p) => p.id), [4], 'nothing deleted')
}

t0.test('MemoryRepository: per-row checks in bulk writes', async (t) => {
  const store = new MemoryRepository<ProductT>({ rows: SEED_ROWS.map(([id, name, price, category, description]) => ({ id, name, price, category, description, tenant: id === 3 ? 'b' : 'a', updated_at: null })) })
  await rowChecks(t, asyncRepository<ProductT, typeof store>(store), 'sync', store, async () => store.list({}))
})

function sqlite () {
  const db = openSqlite(':memory:')
  db.exec(createTable('INTEGER'))
  const insert = db.prepare('INSERT INTO products (id, name, price, category, description, tenant) VALUES (?, ?, ?, ?, ?, ?)')
  for (const row of SEED_ROWS) insert.run(...row, row[0] === 3 ? 'b' : 'a')
  return { db, snapshot: async () => db.prepare('SELECT * FROM products ORDER BY id').all() }
}

t0.test(`SqliteRepository (${driver}): per-row checks in bulk writes`, async (t) => {
  const { db, snapshot } = sqlite()
  t.teardown(() => db.close())
  const repo = new SqliteRepository<ProductT>(db, TableOptions)
  await rowChecks(t, asyncRepository<ProductT, typeof repo>(repo), 'sync', repo, snapshot)
})

t0.test(`AsyncSqliteRepository (${driver}): per-row checks in bulk writes`, async (t) => {
  const { db, snapshot } = sqlite()
  t.teardown(() => db.close())
  const repo = new AsyncSqliteRepository<ProductT>(db, TableOptions)
  await rowChecks(t, repo, 'async', repo, snapshot)
})

t0.test('the rows a checked bulk write reads are locked: PostgreSQL locks them in key order', async (t) => {
  const b = new SqlBuilder('postgres', TableOptions)
  t.equal(b.lockAll({ price__gt: 1 }, [], {}).sql, `SELECT ${b.selectList} FROM "products" WHERE "price" > $1 ORDER BY "id" ASC NULLS LAST FOR NO KEY UPDATE OF "products"`)
})

t0.test('PostgresRepository: per-row checks in bulk writes', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // An idle client reports the server's shutdown at the end of the run.
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  await pool.query(createTable('INTEGER GENERATED BY DEFAULT AS IDENTITY'))
  for (const row of SEED_ROWS) await pool.query('INSERT INTO products (id, name, price, category, description, tenant) VALUES ($1, $2, $3, $4, $5, $6)', [...row, row[0] === 3 ? 'b' : 'a'])
  const repo = new PostgresRepository<ProductT>(pool, TableOptions)
  await rowChecks(t, repo, 'async', repo, async () => (await pool.query('SELECT * FROM products ORDER BY id')).rows)
})
