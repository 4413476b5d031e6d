import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { configureApp, mix, views } from '../../lib/index.js'
import { GenericListAPIView, GenericRetrieveAPIView, SparseFieldsMixin } from '../../lib/generics.js'
import { SqliteRepository } from '../../lib/stores/sql/index.js'
import type { Scenario } from './types.js'

const PREFIX = '/expand'

/** A book, and a loan of one; the loan with its book embedded (`?expand=book`). */
const Book = Type.Object({ id: Type.Integer(), title: Type.String(), author: Type.String(), year: Type.Integer() })
type Book = Static<typeof Book>
const Loan = Type.Object({ id: Type.Integer(), book_id: Type.Integer(), member: Type.String(), due_at: Type.String({ format: 'date-time' }) })
type Loan = Static<typeof Loan>
const LoanWithBook = Type.Object({ ...Loan.properties, book: Type.Union([Book, Type.Null()]) })
const IdParams = Type.Object({ id: Type.Integer() })

/** Loans in the list, each of another book; books on the shelf. */
const LOANS = 20
const BOOKS = 200

/** An in-memory SQLite database: 200 books, 20 loans, loan n of book 10n. */
function openDatabase (): Database.Database {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author TEXT NOT NULL, year INTEGER NOT NULL)')
  db.exec('CREATE TABLE loans (id INTEGER PRIMARY KEY, book_id INTEGER NOT NULL REFERENCES books (id), member TEXT NOT NULL, due_at TEXT NOT NULL)')
  const book = db.prepare('INSERT INTO books VALUES (?, ?, ?, ?)')
  const loan = db.prepare('INSERT INTO loans VALUES (?, ?, ?, ?)')
  db.transaction(() => {
    for (let i = 1; i <= BOOKS; i++) book.run(i, `Book ${i}`, `Author ${i % 37}`, 1900 + (i % 120))
    for (let i = 1; i <= LOANS; i++) loan.run(i, i * 10, `member ${i % 7}`, new Date(Date.UTC(2026, 1, i, 9)).toISOString())
  })()
  return db
}

/** Every route of the scenario, on `app`, over `db`: each variant in a context of its own. */
async function registerRoutes (app: FastifyInstance, db: Database.Database): Promise<void> {
  // Hand-written: the page, then its books in one SELECT ... IN, each put in its loan.
  const selectLoans = db.prepare('SELECT id, book_id, member, due_at FROM loans ORDER BY id')
  const selectBooks = db.prepare(`SELECT id, title, author, year FROM books WHERE id IN (${Array.from({ length: LOANS }, () => '?').join(', ')})`)
  await app.register(async (scope) => {
    scope.get(`${PREFIX}/baseline/loans`, { schema: { response: { 200: Type.Array(LoanWithBook) } } }, async function listLoans () {
      const loans = selectLoans.all() as Loan[]
      const found = selectBooks.all(...loans.map((loan) => loan.book_id)) as Book[]
      const books = new Map(found.map((book) => [book.id, book]))
      return loans.map((loan) => ({ ...loan, book: books.get(loan.book_id) ?? null }))
    })
  })

  const books = new SqliteRepository<Book>(db, { table: 'books', columns: ['id', 'title', 'author', 'year'] })
  const loans = new SqliteRepository<Loan>(db, { table: 'loans', columns: ['id', 'book_id', 'member', 'due_at'] })
  // No response check: the hand-written route does not check its answer either.
  class Books extends GenericRetrieveAPIView.with({ responseSchema: Book, detailParams: IdParams, repository: books }) {
    static override validateResponse = false
  }
  class Loans extends mix(SparseFieldsMixin, GenericListAPIView).with({
    responseSchema: Loan, repository: loans, expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {
    static override validateResponse = false
  }
  // configureApp: false: the app around is configured already. The books are served beside the
  // loans in each context: a relation embeds the objects of a view its application serves.
  for (const variant of ['views', 'views-expand']) {
    await app.register(async (scope) => {
      await scope.register(views, {
        configureApp: false,
        views: [{ view: Loans, prefix: `${PREFIX}/${variant}/loans` }, { view: Books, prefix: `${PREFIX}/${variant}/books` }]
      })
    })
  }
}

const requests = {
  baseline: `${PREFIX}/baseline/loans?expand=book`,
  'views-expand': `${PREFIX}/views-expand/loans?expand=book`,
  views: `${PREFIX}/views/loans`,
  'views-book': `${PREFIX}/views/books/100`
}
const requestOf = (variant: keyof typeof requests) => ({ method: 'GET' as const, path: requests[variant] })

/**
 * Once, before the scenario's routes are served: the expanded list answers the same status,
 * headers (but `date`) and body bytes as the hand-written one, and each loan holds its book.
 */
async function assertSameAnswers (db: Database.Database): Promise<void> {
  const probe = configureApp(Fastify({ logger: false }))
  await probe.register(async (scope) => { await registerRoutes(scope, db) })
  await probe.ready()
  try {
    const answer = async (variant: keyof typeof requests) => {
      const response = await probe.inject({ method: 'GET', url: requests[variant] })
      const { date: _date, ...headers } = response.headers
      const { statusCode: status, body } = response
      return { text: JSON.stringify({ status, headers, body }), body }
    }
    const expected = await answer('baseline')
    const rows = JSON.parse(expected.body) as Array<Loan & { book: Book | null }>
    if (rows.length !== LOANS || rows.some((loan) => loan.book?.id !== loan.book_id)) {
      throw new Error(`expand-list: the baseline answered ${expected.text.slice(0, 300)}`)
    }
    const got = await answer('views-expand')
    if (got.text !== expected.text) throw new Error(`expand-list: views-expand answers otherwise than the baseline\n  baseline: ${expected.text}\n  views-expand: ${got.text}`)
    const book = await answer('views-book')
    if (!book.text.includes('"status":200')) throw new Error(`expand-list: views-book answered ${book.text}`)
  } finally {
    await probe.close()
  }
}

/** GET 20 loans of SQLite with each one's book: one request with ?expand=book, against the hand-written join and the N + 1 requests without it. */
export const expandList: Scenario = {
  name: 'expand-list',
  description: `GET the ${LOANS} loans of an in-memory SQLite table, each with its book (of ${BOOKS}) embedded by ?expand=book ` +
    '(two statements: the page, then its books); the same list without books, and one book by id (the N + 1 a client makes without expand)',
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    const db = openDatabase()
    await assertSameAnswers(db)
    await registerRoutes(app, db)
  },
  baseline: {
    name: 'baseline',
    label: 'hand-written Fastify route: a prepared SELECT of the loans, a prepared SELECT ... WHERE id IN (20 values) of their books, each put in its loan',
    request: requestOf('baseline')
  },
  variants: [
    {
      name: 'views-expand',
      label: 'mix(SparseFieldsMixin, GenericListAPIView) over SqliteRepository with expand: { book: { view: Books, on: { id: \'book_id\' } } }, ?expand=book',
      request: requestOf('views-expand')
    },
    {
      name: 'views',
      label: 'the same view without ?expand: the first of the N + 1 requests',
      request: requestOf('views'),
      sameBodyAsBaseline: false
    },
    {
      name: 'views-book',
      label: 'GenericRetrieveAPIView of one book: each of the other N requests',
      request: requestOf('views-book'),
      sameBodyAsBaseline: false
    }
  ],
  ratioTarget: null,
  comparisons: [
    { subject: 'views-expand', reference: 'baseline', label: 'the expanded list against the hand-written one', informational: true },
    { subject: 'views-expand', reference: 'views', label: 'what embedding 20 books adds to the list', informational: true }
  ]
}
