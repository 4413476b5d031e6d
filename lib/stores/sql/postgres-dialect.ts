// PostgreSQL's dialect, one Dialect object: its SQL, its SQLSTATE codes, and its column lookup (information_schema.columns).
// Numbered placeholders, ILIKE, snapshots and row locks of its own, and the `pg` driver's
// connection failures among the errors.
import type { FieldKind } from '../repository.js'
import { firstRowByKey, type Dialect, type ErrorKind } from './dialect.js'

// Connection failures, class 08 and 57P0x (shutdown), class 53 (insufficient resources: 53300 too
// many connections), 55P03 (a lock not available in time) and 57014 (a statement timeout): the
// database cannot serve now, not never.
const UNAVAILABLE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', '57P01', '57P02', '57P03', '55P03', '57014'])
/** What `pg` says when a client's connection is gone or cannot be had. */
const LOST = /Connection terminated|not queryable|Client has encountered a connection error|timeout exceeded when trying to connect/

/** PostgreSQL's SQLSTATE codes (whole codes only), and `pg`'s connection failures, by what they mean. */
function errorKind (error: unknown): ErrorKind | undefined {
  // Whatever was thrown: only a driver's error has a code, read as unknown.
  const { code } = (error ?? {}) as { code?: unknown }
  if (typeof code === 'string') {
    if (code === '23505') return 'unique'
    // Class 23, integrity constraints: CHECK, NOT NULL, foreign keys.
    if (/^23\d{3}$/.test(code)) return 'constraint'
    // Class 22: a value the column cannot hold (out of range, malformed).
    if (/^22[0-9A-Z]{3}$/.test(code)) return 'value'
    // Lost to a concurrent transaction (40001 serialization failure, 40P01 deadlock): the whole
    // transaction may be run again (PostgreSQL manual §13.6).
    if (code === '40001' || code === '40P01') return 'transient'
    if (UNAVAILABLE.has(code) || /^(08|53)[0-9A-Z]{3}$/.test(code)) return 'unavailable'
  }
  return LOST.test(String((error as Error | undefined)?.message)) ? 'unavailable' : undefined
}

/** The JSON type `pg` gives values of a PostgreSQL data type; types it returns as strings or objects (bigint, numeric, dates) are not said. */
const PG_KINDS: Record<string, FieldKind> = {
  integer: 'integer',
  smallint: 'integer',
  real: 'number',
  'double precision': 'number',
  text: 'string',
  'character varying': 'string',
  character: 'string',
  uuid: 'string',
  boolean: 'boolean'
}

/** The SQL of PostgreSQL (through `pg`). */
export const postgresDialect: Dialect = {
  name: 'postgres',
  keysFirstPages: true,
  quote: (name) => `"${name}"`,
  placeholders: (sql) => {
    let n = 0
    return sql.replace(/\?/g, () => `$${++n}`)
  },
  value: (value) => value,
  like: (expression, pattern, bind) => `${expression()} LIKE ${bind(pattern)} ESCAPE '\\'`,
  ilike: (expression, pattern, bind) => `${expression()} ILIKE ${bind(pattern)} ESCAPE '\\'`,
  contains: (text, term) => `strpos(${text()}, ${term()}) > 0`,
  order: (expression, descending) => `${expression()} ${descending ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'}`,
  beginWrite: 'BEGIN',
  beginRead: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  // Of the base table only: PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
  // NO KEY UPDATE, the lock an UPDATE that keeps the key takes: it excludes other writers of the
  // row but not the KEY SHARE lock a foreign key's insert takes on it (a loan inserted for a book),
  // which FOR UPDATE would wait for, and deadlock with, inside a transaction doing both.
  lockRows: (table) => ` FOR NO KEY UPDATE OF ${table}`,
  offsetWithoutLimit: '',
  firstRow: firstRowByKey,
  returning: (list) => ` RETURNING ${list}`,
  errorKind,
  // The tables of the search path.
  columnsOf: (table) => ({
    sql: 'SELECT column_name, is_nullable, data_type FROM information_schema.columns WHERE table_name = $1 AND table_schema = ANY (current_schemas(false))',
    params: [table],
    returns: 'rows'
  }),
  columnFact: (row) => [String(row.column_name), { nullable: row.is_nullable === 'YES', kind: PG_KINDS[String(row.data_type)] }]
}
