import t0, { type Test } from 'tap'
import http, { type IncomingHttpHeaders } from 'node:http'
import type { AddressInfo } from 'node:net'
import { performance } from 'node:perf_hooks'
import vm from 'node:vm'
import v8 from 'node:v8'
import { setTimeout as sleep } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type FastifyRequest, type LightMyRequestResponse } from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import views, { APIView, ListAPIView, configureApp, mix } from '../lib/index.js'
import { IsAuthenticated, hasScope, permission } from '../lib/access.js'
import { ServiceUnavailable } from '../lib/errors.js'
import {
  AsyncGenericListAPIView, AsyncGenericViewSet, BaseFilter, GenericListAPIView, GenericViewSet, MemoryRepository,
  PaginationFilter, SparseFieldsMixin, asyncRepository, type Criteria, type ListQuery
} from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { memoryCache } from '../lib/cache.js'
import type { ListStreamOptions } from '../lib/streams.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { build, headerAuth, problem } from './helpers.js'
import { freshDatabase, postgres } from './pg-server.js'

// Streamed lists (docs/streaming.md, "Streamed lists"): a generic list with `listStream` answers
// NDJSON (application/x-ndjson, application/jsonl) or one JSON array sent as it is read
// (application/json; stream=array) when Accept prefers one, and its page otherwise. The stream is
// the whole list, read a page of rows at a time along the list's total order, with the page's
// filters, search, scope, parent and permissions: every row once, in order, on every store, however
// many rows tie on the sort key. Then what a client cannot see from the bytes alone: the first read
// fails before a byte is sent, a later one cuts the body, a client that goes stops the reading, the
// memory stays flat, the cache never serves nor keeps a stream, and the document names every form.

const NDJSON = 'application/x-ndjson'
const JSONL = 'application/jsonl'
const ARRAY = 'application/json; stream=array'

const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  category: Type.String(),
  price: Type.Number(),
  rating: Type.Union([Type.Integer(), Type.Null()])
}, { $id: 'StreamedProduct' })
type ProductT = Static<typeof Product>
/** A stored row: a product and a column no schema sends. */
type StoredT = ProductT & { secret: string }

/** More rows than the stream's page (100) many times over, a prime count so the last page is short. */
const COUNT = 2503
const PAGE = 100

/**
 * Row `i`: seven categories (about 358 rows each, more than a page: page boundaries fall inside a
 * tie), eleven prices, a rating that is null for every fourth row. Names sort the same in every
 * collation (lower-case letters and digits), so PostgreSQL's locale cannot reorder them.
 */
function row (i: number): StoredT {
  return {
    id: i,
    name: `p${String(i).padStart(4, '0')}`,
    category: `c${i % 7}`,
    price: ((i * 37) % 11) * 0.5,
    rating: i % 4 === 0 ? null : i % 5,
    secret: `secret-${i}`
  }
}

/**
 * Every row, in an order that is not the key's (j * 1009 mod 2503 walks every id once): the store's
 * physical order is not the answer.
 */
const ROWS: StoredT[] = Array.from({ length: COUNT }, (_, j) => row(((j * 1009) % COUNT) + 1))

class ProductFilter extends PaginationFilter.with({
  fields: { category: Type.String() },
  operatorFields: { price: Type.Number() },
  operators: { price: ['gt', 'le'] },
  orderingFields: ['name', 'category', 'price', 'rating'],
  searchFields: ['name'],
  defaultPageSize: 10,
  maxPageSize: 100
}) {}

/** SQL's order: nulls after every value ascending, before them descending. */
function compare (a: unknown, b: unknown): number {
  if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1
  return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0
}

/** The ids of `rows` as `sort` orders them (`-` descending), the key last: what the stream must send. */
function expectedIds (rows: readonly StoredT[], sort: readonly string[]): number[] {
  const keys = sort.map((key) => key.startsWith('-') ? { field: key.slice(1), sign: -1 } : { field: key, sign: 1 })
  return [...rows].sort((a, b) => {
    for (const { field, sign } of keys) {
      const c = compare(a[field as keyof StoredT], b[field as keyof StoredT])
      if (c !== 0) return sign * c
    }
    return a.id - b.id
  }).map((r) => r.id)
}

/**
 * A store the cases run on: a fresh repository over `rows` (the sync or the async protocol), and how
 * to close it; `dear`, a positional criterion of the store's kind: a price above 2.
 */
interface Store {
  name: string
  async: boolean
  dear: unknown
  open: (rows: readonly StoredT[]) => Promise<{ repository: unknown, close: () => Promise<void> }>
}

/** The SQL stores' positional criterion: a fragment of trusted text and its bound values. */
const DEAR_SQL = { sql: 'price > ?', params: [2] }

const TABLE = { table: 'products', columns: ['id', 'name', 'category', 'price', 'rating', 'secret'] } as const
const DDL = (real: string): string => 'CREATE TABLE products (id INTEGER PRIMARY KEY, name TEXT NOT NULL, category TEXT NOT NULL, ' +
  `price ${real} NOT NULL, rating INTEGER, secret TEXT NOT NULL)`
const INSERT = 'INSERT INTO products (id, name, category, price, rating, secret) VALUES (?, ?, ?, ?, ?, ?)'
const values = (r: StoredT): unknown[] => [r.id, r.name, r.category, r.price, r.rating, r.secret]

const memoryStore = (async: boolean): Store => ({
  name: async ? 'memory (async)' : 'memory',
  async,
  // The memory store's positional criteria are tests of a row.
  dear: (r: StoredT) => r.price > 2,
  open: async (rows) => {
    const memory = new MemoryRepository<StoredT>({ rows: rows.map((r) => ({ ...r })) })
    return { repository: async ? asyncRepository(memory) : memory, close: async () => {} }
  }
})

const betterSqlite: Store = {
  name: 'SQLite (better-sqlite3)',
  async: false,
  dear: DEAR_SQL,
  open: async (rows) => {
    const db = new Database(':memory:')
    db.exec(DDL('REAL'))
    const insert = db.prepare(INSERT)
    db.transaction(() => { for (const r of rows) insert.run(...values(r)) })()
    return { repository: new SqliteRepository<StoredT>(db, TABLE), close: async () => { db.close() } }
  }
}

const nodeSqlite: Store = {
  name: 'SQLite (node:sqlite)',
  async: true,
  dear: DEAR_SQL,
  open: async (rows) => {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
    const db = new DatabaseSync(':memory:')
    db.exec(DDL('REAL'))
    const insert = db.prepare(INSERT)
    db.exec('BEGIN')
    for (const r of rows) insert.run(...values(r) as Array<string | number | null>)
    db.exec('COMMIT')
    return { repository: new AsyncSqliteRepository<StoredT>(db, TABLE), close: async () => { db.close() } }
  }
}

function postgresStore (url: Parameters<typeof freshDatabase>[0]): Store {
  let n = 0
  return {
    name: 'PostgreSQL',
    async: true,
    dear: DEAR_SQL,
    open: async (rows) => {
      const { pool } = await freshDatabase(url, `streamed_${++n}`)
      await pool.query(DDL('DOUBLE PRECISION'))
      // One statement for the rows, in the same scrambled order: PostgreSQL returns ties in no promised order.
      const params = rows.flatMap(values)
      const tuples = rows.map((_, r) => `(${[1, 2, 3, 4, 5, 6].map((c) => `$${r * 6 + c}`).join(', ')})`)
      await pool.query(`INSERT INTO products (id, name, category, price, rating, secret) VALUES ${tuples.join(', ')}`, params)
      return { repository: new PostgresRepository<StoredT>(pool, TABLE), close: async () => { await pool.end() } }
    }
  }
}

/** The products view of a store: the whole viewset, its list streamed `PAGE` rows at a time. */
function productsView (store: Store, repository: unknown) {
  const statics = { responseSchema: Product, filter: ProductFilter, repository: repository as never }
  return store.async
    ? class Products extends mix(SparseFieldsMixin, AsyncGenericViewSet).with(statics) {
      static override listStream = { pageSize: PAGE }
    }
    : class Products extends mix(SparseFieldsMixin, GenericViewSet).with(statics) {
      static override listStream = { pageSize: PAGE }
    }
}

/** The rows of an NDJSON body: one JSON object a line, every line ended by a newline. */
function ndjsonRows (t: Test, body: string): Array<Record<string, unknown>> {
  if (body === '') return []
  t.equal(body.at(-1), '\n', 'the last line is ended too')
  return body.slice(0, -1).split('\n').map((line) => JSON.parse(line) as Record<string, unknown>)
}

/** Counts the calls of a repository's `list` (an own property over its method: the view calls it as before). */
function countLists (repository: unknown): { list: number } {
  const calls = { list: 0 }
  const target = repository as { list: (...args: unknown[]) => unknown }
  const list = target.list.bind(target)
  target.list = (...args) => { calls.list++; return list(...args) }
  return calls
}

const idsOf = (rows: ReadonlyArray<Record<string, unknown>>): unknown[] => rows.map((r) => r.id)

/** GET `url` with `Accept: accept` (none when undefined). */
const get = (app: FastifyInstance, url: string, accept?: string): Promise<LightMyRequestResponse> =>
  app.inject({ url, headers: accept === undefined ? {} : { accept } })

async function storeCases (t: Test, store: Store): Promise<void> {
  const { repository, close } = await store.open(ROWS)
  const app = await build({ views: [{ view: productsView(store, repository), prefix: '/products' }] })
  t.teardown(async () => { await app.close(); await close() })

  await t.test('each streamed form: its media type, every row once, in the order the list sorts by', async (t) => {
    // Ties on one key (358 rows a category), ties broken by a second key, nulls first and last, each direction.
    const sorts = [[], ['category'], ['category', '-price'], ['rating'], ['-rating'], ['price', '-category']]
    for (const sort of sorts) {
      const query = sort.map((key) => `sort=${key}`).join('&')
      const expected = expectedIds(ROWS, sort)
      const ndjson = await get(app, `/products?${query}`, NDJSON)
      t.equal(ndjson.statusCode, 200)
      t.equal(ndjson.headers['content-type'], `${NDJSON}; charset=utf-8`)
      t.same(idsOf(ndjsonRows(t, ndjson.body)), expected, `ndjson, sort ${sort.join(',') || '(none)'}: ${COUNT} rows in order`)
    }
    // The other two forms send the same rows, the same way read.
    const sort = ['category', '-price']
    const expected = expectedIds(ROWS, sort)
    const jsonl = await get(app, '/products?sort=category&sort=-price', JSONL)
    t.equal(jsonl.headers['content-type'], `${JSONL}; charset=utf-8`)
    t.same(idsOf(ndjsonRows(t, jsonl.body)), expected, 'jsonl')
    const array = await get(app, '/products?sort=category&sort=-price', ARRAY)
    t.equal(array.headers['content-type'], 'application/json; charset=utf-8', 'the array is plain JSON to a client')
    t.same(idsOf(array.json()), expected, 'the array: one JSON value')
    t.match(array.body, /^\[\{.*\}\]\n$/s)
  })

  await t.test('the rows are the page\'s rows: the same members, nothing the schema does not name', async (t) => {
    const page = (await get(app, '/products?sort=-price&page_size=100')).json()
    const streamed = ndjsonRows(t, (await get(app, '/products?sort=-price', NDJSON)).body)
    t.same(streamed.slice(0, 100), page.items, 'the first hundred streamed are the first page')
    t.strictSame(Object.keys(streamed[0]).sort(), ['category', 'id', 'name', 'price', 'rating'])
    t.notOk(streamed.some((r) => 'secret' in r), 'the stored secret column is never sent')
    t.equal(streamed.find((r) => r.id === 4)?.rating, null, 'a null is sent as null')
  })

  await t.test('filters, operators and search narrow the stream as they narrow the page; page parameters do not apply', async (t) => {
    const c3 = ROWS.filter((r) => r.category === 'c3')
    const rows = ndjsonRows(t, (await get(app, '/products?category=c3&sort=-price&page=3&page_size=5', NDJSON)).body)
    t.same(idsOf(rows), expectedIds(c3, ['-price']), 'every row of c3, whatever page was asked for')
    const dear = ROWS.filter((r) => r.price > 2 && r.category === 'c1')
    t.same(idsOf((await get(app, '/products?price__gt=2&category=c1&sort=rating', ARRAY)).json()), expectedIds(dear, ['rating']))
    // Names are p0001 to p2503, 'p' only first: "P01" (searched in any case) is in p0100 to p0199.
    const searched = ROWS.filter((r) => r.name.includes('p01'))
    t.equal(searched.length, 100)
    t.same(idsOf(ndjsonRows(t, (await get(app, '/products?q=P01&sort=-name', NDJSON)).body)), expectedIds(searched, ['-name']), 'search')
    t.same(idsOf(ndjsonRows(t, (await get(app, '/products?q=P01&price__le=1', JSONL)).body)),
      expectedIds(searched.filter((r) => r.price <= 1), []), 'search and an operator together')
  })

  await t.test('the view\'s positional criteria and repository options reach every read of the stream', async (t) => {
    const View = productsView(store, repository)
    Object.assign(View.prototype, {
      resolveFilter: (filter: BaseFilter) => ({ args: [store.dear], kwargs: filter.asKwargs() }),
      getRepositoryOptions: () => ({ reader: 7 })
    })
    const seen: unknown[] = []
    const target = repository as { list: (...args: unknown[]) => unknown }
    const list = target.list
    target.list = (...args) => { seen.push(args[2]); return list.apply(target, args) }
    t.teardown(() => { target.list = list })
    const dear = await build({ views: [{ view: View, prefix: '/dear' }] })
    t.teardown(() => dear.close())
    const expected = expectedIds(ROWS.filter((r) => r.price > 2 && r.category === 'c2'), ['-rating'])
    t.same(idsOf(ndjsonRows(t, (await get(dear, '/dear?category=c2&sort=-rating', NDJSON)).body)), expected)
    t.same(idsOf((await get(dear, '/dear?category=c2&sort=-rating&page_size=100')).json().items), expected.slice(0, 100), 'as the page')
    t.ok(seen.length >= 2 && seen.every((options) => (options as { reader?: number }).reader === 7), `the options of each of ${seen.length} reads`)
  })

  await t.test('an empty list: an empty NDJSON body, an empty array', async (t) => {
    const ndjson = await get(app, '/products?category=none', NDJSON)
    t.same([ndjson.statusCode, ndjson.headers['content-type'], ndjson.body], [200, `${NDJSON}; charset=utf-8`, ''])
    const array = await get(app, '/products?category=none', ARRAY)
    t.same([array.statusCode, array.body], [200, '[]\n'])
    t.same(array.json(), [])
  })

  await t.test('exactly one page, and one row less: the read after a full page finds nothing, or is not made', async (t) => {
    // 100 and 99 rows: the two sides of `rows.length < pageSize`.
    for (const [n, reads] of [[PAGE, 2], [PAGE - 1, 1], [1, 1]]) {
      const rows = ROWS.slice().sort((a, b) => a.id - b.id).slice(0, n)
      const { repository: small, close: closeSmall } = await store.open(rows)
      const calls = countLists(small)
      const other = await build({ views: [{ view: productsView(store, small), prefix: '/products' }] })
      t.same(idsOf(ndjsonRows(t, (await get(other, '/products', NDJSON)).body)), rows.map((r) => r.id), `${n} rows`)
      t.equal(calls.list, reads, `${n} rows: ${reads} read(s)`)
      t.same(idsOf((await get(other, '/products', ARRAY)).json()), rows.map((r) => r.id), `${n} rows, as an array`)
      await other.close()
      await closeSmall()
    }
  })
}

t0.test('memory store', (t) => storeCases(t, memoryStore(false)))
t0.test('memory store, async', (t) => storeCases(t, memoryStore(true)))
t0.test('SQLite, better-sqlite3', (t) => storeCases(t, betterSqlite))
t0.test('SQLite, node:sqlite', (t) => storeCases(t, nodeSqlite))
const started = await postgres()
// Stopped with the file, whichever of its tests ran (a --grep may leave this one out).
if ('server' in started) t0.teardown(() => { started.server.stop() })
t0.test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if ('server' in started) await storeCases(t, postgresStore(started.server))
})

// The access of the stream is the list's: the permissions' criteria, a refused request, a nested view's parent.

interface Reader { id: number, scopes: string[] }
const READERS: Record<string, Reader> = { ann: { id: 1, scopes: ['loans:read'] }, bob: { id: 2, scopes: ['loans:read'] }, eve: { id: 3, scopes: [] } }
const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer(), title: Type.String() }, { $id: 'StreamedLoan' })
type LoanT = Static<typeof Loan>
/** 250 loans: member 1 holds every third, member 2 the rest. */
const LOANS: LoanT[] = Array.from({ length: 250 }, (_, i) => ({ id: i + 1, member_id: i % 3 === 0 ? 1 : 2, title: `t${i % 10}` }))
const IsBorrower = permission<LoanT, Reader>({ name: 'IsBorrower', scope: (reader) => ({ member_id: reader.id }) })
class LoanFilter extends BaseFilter.with({ fields: { title: Type.String(), member_id: Type.Integer() }, orderingFields: ['title'] }) {}

t0.test('a scope narrows the stream exactly as the list; a refused request is refused before any row is read', async (t) => {
  const loans = new MemoryRepository<LoanT>({ rows: LOANS.map((l) => ({ ...l })) })
  const calls = countLists(loans)
  class Loans extends GenericViewSet.with({
    responseSchema: Loan, repository: loans, filter: LoanFilter, permissions: [IsAuthenticated, hasScope('loans:read'), IsBorrower]
  }) {
    static override listStream = { pageSize: 7 }
  }
  const app = await build({ auth: { authenticators: [headerAuth(READERS, 'reader', (r) => r.scopes)] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  for (const who of ['ann', 'bob']) {
    for (const query of ['', '?sort=-title', '?title=t3&sort=title']) {
      const page = await app.inject({ url: `/loans${query}`, headers: { 'x-reader': who } })
      const stream = await app.inject({ url: `/loans${query}`, headers: { 'x-reader': who, accept: NDJSON } })
      t.same(ndjsonRows(t, stream.body), page.json(), `${who} ${query}: the stream is the list, row for row`)
      t.ok(page.json().every((l: LoanT) => l.member_id === READERS[who].id), `${who} sees only their own loans`)
    }
  }
  // A client's own member_id beside the scope selects nothing, not another member's rows (docs/permissions.md).
  t.equal((await app.inject({ url: '/loans?member_id=2', headers: { 'x-reader': 'ann', accept: NDJSON } })).body, '',
    'ann asking for member 2\'s loans streams none')
  calls.list = 0
  const anonymous = await app.inject({ url: '/loans', headers: { accept: NDJSON } })
  problem(t, anonymous, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Reader realm="test"')
  problem(t, await app.inject({ url: '/loans', headers: { accept: ARRAY, 'x-reader': 'eve' } }), 403)
  problem(t, await app.inject({ url: '/loans', headers: { accept: NDJSON, 'x-reader': 'nobody' } }), 401)
  t.equal(calls.list, 0, 'no refused request read a row')
})

t0.test('a nested view streams its parent\'s children only, and a missing parent is a 404 problem', async (t) => {
  const members = new MemoryRepository<{ id: number, name: string }>({ rows: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Grace' }, { id: 3, name: 'Joan' }] })
  const loans = new MemoryRepository<LoanT>({ rows: LOANS.map((l) => ({ ...l })) })
  const calls = countLists(loans)
  class MemberLoans extends AsyncGenericViewSet.with({
    responseSchema: Loan,
    prefixParams: Type.Object({ memberId: Type.Integer({ minimum: 1 }) }),
    repository: asyncRepository(loans),
    parent: { repository: asyncRepository(members), lookup: { id: 'memberId' }, scope: { member_id: 'id' }, name: 'Member' }
  }) {
    static override listStream = { pageSize: 10 }
  }
  const app = await build({ views: [{ view: MemberLoans, prefix: '/members/:memberId/loans' }] })
  t.teardown(() => app.close())
  for (const id of [1, 2]) {
    const streamed = (await get(app, `/members/${id}/loans`, ARRAY)).json()
    t.same(idsOf(streamed), LOANS.filter((l) => l.member_id === id).map((l) => l.id), `member ${id}: every loan of theirs, no other`)
  }
  t.same((await get(app, '/members/3/loans', NDJSON)).body, '', 'a parent without children: an empty stream')
  calls.list = 0
  const missing = await get(app, '/members/7/loans', NDJSON)
  t.equal(problem(t, missing, 404).detail, 'Member does not exist')
  t.equal(calls.list, 0, 'no child was read')
})

// Negotiation through HTTP: which Accept gets which answer (test/accept.test.ts weighs the ranges).

/** A small products view over the memory store (the rows of ids 1 to 30), 4 rows a read, with `statics` set. */
function smallApp (t: Test, statics: Record<string, unknown> = {}) {
  const memory = new MemoryRepository<StoredT>({ rows: ROWS.filter((r) => r.id <= 30).map((r) => ({ ...r })) })
  const calls = countLists(memory)
  class Products extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Product, filter: ProductFilter, repository: memory
  }) {}
  Object.assign(Products, { listStream: { pageSize: 4 }, ...statics })
  const open = async (): Promise<FastifyInstance> => {
    const app = await build({ views: [{ view: Products, prefix: '/products' }] })
    t.teardown(() => app.close())
    return app
  }
  return { Products, calls, open }
}

/** What a response is: `page` (the paged JSON object), or the streamed form its content type says. */
function formOf (res: LightMyRequestResponse): string {
  const type = String(res.headers['content-type'])
  if (type.startsWith(NDJSON)) return 'ndjson'
  if (type.startsWith(JSONL)) return 'jsonl'
  if (res.headers['transfer-encoding'] === 'chunked' && res.body.startsWith('[')) return 'array'
  return Array.isArray(res.json().items) ? 'page' : `unknown: ${res.body.slice(0, 40)}`
}

t0.test('Accept chooses the page or a stream: q-values, ties to the page, wildcards, unknown and hostile headers', async (t) => {
  const app = await smallApp(t).open()
  const cases: Array<[string | undefined, string]> = [
    [undefined, 'page'],
    ['*/*', 'page'],
    ['application/*', 'page'],
    ['application/json', 'page'],
    ['text/html', 'page'],
    ['application/json;q=0', 'page'],
    [NDJSON, 'ndjson'],
    [JSONL, 'jsonl'],
    [ARRAY, 'array'],
    ['application/json; stream="array"', 'array'],
    [`application/json, ${NDJSON}`, 'page'],
    [`${NDJSON}, ${JSONL}, ${ARRAY}`, 'ndjson'],
    [`${ARRAY}, ${JSONL}`, 'jsonl'],
    [`application/json;q=0.9, ${NDJSON}`, 'ndjson'],
    [`${NDJSON};q=0.5, application/json;q=0.6`, 'page'],
    [`${NDJSON};q=0.5, ${ARRAY};q=0.6`, 'array'],
    ['*/*, application/json;q=0', 'ndjson'],
    [`text/html, */*;q=0.1, ${JSONL}`, 'jsonl'],
    [';;;', 'page'],
    ['application/', 'page'],
    ['/json', 'page'],
    [`${NDJSON};q=abc`, 'page'],
    [`${NDJSON};q=2`, 'page'],
    [`${NDJSON};q=2, ${JSONL};q=0.1`, 'jsonl'],
    [`${NDJSON};charset, ${JSONL};q=0.1`, 'ndjson'],
    [`${Array.from({ length: 64 }, () => 'text/html').join(',')},${NDJSON}`, 'page'],
    [`${Array.from({ length: 63 }, () => 'text/html').join(',')},${NDJSON}`, 'ndjson']
  ]
  for (const [accept, form] of cases) {
    const res = await get(app, '/products', accept)
    t.equal(res.statusCode, 200, String(accept))
    t.equal(formOf(res), form, `${String(accept).slice(0, 80)}: ${form}`)
  }
  // Thousands of ranges in 16 KB, the streamed type last: read in bounded time, answered with the page.
  const long = `${Array.from({ length: 2000 }, (_, i) => `text/x${i};q=0.5`).join(',')}`.slice(0, 16_000) + `,${NDJSON}`
  const start = performance.now()
  const res = await get(app, '/products', long)
  t.equal(formOf(res), 'page')
  t.ok(performance.now() - start < 50, `a 16 KB Accept of ${long.split(',').length} ranges is answered in ${(performance.now() - start).toFixed(1)} ms`)
})

t0.test('formats: a view that streams one form answers the other\'s Accept with its page', async (t) => {
  const ndjsonOnly = await smallApp(t, { listStream: { formats: ['ndjson'] } }).open()
  t.same([formOf(await get(ndjsonOnly, '/products', NDJSON)), formOf(await get(ndjsonOnly, '/products', JSONL))], ['ndjson', 'jsonl'])
  t.equal(formOf(await get(ndjsonOnly, '/products', ARRAY)), 'page')
  t.equal(formOf(await get(ndjsonOnly, '/products', `${ARRAY}, ${JSONL};q=0.1`)), 'jsonl')
  const arrayOnly = await smallApp(t, { listStream: { formats: ['array'], pageSize: 1 } }).open()
  t.equal(formOf(await get(arrayOnly, '/products', NDJSON)), 'page')
  const array = await get(arrayOnly, '/products', ARRAY)
  t.equal(formOf(array), 'array')
  t.same(idsOf(array.json()), expectedIds(ROWS.filter((r) => r.id <= 30), []), 'a row at a time')
  const off = await smallApp(t, { listStream: false }).open()
  const page = await get(off, '/products', NDJSON)
  t.same([formOf(page), page.headers.vary], ['page', undefined], 'listStream: false streams nothing and varies by nothing')
})

t0.test('Vary: Accept on the page and on each stream, added to what the answer varies by already', async (t) => {
  const { Products } = smallApp(t)
  const app = Fastify()
  // What @fastify/cors does: Vary: Origin set before any handler.
  app.addHook('onRequest', async (_request, reply) => { reply.header('vary', 'Origin') })
  await app.register(views, { views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  const plain = await smallApp(t).open()
  for (const accept of [undefined, NDJSON, JSONL, ARRAY]) {
    t.equal((await get(plain, '/products', accept)).headers.vary, 'Accept', `${String(accept)}: Vary: Accept`)
    t.equal((await get(app, '/products', accept)).headers.vary, 'Origin, Accept', `${String(accept)}: kept beside Vary: Origin`)
  }
  t.equal((await get(plain, '/products/1')).headers.vary, undefined, 'the detail read does not vary by Accept')
  const invalid = await get(plain, '/products?sort=secret', NDJSON)
  problem(t, invalid, 400)
  t.equal(invalid.headers.vary, undefined, 'a query refused before the list is no answer of the list')
})

// What each row sends: the item's compiled serializer, a field set's cut, the view's serializer options.

t0.test('?fields= and ?omit= cut each streamed row as they cut the page; ?expand= is refused before any read', async (t) => {
  const { calls, open } = smallApp(t)
  const app = await open()
  for (const query of ['fields=name', 'fields=name,price&sort=-price', 'omit=category,rating', 'fields=id']) {
    const page = (await get(app, `/products?${query}&page_size=100`)).json().items
    t.same(ndjsonRows(t, (await get(app, `/products?${query}`, NDJSON)).body), page, `${query}: ndjson rows are the page's items`)
    t.same((await get(app, `/products?${query}`, ARRAY)).json(), page, `${query}: so are the array's`)
  }
  t.same(ndjsonRows(t, (await get(app, '/products?fields=name', NDJSON)).body)[0], { id: 1, name: 'p0001' }, 'the key is always sent')
  calls.list = 0
  problem(t, await get(app, '/products?fields=secret', NDJSON), 400)
  t.equal(calls.list, 0, 'a field the item does not have is refused before any read')

  const Book = Type.Object({ id: Type.Integer(), title: Type.String() }, { $id: 'StreamedBook' })
  const Copy = Type.Object({ id: Type.Integer(), book_id: Type.Integer() }, { $id: 'StreamedCopy' })
  const books = new MemoryRepository({ rows: [{ id: 1, title: 'Emma' }] })
  const copies = new MemoryRepository({ rows: [{ id: 1, book_id: 1 }, { id: 2, book_id: 1 }] })
  const copyCalls = countLists(copies)
  class Books extends mix(SparseFieldsMixin, GenericViewSet).with({ responseSchema: Book, repository: books }) {}
  class Copies extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Copy, repository: copies, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {
    static override listStream = true
  }
  const library = await build({ views: [{ view: Books, prefix: '/books' }, { view: Copies, prefix: '/copies' }] })
  t.teardown(() => library.close())
  t.same((await get(library, '/copies?expand=book')).json()[0], { id: 1, book_id: 1, book: { id: 1, title: 'Emma' } }, 'the page embeds')
  copyCalls.list = 0
  for (const accept of [NDJSON, ARRAY]) {
    const refused = await get(library, '/copies?expand=book', accept)
    t.match(problem(t, refused, 400).detail, /^A streamed list does not embed relations/, `${accept}: refused`)
  }
  t.equal(copyCalls.list, 0, 'nothing was read for a refused stream')
  t.equal((await get(library, '/copies?expand=', NDJSON)).statusCode, 200, 'an empty expand expands nothing: streamed')
})

t0.test('a member the item schema does not name is never streamed, whatever the store holds', async (t) => {
  const memory = new MemoryRepository<Record<string, unknown>>({
    rows: [{ id: 1, name: 'a', password: 'hunter2', nested: { token: 't' } }, { id: 2, name: 'b', password: 'letmein' }]
  })
  const Open = Type.Object({ id: Type.Integer(), name: Type.String() })
  class Users extends GenericListAPIView.with({ responseSchema: Open, repository: memory }) {
    static override listStream = true
  }
  const app = await build({ views: [{ view: Users, prefix: '/users' }] })
  t.teardown(() => app.close())
  for (const accept of [NDJSON, JSONL, ARRAY]) {
    const res = await get(app, '/users', accept)
    t.notMatch(res.body, /hunter2|letmein|password|token/, `${accept}: no hidden member`)
    t.same(accept === ARRAY ? res.json() : ndjsonRows(t, res.body), [{ id: 1, name: 'a' }, { id: 2, name: 'b' }])
  }
})

t0.test('the view\'s serializer options hold for each row: aliases, field names, nulls left out', async (t) => {
  const Person = Type.Object({
    id: Type.Integer(),
    full_name: Type.String({ alias: 'fullName' }),
    note: Type.Union([Type.String(), Type.Null()])
  }, { $id: 'StreamedPerson' })
  const rows = [{ id: 1, full_name: 'Ada', note: null }, { id: 2, full_name: 'Grace', note: 'x' }]
  const cases: Array<[unknown, unknown[]]> = [
    [undefined, [{ id: 1, fullName: 'Ada', note: null }, { id: 2, fullName: 'Grace', note: 'x' }]],
    [{ byAlias: false }, [{ id: 1, full_name: 'Ada', note: null }, { id: 2, full_name: 'Grace', note: 'x' }]],
    [{ byAlias: true, excludeNone: true }, [{ id: 1, fullName: 'Ada' }, { id: 2, fullName: 'Grace', note: 'x' }]],
    [{ byAlias: false, excludeNone: true }, [{ id: 1, full_name: 'Ada' }, { id: 2, full_name: 'Grace', note: 'x' }]],
    // A class that unsets them gets the defaults.
    [null, [{ id: 1, fullName: 'Ada', note: null }, { id: 2, fullName: 'Grace', note: 'x' }]]
  ]
  for (const [options, expected] of cases) {
    const repository = new MemoryRepository({ rows: rows.map((r) => ({ ...r })) })
    class People extends GenericListAPIView.with({ responseSchema: Person, repository }) {
      static override listStream = { pageSize: 1 }
    }
    if (options !== undefined) Object.assign(People, { defaultSerializerOptions: options ?? undefined })
    const app = await build({ views: [{ view: People, prefix: '/people' }] })
    t.same((await get(app, '/people')).json(), expected, `${JSON.stringify(options)}: the page`)
    t.same(ndjsonRows(t, (await get(app, '/people', NDJSON)).body), expected, `${JSON.stringify(options)}: the stream sends the same`)
    await app.close()
  }
})

t0.test('a field set of an aliased member: the stream as the page', async (t) => {
  const Person = Type.Object({ id: Type.Integer(), full_name: Type.String({ alias: 'fullName' }), note: Type.String() })
  class People extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Person, repository: new MemoryRepository({ rows: [{ id: 1, full_name: 'Ada', note: 'n' }] })
  }) {
    static override listStream = true
  }
  const app = await build({ views: [{ view: People, prefix: '/people' }] })
  t.teardown(() => app.close())
  for (const query of ['fields=full_name', 'omit=note']) {
    t.same(ndjsonRows(t, (await get(app, `/people?${query}`, NDJSON)).body), (await get(app, `/people?${query}`)).json(), `${query}: the same rows`)
  }
  // The member is named by its field name and sent under its alias: the cut keeps it, in the page and in the stream.
  t.same(ndjsonRows(t, (await get(app, '/people?omit=note', NDJSON)).body), [{ id: 1, fullName: 'Ada' }])
  t.same((await get(app, '/people?fields=full_name')).json(), [{ id: 1, fullName: 'Ada' }], 'the page keeps it too')
})

t0.test('a view with a list of its own is refused listStream: the stream would not send what its list does', async (t) => {
  const Shouted = Type.Object({ id: Type.Integer(), name: Type.String(), shout: Type.String() })
  const Tagged = Type.Object({ id: Type.Integer(), name: Type.String(), hidden: Type.Optional(Type.Boolean()) })
  const memory = new MemoryRepository<Record<string, unknown>>({ rows: [{ id: 1, name: 'a' }, { id: 2, name: 'b', hidden: true }] })
  // `shout` is computed by the view's list (mappingActions says so), no store holds it.
  class Shouting extends GenericListAPIView.with({ responseSchema: Shouted, repository: memory as never, mappingActions: ['list'] }) {
    static override listStream = true
    override list (request: FastifyRequest) {
      const rows = super.list(request) as unknown as Array<{ id: number, name: string }>
      return rows.map((r) => ({ ...r, shout: r.name.toUpperCase() }))
    }
  }
  // The view's list leaves out the rows it hides: a stream of the repository would send them.
  class Hiding extends GenericListAPIView.with({ responseSchema: Tagged, repository: memory as never }) {
    static override listStream = true
    override list (request: FastifyRequest) {
      const rows = super.list(request) as unknown as Array<{ id: number, name: string, hidden?: boolean }>
      return rows.filter((r) => r.hidden !== true)
    }
  }
  await t.rejects(build({ views: [{ view: Shouting, prefix: '/shouting' }] }), {
    code: 'FV_ERR_STREAM',
    message: /^Shouting\.listStream streams the rows the generic list reads, and Shouting maps its list itself \(mappingActions\): /
  })
  await t.rejects(build({ views: [{ view: Hiding, prefix: '/hiding' }] }), {
    code: 'FV_ERR_STREAM',
    message: /^Hiding\.listStream streams the rows the generic list reads, and Hiding has a list of its own: the stream would not send what its list does\. Leave listStream out, or narrow the rows with getKwargs or permissions, which the stream reads too$/
  })
})

t0.test('an item that is not one object (a union) streams whole: no field set applies to it', async (t) => {
  const Shape = Type.Union([
    Type.Object({ id: Type.Integer(), kind: Type.Literal('circle'), radius: Type.Number() }),
    Type.Object({ id: Type.Integer(), kind: Type.Literal('square'), side: Type.Number() })
  ])
  const rows = [{ id: 1, kind: 'circle', radius: 2 }, { id: 2, kind: 'square', side: 3 }, { id: 3, kind: 'circle', radius: 1 }]
  // The memory store's rows are typed apart from the union: the view cannot check them against it.
  const repository = new MemoryRepository({ rows }) as never
  class Shapes extends GenericListAPIView.with({ responseSchema: Shape, repository }) {
    static override listStream: ListStreamOptions = { pageSize: 2, formats: ['ndjson'] }
  }
  const app = await build({ views: [{ view: Shapes, prefix: '/shapes' }] })
  t.teardown(() => app.close())
  t.same(ndjsonRows(t, (await get(app, '/shapes', NDJSON)).body), rows)
  t.same((await get(app, '/shapes')).json(), rows)
})

t0.test('a mistake in listStream fails at registration, naming the view', async (t) => {
  const mistakes: Array<[unknown, RegExp]> = [
    [{ pagesize: 10 }, /^Products\.listStream has no option pagesize: it takes formats and pageSize$/],
    [{ formats: [] }, /^Products\.listStream\.formats lists 'ndjson', 'array' or both, not \[\]$/],
    [{ formats: ['ndjson', 'xml'] }, /not \["ndjson","xml"\]$/],
    [{ formats: 'ndjson' }, /not "ndjson"$/],
    [{ pageSize: 0 }, /^Products\.listStream\.pageSize is a whole number of rows from 1 to 10000, not 0$/],
    [{ pageSize: 10_001 }, /not 10001$/],
    [{ pageSize: 2.5 }, /not 2\.5$/],
    [{ pageSize: Number.NaN }, /not NaN$/],
    [{ pageSize: '100' }, /not 100$/]
  ]
  for (const [listStream, message] of mistakes) {
    const { Products } = smallApp(t, { listStream })
    await t.rejects(build({ views: [{ view: Products, prefix: '/products' }] }), { code: 'FV_ERR_STREAM', message }, JSON.stringify(listStream))
  }
  for (const pageSize of [1, 10_000]) {
    const { Products } = smallApp(t, { listStream: { pageSize } })
    const app = await build({ views: [{ view: Products, prefix: '/products' }] })
    t.equal(ndjsonRows(t, (await get(app, '/products', NDJSON)).body).length, 30, `pageSize ${pageSize} is allowed`)
    await app.close()
  }
  // A list the library does not read from a repository cannot be streamed by it.
  class Hand extends ListAPIView {
    static override responseSchema = Product
    static listStream = true
    override list () { return [] }
  }
  await t.rejects(build({ views: [{ view: Hand, prefix: '/hand' }] }),
    { code: 'FV_ERR_STREAM', message: /^Hand\.listStream streams a generic view's list of its responseSchema: give the view a responseSchema/ })
  // Without an item schema, or without a list schema (a list that sends its own envelope), nothing says what a row is.
  class Untyped extends ListAPIView {
    static listStream = true
    override list () { return [] }
  }
  class Enveloped extends ListAPIView {
    static override listItemSchema = Product
    static override responseSchemaAsList = false
    static listStream = true
    override list () { return { items: [] } as never }
  }
  for (const view of [Untyped, Enveloped]) {
    await t.rejects(build({ views: [{ view, prefix: '/x' }] }), { code: 'FV_ERR_STREAM', message: new RegExp(`^${view.name}\\.listStream streams`) })
  }
  // Only a list is streamed: the static on a view without one changes nothing.
  class Plain extends APIView {
    static listStream = true
  }
  const plain = await build({ views: [{ view: Plain, prefix: '/plain' }] })
  t.equal((await get(plain, '/plain', NDJSON)).statusCode, 404)
  await plain.close()
})

// Over a real socket, where the bytes and the end of the body matter.

interface RawResponse {
  status: number
  headers: IncomingHttpHeaders
  body: string
  complete: boolean
  error: string | undefined
}

/**
 * GET over a socket of its own (no keep-alive), the body as it arrived: `complete` is whether the
 * chunked body ended with its last chunk. `abortAfter`: the client goes after that many bytes.
 */
function rawGet (
  app: FastifyInstance, path: string, headers: Record<string, string>, abortAfter?: number
): Promise<RawResponse> {
  const { port } = app.server.address() as AddressInfo
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      let body = ''
      let error: string | undefined
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        body += chunk
        if (abortAfter !== undefined && body.length >= abortAfter) request.destroy()
      })
      res.on('error', (e) => { error = e.message })
      res.on('close', () => { resolve({ status: res.statusCode ?? 0, headers: res.headers, body, complete: res.complete, error }) })
    })
    request.on('error', (e) => { if (abortAfter === undefined) reject(e) })
  })
}

/** A memory repository whose `list` calls are counted, and fail from the `failFrom`-th with `error`. */
function failing (rows: readonly StoredT[], failFrom: number, error: () => Error) {
  const memory = new MemoryRepository<StoredT>({ rows: rows.map((r) => ({ ...r })) })
  const calls = { list: 0 }
  const list = memory.list.bind(memory)
  memory.list = (...args) => {
    calls.list++
    if (calls.list >= failFrom) throw error()
    return list(...args)
  }
  return { memory, calls }
}

/** An app serving `view` at /products, on a port the system picks. */
async function listening (t: Test, view: unknown): Promise<FastifyInstance> {
  const app = await build({ views: [{ view: view as never, prefix: '/products' }] })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return app
}

t0.test('a first read that fails is an error answer: its status, problem+json, no byte of the stream', async (t) => {
  const cases: Array<[string, () => Error, number]> = [
    ['ServiceUnavailable', () => new ServiceUnavailable('The database is down; try again shortly.'), 503],
    ['an unexpected error', () => new Error('connection reset'), 500]
  ]
  for (const [name, error, status] of cases) {
    const { memory, calls } = failing(ROWS, 1, error)
    class Products extends GenericListAPIView.with({ responseSchema: Product, repository: memory }) {
      static override listStream = { pageSize: 10 }
    }
    const app = await listening(t, Products)
    for (const accept of [NDJSON, ARRAY]) {
      const res = await app.inject({ url: '/products', headers: { accept } })
      const body = problem(t, res, status)
      if (status === 503) t.equal(body.detail, 'The database is down; try again shortly.', `${name}, ${accept}: its detail`)
      else t.equal(body.detail, 'An unexpected error occurred.', `${name}, ${accept}: nothing of the error told`)
      const raw = await rawGet(app, '/products', { accept })
      t.same([raw.status, raw.complete, raw.headers['content-type']], [status, true, 'application/problem+json; charset=utf-8'],
        `${name}, ${accept}: a whole answer on the wire`)
      t.equal(raw.headers.vary, 'Accept', 'it varies by Accept as the stream would have')
      t.same(JSON.parse(raw.body), res.json())
    }
    t.equal(calls.list, 4, 'one read each')
  }
})

t0.test('a later read that fails cuts the body: the client sees a chunked body without its end', async (t) => {
  const { memory, calls } = failing(ROWS, 3, () => new ServiceUnavailable())
  class Products extends GenericListAPIView.with({ responseSchema: Product, repository: memory }) {
    static override listStream = { pageSize: 10 }
  }
  const app = await listening(t, Products)
  for (const accept of [NDJSON, ARRAY]) {
    calls.list = 0
    const raw = await rawGet(app, '/products', { accept })
    t.equal(raw.status, 200, `${accept}: the answer had begun`)
    t.equal(raw.headers['transfer-encoding'], 'chunked')
    t.equal(raw.complete, false, `${accept}: the body did not end (${String(raw.error)})`)
    t.equal(calls.list, 3)
    if (accept === NDJSON) {
      t.same(idsOf(ndjsonRows(t, raw.body)), expectedIds(ROWS, []).slice(0, 20), 'the two pages read, whole lines')
    } else {
      t.match(raw.body, /^\[\{/)
      t.throws(() => JSON.parse(raw.body), SyntaxError, 'the array is not closed: no client can take it for the whole list')
    }
  }
})

t0.test('a client that goes stops the reading: the repository is not read to the end', async (t) => {
  // 1,000 rows, 10 a read, each read a little slow: reading all would take 100 reads.
  const memory = new MemoryRepository<StoredT>({ rows: ROWS.slice(0, 1000).map((r) => ({ ...r })) })
  const calls = { list: 0 }
  const slow = asyncRepository(memory) as unknown as { list: (...args: unknown[]) => Promise<unknown> }
  const list = slow.list.bind(slow)
  slow.list = async (...args) => { calls.list++; await sleep(2); return await list(...args) }
  class Products extends AsyncGenericListAPIView.with({ responseSchema: Product, repository: slow as never }) {
    static override listStream = { pageSize: 10 }
  }
  const app = await listening(t, Products)
  const raw = await rawGet(app, '/products', { accept: NDJSON }, 1)
  t.equal(raw.complete, false, 'the client went after its first bytes')
  t.ok(raw.body.length > 0)
  await sleep(100)
  const after = calls.list
  await sleep(200)
  t.equal(calls.list, after, `no read after the client went (${after} of 100 pages read)`)
  t.ok(after < 50, 'far from the end')
  const whole = await rawGet(app, '/products', { accept: NDJSON })
  t.equal(ndjsonRows(t, whole.body).length, 1000, 'the next client reads the whole list')
})

t0.test('200,000 rows stream in bounded memory', async (t) => {
  v8.setFlagsFromString('--expose-gc')
  const gc = vm.runInNewContext('gc') as () => void
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec(DDL('REAL'))
  const insert = db.prepare(INSERT)
  const total = 200_000
  // Each row about 120 bytes of JSON: the body is some 24 MB.
  db.transaction(() => { for (let i = 1; i <= total; i++) insert.run(i, `p${String(i).padStart(8, '0')}${'x'.repeat(40)}`, `c${i % 7}`, i % 11, i % 5, 's') })()
  const repository = new SqliteRepository<StoredT>(db, TABLE)
  const calls = countLists(repository)
  class Products extends GenericListAPIView.with({ responseSchema: Product, repository }) {
    static override listStream = true
  }
  const app = await listening(t, Products)
  const { port } = app.server.address() as AddressInfo
  gc()
  const before = process.memoryUsage()
  let heap = 0
  let buffers = 0
  let bytes = 0
  let lines = 0
  let sampled = 0
  const started = performance.now()
  await new Promise<void>((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: '/products', headers: { accept: NDJSON }, agent: false }, (res) => {
      res.on('data', (chunk: Buffer) => {
        bytes += chunk.length
        for (const byte of chunk) if (byte === 10) lines++
        // Every 2 MB received, the live heap once garbage is collected.
        if (bytes - sampled >= 2_000_000) {
          sampled = bytes
          gc()
          const now = process.memoryUsage()
          heap = Math.max(heap, now.heapUsed - before.heapUsed)
          buffers = Math.max(buffers, now.arrayBuffers - before.arrayBuffers)
        }
      })
      res.on('end', resolve)
      res.on('error', reject)
    }).on('error', reject)
  })
  const seconds = (performance.now() - started) / 1000
  t.equal(lines, total, `every row, in ${seconds.toFixed(1)} s`)
  t.equal(calls.list, total / 1000 + 1, 'read 1,000 rows at a time (the default), and once more to find the end')
  t.ok(bytes > 20_000_000, `a body of ${(bytes / 1e6).toFixed(1)} MB`)
  const mb = (n: number): string => `${(n / 1e6).toFixed(1)} MB`
  t.ok(heap < bytes / 10, `the heap grew by at most ${mb(heap)} while ${mb(bytes)} were sent`)
  // The socket's buffers on both ends (and backing stores a collection freed but not yet returned): not a
  // measure of the list.
  t.comment(`buffers: at most ${mb(buffers)} more`)
})

t0.test('HEAD with a streamed Accept: the stream\'s headers, no body', async (t) => {
  const { memory, calls } = failing(ROWS.slice(0, 50), Infinity, () => new Error('never'))
  class Products extends GenericListAPIView.with({ responseSchema: Product, repository: memory }) {
    static override listStream = { pageSize: 5 }
  }
  const app = await listening(t, Products)
  const head = await app.inject({ method: 'HEAD', url: '/products', headers: { accept: NDJSON } })
  t.same([head.statusCode, head.headers['content-type'], head.headers.vary, head.body], [200, `${NDJSON}; charset=utf-8`, 'Accept', ''])
  await sleep(50)
  // Fastify's HEAD route resumes a stream to discard it: every page is read for a body no one receives.
  // An event stream's HEAD is answered without running its method (docs/streaming.md); a list's could be too.
  t.equal(calls.list, 0, 'a HEAD reads nothing: its body would be dropped')
})

t0.test('a conditional list: the page has its ETag and 304; a stream has no ETag and is never a 304', async (t) => {
  const memory = new MemoryRepository<StoredT>({ rows: ROWS.slice(0, 20).map((r) => ({ ...r })) })
  class Products extends mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Product, repository: memory, conditional: { etag: true }
  }) {
    static override listStream = { pageSize: 3 }
  }
  const app = await build({ views: [{ view: Products, prefix: '/products' }] })
  t.teardown(() => app.close())
  const page = await get(app, '/products')
  const etag = String(page.headers.etag)
  t.match(etag, /^"/, 'the page is tagged')
  const notModified = await app.inject({ url: '/products', headers: { 'if-none-match': etag } })
  t.same([notModified.statusCode, notModified.headers.vary], [304, 'Accept'], 'a 304 varies as its 200 does (RFC 9110 §15.4.5)')
  for (const accept of [NDJSON, ARRAY]) {
    const stream = await get(app, '/products', accept)
    t.equal(stream.headers.etag, undefined, `${accept}: no ETag: the body is not known until it is sent`)
    const again = await app.inject({ url: '/products', headers: { accept, 'if-none-match': etag } })
    t.same([again.statusCode, again.body], [200, stream.body], `${accept}: the page's tag is not the stream's: sent whole`)
    t.equal((await app.inject({ url: '/products', headers: { accept, 'if-none-match': '*' } })).statusCode, 200, `${accept}: nor is *`)
  }
  // The 200's headers are documented once for all its media types.
  const ok = (await documentOf(t, Products)).paths['/products'].get.responses['200']
  t.same(Object.keys(ok.content), ['application/json', NDJSON, JSONL, ARRAY])
  t.notOk(ok.headers?.etag?.required, 'the ETag is documented, not as always sent: no stream carries one')
})

t0.test('a repository keyed by another field than id: the stream still sends every row once', async (t) => {
  const Coded = Type.Object({ code: Type.String(), rank: Type.Integer() })
  const rows = Array.from({ length: 20 }, (_, i) => ({ code: `k${String(i).padStart(2, '0')}`, rank: i % 2 }))
  class Ranks extends PaginationFilter.with({ orderingFields: ['rank'] }) {}
  const memory = new MemoryRepository({ rows, idField: 'code' })
  class ByCode extends GenericListAPIView.with({ responseSchema: Coded, repository: memory }) {
    static override listStream = { pageSize: 3 }
  }
  class Sorted extends GenericListAPIView.with({ responseSchema: Coded, repository: memory, filter: Ranks }) {
    static override listStream = { pageSize: 3 }
  }
  // A repository of your own that declares no key: the stream orders by `id`, the key the library assumes.
  const ids = new MemoryRepository({ rows: [{ id: 2, rank: 0 }, { id: 1, rank: 0 }, { id: 3, rank: 1 }] })
  const undeclared = {
    list: (criteria: Criteria, query?: ListQuery) => ids.list(criteria, query),
    get: (criteria: Criteria) => ids.get(criteria)
  }
  const Ranked = Type.Object({ id: Type.Integer(), rank: Type.Integer() })
  class Plain extends GenericListAPIView.with({ responseSchema: Ranked, repository: undeclared as never }) {
    static override listStream = { pageSize: 1 }
  }
  const app = await build({ views: [{ view: ByCode, prefix: '/codes' }, { view: Sorted, prefix: '/sorted' }, { view: Plain, prefix: '/plain' }] })
  t.same(idsOf(ndjsonRows(t, (await get(app, '/plain', NDJSON)).body)), [1, 2, 3], 'a store without keyFields: by id')
  t.teardown(() => app.close())
  const codes = (rs: ReadonlyArray<Record<string, unknown>>): unknown[] => rs.map((r) => r.code)
  t.same(codes(ndjsonRows(t, (await get(app, '/codes', NDJSON)).body)), rows.map((r) => r.code), 'without a filter: by the key, code')
  const page = (await get(app, '/sorted?sort=rank&page_size=100')).json().items
  t.equal(page.length, 20, 'the page has every row')
  // The filter's tie-breaker (`id`, its default) is no field of these rows: the stream breaks ties by the key.
  t.same(codes(ndjsonRows(t, (await get(app, '/sorted?sort=rank', NDJSON)).body)), codes(page), 'every row once, in the page\'s order')
})

// The cache and the document.

t0.test('the cache never serves a page to a stream, nor keeps a stream', async (t) => {
  const open = async () => {
    const memory = new MemoryRepository<StoredT>({ rows: ROWS.slice(0, 30).map((r) => ({ ...r })) })
    const calls = countLists(memory)
    class Products extends GenericViewSet.with({ responseSchema: Product, filter: ProductFilter, repository: memory }) {
      static override listStream = { pageSize: 7 }
      static override cache = { ttl: 60 }
    }
    const app = Fastify()
    configureApp(app, { cache: memoryCache() })
    await app.register(views, { views: [{ view: Products, prefix: '/products' }] })
    t.teardown(() => app.close())
    return { app, calls }
  }
  const xCache = (res: LightMyRequestResponse): unknown => res.headers['x-cache']

  const { app, calls } = await open()
  const miss = await get(app, '/products')
  const hit = await get(app, '/products')
  t.same([xCache(miss), xCache(hit), calls.list], ['MISS', 'HIT', 1], 'the page is cached')
  t.same([miss.headers.vary, hit.headers.vary], ['Accept', 'Accept'], 'a hit varies by Accept as the page it replays')
  for (const accept of [NDJSON, ARRAY]) {
    calls.list = 0
    const stream = await get(app, '/products', accept)
    t.equal(formOf(stream), accept === NDJSON ? 'ndjson' : 'array', `${accept} after a cached page: a stream`)
    // The cache's own hook marks every answer it did not serve (errors too) a MISS: a stream is read, never a HIT.
    t.not(xCache(stream), 'HIT', `no HIT on a stream (x-cache: ${String(xCache(stream))})`)
    t.equal(calls.list, 5, '30 rows, 7 at a time: read from the repository')
  }
  t.equal(xCache(await get(app, '/products')), 'HIT', 'the page is still the cached one')
  t.equal(xCache(await get(app, '/products', '*/*')), 'HIT', 'so is the page to */*')

  const fresh = await open()
  const first = await get(fresh.app, '/products?sort=-price', NDJSON)
  t.equal(formOf(first), 'ndjson')
  const again = await get(fresh.app, '/products?sort=-price', NDJSON)
  t.same([again.body, formOf(again)], [first.body, 'ndjson'], 'a stream again is streamed again, not kept')
  t.not(xCache(again), 'HIT')
  t.equal(fresh.calls.list, 10, 'each read the repository')
  t.same([xCache(await get(fresh.app, '/products?sort=-price')), xCache(await get(fresh.app, '/products?sort=-price'))], ['MISS', 'HIT'],
    'a page after a stream: a miss, then a hit')
})

/** The OpenAPI document of an app with `view` at /products, validated as a client's tool would. */
async function documentOf (t: Test, view: unknown): Promise<any> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Streams', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: view as never, prefix: '/products' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(doc), { valid: true }, 'the document is valid OpenAPI')
  return doc
}

/** A schema of the document with its `$ref` followed (to the document's components). */
function deref (doc: any, schema: any): any {
  return typeof schema?.$ref === 'string' ? doc.components.schemas[schema.$ref.replace('#/components/schemas/', '')] : schema
}

t0.test('the document: the list\'s 200 in each media type it is sent as', async (t) => {
  const repository = new MemoryRepository<StoredT>({ rows: [] })
  class Products extends GenericViewSet.with({ responseSchema: Product, filter: ProductFilter, repository }) {
    static override listStream = true
  }
  const doc = await documentOf(t, Products)
  const content = doc.paths['/products'].get.responses['200'].content
  t.same(Object.keys(content), ['application/json', NDJSON, JSONL, ARRAY], 'the page first, then the streamed forms')
  const page = deref(doc, content['application/json'].schema)
  t.equal(page.type, 'object', 'the page')
  const item = deref(doc, page.properties.items.items)
  t.same(item.required, ['id', 'name', 'category', 'price', 'rating'])
  for (const type of [NDJSON, JSONL]) {
    t.equal(content[type].schema.type, 'string', `${type}: text`)
    const lines = deref(doc, content[type]['x-itemSchema'])
    t.same([lines.type, Object.keys(lines.properties), lines.required],
      [item.type, Object.keys(item.properties), item.required], `${type}: each line is an item`)
  }
  t.equal(content[ARRAY].schema.type, 'array')
  t.same(deref(doc, content[ARRAY].schema.items), item, 'the streamed array: of items')
  t.same(Object.keys(doc.paths['/products/{id}'].get.responses['200'].content), ['application/json'], 'the detail read is not streamed')

  const forms = async (listStream: unknown): Promise<string[]> => {
    const { Products } = smallApp(t, { listStream })
    return Object.keys((await documentOf(t, Products)).paths['/products'].get.responses['200'].content)
  }
  t.same(await forms({ formats: ['array'] }), ['application/json', ARRAY])
  t.same(await forms({ formats: ['ndjson'] }), ['application/json', NDJSON, JSONL])
  t.same(await forms(undefined), ['application/json'])
})

t0.test('the document of a view with field sets: a line may lack what ?fields= leaves out', async (t) => {
  const { Products } = smallApp(t)
  const doc = await documentOf(t, Products)
  const content = doc.paths['/products'].get.responses['200'].content
  const item = deref(doc, deref(doc, content['application/json'].schema).properties.items.items)
  const line = deref(doc, content[NDJSON]['x-itemSchema'])
  t.same(item.required, ['id'], 'the page\'s items: only the key is always sent')
  t.same(line.required, item.required, 'a line is documented as the page\'s items are')
})

t0.test('a stream from synchronous SQLite lets other requests through between its pages', async (t) => {
  // 20,000 rows over a real socket read as fast as it can: the reads are synchronous, and the socket
  // takes pages as fast as they come, so without a turn of the event loop between pages nothing else
  // would run meanwhile. A chain of setImmediate callbacks counts the turns; each read notes the count.
  const db = new Database(':memory:')
  db.exec(DDL('REAL'))
  const insert = db.prepare(INSERT)
  db.transaction(() => { for (let i = 1; i <= 20_000; i++) insert.run(...values(row(i))) })()
  const repository = new SqliteRepository<StoredT>(db, TABLE)
  let turns = 0
  const seen: number[] = []
  const list = repository.list.bind(repository)
  repository.list = (...args) => { seen.push(turns); return list(...args) }
  class Big extends GenericListAPIView.with({ responseSchema: Product, repository }) {
    static override listStream = { pageSize: 100 }
  }
  const app = await build({ views: [{ view: Big, prefix: '/big' }] })
  t.teardown(async () => { await app.close(); db.close() })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  let counting = true
  const count = (): void => { turns++; if (counting) setImmediate(count) }
  setImmediate(count)
  const lines = await new Promise<number>((resolve, reject) => {
    http.get({ port, path: '/big', headers: { accept: NDJSON } }, (res) => {
      let n = 0
      res.on('data', (chunk: Buffer) => { for (const byte of chunk) if (byte === 10) n++ })
      res.on('end', () => { resolve(n) })
    }).on('error', reject)
  })
  counting = false
  t.equal(lines, 20_000, 'every row')
  t.equal(seen.length, 201, 'read in 200 pages and the short one after')
  const back = seen.findIndex((value, i) => i > 0 && value === seen[i - 1])
  t.equal(back, -1, 'the event loop turned before every page was read')
})
