// The async family's executor over a pool of connections (PostgreSQL), above an AsyncRunner: a connection per call or per transaction, and calls a concurrent transaction aborted run again.
// Each operation holds one pooled connection, so a bulk call's transaction runs on one connection;
// inside a `transaction()` every call runs on its connection (AsyncLocalStorage carries it). An
// operation the database aborted for a concurrent transaction (`transient`) was rolled back whole
// and runs again, three attempts in all.
import { sqlStatements } from '../../core/channels.js'
import type { RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { RowDecoder } from './decode.js'
import type { Dialect } from './dialect.js'
import { translateError } from './errors.js'
import { Nesting } from './nesting.js'
import { atomically, operations } from './operations.js'
import { runAsync } from './run.js'
import type { AsyncExecutor, AsyncRunner, QueryResult } from './runners.js'
import { openScope, runInScope, scopeOf } from './scope.js'
import type { Operation, Statement, StatementResult, TransactionStep } from './statement.js'

type Row = Record<string, unknown>

/** A savepoint that could not be rolled back fails its transaction too, which decides for the connection. */
function ignore (): void {}

/** How many times an operation the database aborted for a concurrent transaction is run in all. */
const ATTEMPTS = 3

/** Runs an async repository's calls on the connections of a pool. */
export class PoolExecutor<C> implements AsyncExecutor {
  readonly #runner: AsyncRunner<C>
  readonly #dialect: Dialect
  /** What identifies the database: its transactions' scopes are the pool's. */
  readonly #database: object
  /** The decoding of the fields the repository declares (`decode`), if any. */
  readonly #decode: RowDecoder | undefined

  constructor (runner: AsyncRunner<C>, dialect: Dialect, decode: RowDecoder | undefined) {
    this.#runner = runner
    this.#dialect = dialect
    this.#database = runner.database
    this.#decode = decode
  }

  /** Whether an error (a 503's cause) is a loss to a concurrent transaction: the call may run again. */
  #transient (error: unknown): boolean {
    return this.#dialect.errorKind((error as { cause?: unknown } | undefined)?.cause) === 'transient'
  }

  /** Sends SQL on the connection, published on the statements' channel when something listens (core/channels.ts). */
  #query (connection: C, sql: string, params: unknown[] | undefined): Promise<QueryResult> {
    return sqlStatements.hasSubscribers
      ? sqlStatements.traceSync(this.#runner.query, { sql, database: this.#dialect.name }, this.#runner,
        connection, sql, params)
      : this.#runner.query(connection, sql, params)
  }

  async #execute (connection: C, step: Statement | TransactionStep, nesting: Nesting): Promise<StatementResult> {
    if (typeof step === 'string') {
      try {
        for (const sql of nesting.sql(step)) await this.#query(connection, sql, undefined)
      } catch (error) {
        nesting.failed(step)
        throw error
      }
      return { rows: [], changes: 0 }
    }
    const result = await this.#query(connection, step.sql, step.params)
    if (this.#decode !== undefined) result.rows.forEach(this.#decode)
    // Every statement the builder writes reports a row count.
    const { rows, insertId } = result
    const changes = Number(result.rowCount)
    return insertId === undefined ? { rows, changes } : { rows, changes, insertId }
  }

  /**
   * Runs an operation, again when the database aborted it for a concurrent transaction (a
   * deadlock, a serialization failure): it was rolled back whole, so a new attempt is safe.
   * After the last attempt the client gets the 503 with `Retry-After`.
   */
  async run<R> (start: () => Operation<R>): Promise<R> {
    return await this.#attempt(start, 1)
  }

  async #attempt<R> (start: () => Operation<R>, attempt: number): Promise<R> {
    try {
      return await this.#once(start())
    } catch (error) {
      // Inside a transaction the loss is the whole transaction's: its caller decides.
      if (attempt >= ATTEMPTS || !this.#transient(error) || scopeOf(this.#database) !== undefined) throw error
      return await this.#attempt(start, attempt + 1)
    }
  }

  /**
   * Runs an operation: inside a transaction of this pool, on its connection, after the calls queued
   * before it there, as a savepoint of its own (a call that fails leaves the transaction usable);
   * outside, on a connection of its own.
   */
  async #once<R> (operation: Operation<R>): Promise<R> {
    const scope = scopeOf<C>(this.#database)
    if (scope !== undefined) {
      const nesting = new Nesting(this.#dialect, true)
      return await scope.serially(() => runAsync(
        atomically(operation),
        (step) => this.#execute(scope.connection, step, nesting),
        this.#dialect
      ))
    }
    return await this.#withConnection((connection) => {
      const nesting = new Nesting(this.#dialect, false)
      return runAsync(operation, (step) => this.#execute(connection, step, nesting), this.#dialect)
    })
  }

  /**
   * One statement outside any transaction of this pool (a detail read, a plain update, which the
   * point routes run on every request): a pooled connection, the query, the connection back, without
   * the operation runner. The same rules as an operation's: errors translated, a concurrent abort
   * run again, a connection that failed dropped. `undefined` inside a transaction, which needs the
   * operation's savepoint: PostgreSQL aborts the whole transaction on a failed statement.
   */
  one (statement: Statement): Promise<Row | null> | undefined {
    return scopeOf(this.#database) === undefined ? this.#statement(statement, 1) : undefined
  }

  async #statement (statement: Statement, attempt: number): Promise<Row | null> {
    try {
      const { sql, params } = statement
      return await this.#withConnection((connection) => this.#query(connection, sql, params).then(
        ({ rows }) => rows.length === 0 ? null : this.#decode === undefined ? rows[0] : this.#decode(rows[0]),
        // Translated here, so that #withConnection's rule for the connection sees what it was.
        (error: unknown) => { throw translateError(error, this.#dialect) }
      ))
    } catch (error) {
      if (attempt >= ATTEMPTS || !this.#transient(error)) throw error
      return await this.#statement(statement, attempt + 1)
    }
  }

  createMany (builder: SqlBuilder, items: Row[], options: RepositoryOptions | undefined): Promise<Row[]> {
    return this.run(() => operations.createMany(builder, items, options))
  }

  /**
   * Runs `work` in one transaction on one connection of the pool (a savepoint inside an open one):
   * every call `work` makes on a repository over the same pool, awaited or not, runs on that
   * connection, in that transaction, one at a time (AsyncLocalStorage carries it), and all of it
   * commits when `work` returns, or, when it throws, rolls back, and the error propagates.
   * Concurrent transactions each hold a connection of their own.
   */
  async transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const outer = scopeOf<C>(this.#database)
    if (outer !== undefined) return await outer.serially(() => this.#transaction(outer.connection, true, work, ignore))
    return await this.#withConnection((connection, drop) => this.#transaction(connection, false, work, drop))
  }

  /** `drop`: what to do with the connection when its transaction could not be rolled back (it is in no known state). */
  async #transaction<R> (
    connection: C,
    nested: boolean,
    work: () => Promise<R> | R,
    drop: () => void
  ): Promise<R> {
    const nesting = new Nesting(this.#dialect, nested)
    const step = async (name: TransactionStep): Promise<void> => {
      try {
        await this.#execute(connection, name, nesting)
      } catch (error) {
        throw translateError(error, this.#dialect)
      }
    }
    await step('begin')
    const scope = openScope(this.#database, connection)
    let result: R
    try {
      result = await runInScope(scope, work)
    } catch (error) {
      // Calls `work` started and did not await are part of the transaction: they end first.
      await scope.end()
      await step('rollback').catch(drop)
      throw error
    }
    await scope.end()
    try {
      await step('commit')
    } catch (error) {
      // A refused COMMIT ends a transaction; a refused RELEASE leaves the savepoint to roll back.
      await step('rollback').catch(drop)
      throw error
    }
    return result
  }

  /** Checks a connection out, runs `use` on it, and gives it back, or drops it when it failed (or `use` says so). */
  async #withConnection<R> (use: (connection: C, drop: () => void) => Promise<R>): Promise<R> {
    let connection: C
    try {
      connection = await this.#runner.connect()
    } catch (error) {
      throw translateError(error, this.#dialect)
    }
    let broken = false
    // A checked-out connection that dies also reports it to its listener; unheard, Node would crash.
    // The failing query reports the same failure, which becomes the 503.
    const onError = (): void => { broken = true }
    this.#runner.listen(connection, onError)
    let value: R
    try {
      value = await use(connection, onError)
    } catch (error) {
      this.#runner.unlisten(connection, onError)
      // A connection that failed must not go back to the pool; one whose transaction lost to
      // another (a deadlock) is fine.
      const failed = error as { statusCode?: number } | undefined
      this.#runner.release(connection, broken || (failed?.statusCode === 503 && !this.#transient(error)))
      throw error
    }
    this.#runner.unlisten(connection, onError)
    this.#runner.release(connection, broken)
    return value
  }

  /** Runs a statement once on a connection of its own, errors as the driver threw them: the column lookup. */
  readonly describe = async (statement: Statement): Promise<Row[]> => {
    const connection = await this.#runner.connect()
    try {
      return (await this.#runner.query(connection, statement.sql, statement.params)).rows
    } finally {
      this.#runner.release(connection, false)
    }
  }
}
