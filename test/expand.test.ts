import { test, type Test } from 'tap'
import Fastify, { type LightMyRequestResponse } from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import views, { APIView, ViewRouter, mix } from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import { AllowAny, ReadOnly, permission, type Permission } from '../lib/access.js'
import {
  AsyncGenericViewSet, BaseFilter, GenericListAPIView, GenericRetrieveAPIView, GenericViewSet, ListEnvelope,
  MemoryRepository, PaginationFilter, SoftDeleteMixin, SparseFieldsMixin, asyncRepository,
  type Criteria, type ListQuery, type RepositoryOptions
} from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { etagOf } from '../lib/http/preconditions.js'
import { Forbidden } from '../lib/errors.js'
import { build, caught, headerAuth, problem } from './helpers.js'
import { freshDatabase, postgres, type PgServer } from './pg-server.js'

// Expanded relations (docs/expand.md): a view of SparseFieldsMixin declares `expand`, relations to
// other generic views registered in the app (to one object, `on` its key; to many, at most `many`
// of them), and its list and detail read take `?expand=book,loans`, embedding each relation's objects
// as a member (`book: {...} | null`, `loans: [...]`), read with one `list` of the related repository
// per relation per page (none for a page without values), within the related view's own scope
// (getKwargs, soft delete) and judged by its permissions as registered (a refusal is the whole
// request's 403 or 401; a scope or object rule narrows what is embedded). `?fields=book.title` and
// `?omit=book.author` narrow the embedded objects (their key and validators kept; a `fields` naming
// only relations' fields leaves the object's own whole); one level only; unknown and hostile names
// are 400s that read nothing. An expanded read's ETag is the hash of its body. The document, and the
// registration refusals (FV_ERR_EXPAND). On the memory store (both families), SQLite (better-sqlite3
// sync, node:sqlite async) and PostgreSQL, with the statements each request runs counted.

interface User { name: string, admin: boolean }
const USERS: Record<string, User> = { ann: { name: 'ann', admin: false }, bob: { name: 'bob', admin: false }, root: { name: 'root', admin: true } }
const byHeader = headerAuth(USERS)
const IsAdmin = permission<unknown, User>({ name: 'IsAdmin', request: (user) => user.admin, message: 'Admins only.' })
const ANN = { 'x-user': 'ann' }
const BOB = { 'x-user': 'bob' }
const ROOT = { 'x-user': 'root' }

const Book = Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.String(), version: Type.Integer() }, { $id: 'ExpandBook' })
const Loan = Type.Object({ id: Type.Integer(), book_id: Type.Integer(), member: Type.String(), days: Type.Integer() }, { $id: 'ExpandLoan' })
type BookT = Static<typeof Book>
type LoanT = Static<typeof Loan>
type LoanRow = LoanT & { returned_at: string | null }
const IdParams = Type.Object({ id: Type.Integer() })

const BOOKS: BookT[] = [
  { id: 1, title: 'Emma', author: 'Austen', version: 1 },
  { id: 2, title: 'Ulysses', author: 'Joyce', version: 1 },
  { id: 3, title: 'Dubliners', author: 'Joyce', version: 1 },
  { id: 4, title: 'Persuasion', author: 'Austen', version: 1 },
  { id: 5, title: 'Beloved', author: 'Morrison', version: 1 }
]
const RETURNED = '2026-01-02T00:00:00.000Z'
// Book 1 has four loans, one returned; book 5's only loan is returned; loan 8's book is none.
const LOANS: LoanRow[] = [
  { id: 1, book_id: 1, member: 'ann', days: 3, returned_at: null },
  { id: 2, book_id: 1, member: 'bob', days: 1, returned_at: RETURNED },
  { id: 3, book_id: 1, member: 'ann', days: 5, returned_at: null },
  { id: 4, book_id: 1, member: 'cy', days: 2, returned_at: null },
  { id: 5, book_id: 2, member: 'bob', days: 7, returned_at: null },
  { id: 6, book_id: 3, member: 'ann', days: 4, returned_at: null },
  { id: 7, book_id: 5, member: 'cy', days: 6, returned_at: RETURNED },
  { id: 8, book_id: 99, member: 'bob', days: 9, returned_at: null }
]
const bookOf = (id: number): BookT => BOOKS.find((book) => book.id === id) as BookT
const loanOf = (id: number): LoanT => {
  const { returned_at: _returned, ...loan } = LOANS.find((row) => row.id === id) as LoanRow
  return loan
}

/** A fresh pair of repositories over the rows, the reads they ran so far (SQL texts, or `<table>.<method>` on memory), and their closing. */
interface Opened { books: unknown, loans: unknown, reads: () => string[], close: () => Promise<void> }
interface Store { name: string, async: boolean, sql: boolean, open: () => Promise<Opened> }

const BOOK_TABLE = { table: 'books', columns: ['id', 'title', 'author', 'version'], versionColumn: 'version' } satisfies SqlTableOptions<BookT>
const LOAN_TABLE = { table: 'loans', columns: ['id', 'book_id', 'member', 'days', 'returned_at'] } satisfies SqlTableOptions<LoanRow>
const DDL = (key: string): string[] => [
  `CREATE TABLE books (id ${key}, title TEXT NOT NULL, author TEXT NOT NULL, version INTEGER NOT NULL)`,
  `CREATE TABLE loans (id ${key}, book_id INTEGER NOT NULL, member TEXT NOT NULL, days INTEGER NOT NULL, returned_at TEXT)`
]
const BOOK_INSERT = 'INSERT INTO books (id, title, author, version) VALUES '
const LOAN_INSERT = 'INSERT INTO loans (id, book_id, member, days, returned_at) VALUES '
const bookValues = (row: BookT): unknown[] => [row.id, row.title, row.author, row.version]
const loanValues = (row: LoanRow): unknown[] => [row.id, row.book_id, row.member, row.days, row.returned_at]

/** A repository whose reads are written down by `<table>.<method>`, for the memory store. */
function logged<R extends object> (repository: R, table: string, log: string[]): R {
  for (const method of ['list', 'get', 'count']) {
    const read = Reflect.get(repository, method) as (...args: unknown[]) => unknown
    Reflect.set(repository, method, (...args: unknown[]) => { log.push(`${table}.${method}`); return read.apply(repository, args) })
  }
  return repository
}

/**
 * A SQLite database whose statements are written down each time one runs (the repository keeps what
 * it prepares, so counting `prepare` would count each text once): what a request costs.
 */
function executing<D extends { prepare: (sql: string) => unknown }> (db: D, texts: string[]): D {
  const prepare = db.prepare.bind(db)
  const executed = (sql: string): unknown => {
    const statement = prepare(sql) as Record<string, unknown>
    for (const method of ['all', 'get', 'run', 'iterate']) {
      const run = statement[method]
      if (typeof run === 'function') statement[method] = (...args: unknown[]) => { texts.push(sql); return run.apply(statement, args) }
    }
    return statement
  }
  db.prepare = executed
  return db
}

const memoryStore = (async: boolean): Store => ({
  name: async ? 'memory (async)' : 'memory',
  async,
  sql: false,
  open: async () => {
    const log: string[] = []
    const books = logged(new MemoryRepository<BookT>({ rows: BOOKS.map((row) => ({ ...row })), versionField: 'version' }), 'books', log)
    const loans = logged(new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) }), 'loans', log)
    return {
      books: async ? asyncRepository(books) : books,
      loans: async ? asyncRepository(loans) : loans,
      reads: () => log,
      close: async () => {}
    }
  }
})

/** The database of a SQLite driver, as the cases use it. */
interface SqliteDb { prepare: (sql: string) => unknown, exec: (sql: string) => unknown, close: () => unknown }

function sqliteStore (name: string, async: boolean, open: () => SqliteDb): Store {
  return {
    name,
    async,
    sql: true,
    open: async () => {
      const texts: string[] = []
      const db = executing(open(), texts)
      for (const statement of DDL('INTEGER PRIMARY KEY')) db.exec(statement)
      const insertBook = db.prepare(`${BOOK_INSERT}(?, ?, ?, ?)`) as { run: (...values: unknown[]) => unknown }
      for (const row of BOOKS) insertBook.run(...bookValues(row))
      const insertLoan = db.prepare(`${LOAN_INSERT}(?, ?, ?, ?, ?)`) as { run: (...values: unknown[]) => unknown }
      for (const row of LOANS) insertLoan.run(...loanValues(row))
      const driver = db as never // either driver: the repositories take both
      return {
        books: async
          ? new AsyncSqliteRepository<BookT>(driver, BOOK_TABLE)
          : new SqliteRepository<BookT>(driver, BOOK_TABLE),
        loans: async
          ? new AsyncSqliteRepository<LoanRow>(driver, LOAN_TABLE)
          : new SqliteRepository<LoanRow>(driver, LOAN_TABLE),
        reads: () => texts.filter((sql) => sql.startsWith('SELECT')),
        close: async () => { db.close() }
      }
    }
  }
}

const betterSqlite = sqliteStore('SQLite (better-sqlite3, sync)', false, () => new Database(':memory:'))
const nodeSqlite = sqliteStore('SQLite (node:sqlite, async)', true, () => new (process.getBuiltinModule('node:sqlite').DatabaseSync)(':memory:'))

function postgresStore (server: PgServer): Store {
  let n = 0
  return {
    name: 'PostgreSQL',
    async: true,
    sql: true,
    open: async () => {
      const { pool, statements: texts } = await freshDatabase(server, `expand_${++n}`)
      for (const statement of DDL('INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')) await pool.query(statement)
      for (const row of BOOKS) await pool.query(`${BOOK_INSERT}($1, $2, $3, $4)`, bookValues(row))
      for (const row of LOANS) await pool.query(`${LOAN_INSERT}($1, $2, $3, $4, $5)`, loanValues(row))
      return {
        books: new PostgresRepository<BookT>(pool, BOOK_TABLE),
        loans: new PostgresRepository<LoanRow>(pool, LOAN_TABLE),
        reads: () => texts.filter((sql) => sql.startsWith('SELECT')),
        close: async () => { await pool.end() }
      }
    }
  }
}

type Permissions = ReadonlyArray<Permission<never>>
interface Access { permissions?: Permissions, actionPermissions?: Readonly<Record<string, Permissions>> }

class BookPages extends PaginationFilter.with({ defaultPageSize: 10, orderingFields: ['title'] }) {}
class LoanFilter extends BaseFilter.with({ fields: { member: Type.String() } }) {}

/**
 * The views of the cases: books (conditional, paged) embed their first two loans; loans (an array,
 * filtered by member, the returned ones out of scope) embed their book. Each names the other.
 */
function libraryViews (store: Store, opened: Opened, access: Access = {}) {
  const bookStatics = {
    responseSchema: Book,
    detailParams: IdParams,
    filter: BookPages,
    conditional: { etag: true, versionField: 'version' },
    repository: opened.books as never
  }
  const Books = store.async
    ? class Books extends mix(ConditionalMixin, SparseFieldsMixin, AsyncGenericViewSet).with(bookStatics) {
      static override actionPermissions = access.actionPermissions ?? {}
    }
    : class Books extends mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with(bookStatics) {
      static override actionPermissions = access.actionPermissions ?? {}
    }
  const loanStatics = {
    responseSchema: Loan,
    detailParams: IdParams,
    filter: LoanFilter,
    repository: opened.loans as never,
    expand: { book: { view: Books, on: { id: 'book_id' } } }
  }
  // A returned loan is kept for the records, and out of the view's scope.
  const Loans = store.async
    ? class Loans extends mix(SparseFieldsMixin, AsyncGenericViewSet).with(loanStatics, {
      getKwargs () { return { returned_at: null } }
    }) {}
    : class Loans extends mix(SparseFieldsMixin, GenericViewSet).with(loanStatics, {
      getKwargs () { return { returned_at: null } }
    }) {}
  Books.expand = { loans: { view: Loans, on: { book_id: 'id' }, many: 2 } }
  return { Books, Loans }
}

const withBook = (id: number): Record<string, unknown> => {
  const loan = loanOf(id)
  return { ...loan, book: loan.book_id === 99 ? null : bookOf(loan.book_id) }
}
const withLoans = (id: number, loans: number[]): Record<string, unknown> =>
  ({ ...bookOf(id), loans: loans.map(loanOf) })

const pick = (object: Record<string, unknown>, names: string[]): Record<string, unknown> =>
  Object.fromEntries(names.filter((name) => name in object).map((name) => [name, object[name]]))

/** What a request answered, and the reads it ran. */
interface Answered { res: LightMyRequestResponse, ran: string[] }

async function storeCases (t: Test, store: Store): Promise<void> {
  const opened = async () => {
    const repositories = await store.open()
    const { Books, Loans } = libraryViews(store, repositories)
    const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
    t.teardown(async () => { await app.close(); await repositories.close() })
    // The first reads of a SQL repository may describe its table: done before anything is counted.
    await app.inject({ url: '/books' })
    await app.inject({ url: '/loans' })
    const { reads } = repositories
    const get = async (url: string, headers: Record<string, string> = {}): Promise<Answered> => {
      const before = reads().length
      const res = await app.inject({ url, headers })
      return { res, ran: reads().slice(before) }
    }
    return { app, get }
  }

  await t.test('loans embed their book, books their first two loans: one read per relation, where a client makes N+1', async (t) => {
    const { get } = await opened()
    const loans = await get('/loans?expand=book')
    t.equal(loans.res.statusCode, 200)
    t.same(loans.res.json(), [1, 3, 4, 5, 6, 8].map(withBook), 'each loan in scope with its book; a loan whose book is none: null')
    t.equal(loans.ran.length, 2, 'the page, and one read of the books')
    // The alternative: the page, then each loan's book by hand.
    const plain = await get('/loans')
    t.equal(plain.ran.length, 1)
    let byHand = plain.ran.length
    for (const loan of plain.res.json<LoanT[]>()) byHand += (await get(`/books/${loan.book_id}`)).ran.length
    t.equal(byHand, 7, 'by hand: N + 1 reads for N = 6 loans')
    t.comment(`${store.name}: 6 loans with expand=book: ${loans.ran.length} reads; each book fetched by hand: ${byHand}`)

    const books = await get('/books?expand=loans')
    t.equal(books.res.statusCode, 200)
    const page = books.res.json()
    t.same(page.items, [withLoans(1, [1, 3]), withLoans(2, [5]), withLoans(3, [6]), withLoans(4, []), withLoans(5, [])],
      'at most two loans each, the first by key, returned ones (out of the loans\' scope) never: none is an empty list')
    t.equal(page.total_items, 5, 'the page is counted as before')
    const unexpanded = await get('/books')
    t.equal(books.ran.length, unexpanded.ran.length + 1, 'the page\'s own reads, and one read of the loans')
    t.comment(`${store.name}: a page of 5 books: ${unexpanded.ran.length} reads; with expand=loans: ${books.ran.length}`)

    const empty = await get('/loans?member=nobody&expand=book')
    t.same(empty.res.json(), [])
    t.equal(empty.ran.length, 1, 'an empty page: no read of the books')
    const bobs = await get('/loans?member=bob&expand=book')
    t.same(bobs.res.json(), [withBook(5), withBook(8)])
    t.equal(bobs.ran.length, 2)
    if (!store.sql) return
    const relation = loans.ran[1]
    t.match(relation, /FROM "books"/, 'the second read is the books\'')
    t.match(relation, /IN \(/, 'found among the page\'s values')
    t.match(books.ran.at(-1), /ROW_NUMBER\(\) OVER \(PARTITION BY "book_id"/, 'the loans in one grouped read')
  })

  await t.test('the detail read expands too; a 404 reads no relation', async (t) => {
    const { get } = await opened()
    const loan = await get('/loans/1?expand=book')
    t.same(loan.res.json(), withBook(1))
    t.equal(loan.ran.length, 2)
    t.same((await get('/loans/8?expand=book')).res.json(), withBook(8), 'no such book: null')
    const book = await get('/books/1?expand=loans')
    t.same(book.res.json(), withLoans(1, [1, 3]))
    t.equal(book.ran.length, 2, 'the book, and one read of its loans')
    t.same((await get('/books/4?expand=loans')).res.json(), withLoans(4, []))
    const returned = await get('/loans/2?expand=book')
    problem(t, returned.res, 404)
    t.equal(returned.ran.length, 1, 'a loan out of scope: the 404 of its read, no read of the books')
    problem(t, (await get('/books/99?expand=loans')).res, 404)
  })

  await t.test('?fields= and ?omit= narrow the embedded objects; the key and the validators stay', async (t) => {
    const { get } = await opened()
    const narrowed = await get('/loans?expand=book&fields=member,book.title')
    t.same(narrowed.res.json(), [1, 3, 4, 5, 6, 8].map((id) => {
      const { book, ...loan } = withBook(id)
      return { ...pick(loan, ['id', 'member']), book: book === null ? null : pick(book as Record<string, unknown>, ['id', 'title', 'version']) }
    }), 'the loan\'s key and the book\'s key and version are kept; book_id, not sent, still finds the book')
    const only = await get('/loans/1?expand=book&fields=book.author')
    t.same(only.res.json(), { ...loanOf(1), book: { id: 1, author: 'Austen', version: 1 } }, 'naming only a relation\'s fields: the loan\'s own whole')
    const omitted = await get('/loans/5?expand=book&omit=days,book.author,book.title')
    t.same(omitted.res.json(), { id: 5, book_id: 2, member: 'bob', book: { id: 2, version: 1 } })
    const many = await get('/books?expand=loans&fields=title,loans.days&page_size=2')
    t.same(many.res.json().items, [
      { id: 1, title: 'Emma', version: 1, loans: [{ id: 1, book_id: 1, days: 3 }, { id: 3, book_id: 1, days: 5 }] },
      { id: 2, title: 'Ulysses', version: 1, loans: [{ id: 5, book_id: 2, days: 7 }] }
    ], 'a to-many relation keeps the related key and the field it is found by')
    const both = await get('/books/2?expand=loans&fields=loans.member,loans.days&omit=loans.days')
    t.same(both.res.json(), { ...bookOf(2), loans: [{ id: 5, book_id: 2, member: 'bob' }] }, 'omit takes out of what fields chose')
    if (!store.sql) return
    const selected = /^SELECT (.*?) FROM/.exec(narrowed.ran[1])?.[1] ?? ''
    t.match(selected, /"title"/, 'the relation\'s read selects the field asked for')
    t.notMatch(selected, /"author"/, 'and no other it does not need')
    const grouped = many.ran.at(-1) ?? ''
    t.notMatch(grouped.slice(0, grouped.indexOf(' FROM ')), /"member"/, 'the grouped read selects only what is sent')
  })

  await t.test('repeated, spaced and empty names; an unknown or hostile name is a 400 that reads nothing', async (t) => {
    const { get } = await opened()
    const repeated = await get('/loans?expand=book,book,%20book%20,,')
    t.same(repeated.res.json(), [1, 3, 4, 5, 6, 8].map(withBook), 'a name given twice is expanded once')
    t.equal(repeated.ran.length, 2, 'and read once')
    const none = await get('/loans?expand=,%20,')
    t.same(none.res.json(), [1, 3, 4, 5, 6, 8].map(loanOf), 'no name: nothing embedded')
    t.equal(none.ran.length, 1)
    let ran = 0
    const refused = async (query: string, url = '/loans'): Promise<Record<string, any>> => {
      const { res, ran: reads } = await get(`${url}?${query}`)
      ran += reads.length
      return problem(t, res, 400)
    }
    const unknown = await refused('expand=author')
    t.same(unknown.errors, [{ detail: 'Unknown relation "author"; the relations are book', pointer: '#/expand', in: 'query', parameter: 'expand' }])
    const cycle = await refused('expand=book.loans')
    t.equal(cycle.errors[0].detail, 'Unknown relation "book.loans"; the relations are book', 'one level only: no way round to the loans')
    t.equal((await refused('expand=loans.book', '/books')).errors[0].detail, 'Unknown relation "loans.book"; the relations are loans')
    t.equal((await refused('expand=loans')).errors[0].parameter, 'expand', 'the relation of another view')
    t.equal((await refused('expand=book,x,y')).errors[0].detail, 'Unknown relations "x", "y"; the relations are book', 'the known name does not excuse the others')
    for (const hostile of ['book;DROP TABLE loans', 'book)--', "book' OR 1=1", 'BOOK', '__proto__', 'constructor', 'book.*', '*']) {
      const body = await refused(`expand=${encodeURIComponent(hostile)}`)
      t.same(body.errors.map((error: { parameter: string }) => error.parameter), ['expand'], `${hostile}: an unknown relation`)
    }
    const thousands = Array.from({ length: 10_000 }, () => 'book').join(',')
    t.equal((await refused(`expand=${thousands}`)).errors[0].parameter, 'expand', '10,000 names: longer than the parameter takes')
    const deep = Array.from({ length: 50 }, () => 'book').join('.')
    t.equal((await refused(`expand=${deep}`)).errors[0].parameter, 'expand', 'a path 50 deep: longer than the parameter takes')
    t.equal((await refused(`fields=${deep}&expand=book`)).errors[0].parameter, 'fields', 'and as a field')
    t.equal((await refused('expand=book&expand=book')).errors[0].parameter, 'expand', 'the parameter twice: not a string')
    const nope = await refused('expand=book&fields=book.nope')
    t.same(nope.errors, [{
      detail: 'Unknown field "book.nope"; the fields are id, book_id, member, days; a field of a relation the request expands is <relation>.<field>',
      pointer: '#/fields',
      in: 'query',
      parameter: 'fields'
    }])
    t.equal((await refused('fields=book.title')).errors[0].detail, 'Unknown field "book.title"; the fields are id, book_id, member, days; a field of a relation the request expands is <relation>.<field>',
      'a field of a relation the request does not expand')
    t.equal((await refused('omit=book.author')).errors[0].parameter, 'omit')
    t.equal((await refused('expand=book&fields=book')).errors[0].detail.startsWith('Unknown field "book"'), true, 'a relation is expanded, not a field')
    t.equal((await refused('expand=loans&fields=loans.nope', '/books/1')).errors[0].parameter, 'fields', 'on the detail read too')
    t.equal(ran, 0, 'no statement ran for any of them')
  })

  await t.test('an object rule of the related retrieve judges the whole row, whatever the set sends', async (t) => {
    const repositories = await store.open()
    const NotJoyce = permission<BookT, User>({ name: 'NotJoyce', object: (_user, book) => book.author !== 'Joyce' })
    const { Books, Loans } = libraryViews(store, repositories, { actionPermissions: { retrieve: [NotJoyce] } })
    const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
    t.teardown(async () => { await app.close(); await repositories.close() })
    problem(t, await app.inject({ url: '/books/2?fields=title', headers: ANN }), 403)
    t.same((await app.inject({ url: '/loans?expand=book', headers: ANN })).json().map((loan: { book: BookT | null }) => loan.book?.id ?? null),
      [1, 1, 1, null, null, null], 'Joyce\'s books: null')
    const narrowed = await app.inject({ url: '/loans/5?expand=book&fields=book.title', headers: ANN })
    // The rule judges the whole row: a read it judges selects every column, and the set is cut after.
    t.equal(narrowed.json().book, null, 'the book the rule refuses stays null when only its title is asked for')
  })

  await t.test('an expanded read\'s ETag is its body\'s hash: a change of an embedded object changes it', async (t) => {
    const { app } = await opened()
    const whole = await app.inject({ url: '/books/1' })
    const expanded = await app.inject({ url: '/books/1?expand=loans' })
    const etag = expanded.headers.etag as string
    t.equal(etag, etagOf(expanded.body), 'the hash of the body sent')
    t.not(etag, whole.headers.etag, 'not the version\'s tag')
    t.not((await app.inject({ url: '/books/1?expand=loans&fields=title' })).headers.etag, etag, 'another set: another body, another tag')
    const fresh = await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': etag } })
    t.equal(fresh.statusCode, 304, 'nothing changed: 304')
    t.equal(fresh.body, '')
    const head = await app.inject({ method: 'HEAD', url: '/books/1?expand=loans' })
    t.equal(head.headers.etag, etag, 'HEAD: the same tag')
    t.equal((await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': whole.headers.etag as string } })).statusCode, 200,
      'the whole object\'s tag is not this representation\'s')
    t.equal((await app.inject({ url: '/books/1', headers: { 'if-none-match': etag } })).statusCode, 200, 'nor the other way round')
    const listed = await app.inject({ url: '/books?expand=loans' })
    t.equal((await app.inject({ url: '/books?expand=loans', headers: { 'if-none-match': listed.headers.etag as string } })).statusCode, 304)
    problem(t, await app.inject({ method: 'PATCH', url: '/books/1', payload: { title: 'x' }, headers: { 'if-match': etag } }), 412)

    t.equal((await app.inject({ method: 'PATCH', url: '/loans/3', payload: { member: 'zed' } })).statusCode, 200)
    t.equal((await app.inject({ url: '/books/1' })).headers.etag, whole.headers.etag, 'the book\'s version did not change')
    const changed = await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': etag } })
    t.equal(changed.statusCode, 200, 'its loan did: the old tag is stale')
    t.same(changed.json().loans.map((loan: LoanT) => loan.member), ['ann', 'zed'])
    t.not(changed.headers.etag, etag)
    t.equal((await app.inject({ url: '/books?expand=loans', headers: { 'if-none-match': listed.headers.etag as string } })).statusCode, 200, 'the page too')
    t.equal((await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': changed.headers.etag as string } })).statusCode, 304)
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

/** A memory repository that writes down each list it is asked for. */
class Spy<T extends object> extends MemoryRepository<T> {
  readonly lists: Array<{ criteria: Criteria, query: ListQuery | undefined }> = []
  override list (criteria: Criteria, query?: ListQuery, options?: RepositoryOptions): T[] {
    this.lists.push({ criteria: { ...criteria }, query })
    return super.list(criteria, query, options)
  }
}

/** The two views of the cases over memory (the sync family), each with the permissions given. */
function memoryLibrary ({ books = {}, loans = {}, many = 2 }: { books?: Access, loans?: Access, many?: number } = {}) {
  const bookRows = new Spy<BookT>({ rows: BOOKS.map((row) => ({ ...row })), versionField: 'version' })
  const loanRows = new Spy<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  class Books extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, filter: BookPages, repository: bookRows
  }) {
    static override permissions = books.permissions ?? []
    static override actionPermissions = books.actionPermissions ?? {}
  }
  class Loans extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan, detailParams: IdParams, filter: LoanFilter, repository: loanRows, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }, {
    getKwargs () { return { returned_at: null } }
  }) {
    static override permissions = loans.permissions ?? []
    static override actionPermissions = loans.actionPermissions ?? {}
  }
  Books.expand = { loans: { view: Loans, on: { book_id: 'id' }, many } }
  return { Books, Loans, bookRows, loanRows }
}

/** The app of `memoryLibrary`'s views, with authentication; closed when `t` ends. */
async function served (t: Test, library: ReturnType<typeof memoryLibrary>, entries?: FastifyViewsOptions['views']) {
  const app = await build({
    auth: { authenticators: [byHeader] },
    views: entries ?? [{ view: library.Books, prefix: '/books' }, { view: library.Loans, prefix: '/loans' }]
  })
  t.teardown(() => app.close())
  return app
}

const ids = (items: Array<{ id: number }>): number[] => items.map((item) => item.id)
/** The ids of each book's embedded loans, by book. */
const loansByBook = (page: { items: Array<{ id: number, loans: Array<{ id: number }> }> }): Record<number, number[]> =>
  Object.fromEntries(page.items.map((book) => [book.id, ids(book.loans)]))

test('one list of the related repository per relation: among the page\'s values, in the related view\'s scope, grouped for many', async (t) => {
  const library = memoryLibrary()
  const app = await served(t, library)
  const { bookRows, loanRows } = library
  await app.inject('/loans?expand=book')
  t.same(bookRows.lists, [{ criteria: { id__in: [1, 2, 3, 99] }, query: { orderBy: [{ field: 'id', descending: false }] } }],
    'each value once, the book by its key')
  bookRows.lists.length = 0
  await app.inject('/loans?expand=book&fields=book.title')
  t.same(bookRows.lists.map((list) => list.query?.fields), [['id', 'title']], 'the fields sent, the key among them')
  loanRows.lists.length = 0
  await app.inject('/books?expand=loans&fields=loans.days')
  t.same(loanRows.lists, [{
    criteria: { returned_at: null, book_id__in: [1, 2, 3, 4, 5] },
    query: { orderBy: [{ field: 'id', descending: false }], fields: ['id', 'book_id', 'days'], perGroup: { field: 'book_id', limit: 2 } }
  }], 'the loans view\'s getKwargs beside the values; at most two of each book')
})

test('several relations: one read each; objects with no value to find by read nothing', async (t) => {
  const library = memoryLibrary()
  const { Books, Loans, loanRows, bookRows } = library
  Books.expand = { ...Books.expand, latest: { view: Loans, on: { book_id: 'id' }, many: 1 } }
  const Shelved = Type.Object({ id: Type.Integer(), book_id: Type.Union([Type.Integer(), Type.Null()]) })
  const shelved = new MemoryRepository({ rows: [{ id: 1, book_id: null }, { id: 2, book_id: null }] })
  class Shelf extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Shelved, repository: shelved, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  const app = await served(t, library, [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }, { view: Shelf, prefix: '/shelf' }])
  loanRows.lists.length = 0
  const page = (await app.inject('/books?expand=latest,loans&page_size=2')).json()
  t.same(page.items.map((book: { loans: LoanT[], latest: LoanT[] }) => [ids(book.loans), ids(book.latest)]),
    [[[1, 3], [1]], [[5], [5]]])
  t.equal(loanRows.lists.length, 2, 'one read per relation')
  t.same(loanRows.lists.map((list) => list.query?.perGroup?.limit).sort(), [1, 2])
  bookRows.lists.length = 0
  t.same((await app.inject('/shelf?expand=book')).json(), [{ id: 1, book_id: null, book: null }, { id: 2, book_id: null, book: null }])
  t.equal(bookRows.lists.length, 0, 'no book to look for: no read')
})

test('a scope that names the related field itself holds beside the page\'s values', async (t) => {
  const library = memoryLibrary()
  const { Books, loanRows } = library
  class FewLoans extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Loan, repository: loanRows
  }, {
    getKwargs () { return { book_id__in: [1, 3, 5] } }
  }) {}
  Books.expand = { loans: { view: FewLoans, on: { book_id: 'id' }, many: 5 } }
  const app = await served(t, library, [{ view: Books, prefix: '/books' }, { view: FewLoans, prefix: '/few' }])
  loanRows.lists.length = 0
  t.same(loansByBook((await app.inject('/books?expand=loans')).json()), { 1: [1, 2, 3, 4], 2: [], 3: [6], 4: [], 5: [7] })
  t.same(loanRows.lists[0].criteria, { book_id__in: [1, 3, 5] }, 'the values the scope allows among the page\'s')
  t.same((await app.inject('/books/2?expand=loans')).json().loans, [], 'none of them')
})

test('the related view\'s request-level permissions judge the request: 403, or 401 when anonymous', async (t) => {
  const app = await served(t, memoryLibrary({ books: { permissions: [IsAdmin] } }))
  t.equal((await app.inject({ url: '/loans', headers: ANN })).statusCode, 200, 'the loans alone: the loans\' permissions')
  t.equal(problem(t, await app.inject({ url: '/loans?expand=book', headers: ANN }), 403).detail, 'Admins only.', 'the books\': the whole request refused')
  problem(t, await app.inject({ url: '/loans/1?expand=book', headers: ANN }), 403)
  // Judged before anything is read: an empty page is refused too.
  problem(t, await app.inject({ url: '/loans?member=nobody&expand=book', headers: ANN }), 403)
  const anonymous = problem(t, await app.inject({ url: '/loans?expand=book' }), 401)
  t.ok(anonymous, 'anonymous: asked to authenticate')
  t.equal((await app.inject({ url: '/loans?expand=book' })).headers['www-authenticate'], 'User realm="test"')
  const root = await app.inject({ url: '/loans?expand=book', headers: ROOT })
  t.same(root.json(), [1, 3, 4, 5, 6, 8].map(withBook), 'an admin passes')
  t.equal((await app.inject({ url: '/books?expand=loans', headers: ANN })).statusCode, 403, 'the books\' own route, as before')
})

test('action permissions: a to-one relation passes the related view\'s retrieve, a to-many its list', async (t) => {
  const only = (action: string): Access => ({ actionPermissions: { [action]: [IsAdmin] } })
  const retrieve = await served(t, memoryLibrary({ books: only('retrieve'), loans: only('retrieve') }))
  problem(t, await retrieve.inject({ url: '/loans?expand=book', headers: ANN }), 403)
  t.same(loansByBook((await retrieve.inject({ url: '/books?expand=loans', headers: ANN })).json())[1], [1, 3], 'the loans\' list is open')
  const list = await served(t, memoryLibrary({ books: only('list'), loans: only('list') }))
  t.equal((await list.inject({ url: '/loans/1?expand=book', headers: ANN })).json().book.title, 'Emma', 'the books\' retrieve is open')
  problem(t, await list.inject({ url: '/books/1?expand=loans', headers: ANN }), 403)
  t.equal((await list.inject({ url: '/books/1?expand=loans', headers: ROOT })).json().loans.length, 2)
  const readOnly = await served(t, memoryLibrary({ books: { permissions: [ReadOnly.or(IsAdmin)] } }))
  t.equal((await readOnly.inject({ url: '/loans/1?expand=book', headers: ANN })).json().book.id, 1, 'ReadOnly: a read passes')
  const Later = permission<unknown, User>({ name: 'Later', request: async (user) => user.admin })
  const later = await served(t, memoryLibrary({ books: { permissions: [Later] } }))
  problem(t, await later.inject({ url: '/loans?expand=book', headers: BOB }), 403)
  t.equal((await later.inject({ url: '/loans?expand=book', headers: ROOT })).statusCode, 200, 'an async permission is waited for')
})

test('permissions given at registration or by a router judge the expansion too', async (t) => {
  const entry = memoryLibrary()
  const byEntry = await served(t, entry, [{ view: entry.Books, prefix: '/books', permissions: [IsAdmin] }, { view: entry.Loans, prefix: '/loans' }])
  problem(t, await byEntry.inject({ url: '/loans?expand=book', headers: ANN }), 403)
  t.equal((await byEntry.inject({ url: '/loans?expand=book', headers: ROOT })).statusCode, 200)
  const routed = memoryLibrary()
  const router = new ViewRouter({ prefix: '/admin', permissions: [IsAdmin] }).registerView(routed.Books, { prefix: '/books' })
  const byRouter = await served(t, routed, [router, { view: routed.Loans, prefix: '/loans' }])
  problem(t, await byRouter.inject({ url: '/loans?expand=book', headers: ANN }), 403)
  problem(t, await byRouter.inject({ url: '/loans?expand=book' }), 401)
  t.equal((await byRouter.inject({ url: '/loans?expand=book', headers: ROOT })).statusCode, 200)
  const twice = memoryLibrary()
  const both = await served(t, twice, [
    { view: twice.Books, prefix: '/books' }, { view: twice.Books, prefix: '/admin/books', permissions: [IsAdmin] }, { view: twice.Loans, prefix: '/loans' }
  ])
  t.equal((await both.inject({ url: '/books/1', headers: ANN })).statusCode, 200, 'one registration is open')
  // Registered twice: judged by the permissions of both registrations.
  problem(t, await both.inject({ url: '/loans?expand=book', headers: ANN }), 403)
})

test('a scope rule of the related view embeds only what the principal may see', async (t) => {
  const OwnLoans = permission<{ member: string }, User>({ name: 'OwnLoans', scope: (user) => ({ member: user.name }) })
  const library = memoryLibrary({ loans: { permissions: [OwnLoans.or(IsAdmin)] } })
  const app = await served(t, library)
  t.same(loansByBook((await app.inject({ url: '/books?expand=loans', headers: ANN })).json()), { 1: [1, 3], 2: [], 3: [6], 4: [], 5: [] })
  t.same(loansByBook((await app.inject({ url: '/books?expand=loans', headers: BOB })).json()), { 1: [], 2: [5], 3: [], 4: [], 5: [] },
    'bob\'s only loan of book 1 is returned')
  t.same(library.loanRows.lists.at(-1)?.criteria, { returned_at: null, member: 'bob', book_id__in: [1, 2, 3, 4, 5] }, 'the rule as criteria of the one read')
  t.same(loansByBook((await app.inject({ url: '/books?expand=loans', headers: ROOT })).json())[1], [1, 3], 'an admin passes whole')
  problem(t, await app.inject({ url: '/books?expand=loans' }), 401)
  t.same((await app.inject({ url: '/books?expand=loans&fields=loans.member', headers: ANN })).json().items[0].loans,
    [{ id: 1, book_id: 1, member: 'ann' }, { id: 3, book_id: 1, member: 'ann' }])
  // Concurrent requests of different principals: each judged, and read, as itself.
  const who = ['ann', 'bob', 'root']
  const answers = await Promise.all(Array.from({ length: 60 }, (_, i) => app.inject({ url: '/books/1?expand=loans', headers: { 'x-user': who[i % 3] } })))
  const expected: Record<string, number[]> = { ann: [1, 3], bob: [], root: [1, 3] }
  t.same(answers.map((answer) => ids(answer.json().loans)), answers.map((_, i) => expected[who[i % 3]]))
})

test('an object rule of the related view\'s retrieve: a book it refuses is null', async (t) => {
  const NotJoyce = permission<BookT, User>({ name: 'NotJoyce', object: (_user, book) => book.author !== 'Joyce' })
  const objects = await served(t, memoryLibrary({ books: { actionPermissions: { retrieve: [NotJoyce] } } }))
  const loans = (await objects.inject({ url: '/loans?expand=book', headers: ANN })).json()
  t.same(loans.map((loan: { id: number, book: BookT | null }) => [loan.id, loan.book?.id ?? null]),
    [[1, 1], [3, 1], [4, 1], [5, null], [6, null], [8, null]])
  problem(t, await objects.inject({ url: '/books/2', headers: ANN }), 403) // as the book's own read refuses it
  const Austen = permission<BookT, User>({ name: 'Austen', scope: () => ({ author: 'Austen' }) })
  const library = memoryLibrary({ books: { actionPermissions: { retrieve: [Austen.or(IsAdmin)] } } })
  const scoped = await served(t, library)
  t.same((await scoped.inject({ url: '/loans?expand=book&fields=book.author', headers: ANN })).json().map((loan: { book: BookT | null }) => loan.book),
    [{ id: 1, author: 'Austen' }, { id: 1, author: 'Austen' }, { id: 1, author: 'Austen' }, null, null, null])
  t.same(library.bookRows.lists.at(-1)?.criteria, { author: 'Austen', id__in: [1, 2, 3, 99] }, 'a scope: criteria of the read')
  t.equal((await scoped.inject({ url: '/loans/5?expand=book', headers: ROOT })).json().book.title, 'Ulysses')
})

test('the related view\'s soft delete: deleted rows are never embedded, whatever the request asks of its own view', async (t) => {
  type SoftBook = BookT & { deleted_at: string | null }
  type SoftLoan = LoanRow & { deleted_at: string | null }
  // Book 2 and loan 3 are deleted.
  const stamped = (deleted: boolean): string | null => deleted ? RETURNED : null
  const bookRows = new MemoryRepository<SoftBook>({
    rows: BOOKS.map((row) => ({ ...row, deleted_at: stamped(row.id === 2) }))
  })
  const loanRows = new MemoryRepository<SoftLoan>({
    rows: LOANS.map((row) => ({ ...row, deleted_at: stamped(row.id === 3) }))
  })

  const softDelete = { field: 'deleted_at', deleted: IsAdmin } as const
  class Books extends mix(SoftDeleteMixin, SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, filter: BookPages, softDelete, repository: bookRows
  }) {}
  class Loans extends mix(SoftDeleteMixin, SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan, detailParams: IdParams, softDelete, repository: loanRows, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  Books.expand = { loans: { view: Loans, on: { book_id: 'id' }, many: 3 } }
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const loans = (await app.inject({ url: '/loans?expand=book&fields=book.title', headers: ROOT })).json()
  t.same(loans.map((loan: { id: number, book: BookT | null }) => [loan.id, loan.book?.id ?? null]),
    [[1, 1], [2, 1], [4, 1], [5, null], [6, 3], [7, 5], [8, null]], 'the deleted book: null; the deleted loan: not listed')
  const included = (await app.inject({ url: '/loans?deleted=include&expand=book', headers: ROOT })).json()
  t.same(included.map((loan: { id: number, book: BookT | null }) => [loan.id, loan.book?.id ?? null]),
    [[1, 1], [2, 1], [3, 1], [4, 1], [5, null], [6, 3], [7, 5], [8, null]], '?deleted=include is the loans\': the books\' deleted rows stay out')
  t.equal((await app.inject({ url: '/books/2?deleted=include', headers: ROOT })).statusCode, 200, 'the deleted book is there')
  t.same(loansByBook((await app.inject({ url: '/books?expand=loans&deleted=include', headers: ROOT })).json()), { 1: [1, 2, 4], 2: [5], 3: [6], 4: [], 5: [7] },
    'the deleted loan is never embedded')
})

test('envelopes: the list\'s member and the detail read\'s envelope hold the expanded objects', async (t) => {
  const loanRows = new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  const bookRows = new MemoryRepository<BookT>({ rows: BOOKS.map((row) => ({ ...row })) })
  class Books extends mix(SparseFieldsMixin, GenericRetrieveAPIView).with({ responseSchema: Book, detailParams: IdParams, envelope: 'book', repository: bookRows }) {}
  class Loans extends mix(SparseFieldsMixin, GenericListAPIView, GenericRetrieveAPIView).with({
    responseSchema: Loan,
    detailParams: IdParams,
    filter: PaginationFilter.with({ paginator: new ListEnvelope('loans') }),
    envelope: 'loan',
    repository: loanRows,
    expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/books/4')).json(), { book: bookOf(4) }, 'the book\'s own envelope: not in what is embedded')
  const listed = (await app.inject('/loans?expand=book&fields=book.title')).json()
  t.same(Object.keys(listed), ['loans'])
  t.same(listed.loans[0], { ...loanOf(1), book: { id: 1, title: 'Emma' } })
  t.same((await app.inject('/loans?expand=book')).json().loans[0], { ...loanOf(1), book: bookOf(1) })
  t.same((await app.inject('/loans/8?expand=book&omit=days')).json(), { loan: { id: 8, book_id: 99, member: 'bob', book: null } })
})

test('a rule no principal passes: the related view\'s own route answers an anonymous request 403', async (t) => {
  const app = await served(t, memoryLibrary({ books: { permissions: [AllowAny.not()] } }))
  const own = problem(t, await app.inject({ url: '/books/1' }), 403)
  t.ok(own, 'signing in would not help: the books\' route answers 403 (docs/permissions.md)')
  problem(t, await app.inject({ url: '/loans?expand=book', headers: ANN }), 403)
  const anonymous = await app.inject({ url: '/loans?expand=book' })
  t.equal(anonymous.statusCode, 403, 'an anonymous expansion: the same 403')
})

test('the document lists ?expand= and each relation as an optional member of the partial object', async (t) => {
  const repositories = await memoryStore(false).open()
  const { Books, Loans } = libraryViews(memoryStore(false), repositories)
  const app = Fastify({ logger: false })
  await app.register(swagger, swaggerOptions({ info: { title: 'expand', version: '1' } }))
  await app.register(views, { views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  await app.ready()
  t.teardown(() => app.close())
  const document = app.swagger() as Record<string, any>
  const result = await new Validator().validate(document)
  t.ok(result.valid, JSON.stringify(result.errors))
  const schemas = document.components.schemas
  const sent = (path: string): Record<string, any> => {
    const ref: string = document.paths[path].get.responses['200'].content['application/json'].schema.$ref
    return schemas[ref.replace('#/components/schemas/', '')]
  }
  const book = sent('/books/{id}')
  t.same(document.paths['/books/{id}'].get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ExpandBookFieldsetWithLoans' },
    'named by the schema and its relations, whatever order the views register in')
  t.same(book.required, ['id'], 'the relation is not required: sent only when expanded')
  t.same(Object.keys(book.properties), ['id', 'title', 'author', 'version', 'loans'], 'the relation after the fields')
  t.match(book.properties.loans, { type: 'array', maxItems: 2, description: 'Embedded with expand=loans: at most 2 related objects.' })
  const embeddedLoan = schemas[book.properties.loans.items.$ref.replace('#/components/schemas/', '')]
  t.same(embeddedLoan.required, ['id', 'book_id'], 'an embedded loan: its key and the field it is found by, always sent')
  t.same(Object.keys(embeddedLoan.properties), ['id', 'book_id', 'member', 'days'], 'no relation of its own: one level')
  t.same(schemas.ExpandBookFieldsetWithLoansNumberedPage.properties.items.items, { $ref: '#/components/schemas/ExpandBookFieldsetWithLoans' }, 'the page\'s items too')
  const loan = sent('/loans/{id}')
  t.same(document.paths['/loans'].get.responses['200'].content['application/json'].schema.items, document.paths['/loans/{id}'].get.responses['200'].content['application/json'].schema)
  t.same(loan.required, ['id'])
  t.equal(loan.properties.book.description, 'Embedded with expand=book: the related object, or null when there is none the client may see.')
  t.equal(loan.properties.book.anyOf.length, 2)
  t.same(loan.properties.book.anyOf[1], { type: 'null' }, 'to one: the object or null')
  const embeddedBook = schemas[loan.properties.book.anyOf[0].$ref.replace('#/components/schemas/', '')]
  t.same(Object.keys(embeddedBook.properties), ['id', 'title', 'author', 'version'], 'an embedded book: no loans in it')
  t.same(embeddedBook.required, ['id'])
  const parameter = (path: string, name: string): Record<string, any> =>
    document.paths[path].get.parameters.find((p: { name: string }) => p.name === name)
  for (const path of ['/loans', '/loans/{id}']) {
    t.same(parameter(path, 'expand'), {
      schema: { maxLength: 64, type: 'string' }, in: 'query', name: 'expand', required: false, description: 'The relations to embed in each object, separated by commas: book.'
    }, `${path}: expand, bounded`)
  }
  t.match(parameter('/books', 'expand').description, /: loans\.$/)
  t.match(parameter('/loans', 'fields'), { schema: { maxLength: 150 }, description: /A field of a relation the request expands is <relation>\.<field>\./ },
    'fields: bounded by the fields of the relations too')
  t.equal(parameter('/books/{id}', 'omit').schema.maxLength, 158)
  t.equal(document.paths['/books/{id}'].put.responses['200'].content['application/json'].schema.$ref, '#/components/schemas/ExpandBook', 'a write sends the whole object, nothing embedded')
  t.equal(parameter('/loans', 'expand') === undefined, false)
  t.equal(document.paths['/loans'].post.parameters?.find((p: { name: string }) => p.name === 'expand'), undefined, 'a write takes no expand')
})

test('registration refuses a relation that would not hold (FV_ERR_EXPAND)', async (t) => {
  const bookRows = new MemoryRepository<BookT>({ rows: BOOKS.map((row) => ({ ...row })) })
  const loanRows = new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  const statics = { detailParams: IdParams }
  const Sparse = mix(SparseFieldsMixin, GenericViewSet)
  class Books extends Sparse.with({ ...statics, responseSchema: Book, repository: bookRows }) {}
  const loansWith = (expand: unknown, repository: unknown = loanRows) =>
    class Loans extends Sparse.with({ ...statics, responseSchema: Loan, repository: repository as never }) {
      static override expand = expand as never
    }
  const refused = async (entries: FastifyViewsOptions['views'], message: RegExp, what: string): Promise<void> => {
    t.match(await caught(() => build({ views: entries })), { code: 'FV_ERR_EXPAND', message }, what)
  }
  const withBooks = (expand: unknown, repository?: unknown): FastifyViewsOptions['views'] =>
    [{ view: Books, prefix: '/books' }, { view: loansWith(expand, repository), prefix: '/loans' }]
  const book = (declared: Record<string, unknown>) => ({ book: { view: Books, on: { id: 'book_id' }, ...declared } })

  class Plain extends APIView {}
  await refused(withBooks(book({ view: Plain })), /^Cannot register Loans: expand\.book\.view must be a generic view .*\(docs\/expand\.md\)$/, 'not a generic view')
  await refused(withBooks(book({ view: { name: 'Books' } })), /expand\.book\.view must be a generic view/, 'not a class')
  const Member = Type.Object({ memberId: Type.Integer() })
  class Nested extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, prefixParams: Member, repository: bookRows, parent: { repository: loanRows, lookup: { id: 'memberId' }, scope: { id: 'id' } }
  }) {}
  await refused(withBooks(book({ view: Nested })), /expand\.book\.view Nested is nested under a parent/, 'a nested view')
  for (const on of [{}, { id: 'book_id', title: 'member' }, { id: 1 }, 'book_id']) {
    await refused(withBooks(book({ on })), /expand\.book\.on must be one pair \{ <field of Books's objects>: <field of this view's objects> \}/, `on: ${JSON.stringify(on)}`)
  }
  await refused(withBooks(book({ on: { title: 'member' } })),
    /expand\.book is a relation to one object, found by "title", which is not the key of Books's repository \(id\): on names the key for a relation to one, or give many: n/,
    'to one, found by a field that is not the key')
  for (const many of [0, 101, 1.5, -1, '2', Number.NaN]) {
    await refused(withBooks(book({ on: { id: 'book_id' }, many })), /expand\.book\.many must be an integer from 1 to 100, the most objects embedded in each; got /, `many: ${String(many)}`)
  }
  await refused(withBooks({ book: Books }), /expand\.book must be \{ view, on, many\? \}/, 'a view, not a relation')
  await refused(withBooks('book'), /expand must map each relation's name to \{ view, on, many\? \}/, 'not an object')
  await refused(withBooks({ 'the-book': { view: Books, on: { id: 'book_id' } } }), /expand names a relation "the-book": a relation's name is a plain identifier/, 'a name that is no identifier')
  await refused(withBooks({ member: { view: Books, on: { id: 'book_id' } } }), /expand\.member has the name of a field of its objects/, 'a relation named like a field')
  const Union = Type.Union([Book, Type.Null()])
  class Loose extends mix(GenericViewSet).with({ ...statics, responseSchema: Union, repository: bookRows }) {}
  await refused(withBooks(book({ view: Loose })), /expand\.book: Loose's retrieve sends no object schema to embed/, 'a related view that sends no object')

  // Fields a SQL table lacks, on either side.
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  for (const statement of DDL('INTEGER PRIMARY KEY')) db.exec(statement)
  const sqlLoans = new SqliteRepository<LoanRow>(db, LOAN_TABLE)
  const sqlBooks = new SqliteRepository<BookT>(db, BOOK_TABLE)
  class SqlBooks extends Sparse.with({ ...statics, responseSchema: Book, repository: sqlBooks }) {}
  await refused(withBooks(book({ on: { id: 'bookid' } }), sqlLoans),
    /expand\.book\.on names "bookid", which is no field of its repository \(its fields: id, book_id, member, days, returned_at\)/, 'a field the own table lacks')
  await refused([{ view: SqlBooks, prefix: '/books' }, { view: loansWith({ book: { view: SqlBooks, on: { isbn: 'book_id' } } }), prefix: '/loans' }],
    /expand\.book\.on names "isbn", which is no field of SqlBooks's repository \(its fields: id, title, author, version\)/, 'a field the related table lacks')

  // To many: over a repository that reads each group at once.
  const custom = {
    get: () => null, list: () => [], count: () => 0, create: () => null, update: () => null, delete: () => false
  }
  class Custom extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Loan, repository: custom as never
  }) {}
  class Shelf extends Sparse.with({ ...statics, responseSchema: Book, repository: bookRows }) {
    static override expand = { loans: { view: Custom, on: { book_id: 'id' }, many: 2 } }
  }
  t.match(await caught(() => build({ views: [{ view: Shelf, prefix: '/shelf' }, { view: Custom, prefix: '/custom' }] })), {
    code: 'FV_ERR_EXPAND',
    message: /^Cannot register Shelf: expand\.loans embeds several objects of Custom, whose repository does not declare listsPerGroup: true/
  }, 'a custom repository that does not read each group at once')

  // Served in the application: checked once it is ready.
  await refused([{ view: loansWith(book({})), prefix: '/loans' }],
    /^Cannot register Loans: expand\.book embeds the objects of Books, which serves no retrieve in this application; register it/, 'the related view registered nowhere')
  class ListedBooks extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Book, repository: bookRows
  }) {}
  await refused([{ view: ListedBooks, prefix: '/books' }, { view: loansWith({ book: { view: ListedBooks, on: { id: 'book_id' } } }), prefix: '/loans' }],
    /expand\.book embeds the objects of ListedBooks, which serves no retrieve in this application/, 'registered without the action it needs')
  const elsewhere = await build({ views: [{ view: Books, prefix: '/books' }] })
  t.teardown(() => elsewhere.close())
  await refused([{ view: loansWith(book({})), prefix: '/loans' }], /which serves no retrieve in this application/, 'registered in another application only')
  const ok = await build({ views: withBooks(book({})) })
  t.teardown(() => ok.close())
  t.equal((await ok.inject('/loans/1?expand=book')).json().book.id, 1, 'the same views, both registered: served')
})

test('a rule of the view that expands does not reach the related read', async (t) => {
  const OwnLoans = permission<{ member: string }, User>({ name: 'OwnLoans', scope: (user) => ({ member: user.name }) })
  const library = memoryLibrary({ loans: { permissions: [OwnLoans] } })
  const app = await served(t, library)
  const loans = (await app.inject({ url: '/loans?expand=book', headers: ANN })).json()
  t.same(loans, [withBook(1), withBook(3), withBook(6)], 'ann\'s loans, each with its book')
  t.same(library.bookRows.lists.at(-1)?.criteria, { id__in: [1, 3] }, 'the books are read without the loans\' criteria')
})

test('the related view\'s own checkObjectPermissions judges what it embeds', async (t) => {
  const bookRows = new MemoryRepository<BookT>({ rows: BOOKS.map((row) => ({ ...row })) })
  const loanRows = new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  class Books extends mix(SparseFieldsMixin, GenericViewSet).with({ responseSchema: Book, detailParams: IdParams, repository: bookRows, objectPermissionActions: ['retrieve'] }, {
    checkObjectPermissions (book) { if (book.author === 'Joyce') throw new Forbidden('Not Joyce.') }
  }) {}
  class Loans extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan, detailParams: IdParams, repository: loanRows, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/books/2'), 403).detail, 'Not Joyce.', 'the book\'s own read refuses it')
  const loan = await app.inject('/loans/5?expand=book')
  t.equal(loan.json().book, null, 'an expansion does not show it either: null')
  t.equal((await app.inject('/loans/1?expand=book')).json().book.id, 1, 'a book it lets through is embedded')
})

test('a check of objects that fails otherwise than by refusing is the request\'s error, not a hidden object', async (t) => {
  const bookRows = new MemoryRepository<BookT>({ rows: BOOKS.map((row) => ({ ...row })) })
  const loanRows = new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  class Books extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, repository: bookRows
  }, {
    checkObjectPermissions (book) { if (book.author === 'Joyce') throw new TypeError('the check itself is broken') }
  }) {}
  class Loans extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan, detailParams: IdParams, repository: loanRows, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const failed = problem(t, await app.inject('/loans/5?expand=book'), 500)
  t.equal(failed.detail, 'An unexpected error occurred.', 'a 500 that tells the client nothing of the check')
  t.equal((await app.inject('/loans/1?expand=book')).json().book.id, 1)
})

test('Last-Modified of an expanded read: If-Modified-Since does not hide a change of an embedded object', async (t) => {
  const Dated = Type.Object({ id: Type.Integer(), title: Type.String(), updated_at: Type.String({ format: 'date-time' }) }, { $id: 'ExpandDated' })
  const bookRows = new MemoryRepository({ rows: BOOKS.map((row) => ({ id: row.id, title: row.title, updated_at: '2026-01-01T00:00:00.000Z' })) })
  const loanRows = new MemoryRepository<LoanRow>({ rows: LOANS.map((row) => ({ ...row })) })
  class Loans extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan, detailParams: IdParams, repository: loanRows
  }) {}
  class Books extends mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Dated,
    detailParams: IdParams,
    repository: bookRows,
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    expand: { loans: { view: Loans, on: { book_id: 'id' }, many: 2 } }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const first = await app.inject('/books/1?expand=loans')
  t.equal(first.headers['last-modified'], undefined, 'no date: the embedded loans change without the book\'s')
  const since = (await app.inject('/books/1')).headers['last-modified'] as string
  t.equal(since, 'Thu, 01 Jan 2026 00:00:00 GMT', 'the book alone has its date')
  t.equal((await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': first.headers.etag as string } })).statusCode, 304)
  t.equal((await app.inject({ method: 'PATCH', url: '/loans/1', payload: { member: 'zed' } })).statusCode, 200)
  t.equal((await app.inject({ url: '/books/1?expand=loans', headers: { 'if-none-match': first.headers.etag as string } })).statusCode, 200, 'the ETag sees the change')
  const dated = await app.inject({ url: '/books/1?expand=loans', headers: { 'if-modified-since': since } })
  t.equal(dated.statusCode, 200, 'nor does the date hide it')
})

test('a list without pages over thousands of values reads its relation 1,000 values at a time, on SQLite too', async (t) => {
  const rows = 2_500
  const db = new Database(':memory:')
  t.teardown(() => db.close())
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, version INTEGER NOT NULL)')
  db.exec('CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER NOT NULL, member TEXT NOT NULL, days INTEGER NOT NULL)')
  const book = db.prepare('INSERT INTO books VALUES (?, ?, ?, 1)')
  const loan = db.prepare('INSERT INTO loans VALUES (?, ?, ?, 1)')
  for (let i = 1; i <= rows; i++) { book.run(i, `Book ${i}`, 'Anon'); loan.run(i, rows + 1 - i, 'ann') }
  const reads: number[] = []
  class Counting extends SqliteRepository<BookT> {
    override list (...args: Parameters<SqliteRepository<BookT>['list']>): BookT[] {
      reads.push((args[0]['id__in'] as unknown[]).length)
      return super.list(...args)
    }
  }
  const Books = GenericRetrieveAPIView.with({
    responseSchema: Book, detailParams: IdParams, repository: new Counting(db, { table: 'books', columns: ['id', 'title', 'author', 'version'] })
  })
  class Loans extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Loan,
    repository: new SqliteRepository<LoanT>(db, { table: 'loans', columns: ['id', 'book_id', 'member', 'days'] }),
    expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const res = await app.inject('/loans?expand=book&fields=book.title')
  t.equal(res.statusCode, 200)
  const loans: Array<{ id: number, book: { id: number, title: string } }> = res.json()
  t.equal(loans.length, rows)
  t.ok(loans.every((one) => one.book.id === rows + 1 - one.id && one.book.title === `Book ${one.book.id}`), 'every loan with its own book')
  t.same(reads, [1000, 1000, 500], 'three reads of at most 1,000 values each')
})
