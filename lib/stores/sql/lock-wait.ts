// The async family's executor over a synchronous connection (SQLite), above SyncConnection: whole calls, and waits for another connection's lock that leave the event loop free.
// Each call runs whole on the connection; one that met another connection's lock (`busy`) runs
// again after a wait, until a time budget is spent. Every operation is atomic (one statement, or a
// transaction that rolls back on any error), so an attempt that met a lock changed nothing and the
// next one reads the row and judges a precondition afresh. The wait happens only between attempts:
// every request of the process shares the one connection, so yielding to the event loop inside an
// open transaction would let another request's statements run in it. A `transaction(work)` that
// awaits does yield with its transaction open; the process's other calls wait for it to end.
import { setTimeout as sleep } from 'node:timers/promises'
import { ConfigurationError } from '../../core/configuration-error.js'
import { ServiceUnavailable } from '../../http/errors.js'
import type { RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { Nesting } from './nesting.js'
import type { AsyncExecutor } from './runners.js'
import { openScope, runInScope, scopeOf } from './scope.js'
import type { Operation, Statement } from './statement.js'
import type { SyncConnection } from './sync-connection.js'

type Row = Record<string, unknown>

/** How long a call waits in all for another connection's lock, unless told otherwise (ms). */
export const LOCK_TIMEOUT = 5000
/** The first wait between two attempts, doubled after each one up to the longest (ms). */
const FIRST_WAIT = 2
const LONGEST_WAIT = 50

/**
 * The transaction an asynchronous `transaction()` holds open on a connection, settled when it ends.
 * Every request of the process shares the connection, so a call from outside that transaction
 * waits for it rather than run inside it.
 */
const openTransactions = new WeakMap<object, Promise<void>>()

/** How an async repository over a synchronous runner (`AsyncSqliteRepository`) waits for another connection's lock. */
export interface SqliteLockOptions {
  /**
   * How long one call waits in all for a lock another connection holds, in milliseconds, before
   * it fails with the 503 problem (`Retry-After: 1`). Default 5000; 0 gives up at the first busy answer.
   */
  lockTimeout?: number | undefined
}

/** `lockTimeout` checked: a finite, non-negative number of milliseconds; `owner` names the repository in the error. */
export function checkedLockTimeout (lockTimeout: number, owner: string): number {
  if (!Number.isFinite(lockTimeout) || lockTimeout < 0) {
    throw new ConfigurationError('FV_ERR_SQL_OPTION', `${owner}: lockTimeout must be a finite, non-negative number of milliseconds; got ${String(lockTimeout)} (${typeof lockTimeout}). ` +
      'Give it in milliseconds: { lockTimeout: 5000 }')
  }
  return lockTimeout
}

/** Runs an async repository's calls whole on a synchronous connection, waiting out other connections' locks. */
export class LockWaits implements AsyncExecutor {
  /** How long a call waits in all for another connection's lock (ms). */
  readonly lockTimeout: number
  readonly #sync: SyncConnection
  /** What identifies the connection: its transactions and scopes are the connection's. */
  readonly #database: object
  // The calls made most, bound once: a call passes its argument rather than a closure of its own.
  readonly #operate = <R>(start: () => Operation<R>): R => this.#sync.run(start())
  readonly #alone = (statement: Statement): Row | null => this.#sync.one(statement)
  readonly #begin = (): Nesting => this.#sync.begin()

  constructor (sync: SyncConnection, lockTimeout: number) {
    this.#sync = sync
    this.#database = sync.runner.connection
    this.lockTimeout = lockTimeout
  }

  run<R> (start: () => Operation<R>): Promise<R> {
    return this.#call(this.#operate, start)
  }

  one (statement: Statement): Promise<Row | null> {
    return this.#call(this.#alone, statement)
  }

  createMany (builder: SqlBuilder, items: Row[], options: RepositoryOptions | undefined): Promise<Row[]> {
    return this.#call(() => this.#sync.createMany(builder, items, options), undefined)
  }

  /**
   * Runs a call: inside a transaction of this connection, on it, after the calls queued before it
   * there; outside, once no transaction of this process holds the connection (waiting, as for
   * another connection's lock, at most `lockTimeout` in all), waiting out another connection's lock.
   */
  #call<A, R> (work: (arg: A) => R, arg: A, deadline?: number): Promise<R> {
    const scope = scopeOf<object>(this.#database)
    if (scope !== undefined) return scope.serially(() => work(arg))
    const open = openTransactions.get(this.#database)
    if (open === undefined) return this.#attempt(work, arg)
    deadline ??= performance.now() + this.lockTimeout
    return this.#waitFor(open, deadline).then(() => this.#call(work, arg, deadline))
  }

  /**
   * Runs a call; while it fails because the database is busy, again after a wait (doubling, with
   * jitter so that waiting requests do not retry in step), until `lockTimeout` is spent. The
   * clock starts at the first busy answer, so a call that succeeds at once reads no clock.
   */
  async #attempt<A, R> (work: (arg: A) => R, arg: A, deadline?: number, wait = FIRST_WAIT): Promise<R> {
    try {
      return work(arg)
    } catch (error) {
      // The connection has translated the driver's error into the 503 it answers when the budget is spent.
      if (!(error instanceof ServiceUnavailable && this.#sync.dialect.errorKind(error.cause) === 'busy')) throw error
      const now = performance.now()
      deadline ??= now + this.lockTimeout
      if (now >= deadline) throw error
      await sleep(Math.min(deadline - now, wait / 2 + Math.random() * wait / 2))
      return await this.#attempt(work, arg, deadline, Math.min(wait * 2, LONGEST_WAIT))
    }
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
   * Runs `work` in one transaction of the connection (its write transaction, waited for off the
   * event loop as any call is; a savepoint inside an open one). Every call `work` makes on an async
   * repository over the same connection, awaited or not, runs in it, one at a time; all of it
   * commits when `work` returns, or, when it throws, rolls back, and the error propagates.
   * Meanwhile the process's other calls over the connection wait for it to end.
   */
  async transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const outer = scopeOf<object>(this.#database)
    if (outer !== undefined) return await outer.serially(() => this.#transaction(work))
    const deadline = performance.now() + this.lockTimeout
    const database = this.#database
    for (let open = openTransactions.get(database); open !== undefined; open = openTransactions.get(database)) {
      await this.#waitFor(open, deadline)
    }
    const gate: { release?: () => void } = {}
    openTransactions.set(this.#database, new Promise((resolve) => { gate.release = resolve }))
    try {
      return await this.#transaction(work)
    } finally {
      openTransactions.delete(this.#database)
      ;(gate.release as () => void)() // set by the promise's executor, which ran at once
    }
  }

  async #transaction<R> (work: () => Promise<R> | R): Promise<R> {
    const nesting = await this.#attempt(this.#begin, undefined)
    const scope = openScope(this.#database, this.#database)
    let result: R
    try {
      result = await runInScope(scope, work)
    } catch (error) {
      // Calls `work` started and did not await are part of the transaction: they end first.
      await scope.end()
      this.#sync.end(nesting, false)
      throw error
    }
    await scope.end()
    this.#sync.end(nesting, true)
    return result
  }
}
