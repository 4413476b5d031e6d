import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { inTransaction, openSqlite, type TestDatabase } from './sqlite-driver.js'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { Conflict } from '../lib/errors.js'
import { CursorPaginationFilter, GenericListAPIView, GenericViewSet, PaginationFilter } from '../lib/generics.js'
import { BulkAPIViewSet } from '../lib/bulk.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { build, problem } from './helpers.js'
import {
  Columns, OPERATOR_CASES, PAGING_ROWS, Product, ProductFilter, ProductIn, SEED_ROWS, TableOptions, checkPaging,
  createTable, literalStrings, literalView, pagingViews,
  randomRollbacks, type ProductT
} from './sql-cases.js'

function database (rows = SEED_ROWS): TestDatabase {
  const db = openSqlite(':memory:')
  db.exec(createTable('INTEGER'))
  const insert = db.prepare('INSERT INTO products (id, name, price, category, description) VALUES (?, ?, ?, ?, ?)')
  for (const row of rows) insert.run(...row)
  return db
}

const repository = (db: TestDatabase) => new SqliteRepository<ProductT>(db, TableOptions)

test('SQLite: the operator table of the memory repository, the same answers', async (t) => {
  const db = database()
  class Products extends GenericListAPIView {
    static override responseSchema = Product
    static override filter = ProductFilter
    static override repository = repository(db) as never
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  for (const [query, expected] of OPERATOR_CASES) t.same((await app.inject(`/products?${query}`)).json().map((p: ProductT) => p.id), expected, query)
})

test('SQLite: SQL-looking strings are stored and matched literally', async (t) => {
  const db = database()
  class Products extends GenericViewSet {
    static override responseSchema = Product
    static override createSchema = ProductIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = ProductFilter
    static override repository = repository(db) as never
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  const nasty = ["x'; DROP TABLE products; --", 'Robert"); DELETE FROM products WHERE ("1"="1', '%', '_', "' OR '1'='1"]
  for (const name of nasty) {
    const created = await app.inject({ method: 'POST', url: '/products', payload: { name, price: 1, description: name } })
    t.equal(created.statusCode, 201, name)
    t.equal(created.json().name, name)
    const found = (await app.inject(`/products?name=${encodeURIComponent(name)}`)).json()
    t.same(found.map((p: ProductT) => p.name), [name], `matched literally: ${name}`)
    t.same((await app.inject(`/products?q=${encodeURIComponent(name)}`)).json().map((p: ProductT) => p.name).includes(name), true)
  }
  t.equal((db.prepare('SELECT COUNT(*) AS n FROM products').get() as { n: number }).n, 5 + nasty.length, 'the table is intact')
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/products', payload: { name: 'Lamp', price: 1 } }), 409).status, 409, 'a unique clash in the database is a 409')
  t.equal(problem(t, await app.inject({ method: 'PATCH', url: '/products/2', payload: { name: 'Lamp' } }), 409).status, 409)
  const patched = await app.inject({ method: 'PATCH', url: '/products/2', payload: { price: 13 } })
  t.match(patched.json(), { id: 2, price: 13, updated_at: /^\d{4}-/ }, 'touchColumn stamps updates')
  problem(t, await app.inject('/products/99'), 404)
  t.equal((await app.inject({ method: 'DELETE', url: '/products/3' })).statusCode, 204)
  problem(t, await app.inject({ method: 'DELETE', url: '/products/3' }), 404)
})

test('SQLite: numbered and cursor pages', async (t) => {
  const db = database()
  class Pages extends PaginationFilter { static override maxPageSize = 2; static override orderingFields = ['price'] }
  class Cursors extends CursorPaginationFilter { static override orderingFields = ['category', 'price'] }
  const view = (filter: unknown) => class extends GenericListAPIView {
    static override responseSchema = Product
    static override filter = filter as typeof Pages
    static override repository = repository(db) as never
  }
  const app = await build({ views: [{ view: view(Pages), prefix: '/pages' }, { view: view(Cursors), prefix: '/cursor' }] })
  t.teardown(() => app.close())
  const page = (await app.inject('/pages?page=2&page_size=2&sort=price')).json()
  t.same(
    { ids: page.items.map((p: ProductT) => p.id), total: page.total_items, pages: page.total_pages },
    { ids: [1, 4], total: 5, pages: 3 }
  )
  for (const sort of ['category', '-category', 'price', '-price']) {
    const seen: number[] = []
    let url: string | null = `/cursor?page_size=1&sort=${sort}`
    while (url !== null) {
      const body: { items: ProductT[], next_page: string | null } = (await app.inject(url)).json()
      seen.push(...body.items.map((p) => p.id))
      url = body.next_page === null ? null : `/cursor?page_size=1&sort=${sort}&cursor=${body.next_page}`
    }
    t.same([...seen].sort(), [1, 2, 3, 4, 5], `sort=${sort}: every row once, nulls included`)
  }
})

test('SQLite: cursor pages forward and back over nulls and ties, offset pages, in the memory repository\'s order', async (t) => {
  const db = database([...SEED_ROWS, ...PAGING_ROWS])
  const app = await build({ views: pagingViews(repository(db), 'sync') })
  t.teardown(() => app.close())
  await checkPaging(t, app)
})

test('SQLite: SQL-looking strings through every filter operator, every string field, CRUD and bulk bodies, stored and matched literally', async (t) => {
  const db = database()
  const app = await build({ views: [literalView(repository(db), 'sync')] })
  t.teardown(() => app.close())
  await literalStrings(t, app, async (sql) => db.prepare(sql).all() as Array<Record<string, unknown>>)
})

test('SQLite: bulk calls are one transaction each; a failure inside the database leaves every row as it was (200 random batches)', async (t) => {
  const db = database()
  class Products extends mix(BulkAPIViewSet, GenericViewSet) {
    static override responseSchema = Product
    static override createSchema = ProductIn
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override filter = ProductFilter
    static override repository = repository(db) as never
    static override repositoryOptions = { batch_size: 50 }
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  await randomRollbacks(t, app, async () => JSON.stringify(db.prepare('SELECT * FROM products ORDER BY id').all()), async (sql) => db.prepare(sql).all() as Array<Record<string, unknown>>)

  const ok = await app.inject({ method: 'POST', url: '/products/bulk', payload: [{ name: 'fine-1', price: 1 }, { name: 'fine-2', price: 2 }] })
  t.equal(ok.statusCode, 201)
  t.same(ok.json().map((p: ProductT) => p.name), ['fine-1', 'fine-2'])
  const many = await app.inject({ method: 'PATCH', url: '/products/bulk?name__like=fine-%25', payload: { price: 9 } })
  t.same(many.json().map((p: ProductT) => p.price), [9, 9])
  t.equal((await app.inject({ method: 'DELETE', url: '/products/bulk?name__like=fine-%25' })).statusCode, 204)
  t.equal((db.prepare("SELECT COUNT(*) AS n FROM products WHERE name LIKE 'fine-%'").get() as { n: number }).n, 0)
  problem(t, await app.inject({ method: 'PUT', url: '/products/bulk', payload: [{ id: 999, name: 'ghost', price: 1 }] }), 404)
})

test('SQLite: positional criteria from resolveFilter are SQL fragments with their own parameters', async (t) => {
  const db = database()
  class Cheap extends GenericListAPIView {
    static override responseSchema = Product
    static override filter = ProductFilter
    static override repository = repository(db) as never
    override resolveFilter (filter: InstanceType<typeof ProductFilter>) { return { args: [{ sql: 'price < ?', params: [30] }], kwargs: filter.asKwargs() } }
  }
  class Wrong extends Cheap {
    override resolveFilter () { return { args: ['price < 30'], kwargs: {} } as never }
  }
  const app = await build({ views: [{ view: Cheap, prefix: '/cheap' }, { view: Wrong, prefix: '/wrong' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/cheap?category=light')).json().map((p: ProductT) => p.id), [2])
  problem(t, await app.inject('/wrong'), 500)
  const created = await app.inject({ method: 'POST', url: '/cheap', payload: {} })
  t.equal(problem(t, created, 405).detail, '/cheap does not take POST; it takes GET, HEAD, OPTIONS.', 'a list-only view has no create route')
  t.equal(created.headers.allow, 'GET, HEAD, OPTIONS')
})

test('SQLite: a CHECK failure on a single create is a 409 too', async (t) => {
  const db = database()
  class Products extends GenericViewSet {
    static override responseSchema = Product
    static override createSchema = ProductIn
    static override repository = repository(db) as never
  }
  const app = await build({ views: [{ view: Products, prefix: '' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/', payload: { name: 'Negative', price: -5 } }), 409).detail, 'The database refused the change: a constraint failed.')
})

test('SQLite: a detail read of a file another connection holds locked is a 503 problem, and served once the lock is gone', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-sqlite-'))
  const writer = openSqlite(path.join(dir, 'shop.db'))
  writer.exec(createTable('INTEGER'))
  writer.prepare('INSERT INTO products (id, name, price, category, description) VALUES (?, ?, ?, ?, ?)').run(...SEED_ROWS[0])
  // No busy timeout: a lock is SQLITE_BUSY at once rather than after five seconds.
  const reader = openSqlite(path.join(dir, 'shop.db'), { timeout: 0 })
  class Products extends GenericViewSet {
    static override responseSchema = Product
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = repository(reader) as never
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(
    async () => { await app.close(); reader.close(); writer.close(); rmSync(dir, { recursive: true, force: true }) }
  )
  t.equal((await app.inject('/products/1')).json().name, 'Lamp', 'the statement is prepared and cached')
  writer.exec('BEGIN EXCLUSIVE')
  const locked = await app.inject('/products/1')
  t.equal(problem(t, locked, 503).detail, 'The database is unavailable; try again shortly.')
  t.equal(locked.headers['retry-after'], '1')
  writer.exec('ROLLBACK')
  t.equal((await app.inject('/products/1')).statusCode, 200, 'the next read after the lock is served')
})

test('translateError: constraints are 409, lost databases 503, anything else passes through', async (t) => {
  const { translateError } = await import('../lib/stores/sql/index.js')
  const err = (code?: string, message = 'x') => Object.assign(new Error(message), code === undefined ? {} : { code })
  t.equal((translateError(err('23505')) as { status: number }).status, 409)
  t.equal((translateError(err('23514')) as { status: number }).status, 409, 'a CHECK failure in PostgreSQL')
  t.equal((translateError(err('SQLITE_CONSTRAINT_NOTNULL')) as { status: number }).status, 409)
  for (const code of ['ECONNREFUSED', '57P01', 'SQLITE_BUSY']) t.equal((translateError(err(code)) as { status: number }).status, 503, code)
  t.equal((translateError(err(undefined, 'Client has encountered a connection error and is not queryable')) as { status: number }).status, 503)
  t.equal((translateError(err(undefined, 'timeout exceeded when trying to connect')) as { status: number }).status, 503, 'a saturated pool')
  t.equal((translateError(err('22003')) as { status: number }).status, 400, 'a value out of range for its column')
  const other = err('42P01')
  t.equal(translateError(other), other, 'an unknown table stays an internal error')
  t.equal(translateError(null), null)
  // node:sqlite's errors carry SQLite's extended result code as a number, the name's place taken by ERR_SQLITE_ERROR.
  const numbered = (errcode: number) => Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR', errcode })
  const status = (error: unknown) => (translateError(error) as { status?: number }).status
  t.equal(status(numbered(2067)), 409, 'node:sqlite: SQLITE_CONSTRAINT_UNIQUE is a 409')
  t.match(translateError(numbered(2067)), { detail: /same unique value/ }, 'as a unique clash')
  t.match(translateError(numbered(1555)), { detail: /same unique value/ }, 'SQLITE_CONSTRAINT_PRIMARYKEY too')
  t.match(translateError(numbered(275)), { status: 409, detail: /a constraint failed/ }, 'SQLITE_CONSTRAINT_CHECK is the other constraint 409')
  for (const errcode of [5, 517, 6, 262]) t.equal(status(numbered(errcode)), 503, `node:sqlite's busy or locked ${errcode} is a 503`)
  const logic = numbered(1)
  t.equal(translateError(logic), logic, 'a SQL logic error stays an internal error')
  const unnumbered = Object.assign(new Error('x'), { code: 'ERR_SQLITE_ERROR' })
  t.equal(translateError(unnumbered), unnumbered, 'and so does one without a number')
})

test('SqlBuilder and SqliteRepository corners', async (t) => {
  const { SqlBuilder } = await import('../lib/stores/sql/index.js')
  t.throws(() => new SqlBuilder('sqlite', { table: 'items; DROP', columns: ['id'] }), { name: 'TypeError', code: 'FV_ERR_SQL_NAME', message: 'Not a plain SQL identifier: "items; DROP"' })
  const pgBuilder = new SqlBuilder('postgres', { table: 't', columns: ['id', 'tenant'], scopeFields: ['tenant'] })
  t.throws(() => pgBuilder.select({ ghost: 1 }, { orderBy: [] }), { name: 'TypeError', message: /no column "ghost"/ })
  t.equal(pgBuilder.select({}, { orderBy: [], offset: 2 }).sql, 'SELECT "id", "tenant" FROM "t" ORDER BY "id" ASC NULLS LAST OFFSET 2', 'PostgreSQL takes OFFSET alone')
  t.throws(() => pgBuilder.select({}, { orderBy: [], limit: 1.5 }), { name: 'TypeError', message: 'LIMIT or OFFSET must be a whole, non-negative row count; got 1.5' }, 'window sizes are checked before they are written')
  t.same(pgBuilder.itemCriteria({ id: 1, tenant: 'a' }), { id: 1, tenant: 'a' })
  t.same(pgBuilder.itemCriteria({ id: 1 }), { id: 1 })
  t.match(pgBuilder.select({ id__in: [], tenant__not_in: [] }, { orderBy: [] }).sql, /WHERE FALSE AND "tenant" IS NOT NULL/, 'empty lists never write IN ()')
  t.throws(() => new SqlBuilder('sqlite', { table: 't', columns: ['id'], idColumn: 'id); --' }), { name: 'TypeError' })

  const db = database()
  const plain = new SqliteRepository<ProductT>(db, { table: 'products', columns: Columns, optionKeys: ['batch_size'] })
  t.same(plain.list({ category: null }).map((p) => p.id), [5], 'equality with null is IS NULL')
  t.same(plain.list({ category__ne: null }).map((p) => p.id), [1, 2, 3, 4], 'ne null is IS NOT NULL')
  t.same(plain.get({ id: 1, batch_size: 5 })?.name, 'Lamp', 'option keys are not criteria')
  t.same(plain.list({}, { orderBy: [{ field: 'id', descending: false }], offset: 3 }).map((p) => p.id), [4, 5], 'an offset without a limit')
  t.same(plain.update({ id: 1 }, {})?.name, 'Lamp', 'an empty update reads the row')
  const touching = repository(db)
  t.equal(touching.update({ id: 1 }, {})?.updated_at, null, 'and does not stamp the touch column')
  t.same(plain.list({ id__in: [] }), [], 'an empty in list selects nothing')
  t.same(plain.list({}, { orderBy: [], limit: 0 }), [], 'LIMIT 0 selects nothing')
  t.throws(() => plain.list({}, { orderBy: [], limit: -1 }), { code: 'FV_ERR_SQL_ROW_COUNT' }, 'a negative LIMIT, which SQLite would read as none, is refused')
  for (const arg of [null, 'id = 1', { sql: 'id = 1' }]) {
    t.throws(() => plain.list({}, { orderBy: [], args: [arg] }), { code: 'FV_ERR_SQL_FRAGMENT', message: 'SQL repositories take positional criteria as { sql, params } fragments' }, `${JSON.stringify(arg)} is no fragment`)
  }
  for (let n = 1; n <= 300; n++) plain.list({ id__in: Array.from({ length: n }, (_, i) => i) })
  t.same(plain.list({ id__in: [1] }).map((p) => p.id), [1], 'the statement cache keeps working past its size')
  t.equal(plain.update({ id: 99 }, { price: 1 }), null)
  // A single-row write by primary key is a plain WHERE; by other criteria, the first row by key through a scalar subquery (no IN (SELECT ...)).
  t.match(pgBuilder.update({ id: 1, tenant: 'a' }, { tenant: 'b' }, true).sql, /SET "tenant" = \$1 WHERE "id" = \$2 AND "tenant" = \$3 RETURNING/)
  t.match(pgBuilder.delete({ tenant: 'a' }, true).sql, /^DELETE FROM "t" WHERE "id" = \(SELECT "id" FROM "t" WHERE "tenant" = \$1 ORDER BY "id" LIMIT 1\)$/)
  const cheap = plain.list({ price__lt: 100 }, { orderBy: [{ field: 'id', descending: false }] }).map((p) => p.id)
  t.ok(cheap.length > 1)
  t.equal(plain.update({ price__lt: 100 }, { description: 'first' })?.id, cheap[0], 'a write by other criteria changes the first row by primary key')
  t.same(plain.list({ description: 'first' }).map((p) => p.id), [cheap[0]], 'and only that row')
  t.equal(plain.delete({ description: 'first' }), true)
  t.equal(plain.get({ id: cheap[0] }), null)
  plain.create({ name: 'Star*', price: 1, description: 'glob [chars]?' })
  t.same(plain.list({ name__like: 'Star*' }).map((p) => p.name), ['Star*'], 'GLOB characters in a LIKE pattern are literal')
  t.same(plain.list({ name__like: 'S%*' }).map((p) => p.name), ['Star*'])
  t.same(plain.list({ description__like: '%[chars]?' }).map((p) => p.name), ['Star*'])
  t.same(plain.list({ name__like: 'Sta?*' }), [])
  t.same(plain.list({ updated_at__lt: new Date() }), [], 'a Date parameter binds as its ISO string')
  const byCategory = [{ field: 'category', descending: false }, { field: 'id', descending: false }]
  t.same(plain.list({}, { orderBy: byCategory, after: [null, 5] }).map((p) => p.id), [6], 'after a null, ascending: only later nulls')
  t.same(plain.list({ price__lt: 100 }, { orderBy: byCategory, after: ['light', 1] }).map((p) => p.id), [2, 5, 6], 'a seek combined with criteria')
  db.exec('ALTER TABLE products ADD COLUMN active INTEGER NOT NULL DEFAULT 1')
  const flags = new SqliteRepository<ProductT & { active: boolean }>(db, { table: 'products', columns: [...Columns, 'active'] })
  t.equal(flags.count({ active: true }), 5, 'a boolean parameter binds as 1')
  t.equal(flags.count({ active: false }), 0)
})

test('SqlBuilder.selectOne: detail reads reuse one text per set of equality columns, other criteria take the general builder', async (t) => {
  const { SqlBuilder } = await import('../lib/stores/sql/index.js')
  const b = new SqlBuilder('sqlite', { table: 't', columns: ['id', 'tenant', 'flag', 'at'], optionKeys: ['batch_size'] })
  t.same(b.selectOne({ id: 7, tenant: 'a' }), { sql: 'SELECT "id", "tenant", "flag", "at" FROM "t" WHERE "id" = ? AND "tenant" = ?', params: [7, 'a'], returns: 'row' }, 'a key lookup needs no ORDER BY or LIMIT')
  t.same(b.selectOne({ id: 8, tenant: 'b' }).params, [8, 'b'], 'the cached text takes new values')
  t.strictSame(b.selectOne({ tenant: 'a', flag: true }), { sql: 'SELECT "id", "tenant", "flag", "at" FROM "t" WHERE "tenant" = ? AND "flag" = ? ORDER BY "id" ASC NULLS LAST LIMIT 1', params: ['a', 1], returns: 'row' }, 'without the key: the first row by key')
  t.match(b.selectOne({ id: 1, tenant: null }).sql, /"tenant" IS NULL/, 'a null criterion is IS NULL')
  t.same(b.selectOne({ at: new Date(0) }).params, ['1970-01-01T00:00:00.000Z'], 'a date goes through the general builder')
  t.match(b.selectOne({ id__in: [1, 2] }).sql, /IN \(\?, \?\)/, 'an operator too')
  t.same(b.selectOne({ id: 1, batch_size: 5 }).params, [1], 'option keys are not criteria')
  t.throws(() => b.selectOne({ ghost: 1 }), { name: 'TypeError', message: /no column "ghost"/ })
  const pg = new SqlBuilder('postgres', { table: 't', columns: ['id', 'tenant'] })
  t.same(pg.selectOne({ tenant: 'a', id: 2 }), { sql: 'SELECT "id", "tenant" FROM "t" WHERE "tenant" = $1 AND "id" = $2', params: ['a', 2], returns: 'row' })
  const columns = Array.from({ length: 17 }, (_, i) => `c${i}`)
  const wide = new SqlBuilder('sqlite', { table: 'w', columns: ['id', ...columns] })
  for (const a of columns) for (const c of columns) if (a !== c) wide.selectOne({ [a]: 1, [c]: 2 })
  t.same(wide.selectOne({ c16: 1, c15: 2 }).sql, `SELECT ${['id', ...columns].map((c) => `"${c}"`).join(', ')} FROM "w" WHERE "c16" = ? AND "c15" = ? ORDER BY "id" ASC NULLS LAST LIMIT 1`, 'past 256 shapes texts are built, not cached')
})

test('SqlBuilder.update: one-row writes by plain equalities reuse one text per set of names; others are built and checked each time', async (t) => {
  const { SqlBuilder } = await import('../lib/stores/sql/index.js')
  const b = new SqlBuilder('sqlite', { table: 't', columns: ['id', 'name', 'flag', 'v'], versionColumn: 'v', optionKeys: ['batch_size'] })
  const text = 'UPDATE "t" SET "name" = ?, "flag" = ?, "v" = "v" + 1 WHERE "id" = ? AND "v" = ? RETURNING "id", "name", "flag", "v"'
  t.strictSame(b.update({ id: 7, v: 3 }, { name: 'a', flag: true }, true), { sql: text, params: ['a', 1, 7, 3], returns: 'row' }, 'values converted as the dialect binds them')
  t.strictSame(b.update({ id: 8, v: 4 }, { name: undefined, flag: false, v: 99 }, true), { sql: text, params: [null, 0, 8, 4], returns: 'row' },
    'the cached text takes this call\'s values: an unset member is NULL, the version is never a value')
  t.strictSame(b.update({ id: 8, v: 4 }, { flag: false, name: 'b' }, true).sql, text.replace('"name" = ?, "flag" = ?', '"flag" = ?, "name" = ?'), 'another order of members is another text')
  t.strictSame(b.update({ name: 'a' }, { flag: true }, true), {
    sql: 'UPDATE "t" SET "flag" = ?, "v" = "v" + 1 WHERE "id" = (SELECT "id" FROM "t" WHERE "name" = ? ORDER BY "id" LIMIT 1) RETURNING "id", "name", "flag", "v"',
    params: [1, 'a'],
    returns: 'row'
  }, 'without the key: the first row by key')
  t.strictSame(b.update({ name: 'a' }, { flag: true }, false).returns, 'rows', 'a write of every row the criteria select returns them all')
  t.same(b.update({ id: 1, name: null }, { flag: true }, true), {
    sql: 'UPDATE "t" SET "flag" = ?, "v" = "v" + 1 WHERE "id" = ? AND "name" IS NULL RETURNING "id", "name", "flag", "v"',
    params: [1, 1],
    returns: 'row'
  }, 'a null criterion is IS NULL, and binds nothing')
  t.strictSame(b.update({ name: null }, { flag: true }, true).params, [1], 'alone too')
  t.match(b.update({ id__in: [1, 2] }, { flag: true }, true).sql, /"id" IN \(\?, \?\)/, 'an operator goes through the general builder')
  t.strictSame(b.update({ id__in: [1] }, { name: undefined }, true).params, [null, 1], 'where an unset member is NULL too')
  t.match(b.update({ name: 'a' }, { flag: true }, true, [{ sql: '"v" > ?', params: [2] }]), { sql: /WHERE "name" = \? AND \("v" > \?\)/, params: [1, 'a', 2] },
    'positional criteria are part of the text')
  // Texts of the same members set under other criteria, and of the same names split otherwise between the two.
  t.match(b.update({ id: 1 }, { flag: true }, true).sql, /WHERE "id" = \? RETURNING/)
  t.match(b.update({ name: 'a' }, { flag: true }, true).sql, /WHERE "id" = \(SELECT "id" FROM "t" WHERE "name" = \?/, 'other criteria, another text')
  t.match(b.update({ id: 1 }, { name: 'a' }, true).sql, /SET "name" = \?, "v" = "v" \+ 1 WHERE "id" = \? RETURNING/)
  t.match(b.update({}, { name: 'a', id: 1 }, true).sql, /SET "name" = \?, "id" = \?, "v" = "v" \+ 1 WHERE "id" = \(SELECT/,
    'the same names, a member more and a criterion less: another text')
  t.same(b.update({ id: 1, batch_size: 5 }, { flag: true }, true).params, [1, 1], 'option keys are not criteria')
  t.throws(() => b.update({ id: 1 }, { ghost: 1 }, true), { code: 'FV_ERR_SQL_NAME', message: /no column "ghost"/ }, 'a name that is no column is refused, cached texts or not')
  t.throws(() => b.update({ id: 1 }, { 'name,flag': 1 }, true), { code: 'FV_ERR_SQL_NAME', message: /no column "name,flag"/ }, 'a name that joins like two columns is not them')
  t.throws(() => b.update({ ghost: 1 }, { flag: true }, true), { code: 'FV_ERR_SQL_NAME', message: /no column "ghost"/ })
  const columns = Array.from({ length: 17 }, (_, i) => `c${i}`)
  const wide = new SqlBuilder('sqlite', { table: 'w', columns: ['id', ...columns] })
  for (const a of columns) for (const c of columns) if (a !== c) wide.update({ id: 1 }, { [a]: 1, [c]: 2 }, true)
  t.same(wide.update({ id: 2 }, { c16: 1, c15: 2 }, true), { sql: 'UPDATE "w" SET "c16" = ?, "c15" = ? WHERE "id" = ? RETURNING ' + ['id', ...columns].map((c) => `"${c}"`).join(', '), params: [1, 2, 2], returns: 'row' },
    'past 256 shapes texts are built, not cached')
})

test('SQLite: a detail read scoped by a boolean (getKwargs) binds it as SQLite takes it, 1 or 0', async (t) => {
  const { GenericRetrieveAPIView } = await import('../lib/generics.js')
  const db = openSqlite(':memory:')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, published INTEGER NOT NULL)')
  db.exec("INSERT INTO notes VALUES (1, 'out', 1), (2, 'draft', 0)")
  const Note = Type.Object({ id: Type.Integer(), title: Type.String(), published: Type.Integer() })
  class Published extends GenericRetrieveAPIView.with({ responseSchema: Note, detailParams: Type.Object({ id: Type.Integer() }), repository: new SqliteRepository<Static<typeof Note>>(db, { table: 'notes', columns: ['id', 'title', 'published'] }) }) {
    override getKwargs () { return { published: true } }
  }
  const app = await build({ views: [{ view: Published, prefix: '/notes' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/notes/1')).json(), { id: 1, title: 'out', published: 1 }, 'the published note')
  problem(t, await app.inject('/notes/2'), 404)
})

test('SqliteRepository: listAndCount rolls its read transaction back on an error; bulk updates order text keys too', async (t) => {
  const db = openSqlite(':memory:')
  db.exec('CREATE TABLE codes (code TEXT PRIMARY KEY, n INTEGER NOT NULL)')
  db.exec("INSERT INTO codes VALUES ('a', 1), ('b', 2), ('c', 3)")
  const codes = new SqliteRepository<{ code: string, n: number }>(db, { table: 'codes', columns: ['code', 'n'], idColumn: 'code' })
  t.throws(() => codes.listAndCount({ ghost: 1 }, { orderBy: [] }, {}), { name: 'TypeError', message: /no column "ghost"/ })
  t.notOk(inTransaction(db), 'the read transaction was rolled back')
  t.same(codes.listAndCount({}, { orderBy: [], limit: 2 }, {}), { items: [{ code: 'a', n: 1 }, { code: 'b', n: 2 }], total: 3 })
  codes.bulkUpdate([{ code: 'c', n: 30 }, { code: 'a', n: 10 }])
  t.same(codes.list({}, { orderBy: [] }).map((r) => r.n), [10, 2, 30])
})

test('SQLite: the response schema is checked against what the table says of its columns', async (t) => {
  const { AsyncSqliteRepository, SqliteRepository } = await import('../lib/stores/sql/index.js')
  const { AsyncGenericViewSet, GenericListAPIView, asyncRepository } = await import('../lib/generics.js')
  const db = openSqlite(':memory:')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title VARCHAR(80) NOT NULL, note TEXT, score REAL NOT NULL, raw BLOB, amount NUMERIC NOT NULL)')
  const table = { table: 'notes', columns: ['id', 'title', 'note', 'score', 'raw', 'amount'] } as const
  const sync = new SqliteRepository(db, table)
  t.same(Object.fromEntries(sync.columnFacts ?? []), {
    id: { nullable: false, kind: 'integer' },
    title: { nullable: false, kind: 'string' },
    note: { nullable: true, kind: 'string' },
    score: { nullable: false, kind: 'number' },
    raw: { nullable: true, kind: undefined },
    amount: { nullable: false, kind: undefined }
  }, 'nullability and the JSON type of each column, from its declared type\'s affinity')
  t.equal(new SqliteRepository(db, { table: 'later', columns: ['id'] }).columnFacts, undefined, 'a table that does not exist yet says nothing')
  t.equal(asyncRepository(sync).columnFacts, sync.columnFacts, 'asyncRepository forwards them')
  t.equal(new AsyncSqliteRepository(db, table).columnFacts?.get('note')?.nullable, true, 'and so does AsyncSqliteRepository')

  const Fits = Type.Object(
    {
      id: Type.Integer(),
      title: Type.String(),
      note: Type.Union([Type.String(), Type.Null()]),
      score: Type.Integer(),
      raw: Type.Unknown(),
      amount: Type.String()
    }
  )
  class Notes extends AsyncGenericViewSet.with(
    { responseSchema: Fits, repository: new AsyncSqliteRepository<Static<typeof Fits>>(db, table) }
  ) {}
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/notes')).statusCode, 200, 'a schema that accepts what every column holds registers; untyped columns are not checked')

  // A list of your own that maps the rows answers for its own shapes.
  const Mapped = Type.Object({ id: Type.Integer(), note: Type.String() })
  class Own extends GenericListAPIView.with({ responseSchema: Mapped, repository: sync, mappingActions: ['list'] }, {
    list () { return this.repository.list({}).map((row) => ({ id: Number(row.id), note: String(row.note ?? '') })) }
  }) {}
  const own = await build({ views: [{ view: Own, prefix: '/own' }] })
  t.teardown(() => own.close())
  t.equal((await own.inject('/own')).statusCode, 200, 'a view whose row-sending actions are all its own, and say so, is not checked')
})

test('SqliteRepository: conditional one-row writes judge the row they write, and only a row that exists', async (t) => {
  const db = database()
  t.teardown(() => db.close())
  const repo = repository(db)
  const judged: unknown[] = []
  const judge = (row: unknown): void => { judged.push((row as ProductT).id) }
  const refuse = (): never => { throw new Error('refused') }

  // No row: nothing to judge and nothing written (an If-Match on a missing row is the view's 404).
  t.equal(repo.update({ id: 99 }, { price: 1 }, { precondition: judge }), null, 'a conditional update of no row is null')
  t.equal(repo.delete({ id: 99 }, { precondition: judge }), false, 'a conditional delete of no row is false')
  t.same(judged, [], 'and the precondition judged nothing')

  // Nothing to change: the row as it is, judged, its touch column not stamped.
  t.same(repo.update({ id: 1 }, {}, { precondition: judge }), { id: 1, name: 'Lamp', price: 30, category: 'light', description: 'A desk lamp', tenant: 'a', updated_at: null })
  t.same(judged, [1])

  // By other criteria, as the unconditional write: the first row by primary key, and only it.
  t.equal(repo.update({ price__lt: 100 }, { description: 'first' }, { precondition: judge })?.id, 1)
  t.same(repo.list({ description: 'first' }).map((p) => p.id), [1], 'one row written')
  t.same(judged, [1, 1])

  t.throws(() => repo.update({ id: 2 }, { price: 1 }, { precondition: refuse }), { message: 'refused' })
  t.throws(() => repo.delete({ id: 2 }, { precondition: refuse }), { message: 'refused' })
  t.equal(repo.get({ id: 2 })?.price, 12, 'a refused write changes nothing')
  t.equal(repo.delete({ id: 4 }, { precondition: judge }), true, 'a conditional delete of a row is true')
  t.same(repo.list({}).map((p) => p.id), [1, 2, 3, 5], 'and removes that row, no other')
  t.same(judged, [1, 1, 4])
})

test('SqliteRepository: bulk updates judge and write their rows in primary-key order, whatever order the client sent', async (t) => {
  const db = database([...SEED_ROWS, [9, 'Vase', 9, null, ''], [10, 'Clock', 10, null, '']])
  t.teardown(() => db.close())
  const repo = repository(db)
  const seen: unknown[] = []
  const record = (row: unknown): void => { seen.push((row as ProductT).id) }
  // Numbers by value (10 after 9, which their text would put first), the order every request agrees on.
  repo.bulkUpdate([10, 2, 9, 1].map((id) => ({ id, price: id })), { precondition: record })
  t.same(seen, [1, 2, 9, 10], 'each row judged in key order')
  t.same(repo.list({ id__in: [1, 2, 9, 10] }).map((p) => p.price), [1, 2, 9, 10], 'and written')
  // The row a refusal names is the first missing one in that order; its index is the client's.
  for (const precondition of [undefined, record]) {
    t.throws(() => repo.bulkUpdate([{ id: 12, price: 1 }, { id: 1, price: 5 }, { id: 8, price: 1 }], { precondition }),
      { name: 'NotFound', detail: 'Item 2: no row has id 8.' }, `the first missing key named (precondition: ${String(precondition !== undefined)})`)
  }
  t.equal(repo.get({ id: 1 })?.price, 1, 'nothing written')

  db.exec('CREATE TABLE codes (code TEXT PRIMARY KEY, n INTEGER NOT NULL)')
  db.exec("INSERT INTO codes VALUES ('a', 1), ('b', 2), ('c', 3)")
  const codes = new SqliteRepository<{ code: string, n: number }>(db, { table: 'codes', columns: ['code', 'n'], idColumn: 'code' })
  const codesSeen: unknown[] = []
  codes.bulkUpdate([{ code: 'c', n: 30 }, { code: 'a', n: 10 }, { code: 'b', n: 20 }], { precondition: (row: unknown) => { codesSeen.push((row as { code: string }).code) } })
  t.same(codesSeen, ['a', 'b', 'c'], 'text keys by their text')
  t.throws(() => codes.bulkUpdate([{ code: 'z', n: 1 }, { code: 'y', n: 1 }]), { name: 'NotFound', detail: 'Item 1: no row has code "y".' })
})

test('SqliteRepository: checked bulk writes over more rows than one statement names write each row once', async (t) => {
  const db = database([])
  t.teardown(() => db.close())
  const insert = db.prepare('INSERT INTO products (id, name, price) VALUES (?, ?, ?)')
  // 1201 rows: the keys are written 500 to a statement, so three statements, the last of one key.
  for (let id = 1; id <= 1201; id++) insert.run(id, `item ${id}`, id)
  const repo = repository(db)
  let judged = 0
  const count = (): void => { judged++ }
  const written = repo.updateMany({ description: 'many' }, { price__gt: 0, precondition: count })
  t.equal(written.length, 1201, 'every selected row answered')
  t.equal(new Set(written.map((p) => p.id)).size, 1201, 'each once')
  t.ok(written.every((p) => p.description === 'many'), 'as written')
  t.equal(judged, 1201, 'each judged once')
  t.equal(repo.count({ description: 'many' }), 1201, 'every row written')
  judged = 0
  repo.deleteMany({ price__gt: 100, precondition: count })
  t.equal(judged, 1101)
  t.same(repo.list({}).map((p) => p.id), Array.from({ length: 100 }, (_, i) => i + 1), 'every selected row deleted, no other')
})

test('SQLite: a plain update inside an open transaction is its one statement, no savepoint around it', async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const statements: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => { statements.push(String(sql)) } })
  db.exec(createTable('INTEGER'))
  db.prepare('INSERT INTO products (id, name, price, category, description) VALUES (?, ?, ?, ?, ?)').run(...SEED_ROWS[0])
  const products = new SqliteRepository<ProductT>(db, TableOptions)
  statements.length = 0
  const written = products.transaction(() => products.update({ id: SEED_ROWS[0][0] }, { price: 3 }))
  t.equal(written?.price, 3)
  t.same(statements.map((sql) => sql.split(' ')[0]), ['BEGIN', 'UPDATE', 'COMMIT'],
    'SQLite undoes a failed statement alone: the update needs no savepoint of its own')
  // A failed one leaves the transaction as it was, the rows written before it included.
  t.throws(() => products.transaction(() => {
    products.update({ id: SEED_ROWS[0][0] }, { price: 4 })
    t.throws(() => products.update({ id: SEED_ROWS[0][0] }, { name: null }), Conflict, 'NOT NULL refused: a 409')
    t.equal(products.get({ id: SEED_ROWS[0][0] })?.price, 4, 'the transaction goes on with the first update')
    throw new Error('roll back')
  }), { message: 'roll back' })
  t.equal(products.get({ id: SEED_ROWS[0][0] })?.price, 3, 'and rolls back whole')
})

test('SQLite: prepared statements are kept, 256 of them, the one prepared longest ago dropped first', async (t) => {
  const db = database()
  const prepared: string[] = []
  // The repository prepares through the database object it was given: count what it prepares.
  const counting = new Proxy(db, {
    get (target, key) {
      // The table's own description (PRAGMA table_info) is read once, not through the cache.
      if (key === 'prepare') {
        return (sql: string) => {
          if (!sql.startsWith('PRAGMA')) prepared.push(sql)
          return recording(target.prepare(sql), sql.split(' ')[0])
        }
      }
      const value: unknown = Reflect.get(target, key, target)
      return typeof value === 'function' ? (value as (...args: unknown[]) => unknown).bind(target) : value
    }
  })
  // How each statement is stepped: a one-row statement with `.get()`, which stops after the row
  // (with a trigger on the table, `.all()` on a one-row UPDATE ... RETURNING was twice the time).
  const calls: string[] = []
  function recording<S extends object> (statement: S, verb: string): S {
    return new Proxy(statement, {
      get (target, key) {
        const value: unknown = Reflect.get(target, key, target)
        if (typeof value !== 'function') return value
        return (...args: unknown[]) => {
          if (key === 'get' || key === 'all' || key === 'run') calls.push(`${verb} ${key}`)
          return (value as (...a: unknown[]) => unknown).apply(target, args)
        }
      }
    })
  }
  const products = new SqliteRepository<ProductT>(counting, TableOptions)
  products.create({ id: 1000, name: 'Stool', price: 5, category: 'chairs', description: '' })
  products.update({ id: 1000 }, { price: 6 })
  products.update({ id: 1000 }, { price: 7 }, { precondition: () => {} })
  products.list({ id: 1000 })
  t.same(calls.filter((call) => /^(INSERT|UPDATE|SELECT) /.test(call)), [
    'INSERT get', 'UPDATE get', 'SELECT get', 'UPDATE get', 'SELECT all'
  ], 'a create, an update, the read of a conditional update and its write: .get(); a list: .all()')
  prepared.length = 0
  // Each repository keeps its own statements.
  const fresh = new SqliteRepository<ProductT>(counting, TableOptions)
  const [id] = SEED_ROWS[0]
  fresh.get({ id })
  fresh.list({ price__gt: 1 })
  fresh.get({ id })
  t.equal(prepared.length, 2, 'a text prepared once is used again while it is kept')
  // Each length of an `in` list is a text of its own.
  for (let n = 1; n <= 254; n++) fresh.list({ id__in: Array.from({ length: n }, (_, i) => i + 1) })
  t.equal(prepared.length, 256)
  fresh.get({ id })
  t.equal(prepared.length, 256, '256 texts kept: the first is still there')
  fresh.list({ id__in: Array.from({ length: 255 }, (_, i) => i + 1) })
  fresh.get({ id })
  t.equal(prepared.length, 258, 'one more text drops the one prepared longest ago, used or not since')
})
