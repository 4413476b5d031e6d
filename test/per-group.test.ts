import { test, type Test } from 'tap'
import Database from 'better-sqlite3'
import { MemoryRepository, asyncRepository, type ListQuery } from '../lib/generics.js'
import { listsPerGroup } from '../lib/stores/repository.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { caught } from './helpers.js'
import { freshDatabase, postgres, type PgServer } from './pg-server.js'

// Grouped reads (ListQuery.perGroup, docs/repositories.md "Grouped reads"): at most n rows for each
// value of a field, the first in the read's order, in one read: what a view embeds of a to-many
// relation in each object of a page. On the memory store, SQLite (both drivers) and PostgreSQL, with
// a projection and a computed field, and the statement counted.

interface Loan { id: number, book_id: number, member: string, days: number, twice: number }
const LOANS: Loan[] = [
  { id: 1, book_id: 1, member: 'ann', days: 3, twice: 6 },
  { id: 2, book_id: 1, member: 'bob', days: 1, twice: 2 },
  { id: 3, book_id: 2, member: 'cy', days: 7, twice: 14 },
  { id: 4, book_id: 1, member: 'di', days: 5, twice: 10 },
  { id: 5, book_id: 3, member: 'ed', days: 2, twice: 4 },
  { id: 6, book_id: 2, member: 'fay', days: 9, twice: 18 },
  { id: 7, book_id: 1, member: 'gus', days: 4, twice: 8 }
]
const TABLE = { table: 'loans', columns: ['id', 'book_id', 'member', 'days'], computed: { twice: 'loans.days * 2' } } satisfies SqlTableOptions<Loan>
const DDL = (key: string): string => `CREATE TABLE loans (id ${key}, book_id INTEGER NOT NULL, member TEXT NOT NULL, days INTEGER NOT NULL)`

type List = (criteria: Record<string, unknown>, query: ListQuery) => Promise<Loan[]>
interface Opened { list: List, repository: unknown, statements: () => number, close: () => Promise<void> }

const stores: Array<{ name: string, open: () => Promise<Opened> }> = [
  {
    name: 'memory',
    open: async () => {
      const memory = new MemoryRepository<Loan>({ rows: LOANS.map((row) => ({ ...row })) })
      const list: List = async (c, q) => memory.list(c, q)
      return { list, repository: asyncRepository(memory), statements: () => 1, close: async () => {} }
    }
  },
  {
    name: 'SQLite (better-sqlite3)',
    open: async () => {
      const db = new Database(':memory:')
      db.exec(DDL('INTEGER PRIMARY KEY'))
      for (const row of LOANS) db.prepare('INSERT INTO loans VALUES (?, ?, ?, ?)').run(row.id, row.book_id, row.member, row.days)
      let statements = 0
      const prepare = db.prepare.bind(db)
      db.prepare = (sql: string) => { statements++; return prepare(sql) }
      const repository = new SqliteRepository<Loan>(db, TABLE)
      const list: List = async (c, q) => repository.list(c, q)
      return { list, repository, statements: () => statements, close: async () => { db.close() } }
    }
  },
  {
    name: 'SQLite (node:sqlite)',
    open: async () => {
      const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
      const db = new DatabaseSync(':memory:')
      db.exec(DDL('INTEGER PRIMARY KEY'))
      for (const row of LOANS) db.prepare('INSERT INTO loans VALUES (?, ?, ?, ?)').run(row.id, row.book_id, row.member, row.days)
      const repository = new AsyncSqliteRepository<Loan>(db, TABLE)
      const list: List = (c, q) => repository.list(c, q)
      return { list, repository, statements: () => 1, close: async () => { db.close() } }
    }
  }
]

function postgresStore (server: PgServer): { name: string, open: () => Promise<Opened> } {
  return {
    name: 'PostgreSQL',
    open: async () => {
      const { pool, statements: texts } = await freshDatabase(server, 'grouped', 2)
      await pool.query(DDL('INTEGER PRIMARY KEY'))
      for (const row of LOANS) await pool.query('INSERT INTO loans VALUES ($1, $2, $3, $4)', [row.id, row.book_id, row.member, row.days])
      const before = texts.length
      const statements = (): number => texts.slice(before).filter((sql) => sql.startsWith('SELECT')).length
      const repository = new PostgresRepository<Loan>(pool, TABLE)
      const list: List = (c, q) => repository.list(c, q)
      return { list, repository, statements, close: async () => { await pool.end() } }
    }
  }
}

async function cases (t: Test, open: () => Promise<Opened>): Promise<void> {
  const { list, repository, statements, close } = await open()
  t.teardown(close)
  t.equal(listsPerGroup(repository), true, 'the store declares it')
  const before = statements()
  const two = await list({ book_id__in: [1, 2, 3] }, { orderBy: [{ field: 'days', descending: true }], perGroup: { field: 'book_id', limit: 2 } })
  t.same(two.map((row) => row.id), [6, 3, 4, 7, 5], 'the two longest loans of each book, in the read\'s order')
  t.ok(statements() - before <= 1, 'one statement')
  t.same(two[0], { id: 6, book_id: 2, member: 'fay', days: 9, twice: 18 }, 'rows as a list reads them, computed fields too')
  const few = await list({ book_id__in: [1, 2] }, { orderBy: [], perGroup: { field: 'book_id', limit: 1 }, fields: ['member'] })
  t.same(few.map((row) => [row.id, row.member]), [[1, 'ann'], [3, 'cy']], 'the first by key of each, with a projection')
  const narrowed = await list({ book_id: 1, days__gt: 2 }, { orderBy: [{ field: 'days', descending: false }], perGroup: { field: 'book_id', limit: 10 } })
  t.same(narrowed.map((row) => row.id), [1, 7, 4], 'criteria hold, a limit above the group\'s size takes it whole')
  const windowed = await list({}, { orderBy: [], perGroup: { field: 'book_id', limit: 1 }, limit: 2 })
  t.same(windowed.map((row) => row.id), [1, 3], 'a window applies to what the groups kept')
}

for (const store of stores) test(store.name, (t) => cases(t, store.open))

const started = await postgres()
test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  t.teardown(() => { server.stop() })
  await cases(t, postgresStore(server).open)
})

test('a grouped read ranks by columns only: a computed field is refused, naming it', async (t) => {
  const db = new Database(':memory:')
  db.exec(DDL('INTEGER PRIMARY KEY'))
  t.teardown(() => db.close())
  const repository = new SqliteRepository<Loan>(db, TABLE)
  t.match(await caught(() => repository.list({}, { orderBy: [], perGroup: { field: 'twice', limit: 1 } })),
    { code: 'FV_ERR_SQL_NAME', message: /"loans": a read of each group ranks its rows by columns; "twice" is no column of it/ })
  t.match(await caught(() => repository.list({}, { orderBy: [{ field: 'twice', descending: false }], perGroup: { field: 'book_id', limit: 1 } })),
    { code: 'FV_ERR_SQL_NAME' })
  t.match(await caught(() => repository.list({}, { orderBy: [], perGroup: { field: 'book_id', limit: -1 } })), { code: 'FV_ERR_SQL_ROW_COUNT' })
})
