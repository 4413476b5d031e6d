import type { Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import {
  AsyncBulkAPIViewSet, AsyncBulkCreateAPIView, AsyncBulkDestroyAPIView, AsyncBulkUpdateAPIView, AsyncGenericBulkCreateAPIView, AsyncGenericViewSet,
  AsyncUpdateManyAPIView, BulkAPIViewSet, BulkCreateAPIView, BulkDestroyAPIView, BulkUpdateAPIView, GenericViewSet, MemoryRepository,
  UpdateManyAPIView, asyncRepository, mix,
  type AsyncBulkRepository, type AsyncRepository, type BulkCreateActions, type BulkDestroyActions, type BulkRepository, type BulkUpdateActions,
  type Repository, type UpdateManyActions, type WithAsyncBulkRepositoryMixin, type WithBulkRepositoryMixin
} from '../../lib/index.js'
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

describe('the repository of a view that is both a CRUD and a bulk view (SEED 2.7 rule 2)', () => {
  test('async: its repository is typed by both protocols', () => {
    type Both = InstanceType<typeof AsyncGenericViewSet<{ item: ItemData }>> & InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
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
    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      static override repository = asyncCrudOnly
    }).type.toRaiseError(/incorrectly extends base class static side[\s\S]*is missing the following properties[\s\S]*createMany, updateMany, bulkUpdate, deleteMany/)

    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      static override repository = asyncBulkOnly
    }).type.toRaiseError(/incorrectly extends base class static side[\s\S]*is missing the following properties[\s\S]*create, get, list, count/)

    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      override get repository () { return asyncCrudOnly }
    }).type.toRaiseError(/Property 'repository'[\s\S]*is missing the following properties[\s\S]*createMany, updateMany, bulkUpdate, deleteMany/)

    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      override get repository () { return asyncBulkOnly }
    }).type.toRaiseError(/Property 'repository'[\s\S]*is missing the following properties[\s\S]*create, get, list, count/)

    expect(asyncCrudOnly).type.not.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
    expect(asyncBulkOnly).type.not.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
    expect(asyncMemory).type.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
  })

  test('async: the sync MemoryRepository itself is a compile error', () => {
    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      static override repository = memory
    }).type.toRaiseError(/incorrectly extends base class static side/)

    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)<{ item: ItemData }> {
      override get repository () { return memory }
    }).type.toRaiseError(/Property 'repository'/)
  })

  test('sync: MemoryRepository satisfies both; a CRUD-only, a bulk-only or an async repository is a compile error', () => {
    type Both = InstanceType<typeof GenericViewSet<{ item: ItemData }>> & InstanceType<typeof BulkAPIViewSet<{ item: ItemData }>>
    expect<Both['repository']>().type.toBe<Repository<ItemData> & BulkRepository<ItemData>>()

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      static override repository = memory
    }).type.not.toRaiseError()

    expect(class extends mix(GenericViewSet, BulkAPIViewSet)<{ item: ItemData }> {
      override get repository () { return memory }
    }).type.not.toRaiseError()

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      static override repository = crudOnly
    }).type.toRaiseError(/incorrectly extends base class static side[\s\S]*is missing the following properties[\s\S]*createMany, updateMany, bulkUpdate, deleteMany/)

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      static override repository = bulkOnly
    }).type.toRaiseError(/incorrectly extends base class static side[\s\S]*is missing the following properties[\s\S]*create, get, list, count/)

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      override get repository () { return crudOnly }
    }).type.toRaiseError(/Property 'repository'[\s\S]*is missing the following properties[\s\S]*createMany, updateMany, bulkUpdate, deleteMany/)

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      override get repository () { return bulkOnly }
    }).type.toRaiseError(/Property 'repository'[\s\S]*is missing the following properties[\s\S]*create, get, list, count/)

    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      override get repository () { return asyncMemory }
    }).type.toRaiseError(/Property 'repository'/)
  })

  test('a bulk-only view needs the bulk protocol only', () => {
    expect(class extends AsyncBulkAPIViewSet<{ item: ItemData }> {
      static override repository = asyncBulkOnly
    }).type.not.toRaiseError()

    expect(class extends BulkAPIViewSet<{ item: ItemData }> {
      override get repository () { return bulkOnly }
    }).type.not.toRaiseError()

    expect(class extends AsyncBulkAPIViewSet<{ item: ItemData }> {
      static override repository = asyncCrudOnly
    }).type.toRaiseError(/incorrectly extends base class static side[\s\S]*createMany/)

    expect(class extends AsyncGenericBulkCreateAPIView<{ item: ItemData }> {
      override get repository () { return bulkOnly }
    }).type.toRaiseError(/Property 'repository'/)
  })

  test('the repository of other items is a compile error', () => {
    expect(class extends mix(BulkAPIViewSet, GenericViewSet)<{ item: ItemData }> {
      override get repository () { return new MemoryRepository<{ slug: string }>() }
    }).type.toRaiseError(/Property 'repository'/)
  })

  test('WithAsyncBulkRepositoryMixin / WithBulkRepositoryMixin type a repository of your own', () => {
    expect<WithAsyncBulkRepositoryMixin<{ item: ItemData }>['repository']>().type.toBe<AsyncBulkRepository<ItemData>>()
    expect<WithBulkRepositoryMixin<{ item: ItemData }>['repository']>().type.toBe<BulkRepository<ItemData>>()

    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> implements WithAsyncBulkRepositoryMixin<{ item: ItemData }> {
      get repository () { return asyncMemory }
      override async bulkCreate (request: FastifyRequest<{ Body: NewItem[] }>) { return this.repository.createMany(request.body, {}) }
    }).type.not.toRaiseError()

    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> implements WithAsyncBulkRepositoryMixin<{ item: ItemData }> {
      get repository () { return memory }
      override async bulkCreate () { return [item] }
    }).type.toRaiseError(/Property 'repository'[\s\S]*'WithAsyncBulkRepositoryMixin[\s\S]*The types returned by 'createMany\(\.\.\.\)' are incompatible/)
  })
})

describe('the action methods of the abstract bulk views', () => {
  type CreateRequest = Parameters<InstanceType<typeof AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }>>['bulkCreate']>[0]
  type UpdateRequest = Parameters<InstanceType<typeof BulkUpdateAPIView<{ bulkUpdate: KeyedItem }>>['bulkUpdate']>[0]
  type ManyRequest = Parameters<InstanceType<typeof AsyncUpdateManyAPIView<{ item: ItemData, update: NewItem, query: NameQuery }>>['updateMany']>[0]
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
    expect<InstanceType<typeof AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }>>>().type.toBeAssignableTo<BulkCreateActions<{ item: ItemData, create: NewItem }, true>>()
    expect<InstanceType<typeof BulkUpdateAPIView<{ bulkUpdate: KeyedItem }>>>().type.toBeAssignableTo<BulkUpdateActions<{ bulkUpdate: KeyedItem }, false>>()
    expect<InstanceType<typeof UpdateManyAPIView<{ item: ItemData }>>>().type.toBeAssignableTo<UpdateManyActions<{ item: ItemData }, false>>()
    expect<InstanceType<typeof AsyncBulkDestroyAPIView>>().type.toBeAssignableTo<BulkDestroyActions<unknown, true>>()
    expect<BulkCreateActions<{ item: ItemData }, false>['bulkCreate']>().type.not.toBeAssignableTo<BulkCreateActions<{ item: ItemData }, true>['bulkCreate']>()
  })

  test('bulkCreate: items typed from create, rows returned typed from item', () => {
    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async bulkCreate (request: FastifyRequest<{ Body: NewItem[] }>) { return request.body.map((body, id) => ({ id, name: body.name })) }
    }).type.not.toRaiseError()

    expect(class extends BulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override bulkCreate () { return [item] }
    }).type.not.toRaiseError()

    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async bulkCreate (_request: FastifyRequest<{ Body: Array<Static<typeof OtherBody>> }>) { return [item] }
    }).type.toRaiseError(/Property 'bulkCreate'[\s\S]*Types of property 'body' are incompatible/)

    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async bulkCreate () { return [{ wrong: 1 }] }
    }).type.toRaiseError(/Property 'bulkCreate'[\s\S]*Type '\{ wrong: number; \}' is missing the following properties from type '\{ name: string; id: number; \}'/)

    expect(class extends AsyncBulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override bulkCreate () { return [item] }
    }).type.toRaiseError(/Property 'bulkCreate'[\s\S]*is missing the following properties from type 'Promise</)

    expect(class extends BulkCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async bulkCreate () { return [item] }
    }).type.toRaiseError(/Property 'bulkCreate'/)
  })

  test('bulkUpdate: items typed from bulkUpdate; the family decides promise or value', () => {
    expect(class extends AsyncBulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override async bulkUpdate (request: FastifyRequest<{ Body: KeyedItem[] }>) { return request.body.length }
    }).type.not.toRaiseError()

    expect(class extends BulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override bulkUpdate () { return undefined }
    }).type.not.toRaiseError()

    expect(class extends AsyncBulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override async bulkUpdate (_request: FastifyRequest<{ Body: Array<{ id: string }> }>) { return undefined }
    }).type.toRaiseError(/Property 'bulkUpdate'[\s\S]*Types of property 'body' are incompatible/)

    expect(class extends AsyncBulkUpdateAPIView<{ bulkUpdate: KeyedItem }> {
      override bulkUpdate () { return undefined }
    }).type.toRaiseError(/Property 'bulkUpdate'[\s\S]*is not assignable to type 'Promise<unknown>'/)
  })

  test('updateMany: values are any part of update, query typed, rows returned typed from item', () => {
    expect(class extends AsyncUpdateManyAPIView<{ item: ItemData, update: NewItem, query: NameQuery }> {
      override async updateMany (request: FastifyRequest<{ Body: Partial<NewItem>, Querystring: NameQuery }>) {
        return [{ id: 1, name: request.body.name ?? request.query.name ?? '' }]
      }
    }).type.not.toRaiseError()

    expect(class extends AsyncUpdateManyAPIView<{ item: ItemData, update: NewItem, query: NameQuery }> {
      override async updateMany (_request: FastifyRequest<{ Body: NewItem }>) { return [item] }
    }).type.toRaiseError(/Property 'updateMany'[\s\S]*The types of 'body\.name' are incompatible[\s\S]*Type 'undefined' is not assignable to type 'string'/)

    expect(class extends UpdateManyAPIView<{ item: ItemData, update: NewItem }> {
      override updateMany () { return [{ id: 'one', name: 'a' }] }
    }).type.toRaiseError(/Property 'updateMany'[\s\S]*Type 'string' is not assignable to type 'number'/)
  })

  test('bulkDelete: query typed; the family decides promise or value', () => {
    expect(class extends BulkDestroyAPIView<{ query: NameQuery }> {
      override bulkDelete (request: FastifyRequest<{ Querystring: NameQuery }>) { return request.query.name }
    }).type.not.toRaiseError()

    expect(class extends AsyncBulkDestroyAPIView<{ query: NameQuery }> {
      override async bulkDelete (_request: FastifyRequest<{ Querystring: { name: number } }>) { return undefined }
    }).type.toRaiseError(/Property 'bulkDelete'[\s\S]*The types of 'query\.name' are incompatible/)
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

    expect(class extends BulkAPIViewSet<{ item: ItemData }> {
      override afterBulkCreate (objs: Array<{ slug: string }>) { objs.forEach((obj) => obj.slug.trim()) }
    }).type.toRaiseError(/Property 'afterBulkCreate'/)
  })
})

describe('suppressed errors', () => {
  test('a bulk view calls the bulk protocol only; a CRUD + bulk view both', () => {
    const bulkView = null as unknown as InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
    // @ts-expect-error: Property 'get' does not exist on type 'Promised<BulkRepository
    void bulkView.repository.get({ id: 1 }, {})

    const both = null as unknown as InstanceType<typeof AsyncGenericViewSet<{ item: ItemData }>> & InstanceType<typeof AsyncBulkAPIViewSet<{ item: ItemData }>>
    expect(both.repository.get({ id: 1 }, {})).type.toBe<Promise<ItemData | null>>()
    expect(both.repository.createMany([{ name: 'a' }], {})).type.toBe<Promise<ItemData[]>>()

    // @ts-expect-error: is missing the following properties from type 'BulkRepository
    const sync: Repository<ItemData> & BulkRepository<ItemData> = crudOnly
    expect(sync).type.toBe<Repository<ItemData> & BulkRepository<ItemData>>()
  })
})
