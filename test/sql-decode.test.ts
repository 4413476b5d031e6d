// Fields a database stores in another JSON type than the API sends (`decode`): SQLite's 0 and 1
// for booleans, JSON text from an aggregate. On SQLite (this run's driver; node-sqlite.test.ts
// reruns this file over node:sqlite) and on PostgreSQL, through the generic views.
import t0 from 'tap'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { AsyncGenericViewSet, BaseFilter } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { AsyncSqliteRepository, PostgresRepository, sql, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { build, problem } from './helpers.js'
import { driver, openSqlite } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'
import type { Test } from 'tap'

const Book = Type.Object({ id: Type.Integer(), title: Type.String(), available: Type.Boolean(), genres: Type.Array(Type.String()) }, { $id: 'Book' })
type BookT = Static<typeof Book>

const TABLES = (bool: string, json: string): string[] => [
  `CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, available ${bool} NOT NULL)`,
  'CREATE TABLE book_genres (book_id INTEGER NOT NULL, genre TEXT NOT NULL)',
  `INSERT INTO books (id, title, available) VALUES (1, 'Emma', ${json === 'sqlite' ? 1 : 'TRUE'}), (2, 'Dune', ${json === 'sqlite' ? 0 : 'FALSE'})`,
  "INSERT INTO book_genres (book_id, genre) VALUES (1, 'classic'), (1, 'romance'), (2, 'sf')"
]

const options = (dialect: 'sqlite' | 'postgres'): SqlTableOptions<BookT> => ({
  table: 'books',
  columns: ['id', 'title', 'available'],
  computed: {
    genres: dialect === 'sqlite'
      ? sql`(SELECT json_group_array(genre) FROM (SELECT genre FROM book_genres g WHERE g.book_id = books.id ORDER BY genre))`
      : sql`(SELECT COALESCE(json_agg(genre ORDER BY genre), '[]'::json) FROM book_genres g WHERE g.book_id = books.id)`
  },
  decode: { available: 'boolean', genres: 'json' }
})

class Available extends BaseFilter {
  static override fields = { available: Type.Boolean() }
}

async function cases (t: Test, repository: AsyncSqliteRepository<BookT> | PostgresRepository<BookT>): Promise<void> {
  const Books = mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: Book,
    createSchema: Type.Object({ title: Type.String(), available: Type.Boolean() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    filter: Available,
    conditional: { etag: true, requests: true },
    repository
  })
  const app = await build({ views: [{ view: Books, prefix: '/books' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/books/1')).json(), { id: 1, title: 'Emma', available: true, genres: ['classic', 'romance'] }, 'a boolean and a JSON array, in their types')
  t.same((await app.inject('/books?available=false')).json(), [{ id: 2, title: 'Dune', available: false, genres: ['sf'] }], 'filtered by the boolean')
  const created = await app.inject({ method: 'POST', url: '/books', payload: { title: 'Ulysses', available: true } })
  t.same(created.json(), { id: 3, title: 'Ulysses', available: true, genres: [] }, 'a write answers the row decoded')
  const etag = String((await app.inject('/books/2')).headers.etag)
  const changed = await app.inject({ method: 'PATCH', url: '/books/2', headers: { 'if-match': etag }, payload: { available: true } })
  t.equal(changed.statusCode, 200, 'the row the precondition judges is the row the ETag was hashed from')
  t.equal(changed.json().available, true)
  problem(t, await app.inject({ method: 'PATCH', url: '/books/2', headers: { 'if-match': etag }, payload: { available: false } }), 412)
}

t0.test(`SQLite (${driver}): decoded fields`, async (t) => {
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  for (const statement of TABLES('INTEGER', 'sqlite')) db.exec(statement)
  const repository = new AsyncSqliteRepository<BookT>(db, options('sqlite'))
  t.equal(repository.columnFacts?.get('available')?.kind, 'boolean', 'the column is checked as what it is decoded to')
  const texts = new AsyncSqliteRepository<BookT>(db, { ...options('sqlite'), decode: { title: 'json' } })
  t.same(texts.columnFacts?.get('title'), { nullable: false, kind: undefined }, 'a JSON text column may hold any JSON type')
  await cases(t, repository)
})

t0.test(`SQLite (${driver}): a decoded boolean keeps NULL, reads a 64-bit integer, and a field declared undefined is not decoded`, async (t) => {
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  db.exec("CREATE TABLE flags (id INTEGER PRIMARY KEY, label TEXT NOT NULL, shown INTEGER); INSERT INTO flags VALUES (1, '[1]', NULL), (2, 'true', 1), (3, '{}', 0)")
  const repository = new AsyncSqliteRepository<{ id: number, label: string, shown: boolean | null }>(db, { table: 'flags', columns: ['id', 'label', 'shown'], decode: { shown: 'boolean', label: undefined } })
  // node:sqlite's rows have no prototype: compared as plain copies, strictly (1 is not true).
  const plain = (row: object | null): object => ({ ...row })
  t.strictSame((await repository.list({})).map(plain), [
    { id: 1, label: '[1]', shown: null },
    { id: 2, label: 'true', shown: true },
    { id: 3, label: '{}', shown: false }
  ], 'NULL stays null; a text field left undefined stays text')
  t.strictSame(plain(await repository.get({ id: 2 })), { id: 2, label: 'true', shown: true }, 'a single-row read is decoded too')
  // A connection that reads integers as bigint (better-sqlite3's safeIntegers).
  const big = openSqlite(':memory:')
  t.teardown(() => big.close())
  big.exec("CREATE TABLE flags (id INTEGER PRIMARY KEY, label TEXT NOT NULL, shown INTEGER); INSERT INTO flags VALUES (1, 'x', 1)")
  const wide = big as unknown as { defaultSafeIntegers?: (on: boolean) => void }
  if (typeof wide.defaultSafeIntegers === 'function') {
    wide.defaultSafeIntegers(true)
    const bigRows = new AsyncSqliteRepository<{ id: number, label: string, shown: boolean | null }>(big, { table: 'flags', columns: ['id', 'label', 'shown'], decode: { shown: 'boolean' } })
    t.strictSame((await bigRows.list({})).map((row) => row.shown), [true], 'a bigint 1 is true')
  }
})

t0.test('PostgreSQL: decoded fields', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 2 })
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  for (const statement of ['DROP TABLE IF EXISTS books', 'DROP TABLE IF EXISTS book_genres', ...TABLES('BOOLEAN', 'postgres').map((s) => s.replace('INTEGER PRIMARY KEY', 'SERIAL PRIMARY KEY'))]) await pool.query(statement)
  await pool.query("SELECT setval('books_id_seq', 2)")
  const repository = new PostgresRepository<BookT>(pool, options('postgres'))
  await repository.describeColumns()
  await cases(t, repository)
})
