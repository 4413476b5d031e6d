// The SQLite driver the store tests open: better-sqlite3, or node:sqlite's DatabaseSync when
// FV_SQLITE_DRIVER is 'node' (test/node-sqlite.test.ts runs the SQLite test files so). The
// repositories take either; what differs between them for a test (opening options, whether a
// transaction is open, reading a pragma) is here.
import Database from 'better-sqlite3'
import type { SqliteDatabase } from '../lib/stores/sql/index.js'

/** The driver of this run. */
export const driver: 'better-sqlite3' | 'node:sqlite' = process.env.FV_SQLITE_DRIVER === 'node' ? 'node:sqlite' : 'better-sqlite3'

/** A connection as the tests use it: what the repositories call, and closing it. */
export interface TestDatabase extends SqliteDatabase {
  close (): void
}

interface OpenOptions {
  /**
   * The driver, when it must be a given one: two copies of SQLite in one process (each driver
   * links its own) do not see each other's locks on a file, so a connection that must contend
   * with the example's (node:sqlite) in this process opens with its driver.
   */
  driver?: typeof driver
  readonly?: boolean
  /** The driver's own wait for a lock (ms); both default to theirs (better-sqlite3 5000, node:sqlite 0). */
  timeout?: number
}

/** Opens a connection with this run's driver. */
export function openSqlite (file = ':memory:', { driver: which = driver, readonly = false, timeout }: OpenOptions = {}): TestDatabase {
  if (which === 'better-sqlite3') return new Database(file, { readonly, ...(timeout === undefined ? {} : { timeout }) })
  // Loaded only when asked for: on Node 22, node:sqlite warns that it is experimental when first loaded.
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  return new DatabaseSync(file, { readOnly: readonly, timeout: timeout ?? 5000 })
}

/** Whether the connection has a transaction open. */
export function inTransaction (db: TestDatabase): boolean {
  return 'inTransaction' in db ? db.inTransaction === true : (db as { isTransaction?: boolean }).isTransaction === true
}

/** The first column of the first row a query answers (`SELECT COUNT(*) ...`), or `undefined`. */
export function scalar (db: TestDatabase, sql: string, ...params: unknown[]): unknown {
  const row = db.prepare(sql).get(...params) as Record<string, unknown> | undefined
  return row === undefined ? undefined : Object.values(row)[0]
}

/** The value of a pragma on the connection (`busy_timeout`, `journal_mode`). */
export const pragma = (db: TestDatabase, name: string): unknown => scalar(db, `PRAGMA ${name}`)

/** What the driver's error for a lock another connection holds looks like (`t.match`). */
export const BUSY_ERROR = driver === 'better-sqlite3' ? { code: 'SQLITE_BUSY' } : { code: 'ERR_SQLITE_ERROR', errcode: 5 }
