// The SQL dialect, the interface below the builder, the operations and the error translation: what one database does differently from another.
// Each database is one object implementing it (sqlite-dialect.ts, postgres-dialect.ts): what it
// writes, answers and reports in its own way. The statement builder, the operations, the error
// translation and the column lookup ask it and never branch on a database's name, so a third
// database is one more such object (test/sql-dialect.test.ts writes a MySQL-shaped one), with a
// runner if its driver is new (runners.ts).
import type { ColumnFacts } from '../repository.js'
import type { Statement } from './statement.js'

/** Adds a bound value to a statement and returns the placeholder that stands for it. */
export type Bind = (value: unknown) => string

/**
 * What a driver's error means to the library (errors.ts answers each): `unique` a unique or
 * primary-key clash (409; `create` returns null), `constraint` another integrity constraint (409),
 * `value` a value its column cannot hold (400), `busy` another connection's lock that an attempt
 * may wait out (503; the async family over a synchronous runner runs the call again after a wait),
 * `transient` a transaction that lost to a concurrent one and was rolled back whole (503; run again
 * at once, three attempts in all), `unavailable` a database that cannot serve now (503).
 */
export type ErrorKind = 'unique' | 'constraint' | 'value' | 'busy' | 'transient' | 'unavailable'

/**
 * What a database writes in its own way. The builder writes every statement with `?`
 * placeholders and plain values; a dialect turns them into what its driver takes. A function
 * it is given (an expression, `bind`) writes its SQL and binds its values when called: call
 * each where the text puts it, in text order, so that the values stay in the placeholders' order.
 */
export interface Dialect {
  /** The database's name, as messages say it. */
  readonly name: string
  /**
   * Whether the database takes a page's keys first (docs/repositories.md, "Page queries"): a subquery
   * with `ORDER BY`, `LIMIT` and `OFFSET` inside `IN`, a key of several columns as a row value `IN` it.
   * MySQL refuses `LIMIT` there (error 1235): a dialect that does not say so keeps one statement per page.
   */
  readonly keysFirstPages?: boolean
  /** An identifier quoted, so that it is never read as a keyword (`"order"`). */
  quote (name: string): string
  /** A statement's `?` placeholders in the form the driver takes (PostgreSQL's `$1`, `$2`, ...). */
  placeholders (sql: string): string
  /** A value as the driver binds it (SQLite has no booleans or dates). */
  value (value: unknown): unknown
  /**
   * `expression` matches the LIKE pattern case-sensitively, `\` escaping a wildcard. `expression`
   * writes the matched SQL each time it is called (its own parameters bound again), in text order.
   */
  like (expression: () => string, pattern: unknown, bind: Bind): string
  /** The same, ignoring case as the database does. */
  ilike (expression: () => string, pattern: unknown, bind: Bind): string
  /** `text` contains `term` (a bound value), as a substring: not LIKE, which backtracks. Each writes its SQL when called, in text order. */
  contains (text: () => string, term: () => string): string
  /** One key of an `ORDER BY`: ascending with nulls last, descending with nulls first, as the memory store orders. */
  order (expression: () => string, descending: boolean): string
  /** Begins a transaction that writes. */
  readonly beginWrite: string
  /** Begins a read-only transaction whose statements all see one snapshot. */
  readonly beginRead: string
  /**
   * What a SELECT ends with to lock the rows it reads of `table` (quoted) for the rest of the
   * transaction; empty where beginning the transaction already locked them.
   */
  lockRows (table: string): string
  /** What comes before an `OFFSET` that has no `LIMIT` (SQLite and MySQL take OFFSET only after a LIMIT). */
  readonly offsetWithoutLimit: string
  /**
   * The `WHERE` of an UPDATE or DELETE of `table` that changes the first row by `id` (both quoted)
   * of those `where` selects (`' WHERE ...'`, or empty for every row). A key of several columns
   * comes as their list (`"article_id", "user_id"`): order by it, and compare it as a row value.
   */
  firstRow (table: string, id: string, where: string): string
  /**
   * How a write hands back its rows: what an INSERT or UPDATE ends with to return `list` (a select
   * list) of the rows it wrote (` RETURNING <list>`), or `undefined` where the database cannot. Its
   * writes then return nothing, and the operations read the rows back by key in the write's
   * transaction (an INSERT's key from its values, or the `insertId` the runner reports). Asked once,
   * when a builder is made.
   */
  returning (list: string): string | undefined
  /** What a driver's error means, or `undefined` for any other error, which is left as it is. */
  errorKind (error: unknown): ErrorKind | undefined
  /**
   * The statement listing the columns of `table` (a plain identifier), in the driver's form: one row
   * per column, none when the table does not exist. The repositories run it once.
   */
  columnsOf (table: string): Statement
  /** One row of that statement as the column's name and what the table says of it. */
  columnFact (row: Record<string, unknown>): [name: string, facts: ColumnFacts]
}

/**
 * `Dialect.firstRow` as SQLite and PostgreSQL write it: the key equal to a scalar subquery's first
 * key. A key of several columns is a row value, `("a", "b") = (SELECT "a", "b" ...)`; quoted
 * identifiers hold no comma, so one is a list.
 */
export function firstRowByKey (table: string, id: string, where: string): string {
  const key = id.includes(',') ? `(${id})` : id
  return ` WHERE ${key} = (SELECT ${id} FROM ${table}${where} ORDER BY ${id} LIMIT 1)`
}
