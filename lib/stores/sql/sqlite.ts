// SQLite through `better-sqlite3` or `node:sqlite`, the sync family's SQLite: its runner (prepared statements kept, transactions told) and `SqliteRepository`.
import type { SqliteDatabase, SqliteStatement } from './drivers.js'
import type { SyncRunner } from './runners.js'
import { sqliteDialect } from './sqlite-dialect.js'
import type { SqlTableOptions } from './statement.js'
import { SqlRepository } from './sync-repository.js'

type Row = Record<string, unknown>

/** Prepared statements kept per repository, the oldest dropped first. */
const CACHE_SIZE = 256

/**
 * SQLite's runner over a database of either driver, for one repository: statements prepared once
 * per SQL text and kept, 256 of them, the one prepared longest ago dropped first (using a statement
 * does not renew it).
 */
export function sqliteRunner (db: SqliteDatabase): SyncRunner {
  const cache = new Map<string, SqliteStatement>()
  const prepared = (sql: string): SqliteStatement => {
    let statement = cache.get(sql)
    if (statement === undefined) {
      // The text varies with criteria and list lengths: keep the most recent statements only.
      if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value!)
      cache.set(sql, statement = db.prepare(sql))
    }
    return statement
  }
  return {
    connection: db,
    run: ({ sql, params, returns }) => {
      const statement = prepared(sql)
      if (returns === 'count') return { rows: [], changes: Number(statement.run(...params).changes) }
      // One row: `.get()`, which stops stepping after it (with a trigger on the table, stepping a
      // one-row UPDATE ... RETURNING to its end with `.all()` was measured at twice the time).
      let rows: Row[]
      if (returns === 'row') {
        const row = statement.get(...params) as Row | undefined // the driver's row: a record by column name
        rows = row === undefined ? [] : [row]
      } else {
        rows = statement.all(...params) as Row[] // the driver's rows: records by column name
      }
      return { rows, changes: rows.length }
    },
    row: ({ sql, params }) => prepared(sql).get(...params) as Row | undefined, // the driver's row: a record by column name
    // The table's description is read once: not kept among the statements.
    once: ({ sql, params }) => db.prepare(sql).all(...params) as Row[],
    exec: (sql) => { db.exec(sql) },
    // `better-sqlite3`'s `inTransaction`, `node:sqlite`'s `isTransaction` (Node 22.16 and later).
    inTransaction: () => {
      const flag = db.inTransaction ?? db.isTransaction
      return typeof flag === 'boolean' ? flag : undefined
    },
    // Both drivers wait for a lock by sleeping on the event loop (`better-sqlite3` five seconds by
    // default, `node:sqlite` its `timeout` option).
    failFast: () => { db.exec('PRAGMA busy_timeout = 0') }
  }
}

/**
 * A CRUD and bulk repository over one SQLite table through `better-sqlite3` or `node:sqlite`
 * (`DatabaseSync`): synchronous, for the sync view family. Every bulk call runs in one transaction.
 * The sync family's `SqlRepository` over SQLite's dialect and runner.
 */
export class SqliteRepository<T = Record<string, unknown>> extends SqlRepository<T> {
  constructor (db: SqliteDatabase, options: SqlTableOptions<NoInfer<T>>) {
    super(sqliteDialect, sqliteRunner(db), options)
  }
}
