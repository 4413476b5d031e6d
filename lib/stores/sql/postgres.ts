// PostgreSQL through `pg`, the async family's PostgreSQL: its runner over a `pg` pool, and `PostgresRepository`.
import { AsyncSqlRepository } from './async-repository.js'
import type { PgPool, PgPoolClient } from './drivers.js'
import { postgresDialect } from './postgres-dialect.js'
import type { AsyncRunner } from './runners.js'
import type { SqlTableOptions } from './statement.js'

/** PostgreSQL's runner over a `pg` pool: its clients, their queries and `error` events, and their release. */
export function pgRunner (pool: PgPool): AsyncRunner<PgPoolClient> {
  return {
    database: pool,
    connect: () => pool.connect(),
    query: (client, sql, params) => params === undefined ? client.query(sql) : client.query(sql, params),
    release: (client, destroy) => { client.release(destroy) },
    listen: (client, onError) => { client.on('error', onError) },
    unlisten: (client, onError) => { client.off('error', onError) }
  }
}

/**
 * A CRUD and bulk repository over one PostgreSQL table through a `pg` pool: asynchronous, for the
 * async view family. Each operation holds one pooled client, so a bulk call's transaction runs on
 * one connection. The async family's `AsyncSqlRepository` over PostgreSQL's dialect and runner.
 */
export class PostgresRepository<T = Record<string, unknown>> extends AsyncSqlRepository<T> {
  constructor (pool: PgPool, options: SqlTableOptions<NoInfer<T>>) {
    super(postgresDialect, pgRunner(pool), options)
  }
}
