// The `fastify-views/sql` entry: SQL repositories. The database drivers are optional
// peer dependencies; they are only referenced as types here, the application passes
// its own `node:sqlite` or `better-sqlite3` database, or `pg` pool.
export { SqliteRepository } from './sqlite.js'
export { AsyncSqliteRepository, type SqliteLockOptions } from './sqlite-async.js'
export { PostgresRepository } from './postgres.js'
export { SqlBuilder } from './builder.js'
export { option, sql, type SqlExpression, type SqlOption } from './expression.js'
export type { Bind, Dialect } from './dialect.js'
export { sqliteDialect } from './sqlite-dialect.js'
export { postgresDialect } from './postgres-dialect.js'
export { translateError } from './errors.js'
export { operations } from './operations.js'
export type { ColumnOf, SqlTableOptions, SqlFragment, Statement } from './statement.js'
export type { StoredKind } from './decode.js'
export type { SqliteDatabase, SqliteStatement, PgPool, PgPoolClient, PgQueryResult } from './drivers.js'
