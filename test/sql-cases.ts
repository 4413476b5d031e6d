import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import type { ViewEntry } from '../lib/types.js'
import {
  AsyncGenericListAPIView, AsyncGenericViewSet, BaseFilter, CursorPaginationFilter, GenericListAPIView, GenericViewSet,
  MemoryRepository, OffsetLimitFilter, composeFilters
} from '../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../lib/bulk.js'
import type { SqlTableOptions } from '../lib/stores/sql/index.js'
import { build } from './helpers.js'

export const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  category: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  tenant: Type.String(),
  updated_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()])
}, { $id: 'Product' })
export type ProductT = Static<typeof Product>
export const ProductIn = Type.Object(
  {
    name: Type.String({ minLength: 1 }),
    price: Type.Number(),
    category: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    description: Type.Optional(Type.String())
  }
)
export const Columns: Array<keyof ProductT> = ['id', 'name', 'price', 'category', 'description', 'tenant', 'updated_at']
export const TableOptions = { table: 'products', columns: Columns, touchColumn: 'updated_at', optionKeys: ['batch_size'], scopeFields: ['tenant'] } satisfies SqlTableOptions<ProductT>

/** The table both stores test against; `id` is declared by each dialect. */
export const createTable = (id: string): string => `CREATE TABLE products (
  id ${id} PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  price REAL NOT NULL CHECK (price >= 0),
  category TEXT,
  description TEXT NOT NULL DEFAULT '',
  tenant TEXT NOT NULL DEFAULT 'a',
  updated_at TEXT
)`
export const SEED_ROWS: Array<[number, string, number, string | null, string]> = [[1, 'Lamp', 30, 'light', 'A desk lamp'], [2, 'Lantern', 12, 'light', 'For camping'], [3, 'Desk', 120, 'furniture', 'Oak'],
  [4, 'Chair', 45, 'furniture', 'With a lamp holder'], [5, 'Gift card', 25, null, '100% fun_stuff']]

export class ProductFilter extends BaseFilter {
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

/** One row per operator case, the same answers on every store (the in-memory one included). */
export const OPERATOR_CASES: Array<[string, number[]]> = [
  ['name=Lamp', [1]], ['category=light', [1, 2]], ['price__eq=45', [4]], ['price__ne=45', [1, 2, 3, 5]], ['price__lt=25', [2]], ['price__le=25', [2, 5]],
  ['price__gt=45', [3]], ['price__ge=45', [3, 4]], ['name__in=Desk&name__in=Chair', [3, 4]], ['name__not_in=Desk&name__not_in=Chair', [1, 2, 5]],
  ['category__is_null=true', [5]], ['category__is_null=false', [1, 2, 3, 4]], ['name__like=La%25', [1, 2]], ['name__like=la%25', []], ['name__ilike=la%25', [1, 2]],
  ['name__like=L_mp', [1]], ['description__like=100%25%20fun_stuff', [5]], ['q=lamp', [1, 4]], ['q=LAMP&price__gt=40', [4]], ['q=100%25', [5]], ['q=_', [5]],
  ['description__like=100%5C%25%20fun%5C_stuff', [5]], ['name__like=Gift%5C_card', []], ['name__in=Desk', [3]],
  ['sort=price', [2, 5, 1, 4, 3]], ['sort=-price', [3, 4, 1, 5, 2]], ['sort=category&sort=-price', [3, 4, 1, 2, 5]], ['sort=-category&sort=name', [5, 1, 2, 4, 3]]
]

/** The seed of this run's random choices: `FASTIFY_VIEWS_SEED` to repeat a run, else the clock. */
export function testSeed (): number {
  const raw = process.env.FASTIFY_VIEWS_SEED
  if (raw === undefined || raw === '') return (Date.now() ^ (process.pid << 16)) >>> 0
  const seed = Number(raw)
  if (!Number.isSafeInteger(seed)) throw new TypeError(`FASTIFY_VIEWS_SEED must be an integer, not ${JSON.stringify(raw)}`)
  return seed >>> 0
}

/** mulberry32: a 32-bit PRNG whose every output bit is mixed (unlike an LCG's low bits). `random(n)` is an integer in [0, n). */
export function mulberry32 (seed: number): (n: number) => number {
  let state = seed >>> 0
  return (n) => {
    state = (state + 0x6D2B79F5) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 15), z | 1)
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
    return Math.floor(((z ^ (z >>> 14)) >>> 0) / 4294967296 * n)
  }
}

type Position = 'first' | 'middle' | 'last'
const positionOf = (index: number, size: number): Position => index === 0 ? 'first' : index === size - 1 ? 'last' : 'middle'

/**
 * 200 bulk requests in four kinds (POST with a CHECK failure, POST with a UNIQUE clash, PUT
 * with each), each with one item that only the database refuses at a random position: every
 * one is a 409 and leaves every row as it was. Positions are drawn from mulberry32 with a
 * printed seed; POST batches (2..21 items) take the first or the last item a quarter of the
 * time each, so both edges come up in every run. The test asserts that every kind failed
 * at its first, a middle and its last item, and PUT at each of its four positions.
 */
export async function randomRollbacks (
  t: Test,
  app: FastifyInstance,
  snapshot: () => Promise<string>,
  query: (sql: string) => Promise<Array<Record<string, unknown>>>
): Promise<void> {
  const seed = testSeed()
  t.comment(`randomRollbacks seed ${seed} (FASTIFY_VIEWS_SEED=${seed} repeats this run)`)
  const random = mulberry32(seed)
  const edgeWeighted = (size: number): number => {
    const r = random(4)
    return r === 0 ? 0 : r === 1 ? size - 1 : random(size)
  }
  const kinds = ['POST check', 'POST unique', 'PUT unique', 'PUT check'] as const
  const positions = new Map<string, Set<string>>(kinds.map((k) => [k, new Set()]))
  let refused = 0
  for (let round = 0; round < 200; round++) {
    const kind = kinds[round % kinds.length]
    const before = await snapshot()
    const taken = String((await query('SELECT name FROM products WHERE id = 3'))[0].name)
    let res
    if (kind.startsWith('POST')) {
      const size = 2 + random(20)
      const bad = edgeWeighted(size)
      positions.get(kind)!.add(positionOf(bad, size))
      const items = Array.from({ length: size }, (_, i) => i !== bad
        ? { name: `r${round}-${i}`, price: i }
        : kind === 'POST check' ? { name: `r${round}-${i}`, price: -1 } : { name: taken, price: i })
      res = await app.inject({ method: 'POST', url: '/products/bulk', payload: items })
    } else {
      const ids = (await query('SELECT id FROM products WHERE id <> 3 ORDER BY id LIMIT 4')).map((r) => Number(r.id))
      for (let i = ids.length - 1; i > 0; i--) { const j = random(i + 1); [ids[i], ids[j]] = [ids[j], ids[i]] }
      const bad = random(ids.length)
      positions.get(kind)!.add(`${positionOf(bad, ids.length)} ${bad}`)
      const items = ids.map((id, i) => i !== bad
        ? { id, name: `renamed-${round}-${id}`, price: 1 }
        : kind === 'PUT unique' ? { id, name: taken, price: 1 } : { id, name: `renamed-${round}-${id}`, price: -1 })
      res = await app.inject({ method: 'PUT', url: '/products/bulk', payload: items })
    }
    if (res.statusCode === 409) refused++
    else t.fail(`round ${round} (${kind}, seed ${seed}): ${res.statusCode} ${res.body}`)
    if (await snapshot() !== before) t.fail(`round ${round} (${kind}, seed ${seed}): the table changed`)
  }
  t.equal(refused, 200, 'every batch failed inside the database, and every one left the table as it was')
  const covered = Object.fromEntries([...positions].map(([kind, set]) => [kind, [...set].sort()]))
  t.same(covered, {
    'POST check': ['first', 'last', 'middle'],
    'POST unique': ['first', 'last', 'middle'],
    'PUT unique': ['first 0', 'last 3', 'middle 1', 'middle 2'],
    'PUT check': ['first 0', 'last 3', 'middle 1', 'middle 2']
  }, `the failing item was first, in the middle and last in every kind of request (seed ${seed})`)
}

/** Rows added to the seed for paging: nulls and ties in every sort key. */
export const PAGING_ROWS: Array<[number, string, number, string | null, string]> = [[6, 'Mirror', 30, null, ''], [7, 'Rug', 12, 'textile', ''], [8, 'Shelf', 45, null, ''],
  [9, 'Sofa', 30, 'furniture', ''], [10, 'Stool', 25, 'furniture', ''], [11, 'Table', 120, null, ''], [12, 'Vase', 12, 'light', '']]

/** The sort keys paged through: nullable and tied keys, both directions, alone and combined, and none (the key alone). */
const PAGED_SORTS = [[], ['category'], ['-category'], ['price'], ['-price'], ['category', '-price'], ['-category', 'name'], ['price', 'category'], ['-price', '-category'], ['-name']]

/**
 * Three list views over one repository: `/cursor` (keyset pages), `/offset` (offset and
 * limit) and `/all` (no pagination), each with the operators, search and sort of `ProductFilter`.
 */
export function pagingViews (repository: unknown, family: 'sync' | 'async'): ViewEntry[] {
  const Base = (family === 'sync' ? GenericListAPIView : AsyncGenericListAPIView) as typeof GenericListAPIView
  const view = (filter: typeof BaseFilter) => class extends Base {
    static override responseSchema = Product
    static override filter = filter
    static override repository = repository as never
  }
  return [
    { view: view(composeFilters(ProductFilter, CursorPaginationFilter)), prefix: '/cursor' },
    { view: view(composeFilters(ProductFilter, OffsetLimitFilter)), prefix: '/offset' },
    { view: view(ProductFilter), prefix: '/all' },
    { view: view(RenamedFilter), prefix: '/renamed' }
  ]
}

/** Parameters that compare fields of other names (`fieldOf`): `kind` is `category`, `cost__lt` is `price__lt`, `label__in` is `name__in`. */
class RenamedFilter extends BaseFilter.with({
  fields: { kind: Type.String(), name: Type.String() },
  operatorFields: { cost: Type.Number(), label: Type.String() },
  operators: { cost: ['lt', 'ge'], label: ['in'], kind: ['is_null'] },
  fieldOf: { kind: 'category', cost: 'price', label: 'name' },
  orderingFields: ['name']
}) {}

/** Each request to `/renamed` answers as the one naming the fields themselves to `/all`. */
const RENAMED_REQUESTS: Array<[string, string]> = [
  ['kind=light', 'category=light'], ['cost__lt=40', 'price__lt=40'], ['cost__ge=30&kind=furniture', 'price__ge=30&category=furniture'],
  ['label__in=Lamp&label__in=Desk', 'name__in=Lamp&name__in=Desk'], ['kind__is_null=true', 'category__is_null=true'],
  ['kind=light&category=furniture', 'category=light'], ['name=Lamp', 'name=Lamp']
]

/** Parameters renamed by `fieldOf` select what the fields' own names select, on this store and the memory repository. */
async function checkRenamed (t: Test, app: FastifyInstance, memory: FastifyInstance): Promise<void> {
  for (const [renamed, own] of RENAMED_REQUESTS) {
    const [got, expected] = await Promise.all([app.inject(`/renamed?sort=name&${renamed}`), app.inject(`/all?sort=name&${own}`)])
    t.equal(got.statusCode, 200, renamed)
    t.not(got.json().length, 0, `${renamed}: selects rows`)
    t.same(got.json(), expected.json(), `${renamed} selects what ${own} does`)
    t.same(got.json(), (await memory.inject(`/renamed?sort=name&${renamed}`)).json(), `${renamed}: as the memory repository answers it`)
  }
  const bad = await app.inject('/renamed?cost__lt=cheap')
  t.equal(bad.statusCode, 400)
  t.match(bad.json().errors, [{ parameter: 'cost__lt' }], 'a bad value is named by the parameter the client sent')
}

interface CursorBody { items: ProductT[], next_page: string | null, previous_page: string | null }

/**
 * Pages through `SEED_ROWS` and `PAGING_ROWS` on a store, served by `pagingViews`, and
 * compares every page, whole (items and cursors), with the same request to the memory
 * repository: cursor pages forward to the end and back by `previous_page` to the start,
 * one, three and five rows at a time; offset pages at several windows.
 */
export async function checkPaging (t: Test, app: FastifyInstance): Promise<void> {
  const rows = [...SEED_ROWS, ...PAGING_ROWS].map(([id, name, price, category, description]) => ({ id, name, price, category, description, tenant: 'a', updated_at: null }))
  const memory = await build({ views: pagingViews(new MemoryRepository({ rows }), 'sync') })
  t.teardown(() => memory.close())
  await checkRenamed(t, app, memory)
  const get = async (target: FastifyInstance, url: string): Promise<any> => {
    const res = await target.inject(url)
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  for (const sort of PAGED_SORTS) {
    for (const filter of ['', '&price__lt=100', '&q=a']) {
      const base = `${sort.map((k) => `&sort=${k}`).join('')}${filter}`
      const all: number[] = (await get(memory, `/all?${base.slice(1)}`)).map((p: ProductT) => p.id)
      t.same((await get(app, `/all?${base.slice(1)}`)).map((p: ProductT) => p.id), all, `${base}: the memory repository's order`)
      for (const size of [1, 3, 5]) {
        const label = `${base} page_size=${size}`
        const forward: CursorBody[] = []
        const mismatches: string[] = []
        let url: string | null = `/cursor?page_size=${size}${base}`
        while (url !== null) {
          const [body, expected]: CursorBody[] = [await get(app, url), await get(memory, url)]
          if (JSON.stringify(body) !== JSON.stringify(expected)) mismatches.push(url)
          forward.push(body)
          url = body.next_page === null ? null : `/cursor?page_size=${size}${base}&cursor=${body.next_page}`
          if (forward.length > rows.length + 1) throw new Error(`${label}: the pages do not end`)
        }
        const backward: CursorBody[] = [forward[forward.length - 1]]
        for (let page = forward[forward.length - 1]; page.previous_page !== null;) {
          const back = `/cursor?page_size=${size}${base}&cursor=${page.previous_page}`
          page = await get(app, back)
          if (JSON.stringify(page) !== JSON.stringify(await get(memory, back))) mismatches.push(back)
          backward.unshift(page)
          if (backward.length > forward.length) break
        }
        const ids = (pages: CursorBody[]) => pages.map((p) => p.items.map((i) => i.id))
        t.same(mismatches, [], `${label}: every page, its items and cursors, as the memory repository answers it`)
        t.same(forward.flatMap((p) => p.items.map((i) => i.id)), all, `${label}: forward, every row once, in the memory repository's order`)
        t.same(ids(backward), ids(forward), `${label}: previous_page walks back through the same pages`)
        t.equal(forward[0].previous_page, null, `${label}: no previous page before the first`)
      }
      for (const [offset, limit] of [[0, 5], [5, 5], [10, 5], [3, 4], [11, 1], [12, 3], [0, 100]]) {
        const url = `/offset?offset=${offset}&limit=${limit}${base}`
        const body = await get(app, url)
        t.same(body, await get(memory, url), url)
        t.same(body.items.map((p: ProductT) => p.id), all.slice(offset, offset + limit), `${url}: a window of the full order`)
      }
    }
  }
}

/**
 * Strings that mean something to SQL, LIKE, GLOB, the drivers' placeholders or a query
 * string. None differ from another by case only, and their letters are lower-case
 * outside ASCII (SQLite's `lower()` lowers ASCII only), so search answers as JavaScript would.
 */
export const NASTY = [
  "x'; DROP TABLE products; --", 'Robert"); DELETE FROM products WHERE ("1"="1', "' OR '1'='1", "admin'--", '-- comment', '; SELECT 1;', '/* c */',
  '100%', '%', '_', 'a_b%c', '%%__', 'back\\slash', '\\', '\\%', 'end\\', '$1', '$1::text', '$$', '?', '? OR 1=1', '??',
  '"quoted"', '`tick`', '[a-z]*?', 'a&b=c#d+e', '\'', '"', 'ünï ☃ 雪 😀', 'tab\tnew\nline', ' spaced '
]

/** `s` as a LIKE pattern that matches `s` only. */
export const likeLiteral = (s: string): string => s.replace(/[\\%_]/g, (c) => `\\${c}`)

/**
 * CRUD and bulk views over the products table whose bodies carry every string column:
 * create and PUT `{ name, price, category?, description? }`, PATCH any subset, bulk PUT with `id`.
 */
export function literalView (repository: unknown, family: 'sync' | 'async'): ViewEntry {
  const Base = family === 'sync' ? mix(BulkAPIViewSet, GenericViewSet) : mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)
  class Products extends (Base as typeof GenericViewSet) {
    static override responseSchema = Product
    static override createSchema = ProductIn
    static override updateSchema = ProductIn
    static bulkUpdateSchema = Type.Object({ id: Type.Integer(), ...ProductIn.properties })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = ProductFilter
    static override repository = repository as never
    static override repositoryOptions = { batch_size: 50 }
  }
  return { view: Products, prefix: '/products' }
}

/**
 * Every string of `NASTY` through every string field and every filter operator, served by
 * `literalView`: created, found by eq, in, not_in, like, ilike, search and category, written
 * by PUT and PATCH, and by bulk POST, PUT, PATCH (values and filter) and DELETE (filter).
 * The seed rows stay as they were, and each string is stored exactly as sent.
 */
export async function literalStrings (
  t: Test,
  app: FastifyInstance,
  query: (sql: string) => Promise<Array<Record<string, unknown>>>
): Promise<void> {
  const seed = await query('SELECT * FROM products ORDER BY id')
  const enc = encodeURIComponent
  const list = async (qs: string): Promise<ProductT[]> => {
    const res = await app.inject(`/products?${qs}`)
    if (res.statusCode !== 200) throw new Error(`?${qs}: ${res.statusCode} ${res.body}`)
    return res.json()
  }
  const ids = async (qs: string): Promise<number[]> => (await list(qs)).map((p) => p.id)
  const send = async (method: 'POST' | 'PUT' | 'PATCH' | 'DELETE', url: string, payload?: object): Promise<{ status: number, body: any }> => {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
    return { status: res.statusCode, body: res.body === '' ? undefined : res.json() }
  }
  const strings = (p: Partial<ProductT>) => ({ name: p.name, category: p.category, description: p.description })
  for (const s of NASTY) {
    const label = JSON.stringify(s)
    const created = await send('POST', '/products', { name: s, price: 1, category: s, description: s })
    t.equal(created.status, 201, `POST ${label}`)
    const id: number = created.body.id
    t.same(strings(created.body), { name: s, category: s, description: s }, `${label}: stored as sent`)
    t.same(strings((await send('PUT', `/products/${id}`, { name: s, price: 2, category: s, description: s })).body), { name: s, category: s, description: s }, `${label}: PUT`)
    t.same(strings((await app.inject(`/products/${id}`)).json()), { name: s, category: s, description: s }, `${label}: read back`)
    const everyone = await ids('')
    const matches: Array<[string, number[]]> = [
      [`name=${enc(s)}`, [id]],
      [`name__in=${enc(s)}&name__in=Lamp`, [1, id]],
      [`name__in=${enc(s)}`, [id]],
      [`name__not_in=${enc(s)}`, everyone.filter((x) => x !== id)],
      [`name__not_in=${enc(s)}&name__not_in=Lamp`, everyone.filter((x) => x !== id && x !== 1)],
      [`name__like=${enc(likeLiteral(s))}`, [id]],
      [`name__ilike=${enc(likeLiteral(s))}`, [id]],
      [`name__like=${enc(`${likeLiteral(s)}%`)}&category=${enc(s)}`, [id]],
      [`category=${enc(s)}`, [id]],
      [`description__like=${enc(likeLiteral(s))}`, [id]],
      [`q=${enc(s)}`, (await list('')).filter((p) => [p.name, p.description].some((v) => v.toLowerCase().includes(s.toLowerCase()))).map((p) => p.id)]
    ]
    for (const [qs, expected] of matches) t.same(await ids(qs), expected, `${label}: ?${qs}`)
    t.ok((await ids(`q=${enc(s)}`)).includes(id), `${label}: search finds it`)

    const patched = await send('PATCH', `/products/${id}`, { name: `${s}#p`, category: s, description: `${s}#p` })
    t.same(strings(patched.body), { name: `${s}#p`, category: s, description: `${s}#p` }, `${label}: PATCH`)
    t.equal((await send('PATCH', `/products/${id}`, { name: s, description: s })).status, 200)

    const bulk = await send('POST', '/products/bulk', [1, 2].map((n) => ({ name: `${s}#${n}`, price: n, category: s, description: s })))
    t.equal(bulk.status, 201, `${label}: bulk POST`)
    const [b1, b2]: number[] = bulk.body.map((p: ProductT) => p.id)
    t.same(bulk.body.map(strings), [1, 2].map((n) => ({ name: `${s}#${n}`, category: s, description: s })))
    t.equal((await send('PUT', '/products/bulk', [b1, b2].map((b, i) => ({ id: b, name: `${s}#${i + 1}`, price: 3, category: s, description: `${s}#put` })))).status, 204, `${label}: bulk PUT`)
    t.same((await list(`category=${enc(s)}`)).map(strings), [{ name: s, category: s, description: s }, ...[1, 2].map((n) => ({ name: `${s}#${n}`, category: s, description: `${s}#put` }))])
    const many = await send('PATCH', `/products/bulk?category=${enc(s)}&name__like=${enc(`${likeLiteral(s)}#%`)}`, { description: s, category: `${s}#m` })
    t.same(many.body.map((p: ProductT) => p.id).sort((a: number, b: number) => a - b), [b1, b2], `${label}: bulk PATCH by category and like`)
    t.same(many.body.map(strings), [1, 2].map((n) => ({ name: `${s}#${n}`, category: `${s}#m`, description: s })))
    t.same((await send('PATCH', `/products/bulk?name__in=${enc(`${s}#1`)}&name__in=${enc(`${s}#2`)}`, { category: s })).body.length, 2, `${label}: bulk PATCH by in`)
    t.same((await send('PATCH', `/products/bulk?name=${enc(s)}`, { price: 4 })).body.map((p: ProductT) => p.id), [id], `${label}: bulk PATCH by eq`)
    t.equal((await send('DELETE', `/products/bulk?name__ilike=${enc(likeLiteral(`${s}#1`))}`)).status, 204, `${label}: bulk DELETE by ilike`)
    t.equal((await send('DELETE', `/products/bulk?category=${enc(s)}&name__not_in=${enc(s)}`)).status, 204, `${label}: bulk DELETE by category and not_in`)
    t.same(await ids(`category=${enc(s)}`), [id], `${label}: the bulk rows are gone, the row stays`)
  }
  const after = await query('SELECT * FROM products ORDER BY id')
  t.equal(after.length, seed.length + NASTY.length, 'the table is intact: every row, one per string')
  t.same(after.slice(0, seed.length), seed, 'the seed rows are as they were')
  t.same(after.slice(seed.length).map(
    (r) => ({ name: r.name, category: r.category, description: r.description, price: Number(r.price) })
  ),
  NASTY.map((s) => ({ name: s, category: s, description: s, price: 4 })), 'each string stored exactly as sent, in every string column')
}
