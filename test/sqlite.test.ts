import { test } from 'tap'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import { BaseFilter, BulkAPIViewSet, CursorPaginationFilter, GenericListAPIView, GenericViewSet, PaginationFilter, mix } from '../lib/index.js'
import { SqliteRepository } from '../lib/sql-index.js'
import { build, problem } from './helpers.js'

const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  category: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  tenant: Type.String(),
  updated_at: Type.Union([Type.String(), Type.Null()])
}, { $id: 'Product' })
type ProductT = Static<typeof Product>
const ProductIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number(), category: Type.Optional(Type.Union([Type.String(), Type.Null()])), description: Type.Optional(Type.String()) })
const Columns = ['id', 'name', 'price', 'category', 'description', 'tenant', 'updated_at']

function database (): Database.Database {
  const db = new Database(':memory:')
  db.exec(`CREATE TABLE products (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    price REAL NOT NULL CHECK (price >= 0),
    category TEXT,
    description TEXT NOT NULL DEFAULT '',
    tenant TEXT NOT NULL DEFAULT 'a',
    updated_at TEXT
  )`)
  const insert = db.prepare('INSERT INTO products (id, name, price, category, description) VALUES (?, ?, ?, ?, ?)')
  for (const row of [[1, 'Lamp', 30, 'light', 'A desk lamp'], [2, 'Lantern', 12, 'light', 'For camping'], [3, 'Desk', 120, 'furniture', 'Oak'],
    [4, 'Chair', 45, 'furniture', 'With a lamp holder'], [5, 'Gift card', 25, null, '100% fun_stuff']]) insert.run(...row)
  return db
}

const repository = (db: Database.Database) => new SqliteRepository<ProductT>(db, { table: 'products', columns: Columns, touchColumn: 'updated_at', optionKeys: ['batch_size'], scopeFields: ['tenant'] })

class ProductFilter extends BaseFilter {
  static override fields = { name: Type.String(), category: Type.String() }
  static override operatorFields = { price: Type.Number(), description: Type.String() }
  static override operators = {
    price: ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const,
    name: ['in', 'not_in', 'like', 'ilike'] as const,
    category: ['is_null'] as const,
    description: ['like'] as const
  }

  static override orderingFields = ['name', 'price', 'category']
  static override searchFields = ['name', 'description']
}

test('SQLite: the operator table of the memory repository, the same answers', async (t) => {
  const db = database()
  class Products extends GenericListAPIView {
    static override responseSchema = Product
    static override filter = ProductFilter
    static override repository = repository(db) as never
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  const ids = async (query: string) => (await app.inject(`/products?${query}`)).json().map((p: ProductT) => p.id)
  const cases: Array<[string, number[]]> = [
    ['name=Lamp', [1]], ['category=light', [1, 2]], ['price__eq=45', [4]], ['price__ne=45', [1, 2, 3, 5]], ['price__lt=25', [2]], ['price__le=25', [2, 5]],
    ['price__gt=45', [3]], ['price__ge=45', [3, 4]], ['name__in=Desk&name__in=Chair', [3, 4]], ['name__not_in=Desk&name__not_in=Chair', [1, 2, 5]],
    ['category__is_null=true', [5]], ['category__is_null=false', [1, 2, 3, 4]], ['name__like=La%25', [1, 2]], ['name__like=la%25', []], ['name__ilike=la%25', [1, 2]],
    ['name__like=L_mp', [1]], ['description__like=100%25%20fun_stuff', [5]], ['q=lamp', [1, 4]], ['q=LAMP&price__gt=40', [4]], ['q=100%25', [5]], ['q=_', [5]],
    ['sort=price', [2, 5, 1, 4, 3]], ['sort=-price', [3, 4, 1, 5, 2]], ['sort=category&sort=-price', [3, 4, 1, 2, 5]], ['sort=-category&sort=name', [5, 1, 2, 4, 3]]
  ]
  for (const [query, expected] of cases) t.same(await ids(query), expected, query)
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
  const repo = repository(db)
  class Products extends mix(BulkAPIViewSet, GenericViewSet) {
    static override responseSchema = Product
    static override createSchema = ProductIn
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override filter = ProductFilter
    static override repository = repo as never
    static override repositoryOptions = { batch_size: 50 }
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] }, { bodyLimit: 10 * 1024 * 1024 })
  t.teardown(() => app.close())
  const snapshot = () => JSON.stringify(db.prepare('SELECT * FROM products ORDER BY id').all())
  let seed = 7
  const random = (n: number) => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  let failures = 0
  for (let round = 0; round < 200; round++) {
    const before = snapshot()
    const size = 2 + random(20)
    const bad = random(size)
    const kind = round % 3
    let res
    if (kind === 0) {
      // An item whose price breaks the table's CHECK constraint: only the database knows.
      const items = Array.from({ length: size }, (_, i) => ({ name: `r${round}-${i}`, price: i === bad ? -1 : i }))
      res = await app.inject({ method: 'POST', url: '/products/bulk', payload: items })
    } else if (kind === 1) {
      // An item whose name repeats an existing row's: the UNIQUE constraint refuses it.
      const taken = (db.prepare('SELECT name FROM products WHERE id = 3').get() as { name: string }).name
      const items = Array.from({ length: size }, (_, i) => ({ name: i === bad ? taken : `r${round}-${i}`, price: i }))
      res = await app.inject({ method: 'POST', url: '/products/bulk', payload: items })
    } else {
      // PUT over existing rows (never row 3) where one item takes row 3's name.
      const taken = (db.prepare('SELECT name FROM products WHERE id = 3').get() as { name: string }).name
      const rows = db.prepare('SELECT id FROM products WHERE id <> 3 ORDER BY id LIMIT ?').all(Math.min(size, 4)) as Array<{ id: number }>
      const clash = bad % rows.length
      const items = rows.map((r, i) => ({ id: r.id, name: i === clash ? taken : `renamed-${round}-${r.id}`, price: 1 }))
      res = await app.inject({ method: 'PUT', url: '/products/bulk', payload: items })
    }
    if (res.statusCode >= 400) failures++
    t.equal(res.statusCode, 409, `round ${round}: refused`)
    t.equal(snapshot(), before, `round ${round}: nothing changed`)
  }
  t.equal(failures, 200, 'every batch failed inside the database and was rolled back')

  const ok = await app.inject({ method: 'POST', url: '/products/bulk', payload: [{ name: 'fine-1', price: 1 }, { name: 'fine-2', price: 2 }] })
  t.equal(ok.statusCode, 201)
  t.same(ok.json().map((p: ProductT) => p.name), ['fine-1', 'fine-2'])
  const many = await app.inject({ method: 'PATCH', url: '/products/bulk?name__like=fine-%25', payload: { price: 9 } })
  t.same(many.json().map((p: ProductT) => p.price), [9, 9])
  t.equal((await app.inject({ method: 'DELETE', url: '/products/bulk?name__like=fine-%25' })).statusCode, 204)
  t.equal((db.prepare("SELECT COUNT(*) AS n FROM products WHERE name LIKE 'fine-%'").get() as { n: number }).n, 0)
  problem(t, await app.inject({ method: 'PUT', url: '/products/bulk', payload: [{ id: 999, name: 'ghost', price: 1 }] }), 404)
})
