// SQLite's dialect, one Dialect object: its SQL, its result codes, and its column lookup (PRAGMA table_info).
// `?` placeholders as they are, booleans and dates bound as SQLite stores them.
import type { FieldKind } from '../repository.js'
import { firstRowByKey, type Dialect, type ErrorKind } from './dialect.js'
import { likeToGlob, toSqlite } from './values.js'

/**
 * The names of the SQLite result codes this dialect acts on, by number. `node:sqlite` throws
 * `ERR_SQLITE_ERROR` with the extended result code as a number (`errcode`), where
 * `better-sqlite3` gives its name as `code`; the primary code is its low byte (SQLite's result
 * codes, "Extended Result Code List").
 */
const SQLITE_PRIMARY: Record<number, string> = { 5: 'SQLITE_BUSY', 6: 'SQLITE_LOCKED', 19: 'SQLITE_CONSTRAINT' }
const SQLITE_EXTENDED: Record<number, string> = { 1555: 'SQLITE_CONSTRAINT_PRIMARYKEY', 2067: 'SQLITE_CONSTRAINT_UNIQUE' }

/** A driver error's code: `better-sqlite3`'s as it is, `node:sqlite`'s number as SQLite's name for it. */
function codeOf (error: unknown): unknown {
  // Whatever was thrown: only a driver's error has these members, and they are read as unknown.
  const { code, errcode } = (error ?? {}) as { code?: unknown, errcode?: unknown }
  if (code !== 'ERR_SQLITE_ERROR' || typeof errcode !== 'number') return code
  return SQLITE_EXTENDED[errcode] ?? SQLITE_PRIMARY[errcode & 0xff] ?? code
}

/** SQLite's result codes by what they mean; extended codes follow their primary one (SQLITE_BUSY_SNAPSHOT, SQLITE_LOCKED_SHAREDCACHE). */
function errorKind (error: unknown): ErrorKind | undefined {
  const code = codeOf(error)
  if (typeof code !== 'string' || !code.startsWith('SQLITE_')) return undefined
  if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') return 'unique'
  // CHECK, NOT NULL, foreign keys.
  if (code.startsWith('SQLITE_CONSTRAINT')) return 'constraint'
  // Another connection holds a lock this one needs: the statement changed nothing, and can succeed once it is released.
  if (/^SQLITE_BUSY(_[A-Z]+)?$/.test(code)) return 'busy'
  if (/^SQLITE_LOCKED(_[A-Z]+)?$/.test(code)) return 'unavailable'
  return undefined
}

/** SQLite's type affinity of a declared column type (SQLite's datatype rules, §3.1), as the values the SQLite drivers return. */
function affinity (declared: string): FieldKind | undefined {
  const type = declared.toUpperCase()
  if (type.includes('INT')) return 'integer'
  if (/CHAR|CLOB|TEXT/.test(type)) return 'string'
  if (/REAL|FLOA|DOUB/.test(type)) return 'number'
  // BLOB, no type at all, and NUMERIC affinity hold values of any kind.
  return undefined
}

const quote = (name: string): string => `"${name}"`

/** The SQL of SQLite (through `better-sqlite3` or `node:sqlite`). */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  keysFirstPages: true,
  quote,
  placeholders: (sql) => sql,
  value: toSqlite,
  // SQLite's LIKE ignores ASCII case, so a case-sensitive match adds GLOB on the same pattern.
  like: (expression, pattern, bind) => `(${expression()} LIKE ${bind(pattern)} ESCAPE '\\' AND ${expression()} GLOB ${bind(likeToGlob(String(pattern)))})`,
  ilike: (expression, pattern, bind) => `${expression()} LIKE ${bind(pattern)} ESCAPE '\\'`,
  contains: (text, term) => `instr(${text()}, ${term()}) > 0`,
  order: (expression, descending) => `${expression()} ${descending ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'}`,
  // The write lock up front: a deferred transaction that reads first may find it taken when it writes.
  beginWrite: 'BEGIN IMMEDIATE',
  // Deferred: its first read fixes the snapshot the others see.
  beginRead: 'BEGIN',
  // The write transaction holds the whole file.
  lockRows: () => '',
  offsetWithoutLimit: ' LIMIT -1',
  // A scalar subquery: SQLite evaluates `IN (SELECT ...)` in an UPDATE ... RETURNING into an
  // ephemeral table, which with the default `temp_store` is a temporary file per statement
  // (measured at about 40 times the cost of the update itself).
  firstRow: firstRowByKey,
  returning: (list) => ` RETURNING ${list}`,
  errorKind,
  columnsOf: (table) => ({ sql: `PRAGMA table_info(${quote(table)})`, params: [], returns: 'rows' }),
  // The driver's row of PRAGMA table_info: name, declared type, NOT NULL and primary-key flags (numbers).
  columnFact: (row) => [String(row.name), {
    nullable: row.notnull === 0 && row.pk === 0,
    kind: affinity(String(row.type))
  }]
}
