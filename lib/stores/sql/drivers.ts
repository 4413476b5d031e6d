// What the SQL repositories use of their drivers, declared structurally: a `better-sqlite3`
// database and a `pg` pool fit these shapes, and an application that installs one driver
// compiles without the other driver's types (`skipLibCheck: false` included).

/** A prepared statement of `better-sqlite3`, as `SqliteRepository` uses it: positional parameters only. */
export interface SqliteStatement {
  run (...params: unknown[]): { changes: number }
  all (...params: unknown[]): unknown[]
  get (...params: unknown[]): unknown
}

/** The part of a `better-sqlite3` `Database` that `SqliteRepository` calls. */
export interface SqliteDatabase {
  prepare (sql: string): SqliteStatement
  exec (sql: string): unknown
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
