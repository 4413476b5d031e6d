import { ConfigurationError } from '../../core/configuration-error.js'
import { isThenable } from '../../core/maybe-promise.js'
import type { Dialect } from './dialect.js'
import type { SqliteDatabase } from './drivers.js'
import { translateError } from './errors.js'
import { Nesting } from './nesting.js'
import type { TransactionStep } from './statement.js'

// Transactions of a SQLite connection: whether one is open, and running a step of one. Every
// repository over the same database object shares them, since the connection is the object.

/** Transactions opened by `begin` per connection, for a driver that does not say whether one is open. */
const opened = new WeakMap<SqliteDatabase, number>()

const depth = (db: SqliteDatabase): number => opened.get(db) ?? 0

/**
 * Whether the connection is in a transaction: as the driver says (`better-sqlite3`'s
 * `inTransaction`, `node:sqlite`'s `isTransaction` from Node 22.16), else whether a
 * `transactionOn` is running on it.
 */
export function inTransaction (db: SqliteDatabase): boolean {
  const flag = db.inTransaction ?? db.isTransaction
  return typeof flag === 'boolean' ? flag : depth(db) > 0
}

/** Runs one transaction step on the connection; a driver's error translated (a busy file: 503). */
export function runStep (db: SqliteDatabase, nesting: Nesting, step: TransactionStep): void {
  try {
    for (const sql of nesting.sql(step)) db.exec(sql)
  } catch (error) {
    nesting.failed(step)
    throw translateError(error)
  }
}

/** Rolls back after a failure, which is what the caller reports; a rollback that fails too adds nothing to it. */
function rollBack (db: SqliteDatabase, nesting: Nesting): void {
  try {
    runStep(db, nesting, 'rollback')
  } catch {}
}

/** Begins a transaction on the connection (a savepoint when one is open); returns its steps. */
export function begin (db: SqliteDatabase, dialect: Dialect): Nesting {
  const nesting = new Nesting(dialect, inTransaction(db))
  runStep(db, nesting, 'begin')
  opened.set(db, depth(db) + 1)
  return nesting
}

/** Ends what `begin` began: commits it, or rolls it back (when `commit` is false, or the commit fails). */
export function end (db: SqliteDatabase, nesting: Nesting, commit: boolean): void {
  opened.set(db, depth(db) - 1)
  if (!commit) return rollBack(db, nesting)
  try {
    runStep(db, nesting, 'commit')
  } catch (error) {
    // SQLite keeps the transaction open when its COMMIT fails (a deferred constraint, a reader holding the file).
    rollBack(db, nesting)
    throw error
  }
}

/** Runs synchronous `work` in one transaction of the connection (a savepoint inside one): all of it, or none. */
export function transactionOn<R> (db: SqliteDatabase, dialect: Dialect, work: () => R): R {
  const nesting = begin(db, dialect)
  let result: R
  try {
    result = work()
    if (isThenable(result)) {
      throw new ConfigurationError('FV_ERR_SQL_OPTION', 'SqliteRepository.transaction runs a synchronous callback, and this one returned ' +
        'a promise: what it awaits would run after the commit. Call the sync repositories inside it without awaiting, ' +
        'or use AsyncSqliteRepository.transaction')
    }
  } catch (error) {
    end(db, nesting, false)
    throw error
  }
  end(db, nesting, true)
  return result
}
