import { BadRequest, Conflict, ServiceUnavailable } from '../../http/errors.js'

// How database errors reach the client: what a client can act on becomes a problem.

const UNIQUE = new Set(['SQLITE_CONSTRAINT_UNIQUE', 'SQLITE_CONSTRAINT_PRIMARYKEY', '23505'])
/** Other integrity constraints: CHECK, NOT NULL, foreign keys (SQLite's codes, PostgreSQL's class 23). */
const CONSTRAINT = /^(SQLITE_CONSTRAINT|23\d{3}$)/
// Connection failures, PostgreSQL's class 08 and 57P0x (shutdown), class 53 (insufficient
// resources: 53300 too many connections), 55P03 (a lock not available in time) and 57014 (a
// statement timeout), and SQLite's locked database with its extended codes (SQLITE_BUSY_SNAPSHOT,
// SQLITE_LOCKED_SHAREDCACHE, ...): the database cannot serve now, not never.
const UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '55P03', '57014'])
const UNAVAILABLE_CLASS = /^((08|53)[0-9A-Z]{3}|SQLITE_(BUSY|LOCKED)(_[A-Z]+)?)$/

/**
 * The names of the SQLite result codes this module acts on, by number. `node:sqlite` throws
 * `ERR_SQLITE_ERROR` with the extended result code as a number (`errcode`), where
 * `better-sqlite3` gives its name as `code`; the primary code is its low byte (SQLite's result
 * codes, "Extended Result Code List").
 */
const SQLITE_PRIMARY: Record<number, string> = { 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 19: 'SQLITE_CONSTRAINT' }
const SQLITE_EXTENDED: Record<number, string> = { 1555: 'SQLITE_CONSTRAINT_PRIMARYKEY', 2067: 'SQLITE_CONSTRAINT_UNIQUE' }

/** A driver error's code: `better-sqlite3`'s and `pg`'s as they are, `node:sqlite`'s number as SQLite's name for it. */
function codeOf (error: unknown): unknown {
  // Whatever was thrown: only a driver's error has these members, and they are read as unknown.
  const { code, errcode } = (error ?? {}) as { code?: unknown, errcode?: unknown }
  if (code !== 'ERR_SQLITE_ERROR' || typeof errcode !== 'number') return code
  return SQLITE_EXTENDED[errcode] ?? SQLITE_PRIMARY[errcode & 0xff] ?? code
}

/**
 * PostgreSQL's answers that the transaction lost to a concurrent one (40001 serialization
 * failure, 40P01 deadlock): the whole transaction may be run again (PostgreSQL manual §13.6).
 */
export function isTransient (error: unknown): boolean {
  const code = codeOf(error)
  return code === '40001' || code === '40P01'
}

/**
 * SQLite's answer that another connection holds a lock this one needs (`SQLITE_BUSY` and its
 * extended codes): the statement changed nothing, and once the lock is released it can succeed.
 */
export function isBusy (error: unknown): boolean {
  const code = codeOf(error)
  return typeof code === 'string' && /^SQLITE_BUSY(_[A-Z]+)?$/.test(code)
}

/** Database errors the client can act on become problems: a unique clash 409, an unreachable database 503. */
export function translateError (error: unknown): unknown {
  const code = codeOf(error)
  if (typeof code === 'string' && UNIQUE.has(code)) return new Conflict('A row with the same unique value already exists.', { cause: error })
  if (typeof code === 'string' && CONSTRAINT.test(code)) return new Conflict('The database refused the change: a constraint failed.', { cause: error })
  // PostgreSQL's class 22: a value the column cannot hold (out of range, malformed).
  if (typeof code === 'string' && /^22[0-9A-Z]{3}$/.test(code)) return new BadRequest('A value does not fit its column.', { cause: error })
  if ((typeof code === 'string' && (UNAVAILABLE.has(code) || UNAVAILABLE_CLASS.test(code) || isTransient(error))) || /Connection terminated|not queryable|Client has encountered a connection error|timeout exceeded when trying to connect/.test(String((error as Error)?.message))) {
    return new ServiceUnavailable('The database is unavailable; try again shortly.', { cause: error, headers: { 'retry-after': 1 } })
  }
  return error
}
