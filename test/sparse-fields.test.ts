import { test, type Test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import Database from 'better-sqlite3'
import pg from 'pg'
import { Type, type Static, type TObject, type TSchema } from '@sinclair/typebox'
import views, { mix, AsyncListAPIView } from '../lib/index.js'
import { permission, type Authenticator } from '../lib/access.js'
import {
  AsyncGenericViewSet, CursorPaginationFilter, GenericListAPIView, GenericRetrieveAPIView, GenericViewSet, ListEnvelope,
  MemoryRepository, PaginationFilter, SparseFieldsMixin, asyncRepository, type ListQuery
} from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { build, caught, problem } from './helpers.js'
import { postgres, type PgServer } from './pg-server.js'

// Sparse fieldsets (docs/sparse-fields.md): ?fields= and ?omit= on the list and the detail read of
// a generic view; an unknown name is a 400 naming it; the key and the validators' fields are always
// sent; a SQL repository selects only the columns asked for, the key and the sort keys (a computed
// field nobody asked for is not computed); the ETag of a field set is its own; the document says the
// read may send part of the object. On the memory store, SQLite (both drivers) and PostgreSQL.

const Book = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  author: Type.String(),
  year: Type.Integer(),
  version: Type.Integer(),
  stars: Type.Integer({ description: 'Computed: twice the id.' })
}, { $id: 'SparseBook' })
type BookT = Static<typeof Book>
const IdParams = Type.Object({ id: Type.Integer() })
const ROWS: BookT[] = [
  { id: 1, title: 'Emma', author: 'Austen', year: 1815, version: 1, stars: 2 },
  { id: 2, title: 'Ulysses', author: 'Joyce', year: 1922, version: 1, stars: 4 },
  { id: 3, title: 'Dubliners', author: 'Joyce', year: 1914, version: 1, stars: 6 },
  { id: 4, title: 'Persuasion', author: 'Austen', year: 1817, version: 1, stars: 8 },
  { id: 5, title: 'Beloved', author: 'Morrison', year: 1987, version: 1, stars: 10 }
]

class Pages extends PaginationFilter.with({ defaultPageSize: 10, fields: { author: Type.String() }, orderingFields: ['year', 'title'] }) {}
class Cursors extends CursorPaginationFilter.with({ defaultPageSize: 2, orderingFields: ['year'] }) {}

/** A store the cases run on: a fresh repository over the rows, the SELECT texts it ran, and how often it computed `stars`. */
interface Opened {
  repository: unknown
  selects: () => string[]
  computed: () => Promise<number>
  close: () => Promise<void>
}
interface Store { name: string, async: boolean, open: () => Promise<Opened> }

const TABLE = {
  table: 'books',
  columns: ['id', 'title', 'author', 'year', 'version'],
  versionColumn: 'version'
} satisfies Omit<SqlTableOptions<BookT>, 'computed'>
const DDL = (key: string): string => `CREATE TABLE books (id ${key}, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL, version INTEGER NOT NULL)`

/** Every text `prepare` was given: what the repository ran (each distinct text once, as the driver caches them). */
function recording<D extends { prepare: (sql: string) => unknown }> (db: D): { db: D, texts: string[] } {
  const texts: string[] = []
  const prepare = db.prepare.bind(db)
  db.prepare = (sql: string) => { texts.push(sql); return prepare(sql) }
  return { db, texts }
}

const memoryStore = (async: boolean): Store => ({
  name: async ? 'memory (async)' : 'memory',
  async,
  open: async () => {
    const memory = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })), versionField: 'version' })
    const repository = async ? asyncRepository(memory) : memory
    return { repository, selects: () => [], computed: async () => 0, close: async () => {} }
  }
})

const betterSqlite: Store = {
  name: 'SQLite (better-sqlite3, sync)',
  async: false,
  open: async () => {
    let ticks = 0
    const { db, texts } = recording(new Database(':memory:'))
    db.function('tick', (id: unknown) => { ticks++; return Number(id) * 2 })
    db.exec(DDL('INTEGER PRIMARY KEY'))
    const insert = db.prepare('INSERT INTO books (id, title, author, year, version) VALUES (?, ?, ?, ?, ?)')
    for (const row of ROWS) insert.run(row.id, row.title, row.author, row.year, row.version)
    const repository = new SqliteRepository<BookT>(db, { ...TABLE, computed: { stars: 'tick(books.id)' } })
    return { repository, selects: () => texts.filter((sql) => sql.startsWith('SELECT')), computed: async () => ticks, close: async () => { db.close() } }
  }
}

const nodeSqlite: Store = {
  name: 'SQLite (node:sqlite, async)',
  async: true,
  open: async () => {
    let ticks = 0
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
    const { db, texts } = recording(new DatabaseSync(':memory:'))
    db.function('tick', (id: unknown) => { ticks++; return Number(id) * 2 })
    db.exec(DDL('INTEGER PRIMARY KEY'))
    const insert = db.prepare('INSERT INTO books (id, title, author, year, version) VALUES (?, ?, ?, ?, ?)')
    for (const row of ROWS) insert.run(row.id, row.title, row.author, row.year, row.version)
    const repository = new AsyncSqliteRepository<BookT>(db, { ...TABLE, computed: { stars: 'tick(books.id)' } })
    return { repository, selects: () => texts.filter((sql) => sql.startsWith('SELECT')), computed: async () => ticks, close: async () => { db.close() } }
  }
}

function postgresStore (server: PgServer): Store {
  let n = 0
  return {
    name: 'PostgreSQL',
    async: true,
    open: async () => {
      const admin = new pg.Pool({ connectionString: server.url, max: 1 })
      const database = `sparse_${++n}`
      await admin.query(`CREATE DATABASE ${database}`)
      await admin.end()
      const pool = new pg.Pool({ connectionString: server.url.replace(/\/postgres$/, `/${database}`), max: 4 })
      pool.on('error', () => {})
      const texts: string[] = []
      // Every statement a connection of the pool runs (the repository's, and the count below).
      pool.on('connect', (client) => {
        const query = client.query.bind(client) as (...args: unknown[]) => unknown
        client.query = ((...args: unknown[]) => { texts.push(typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text)); return query(...args) }) as never
      })
      await pool.query(DDL('INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY'))
      for (const row of ROWS) await pool.query('INSERT INTO books (id, title, author, year, version) VALUES ($1, $2, $3, $4, $5)', [row.id, row.title, row.author, row.year, row.version])
      // Reads run read-only here: what was computed is seen in the statements (\`* 2\`), not counted.
      const repository = new PostgresRepository<BookT>(pool, { ...TABLE, computed: { stars: 'books.id * 2' } })
      const selects = (): string[] => texts.filter((sql) => sql.startsWith('SELECT'))
      const computed = async (): Promise<number> => selects().filter((sql) => sql.includes('* 2')).length === 0 ? 0 : 5
      return { repository, selects, computed, close: async () => { await pool.end() } }
    }
  }
}

function booksView (store: Store, repository: unknown, filter: typeof Pages | typeof Cursors = Pages) {
  const statics = {
    responseSchema: Book,
    detailParams: IdParams,
    filter,
    conditional: { etag: true, versionField: 'version' },
    repository: repository as never
  }
  return store.async
    ? class Books extends mix(ConditionalMixin, SparseFieldsMixin, AsyncGenericViewSet).with(statics) {}
    : class Books extends mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with(statics) {}
}

const keysOf = (items: object[]): string[][] => items.map((item) => Object.keys(item))

async function storeCases (t: Test, store: Store): Promise<void> {
  const opened = async (filter: typeof Pages | typeof Cursors = Pages) => {
    const { repository, selects, computed, close } = await store.open()
    const app = await build({ views: [{ view: booksView(store, repository, filter), prefix: '/books' }] })
    t.teardown(async () => { await app.close(); await close() })
    return { app, selects, computed }
  }

  await t.test('a list sends the fields asked for, the key and the version; the store reads no more', async (t) => {
    const { app, selects, computed } = await opened()
    const before = selects().length
    const res = await app.inject({ url: '/books?fields=title&sort=-year' })
    t.equal(res.statusCode, 200)
    const page = res.json()
    t.same(page.items, [
      { id: 5, title: 'Beloved', version: 1 }, { id: 2, title: 'Ulysses', version: 1 }, { id: 3, title: 'Dubliners', version: 1 },
      { id: 4, title: 'Persuasion', version: 1 }, { id: 1, title: 'Emma', version: 1 }
    ], 'ordered by a field it does not send')
    t.equal(page.total_items, 5, 'the page is counted as before')
    t.equal(await computed(), 0, 'the computed field nobody asked for was not computed')
    if (store.name.startsWith('memory')) return
    const list = selects().slice(before).find((sql) => sql.includes('ORDER BY'))
    t.ok(list, 'the list statement ran')
    const selected = /^SELECT (.*?) FROM/.exec(list ?? '')?.[1] ?? ''
    t.match(selected, /"title"/)
    t.match(selected, /"year"/, 'the sort key is selected for the ORDER BY and a cursor')
    t.notMatch(selected, /"author"|stars/, 'nothing else')
  })

  await t.test('?omit= leaves fields out; both together; the whole object computes what it shows', async (t) => {
    const { app, computed } = await opened()
    const omittedRes = await app.inject({ url: '/books?omit=stars,author,year' })
    t.equal(omittedRes.statusCode, 200, omittedRes.body)
    const omitted = omittedRes.json()
    t.same(keysOf(omitted.items)[0], ['id', 'title', 'version'])
    t.equal(await computed(), 0)
    const both = (await app.inject({ url: '/books?fields=title,author&omit=author' })).json()
    t.same(keysOf(both.items)[0], ['id', 'title', 'version'], 'omit takes out of what fields chose')
    const wholeRes = await app.inject({ url: '/books?fields=stars' })
    t.equal(wholeRes.statusCode, 200, wholeRes.body)
    const whole = wholeRes.json()
    t.same(whole.items[0], { id: 1, version: 1, stars: 2 })
    if (!store.name.startsWith('memory')) t.equal(await computed(), 5, 'computed once per row sent')
  })

  await t.test('the detail read takes the parameters; the full read is the object as before', async (t) => {
    const { app } = await opened()
    t.same((await app.inject({ url: '/books/2?fields=author' })).json(), { id: 2, author: 'Joyce', version: 1 })
    t.same((await app.inject({ url: '/books/2' })).json(), ROWS[1])
    t.same((await app.inject({ url: '/books/2?fields=id,title,author,year,version,stars' })).json(), ROWS[1], 'every field named: the whole object')
    problem(t, await app.inject({ url: '/books/99?fields=title' }), 404)
  })

  await t.test('a field set has its own ETag: 304 for it, 412 for a write that names it', async (t) => {
    const { app } = await opened()
    const whole = await app.inject({ url: '/books/1' })
    const part = await app.inject({ url: '/books/1?fields=title' })
    const other = await app.inject({ url: '/books/1?fields=author' })
    const reordered = await app.inject({ url: '/books/1?fields=title,title,%20title' })
    t.not(part.headers.etag, whole.headers.etag, 'not the tag of the whole object')
    t.not(part.headers.etag, other.headers.etag, 'nor of another set')
    t.equal(reordered.headers.etag, part.headers.etag, 'one set, however it is spelt')
    const every = await app.inject({ url: '/books/1?fields=id,title,author,year,version,stars' })
    t.equal(every.headers.etag, whole.headers.etag, 'every field named: the whole object, and its tag')
    // A version tag of a set is the whole object's, a dash, and the set's eight-character name.
    const named = /^(.*)-([\w-]{8})"$/.exec(part.headers.etag as string)
    t.equal(named?.[1], (whole.headers.etag as string).slice(0, -1), 'the version\'s tag, then the set\'s name')
    t.equal((await app.inject({ url: '/books/1?fields=title', headers: { 'if-none-match': part.headers.etag as string } })).statusCode, 304)
    t.equal((await app.inject({ url: '/books/1?fields=author', headers: { 'if-none-match': part.headers.etag as string } })).statusCode, 200)
    t.equal((await app.inject({ url: '/books/1', headers: { 'if-none-match': whole.headers.etag as string } })).statusCode, 304)
    const stale = await app.inject({ method: 'PATCH', url: '/books/1', payload: { year: 1816 }, headers: { 'if-match': part.headers.etag as string } })
    problem(t, stale, 412)
    const written = await app.inject({ method: 'PATCH', url: '/books/1?fields=title', payload: { year: 1816 }, headers: { 'if-match': whole.headers.etag as string } })
    t.equal(written.statusCode, 200, 'the whole object\'s tag names the version a write compares')
    t.same(written.json(), { ...ROWS[0], year: 1816, version: 2 }, 'a write takes no field set: it sends the whole object')
    t.equal(written.headers.etag, (await app.inject({ url: '/books/1' })).headers.etag, 'with the tag a read of it sends')
    const after = await app.inject({ url: '/books/1?fields=title', headers: { 'if-none-match': part.headers.etag as string } })
    t.equal(after.statusCode, 200, 'a new version: a new tag for the set too')
    const listed = await app.inject({ url: '/books?fields=title' })
    t.equal((await app.inject({ url: '/books?fields=title', headers: { 'if-none-match': listed.headers.etag as string } })).statusCode, 304)
    t.not((await app.inject({ url: '/books' })).headers.etag, listed.headers.etag)
  })

  await t.test('cursor pages over a sort key the set leaves out: every row once, in order', async (t) => {
    const { app } = await opened(Cursors)
    const seen: object[] = []
    let url: string | null = '/books?fields=title&sort=year'
    for (let pages = 0; url !== null && pages < 10; pages++) {
      const page: { items: object[], next_page: string | null } = (await app.inject({ url })).json()
      seen.push(...page.items)
      url = page.next_page === null ? null : `/books?fields=title&sort=year&cursor=${encodeURIComponent(page.next_page)}`
    }
    t.same(seen, [
      { id: 1, title: 'Emma', version: 1 }, { id: 4, title: 'Persuasion', version: 1 }, { id: 3, title: 'Dubliners', version: 1 },
      { id: 2, title: 'Ulysses', version: 1 }, { id: 5, title: 'Beloved', version: 1 }
    ])
  })

  await t.test('unknown, hostile and oversized names are a 400 naming the parameter; nothing reaches the store', async (t) => {
    const { app, selects } = await opened()
    const before = selects().length
    const refused = async (query: string): Promise<Record<string, any>> => problem(t, await app.inject({ url: `/books?${query}` }), 400)
    const there = 'the fields are id, title, author, year, version, stars'
    const unknown = await refused('fields=title,isbn,price')
    t.equal(unknown.detail, 'The query string is invalid.')
    t.same(unknown.errors, [{ detail: `Unknown fields "isbn", "price"; ${there}`, pointer: '#/fields', in: 'query', parameter: 'fields' }])
    const omitted = await refused('omit=secret')
    t.same(omitted.errors, [{ detail: `Unknown field "secret"; ${there}`, pointer: '#/omit', in: 'query', parameter: 'omit' }])
    const both = await refused('fields=isbn&omit=secret')
    t.same(both.errors.map((e: { parameter: string }) => e.parameter), ['fields', 'omit'], 'each parameter has its entry')
    for (const hostile of ['id;DROP TABLE books', 'title"--', "title') OR 1=1", 'books.title', '*', 'title AS x', '__proto__', 'constructor']) {
      const body = await refused(`fields=${encodeURIComponent(hostile)}`)
      t.equal(body.errors[0].parameter, 'fields', `${hostile}: refused as a name`)
    }
    const deep = Array.from({ length: 50 }, () => 'a').join('.')
    t.equal((await refused(`fields=${deep}`)).errors[0].parameter, 'fields', 'a path 50 deep: longer than the parameter takes')
    const nested = Array.from({ length: 21 }, () => 'a').join('.')
    t.equal((await refused(`fields=${nested}`)).errors[0].detail, `Unknown field "${nested.slice(0, 40)}…"; ${there}`,
      'a path 21 deep is one unknown name, quoted to its first 40 characters')
    const forty = 'b'.repeat(40)
    t.equal((await refused(`fields=${forty}`)).errors[0].detail, `Unknown field "${forty}"; ${there}`, '40 characters: quoted whole')
    const many = (await refused(`fields=${Array.from({ length: 12 }, (_, i) => `x${i}`).join(',')}`)).errors[0].detail
    t.match(many, /"x0", "x1", "x2", "x3", "x4" and 7 more/, 'the first five quoted, the rest counted')
    const five = (await refused('fields=x0,x1,x2,x3,x4')).errors[0].detail
    t.equal(five, `Unknown fields "x0", "x1", "x2", "x3", "x4"; ${there}`, 'five: all quoted, none counted')
    const thousands = Array.from({ length: 10_000 }, () => 'title').join(',')
    t.equal((await refused(`fields=${thousands}`)).errors[0].parameter, 'fields', '10,000 names: longer than the parameter takes')
    t.equal((await refused('fields=title&fields=author')).errors[0].parameter, 'fields', 'the parameter twice: not a string')
    t.equal(selects().length, before, 'no statement was prepared for any of them')
    t.equal((await app.inject({ url: '/books?fields=,,%20title%20,,' })).statusCode, 200, 'spaces and empty names are nothing')
    t.same(keysOf((await app.inject({ url: '/books?fields=' })).json().items)[0], ['id', 'version'], 'no name: the kept fields alone')
  })
}

for (const store of [memoryStore(false), memoryStore(true), betterSqlite, nodeSqlite]) {
  test(store.name, async (t) => { await storeCases(t, store) })
}

const started = await postgres()
test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  t.teardown(() => { server.stop() })
  await storeCases(t, postgresStore(server))
})

test('a set costs a 10,000-name query nothing but its bound, and concurrent sets stay apart', async (t) => {
  const memory = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })), versionField: 'version' })
  const app = await build({ views: [{ view: booksView(memoryStore(false), memory), prefix: '/books' }] })
  t.teardown(() => app.close())
  // The longest value the parameter takes, every name repeated: split and read within the bound.
  const names = ['id', 'title', 'author', 'year', 'version', 'stars']
  const bound = 2 * names.reduce((sum, name) => sum + name.length + 2, 0)
  let longest = ''
  while (longest.length + 'title,'.length <= bound) longest += 'title,'
  const started = process.hrtime.bigint()
  const res = await app.inject({ url: `/books?fields=${longest}` })
  t.equal(res.statusCode, 200)
  t.ok(Number(process.hrtime.bigint() - started) / 1e6 < 200, 'answered quickly')
  problem(t, await app.inject({ url: `/books?fields=${longest}x` }), 400)
  const asked = ['title', 'author', 'year', 'stars']
  const answers = await Promise.all(Array.from({ length: 200 }, (_, i) => app.inject({ url: `/books/${1 + (i % 5)}?fields=${asked[i % 4]}` })))
  answers.forEach((answer, i) => { t.same(Object.keys(answer.json()), ['id', 'version', asked[i % 4]].sort((a, b) => names.indexOf(a) - names.indexOf(b))) })
})

test('object permissions judge the whole row, whatever the set sends', async (t) => {
  interface Reader { name: string }
  const Owned = Type.Object({ id: Type.Integer(), title: Type.String(), owner: Type.String() })
  const IsOwner = permission<{ owner: string }, Reader>({ name: 'IsOwner', object: (reader, row) => row.owner === reader.name })
  const byHeader: Authenticator<Reader> = {
    scheme: 'reader',
    securityScheme: { type: 'apiKey', in: 'header', name: 'x-reader' },
    challenge: 'Reader realm="test"',
    authenticate: (request) => typeof request.headers['x-reader'] === 'string' ? { name: request.headers['x-reader'] } : undefined
  }
  const memory = new MemoryRepository({ rows: [{ id: 1, title: 'mine', owner: 'ann' }] })
  class Notes extends mix(SparseFieldsMixin, GenericRetrieveAPIView).with({
    responseSchema: Owned, detailParams: IdParams, repository: memory, permissions: [IsOwner]
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  problem(t, await app.inject({ url: '/notes/1?fields=title', headers: { 'x-reader': 'bob' } }), 403)
  t.same((await app.inject({ url: '/notes/1?fields=title', headers: { 'x-reader': 'ann' } })).json(), { id: 1, title: 'mine' })
})

test('a repository that reads every field still sends only the set; one that maps its rows is not asked to narrow', async (t) => {
  const queries: ListQuery[] = []
  class Whole extends MemoryRepository<BookT> {
    override list (criteria: Record<string, unknown>, query?: ListQuery): BookT[] {
      if (query !== undefined) queries.push(query)
      return super.list(criteria, query)
    }
  }
  const whole = new Whole({ rows: ROWS.map((row) => ({ ...row })) })
  class Plain extends mix(SparseFieldsMixin, GenericListAPIView).with({ responseSchema: Book, repository: whole }) {}
  class Mapped extends mix(SparseFieldsMixin, GenericListAPIView).with({ responseSchema: Book, repository: whole }) {
    static override mappingActions = ['list']
  }
  const app = await build({ views: [{ view: Plain, prefix: '/plain' }, { view: Mapped, prefix: '/mapped' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/plain?fields=title' })).json()[0], { id: 1, title: 'Emma' }, 'cut to the set, without a filter: an array')
  t.same(queries.at(-1)?.fields, ['id', 'title'])
  t.same((await app.inject({ url: '/mapped?fields=title' })).json()[0], { id: 1, title: 'Emma' })
  t.equal(queries.at(-1)?.fields, undefined, 'a mapping list reads whole rows')
})

test('a repository of one\'s own that declares no key: id is the key, always sent', async (t) => {
  const own = {
    create: () => null,
    get: () => null,
    list: () => ROWS.map((row) => ({ ...row })),
    count: () => ROWS.length,
    update: () => null,
    delete: () => false
  }
  class Own extends mix(SparseFieldsMixin, GenericListAPIView).with({ responseSchema: Book, repository: own }) {}
  const app = await build({ views: [{ view: Own, prefix: '/own' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/own?fields=title' })).json()[0], { id: 1, title: 'Emma' })
})

test('a list of its own item schema chooses among its fields; the detail read among the whole object\'s', async (t) => {
  const Summary = Type.Object({ id: Type.Integer(), title: Type.String() })
  class Shelf extends mix(SparseFieldsMixin, GenericListAPIView, GenericRetrieveAPIView).with({
    responseSchema: Book,
    listItemSchema: Summary,
    detailParams: IdParams,
    repository: new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })) })
  }) {}
  const app = await build({ views: [{ view: Shelf, prefix: '/shelf' }] })
  t.teardown(() => app.close())
  t.match(problem(t, await app.inject({ url: '/shelf?fields=author' }), 400).errors[0].detail, /^Unknown field "author"; the fields are id, title$/)
  t.same((await app.inject({ url: '/shelf?omit=title' })).json()[0], { id: 1 })
  t.same((await app.inject({ url: '/shelf/1?fields=author' })).json(), { id: 1, author: 'Austen' })
})

test('a list in an envelope of every row, and a detail read in the view\'s envelope', async (t) => {
  const memory = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })) })
  class Shelf extends mix(SparseFieldsMixin, GenericListAPIView, GenericRetrieveAPIView).with({
    responseSchema: Book, detailParams: IdParams, filter: PaginationFilter.with({ paginator: new ListEnvelope('books') }), envelope: 'book', repository: memory
  }) {}
  const app = await build({ views: [{ view: Shelf, prefix: '/shelf' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/shelf?fields=year' })).json().books[4], { id: 5, year: 1987 })
  t.same((await app.inject({ url: '/shelf/5?omit=title,author,year,version' })).json(), { book: { id: 5, stars: 10 } })
})

test('a page of one\'s own: the objects are cut in its member that is an array, wherever it stands', async (t) => {
  class Counted extends ListEnvelope {
    override pageSchema (item: TSchema): TObject {
      return Type.Object({ total: Type.Optional(Type.Integer()), books: Type.Array(item) })
    }
  }
  class Shelf extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Book, filter: PaginationFilter.with({ paginator: new Counted('books') }), repository: new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })) })
  }) {}
  const app = await build({ views: [{ view: Shelf, prefix: '/shelf' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/shelf?fields=year' })).json().books[0], { id: 1, year: 1815 })
})

test('the document says what a read of a set may send', async (t) => {
  const memory = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })), versionField: 'version' })
  const app = Fastify({ logger: false })
  await app.register(swagger, swaggerOptions({ info: { title: 'sparse', version: '1' } }))
  await app.register(views, { views: [{ view: booksView(memoryStore(false), memory), prefix: '/books' }] })
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Record<string, any>
  const result = await new Validator().validate(document)
  t.ok(result.valid, JSON.stringify(result.errors))
  const fieldset = document.components.schemas.SparseBookFieldset
  t.same(fieldset.required, ['id'], 'the key opens the object: required; the rest may be left out')
  t.same(Object.keys(fieldset.properties), ['id', 'title', 'author', 'year', 'version', 'stars'])
  t.equal(document.paths['/books/{id}'].get.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/SparseBookFieldset')
  t.equal(document.components.schemas.SparseBookFieldsetNumberedPage.properties.items.items.$ref, '#/components/schemas/SparseBookFieldset')
  t.equal(document.paths['/books/{id}'].put.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/SparseBook', 'a write sends the whole object')
  const parameters = document.paths['/books'].get.parameters.filter((p: { name: string }) => p.name === 'fields' || p.name === 'omit')
  t.equal(parameters.length, 2)
  t.match(parameters[0], { in: 'query', required: false, schema: { type: 'string', maxLength: 82 } })
  t.match(parameters[0].description, /id, version are always sent/)
})

test('registration refuses what sparse fieldsets cannot honour', async (t) => {
  const memory = new MemoryRepository<BookT>({ rows: [] })
  const refusal = async (view: unknown): Promise<string> => {
    const error = await caught(() => build({ views: [{ view: view as never, prefix: '/x' }] }))
    t.match(error, { code: 'FV_ERR_SPARSE_FIELDS' })
    return (error as Error).message
  }
  t.match(await refusal(class Union extends mix(SparseFieldsMixin, GenericRetrieveAPIView).with({
    responseSchema: Type.Union([Book, Type.Null()]), detailParams: IdParams, repository: memory
  }) {}), /^Cannot register Union: its retrieve sends a schema that is not one object: .* Give the view an object responseSchema, or leave SparseFieldsMixin out/)
  const Tagged = Type.Object({ id: Type.Integer(), fields: Type.String() })
  t.match(await refusal(class Named extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Tagged,
    filter: PaginationFilter.with({ fields: { fields: Type.String() } }),
    repository: new MemoryRepository({ rows: [] })
  }) {}), /its filter has a parameter "fields"/)
  t.match(await refusal(class Left extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Type.Object({ id: Type.Integer(), omit: Type.String() }),
    filter: PaginationFilter.with({ fields: { omit: Type.String() } }),
    repository: new MemoryRepository({ rows: [] })
  }) {}), /its filter has a parameter "omit"/)
  t.match(await refusal(class Yours extends mix(SparseFieldsMixin, AsyncListAPIView, AsyncGenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, repository: asyncRepository(memory)
  }) {}), /its list is an action you write/)
  // A class of `.with()` is named by what it was made of.
  t.match(await refusal(mix(SparseFieldsMixin, GenericListAPIView).with({ repository: memory })),
    /^Cannot register mix\(SparseFieldsMixin, GenericListAPIView\)\.with\(repository\): its list sends no schema: .* Give the view an object listItemSchema or responseSchema, or leave SparseFieldsMixin out/)
  // A pagination of one's own whose page has no array of the objects: there is nothing to cut.
  class Counted extends ListEnvelope {
    override pageSchema (): TObject { return Type.Object({ total: Type.Integer() }) }
  }
  t.match(await refusal(class Totals extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Book, filter: PaginationFilter.with({ paginator: new Counted('books') }), repository: memory
  }) {}), /its list's page holds its objects in no member that is an array of them/)
})

test('the parameters say what is always sent, and take as many characters as the fields\' names', async (t) => {
  const Note = Type.Object({ id: Type.Integer(), title: Type.String(), owner: Type.String() })
  const Keyless = Type.Object({ title: Type.String(), body: Type.String() })
  class Notes extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Note, repository: new MemoryRepository({ rows: [{ id: 1, title: 'a', owner: 'ann' }] })
  }) {}
  class Keyless_ extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Keyless, repository: new MemoryRepository({ rows: [] })
  }) {}
  const memory = new MemoryRepository<BookT>({ rows: [], versionField: 'version' })
  const app = Fastify({ logger: false })
  await app.register(swagger, swaggerOptions({ info: { title: 'sparse', version: '1' } }))
  await app.register(views, {
    views: [{ view: Notes, prefix: '/notes' }, { view: Keyless_, prefix: '/keyless' }, { view: booksView(memoryStore(false), memory), prefix: '/books' }]
  })
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Record<string, any>
  const parameter = (path: string, name: string): Record<string, any> =>
    document.paths[path].get.parameters.find((p: { name: string }) => p.name === name)
  t.same(parameter('/notes', 'fields').description, 'Only these fields of each object, by name, separated by commas. id is always sent.')
  t.same(parameter('/keyless', 'omit').description, 'Every field of each object but these, by name, separated by commas.', 'no key in the object: nothing always sent')
  t.same(parameter('/books', 'omit').description, 'Every field of each object but these, by name, separated by commas. id, version are always sent.')
  t.equal(parameter('/books', 'omit').schema.maxLength, 82, 'omit is bounded as fields is')
  t.equal(parameter('/notes', 'fields').schema.maxLength, 64, 'short names: at least 64 characters')
  // The bound of a schema with short names: ten names (60 characters) are taken, and sent once each.
  const res = await app.inject({ url: `/notes?fields=${Array.from({ length: 10 }, () => 'title').join(',')}` })
  t.same(res.json(), [{ id: 1, title: 'a' }])
})

test('the partial schema orders the fields as the whole one is written, and requires the key that opens it', async (t) => {
  // `note` is declared first but optional: the serializer writes the required `id` and `title` first. The partial schema keeps
  // that order, so that a read and a write send the whole object with the same bytes, and a hashed tag read is one a write takes.
  const Note = Type.Object({ note: Type.Optional(Type.String()), id: Type.Integer(), title: Type.String() }, { $id: 'SparseNote' })
  const Pair = Type.Object({ id: Type.Integer(), version: Type.Integer() }, { $id: 'SparsePair' })
  const Titled = Type.Object({ title: Type.String(), id: Type.Integer() }, { $id: 'SparseTitled' })
  const Unnamed = Type.Object({ id: Type.Integer(), title: Type.String() })
  const Loose = Type.Object({ id: Type.Optional(Type.Integer()), title: Type.Optional(Type.String()) }, { $id: 'SparseLoose' })
  const Shared = Type.Object({ id: Type.Integer(), version: Type.Integer(), title: Type.String() }, { $id: 'SparseShared' })
  const rows = [{ id: 1, version: 1, title: 'first', note: 'kept' }]
  const memory = (): MemoryRepository<any> => new MemoryRepository<any>({ rows: rows.map((row) => ({ ...row })), versionField: 'version' })
  const read = (responseSchema: TObject) =>
    class extends mix(SparseFieldsMixin, GenericRetrieveAPIView).with({
      responseSchema, detailParams: IdParams, repository: memory()
    }) {}
  class Notes extends mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Note, detailParams: IdParams, conditional: { etag: true }, repository: new MemoryRepository<any>({ rows: [{ id: 1, title: 'first', note: 'kept' }] })
  }) {}
  const versioned = { conditional: { etag: true, versionField: 'version' }, detailParams: IdParams }
  const Versioned = mix(ConditionalMixin, SparseFieldsMixin, GenericRetrieveAPIView)
  class Pairs extends Versioned.with({ ...versioned, responseSchema: Pair, repository: memory() }) {}
  class Versions extends Versioned.with({ ...versioned, responseSchema: Shared, repository: memory() }) {}
  const app = Fastify({ logger: false })
  await app.register(swagger, swaggerOptions({ info: { title: 'sparse', version: '1' } }))
  await app.register(views, {
    views: [
      { view: Notes, prefix: '/notes' }, { view: Pairs, prefix: '/pairs' }, { view: read(Titled), prefix: '/titled' },
      { view: read(Unnamed), prefix: '/unnamed' }, { view: Versions, prefix: '/versions' }, { view: read(Shared), prefix: '/shared' },
      { view: read(Loose), prefix: '/loose' }
    ]
  })
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Record<string, any>
  t.ok((await new Validator().validate(document)).valid)
  const schemas = document.components.schemas
  const sent = (path: string): Record<string, any> => document.paths[path].get.responses['200'].content['application/json'].schema
  t.same(Object.keys(schemas.SparseNoteFieldset.properties), ['id', 'title', 'note'], 'required first, as the serializer writes them')
  t.same(schemas.SparseNoteFieldset.required, ['id'])
  t.same(schemas.SparsePairFieldset.required, ['id', 'version'], 'every field kept and required: every one required')
  t.notOk('required' in schemas.SparseTitledFieldset, 'a key that does not open the object: nothing required')
  t.notOk('required' in schemas.SparseLooseFieldset, 'nothing required of the object: nothing of its fieldset')
  t.same(sent('/unnamed/{id}').properties?.title, { type: 'string' }, 'an unnamed schema: its fieldset is written out')
  t.notOk(Object.keys(schemas).some((name) => name.startsWith('undefined')), 'and has no name')
  t.equal(sent('/versions/{id}').$ref, '#/components/schemas/SparseSharedFieldset', 'one schema, two sets of kept fields: two fieldsets')
  t.equal(sent('/shared/{id}').$ref, '#/components/schemas/SparseSharedFieldset2')

  const whole = await app.inject({ url: '/notes/1' })
  t.same(whole.json(), { id: 1, title: 'first', note: 'kept' })
  t.same((await app.inject({ url: '/notes/1?fields=note' })).json(), { id: 1, note: 'kept' })
  const written = await app.inject({ method: 'PATCH', url: '/notes/1', payload: { title: 'second' }, headers: { 'if-match': whole.headers.etag as string } })
  t.equal(written.statusCode, 200, 'the tag a read sends is the one a write compares')
  t.equal((await app.inject({ url: '/notes/1' })).headers.etag, written.headers.etag, 'and the one a write sends is the one a read sends')
})

test('sets whose names run together have tags of their own', async (t) => {
  // {a, b} and {ab} are two sets of one object: one's tag must not answer 304 for the other.
  const Letters = Type.Object({
    id: Type.Integer(), version: Type.Integer(), a: Type.String(), b: Type.String(), ab: Type.String()
  })
  class Words extends mix(ConditionalMixin, SparseFieldsMixin, GenericRetrieveAPIView).with({
    responseSchema: Letters,
    detailParams: IdParams,
    conditional: { etag: true, versionField: 'version' },
    repository: new MemoryRepository({ rows: [{ id: 1, version: 1, a: 'x', b: 'y', ab: 'z' }], versionField: 'version' })
  }) {}
  const app = await build({ views: [{ view: Words, prefix: '/words' }] })
  t.teardown(() => app.close())
  const split = await app.inject({ url: '/words/1?fields=a,b' })
  const joined = await app.inject({ url: '/words/1?fields=ab' })
  t.not(split.headers.etag, joined.headers.etag)
  t.equal((await app.inject({ url: '/words/1?fields=ab', headers: { 'if-none-match': split.headers.etag as string } })).statusCode, 200)
})

test('a row with no version yet: a set of it is tagged by the hash of what is sent', async (t) => {
  // A version tag needs an integer version; a row written before the column existed is tagged as a body is.
  const Unversioned = Type.Object({
    id: Type.Integer(), title: Type.String(), author: Type.String(), version: Type.Union([Type.Integer(), Type.Null()])
  })
  class Rows extends mix(ConditionalMixin, SparseFieldsMixin, GenericRetrieveAPIView).with({
    responseSchema: Unversioned,
    detailParams: IdParams,
    conditional: { etag: true, versionField: 'version' },
    repository: new MemoryRepository({ rows: [{ id: 1, title: 'Emma', author: 'Austen', version: null }], versionField: 'version' })
  }) {}
  const app = await build({ views: [{ view: Rows, prefix: '/rows' }] })
  t.teardown(() => app.close())
  const part = await app.inject({ url: '/rows/1?fields=title' })
  t.equal(part.statusCode, 200)
  t.same(part.json(), { id: 1, title: 'Emma', version: null })
  t.match(part.headers.etag, /^"[\w-]+"$/, 'a hash: no version, no set name')
  t.not(part.headers.etag, (await app.inject({ url: '/rows/1' })).headers.etag)
  t.equal((await app.inject({ url: '/rows/1?fields=title', headers: { 'if-none-match': part.headers.etag as string } })).statusCode, 304)
})

test('a route of another shape that has a version is hashed: only the object and its sets have version tags', async (t) => {
  const Stamp = Type.Object({ id: Type.Integer(), version: Type.Integer() })
  const Stamped = mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book,
    detailParams: IdParams,
    conditional: { etag: true, versionField: 'version' },
    repository: new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })), versionField: 'version' })
  }, {}, (route) => ({
    stamp: route.get('/:id/stamp', { responseSchema: Stamp }, function () { return { id: 1, version: 1 } })
  }))
  const app = await build({ views: [{ view: Stamped, prefix: '/books' }] })
  t.teardown(() => app.close())
  const stamp = await app.inject({ url: '/books/1/stamp' })
  t.same(stamp.json(), { id: 1, version: 1 })
  t.match(stamp.headers.etag, /^"[\w-]+"$/, 'a hash of the body')
  t.not(stamp.headers.etag, (await app.inject({ url: '/books/1' })).headers.etag, 'not the tag of version 1 of the book')
})

test('without the mixin, ?fields= is a query parameter like any unknown one: ignored', async (t) => {
  const Plain = Type.Object({ id: Type.Integer(), title: Type.String(), version: Type.Integer() }, { $id: 'SparsePlain' })
  class Whole extends mix(ConditionalMixin, GenericRetrieveAPIView).with({
    responseSchema: Plain,
    detailParams: IdParams,
    envelope: 'book',
    conditional: { etag: true, versionField: 'version' },
    repository: new MemoryRepository({ rows: [{ id: 1, title: 'Emma', version: 1 }], versionField: 'version' })
  }) {}
  const app = await build({ views: [{ view: Whole, prefix: '/whole' }] })
  t.teardown(() => app.close())
  const asked = await app.inject({ url: '/whole/1?fields=title' })
  t.same(asked.json(), { book: { id: 1, title: 'Emma', version: 1 } })
  t.equal(asked.headers.etag, (await app.inject({ url: '/whole/1' })).headers.etag, 'the whole object\'s tag')
})

test('a table of columns alone selects them bare; a name that is no column never reaches a statement', async (t) => {
  const Columns = Type.Object({
    id: Type.Integer(), title: Type.String(), author: Type.String(), year: Type.Integer(), version: Type.Integer()
  })
  const { db, texts } = recording(new Database(':memory:'))
  t.teardown(() => { db.close() })
  db.exec(DDL('INTEGER PRIMARY KEY'))
  const insert = db.prepare('INSERT INTO books (id, title, author, year, version) VALUES (?, ?, ?, ?, ?)')
  for (const row of ROWS) insert.run(row.id, row.title, row.author, row.year, row.version)
  const repository = new SqliteRepository<Static<typeof Columns>>(db, TABLE)
  class Shelf extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Columns, filter: Pages, repository
  }) {}
  const app = await build({ views: [{ view: Shelf, prefix: '/books' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/books?fields=title&sort=-year' })).json().items[0], { id: 5, title: 'Beloved' })
  const list = texts.find((sql) => sql.startsWith('SELECT') && sql.includes('ORDER BY'))
  t.equal(/^SELECT (.*?) FROM/.exec(list ?? '')?.[1], '"id", "title", "year"', 'no computed field, no join: the columns, unqualified')
  // The view refuses a name its schema lacks; the repository, called directly, refuses one it has no column for.
  const before = texts.length
  t.match(await caught(() => repository.list({}, { orderBy: [], fields: ['title', 'stars'] })), { code: 'FV_ERR_SQL_NAME', message: /no column "stars"/ })
  t.equal(texts.length, before, 'no statement was prepared')
})

test('a member the store does not hold (optional, filled by a view of yours) is never asked of it', async (t) => {
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL)')
  db.prepare('INSERT INTO notes VALUES (1, ?)').run('first')
  const Note = Type.Object({ id: Type.Integer(), title: Type.String(), extra: Type.Optional(Type.String()) })
  const repository = new SqliteRepository<Static<typeof Note>>(db, { table: 'notes', columns: ['id', 'title'] })
  class Notes extends mix(SparseFieldsMixin, GenericListAPIView).with({ responseSchema: Note, repository }) {}
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const extra = await app.inject('/notes?fields=extra')
  t.equal(extra.statusCode, 200, extra.body)
  t.same(extra.json(), [{ id: 1 }], 'the key, and nothing the store does not hold')
  t.same((await app.inject('/notes?fields=title,extra')).json(), [{ id: 1, title: 'first' }])
})

test('a representation remembers the sets its clients name, and no more than 256 of them', async (t) => {
  const memory = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })), versionField: 'version' })
  const app = await build({ views: [{ view: booksView(memoryStore(false), memory), prefix: '/books' }] })
  t.teardown(() => app.close())
  // 336 spellings of one set (empty names are nothing): more than are kept, each answered the same.
  const spellings: string[] = []
  for (let i = 0; i < 21; i++) for (let j = 0; j < 16; j++) spellings.push(`fields=title${','.repeat(i)}&omit=${','.repeat(j)}`)
  const answers = []
  for (const query of [...spellings, spellings[0]]) answers.push((await app.inject(`/books/1?${query}`)).json())
  t.ok(answers.every((answer) => JSON.stringify(answer) === JSON.stringify({ id: 1, title: 'Emma', version: 1 })), 'every spelling, the first again after the others')
})
