import { preconditionOf, type AsyncBulkRepository, type ColumnFacts, type AsyncRepository, type Criteria, type ListQuery, type RepositoryOptions } from '../repository.js'
import type { PgPool, PgPoolClient } from './drivers.js'
import { SqlBuilder } from './builder.js'
import { decodedFacts, rowDecoder, type RowDecoder, type StoredKind } from './decode.js'
import { postgresDialect } from './postgres-dialect.js'
import { postgresColumns } from './columns.js'
import { isTransient, translateError } from './errors.js'
import { Nesting } from './nesting.js'
import { atomically, operations } from './operations.js'
import { runAsync } from './run.js'
import { openScope, runInScope, scopeOf } from './scope.js'
import type { Operation, SqlTableOptions, Statement, StatementResult, TransactionStep } from './statement.js'

/** A savepoint that could not be rolled back fails its transaction too, which decides for the connection. */
function ignore (): void {}

/** How many times an operation PostgreSQL aborted for a concurrent transaction is run in all. */
const ATTEMPTS = 3
/**
 * A CRUD and bulk repository over one PostgreSQL table through a `pg` pool:
 * asynchronous, for the async view family. Each operation holds one pooled client,
 * so a bulk call's transaction runs on one connection.
 */
export class PostgresRepository<T = Record<string, unknown>> implements AsyncRepository<T>, AsyncBulkRepository<T> {
  /** `update` and `delete` evaluate `options.precondition` in the same atomic step as the write. */
  readonly atomicPreconditions = true
  readonly builder: SqlBuilder
  /** The table's declared columns and computed fields: what a view's filter may name (checked at registration). */
  readonly fieldNames: readonly string[]
  /** The computed fields: read, never written (a view's body naming one is refused at registration). */
  readonly readOnlyFields: readonly string[]
  /** The version column (`versionColumn`): 1 on create, one more on every update. */
  readonly versionField: string | undefined
  readonly #pool: PgPool

  /**
   * What the table says of its columns (nullable, the JSON type of their values), once
   * `describeColumns()` has read it; the plugin does before it registers the views over this
   * repository, so that a view's response schema is checked against it.
   */
  columnFacts: ReadonlyMap<string, ColumnFacts> | undefined
  readonly #table: string
  /** The decoding of the fields declared in `decode` (JSON text in a text column), if any. */
  readonly #decode: RowDecoder | undefined
  readonly #decoding: Readonly<Record<string, StoredKind | undefined>> | undefined

  constructor (pool: PgPool, options: SqlTableOptions<NoInfer<T>>) {
    this.#pool = pool
    this.builder = new SqlBuilder(postgresDialect, options)
    this.fieldNames = this.builder.fieldNames
    this.readOnlyFields = [...this.builder.computed.keys()]
    this.versionField = this.builder.versionColumn
    this.#table = options.table
    this.#decode = rowDecoder(options.decode)
    this.#decoding = options.decode
  }

  /** Reads `columnFacts` from the database (`information_schema.columns`); nothing when the table does not exist yet. */
  async describeColumns (): Promise<void> {
    const columns = await postgresColumns(this.#pool, this.#table, this.builder.computed)
    this.columnFacts = decodedFacts(columns, this.#decoding)
  }

  async #execute (client: PgPoolClient, step: Statement | TransactionStep, nesting: Nesting): Promise<StatementResult> {
    if (typeof step === 'string') {
      try {
        for (const sql of nesting.sql(step)) await client.query(sql)
      } catch (error) {
        nesting.failed(step)
        throw error
      }
      return { rows: [], changes: 0 }
    }
    const result = await client.query(step.sql, step.params)
    if (this.#decode !== undefined) result.rows.forEach(this.#decode)
    // Every statement the builder writes reports a row count.
    return { rows: result.rows, changes: Number(result.rowCount) }
  }

  /**
   * Runs an operation, again when PostgreSQL aborted it for a concurrent transaction (a
   * deadlock, a serialization failure): it was rolled back whole, so a new attempt is safe.
   * After the last attempt the client gets the 503 with `Retry-After`.
   */
  async #run<R> (start: () => Operation<R>): Promise<R> {
    return await this.#attempt(start, 1)
  }

  async #attempt<R> (start: () => Operation<R>, attempt: number): Promise<R> {
    try {
      return await this.#once(start())
    } catch (error) {
      // Inside a transaction the loss is the whole transaction's: its caller decides.
      if (attempt >= ATTEMPTS || !isTransient((error as { cause?: unknown }).cause) ||
        scopeOf(this.#pool) !== undefined) throw error
      return await this.#attempt(start, attempt + 1)
    }
  }

  /**
   * Runs an operation: inside a transaction of this pool, on its client, after the calls queued
   * before it there, as a savepoint of its own (a call that fails leaves the transaction usable);
   * outside, on a client of its own.
   */
  async #once<R> (operation: Operation<R>): Promise<R> {
    const scope = scopeOf<PgPoolClient>(this.#pool)
    if (scope !== undefined) {
      const nesting = new Nesting(postgresDialect, true)
      return await scope.serially(() => runAsync(
        atomically(operation),
        (step) => this.#execute(scope.connection, step, nesting)
      ))
    }
    return await this.#withClient((client) => {
      const nesting = new Nesting(postgresDialect, false)
      return runAsync(operation, (step) => this.#execute(client, step, nesting))
    })
  }

  /**
   * Runs `work` in one transaction on one client of this repository's pool (a savepoint inside an
   * open one): every call `work` makes on a `PostgresRepository` over the same pool, awaited or
   * not, runs on that client, in that transaction, one at a time (AsyncLocalStorage carries it),
   * and all of it commits when `work` returns, or, when it throws, rolls back, and the error
   * propagates. Concurrent transactions each hold a client of their own.
   */
  async transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const outer = scopeOf<PgPoolClient>(this.#pool)
    if (outer !== undefined) return await outer.serially(() => this.#transaction(outer.connection, true, work, ignore))
    return await this.#withClient((client, drop) => this.#transaction(client, false, work, drop))
  }

  /** `drop`: what to do with the connection when its transaction could not be rolled back (it is in no known state). */
  async #transaction<R> (
    client: PgPoolClient,
    nested: boolean,
    work: () => Promise<R> | R,
    drop: () => void
  ): Promise<R> {
    const nesting = new Nesting(postgresDialect, nested)
    const step = async (name: TransactionStep): Promise<void> => {
      try {
        await this.#execute(client, name, nesting)
      } catch (error) {
        throw translateError(error)
      }
    }
    await step('begin')
    const scope = openScope(this.#pool, client)
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

  /** Checks a client out, runs `use` on it, and returns it to the pool, or drops it when its connection failed (or `use` says so). */
  async #withClient<R> (use: (client: PgPoolClient, drop: () => void) => Promise<R>): Promise<R> {
    let client: PgPoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw translateError(error)
    }
    let broken = false
    // A checked-out client whose connection dies also emits `error`; unheard, Node would crash.
    // The failing query reports the same failure, which becomes the 503.
    const onError = (): void => { broken = true }
    client.on('error', onError)
    let value: R
    try {
      value = await use(client, onError)
    } catch (error) {
      client.off('error', onError)
      // A client whose connection failed must not go back to the pool; one whose transaction
      // lost to another (a deadlock) is fine.
      const failed = error as { statusCode?: number, cause?: unknown } | undefined
      client.release(broken || (failed?.statusCode === 503 && !isTransient(failed.cause)))
      throw error
    }
    client.off('error', onError)
    client.release(broken)
    return value
  }

  create (values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    return this.#run(() => operations.create(this.builder, values, options)) as Promise<T | null>
  }

  /**
   * One statement outside any transaction of this pool (a detail read, a plain update, which the
   * point routes run on every request): a pooled client, the query, the client back, without the
   * operation runner. The same rules as an operation's: errors translated, a concurrent abort run
   * again, a client whose connection failed dropped. `undefined` inside a transaction, which needs
   * the operation's savepoint: PostgreSQL aborts the whole transaction on a failed statement.
   */
  #alone (step: Statement): Promise<T | null> | undefined {
    return scopeOf(this.#pool) === undefined ? this.#statement(step, 1) : undefined
  }

  async #statement (step: Statement, attempt: number): Promise<T | null> {
    try {
      return await this.#withClient((client) => client.query(step.sql, step.params).then(
        ({ rows }) => {
          const row = rows.length === 0 ? null : this.#decode === undefined ? rows[0] : this.#decode(rows[0])
          return row as T | null
        },
        // Translated here, so that #withClient's rule for the client sees what it was.
        (error: unknown) => { throw translateError(error) }
      ))
    } catch (error) {
      if (attempt >= ATTEMPTS || !isTransient((error as { cause?: unknown }).cause)) throw error
      return await this.#statement(step, attempt + 1)
    }
  }

  // Async, as every method here: a statement the builder refuses rejects, never throws.
  async get (criteria: Criteria, options?: RepositoryOptions): Promise<T | null> {
    return await (this.#alone(this.builder.selectOne(criteria, options)) ??
      this.#run(() => operations.get(this.builder, criteria, options)) as Promise<T | null>)
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, options?: RepositoryOptions): Promise<T[]> {
    return this.#run(() => operations.list(this.builder, criteria, query, options)) as Promise<T[]>
  }

  /** A page and its total from one snapshot (one REPEATABLE READ transaction on one connection). */
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Promise<{ items: T[], total: number }> {
    return this.#run(
      () => operations.listAndCount(this.builder, criteria, query, countQuery, options)
    ) as Promise<{ items: T[], total: number }>
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, options?: RepositoryOptions): Promise<number> { return this.#run(() => operations.count(this.builder, criteria, query, options)) }
  async update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    const precondition = preconditionOf(options)
    // A table's row changed with nothing to check first is one statement (see #alone).
    if (precondition === undefined && !this.builder.isQuery && Object.keys(values).length > 0) {
      const alone = this.#alone(this.builder.update(criteria, values, true))
      if (alone !== undefined) return await alone
    }
    return await (this.#run(
      () => operations.update(this.builder, criteria, values, precondition, options)
    ) as Promise<T | null>)
  }

  delete (criteria: Criteria, options?: RepositoryOptions): Promise<boolean> {
    return this.#run(() => operations.delete(this.builder, criteria, preconditionOf(options), options))
  }

  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<T[]> {
    return this.#run(() => operations.createMany(this.builder, items, options)) as Promise<T[]>
  }

  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): Promise<T[]> {
    return this.#run(() => operations.updateMany(this.builder, values, kwargs, args)) as Promise<T[]>
  }

  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<void> {
    return this.#run(() => operations.bulkUpdate(this.builder, items, preconditionOf(options), options))
  }

  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): Promise<void> {
    return this.#run(() => operations.deleteMany(this.builder, kwargs, args))
  }
}
