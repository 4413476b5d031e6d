// What the repository families run statements on, below them and above the drivers: a driver's runner, synchronous or asynchronous; and the executor an async repository picks.
// SQLite's runner is `sqliteRunner` (sqlite.ts), PostgreSQL's `pgRunner` (postgres.ts); a database
// whose driver is neither writes one of these, and no repository class (test/sql-dialect.test.ts).
import type { RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { Operation, Statement, StatementResult } from './statement.js'

type Row = Record<string, unknown>

/**
 * A driver that answers synchronously, over one connection (an embedded database: SQLite's
 * drivers). Made for one repository: it may keep what it prepares.
 */
export interface SyncRunner {
  /** What identifies the connection: every repository over the same one shares its transactions. */
  readonly connection: object
  /**
   * Runs a statement (its placeholders and values in the driver's form): every row it returns
   * (`returns: 'rows'`), the first only (`'row'`), or none and how many rows it changed
   * (`'count'`, with the `insertId` an INSERT generated where the dialect returns no rows).
   */
  run (statement: Statement): StatementResult
  /** The first row a statement returns, or `undefined`: a detail read, without a result to make. */
  row (statement: Statement): Row | undefined
  /** Runs a statement once, not kept for later (the table's column lookup), and returns its rows. */
  once (statement: Statement): Row[]
  /** Runs SQL without values or rows: a transaction's steps. */
  exec (sql: string): void
  /** Whether a transaction is open on the connection; `undefined` when the driver cannot tell (the repositories count the ones they open). */
  inTransaction (): boolean | undefined
  /**
   * Makes a statement that meets another connection's lock fail at once, as `busy`, rather than
   * wait on the event loop. Called by an async repository over this runner, which waits itself.
   */
  failFast? (): void
}

/** What an asynchronous driver answers to a statement: its rows, how many it changed, and the key an INSERT generated (where the dialect returns no rows). `pg`'s result fits. */
export interface QueryResult {
  rows: Row[]
  rowCount: number | null
  insertId?: unknown
}

/**
 * A driver that answers with promises, over a pool of connections (`pg`'s `Pool`): each call holds
 * a connection of its own, a transaction one for all its calls. `C` is the driver's connection.
 */
export interface AsyncRunner<C = unknown> {
  /** What identifies the database: every repository over the same one shares its transactions (the pool). */
  readonly database: object
  /** A connection of the pool, held until `release`. */
  connect (): Promise<C>
  /** Runs SQL on the connection, with values for its placeholders (none for a transaction's steps). */
  query (connection: C, sql: string, params?: unknown[]): Promise<QueryResult>
  /** Gives the connection back; `destroy`: its connection failed, or is in no known state: close it instead. */
  release (connection: C, destroy: boolean): void
  /** Hears a failure of the connection while it is held (`pg` emits `error` on it; unheard, Node would end the process). */
  listen (connection: C, onError: (error: Error) => void): void
  /** Stops hearing it. */
  unlisten (connection: C, onError: (error: Error) => void): void
}

/**
 * How an async repository runs its calls, picked once when it is made: over a synchronous runner,
 * whole calls with waits between attempts (lock-wait.ts); over an asynchronous one, on pooled
 * connections (pool.ts). Every promise rejects rather than throws.
 */
export interface AsyncExecutor {
  /** Runs an operation; `start` makes it again for another attempt. */
  run<R> (start: () => Operation<R>): Promise<R>
  /** The one row a statement returns, run alone; `undefined` where it must run as an operation. */
  one (statement: Statement): Promise<Row | null> | undefined
  /** Inserts every item in one transaction, or none, and returns the rows (`options` bind a query's expressions). */
  createMany (builder: SqlBuilder, items: Row[], options: RepositoryOptions | undefined): Promise<Row[]>
  /** Runs `work` in one transaction of the database (a savepoint inside one). */
  transaction<R> (work: () => Promise<R> | R): Promise<R>
  /** Runs a statement once and returns its rows, errors as the driver threw them (the column lookup); absent where the columns were read when the repository was made. */
  readonly describe?: (statement: Statement) => Promise<Row[]>
}
