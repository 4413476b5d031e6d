// Cursor pages walked whole, through the HTTP API, on every store: forward to the last page, back by
// `previous_page` to the first, each page's items and both cursors checked against the pages a
// reference sort gives; empty pages, cursors of rows deleted meanwhile, and cursors a client edited.
import t0, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { AsyncGenericListAPIView, CursorPaginationFilter, GenericListAPIView, MemoryRepository } from '../lib/generics.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { build, problem } from './helpers.js'
import { openSqlite } from './sqlite-driver.js'
import { freshDatabase, postgres } from './pg-server.js'

const Book = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  available: Type.Boolean(),
  signed: Type.Union([Type.Boolean(), Type.Null()]),
  year: Type.Union([Type.Integer(), Type.Null()])
}, { $id: 'Book' })
type BookT = Static<typeof Book>

/** Eleven books: titles tie in threes, `available` is a boolean, `signed` a boolean or null, `year` an integer or null. */
const BOOKS: readonly BookT[] = Array.from({ length: 11 }, (_, i) => ({
  id: i + 1,
  title: ['Dune', 'Emma', 'Ulysses'][(i * 7) % 3],
  available: i % 3 !== 1,
  signed: [true, null, false, null][i % 4],
  year: i % 4 === 2 ? null : 1950 + ((i * 5) % 7)
}))

const TABLE = {
  table: 'books',
  columns: ['id', 'title', 'available', 'signed', 'year'],
  decode: { available: 'boolean', signed: 'boolean' }
} satisfies SqlTableOptions<BookT>
const DDL = (key: string): string =>
  `CREATE TABLE books (id ${key} PRIMARY KEY, title TEXT NOT NULL, available BOOLEAN NOT NULL, signed BOOLEAN, year INTEGER)`

class Books extends CursorPaginationFilter {
  static override orderingFields = ['id', 'title', 'available', 'signed', 'year']
  static override maxPageSize = 20
}

/** A store of the books, served as a cursor-paged list at `/books`, and a way to delete some of its rows behind it. */
interface Store {
  app: FastifyInstance
  remove: (ids: number[]) => Promise<void>
}

type Open = (t: Test) => Promise<Store>

const listView = (repository: unknown, family: 'sync' | 'async') => {
  const Base = (family === 'sync' ? GenericListAPIView : AsyncGenericListAPIView) as typeof GenericListAPIView
  return class BookList extends Base {
    static override responseSchema = Book
    static override filter = Books
    static override repository = repository as never
  }
}

async function serve (t: Test, repository: unknown, family: 'sync' | 'async'): Promise<FastifyInstance> {
  const app = await build({ views: [{ view: listView(repository, family), prefix: '/books' }] })
  t.teardown(() => app.close())
  return app
}

const openMemory: Open = async (t) => {
  const repository = new MemoryRepository<BookT>({ rows: BOOKS.map((book) => ({ ...book })) })
  return { app: await serve(t, repository, 'sync'), remove: async (ids) => { repository.deleteMany({ id__in: ids }) } }
}

/** SQLite in memory, over better-sqlite3 (the sync repository) or node:sqlite (the async one). */
const openSqliteStore = (driver: 'better-sqlite3' | 'node:sqlite'): Open => async (t) => {
  const db = openSqlite(':memory:', { driver })
  t.teardown(() => db.close())
  db.exec(DDL('INTEGER'))
  const insert = db.prepare('INSERT INTO books (id, title, available, signed, year) VALUES (?, ?, ?, ?, ?)')
  // SQLite keeps booleans as 0 and 1; the repository decodes them (TABLE.decode).
  const bit = (value: boolean | null): number | null => value === null ? null : Number(value)
  for (const b of BOOKS) insert.run(b.id, b.title, bit(b.available), bit(b.signed), b.year)
  if (driver === 'node:sqlite') {
    const repository = new AsyncSqliteRepository<BookT>(db, TABLE)
    return { app: await serve(t, repository, 'async'), remove: async (ids) => { await repository.deleteMany({ id__in: ids }) } }
  }
  const repository = new SqliteRepository<BookT>(db, TABLE)
  return { app: await serve(t, repository, 'sync'), remove: async (ids) => { repository.deleteMany({ id__in: ids }) } }
}

/** The reference order: each key in its direction, nulls after every value ascending and before them descending, false before true. */
function sorted (rows: readonly BookT[], ordering: readonly string[]): BookT[] {
  const compare = (a: BookT, b: BookT): number => {
    for (const token of ordering) {
      const descending = token.startsWith('-')
      const field = (descending ? token.slice(1) : token) as keyof BookT
      const [x, y] = [a[field], b[field]]
      if (x === y) continue
      // Ascending: a null is after every value; descending reverses that, as it reverses the values.
      const c = x === null ? 1 : y === null ? -1 : x < y ? -1 : 1
      return descending ? -c : c
    }
    return 0
  }
  return [...rows].sort(compare)
}

/** The ordering a cursor seeks along: the sort keys, then `id` when they lack it. */
const totalOrder = (sort: readonly string[]): string[] => sort.some((k) => k.replace(/^-/, '') === 'id') ? [...sort] : [...sort, 'id']

/** A cursor as the library writes it: base64url JSON of the direction, the ordering and the boundary values. */
const cursorOf = (d: 'n' | 'p', ordering: readonly string[], row: BookT | undefined): string =>
  Buffer.from(JSON.stringify({ d, o: ordering, v: row === undefined ? [] : ordering.map((k) => row[k.replace(/^-/, '') as keyof BookT]) })).toString('base64url')

interface Page { items: BookT[], next_page: string | null, previous_page: string | null }

/** The pages a walk from the first one must answer, with their cursors. */
function expectedPages (rows: readonly BookT[], sort: readonly string[], size: number): Page[] {
  const ordering = totalOrder(sort)
  const all = sorted(rows, ordering)
  const pages: Page[] = []
  for (let start = 0; start < all.length || start === 0; start += size) {
    const items = all.slice(start, start + size)
    pages.push({
      items,
      next_page: start + size < all.length ? cursorOf('n', ordering, items[items.length - 1]) : null,
      previous_page: start > 0 ? cursorOf('p', ordering, items[0]) : null
    })
  }
  return pages
}

const query = (sort: readonly string[], size: number): string => `/books?page_size=${size}${sort.map((k) => `&sort=${k}`).join('')}`

/** The page a request answers, which must be a 200 (an empty page too). */
async function page (t: Test, app: FastifyInstance, url: string): Promise<Page> {
  const res = await app.inject(url)
  if (res.statusCode !== 200) t.fail(`${url}: ${res.statusCode} ${res.body}`)
  return res.json()
}

/** Walks forward to the last page, then back to the first, checking every page whole at each step. */
async function walk (
  t: Test, app: FastifyInstance, rows: readonly BookT[], sort: readonly string[], size: number
): Promise<void> {
  const base = query(sort, size)
  const expected = expectedPages(rows, sort, size)
  const forward: Page[] = [await page(t, app, base)]
  while (forward[forward.length - 1].next_page !== null && forward.length <= expected.length) {
    forward.push(await page(t, app, `${base}&cursor=${forward[forward.length - 1].next_page}`))
  }
  t.same(forward, expected, `${base}: forward, every page with its cursors`)
  const backward: Page[] = [forward[forward.length - 1]]
  while (backward[0].previous_page !== null && backward.length <= expected.length) {
    backward.unshift(await page(t, app, `${base}&cursor=${backward[0].previous_page}`))
  }
  t.same(backward, expected, `${base}: back by previous_page, the same pages with the same cursors`)
}

const SORTS: ReadonlyArray<readonly string[]> = [
  [], ['-id'], ['title'], ['-title'], ['available'], ['-available'], ['signed'], ['-signed'], ['year'], ['-year'],
  ['available', '-title'], ['-signed', 'year'], ['title', '-available', 'id']
]

async function cases (t: Test, open: Open): Promise<void> {
  await t.test('forward through every page and back, every ordering, several page sizes', async (t) => {
    const { app } = await open(t)
    for (const sort of SORTS) for (const size of [1, 3, 4, 11, 20]) await walk(t, app, BOOKS, sort, size)
  })

  await t.test('a boolean key orders false before true, its cursor holds the boolean', async (t) => {
    const { app } = await open(t)
    const first = await page(t, app, query(['available'], 4))
    t.same(first.items.map((b) => b.available), [false, false, false, false])
    const second = await page(t, app, `${query(['available'], 4)}&cursor=${first.next_page}`)
    t.same(second.items.map((b) => [b.available, b.id]), [[true, 1], [true, 3], [true, 4], [true, 6]], 'the next page crosses from false to true')
    t.same(JSON.parse(Buffer.from(String(second.previous_page), 'base64url').toString()), { d: 'p', o: ['available', 'id'], v: [true, 1] })
    const signed = await page(t, app, `${query(['-signed'], 5)}`)
    t.same(signed.items.map((b) => b.signed), [null, null, null, null, null], 'descending, the nulls come first')
  })

  await t.test('the previous page of the first page is empty: 200, no previous page, the next one is the first', async (t) => {
    const { app } = await open(t)
    for (const sort of [[], ['-title'], ['available'], ['-signed']]) {
      const base = query(sort, 3)
      const first = await page(t, app, base)
      const before = await page(t, app, `${base}&cursor=${cursorOf('p', totalOrder(sort), first.items[0])}`)
      t.same(before, { items: [], next_page: cursorOf('n', totalOrder(sort), undefined), previous_page: null }, `${base}: an empty page`)
      t.same(await page(t, app, `${base}&cursor=${before.next_page}`), first, `${base}: its next page is the first page`)
    }
  })

  await t.test('a previous page whose rows were deleted meanwhile is empty and leads back to the start', async (t) => {
    const { app, remove } = await open(t)
    const base = query(['title'], 4)
    const [first, second] = expectedPages(BOOKS, ['title'], 4)
    const got = await page(t, app, `${base}&cursor=${first.next_page}`)
    t.same(got, second)
    await remove(first.items.map((b) => b.id))
    const rest = BOOKS.filter((b) => !first.items.some((gone) => gone.id === b.id))
    const before = await page(t, app, `${base}&cursor=${got.previous_page}`)
    t.same(before, { items: [], next_page: cursorOf('n', ['title', 'id'], undefined), previous_page: null })
    t.same(await page(t, app, `${base}&cursor=${before.next_page}`), expectedPages(rest, ['title'], 4)[0], 'the start is now the old second page')
  })

  await t.test('rows deleted between pages: no row repeats or is skipped, the cursors still lead both ways', async (t) => {
    const { app, remove } = await open(t)
    const base = query(['-year'], 3)
    const pages = expectedPages(BOOKS, ['-year'], 3)
    const first = await page(t, app, base)
    t.same(first, pages[0])
    // The last row of the first page (the next cursor's boundary) and one row of the second page go.
    const gone = [first.items[2].id, pages[1].items[1].id]
    await remove(gone)
    const rest = BOOKS.filter((b) => !gone.includes(b.id))
    const restOrder = sorted(rest, ['-year', 'id'])
    const second = await page(t, app, `${base}&cursor=${first.next_page}`)
    t.same(second.items, restOrder.slice(2, 5), 'the next page starts after the deleted boundary, without the deleted row')
    t.equal(second.next_page, cursorOf('n', ['-year', 'id'], restOrder[4]))
    t.equal(second.previous_page, cursorOf('p', ['-year', 'id'], restOrder[2]))
    const back = await page(t, app, `${base}&cursor=${second.previous_page}`)
    t.same(back, { items: restOrder.slice(0, 2), next_page: cursorOf('n', ['-year', 'id'], restOrder[1]), previous_page: null },
      'back: the two rows left before it, the first page')
    t.same((await page(t, app, `${base}&cursor=${back.next_page}`)).items, second.items, 'and forward again to the same page')
  })

  await t.test('a next page whose rows were deleted meanwhile is empty, and its previous page is the last one', async (t) => {
    const { app, remove } = await open(t)
    const base = query(['signed'], 4)
    const pages = expectedPages(BOOKS, ['signed'], 4)
    const second = await page(t, app, `${base}&cursor=${pages[0].next_page}`)
    t.same(second, pages[1])
    await remove(pages[2].items.map((b) => b.id))
    const empty = await page(t, app, `${base}&cursor=${second.next_page}`)
    t.same(empty, { items: [], next_page: null, previous_page: cursorOf('p', ['signed', 'id'], undefined) })
    const rest = BOOKS.filter((b) => !pages[2].items.some((gone) => gone.id === b.id))
    const last = await page(t, app, `${base}&cursor=${empty.previous_page}`)
    t.same(last, expectedPages(rest, ['signed'], 4)[1], 'the last page, its cursors as a walk from the start gives them')
    await remove(rest.map((b) => b.id))
    t.same(await page(t, app, `${base}&cursor=${empty.previous_page}`), { items: [], next_page: null, previous_page: null },
      'the last page of an empty list: empty, no cursor either way')
    t.same(await page(t, app, `${base}&cursor=${cursorOf('n', ['signed', 'id'], undefined)}`), { items: [], next_page: null, previous_page: null },
      'so is its first page')
  })

  await t.test('a cursor that is not one of this ordering is a 400 naming the cursor parameter', async (t) => {
    const { app } = await open(t)
    const base = query(['available'], 3)
    const wire = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
    const invalid = [
      wire({ d: 'n', o: ['title', 'id'], v: ['Emma', 3] }), // another ordering
      wire({ d: 'x', o: ['available', 'id'], v: [true, 3] }), // no direction
      wire({ d: 'n', o: ['available', 'id'], v: [true] }), // too few values
      wire({ d: 'n', o: ['available', 'id'], v: [{}, 3] }), // a value no key holds
      wire({ d: 'p', o: ['available', 'id'] }), // no values
      wire(['n', ['available', 'id'], [true, 3]]), // not an object
      Buffer.from('{"d":"n"').toString('base64url') // not JSON
    ]
    for (const cursor of invalid) {
      const body = problem(t, await app.inject(`${base}&cursor=${cursor}`), 400)
      t.same(body.errors, [{ detail: 'Invalid cursor for this ordering', pointer: '#/cursor', in: 'query', parameter: 'cursor' }], cursor)
    }
    const malformed = problem(t, await app.inject(`${base}&cursor=not*base64`), 400)
    t.match(malformed.errors, [{ parameter: 'cursor' }], 'text outside base64url is refused by the schema, naming the parameter')
    // Values of kinds the keys do not hold are not the cursor's to judge (it knows no column types):
    // the memory store and SQLite find no row after them, PostgreSQL refuses what its column cannot hold.
    for (const v of [['yes', 3], [true, 'x'], [7, 3], [true, 2.5]]) {
      const res = await app.inject(`${base}&cursor=${wire({ d: 'n', o: ['available', 'id'], v })}`)
      t.ok([200, 400].includes(res.statusCode), `${JSON.stringify(v)}: a page or a 400, never a 500 (${res.statusCode})`)
    }
    const edited = await page(t, app, `${base}&cursor=${wire({ d: 'n', o: ['available', 'id'], v: [false, 8] })}`)
    t.same(edited.items.map((b) => b.id), [11, 1, 3], 'a cursor edited to other values of the right kinds only moves the window')
  })
}

t0.test('memory', (t) => cases(t, openMemory))
t0.test('SQLite (better-sqlite3)', (t) => cases(t, openSqliteStore('better-sqlite3')))
t0.test('SQLite (node:sqlite)', (t) => cases(t, openSqliteStore('node:sqlite')))

const started = await postgres()
t0.test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  t.teardown(() => { server.stop() })
  const { pool } = await freshDatabase(server, 'cursor_pages')
  t.teardown(() => pool.end())
  let opened = 0
  const openPostgres: Open = async (t) => {
    // Each case its own table, so that the deletes of one leave the others' rows.
    const table = `books_${++opened}`
    await pool.query(DDL('INTEGER').replace('books', table))
    for (const b of BOOKS) await pool.query(`INSERT INTO ${table} VALUES ($1, $2, $3, $4, $5)`, [b.id, b.title, b.available, b.signed, b.year])
    const repository = new PostgresRepository<BookT>(pool, { ...TABLE, table })
    return { app: await serve(t, repository, 'async'), remove: async (ids) => { await repository.deleteMany({ id__in: ids }) } }
  }
  await cases(t, openPostgres)
})
