import { setTimeout as sleep } from 'node:timers/promises'
import { ConfigurationError } from '../../core/configuration-error.js'
import { ServiceUnavailable } from '../../http/errors.js'
import type { AsyncBulkRepository, AsyncRepository, ColumnFacts, Criteria, ListQuery, RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { SqliteDatabase } from './drivers.js'
import { isBusy } from './errors.js'
import { openScope, runInScope, scopeOf } from './scope.js'
import { SqliteRepository } from './sqlite.js'
import { begin, end } from './sqlite-transaction.js'
import type { SqlTableOptions } from './statement.js'

// The SQLite repository of the async view family: each call runs whole on the synchronous
// repository, and a call that met another connection's lock runs again after a wait that
// leaves the event loop free, until a time budget is spent.

/** How long a call waits in all for another connection's lock, unless told otherwise (ms). */
const LOCK_TIMEOUT = 5000
/** The first wait between two attempts, doubled after each one up to the longest (ms). */
const FIRST_WAIT = 2
const LONGEST_WAIT = 50

/**
 * The transaction an asynchronous `transaction()` holds open on a connection, settled when it ends.
 * Every request of the process shares the connection, so a call from outside that transaction
 * waits for it rather than run inside it.
 */
const openTransactions = new WeakMap<SqliteDatabase, Promise<void>>()

/** How an `AsyncSqliteRepository` waits for another connection's lock. */
export interface SqliteLockOptions {
  /**
   * How long one call waits in all for a lock another connection holds, in milliseconds, before
   * it fails with the 503 problem (`Retry-After: 1`). Default 5000; 0 gives up at the first busy answer.
   */
  lockTimeout?: number | undefined
}

/**
 * A CRUD and bulk repository over one SQLite table through `better-sqlite3` or `node:sqlite`, for the async view
 * family: the SQL of `SqliteRepository`, and lock waits that do not block the event loop.
 *
 * Every operation is atomic (one statement, or a transaction that rolls back on any error), so
 * one that failed with `SQLITE_BUSY` changed nothing and can run again whole, reading the row
 * and judging a precondition afresh. The wait happens only between attempts: every request of
 * the process shares the one connection, so yielding to the event loop inside an open
 * transaction would let another request's statements run in it. A `transaction(work)` that
 * awaits does yield with its transaction open; the process's other calls wait for it to end.
 */
export class AsyncSqliteRepository<T = Record<string, unknown>> implements AsyncRepository<T>, AsyncBulkRepository<T> {
  /** `update` and `delete` evaluate `options.precondition` in the same atomic step as the write. */
  readonly atomicPreconditions = true
  readonly builder: SqlBuilder
  /** The table's declared columns and computed fields: what a view's filter may name (checked at registration). */
  readonly fieldNames: readonly string[]
  /** The computed fields: read, never written (a view's body naming one is refused at registration). */
  readonly readOnlyFields: readonly string[]
  /** The version column (`versionColumn`): 1 on create, one more on every update. */
  readonly versionField: string | undefined
  /** What the table says of its columns, read when the repository is made (`SqliteRepository.columnFacts`). */
  readonly columnFacts: ReadonlyMap<string, ColumnFacts> | undefined
  /** How long a call waits in all for another connection's lock (ms). */
  readonly lockTimeout: number
  readonly #sync: SqliteRepository<T>
  readonly #db: SqliteDatabase

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
    if (!Number.isFinite(lockTimeout) || lockTimeout < 0) {
      throw new ConfigurationError('FV_ERR_SQL_OPTION', `AsyncSqliteRepository of ${JSON.stringify(options.table)}: lockTimeout must be a finite, non-negative number of milliseconds; got ${String(lockTimeout)} (${typeof lockTimeout}). ` +
        'Give it in milliseconds: { lockTimeout: 5000 }')
    }
    // Built first: table options it refuses leave the connection as it was.
    this.#sync = new SqliteRepository<T>(db, options)
    this.#db = db
    db.exec('PRAGMA busy_timeout = 0')
    this.builder = this.#sync.builder
    this.fieldNames = this.#sync.fieldNames
    this.readOnlyFields = this.#sync.readOnlyFields
    this.versionField = this.#sync.versionField
    this.columnFacts = this.#sync.columnFacts
    this.lockTimeout = lockTimeout
  }

  /**
   * Runs a call; while it fails because the database is busy, again after a wait (doubling, with
   * jitter so that waiting requests do not retry in step), until `lockTimeout` is spent. The
   * clock starts at the first busy answer, so a call that succeeds at once reads no clock.
   */
  async #run<R> (call: () => R, deadline?: number, wait = FIRST_WAIT): Promise<R> {
    try {
      return call()
    } catch (error) {
      // The repository has translated the driver's error into the 503 it answers when the budget is spent.
      if (!(error instanceof ServiceUnavailable && isBusy(error.cause))) throw error
      const now = performance.now()
      deadline ??= now + this.lockTimeout
      if (now >= deadline) throw error
      await sleep(Math.min(deadline - now, wait / 2 + Math.random() * wait / 2))
      return await this.#run(call, deadline, Math.min(wait * 2, LONGEST_WAIT))
    }
  }

  /**
   * Runs a call: inside a transaction of this connection, on it, after the calls queued before it
   * there; outside, once no transaction of this process holds the connection (waiting, as for
   * another connection's lock, at most `lockTimeout` in all), waiting out another connection's lock.
   */
  #call<R> (call: () => R, deadline?: number): Promise<R> {
    const scope = scopeOf<SqliteDatabase>(this.#db)
    if (scope !== undefined) return scope.serially(call)
    const open = openTransactions.get(this.#db)
    if (open === undefined) return this.#run(call)
    deadline ??= performance.now() + this.lockTimeout
    return this.#waitFor(open, deadline).then(() => this.#call(call, deadline))
  }

  /** Waits for a transaction of this process to end, until `deadline`; then the 503 a lock held too long gets. */
  async #waitFor (open: Promise<void>, deadline: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined
    const late = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => reject(new ServiceUnavailable('The database is unavailable; try again shortly.', {
        cause: new Error(`A transaction of this process held the database for more than lockTimeout (${this.lockTimeout} ms)`),
        headers: { 'retry-after': 1 }
      })), Math.max(0, deadline - performance.now()))
    })
    try {
      await Promise.race([open, late])
    } finally {
      clearTimeout(timer)
    }
  }

  /**
   * Runs `work` in one transaction of this repository's connection (`BEGIN IMMEDIATE`, waited for
   * off the event loop as any call is; a savepoint inside an open one). Every call `work` makes on an
   * `AsyncSqliteRepository` over the same database object, awaited or not, runs in it, one at a
   * time; all of it commits when `work` returns, or, when it throws, rolls back, and the error
   * propagates. Meanwhile the process's other calls over the connection wait for it to end.
   */
  async transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const outer = scopeOf<SqliteDatabase>(this.#db)
    if (outer !== undefined) return await outer.serially(() => this.#transaction(work))
    const deadline = performance.now() + this.lockTimeout
    for (let open = openTransactions.get(this.#db); open !== undefined; open = openTransactions.get(this.#db)) {
      await this.#waitFor(open, deadline)
    }
    const gate: { release?: () => void } = {}
    openTransactions.set(this.#db, new Promise((resolve) => { gate.release = resolve }))
    try {
      return await this.#transaction(work)
    } finally {
      openTransactions.delete(this.#db)
      ;(gate.release as () => void)() // set by the promise's executor, which ran at once
    }
  }

  async #transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const nesting = await this.#run(() => begin(this.#db, this.builder.dialect))
    const scope = openScope(this.#db, this.#db)
    let result: R
    try {
      result = await runInScope(scope, work)
    } catch (error) {
      // Calls `work` started and did not await are part of the transaction: they end first.
      await scope.end()
      end(this.#db, nesting, false)
      throw error
    }
    await scope.end()
    end(this.#db, nesting, true)
    return result
  }

  create (values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    return this.#call(() => this.#sync.create(values, options))
  }

  get (criteria: Criteria, options?: RepositoryOptions): Promise<T | null> {
    return this.#call(() => this.#sync.get(criteria, options))
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, options?: RepositoryOptions): Promise<T[]> {
    return this.#call(() => this.#sync.list(criteria, query, options))
  }

  /** A page and its total from one snapshot (one read transaction). */
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Promise<{ items: T[], total: number }> {
    return this.#call(() => this.#sync.listAndCount(criteria, query, countQuery, options))
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, options?: RepositoryOptions): Promise<number> { return this.#call(() => this.#sync.count(criteria, query, options)) }
  update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    return this.#call(() => this.#sync.update(criteria, values, options))
  }

  delete (criteria: Criteria, options?: RepositoryOptions): Promise<boolean> {
    return this.#call(() => this.#sync.delete(criteria, options))
  }

  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<T[]> {
    return this.#call(() => this.#sync.createMany(items, options))
  }

  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): Promise<T[]> {
    return this.#call(() => this.#sync.updateMany(values, kwargs, ...args))
  }

  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): Promise<void> {
    return this.#call(() => this.#sync.bulkUpdate(items, options))
  }

  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): Promise<void> {
    return this.#call(() => this.#sync.deleteMany(kwargs, ...args))
  }
}
