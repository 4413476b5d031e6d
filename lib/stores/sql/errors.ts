// Database errors as HTTP errors, for every dialect: what a client can act on becomes a problem.
// Which error is which is each dialect's to say (`Dialect.errorKind`); the answer to each kind is here.
import { BadRequest, Conflict, ServiceUnavailable } from '../../http/errors.js'
import type { Dialect, ErrorKind } from './dialect.js'
import { postgresDialect } from './postgres-dialect.js'
import { sqliteDialect } from './sqlite-dialect.js'

/** The dialects the library ships, asked in turn about an error whose database is not said. */
const SHIPPED: readonly Dialect[] = [sqliteDialect, postgresDialect]

/** What an error means as `dialect` reads it, or, without one, as the first shipped dialect that knows it. */
export function errorKindOf (error: unknown, dialect?: Dialect): ErrorKind | undefined {
  if (dialect !== undefined) return dialect.errorKind(error)
  for (const shipped of SHIPPED) {
    const kind = shipped.errorKind(error)
    if (kind !== undefined) return kind
  }
  return undefined
}

/**
 * Another connection holds a lock this one needs (SQLite's `SQLITE_BUSY` and its extended codes):
 * the statement changed nothing, and once the lock is released it can succeed.
 */
export function isBusy (error: unknown, dialect?: Dialect): boolean {
  return errorKindOf(error, dialect) === 'busy'
}

/**
 * Database errors the client can act on become problems: a unique clash or another constraint
 * 409, a value its column cannot hold 400, a database that cannot serve now 503 (`Retry-After: 1`);
 * anything else is returned as it is. `dialect`: the database the error came from; without it,
 * the codes of every dialect the library ships are read.
 */
export function translateError (error: unknown, dialect?: Dialect): unknown {
  switch (errorKindOf(error, dialect)) {
    case 'unique': return new Conflict('A row with the same unique value already exists.', { cause: error })
    case 'constraint': return new Conflict('The database refused the change: a constraint failed.', { cause: error })
    case 'value': return new BadRequest('A value does not fit its column.', { cause: error })
    case 'busy':
    case 'transient':
    case 'unavailable':
      return new ServiceUnavailable('The database is unavailable; try again shortly.', { cause: error, headers: { 'retry-after': 1 } })
    default: return error
  }
}
