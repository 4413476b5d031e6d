// The async family's SQL repository, above the builder, the operations and a runner: one class for every database, over a pool (AsyncRunner) or one synchronous connection (SyncRunner).
// `PostgresRepository` (postgres.ts) is this class over PostgreSQL's dialect and `pg` runner,
// `AsyncSqliteRepository` (sqlite-async.ts) over SQLite's; another database is this class over its
// own (`new AsyncSqlRepository(dialect, runner, options)`), no class of its own.
import {
  preconditionOf, type AsyncBulkRepository, type AsyncDistinctRepository, type AsyncRepository, type ColumnFacts,
  type Criteria, type DistinctQuery, type DistinctValue, type FieldOf, type ListQuery, type RepositoryOptions
} from '../repository.js'
import { SqlBuilder } from './builder.js'
import { columnFacts } from './columns.js'
import { decodedFacts, rowDecoder, type StoredKind } from './decode.js'
import type { Dialect } from './dialect.js'
import { checkedLockTimeout, LOCK_TIMEOUT, LockWaits, type SqliteLockOptions } from './lock-wait.js'
import { operations } from './operations.js'
import { PoolExecutor } from './pool.js'
import type { AsyncExecutor, AsyncRunner, SyncRunner } from './runners.js'
import type { SqlTableOptions, Statement } from './statement.js'
import { SyncConnection } from './sync-connection.js'

/** Whether a runner answers synchronously (one connection) rather than with promises (a pool). */
const isSync = (runner: SyncRunner | AsyncRunner): runner is SyncRunner => 'connection' in runner

/**
 * A CRUD and bulk repository over one SQL table (or a query over it): its methods return promises,
 * for the async view family. Over an asynchronous runner (a pool), each call holds a connection of
 * its own and a call the database aborted for a concurrent transaction runs again (pool.ts); over a
 * synchronous one (one connection), each call runs whole, and one that met another connection's
 * lock runs again after a wait that leaves the event loop free (lock-wait.ts).
 */
export class AsyncSqlRepository<T = Record<string, unknown>>
implements AsyncRepository<T>, AsyncBulkRepository<T>, AsyncDistinctRepository<T> {
  /** `update` and `delete` evaluate `options.precondition` in the same atomic step as the write. */
  readonly atomicPreconditions = true
  /** Its list reads the first rows of each group in one statement (`query.perGroup`, a window). */
  readonly listsPerGroup = true
  readonly builder: SqlBuilder
  /** The table's declared columns and computed fields: what a view's filter may name (checked at registration). */
  readonly fieldNames: readonly string[]
  /** Every `<relation>.<field>` a criterion may name (`relations`): what a view's filter may name besides its fields. */
  readonly relationFields: readonly string[]
  /** The computed fields: read, never written (a view's body naming one is refused at registration). */
  readonly readOnlyFields: readonly string[]
  /** The version column (`versionColumn`): 1 on create, one more on every update. */
  readonly versionField: string | undefined
  /** The primary key's columns (`idColumn`): one, or several. */
  readonly keyFields: readonly string[]
  /**
   * What the table says of its columns (nullable, the JSON type of their values): read when the
   * repository is made over a synchronous runner, and by `describeColumns()` over a pool, which the
   * plugin awaits before it registers the views over this repository; `undefined` while unknown,
   * or when the table did not exist yet.
   */
  columnFacts: ReadonlyMap<string, ColumnFacts> | undefined
  readonly #executor: AsyncExecutor
  readonly #dialect: Dialect
  readonly #table: string
  readonly #decoding: Readonly<Record<string, StoredKind | undefined>> | undefined

  /**
   * `runner`: made for this repository. Over a synchronous runner, `lock` says how long a call
   * waits for another connection's lock, and the runner is told to fail at once rather than wait
   * on the event loop (`SyncRunner.failFast`).
   */
  constructor (dialect: Dialect, runner: AsyncRunner | SyncRunner, options: SqlTableOptions<NoInfer<T>>,
    { lockTimeout = LOCK_TIMEOUT }: SqliteLockOptions = {}) {
    // Checked first: a refused option leaves the connection as it was.
    if (isSync(runner)) checkedLockTimeout(lockTimeout, `AsyncSqlRepository of ${JSON.stringify(options.table)}`)
    this.builder = new SqlBuilder(dialect, options)
    this.fieldNames = this.builder.fieldNames
    this.relationFields = this.builder.relations.fieldNames
    this.readOnlyFields = [...this.builder.computed.keys()]
    this.versionField = this.builder.versionColumn
    this.keyFields = this.builder.key.columns
    this.#dialect = dialect
    this.#table = options.table
    this.#decoding = options.decode
    const decode = rowDecoder(options.decode)
    if (isSync(runner)) {
      const connection = new SyncConnection(runner, dialect, decode, new.target.name)
      const described = columnFacts(connection.describe(options.table), dialect, this.builder.computed)
      this.columnFacts = decodedFacts(described, options.decode)
      runner.failFast?.()
      this.#executor = new LockWaits(connection, lockTimeout)
    } else {
      this.#executor = new PoolExecutor(runner, dialect, decode)
    }
  }

  /**
   * Reads `columnFacts` from the database (`Dialect.columnsOf`); nothing when the table does not
   * exist yet. Over a synchronous runner they were read when the repository was made, and stay.
   */
  async describeColumns (): Promise<void> {
    if (this.#executor.describe === undefined) return
    const rows = await this.#executor.describe(this.#dialect.columnsOf(this.#table))
    this.columnFacts = decodedFacts(columnFacts(rows, this.#dialect, this.builder.computed), this.#decoding)
  }

  /**
   * Runs `work` in one transaction of this repository's database (a savepoint inside an open one):
   * every call `work` makes on an async repository over the same database (the same pool, the same
   * connection), awaited or not, runs in it, one at a time; all of it commits when `work` returns,
   * or, when it throws, rolls back, and the error propagates.
   */
  transaction<R> (work: () => Promise<R> | R): Promise<R> {
    return this.#executor.transaction(work)
  }

  create (values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    return this.#executor.run(() => operations.create(this.builder, values, options)) as Promise<T | null>
  }

  /** A detail read: one statement run alone where it may (`AsyncExecutor.one`), else as an operation. */
  get (criteria: Criteria, options?: RepositoryOptions): Promise<T | null> {
    let statement: Statement
    try {
      statement = this.builder.selectOne(criteria, options)
    } catch (error) {
      // A statement the builder refuses rejects, never throws, as every call here.
      return Promise.reject(error)
    }
    const read = this.#executor.one(statement) ??
      this.#executor.run(() => operations.get(this.builder, criteria, options))
    return read as Promise<T | null>
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, options?: RepositoryOptions): Promise<T[]> {
    return this.#executor.run(() => operations.list(this.builder, criteria, query, options)) as Promise<T[]>
  }

  /** A page and its total from one snapshot (one read transaction). */
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Promise<{ items: T[], total: number }> {
    return this.#executor.run(
      () => operations.listAndCount(this.builder, criteria, query, countQuery, options)
    ) as Promise<{ items: T[], total: number }>
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, options?: RepositoryOptions): Promise<number> {
    return this.#executor.run(() => operations.count(this.builder, criteria, query, options))
  }

  /** Each non-null value of one field among the rows the criteria select, once, in its order (`AsyncDistinctRepository`). */
  distinct<K extends FieldOf<T>> (
    field: K, criteria: Criteria = {}, query: DistinctQuery = {}, options?: RepositoryOptions
  ): Promise<Array<DistinctValue<T, K>>> {
    const values = this.#executor.run(() => operations.distinct(this.builder, field, criteria, query, options))
    // The field's values, decoded as its rows' are: what `DistinctValue` names.
    return values as Promise<Array<DistinctValue<T, K>>>
  }

  update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    let alone: Promise<Record<string, unknown> | null> | undefined
    let precondition
    try {
      precondition = preconditionOf(options)
      // A table's row changed with nothing to check first, and returned by the write itself, is one statement.
      if (precondition === undefined && !this.builder.readsBack && Object.keys(values).length > 0) {
        alone = this.#executor.one(this.builder.update(criteria, values, true))
      }
    } catch (error) {
      return Promise.reject(error)
    }
    return (alone ?? this.#executor.run(
      () => operations.update(this.builder, criteria, values, precondition, options)
    )) as Promise<T | null>
  }

  delete (criteria: Criteria, options?: RepositoryOptions): Promise<boolean> {
    return this.#executor.run(() => operations.delete(this.builder, criteria, preconditionOf(options), options))
  }

  /** Inserts every item in one transaction (a savepoint inside an open one), or none. */
  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<T[]> {
    return this.#executor.createMany(this.builder, items, options) as Promise<T[]>
  }

  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): Promise<T[]> {
    return this.#executor.run(() => operations.updateMany(this.builder, values, kwargs, args)) as Promise<T[]>
  }

  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<void> {
    return this.#executor.run(() => operations.bulkUpdate(this.builder, items, preconditionOf(options), options))
  }

  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): Promise<void> {
    return this.#executor.run(() => operations.deleteMany(this.builder, kwargs, args))
  }
}
