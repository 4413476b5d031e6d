// Repositories over queries, typed: `computed` names fields of the row as `columns` do, `sql`
// makes expressions of text and values, `transaction` returns what its work returns.
import { describe, expect, test } from 'tstyche'
import {
  AsyncSqliteRepository, PostgresRepository, SqliteRepository, option, sql, type PgPool, type SqlExpression,
  type SqliteDatabase
} from '../../lib/stores/sql/index.js'

interface Article { id: number, title: string, author_name: string, favorited: boolean }
declare const db: SqliteDatabase
declare const pool: PgPool

describe('computed fields', () => {
  test('are keys of the row, as columns are', () => {
    expect(SqliteRepository<Article>).type.toBeConstructableWith(db, {
      table: 'articles',
      columns: ['id', 'title'],
      joins: 'JOIN members m ON m.id = articles.author_id',
      computed: { author_name: 'm.name', favorited: sql`EXISTS (SELECT 1 FROM favorites f WHERE f.user_id = ${option('reader')})` }
    })
    expect(SqliteRepository<Article>).type.not.toBeConstructableWith(db, { table: 'articles', columns: ['id'], computed: { author: 'm.name' } })
    expect(SqliteRepository<Article>).type.not.toBeConstructableWith(db, { table: 'articles', columns: ['id'], computed: { author_name: 42 } })
    expect(SqliteRepository).type.toBeConstructableWith(db, { table: 'articles', columns: ['id'], computed: { anything: 'm.name' } })
  })

  test('sql makes an expression; joins take text, expressions, or a list of them', () => {
    expect(sql`a = ${1}`).type.toBe<SqlExpression>()
    expect(PostgresRepository<Article>).type.toBeConstructableWith(pool, { table: 'articles', columns: ['id'], joins: ['JOIN a ON true', sql`JOIN b ON b.k = ${option('k')}`] })
  })
})

describe('transactions', () => {
  test('return what their work returns: a value from the sync repository, a promise from the async ones', () => {
    const sync = new SqliteRepository<Article>(db, { table: 'articles', columns: ['id', 'title'] })
    expect(sync.transaction(() => sync.get({ id: 1 }))).type.toBe<Article | null>()
    const lite = new AsyncSqliteRepository<Article>(db, { table: 'articles', columns: ['id', 'title'] })
    expect(lite.transaction(async () => await lite.get({ id: 1 }))).type.toBe<Promise<Article | null>>()
    const pg = new PostgresRepository<Article>(pool, { table: 'articles', columns: ['id', 'title'] })
    expect(pg.transaction(async () => 42)).type.toBe<Promise<number>>()
  })
})
