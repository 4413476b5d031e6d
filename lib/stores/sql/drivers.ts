// The drivers' shapes, below SQLite's and PostgreSQL's runners (sqlite.ts, postgres.ts): what they use of each driver, declared structurally.
// What the SQL repositories use of their drivers, declared structurally: a `better-sqlite3`
// database, a `node:sqlite` `DatabaseSync` and a `pg` pool fit these shapes, and an application
// that installs one driver compiles without the other driver's types (`skipLibCheck: false` included).

/** A prepared statement of `better-sqlite3` or `node:sqlite`, as `SqliteRepository` uses it: positional parameters only. */
export interface SqliteStatement {
  // node:sqlite counts changes as a bigint when the statement reads big integers.
  run (...params: unknown[]): { changes: number | bigint }
  all (...params: unknown[]): unknown[]
  get (...params: unknown[]): unknown
}

/** The part of a `better-sqlite3` `Database` or a `node:sqlite` `DatabaseSync` that `SqliteRepository` calls. */
export interface SqliteDatabase {
  prepare (sql: string): SqliteStatement
  exec (sql: string): unknown
  /** `better-sqlite3`: whether a transaction is open. */
  readonly inTransaction?: boolean
  /** `node:sqlite` (Node 22.16 and later): whether a transaction is open. */
  readonly isTransaction?: boolean
}

/** The result of a `pg` query, as `PostgresRepository` reads it. */
export interface PgQueryResult { rows: Array<Record<string, unknown>>, rowCount: number | null }

/** A pooled `pg` client: queries, its `error` event, and its release back to the pool. */
export interface PgPoolClient {
  query (text: string, values?: unknown[]): Promise<PgQueryResult>
  on (event: 'error', listener: (error: Error) => void): unknown
  off (event: 'error', listener: (error: Error) => void): unknown
  release (destroy?: boolean): void
}

/** The part of a `pg` `Pool` that `PostgresRepository` calls. */
export interface PgPool {
  connect (): Promise<PgPoolClient>
}
