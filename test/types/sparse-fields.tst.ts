import { describe, expect, test } from 'tstyche'
import { mix } from '../../lib/index.js'
import {
  AsyncGenericViewSet, GenericListAPIView, GenericViewSet, MemoryRepository, SparseFieldsMixin, asyncRepository,
  type FieldSet, type ListQuery
} from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'
import type { SqliteRepository } from '../../lib/stores/sql/index.js'
import type { Static } from '@sinclair/typebox'
import { IdParams, Item } from './schemas.js'

// SparseFieldsMixin (docs/sparse-fields.md): mixed into the generic views, with ConditionalMixin
// before it; a view reads the request's field set as `this.fieldSet`; a repository reads it in
// `ListQuery.fields`.

type ItemData = Static<typeof Item>
declare const sqlite: SqliteRepository<ItemData>
const memory = new MemoryRepository<ItemData>({ rows: [] })

describe('SparseFieldsMixin', () => {
  test('mixes into the generic views of both families, after ConditionalMixin', () => {
    class Items extends mix(ConditionalMixin, SparseFieldsMixin, GenericViewSet).with({
      responseSchema: Item, detailParams: IdParams, conditional: { etag: true }, repository: sqlite
    }) {
      fields (): readonly string[] | undefined { return this.fieldSet?.names }
    }
    expect(new Items(null as never, null as never).fieldSet).type.toBe<FieldSet | undefined>()
    const asyncItems = { responseSchema: Item, repository: asyncRepository(memory) }
    expect(mix(SparseFieldsMixin, AsyncGenericViewSet).with).type.toBeCallableWith(asyncItems)
    const items = { responseSchema: Item, repository: memory }
    expect(mix(SparseFieldsMixin, GenericListAPIView).with).type.toBeCallableWith(items)
  })

  test('a field set names its fields and its tag, read-only', () => {
    expect<FieldSet['names']>().type.toBe<readonly string[]>()
    expect<FieldSet['tag']>().type.toBe<string>()
    expect<ListQuery['fields']>().type.toBe<readonly string[] | undefined>()
  })
  test('expand names a view, one pair of fields and an optional bound', () => {
    const Related = mix(SparseFieldsMixin, GenericViewSet).with({ responseSchema: Item, repository: memory })
    const Items = mix(SparseFieldsMixin, GenericViewSet)
    const base = { responseSchema: Item, repository: memory }
    expect(Items.with).type.toBeCallableWith({ ...base, expand: { other: { view: Related, on: { id: 'id' } } } })
    expect(Items.with).type.toBeCallableWith({ ...base, expand: { others: { view: Related, on: { id: 'id' }, many: 5 } } })
    expect(Items.with).type.not.toBeCallableWith({ ...base, expand: { other: { view: 3, on: { id: 'id' } } } })
    expect(Items.with).type.not.toBeCallableWith({ ...base, expand: { other: { view: Related, on: { id: 3 } } } })
    expect(Items.with).type.not.toBeCallableWith({ ...base, expand: { other: { view: Related, on: { id: 'id' }, many: '5' } } })
  })
})
