// Transaction steps as SQL, for the executors: a transaction at the top, a savepoint inside one.
// How the transaction steps of an operation become SQL on a connection that may already be in a
// transaction: a transaction of its own at the top, a savepoint inside one (the only nesting
// SQLite and PostgreSQL have). Savepoints are opened and closed last in, first out, so one name
// serves them all: ROLLBACK TO and RELEASE name the most recent savepoint of that name.
import type { Dialect } from './dialect.js'
import type { TransactionStep } from './statement.js'

const SAVEPOINT = 'fastify_views'

/** The SQL of each transaction step of one run: an operation, or one `transaction()` call. */
export class Nesting {
  readonly dialect: Dialect
  /** Whether the connection was already in a transaction when the run began. */
  readonly nested: boolean
  /** What each open step began, innermost last. */
  readonly #open: Array<'transaction' | 'savepoint'> = []
  /** What the last step closed. */
  #closed: 'transaction' | 'savepoint' | undefined

  constructor (dialect: Dialect, nested: boolean) {
    this.dialect = dialect
    this.nested = nested
  }

  /** The statements one step runs, in order. */
  sql (step: TransactionStep): string[] {
    if (step === 'begin' || step === 'read') {
      if (this.nested || this.#open.length > 0) {
        this.#open.push('savepoint')
        return [`SAVEPOINT ${SAVEPOINT}`]
      }
      this.#open.push('transaction')
      return [step === 'begin' ? this.dialect.beginWrite : this.dialect.beginRead]
    }
    const closing = this.#closed = this.#open.pop()
    if (closing === 'transaction') return [step === 'commit' ? 'COMMIT' : 'ROLLBACK']
    // ROLLBACK TO leaves the savepoint open, to be released.
    return step === 'commit' ? [`RELEASE SAVEPOINT ${SAVEPOINT}`] : [`ROLLBACK TO SAVEPOINT ${SAVEPOINT}`, `RELEASE SAVEPOINT ${SAVEPOINT}`]
  }

  /**
   * Tells that the statements of `step` failed. A commit the database refused (a deferred
   * constraint) left its transaction or savepoint open, for the rollback that follows. A begin that
   * fails needs nothing: it is the first step of its run, which ends there, or a savepoint opened
   * inside a savepoint, whose enclosing rollback is the same statements whichever entry it takes.
   * A rollback that fails ends its run.
   */
  failed (step: TransactionStep): void {
    if (step === 'commit') this.#open.push(this.#closed!) // a commit always closed what it found open
  }
}
