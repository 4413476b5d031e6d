// The SQL dialect: what one database writes differently from another. Each database is one
// object implementing it (sqlite-dialect.ts, postgres-dialect.ts); the statement builder asks it
// and never branches on a database's name, so a third database is one more such file.

/** Adds a bound value to a statement and returns the placeholder that stands for it. */
export type Bind = (value: unknown) => string

/**
 * What a database writes in its own way. The builder writes every statement with `?`
 * placeholders and plain values; a dialect turns them into what its driver takes. A function
 * it is given (an expression, `bind`) writes its SQL and binds its values when called: call
 * each where the text puts it, in text order, so that the values stay in the placeholders' order.
 */
export interface Dialect {
  /** The database's name, as messages say it. */
  readonly name: string
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
  /** Begins a transaction that writes. */
  readonly beginWrite: string
  /** Begins a read-only transaction whose statements all see one snapshot. */
  readonly beginRead: string
  /**
   * What a SELECT ends with to lock the rows it reads of `table` (quoted) for the rest of the
   * transaction; empty where beginning the transaction already locked them.
   */
  lockRows (table: string): string
  /** What comes before an `OFFSET` that has no `LIMIT` (SQLite takes OFFSET only after a LIMIT). */
  readonly offsetWithoutLimit: string
}
