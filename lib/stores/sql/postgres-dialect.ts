import type { Dialect } from './dialect.js'

// PostgreSQL's dialect: numbered placeholders, ILIKE, snapshots and row locks of its own.

/** The SQL of PostgreSQL (through `pg`). */
export const postgresDialect: Dialect = {
  name: 'postgres',
  quote: (name) => `"${name}"`,
  placeholders: (sql) => {
    let n = 0
    return sql.replace(/\?/g, () => `$${++n}`)
  },
  value: (value) => value,
  like: (expression, pattern, bind) => `${expression()} LIKE ${bind(pattern)} ESCAPE '\\'`,
  ilike: (expression, pattern, bind) => `${expression()} ILIKE ${bind(pattern)} ESCAPE '\\'`,
  contains: (text, term) => `strpos(${text()}, ${term()}) > 0`,
  beginWrite: 'BEGIN',
  beginRead: 'BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY',
  // Of the base table only: PostgreSQL refuses FOR UPDATE on the nullable side of an outer join.
  // NO KEY UPDATE, the lock an UPDATE that keeps the key takes: it excludes other writers of the
  // row but not the KEY SHARE lock a foreign key's insert takes on it (a loan inserted for a book),
  // which FOR UPDATE would wait for, and deadlock with, inside a transaction doing both.
  lockRows: (table) => ` FOR NO KEY UPDATE OF ${table}`,
  offsetWithoutLimit: ''
}
