import { preconditionOf, type BulkRepository, type ColumnFacts, type Criteria, type ListQuery, type Repository, type RepositoryOptions } from '../repository.js'
import type { SqliteDatabase, SqliteStatement } from './drivers.js'
import { SqlBuilder } from './builder.js'
import { decodedFacts, rowDecoder, type RowDecoder } from './decode.js'
import { sqliteDialect } from './sqlite-dialect.js'
import { sqliteColumns } from './columns.js'
import { translateError } from './errors.js'
import { Nesting } from './nesting.js'
import { atomically, operations } from './operations.js'
import { runSync } from './run.js'
import { inTransaction, runStep, transactionOn } from './sqlite-transaction.js'
import type { Operation, SqlTableOptions, Statement, StatementResult, TransactionStep } from './statement.js'

/** Prepared statements kept per repository, the oldest dropped first. */
const CACHE_SIZE = 256

/**
 * A CRUD and bulk repository over one SQLite table through `better-sqlite3` or `node:sqlite`
 * (`DatabaseSync`): synchronous, for the sync view family. Every bulk call runs in one transaction.
 */
export class SqliteRepository<T = Record<string, unknown>> implements Repository<T>, BulkRepository<T> {
  /** `update` and `delete` evaluate `options.precondition` in the same atomic step as the write. */
  readonly atomicPreconditions = true
  readonly builder: SqlBuilder
  /** The table's declared columns and computed fields: what a view's filter may name (checked at registration). */
  readonly fieldNames: readonly string[]
  /** The computed fields: read, never written (a view's body naming one is refused at registration). */
  readonly readOnlyFields: readonly string[]
  /** The version column (`versionColumn`): 1 on create, one more on every update. */
  readonly versionField: string | undefined
  readonly #db: SqliteDatabase
  readonly #cache = new Map<string, SqliteStatement>()
  /** The decoding of the fields SQLite stores in another type (`decode`), if any. */
  readonly #decode: RowDecoder | undefined

  /**
   * What the table says of its columns (nullable, the JSON type of their values), read when the
   * repository is made; `undefined` when the table did not exist yet. A view checks its response
   * schema against it at registration.
   */
  readonly columnFacts: ReadonlyMap<string, ColumnFacts> | undefined

  constructor (db: SqliteDatabase, options: SqlTableOptions<NoInfer<T>>) {
    this.#db = db
    this.builder = new SqlBuilder(sqliteDialect, options)
    this.fieldNames = this.builder.fieldNames
    this.readOnlyFields = [...this.builder.computed.keys()]
    this.versionField = this.builder.versionColumn
    this.columnFacts = decodedFacts(sqliteColumns(db, options.table, this.builder.computed), options.decode)
    this.#decode = rowDecoder(options.decode)
  }

  #execute (step: Statement | TransactionStep, nesting: Nesting): StatementResult {
    if (typeof step === 'string') {
      runStep(this.#db, nesting, step)
      return { rows: [], changes: 0 }
    }
    const statement = this.#prepared(step.sql)
    if (step.returns === 'count') return { rows: [], changes: Number(statement.run(...step.params).changes) }
    // One row: `.get()`, which stops stepping after it (with a trigger on the table, stepping a
    // one-row UPDATE ... RETURNING to its end with `.all()` was measured at twice the time).
    const rows = step.returns === 'row' ? this.#row(statement, step.params) : this.#rows(statement, step.params)
    return { rows, changes: rows.length }
  }

  /** The rows a statement returns, decoded. */
  #rows (statement: SqliteStatement, params: unknown[]): Array<Record<string, unknown>> {
    const rows = statement.all(...params) as Array<Record<string, unknown>> // the driver's rows: records by column name
    if (this.#decode !== undefined) rows.forEach(this.#decode)
    return rows
  }

  /** The row a one-row statement returns (none or one), decoded. */
  #row (statement: SqliteStatement, params: unknown[]): Array<Record<string, unknown>> {
    const row = statement.get(...params) as Record<string, unknown> | undefined // the driver's row: a record by column name
    if (row === undefined) return []
    return [this.#decode === undefined ? row : this.#decode(row)]
  }

  #prepared (sql: string): SqliteStatement {
    let statement = this.#cache.get(sql)
    if (statement === undefined) {
      // The text varies with criteria and list lengths: keep the most recent statements only.
      if (this.#cache.size >= CACHE_SIZE) this.#cache.delete(this.#cache.keys().next().value!)
      this.#cache.set(sql, statement = this.#db.prepare(sql))
    }
    return statement
  }

  /**
   * Runs an operation. Inside a transaction already open on the connection it is a savepoint of
   * its own, so that a call that fails leaves the transaction as it was (and usable).
   */
  #run<R> (operation: Operation<R>): R {
    const nesting = new Nesting(this.builder.dialect, inTransaction(this.#db))
    return runSync(nesting.nested ? atomically(operation) : operation, (step) => this.#execute(step, nesting))
  }

  /**
   * Runs `work` in one transaction of this repository's connection (`BEGIN IMMEDIATE`; a
   * savepoint inside an open one): every call `work` makes, on any repository over the same
   * database object, commits with it, or, when it throws, rolls back with it, and the error
   * propagates. `work` is synchronous: the sync repositories return values.
   */
  transaction<R> (work: () => R): R {
    return transactionOn(this.#db, this.builder.dialect, work)
  }

  create (values: Record<string, unknown>, options?: RepositoryOptions): T | null {
    return this.#run(operations.create(this.builder, values, options)) as T | null
  }

  /**
   * One statement of one row, run alone: cached, read with `.get()`, without the operation runner
   * (the hot path of every retrieve and of a plain update).
   */
  #alone (step: Statement): T | null {
    try {
      return (this.#row(this.#prepared(step.sql), step.params)[0] ?? null) as T | null
    } catch (error) {
      throw translateError(error)
    }
  }

  get (criteria: Criteria, options?: RepositoryOptions): T | null {
    return this.#alone(this.builder.selectOne(criteria, options))
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, options?: RepositoryOptions): T[] {
    return this.#run(operations.list(this.builder, criteria, query, options)) as T[]
  }

  /** A page and its total from one snapshot (one read transaction). */
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): { items: T[], total: number } {
    return this.#run(
      operations.listAndCount(this.builder, criteria, query, countQuery, options)
    ) as { items: T[], total: number }
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, options?: RepositoryOptions): number { return this.#run(operations.count(this.builder, criteria, query, options)) }
  update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): T | null {
    const precondition = preconditionOf(options)
    // The common write, a table's row changed with nothing to check first, is one statement: run as
    // `get` is, without the operation runner. It needs no savepoint inside an open transaction either:
    // SQLite undoes a failed statement alone and leaves the transaction as it was.
    if (precondition === undefined && !this.builder.isQuery && Object.keys(values).length > 0) {
      return this.#alone(this.builder.update(criteria, values, true))
    }
    return this.#run(operations.update(this.builder, criteria, values, precondition, options)) as T | null
  }

  delete (criteria: Criteria, options?: RepositoryOptions): boolean {
    return this.#run(operations.delete(this.builder, criteria, preconditionOf(options), options))
  }

  /**
   * Inserts every item in one transaction (a savepoint inside an open one), or none. A table's rows
   * are inserted in a plain loop, the text of each set of columns built and prepared once: a bulk
   * create of thousands of rows costs little more than the driver's own inserts. A query's rows are
   * read back through the query (`operations.createMany`).
   */
  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): T[] {
    if (this.builder.isQuery) return this.#run(operations.createMany(this.builder, items, options)) as T[]
    try {
      return this.transaction(() => items.map((item) => {
        const step = this.builder.insert(item)
        return this.#row(this.#prepared(step.sql), step.params)[0]
      })) as T[]
    } catch (error) {
      throw translateError(error)
    }
  }

  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): T[] {
    return this.#run(operations.updateMany(this.builder, values, kwargs, args)) as T[]
  }

  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): void {
    this.#run(operations.bulkUpdate(this.builder, items, preconditionOf(options), options))
  }

  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): void {
    this.#run(operations.deleteMany(this.builder, kwargs, args))
  }
}
