// The lending library's stores: one database (SQLite or PostgreSQL), its tables (schema.ts), and a
// repository per resource. A repository reads a query — its table, the joins and the computed,
// read-only fields the API shows — and writes its table. The SQL here is what the repositories
// read besides their columns; the views (views.ts) write none.
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import type { AsyncRepository } from 'fastify-views/generics'
import { AsyncSqliteRepository, PostgresRepository, option, sql, type SqlTableOptions } from 'fastify-views/sql'
import { POSTGRES_SCHEMA, SQLITE_SCHEMA, setUpSchema } from './schema.js'
import type { Book, LoanRow, MemberRow, SavedBookRow, Shelf } from './schemas.js'

/** `sqlite:<path>` (or nothing: `./data/library.db`), or a `postgres://` URL. */
export interface StoreOptions { databaseUrl?: string | undefined }

/** A repository of the async views, with the fields its filters may name. */
export type LibraryRepository<T> = AsyncRepository<T> & { readonly fieldNames: readonly string[] }

/** Runs `work` in one transaction of the database: every repository call it makes commits with it, or none. */
export type Transaction = <R>(work: () => Promise<R>) => Promise<R>

/** The library's repositories over one database. */
export interface LibraryStore {
  members: LibraryRepository<MemberRow>
  books: LibraryRepository<Book>
  /** The books table alone, for the writes of lending and returning, which read no computed field. */
  shelf: LibraryRepository<Shelf>
  readingList: LibraryRepository<SavedBookRow>
  loans: LibraryRepository<LoanRow>
  transaction: Transaction
  close: () => Promise<void> | void
}

/** What the two databases write differently in a read: a JSON array of the book's genres. */
interface ReadDialect { genres: string }

const SQLITE_READS: ReadDialect = {
  genres: 'SELECT json_group_array(slug) FROM (SELECT g.slug FROM book_genres bg JOIN genres g ON g.id = bg.genre_id WHERE bg.book_id = books.id ORDER BY g.slug)'
}
const POSTGRES_READS: ReadDialect = {
  genres: "SELECT COALESCE(json_agg(g.slug ORDER BY g.slug), '[]'::json) FROM book_genres bg JOIN genres g ON g.id = bg.genre_id WHERE bg.book_id = books.id"
}

// `decode`: SQLite has no boolean and no JSON type (1 for true, `["classic"]` as text); PostgreSQL
// already gives both in their type, which decoding leaves as it is.
const MEMBERS = {
  table: 'members',
  columns: ['id', 'name', 'email', 'librarian', 'joined_at', 'deleted_at'],
  decode: { librarian: 'boolean' }
} satisfies SqlTableOptions<MemberRow>

/** Books as a reader sees them: their genres, whether the reader saved them, how often they were lent. */
const books = (d: ReadDialect) => ({
  table: 'books',
  columns: ['id', 'title', 'author', 'year', 'available', 'updated_at'],
  touchColumn: 'updated_at',
  decode: { available: 'boolean', on_my_list: 'boolean', genres: 'json' },
  computed: {
    genres: d.genres,
    // option('reader'): the member a view's getRepositoryOptions names for each call; NULL (false) for nobody.
    on_my_list: sql`EXISTS (SELECT 1 FROM reading_list r WHERE r.book_id = books.id AND r.member_id = ${option('reader')})`,
    loans_count: 'SELECT CAST(COUNT(*) AS INTEGER) FROM loans l WHERE l.book_id = books.id'
  },
  // The `genre` filter compares genres.slug of a book_genres row pointing at the book (an EXISTS).
  relations: {
    genres: { table: 'book_genres', on: { book_id: 'id' }, fields: ['genre_id'], join: { table: 'genres', on: { id: 'genre_id' }, fields: ['slug'] } }
  }
}) satisfies SqlTableOptions<Book>

/**
 * The same table without the reader's fields, for lending and returning: what they change needs
 * none of them, so their write is one UPDATE, with no read of the row back through the query.
 */
const SHELF = { table: 'books', columns: ['id', 'available', 'updated_at'], touchColumn: 'updated_at', decode: { available: 'boolean' } } satisfies SqlTableOptions<Shelf>

const READING_LIST = {
  table: 'reading_list',
  columns: ['id', 'member_id', 'book_id', 'saved_at'],
  joins: 'JOIN books b ON b.id = reading_list.book_id',
  computed: { title: 'b.title', author: 'b.author' }
} satisfies SqlTableOptions<SavedBookRow>

const LOANS = {
  table: 'loans',
  columns: ['id', 'member_id', 'book_id', 'borrowed_at', 'due_at', 'returned_at', 'updated_at'],
  touchColumn: 'updated_at',
  joins: 'JOIN books b ON b.id = loans.book_id',
  computed: { title: 'b.title' }
} satisfies SqlTableOptions<LoanRow>

/** `DATABASE_URL`: PostgreSQL for `postgres://`, SQLite otherwise. */
export async function openStore ({ databaseUrl }: StoreOptions = {}): Promise<LibraryStore> {
  if (databaseUrl !== undefined && /^postgres(ql)?:\/\//.test(databaseUrl)) return openPostgres(databaseUrl)
  if (databaseUrl !== undefined && !databaseUrl.startsWith('sqlite:')) throw new Error('DATABASE_URL must be sqlite:<path> or postgres://...')
  return openSqlite(databaseUrl === undefined ? './data/library.db' : databaseUrl.slice('sqlite:'.length))
}

async function openPostgres (url: string): Promise<LibraryStore> {
  const pool = new pg.Pool({ connectionString: url })
  pool.on('error', () => {})
  await setUpSchema(POSTGRES_SCHEMA, (text) => pool.query(text), async () => Number((await pool.query('SELECT COUNT(*) AS n FROM books')).rows[0].n))
  const loans = new PostgresRepository<LoanRow>(pool, LOANS)
  return {
    members: new PostgresRepository<MemberRow>(pool, MEMBERS),
    books: new PostgresRepository<Book>(pool, books(POSTGRES_READS)),
    shelf: new PostgresRepository<Shelf>(pool, SHELF),
    readingList: new PostgresRepository<SavedBookRow>(pool, READING_LIST),
    loans,
    // Any repository over the pool opens it; the calls inside, on any of them, run in it.
    transaction: (work) => loans.transaction(work),
    close: () => pool.end()
  }
}

async function openSqlite (file: string): Promise<LibraryStore> {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  const db = new DatabaseSync(file, { timeout: 5000 })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA foreign_keys = ON')
  await setUpSchema(SQLITE_SCHEMA, (text) => db.exec(text), () => Number(db.prepare('SELECT COUNT(*) AS n FROM books').get()?.n))
  const loans = new AsyncSqliteRepository<LoanRow>(db, LOANS)
  return {
    members: new AsyncSqliteRepository<MemberRow>(db, MEMBERS),
    books: new AsyncSqliteRepository<Book>(db, books(SQLITE_READS)),
    shelf: new AsyncSqliteRepository<Shelf>(db, SHELF),
    readingList: new AsyncSqliteRepository<SavedBookRow>(db, READING_LIST),
    loans,
    transaction: (work) => loans.transaction(work),
    close: () => { db.close() }
  }
}
