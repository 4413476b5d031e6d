import { Type, type Static } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { Action, Override, Post } from '../../lib/index.js'
import type { ViewRequest } from '../../lib/types.js'
import {
  AsyncGenericViewSet, GenericReadOnlyViewSet, GenericViewSet, MemoryRepository,
  type Criteria, type ObjectOf, type Repository, type RepositoryOptions, type UpdateValues, type WriteSeams
} from '../../lib/generics.js'
import type { AsyncSqliteRepository, SqliteRepository } from '../../lib/stores/sql/index.js'
import { IdParams, Item, ItemBody } from './schemas.js'

// Actions on one object and the typed write seams (docs/generics.md): `getObjectOr404` typed by the
// item, `envelope: true` on routes of the view's own only, `performUpdate`'s values by the update
// body, `checkObjectPermissions` by the stored row, and `this.repository` as the repository given.
// Methods whose parameters need the contextual types of a real `.with()` call assert from inside.

type ItemData = Static<typeof Item>
type NewItem = Static<typeof ItemBody>
/** A stored row: a column the answer does not show. */
type Row = ItemData & { author_id: number }
declare const sqlite: SqliteRepository<Row>
declare const asyncSqlite: AsyncSqliteRepository<Row>
const memory = new MemoryRepository<ItemData>({ rows: [] })
declare const sync: InstanceType<typeof GenericViewSet<{ item: ItemData }>>
declare const seams: WriteSeams<{ item: ItemData, update: NewItem, partialUpdate: Partial<NewItem> }, false>

describe('getObjectOr404', () => {
  test('is the stored row (the item without a row model), or a promise of it, where getObject may be null', () => {
    GenericReadOnlyViewSet.with({ responseSchema: Item, detailParams: IdParams, repository: memory }, {}, (route) => ({
      favorite: route.post('/:id/favorite', { envelope: true }, function () {
        expect(this.getObjectOr404()).type.toBe<ItemData>()
        expect(this.getObjectOr404('retrieve')).type.toBe<ItemData>()
        expect(this.getObject()).type.toBe<ItemData | null>()
        return this.getObjectOr404()
      })
    }))
    AsyncGenericViewSet.with({ responseSchema: Item, repository: asyncSqlite }, {
      async retrieve () {
        // The row as the repository reads it: its author_id is there to write a related row by.
        expect(this.getObjectOr404()).type.toBe<Promise<Row>>()
        return await this.getObjectOr404()
      }
    })
    expect(sync.getObjectOr404).type.toBe<(action?: string) => ItemData>()
    expect(sync.getObjectOr404).type.toBeCallableWith('retrieve')
    expect(sync.getObjectOr404).type.not.toBeCallableWith(1)
  })
})

describe('envelope: true', () => {
  test('is an option of the routes of the view\'s own, not of a standard action\'s Override', () => {
    expect(Post).type.toBeCallableWith('/:id/favorite', { envelope: true, statusCode: 200 })
    expect(Post).type.not.toBeCallableWith('/:id/favorite', { envelope: 'article' })
    expect(Action).type.toBeCallableWith('peek', { detail: true, envelope: true })
    expect(Override).type.toBeCallableWith({ summary: 'Read an item' })
    expect(Override).type.not.toBeCallableWith({ envelope: true })
  })

  test('a decorated route in the envelope returns the object', () => {
    expect(class extends GenericReadOnlyViewSet.with({ responseSchema: Item, detailParams: IdParams, envelope: 'item', repository: memory }) {
      @Post('/:id/favorite', { schema: { params: IdParams }, envelope: true, statusCode: 200 })
      favorite (request: ViewRequest<{ params: typeof IdParams }>) {
        expect(request.params.id).type.toBe<number>()
        return this.getObjectOr404()
      }
    }).type.not.toRaiseError()
  })
})

describe('the write seams', () => {
  test('performUpdate\'s values are the update body, and the seams get the row read before the write', () => {
    GenericViewSet.with({ responseSchema: Item, createSchema: ItemBody, repository: memory }, {
      performUpdate (criteria, values, options, current) {
        expect(values).type.toBe<NewItem | Partial<NewItem>>()
        expect(values.name).type.toBe<string | undefined>()
        expect(current).type.toBe<ItemData | undefined>()
        return this.repository.update(criteria, values, options)
      },
      performDestroy (criteria, options, current) {
        expect(current).type.toBe<ItemData | undefined>()
        return this.repository.delete(criteria, options)
      }
    })
    expect(seams.performUpdate).type.toBeCallableWith({}, { name: 'lamp' }, {})
    expect(seams.performUpdate).type.not.toBeCallableWith({}, { nme: 'lamp' }, {})
    expect(seams.performUpdate).type.toBeCallableWith({}, { price: 3 }, {}, { id: 1, name: 'lamp' })
    expect(seams.performUpdate).type.not.toBeCallableWith({}, { price: 3 }, {}, { id: 'one' })
  })

  test('the values follow the models: update and partialUpdate, either, or neither', () => {
    expect<UpdateValues<{ update: NewItem, partialUpdate: Partial<NewItem> }>>().type.toBe<NewItem | Partial<NewItem>>()
    expect<UpdateValues<{ update: NewItem }>>().type.toBe<NewItem | Partial<NewItem>>()
    expect<UpdateValues<{ partialUpdate: { price?: number } }>>().type.toBe<{ price?: number }>()
    expect<UpdateValues<{ item: ItemData }>>().type.toBe<Record<string, unknown>>()
  })

  test('an override written for Record<string, unknown> still compiles', () => {
    expect(class extends GenericViewSet.with({ responseSchema: Item, createSchema: ItemBody, repository: memory }) {
      override performUpdate (criteria: Criteria, values: Record<string, unknown>, options: RepositoryOptions) {
        return this.repository.update(criteria, values, options)
      }

      override performDestroy (criteria: Criteria, options: RepositoryOptions) {
        return this.repository.delete(criteria, options)
      }
    }).type.not.toRaiseError()
  })
})

describe('checkObjectPermissions', () => {
  test('judges the stored row when the repository says what it is', () => {
    GenericViewSet.with({ responseSchema: Item, repository: sqlite }, {
      checkObjectPermissions (object) {
        expect(object).type.toBe<Row>()
        expect(object.author_id).type.toBe<number>()
      }
    })
    type FromRows = InstanceType<typeof GenericViewSet<{ item: ItemData, row: Row }>>
    type FromItems = InstanceType<typeof GenericViewSet<{ item: ItemData }>>
    expect<Parameters<FromRows['checkObjectPermissions']>[0]>().type.toHaveProperty('author_id')
    expect<Parameters<FromItems['checkObjectPermissions']>[0]>().type.not.toHaveProperty('author_id')
    expect<ObjectOf<{ item: ItemData, row: Row }>>().type.toBe<Row>()
    expect<ObjectOf<{ item: ItemData }>>().type.toBe<ItemData>()
  })

  test('an override annotated with the item still compiles', () => {
    expect(class extends GenericViewSet.with({ responseSchema: Item, repository: sqlite }) {
      override checkObjectPermissions (object: ItemData, action: string): void {
        if (object.id < 0) throw new Error(action)
      }
    }).type.not.toRaiseError()
  })
})

describe('this.repository', () => {
  test('is the repository given, with its transaction', () => {
    GenericViewSet.with({ responseSchema: Item, repository: sqlite }, {
      performDestroy (criteria, options) {
        expect(this.repository.transaction(() => 1)).type.toBe<number>()
        expect(this.repository.get({ id: 1 })).type.toBe<ItemData | null>()
        return this.repository.transaction(() => this.repository.delete(criteria, options))
      }
    })
    AsyncGenericViewSet.with({ responseSchema: Item, repository: asyncSqlite }, {}, (route) => ({
      favorite: route.post('/:id/favorite', {}, async function () {
        expect(this.repository.transaction(async () => 1)).type.toBe<Promise<number>>()
        return await this.repository.transaction(async () => await this.getObjectOr404())
      })
    }))
    GenericViewSet.with({ responseSchema: Item, repository: memory }, {
      performDestroy (criteria, options) {
        expect(this.repository).type.not.toHaveProperty('transaction')
        return this.repository.delete(criteria, options)
      }
    })
  })

  test('in a class body too, and in the class form through the repository model', () => {
    class Items extends GenericViewSet.with({ responseSchema: Item, repository: sqlite }) {
      renumber () { return this.repository.transaction(() => 2) }
    }
    expect<ReturnType<InstanceType<typeof Items>['renumber']>>().type.toBe<number>()
    expect<InstanceType<typeof GenericViewSet<{ item: ItemData, repository: SqliteRepository<Row> }>>['repository']>()
      .type.toHaveProperty('transaction')
  })

  test('is the protocol over the items when no repository type is given', () => {
    expect<InstanceType<ReturnType<typeof GenericViewSet.with<{ responseSchema: typeof Item }>>>['repository']>()
      .type.toBe<Repository<ItemData>>()
    expect<InstanceType<typeof GenericViewSet<{ item: ItemData }>>['repository']>().type.toBe<Repository<ItemData>>()
    expect<InstanceType<typeof GenericViewSet<{ item: ItemData }>>['repository']>().type.not.toHaveProperty('transaction')
  })
})

describe('a route of the view\'s own typed by Type.Object in its options', () => {
  test('takes its body as its schema says, in the envelope or not', () => {
    const Title = Type.Object({ name: Type.String() })
    GenericReadOnlyViewSet.with({ responseSchema: Item, detailParams: IdParams, envelope: 'item', repository: memory }, {}, (route) => ({
      rename: route.put('/:id/name', { schema: { body: Title }, envelope: true }, function (request) {
        expect(request.body).type.toBe<{ name: string }>()
        const item = this.getObjectOr404()
        return this.repository.update({ id: item.id }, { name: request.body.name })
      })
    }))
  })
})
