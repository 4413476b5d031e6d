import { test } from 'tap'
import Database from 'better-sqlite3'
import { Type } from '@sinclair/typebox'
import { BulkAPIViewSet, CursorPaginationFilter, GenericListAPIView, GenericViewSet, PaginationFilter, mix } from '../lib/index.js'
import { SqliteRepository } from '../lib/sql-index.js'
import { build, problem } from './helpers.js'
import { OPERATOR_CASES, Product, ProductFilter, ProductIn, SEED_ROWS, TableOptions, createTable, randomRollbacks, type ProductT } from './sql-cases.js'

function database (): Database.Database {
  const db = new Database(':memory:')
  db.exec(createTable('INTEGER'))
  const insert = db.prepare('INSERT INTO products (id, name, price, category, description) VALUES (?, ?, ?, ?, ?)')
  for (const row of SEED_ROWS) insert.run(...row)
  return db
}

const repository = (db: Database.Database) => new SqliteRepository<ProductT>(db, TableOptions)

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
  t.same({ ids: page.items.map((p: ProductT) => p.id), total: page.total_items, pages: page.total_pages }, { ids: [1, 4], total: 5, pages: 3 })
  for (const sort of ['category', '-category', 'price', '-price']) {
    const seen: number[] = []
    let url: string | null = `/cursor?page_size=2&sort=${sort}`
    while (url !== null) {
      const body: { items: ProductT[], next_page: string | null } = (await app.inject(url)).json()
      seen.push(...body.items.map((p) => p.id))
      url = body.next_page === null ? null : `/cursor?page_size=2&sort=${sort}&cursor=${body.next_page}`
    }
    t.same([...seen].sort(), [1, 2, 3, 4, 5], `sort=${sort}: every row once, nulls included`)
  }
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
