// The transaction an asynchronous call runs in, for the async executors (pool.ts, lock-wait.ts): scopes carried by AsyncLocalStorage.
// The transaction an asynchronous call runs in: `transaction()` opens a scope over one connection
// (a `pg` client, a SQLite database) and runs its callback in it, carried by AsyncLocalStorage,
// so every repository call the callback makes over the same database (the same pool, the same
// database object) runs on that connection, in that transaction, whichever repository it is.
import { AsyncLocalStorage } from 'node:async_hooks'
import { ConfigurationError } from '../../core/configuration-error.js'

/** An open transaction (or savepoint) of one database, as the calls inside it see it. */
export class TransactionScope<C> {
  /** What identifies the database: the `pg` pool, or the SQLite database object. */
  readonly database: object
  /** The connection the transaction holds. */
  readonly connection: C
  /** The scope this one runs in, if any (a transaction of another database, or the one a savepoint nests in). */
  readonly outer: TransactionScope<unknown> | undefined
  #tail: Promise<unknown> = Promise.resolve()
  #ended = false

  constructor (database: object, connection: C, outer: TransactionScope<unknown> | undefined) {
    this.database = database
    this.connection = connection
    this.outer = outer
  }

  /**
   * Runs `work` once every call queued before it in this scope has finished: a connection runs
   * one statement at a time, and savepoints must close in the order they opened, so calls made
   * together inside one transaction (`Promise.all`) take turns.
   */
  serially<R> (work: () => Promise<R> | R): Promise<R> {
    if (this.#ended) {
      return Promise.reject(new ConfigurationError('FV_ERR_SQL_OPTION',
        'A repository call was made in a transaction that had ended: await every call inside the transaction\'s callback'))
    }
    const run = this.#tail.then(work, work)
    this.#tail = run.then(noop, noop)
    return run
  }

  /** Waits for every call queued so far, then refuses new ones. */
  async end (): Promise<void> {
    await this.#tail
    this.#ended = true
  }
}

function noop (): void {}

const storage = new AsyncLocalStorage<TransactionScope<unknown>>()

/** The open transaction of `database` the current call runs in, if any. */
export function scopeOf<C> (database: object): TransactionScope<C> | undefined {
  for (let scope = storage.getStore(); scope !== undefined; scope = scope.outer) {
    // Its database is this one, whose scopes hold connections of type C.
    if (scope.database === database) return scope as TransactionScope<C>
  }
  return undefined
}

/** A new scope over `connection`, within the current one. */
export function openScope<C> (database: object, connection: C): TransactionScope<C> {
  return new TransactionScope(database, connection, storage.getStore())
}

/** Runs `work` in `scope`: every call it makes, awaited or not, sees the scope. */
export function runInScope<R> (scope: TransactionScope<unknown>, work: () => Promise<R> | R): Promise<R> {
  return storage.run(scope, async () => await work())
}
