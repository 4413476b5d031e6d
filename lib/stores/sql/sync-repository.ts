// The sync family's SQL repository, above the builder, the operations and a SyncRunner: one class for every database whose driver answers synchronously.
// `SqliteRepository` (sqlite.ts) is this class over SQLite's dialect and runner; another database
// is this class over its own (`new SqlRepository(dialect, runner, options)`), no class of its own.
import {
  preconditionOf, type BulkRepository, type ColumnFacts, type Criteria, type DistinctQuery, type DistinctRepository,
  type DistinctValue, type FieldOf, type ListQuery, type Repository, type RepositoryOptions
} from '../repository.js'
import { SqlBuilder } from './builder.js'
import { columnFacts } from './columns.js'
import { decodedFacts, rowDecoder } from './decode.js'
import type { Dialect } from './dialect.js'
import { operations } from './operations.js'
import type { SyncRunner } from './runners.js'
import type { SqlTableOptions } from './statement.js'
import { SyncConnection } from './sync-connection.js'

/**
 * A CRUD and bulk repository over one SQL table (or a query over it) through a driver that answers
 * synchronously: its methods return values, for the sync view family. Every bulk call runs in one
 * transaction; inside a transaction already open on the connection, each call is a savepoint.
 */
export class SqlRepository<T = Record<string, unknown>>
implements Repository<T>, BulkRepository<T>, DistinctRepository<T> {
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
   * What the table says of its columns (nullable, the JSON type of their values), read when the
   * repository is made; `undefined` when the table did not exist yet. A view checks its response
   * schema against it at registration.
   */
  readonly columnFacts: ReadonlyMap<string, ColumnFacts> | undefined
  readonly #connection: SyncConnection

  /** `runner`: made for this repository (it may keep what it prepares). */
  constructor (dialect: Dialect, runner: SyncRunner, options: SqlTableOptions<NoInfer<T>>) {
    this.builder = new SqlBuilder(dialect, options)
    this.fieldNames = this.builder.fieldNames
    this.relationFields = this.builder.relations.fieldNames
    this.readOnlyFields = [...this.builder.computed.keys()]
    this.versionField = this.builder.versionColumn
    this.keyFields = this.builder.key.columns
    this.#connection = new SyncConnection(runner, dialect, rowDecoder(options.decode), new.target.name)
    const described = columnFacts(this.#connection.describe(options.table), dialect, this.builder.computed)
    this.columnFacts = decodedFacts(described, options.decode)
  }

  /**
   * Runs `work` in one transaction of this repository's connection (`BEGIN IMMEDIATE` on SQLite; a
   * savepoint inside an open one): every call `work` makes, on any repository over the same
   * connection, commits with it, or, when it throws, rolls back with it, and the error
   * propagates. `work` is synchronous: the sync repositories return values.
   */
  transaction<R> (work: () => R): R {
    return this.#connection.transaction(work)
  }

  create (values: Record<string, unknown>, options?: RepositoryOptions): T | null {
    return this.#connection.run(operations.create(this.builder, values, options)) as T | null
  }

  /** One statement of one row, run alone (`SyncConnection.one`): the hot path of every retrieve. */
  get (criteria: Criteria, options?: RepositoryOptions): T | null {
    return this.#connection.one(this.builder.selectOne(criteria, options)) as T | null
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, options?: RepositoryOptions): T[] {
    return this.#connection.run(operations.list(this.builder, criteria, query, options)) as T[]
  }

  /** A page and its total from one snapshot (one read transaction). */
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): { items: T[], total: number } {
    return this.#connection.run(
      operations.listAndCount(this.builder, criteria, query, countQuery, options)
    ) as { items: T[], total: number }
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, options?: RepositoryOptions): number {
    return this.#connection.run(operations.count(this.builder, criteria, query, options))
  }

  /** Each non-null value of one field among the rows the criteria select, once, in its order (`DistinctRepository`). */
  distinct<K extends FieldOf<T>> (
    field: K, criteria: Criteria = {}, query: DistinctQuery = {}, options?: RepositoryOptions
  ): Array<DistinctValue<T, K>> {
    const values = this.#connection.run(operations.distinct(this.builder, field, criteria, query, options))
    // The field's values, decoded as its rows' are: what `DistinctValue` names.
    return values as Array<DistinctValue<T, K>>
  }

  update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): T | null {
    const precondition = preconditionOf(options)
    // The common write, a table's row changed with nothing to check first and returned by the
    // write itself, is one statement: run as `get` is, without the operation runner.
    if (precondition === undefined && !this.builder.readsBack && Object.keys(values).length > 0) {
      return this.#connection.one(this.builder.update(criteria, values, true)) as T | null
    }
    return this.#connection.run(operations.update(this.builder, criteria, values, precondition, options)) as T | null
  }

  delete (criteria: Criteria, options?: RepositoryOptions): boolean {
    return this.#connection.run(operations.delete(this.builder, criteria, preconditionOf(options), options))
  }

  /** Inserts every item in one transaction (a savepoint inside an open one), or none (`SyncConnection.createMany`). */
  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): T[] {
    return this.#connection.createMany(this.builder, items, options) as T[]
  }

  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): T[] {
    return this.#connection.run(operations.updateMany(this.builder, values, kwargs, args)) as T[]
  }

  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): void {
    this.#connection.run(operations.bulkUpdate(this.builder, items, preconditionOf(options), options))
  }

  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): void {
    this.#connection.run(operations.deleteMany(this.builder, kwargs, args))
  }
}
