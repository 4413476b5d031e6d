import type { Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import { mix } from '../../lib/index.js'
import {
  AsyncGenericViewSet, GenericViewSet, MemoryRepository, asyncRepository, type AsyncBulkRepository,
  type AsyncRepository, type BulkRepository, type Repository
} from '../../lib/generics.js'
import {
  AsyncBulkAPIViewSet, AsyncBulkCreateAPIView, AsyncBulkDestroyAPIView, AsyncBulkUpdateAPIView,
  AsyncGenericBulkCreateAPIView, AsyncUpdateManyAPIView, BulkAPIViewSet, BulkCreateAPIView, BulkDestroyAPIView,
  BulkUpdateAPIView, UpdateManyAPIView, type BulkCreateActions, type BulkDestroyActions, type BulkUpdateActions,
  type UpdateManyActions, type WithAsyncBulkRepositoryMixin, type WithBulkRepositoryMixin
} from '../../lib/bulk.js'
import { Item, ItemBody, OtherBody } from './schemas.js'

type ItemData = Static<typeof Item>
type NewItem = Static<typeof ItemBody>
type KeyedItem = NewItem & { id: number }
type NameQuery = { name?: string }
const item: ItemData = { id: 1, name: 'a' }

const memory = new MemoryRepository<ItemData>()
const asyncMemory = asyncRepository<ItemData, MemoryRepository<ItemData>>(memory)
declare const crudOnly: Repository<ItemData>
declare const bulkOnly: BulkRepository<ItemData>
declare const asyncCrudOnly: AsyncRepository<ItemData>
declare const asyncBulkOnly: AsyncBulkRepository<ItemData>

// A subclass whose `static repository = x` or `get repository () { return x }` does not fit fails
// to compile because the type of x is not assignable to the static or instance `repository` of the
// base class (an action override, because its type is not assignable to the base action's). The
// negative tests assert that relation instead of matching the compiler's message, next to what fits.
const AsyncBoth = mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)
const SyncBoth = mix(BulkAPIViewSet, GenericViewSet)
type AsyncBothView = InstanceType<typeof AsyncBoth<{ item: ItemData }>>
type SyncBothView = InstanceType<typeof SyncBoth<{ item: ItemData }>>

describe('the repository of a view that is both a CRUD and a bulk view (SEED 2.7 rule 2)', () => {
  test('async: its repository is typed by both protocols', () => {
    type Both = InstanceType<typeof AsyncGenericViewSet<{ item: ItemData }>> &
      InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
    expect<InstanceType<ReturnType<typeof mix<[typeof AsyncBulkAPIViewSet, typeof AsyncGenericViewSet]>>>['repository']>()
      .type.toBe<AsyncBulkRepository<unknown> & AsyncRepository<unknown>>()
    expect<Both['repository']>().type.toBe<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
  })

  test('async: asyncRepository(MemoryRepository) satisfies both, as a static or a getter', () => {
    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      static override repository = asyncMemory
    }).type.not.toRaiseError()

    expect(class extends mix(AsyncGenericViewSet, AsyncBulkAPIViewSet)<{ item: ItemData }> {
      override get repository () { return asyncMemory }
    }).type.not.toRaiseError()
  })

  test('async: a CRUD-only or a bulk-only repository is a compile error', () => {
    expect(asyncMemory).type.toBeAssignableTo<typeof AsyncBoth.repository>()
    expect(asyncCrudOnly).type.not.toBeAssignableTo<typeof AsyncBoth.repository>()
    expect(asyncBulkOnly).type.not.toBeAssignableTo<typeof AsyncBoth.repository>()

    expect(asyncMemory).type.toBeAssignableTo<AsyncBothView['repository']>()
    expect(asyncCrudOnly).type.not.toBeAssignableTo<AsyncBothView['repository']>()
    expect(asyncBulkOnly).type.not.toBeAssignableTo<AsyncBothView['repository']>()

    // Each is missing the other protocol's methods.
    expect(asyncCrudOnly).type.not.toHaveProperty('createMany')
    expect(asyncBulkOnly).type.not.toHaveProperty('create')

    expect(asyncCrudOnly).type.not.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
    expect(asyncBulkOnly).type.not.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
    expect(asyncMemory).type.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
  })

  test('async: the sync MemoryRepository itself is a compile error', () => {
    expect(memory).type.not.toBeAssignableTo<typeof AsyncBoth.repository>()
    expect(memory).type.not.toBeAssignableTo<AsyncBothView['repository']>()
  })

  test('sync: MemoryRepository satisfies both; a CRUD-only, a bulk-only or an async repository is a compile error', () => {
    type Both = InstanceType<typeof GenericViewSet<{ item: ItemData }>> &
      InstanceType<typeof BulkAPIViewSet<{ item: ItemData }>>
    expect<Both['repository']>().type.toBe<Repository<ItemData> & BulkRepository<ItemData>>()

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      static override repository = memory
    }).type.not.toRaiseError()

    expect(class extends mix(GenericViewSet, BulkAPIViewSet)<{ item: ItemData }> {
      override get repository () { return memory }
    }).type.not.toRaiseError()

    expect(memory).type.toBeAssignableTo<typeof SyncBoth.repository>()
    expect(crudOnly).type.not.toBeAssignableTo<typeof SyncBoth.repository>()
    expect(bulkOnly).type.not.toBeAssignableTo<typeof SyncBoth.repository>()

    expect(memory).type.toBeAssignableTo<SyncBothView['repository']>()
    expect(crudOnly).type.not.toBeAssignableTo<SyncBothView['repository']>()
    expect(bulkOnly).type.not.toBeAssignableTo<SyncBothView['repository']>()
    expect(asyncMemory).type.not.toBeAssignableTo<SyncBothView['repository']>()

    expect(crudOnly).type.not.toHaveProperty('createMany')
    expect(bulkOnly).type.not.toHaveProperty('create')
  })

  test('a bulk-only view needs the bulk protocol only', () => {
    expect(class extends AsyncBulkAPIViewSet<{ item: ItemData }> {
      static override repository = asyncBulkOnly
    }).type.not.toRaiseError()

    expect(class extends BulkAPIViewSet<{ item: ItemData }> {
      override get repository () { return bulkOnly }
    }).type.not.toRaiseError()

    expect(asyncBulkOnly).type.toBeAssignableTo<typeof AsyncBulkAPIViewSet.repository>()
    expect(asyncCrudOnly).type.not.toBeAssignableTo<typeof AsyncBulkAPIViewSet.repository>()

    type BulkCreating = InstanceType<typeof AsyncGenericBulkCreateAPIView<{ item: ItemData }>>
    expect(asyncBulkOnly).type.toBeAssignableTo<BulkCreating['repository']>()
    expect(bulkOnly).type.not.toBeAssignableTo<BulkCreating['repository']>()
  })

  test('the repository of other items is a compile error', () => {
    expect<MemoryRepository<ItemData>>().type.toBeAssignableTo<SyncBothView['repository']>()
    expect<MemoryRepository<{ slug: string }>>().type.not.toBeAssignableTo<SyncBothView['repository']>()
  })

  test('WithAsyncBulkRepositoryMixin / WithBulkRepositoryMixin type a repository of your own', () => {
    expect<WithAsyncBulkRepositoryMixin<{ item: ItemData }>['repository']>().type.toBe<AsyncBulkRepository<ItemData>>()
    expect<WithBulkRepositoryMixin<{ item: ItemData }>['repository']>().type.toBe<BulkRepository<ItemData>>()

    expect(class extends AsyncBulkCreateAPIView<{
      item: ItemData,
      create: NewItem
    }> implements WithAsyncBulkRepositoryMixin<{ item: ItemData }> {
      get repository () { return asyncMemory }
      override async bulkCreate (
        request: FastifyRequest<{ Body: NewItem[] }>
      ) { return this.repository.createMany(request.body, {}) }
    }).type.not.toRaiseError()

    // `implements` fails when the class's repository is not assignable to the interface's.
    expect(asyncMemory).type.toBeAssignableTo<WithAsyncBulkRepositoryMixin<{ item: ItemData }>['repository']>()
    expect(memory).type.not.toBeAssignableTo<WithAsyncBulkRepositoryMixin<{ item: ItemData }>['repository']>()
  })
})

describe('the action methods of the abstract bulk views', () => {
  type CreateRequest = Parameters<InstanceType<typeof AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }>>['bulkCreate']>[0]
  type UpdateRequest = Parameters<InstanceType<typeof BulkUpdateAPIView<{ bulkUpdate: KeyedItem }>>['bulkUpdate']>[0]
  type ManyRequestView = InstanceType<typeof AsyncUpdateManyAPIView<{
    item: ItemData,
    update: NewItem,
    query: NameQuery
  }>>
  type ManyRequest = Parameters<ManyRequestView['updateMany']>[0]
  type DeleteRequest = Parameters<InstanceType<typeof BulkDestroyAPIView<{ query: NameQuery }>>['bulkDelete']>[0]

  test('the request is typed from the models: create items, bulkUpdate items, update values (any part), query', () => {
    expect<CreateRequest['body']>().type.toBe<NewItem[]>()
    expect<UpdateRequest['body']>().type.toBe<KeyedItem[]>()
    expect<ManyRequest['body']>().type.toBe<Partial<NewItem>>()
    expect<ManyRequest['query']>().type.toBe<NameQuery>()
    expect<DeleteRequest['query']>().type.toBe<NameQuery>()
    expect<Parameters<InstanceType<typeof BulkCreateAPIView>['bulkCreate']>[0]['body']>().type.toBe<unknown[]>()
  })

  test('the exported action interfaces name the same methods', () => {
    expect<InstanceType<typeof AsyncBulkCreateAPIView<{
      item: ItemData,
      create: NewItem
    }>>>().type.toBeAssignableTo<BulkCreateActions<{ item: ItemData, create: NewItem }, true>>()
    expect<InstanceType<typeof BulkUpdateAPIView<{
      bulkUpdate: KeyedItem
    }>>>().type.toBeAssignableTo<BulkUpdateActions<{ bulkUpdate: KeyedItem }, false>>()
    expect<InstanceType<typeof UpdateManyAPIView<{ item: ItemData }>>>()
      .type.toBeAssignableTo<UpdateManyActions<{ item: ItemData }, false>>()
    expect<InstanceType<typeof AsyncBulkDestroyAPIView>>().type.toBeAssignableTo<BulkDestroyActions<unknown, true>>()
    expect<BulkCreateActions<{ item: ItemData }, false>['bulkCreate']>().type.not.toBeAssignableTo<BulkCreateActions<{ item: ItemData }, true>['bulkCreate']>()
  })

  test('bulkCreate: items typed from create, rows returned typed from item', () => {
    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async bulkCreate (request: FastifyRequest<{ Body: NewItem[] }>) {
        return request.body.map(
          (body, id) => ({ id, name: body.name })
        )
      }
    }).type.not.toRaiseError()

    expect(class extends BulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override bulkCreate () { return [item] }
    }).type.not.toRaiseError()

    type Creating = InstanceType<typeof AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }>>
    type SyncCreating = InstanceType<typeof BulkCreateAPIView<{ item: ItemData, create: NewItem }>>
    expect<(request: FastifyRequest<{ Body: NewItem[] }>) => Promise<ItemData[]>>().type.toBeAssignableTo<Creating['bulkCreate']>()
    expect<(request: FastifyRequest<{ Body: Array<Static<typeof OtherBody>> }>) => Promise<ItemData[]>>().type.not.toBeAssignableTo<Creating['bulkCreate']>()
    expect<() => Promise<Array<{ wrong: number }>>>().type.not.toBeAssignableTo<Creating['bulkCreate']>()
    expect<() => ItemData[]>().type.not.toBeAssignableTo<Creating['bulkCreate']>()

    expect<() => ItemData[]>().type.toBeAssignableTo<SyncCreating['bulkCreate']>()
    expect<() => Promise<ItemData[]>>().type.not.toBeAssignableTo<SyncCreating['bulkCreate']>()
  })

  test('bulkUpdate: items typed from bulkUpdate; the family decides promise or value', () => {
    expect(class extends AsyncBulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override async bulkUpdate (request: FastifyRequest<{ Body: KeyedItem[] }>) { return request.body.length }
    }).type.not.toRaiseError()

    expect(class extends BulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override bulkUpdate () { return undefined }
    }).type.not.toRaiseError()

    type Updating = InstanceType<typeof AsyncBulkUpdateAPIView<{ bulkUpdate: KeyedItem }>>
    expect<(request: FastifyRequest<{ Body: KeyedItem[] }>) => Promise<undefined>>().type.toBeAssignableTo<Updating['bulkUpdate']>()
    expect<(request: FastifyRequest<{ Body: Array<{ id: string }> }>) => Promise<undefined>>().type.not.toBeAssignableTo<Updating['bulkUpdate']>()
    expect<() => undefined>().type.not.toBeAssignableTo<Updating['bulkUpdate']>()
  })

  test('updateMany: values are any part of update, query typed, rows returned typed from item', () => {
    expect(class extends AsyncUpdateManyAPIView<{ item: ItemData, update: NewItem, query: NameQuery }> {
      override async updateMany (request: FastifyRequest<{ Body: Partial<NewItem>, Querystring: NameQuery }>) {
        return [{ id: 1, name: request.body.name ?? request.query.name ?? '' }]
      }
    }).type.not.toRaiseError()

    // The values are any part of update: a handler that needs a whole item is refused.
    expect<(request: FastifyRequest<{ Body: Partial<NewItem> }>) => Promise<ItemData[]>>().type.toBeAssignableTo<ManyRequestView['updateMany']>()
    expect<(request: FastifyRequest<{ Body: NewItem }>) => Promise<ItemData[]>>().type.not.toBeAssignableTo<ManyRequestView['updateMany']>()

    type SyncMany = InstanceType<typeof UpdateManyAPIView<{ item: ItemData, update: NewItem }>>
    expect<() => ItemData[]>().type.toBeAssignableTo<SyncMany['updateMany']>()
    expect<() => Array<{ id: string, name: string }>>().type.not.toBeAssignableTo<SyncMany['updateMany']>()
  })

  test('bulkDelete: query typed; the family decides promise or value', () => {
    expect(class extends BulkDestroyAPIView<{ query: NameQuery }> {
      override bulkDelete (request: FastifyRequest<{ Querystring: NameQuery }>) { return request.query.name }
    }).type.not.toRaiseError()

    type Deleting = InstanceType<typeof AsyncBulkDestroyAPIView<{ query: NameQuery }>>
    expect<(request: FastifyRequest<{ Querystring: NameQuery }>) => Promise<undefined>>().type.toBeAssignableTo<Deleting['bulkDelete']>()
    expect<(request: FastifyRequest<{ Querystring: { name: number } }>) => Promise<undefined>>().type.not.toBeAssignableTo<Deleting['bulkDelete']>()
  })
})

describe('the hooks of the generic bulk views', () => {
  type AsyncBulk = InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
  type SyncBulk = InstanceType<typeof BulkAPIViewSet<{ item: ItemData }>>

  test('after hooks receive the rows typed from item; async hooks may return promises, sync ones values', () => {
    expect<Parameters<AsyncBulk['afterBulkCreate']>[0]>().type.toBe<ItemData[]>()
    expect<Parameters<SyncBulk['afterUpdateMany']>[0]>().type.toBe<ItemData[]>()
    expect<Parameters<SyncBulk['beforeBulkCreate']>[0]>().type.toBe<Array<Record<string, unknown>>>()
    expect<ReturnType<AsyncBulk['beforeBulkDelete']>>().type.toBe<Promise<void> | void>()
    expect<ReturnType<SyncBulk['beforeBulkDelete']>>().type.toBe<void>()

    expect(class extends AsyncBulkAPIViewSet<{ item: ItemData }> {
      override async afterBulkCreate (objs: ItemData[]) { objs.forEach((obj) => obj.id.toFixed()) }
    }).type.not.toRaiseError()

    expect<(objs: ItemData[]) => void>().type.toBeAssignableTo<SyncBulk['afterBulkCreate']>()
    expect<(objs: Array<{ slug: string }>) => void>().type.not.toBeAssignableTo<SyncBulk['afterBulkCreate']>()
  })
})

describe('what a view may call on its repository', () => {
  test('a bulk view calls the bulk protocol only; a CRUD + bulk view both', () => {
    const bulkView = null as unknown as InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
    expect(bulkView.repository).type.not.toHaveProperty('get')
    expect(bulkView.repository.createMany([{ name: 'a' }], {})).type.toBe<Promise<ItemData[]>>()

    const both = null as unknown as InstanceType<typeof AsyncGenericViewSet<{ item: ItemData }>> &

      InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
    expect(both.repository).type.toHaveProperty('get')
    expect(both.repository.get({ id: 1 }, {})).type.toBe<Promise<ItemData | null>>()
    expect(both.repository.createMany([{ name: 'a' }], {})).type.toBe<Promise<ItemData[]>>()

    expect(memory).type.toBeAssignableTo<Repository<ItemData> & BulkRepository<ItemData>>()
    expect(crudOnly).type.not.toBeAssignableTo<Repository<ItemData> & BulkRepository<ItemData>>()
  })
})
