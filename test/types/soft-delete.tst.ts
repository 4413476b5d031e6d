import { Type, type Static } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { mix } from '../../lib/index.js'
import { IsAuthenticated } from '../../lib/access.js'
import { AsyncGenericViewSet, GenericViewSet, MemoryRepository, SoftDeleteMixin, asyncRepository } from '../../lib/generics.js'
import type { SqliteRepository } from '../../lib/stores/sql/index.js'
import { IdParams, Item, ItemBody } from './schemas.js'

// SoftDeleteMixin (docs/soft-delete.md): its options as one group, `softDelete.field` a field of
// the repository's rows that may hold null when their type names them, `restore` an action
// `actionPermissions` may name, and the restore seam typed by the item.

type ItemData = Static<typeof Item>
/** A stored row: the stamp the answer does not show, and a column that is never null. */
type Row = ItemData & { deleted_at: string | null, author_id: number }
declare const sqlite: SqliteRepository<Row>
const memory = new MemoryRepository<Row>({ rows: [] })
const untyped = new MemoryRepository({ rows: [] })

const SoftItems = mix(SoftDeleteMixin, GenericViewSet)
const ITEMS = { responseSchema: Item, repository: sqlite }
const AsyncSoftItems = mix(SoftDeleteMixin, AsyncGenericViewSet)

describe('softDelete.field', () => {
  test('is a field of the rows that may hold null, when their type names them', () => {
    expect(SoftItems.with).type.toBeCallableWith({ ...ITEMS, softDelete: { field: 'deleted_at' } })
    expect(SoftItems.with).type.toBeCallableWith({ responseSchema: Item, repository: memory, softDelete: { field: 'deleted_at' } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: { field: 'deleted_on' } })
    // author_id is never null: no row could ever be "not deleted".
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: { field: 'author_id' } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: { field: 3 } })
  })

  test('is any name where the rows\' type does not say (checked at registration)', () => {
    expect(SoftItems.with).type.toBeCallableWith({ responseSchema: Item, repository: untyped, softDelete: { field: 'removed_at' } })
  })
})

describe('the softDelete group', () => {
  test('takes field and deleted, a permission, and nothing else', () => {
    expect(SoftItems.with).type.toBeCallableWith({ ...ITEMS, softDelete: { deleted: IsAuthenticated } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: { deleted: 'admins' } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: { feild: 'deleted_at' } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, softDelete: true })
  })

  test('is a static of the class', () => {
    expect(SoftItems.softDelete.field).type.toBe<string | undefined>()
  })
})

describe('the restore action', () => {
  test('is an action actionPermissions and actionThrottles name', () => {
    expect(SoftItems.with).type.toBeCallableWith({ ...ITEMS, actionPermissions: { restore: [IsAuthenticated] } })
    expect(SoftItems.with).type.not.toBeCallableWith({ ...ITEMS, actionPermissions: { restor: [IsAuthenticated] } })
  })

  test('its seam and its action are typed by the item, sync or async', () => {
    SoftItems.with({ responseSchema: Item, createSchema: ItemBody, detailParams: IdParams, repository: memory }, {
      performRestore (criteria, options) {
        const restored = this.repository.update(criteria, { deleted_at: null }, options)
        expect(restored).type.toBe<ItemData | null>()
        return restored
      },
      restore (request) {
        expect(request.params).type.toBe<{ id: number }>()
        return super.restore(request)
      }
    })
    AsyncSoftItems.with({ responseSchema: Item, detailParams: IdParams, repository: asyncRepository(memory) }, {
      async performRestore (criteria, options) {
        return await this.repository.update(criteria, { deleted_at: null }, options)
      },
      deletedStamp () { return new Date().toISOString() }
    })
  })
})
