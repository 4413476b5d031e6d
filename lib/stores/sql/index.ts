// The `fastify-views/sql` entry, the top of the SQL stores: the repositories of each family and database, the builder, the dialects and what a database of one's own implements.
// The database drivers are optional peer dependencies; they are only referenced as types here: the
// application passes its own `node:sqlite` or `better-sqlite3` database, or `pg` pool.
export { SqliteRepository } from './sqlite.js'
export { AsyncSqliteRepository, type SqliteLockOptions } from './sqlite-async.js'
export { PostgresRepository } from './postgres.js'
export { SqlRepository } from './sync-repository.js'
export { AsyncSqlRepository } from './async-repository.js'
export { SqlBuilder } from './builder.js'
export { option, sql, type SqlExpression, type SqlOption } from './expression.js'
export type { Bind, Dialect, ErrorKind } from './dialect.js'
export { sqliteDialect } from './sqlite-dialect.js'
export { postgresDialect } from './postgres-dialect.js'
export type { AsyncRunner, QueryResult, SyncRunner } from './runners.js'
export { translateError } from './errors.js'
export { operations } from './operations.js'
export type { ColumnOf, SqlTableOptions, SqlFragment, Statement, StatementResult } from './statement.js'
export type { StoredKind } from './decode.js'
export type { SqliteDatabase, SqliteStatement, PgPool, PgPoolClient, PgQueryResult } from './drivers.js'
