// Distinct values, typed: `distinct` takes a field of the rows and answers that field's values, nulls
// left out, sync or async as its store answers; the CRUD protocol does not require it.
import { describe, expect, test } from 'tstyche'
import { AsyncGenericListAPIView, MemoryRepository, asyncRepository, type AsyncRepository, type Repository } from '../../lib/generics.js'
import type { AsyncDistinctRepository, DistinctRepository, DistinctValue } from '../../lib/types.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type PgPool, type SqliteDatabase } from '../../lib/stores/sql/index.js'
import { distinctOf } from '../../lib/stores/repository.js'
import { Type } from '@sinclair/typebox'
import { Get } from '../../lib/index.js'
import { Item } from './schemas.js'

interface TagRow { id: number, tag: string | null, featured: boolean }
declare const db: SqliteDatabase
declare const pool: PgPool
declare const sync: Repository<TagRow>
declare const async: AsyncRepository<TagRow>
const table = { table: 'article_tags', columns: ['id', 'tag', 'featured'] } as const

describe('distinct', () => {
  test('answers the values of the field it is given, never null', () => {
    const memory = new MemoryRepository<TagRow>()
    expect(memory.distinct('tag')).type.toBe<string[]>()
    expect(memory.distinct('id', { tag: 'sql' }, { descending: true, limit: 5 })).type.toBe<number[]>()
    expect(new SqliteRepository<TagRow>(db, table).distinct('featured')).type.toBe<boolean[]>()
    expect(new AsyncSqliteRepository<TagRow>(db, table).distinct('tag')).type.toBe<Promise<string[]>>()
    expect(new PostgresRepository<TagRow>(pool, table).distinct('id')).type.toBe<Promise<number[]>>()
    expect<DistinctValue<TagRow, 'tag'>>().type.toBe<string>()
  })

  test('takes only a field of typed rows, any name of untyped ones', () => {
    const memory = new MemoryRepository<TagRow>()
    expect(memory.distinct).type.toBeCallableWith('tag')
    expect(memory.distinct).type.not.toBeCallableWith('colour')
    expect(memory.distinct).type.not.toBeCallableWith('tag', {}, { limit: '5' })
    expect(memory.distinct).type.not.toBeCallableWith('tag', {}, { orderBy: [] })
    expect(new MemoryRepository().distinct('anything')).type.toBe<unknown[]>()
    expect(new SqliteRepository(db, table).distinct('anything')).type.toBe<unknown[]>()
  })

  test('comes through asyncRepository, typed per field', () => {
    const wrapped = asyncRepository<TagRow, MemoryRepository<TagRow>>(new MemoryRepository<TagRow>())
    expect(wrapped.distinct('tag')).type.toBe<Promise<string[]>>()
    expect(wrapped.distinct('id')).type.toBe<Promise<number[]>>()
    expect(wrapped).type.toBeAssignableTo<AsyncDistinctRepository<TagRow>>()
  })

  test('is an optional protocol: Repository does not require it, each store has it', () => {
    expect<Repository<TagRow>>().type.not.toHaveProperty('distinct')
    expect<AsyncRepository<TagRow>>().type.not.toHaveProperty('distinct')
    expect(new MemoryRepository<TagRow>()).type.toBeAssignableTo<DistinctRepository<TagRow>>()
    expect(new SqliteRepository<TagRow>(db, table)).type.toBeAssignableTo<DistinctRepository<TagRow>>()
    expect(new AsyncSqliteRepository<TagRow>(db, table)).type.toBeAssignableTo<AsyncDistinctRepository<TagRow>>()
    expect(new AsyncSqliteRepository<TagRow>(db, table)).type.not.toBeAssignableTo<DistinctRepository<TagRow>>()
  })

  test('distinctOf types a view\'s repository by its rows, in the view\'s family', () => {
    expect(distinctOf(sync)).type.toBe<DistinctRepository<TagRow>>()
    expect(distinctOf(async)).type.toBe<AsyncDistinctRepository<TagRow>>()
    expect(distinctOf(async).distinct('tag')).type.toBe<Promise<string[]>>()
    expect(distinctOf).type.not.toBeCallableWith('tags')
    const Items = AsyncGenericListAPIView.with({ responseSchema: Item }, {})
    type View = InstanceType<typeof Items>
    expect(distinctOf({} as View['repository']).distinct('name')).type.toBe<Promise<string[]>>()
    expect(distinctOf({} as View['repository']).distinct).type.not.toBeCallableWith('title')
  })

  test('a view typed by its store sends distinct values from a route of its own (docs/repositories.md)', () => {
    const Tag = Type.Object({
      id: Type.Integer(), tag: Type.Union([Type.String(), Type.Null()]), featured: Type.Boolean()
    })
    const tags = new AsyncSqliteRepository<TagRow>(db, table)
    const TagList = Type.Object({ tags: Type.Array(Type.String()) })
    const IdList = Type.Object({ tags: Type.Array(Type.Integer()) })
    class Tags extends AsyncGenericListAPIView.with({ responseSchema: Tag, repository: tags }) {
      override get repository () { return tags }

      @(expect(Get('/tags', { responseSchema: TagList })).type.toBeApplicable)
      async allTags () {
        return { tags: await this.repository.distinct('tag', this.getKwargs('list')) }
      }

      // The tags are strings: a route documenting integers does not fit the handler.
      @(expect(Get('/ids', { responseSchema: IdList })).type.not.toBeApplicable)
      async wrong () {
        return { tags: await this.repository.distinct('tag') }
      }
    }
    expect(new Tags({} as never, {} as never).allTags()).type.toBe<Promise<{ tags: string[] }>>()
  })
})
