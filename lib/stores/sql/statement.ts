// The SQL stores' types, below the builder: statements, their results, transaction steps, and a table's options.
// What a SQL repository's operations are made of, the types below the builder: statements, their
// results, the steps of a transaction, and the options of a table.
import type { FieldOf } from '../repository.js'
import type { SqlExpression } from './expression.js'
import type { StoredKind } from './decode.js'

/**
 * One statement: parameterised SQL, never values spliced into the text. `returns` says what the
 * driver is asked for: the rows, at most one row (`'row'`: a driver may stop stepping after it, as a
 * hand-written `.get()` does), or the count of rows changed.
 */
export interface Statement { sql: string, params: unknown[], returns: 'rows' | 'row' | 'count' }

/**
 * What a statement gives back: the rows it returned, how many rows it changed (or, for an UPDATE,
 * matched), and, where the dialect returns no rows from a write (`Dialect.returning`), the key the
 * database generated for the row an INSERT wrote (MySQL's `insertId`), if the runner knows it.
 */
export interface StatementResult { rows: Array<Record<string, unknown>>, changes: number, insertId?: unknown }

/** A column of rows of type `T`: a field of the row (`FieldOf`), as the SQL options name it. */
export type ColumnOf<T> = FieldOf<T>

/**
 * Options of a SQL table repository over rows of type `T`. Written inline in the constructor
 * call (or with `satisfies SqlTableOptions<Row>`), the column names are checked against `T`.
 */
export interface SqlTableOptions<T = Record<string, unknown>> {
  /** The table name (letters, digits, underscores). */
  table: string
  /** Every column the repository may read, write, filter or sort by. */
  columns: ReadonlyArray<ColumnOf<T>>
  /**
   * The primary key column (default `id`), or its columns, for a key of several (a link table's
   * `['article_id', 'user_id']`): every column is then named wherever the key is.
   */
  idColumn?: ColumnOf<T> | ReadonlyArray<ColumnOf<T>>
  /** A column set to the current time (ISO 8601) by every create and update, such as `updated_at`. */
  touchColumn?: ColumnOf<T>
  /**
   * An integer column holding the row's version: every create sets it to 1 and every update to one
   * more (`"version" = "version" + 1`, whatever the values say). A conditional view's
   * `versionField` builds its ETags from it and compares it in the `UPDATE` itself (docs/conditional.md).
   */
  versionColumn?: ColumnOf<T>
  /** Keys of `updateMany` / `deleteMany` keyword objects that are options, not criteria. */
  optionKeys?: readonly string[]
  /** Columns that scope rows to an owner: a `bulkUpdate` item only updates a row whose scope columns equal its own. */
  scopeFields?: ReadonlyArray<ColumnOf<T>>
  /**
   * Trusted SQL appended to the table in every read's `FROM` (`'JOIN members m ON m.id = loans.member_id'`),
   * text or `sql` expressions whose values are bound. Join rows that exist once per row of the table
   * (a many-to-one join), or each row is read once per match.
   */
  joins?: string | SqlExpression | ReadonlyArray<string | SqlExpression>
  /**
   * Read-only fields: SQL expressions by field name (trusted text, or `sql` expressions whose
   * values are bound, `option(name)` from each call's options). Reads select them
   * (`(<expression>) AS "<name>"`), filter, order, search and page by them; writes refuse them.
   */
  computed?: { readonly [K in ColumnOf<T>]?: string | SqlExpression }
  /**
   * Fields whose stored values are not in the JSON type the API sends: `'boolean'` for SQLite's
   * 0 and 1, `'json'` for JSON text (`json_group_array`). Every row the repository returns has
   * them decoded; values already of the type are left as they are (sql/decode.ts).
   */
  decode?: { readonly [K in ColumnOf<T>]?: StoredKind }
  /**
   * Tables whose rows point at this one's, by name, for criteria of the form
   * `<relation>.<field>`: "a related row exists" (docs/filters.md, "Relation filters").
   */
  relations?: Readonly<Record<string, SqlRelation>>
}

/**
 * A table whose rows point at this repository's rows (docs/filters.md, "Relation filters"): an
 * article's tags in `article_tags`, its favourites in `favorites`. A criterion
 * `<relation>.<field>` (`tags.tag`, `tags.tag__in`) selects the rows with at least one related
 * row whose field matches, as `EXISTS (SELECT 1 FROM <table> WHERE <on> AND <field matches>)`:
 * a row is read once however many related rows match, so counts and pages stay exact.
 */
export interface SqlRelation {
  /** The related table. */
  readonly table: string
  /** How its rows point at this repository's: its column -> this repository's field (`{ article_id: 'id' }`). */
  readonly on: Readonly<Record<string, string>>
  /** Its columns a criterion may compare (`['tag']`). */
  readonly fields?: readonly string[]
  /**
   * A further table a related row points at, whose columns a criterion may compare: a favourite's
   * user, named by `username`. `on`: its column -> the related table's column (`{ id: 'user_id' }`).
   */
  readonly join?: RelationJoin
}

/** The further table of a relation: its name, how it is joined to the related table, and its comparable columns. */
export interface RelationJoin {
  readonly table: string
  readonly on: Readonly<Record<string, string>>
  readonly fields: readonly string[]
}

/** What the statement builder reads of a table's options, whatever its row type. */
export type TableDefinition = Readonly<Pick<SqlTableOptions<Record<string, unknown>>, 'table' | 'idColumn' | 'touchColumn' | 'versionColumn' | 'joins' | 'relations'>> & {
  readonly columns: readonly string[]
  readonly optionKeys?: readonly string[]
  readonly scopeFields?: readonly string[]
  readonly computed?: { readonly [name: string]: string | SqlExpression | undefined }
}

/** A positional criterion from `resolveFilter`: a SQL fragment with its own parameters (`?` placeholders). */
export interface SqlFragment { sql: string, params: unknown[] }

/**
 * What an operation yields besides statements: begin a write transaction, begin a read-only one
 * that sees one snapshot, end the innermost one. Inside a transaction already open on the
 * connection, a begin is a savepoint (sql/nesting.ts).
 */
export type TransactionStep = 'begin' | 'read' | 'commit' | 'rollback'

/** A generator of statements: one implementation of an operation, run sync or async. */
export type Operation<T> = Generator<Statement | TransactionStep, T, StatementResult>
