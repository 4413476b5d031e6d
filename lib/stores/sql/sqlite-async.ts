// SQLite for the async family: `AsyncSqliteRepository`, the async family's repository over SQLite's runner, waiting for other connections' locks off the event loop.
import { AsyncSqlRepository } from './async-repository.js'
import type { SqliteDatabase } from './drivers.js'
import { checkedLockTimeout, LOCK_TIMEOUT, type SqliteLockOptions } from './lock-wait.js'
import { sqliteRunner } from './sqlite.js'
import { sqliteDialect } from './sqlite-dialect.js'
import type { SqlTableOptions } from './statement.js'

export type { SqliteLockOptions } from './lock-wait.js'

/**
 * A CRUD and bulk repository over one SQLite table through `better-sqlite3` or `node:sqlite`, for
 * the async view family: the SQL of `SqliteRepository`, and lock waits that do not block the event
 * loop (lock-wait.ts). The async family's `AsyncSqlRepository` over SQLite's dialect and runner.
 */
export class AsyncSqliteRepository<T = Record<string, unknown>> extends AsyncSqlRepository<T> {
  /** How long a call waits in all for another connection's lock (ms). */
  readonly lockTimeout: number

  /**
   * Sets the connection's busy timeout to 0 (`PRAGMA busy_timeout = 0`): both drivers wait for
   * a lock by sleeping on the event loop (`better-sqlite3` five seconds by default, `node:sqlite`
   * its `timeout` option), so each attempt must give up at once and leave the waiting to this repository.
   */
  constructor (
    db: SqliteDatabase,
    options: SqlTableOptions<NoInfer<T>>,
    { lockTimeout = LOCK_TIMEOUT }: SqliteLockOptions = {}
  ) {
    // Checked first, so that the message names this class: a refused option leaves the connection as it was.
    checkedLockTimeout(lockTimeout, `AsyncSqliteRepository of ${JSON.stringify(options.table)}`)
    super(sqliteDialect, sqliteRunner(db), options, { lockTimeout })
    this.lockTimeout = lockTimeout
  }
}
