// A connection that answers synchronously, as the repositories use it, above a SyncRunner: operations, one-row statements, bulk inserts and transactions on it.
// The sync family runs every call here, and the async family over a synchronous runner runs whole
// calls here between its waits (lock-wait.ts). Every repository over the same connection shares its
// transactions, since the connection is one object.
import { ConfigurationError } from '../../core/configuration-error.js'
import { isThenable } from '../../core/maybe-promise.js'
import { sqlStatements } from '../../core/channels.js'
import type { RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { RowDecoder } from './decode.js'
import type { Dialect } from './dialect.js'
import { translateError } from './errors.js'
import { Nesting } from './nesting.js'
import { atomically, operations } from './operations.js'
import { runSync } from './run.js'
import type { SyncRunner } from './runners.js'
import type { Operation, Statement, StatementResult, TransactionStep } from './statement.js'

type Row = Record<string, unknown>

/** Transactions opened by `begin` per connection, for a driver that does not say whether one is open. */
const opened = new WeakMap<object, number>()

const depth = (connection: object): number => opened.get(connection) ?? 0

/** The statements, errors and transactions of one repository on its synchronous connection. */
export class SyncConnection {
  readonly runner: SyncRunner
  readonly dialect: Dialect
  /** The decoding of the fields the repository declares (`decode`), if any. */
  readonly #decode: RowDecoder | undefined
  /** The repository's class, as a message names it (`SqliteRepository`, or the application's subclass). */
  readonly #owner: string

  constructor (runner: SyncRunner, dialect: Dialect, decode: RowDecoder | undefined, owner: string) {
    this.runner = runner
    this.dialect = dialect
    this.#decode = decode
    this.#owner = owner
  }

  /**
   * Whether the connection is in a transaction: as the driver says (`better-sqlite3`'s
   * `inTransaction`, `node:sqlite`'s `isTransaction` from Node 22.16), else whether a
   * transaction begun here is running on it.
   */
  inTransaction (): boolean {
    return this.runner.inTransaction() ?? depth(this.runner.connection) > 0
  }

  /** Runs a method of the runner, published on the statements' channel (core/channels.ts): something listens. */
  #published<A extends unknown[], R> (method: (...args: A) => R, sql: string, ...args: A): R {
    return sqlStatements.traceSync(method, { sql, database: this.dialect.name }, this.runner, ...args)
  }

  #execute (step: Statement | TransactionStep, nesting: Nesting): StatementResult {
    if (typeof step === 'string') {
      this.#step(nesting, step)
      return { rows: [], changes: 0 }
    }
    const result = sqlStatements.hasSubscribers
      ? this.#published(this.runner.run, step.sql, step)
      : this.runner.run(step)
    if (this.#decode !== undefined) result.rows.forEach(this.#decode)
    return result
  }

  /**
   * Runs an operation. Inside a transaction already open on the connection it is a savepoint of
   * its own, so that a call that fails leaves the transaction as it was (and usable).
   */
  run<R> (operation: Operation<R>): R {
    const nesting = new Nesting(this.dialect, this.inTransaction())
    const run = nesting.nested ? atomically(operation) : operation
    return runSync(run, (step) => this.#execute(step, nesting), this.dialect)
  }

  /**
   * The row a one-row statement returns, decoded, run alone, without the operation runner (the hot
   * path of every retrieve and of a plain update). No savepoint inside an open transaction either:
   * a failed statement undoes itself alone and leaves the transaction as it was.
   */
  one (statement: Statement): Row | null {
    let row: Row | undefined
    try {
      row = sqlStatements.hasSubscribers
        ? this.#published(this.runner.row, statement.sql, statement)
        : this.runner.row(statement)
    } catch (error) {
      throw translateError(error, this.dialect)
    }
    if (row === undefined) return null
    return this.#decode === undefined ? row : this.#decode(row)
  }

  /**
   * Inserts every item in one transaction (a savepoint inside an open one), or none. A table's rows
   * are inserted in a plain loop, the text of each set of columns built and prepared once: a bulk
   * create of thousands of rows costs little more than the driver's own inserts. Rows read back
   * (a query's, or where the dialect returns none) go through `operations.createMany`.
   */
  createMany (builder: SqlBuilder, items: Row[], options: RepositoryOptions | undefined): Row[] {
    if (builder.readsBack) return this.run(operations.createMany(builder, items, options))
    return this.transaction(() => items.map((item) => this.one(builder.insert(item)) as Row)) // an INSERT ... RETURNING returns its row
  }

  /** Runs one transaction step; a driver's error translated (a busy file: 503). */
  #step (nesting: Nesting, step: TransactionStep): void {
    try {
      for (const sql of nesting.sql(step)) {
        if (sqlStatements.hasSubscribers) this.#published(this.runner.exec, sql, sql)
        else this.runner.exec(sql)
      }
    } catch (error) {
      nesting.failed(step)
      throw translateError(error, this.dialect)
    }
  }

  /** Rolls back after a failure, which is what the caller reports; a rollback that fails too adds nothing to it. */
  #rollBack (nesting: Nesting): void {
    try {
      this.#step(nesting, 'rollback')
    } catch {}
  }

  /** Begins a transaction on the connection (a savepoint when one is open); returns its steps. */
  begin (): Nesting {
    const nesting = new Nesting(this.dialect, this.inTransaction())
    this.#step(nesting, 'begin')
    opened.set(this.runner.connection, depth(this.runner.connection) + 1)
    return nesting
  }

  /** Ends what `begin` began: commits it, or rolls it back (when `commit` is false, or the commit fails). */
  end (nesting: Nesting, commit: boolean): void {
    opened.set(this.runner.connection, depth(this.runner.connection) - 1)
    if (!commit) return this.#rollBack(nesting)
    try {
      this.#step(nesting, 'commit')
    } catch (error) {
      // SQLite keeps the transaction open when its COMMIT fails (a deferred constraint, a reader holding the file).
      this.#rollBack(nesting)
      throw error
    }
  }

  /** Runs synchronous `work` in one transaction of the connection (a savepoint inside one): all of it, or none. */
  transaction<R> (work: () => R): R {
    const nesting = this.begin()
    let result: R
    try {
      result = work()
      if (isThenable(result)) {
        throw new ConfigurationError('FV_ERR_SQL_OPTION', `${this.#owner}.transaction runs a synchronous callback, and this one returned ` +
          'a promise: what it awaits would run after the commit. Call the sync repositories inside it without awaiting, ' +
          'or use AsyncSqliteRepository.transaction')
      }
    } catch (error) {
      this.end(nesting, false)
      throw error
    }
    this.end(nesting, true)
    return result
  }

  /** Reads the table's columns with the dialect's lookup, run once. */
  describe (table: string): Row[] {
    return this.runner.once(this.dialect.columnsOf(table))
  }
}
