import type { Dialect } from './dialect.js'
import { likeToGlob, toSqlite } from './values.js'

// SQLite's dialect: `?` placeholders as they are, booleans and dates bound as SQLite stores them.

/** The SQL of SQLite (through `better-sqlite3` or `node:sqlite`). */
export const sqliteDialect: Dialect = {
  name: 'sqlite',
  quote: (name) => `"${name}"`,
  placeholders: (sql) => sql,
  value: toSqlite,
  // SQLite's LIKE ignores ASCII case, so a case-sensitive match adds GLOB on the same pattern.
  like: (expression, pattern, bind) => `(${expression()} LIKE ${bind(pattern)} ESCAPE '\\' AND ${expression()} GLOB ${bind(likeToGlob(String(pattern)))})`,
  ilike: (expression, pattern, bind) => `${expression()} LIKE ${bind(pattern)} ESCAPE '\\'`,
  contains: (text, term) => `instr(${text()}, ${term()}) > 0`,
  // The write lock up front: a deferred transaction that reads first may find it taken when it writes.
  beginWrite: 'BEGIN IMMEDIATE',
  // Deferred: its first read fixes the snapshot the others see.
  beginRead: 'BEGIN',
  // The write transaction holds the whole file.
  lockRows: () => '',
  offsetWithoutLimit: ' LIMIT -1'
}
