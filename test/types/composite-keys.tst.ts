// Composite keys, typed: `idColumn` (SQL) and `idField` (memory) take a field of the rows or a list
// of them, each a field of the row; a misspelt one does not compile. A cursor filter's `tieBreaker`
// takes the key's fields too.
import { describe, expect, test } from 'tstyche'
import { CursorPaginationFilter, MemoryRepository } from '../../lib/generics.js'
import {
  AsyncSqliteRepository, PostgresRepository, SqlBuilder, SqliteRepository,
  type PgPool, type SqliteDatabase, type SqlTableOptions
} from '../../lib/stores/sql/index.js'

interface Favorite { article_id: number, user_id: number, note: string | null }
declare const db: SqliteDatabase
declare const pool: PgPool
const columns = ['article_id', 'user_id', 'note'] as const

describe('idColumn of the SQL repositories', () => {
  test('takes a list of the row\'s fields', () => {
    expect(new SqliteRepository<Favorite>(db, { table: 'favorites', columns, idColumn: ['article_id', 'user_id'] })).type.toBe<SqliteRepository<Favorite>>()
    expect(new AsyncSqliteRepository<Favorite>(db, { table: 'favorites', columns, idColumn: ['article_id', 'user_id'] })).type.toBe<AsyncSqliteRepository<Favorite>>()
    expect(new PostgresRepository<Favorite>(pool, { table: 'favorites', columns, idColumn: ['user_id', 'article_id'] })).type.toBe<PostgresRepository<Favorite>>()
    // Kept in a variable, the names keep their literal types with `as const` (or `satisfies SqlTableOptions<Favorite>`).
    expect({ table: 'favorites', columns, idColumn: ['article_id', 'user_id'] as const }).type.toBeAssignableTo<SqlTableOptions<Favorite>>()
  })

  test('a misspelt key column does not compile', () => {
    expect(SqliteRepository<Favorite>).type.toBeConstructableWith(db, { table: 'favorites', columns, idColumn: ['article_id', 'user_id'] })
    expect(SqliteRepository<Favorite>).type.not.toBeConstructableWith(db, { table: 'favorites', columns, idColumn: ['article_id', 'userid'] })
    expect(PostgresRepository<Favorite>).type.not.toBeConstructableWith(pool, { table: 'favorites', columns, idColumn: ['articleId', 'user_id'] })
    expect({ table: 'favorites', columns, idColumn: ['article_id', 'userid'] as const }).type.not.toBeAssignableTo<SqlTableOptions<Favorite>>()
    expect(SqliteRepository<Favorite>).type.not.toBeConstructableWith(db, { table: 'favorites', columns, idColumn: 'id' })
  })

  test('a single column keeps working, and untyped rows take any names', () => {
    expect(SqliteRepository<Favorite>).type.toBeConstructableWith(db, { table: 'favorites', columns, idColumn: 'article_id' })
    expect(new SqliteRepository(db, { table: 'favorites', columns: ['a', 'b'], idColumn: ['a', 'b'] })).type.toBe<SqliteRepository<Record<string, unknown>>>()
    expect(new SqlBuilder('sqlite', { table: 'favorites', columns: ['a', 'b'], idColumn: ['a', 'b'] }).key.columns).type.toBe<readonly string[]>()
  })
})

describe('idField of MemoryRepository', () => {
  test('takes a list of the row\'s fields, and a misspelt one does not compile', () => {
    expect(new MemoryRepository<Favorite>({ idField: ['article_id', 'user_id'] }).keyFields).type.toBe<readonly string[]>()
    expect(MemoryRepository<Favorite>).type.toBeConstructableWith({ idField: ['article_id', 'user_id'] })
    expect(MemoryRepository<Favorite>).type.not.toBeConstructableWith({ idField: ['article_id', 'userid'] })
    expect(MemoryRepository<Favorite>).type.toBeConstructableWith({ idField: 'article_id' })
    expect(MemoryRepository<Favorite>).type.not.toBeConstructableWith({ idField: 'id' })
  })
})

describe('tieBreaker of a cursor filter', () => {
  test('takes a field or a list of fields', () => {
    expect(CursorPaginationFilter.with).type.toBeCallableWith({ tieBreaker: ['article_id', 'user_id'] })
    expect(CursorPaginationFilter.with).type.toBeCallableWith({ tieBreaker: 'id' })
    expect(CursorPaginationFilter.with).type.not.toBeCallableWith({ tieBreaker: 1 })
  })
})
