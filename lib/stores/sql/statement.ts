// What a SQL repository's operations are made of: statements, their results, and the options of a table.

/** Which SQL the builder writes: placeholders, LIKE semantics and error codes differ. */
export type Dialect = 'sqlite' | 'postgres'

/** One statement: parameterised SQL, never values spliced into the text. */
export interface Statement { sql: string, params: unknown[], returns: 'rows' | 'count' }

/** What a statement gives back: the rows it returned, and how many rows it changed. */
export interface StatementResult { rows: Array<Record<string, unknown>>, changes: number }

/** Options of a SQL table repository. */
export interface SqlTableOptions {
  /** The table name (letters, digits, underscores). */
  table: string
  /** Every column the repository may read, write, filter or sort by. */
  columns: string[]
  /** The primary key column (default `id`). */
  idColumn?: string
  /** A column set to the current time (ISO 8601) by every create and update, such as `updated_at`. */
  touchColumn?: string
  /** Keys of `updateMany` / `deleteMany` keyword objects that are options, not criteria. */
  optionKeys?: string[]
  /** Columns that scope rows to an owner: a `bulkUpdate` item only updates a row whose scope columns equal its own. */
  scopeFields?: string[]
}

/** A positional criterion from `resolveFilter`: a SQL fragment with its own parameters (`?` placeholders). */
export interface SqlFragment { sql: string, params: unknown[] }

/** A generator of statements: one implementation of an operation, run sync or async. */
export type Operation<T> = Generator<Statement | 'begin' | 'commit' | 'rollback', T, StatementResult>
