import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import { describe, expect, test } from 'tstyche'
import {
  AsyncCreateAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView,
  CreateAPIView, ListAPIView, RetrieveAPIView, mix
} from '../../lib/index.js'
import type { Dependency, RouteBuilder, ViewRequest, Schema } from '../../lib/types.js'
import { Unauthorized } from '../../lib/errors.js'
import {
  AsyncGenericListAPIView, AsyncGenericRetrieveAPIView, AsyncGenericViewSet, BaseFilter, CursorPaginationFilter,
  GenericListAPIView, GenericViewSet, MemoryRepository, OffsetLimitFilter, PaginationFilter, asyncRepository,
  NumberedPages, OffsetPages, CursorPages,
  type AsyncBulkRepository, type AsyncRepository, type BulkRepository, type CursorPageOf, type NumberedPageOf,
  type OffsetPageOf, type Repository
} from '../../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../../lib/bulk.js'
import { ConditionalMixin, type Validators } from '../../lib/conditional.js'
import { IdParams, Item, ItemBody, OtherBody, StringIdParams } from './schemas.js'

// `.with(statics, methods)` sets a class's statics once and reads its item types from the schemas
// among them (lib/views/schema-models.ts). What it refuses is asserted as a relation, next to what
// it accepts: `expect(Base.with).type.not.toBeCallableWith(...)` beside `.toBeCallableWith(...)`.
// The matcher decides on the call `Base.with(...)`, where a methods object gets the contextual types
// of the real call; but the file must also compile with those arguments given to the matcher, where
// they get none. A method whose body needs them (an unannotated `request`, `this`) is therefore
// written in a real `.with()` call, and its types are asserted from inside the method.

type ItemData = Static<typeof Item>
type NewItem = Static<typeof ItemBody>
type Other = Static<typeof OtherBody>
const item: ItemData = { id: 1, name: 'a' }
const memory = new MemoryRepository<ItemData>({ rows: [item] })
const asyncMemory = asyncRepository<ItemData, MemoryRepository<ItemData>>(memory)
const authenticate: Dependency = { onRequest: () => {}, errors: [Unauthorized] }

const ReadOnly = mix(AsyncListAPIView, AsyncRetrieveAPIView)
const Crud = mix(
  AsyncListAPIView,
  AsyncCreateAPIView,
  AsyncRetrieveAPIView,
  AsyncUpdateAPIView,
  AsyncPartialUpdateAPIView
)

describe('.with(statics): the models read from the schemas', () => {
  test('responseSchema types the item, detailParams the path parameters', () => {
    const Items = ReadOnly.with({ responseSchema: Item, detailParams: IdParams })
    type Reading = InstanceType<typeof Items>
    expect<Parameters<Reading['retrieve']>[0]['params']>().type.toBe<{ id: number }>()
    expect<ReturnType<Reading['retrieve']>>().type.toBe<Promise<ItemData | null | undefined | FastifyReply>>()
    expect<ReturnType<Reading['list']>>().type.toBe<Promise<ItemData[] | FastifyReply>>()

    expect<(request: ViewRequest<{ params: typeof IdParams }>) => Promise<ItemData>>().type.toBeAssignableTo<Reading['retrieve']>()
    expect<(request: ViewRequest<{ params: typeof StringIdParams }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Reading['retrieve']>()
    expect<() => Promise<ItemData | null>>().type.toBeAssignableTo<Reading['retrieve']>()
    expect<() => Promise<Other>>().type.not.toBeAssignableTo<Reading['retrieve']>()
  })

  test('without detailParams the path parameters are { id: string }', () => {
    type Reading = InstanceType<ReturnType<typeof ReadOnly.with<{ responseSchema: typeof Item }>>>
    expect<Parameters<Reading['retrieve']>[0]['params']>().type.toBe<{ id: string }>()

    expect<(request: ViewRequest<{ params: typeof StringIdParams }>) => Promise<ItemData>>().type.toBeAssignableTo<Reading['retrieve']>()
    expect<(request: ViewRequest<{ params: typeof IdParams }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Reading['retrieve']>()
  })

  test('without responseSchema the item is unknown', () => {
    type Reading = InstanceType<ReturnType<typeof AsyncRetrieveAPIView.with<{ detailParams: typeof IdParams }>>>
    expect<ReturnType<Reading['retrieve']>>().type.toBe<Promise<unknown>>()
    expect<Parameters<Reading['retrieve']>[0]['params']>().type.toBe<{ id: number }>()
  })

  test('createSchema types the create body; getLocation takes the item', () => {
    const Items = Crud.with({ responseSchema: Item, createSchema: ItemBody })
    type Creating = InstanceType<typeof Items>
    expect<Parameters<Creating['create']>[0]['body']>().type.toBe<NewItem>()
    expect<Parameters<Creating['getLocation']>>().type.toBe<[obj: ItemData]>()

    expect<(request: ViewRequest<{ body: typeof ItemBody }>) => Promise<ItemData>>().type.toBeAssignableTo<Creating['create']>()
    expect<(request: ViewRequest<{ body: typeof OtherBody }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Creating['create']>()
  })

  test('update defaults to createSchema, and updateSchema wins over it', () => {
    type Defaulted = InstanceType<ReturnType<typeof Crud.with<{
      responseSchema: typeof Item,
      createSchema: typeof ItemBody
    }>>>
    expect<Parameters<Defaulted['update']>[0]['body']>().type.toBe<NewItem>()

    type Own = InstanceType<ReturnType<typeof Crud.with<{
      responseSchema: typeof Item,
      createSchema: typeof ItemBody,
      updateSchema: typeof OtherBody
    }>>>
    expect<Parameters<Own['update']>[0]['body']>().type.toBe<Other>()
    expect<Parameters<Own['create']>[0]['body']>().type.toBe<NewItem>()

    expect<(request: ViewRequest<{ params: typeof StringIdParams, body: typeof ItemBody }>) => Promise<ItemData>>().type.toBeAssignableTo<Defaulted['update']>()
    expect<(request: ViewRequest<{ params: typeof StringIdParams, body: typeof OtherBody }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Defaulted['update']>()
  })

  test('partialUpdate defaults to Partial<update>, and partialUpdateSchema wins over it', () => {
    type FromCreate = InstanceType<ReturnType<typeof Crud.with<{ createSchema: typeof ItemBody }>>>
    expect<Parameters<FromCreate['partialUpdate']>[0]['body']>().type.toBe<Partial<NewItem>>()

    type FromUpdate = InstanceType<ReturnType<typeof Crud.with<{
      createSchema: typeof ItemBody,
      updateSchema: typeof OtherBody
    }>>>
    expect<Parameters<FromUpdate['partialUpdate']>[0]['body']>().type.toBe<Partial<Other>>()

    type Own = InstanceType<ReturnType<typeof Crud.with<{
      createSchema: typeof ItemBody,
      partialUpdateSchema: typeof OtherBody
    }>>>
    expect<Parameters<Own['partialUpdate']>[0]['body']>().type.toBe<Other>()
    expect<Parameters<Own['update']>[0]['body']>().type.toBe<NewItem>()
  })

  test('without a body schema the bodies are unknown', () => {
    type Untyped = InstanceType<ReturnType<typeof Crud.with<{ responseSchema: typeof Item }>>>
    expect<Parameters<Untyped['create']>[0]['body']>().type.toBe<unknown>()
    expect<Parameters<Untyped['update']>[0]['body']>().type.toBe<unknown>()
    expect<Parameters<Untyped['partialUpdate']>[0]['body']>().type.toBe<unknown>()
  })

  test('the statics keep their declared types', () => {
    const Items = ReadOnly.with({ responseSchema: Item, detailParams: IdParams, raiseOnNone: false })
    expect(Items.responseSchema).type.toBe<Schema | undefined>()
    expect(Items.detailParams).type.toBe<Schema>()
    expect(Items.raiseOnNone).type.toBe<boolean>()
    expect(Items).type.not.toHaveProperty('createSchema')
  })
})

describe('.with(statics): generic views', () => {
  test('the repository is typed by responseSchema, in the family of the view', () => {
    type AsyncItems = InstanceType<ReturnType<typeof AsyncGenericViewSet.with<{ responseSchema: typeof Item }>>>
    type SyncItems = InstanceType<ReturnType<typeof GenericViewSet.with<{ responseSchema: typeof Item }>>>
    expect<AsyncItems['repository']>().type.toBe<AsyncRepository<ItemData>>()
    expect<SyncItems['repository']>().type.toBe<Repository<ItemData>>()
    expect<AsyncItems['repository']['get']>().type.toBe<AsyncRepository<ItemData>['get']>()
    expect<ReturnType<SyncItems['repository']['list']>>().type.toBe<ItemData[]>()
  })

  test('a repository of the family is a static it takes; one of the other family is refused', () => {
    expect(AsyncGenericViewSet.with).type.toBeCallableWith({ responseSchema: Item, repository: asyncMemory })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Item, repository: memory })

    expect(GenericViewSet.with).type.toBeCallableWith({ responseSchema: Item, repository: memory })
    expect(GenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Item, repository: asyncMemory })
  })

  test('a static repository of other items is refused beside responseSchema', () => {
    const others = new MemoryRepository<Other>({ rows: [] })
    expect(GenericViewSet.with).type.toBeCallableWith({ responseSchema: Item, repository: memory })
    expect(GenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Item, repository: others })
  })

  test('list answers an array without a filter, and the page of a filter whose paginator is typed', () => {
    type Plain = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{ responseSchema: typeof Item }>>>
    expect<ReturnType<Plain['list']>>().type.toBe<Promise<ItemData[] | FastifyReply>>()

    class Pages extends BaseFilter { static override paginator = new NumberedPages() }
    class Offsets extends BaseFilter { static override paginator = new OffsetPages() }
    class Cursors extends BaseFilter { static override paginator = new CursorPages() }
    class Unpaged extends BaseFilter { static override paginator = null }
    type Flat = InstanceType<ReturnType<typeof GenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof Unpaged
    }>>>
    expect<ReturnType<Flat['list']>>().type.toBe<ItemData[] | FastifyReply>()
    type Paged = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof Pages
    }>>>
    type Windowed = InstanceType<ReturnType<typeof GenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof Offsets
    }>>>
    type Keyed = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof Cursors
    }>>>
    expect<ReturnType<Paged['list']>>().type.toBe<Promise<NumberedPageOf<ItemData> | FastifyReply>>()
    expect<ReturnType<Windowed['list']>>().type.toBe<OffsetPageOf<ItemData> | FastifyReply>()
    expect<ReturnType<Keyed['list']>>().type.toBe<Promise<CursorPageOf<ItemData> | FastifyReply>>()

    expect<() => Promise<NumberedPageOf<ItemData>>>().type.toBeAssignableTo<Paged['list']>()
    expect<() => Promise<ItemData[]>>().type.not.toBeAssignableTo<Paged['list']>()
  })

  test('the library filters declare the type of their paginator, so list over them is their page', () => {
    type Paged = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof PaginationFilter
    }>>>
    expect<ReturnType<Paged['list']>>().type.toBe<Promise<NumberedPageOf<ItemData> | FastifyReply>>()
    expect<() => Promise<ItemData[]>>().type.not.toBeAssignableTo<Paged['list']>()
    expect<() => Promise<Other[]>>().type.not.toBeAssignableTo<Paged['list']>()

    type Windowed = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof OffsetLimitFilter
    }>>>
    expect<ReturnType<Windowed['list']>>().type.toBe<Promise<OffsetPageOf<ItemData> | FastifyReply>>()
    type Keyed = InstanceType<ReturnType<typeof AsyncGenericListAPIView.with<{
      responseSchema: typeof Item,
      filter: typeof CursorPaginationFilter
    }>>>
    expect<ReturnType<Keyed['list']>>().type.toBe<Promise<CursorPageOf<ItemData> | FastifyReply>>()
  })
  test('a filter\'s bounds are statics of its .with(), numbers', () => {
    expect(PaginationFilter.with).type.toBeCallableWith({ searchFields: ['name'], maxSearchLength: 50, maxPatternLength: 20, maxListLength: 10 })
    expect(PaginationFilter.with).type.not.toBeCallableWith({ maxSearchLength: '50' })
    expect(PaginationFilter.with).type.not.toBeCallableWith({ maxListLenght: 10 })
  })
})

describe('.with(statics): bulk views', () => {
  const AsyncBoth = mix(AsyncBulkAPIViewSet, AsyncGenericViewSet)
  const SyncBoth = mix(BulkAPIViewSet, GenericViewSet)

  test('bulkUpdateSchema types the PUT items, createSchema the POST items, the update body PATCH', () => {
    const Items = AsyncBoth.with({ responseSchema: Item, createSchema: ItemBody, bulkUpdateSchema: Item })
    type Bulk = InstanceType<typeof Items>
    expect<Parameters<Bulk['bulkUpdate']>[0]['body']>().type.toBe<ItemData[]>()
    expect<Parameters<Bulk['bulkCreate']>[0]['body']>().type.toBe<NewItem[]>()
    expect<Parameters<Bulk['updateMany']>[0]['body']>().type.toBe<Partial<NewItem>>()
    expect<ReturnType<Bulk['bulkCreate']>>().type.toBe<Promise<ItemData[] | FastifyReply>>()

    expect<(request: ViewRequest<{ body: ReturnType<typeof Type.Array<typeof Item>> }>) => Promise<void>>().type.toBeAssignableTo<Bulk['bulkUpdate']>()
    expect<(request: ViewRequest<{ body: ReturnType<typeof Type.Array<typeof OtherBody>> }>) => Promise<void>>().type.not.toBeAssignableTo<Bulk['bulkUpdate']>()
  })

  test('the repository has both protocols, typed by responseSchema', () => {
    type AsyncBulk = InstanceType<ReturnType<typeof AsyncBoth.with<{ responseSchema: typeof Item }>>>
    type SyncBulk = InstanceType<ReturnType<typeof SyncBoth.with<{ responseSchema: typeof Item }>>>
    expect<AsyncBulk['repository']>().type.toBeAssignableTo<AsyncRepository<ItemData> & AsyncBulkRepository<ItemData>>()
    expect<SyncBulk['repository']>().type.toBeAssignableTo<Repository<ItemData> & BulkRepository<ItemData>>()
    expect<AsyncBulk['repository']>().type.not.toBeAssignableTo<AsyncBulkRepository<Other>>()
  })

  test('bulk statics are taken, with their types', () => {
    expect(AsyncBoth.with).type.toBeCallableWith({ bulkUpdateSchema: Item, primaryKey: 'id', maxBatchSize: 100, allowUnfiltered: true })
    expect(AsyncBoth.with).type.not.toBeCallableWith({ bulkUpdateSchema: Item, maxBatchSize: '100' })
    expect(AsyncBoth.with).type.not.toBeCallableWith({ bulkUpdateSchemas: Item })
  })
})

describe('.with(statics): what it refuses', () => {
  test('a misspelt static', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchemas: Item })

    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item, detailParams: IdParams })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item, detailParam: IdParams })
  })

  test('a static of a mixin the class is not made of', () => {
    expect(Crud.with).type.toBeCallableWith({ createSchema: ItemBody })
    expect(ReadOnly.with).type.not.toBeCallableWith({ createSchema: ItemBody })

    expect(mix(ConditionalMixin, AsyncGenericViewSet).with).type.toBeCallableWith({ conditional: { etag: true } })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ conditional: { etag: true } })
  })

  test('a static of the wrong type', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ raiseOnNone: false, errorMessage: 'No {} here' })
    expect(ReadOnly.with).type.not.toBeCallableWith({ raiseOnNone: 'no' })

    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Type.Object({ id: Type.Integer() }) })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: { type: 'object', properties: { id: { type: 'integer' } } } })
  })

  test('lastModifiedField must name a field of responseSchema', () => {
    const Stamped = mix(ConditionalMixin, AsyncGenericViewSet)
    const Timed = Type.Object({ id: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
    expect(Stamped.with).type.toBeCallableWith({ responseSchema: Timed, conditional: { lastModifiedField: 'updated_at' } })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Timed, conditional: { lastModifiedField: 'updatedAt' } })
    expect(Stamped.with).type.toBeCallableWith({ responseSchema: Timed, conditional: { lastModifiedField: undefined } })
  })

  test('without responseSchema, lastModifiedField is any string (checked at registration)', () => {
    const Stamped = mix(ConditionalMixin, AsyncGenericViewSet)
    expect(Stamped.with).type.toBeCallableWith({ conditional: { lastModifiedField: 'updatedAt' } })
    expect(Stamped.with).type.not.toBeCallableWith({ conditional: { lastModifiedField: 1 } })
  })

  test('lastModifiedField is a static of ConditionalMixin only', () => {
    expect(mix(ConditionalMixin, AsyncGenericViewSet).with).type.toBeCallableWith({ responseSchema: Item, conditional: { lastModifiedField: 'name' } })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Item, conditional: { lastModifiedField: 'name' } })
  })

  test('actionDependencies is keyed by the actions of the class', () => {
    expect(AsyncGenericViewSet.with).type.toBeCallableWith({ actionDependencies: { destroy: [authenticate] } })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ actionDependencies: { destory: [authenticate] } })

    expect(ReadOnly.with).type.toBeCallableWith({ actionDependencies: { retrieve: [authenticate] } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ actionDependencies: { destroy: [authenticate] } })

    expect(mix(AsyncBulkAPIViewSet, AsyncGenericViewSet).with).type.toBeCallableWith(
      { actionDependencies: { bulkDelete: [authenticate] } }
    )
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ actionDependencies: { bulkDelete: [authenticate] } })
  })

  test('a misspelt actionDependencies key beside a correct one is not refused', () => {
    // The inferred statics satisfy their constraint (the object shares `destroy` with
    // ActionDependencies), so no excess property check runs on the nested object;
    // registration refuses it (FV_ERR_UNKNOWN_ACTION, test/mistakes.test.ts).
    expect.fail(AsyncGenericViewSet.with).type.not.toBeCallableWith(
      { actionDependencies: { destroy: [authenticate], destory: [authenticate] } }
    )
  })
})

describe('.with(statics, methods)', () => {
  test('the parameters and `this` are typed from the actions the methods implement', () => {
    const Items = AsyncGenericViewSet.with({
      responseSchema: Item,
      createSchema: ItemBody,
      detailParams: IdParams,
      repository: asyncMemory
    }, {
      async retrieve (request) {
        expect(request.params).type.toBe<{ id: number }>()
        expect(this.repository).type.toBe<AsyncRepository<ItemData> & typeof asyncMemory>()
        return await this.repository.get({ id: request.params.id }, this.getRepositoryOptions('retrieve'))
      },
      async create (request) {
        expect(request.body).type.toBe<NewItem>()
        return await this.repository.create({ ...request.body }, {})
      },
      getLocation (obj) {
        expect(obj).type.toBe<ItemData>()
        return `/items/${obj.id}`
      },
      getKwargs () {
        expect(this.request.headers).type.toHaveProperty('authorization')
        return { name: this.request.headers.authorization }
      }
    })
    expect(Items).type.toHaveProperty('repository')
  })

  test('a method of the wrong return type is refused', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return { id: 1, name: 'a' } } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return { id: 1, title: 'a' } } })

    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, { async list () { return [item] } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { async list () { return item } })

    expect(Crud.with).type.toBeCallableWith({ responseSchema: Item }, { getLocation () { return '/items/1' } })
    expect(Crud.with).type.not.toBeCallableWith({ responseSchema: Item }, { getLocation () { return 1 } })

    expect(AsyncGenericViewSet.with).type.toBeCallableWith({ responseSchema: Item }, { getKwargs () { return { tenant: 't' } } })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Item }, { getKwargs () { return 'tenant' } })
  })

  test('a method the class does not have is refused', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return null } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { async retreive () { return null } })
    expect(ReadOnly.with).type.not.toBeCallableWith(
      { responseSchema: Item },
      { async retrieve () { return null }, async retreive () { return null } }
    )

    expect(Crud.with).type.toBeCallableWith({ responseSchema: Item }, { async create () { return null } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { async create () { return null } })
  })

  test('a method that is not a function is refused', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return item } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { retrieve: item })
  })

  test('the methods object is optional, and may be empty', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item })
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, {})
    expect(ReadOnly.with).type.toBeCallableWith({})
  })
})

describe('the sync and async families', () => {
  test('the async family takes methods returning promises, not values', () => {
    expect(ReadOnly.with).type.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return item } })
    expect(ReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { retrieve () { return item } })
  })

  test('the sync family takes methods returning values, not promises', () => {
    const SyncReadOnly = mix(ListAPIView, RetrieveAPIView)
    expect(SyncReadOnly.with).type.toBeCallableWith(
      { responseSchema: Item },
      { retrieve () { return item }, list () { return [item] } }
    )
    expect(SyncReadOnly.with).type.not.toBeCallableWith({ responseSchema: Item }, { async retrieve () { return item } })
    expect(SyncReadOnly.with).type.not.toBeCallableWith(
      { responseSchema: Item },
      { list () { return Promise.resolve([item]) } }
    )

    expect(GenericViewSet.with).type.toBeCallableWith({ responseSchema: Item }, { destroy () { return true } })
    expect(GenericViewSet.with).type.not.toBeCallableWith(
      { responseSchema: Item },
      { async destroy () { return true } }
    )
  })

  test('the sync family types its actions as values', () => {
    const Created = CreateAPIView.with({ responseSchema: Item, createSchema: ItemBody }, {
      create (request) {
        expect(request.body).type.toBe<NewItem>()
        return { id: 2, name: request.body.name }
      }
    })
    type Creating = InstanceType<typeof Created>
    expect<ReturnType<Creating['create']>>().type.toBe<ItemData | null | undefined | FastifyReply>()
  })
})

describe('ConditionalMixin', () => {
  const Stamped = mix(ConditionalMixin, AsyncGenericRetrieveAPIView)

  test('its statics and its members are typed', () => {
    expect(Stamped.with).type.toBeCallableWith(
      { responseSchema: Item, conditional: { etag: true, requests: true, require: true } }
    )
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Item, etag: 'strong' })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Item, etag: true })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Item, conditional: { etag: 'strong' } })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Item, conditional: true })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Item, conditional: { etag: true, versionFeild: 'v' } })
  })

  test('a class body sets a group whole, its members typed; the inherited members by spreading super\'s', () => {
    expect(class extends Stamped { static override conditional = { etag: true } }).type.not.toRaiseError()
    expect(class extends Stamped.with({ conditional: { etag: true } }) {
      static override conditional = { ...super.conditional, require: true }
    }).type.not.toRaiseError()
    expect(class extends Stamped { static override conditional = { etag: 'strong' } }).type.toRaiseError()
    expect(class extends AsyncGenericViewSet { static override patch = { formats: ['xml'] as const } }).type.toRaiseError()
    expect(class extends AsyncGenericViewSet { static override patch = { formats: ['json', 'merge-patch'] as const, maxDepth: 8 } }).type.not.toRaiseError()

    const Items = Stamped.with({ responseSchema: Item, conditional: { etag: true } }, {
      async getValidators (request) {
        expect(request.params).type.toBe<unknown>()
        expect(this.checkEtag).type.toBe<(etag: string) => FastifyReply | undefined>()
        return { etag: 'v1' }
      }
    })
    expect<InstanceType<typeof Items>['getValidators']>().type.toBeAssignableTo<(...args: never[]) => Promise<Validators | null | undefined> | Validators | null | undefined>()
  })

  test('a getValidators of the wrong type is refused', () => {
    expect(Stamped.with).type.toBeCallableWith({ responseSchema: Item }, { getValidators () { return { etag: 'v1' } } })
    expect(Stamped.with).type.not.toBeCallableWith(
      { responseSchema: Item },
      { getValidators () { return { etag: 1 } } }
    )
  })

  test('ConditionalMixin alone has no actions', () => {
    expect(ConditionalMixin.with).type.toBeCallableWith({ conditional: { etag: true } })
    expect(ConditionalMixin.with).type.not.toBeCallableWith(
      { conditional: { etag: true } },
      { async retrieve () { return null } }
    )
  })
})

describe('a typed class', () => {
  const Items = ReadOnly.with({ responseSchema: Item, detailParams: IdParams })

  test('takes no type argument', () => {
    expect(class extends Items {
      override async list () { return [item] }
    }).type.not.toRaiseError()
    // Bare toRaiseError(): a type argument given to a class that takes none (TS2508) is refused where it is written; no matcher takes type arguments.
    expect(class extends Items<{ item: Other }> {}).type.toRaiseError()
  })

  test('a method in the class body gets no type from the action it overrides', () => {
    expect(class extends Items {
      override async retrieve (
        request: ViewRequest<{ params: typeof IdParams }>
      ) { return request.params.id === 1 ? item : null }
    }).type.not.toRaiseError()
    // Bare toRaiseError(): an unannotated parameter in a class body is a noImplicitAny error; no matcher can say it.
    // The methods object of .with() is where the parameter is typed from the action.
    expect(class extends Items {
      override async retrieve (request) { return request.params.id === 1 ? item : null }
    }).type.toRaiseError()
  })

  test('has a .with() of its own, for more statics', () => {
    expect(ReadOnly).type.toHaveProperty('with')
    expect(Items).type.toHaveProperty('with')
  })

  test('mixes again like the class it extends', () => {
    expect(mix(AsyncCreateAPIView, Items)).type.toHaveProperty('createSchema')
    expect(mix(AsyncCreateAPIView, Items)).type.toHaveProperty('detailParams')
  })
})

describe('the explicit form mix(...)<M> still works', () => {
  type Models = { item: ItemData, params: { id: number } }

  test('a class with the model type argument and static overrides', () => {
    expect(class extends mix(AsyncListAPIView, AsyncRetrieveAPIView)<Models> {
      static override responseSchema = Item
      static override detailParams = IdParams
      override async list () { return [item] }
      override async retrieve (
        request: ViewRequest<{ params: typeof IdParams }>
      ) { return request.params.id === 1 ? item : null }
    }).type.not.toRaiseError()

    type Reading = InstanceType<typeof ReadOnly<Models>>
    expect<Parameters<Reading['retrieve']>[0]['params']>().type.toBe<{ id: number }>()
    expect<() => Promise<ItemData>>().type.toBeAssignableTo<Reading['retrieve']>()
    expect<() => Promise<Other>>().type.not.toBeAssignableTo<Reading['retrieve']>()
  })

  test('gives the same action types as .with() over the same schemas', () => {
    type Explicit = InstanceType<typeof ReadOnly<Models>>
    type Typed = InstanceType<ReturnType<typeof ReadOnly.with<{
      responseSchema: typeof Item,
      detailParams: typeof IdParams
    }>>>
    expect<Typed['retrieve']>().type.toBe<Explicit['retrieve']>()
    expect<Typed['list']>().type.toBe<Explicit['list']>()
  })
})

declare const route: RouteBuilder<unknown>

describe('.with(statics, methods, routes)', () => {
  test('a custom route\'s handler is typed from its schemas, with the view as this', () => {
    const Search = Type.Object({ q: Type.String() })
    const Typed = AsyncGenericViewSet.with({ responseSchema: Item, repository: asyncMemory }, {}, (route) => ({
      search: route.get('/search', { schema: { querystring: Search }, responseSchema: Type.Array(Item) }, async function (request) {
        expect(request.query).type.toBe<{ q: string }>()
        expect(this.repository).type.toBe<AsyncRepository<ItemData> & typeof asyncMemory>()
        return await this.repository.list({}, { orderBy: [] }, {})
      }),
      rename: route.put('/:id/name', { schema: { params: IdParams, body: ItemBody }, responseSchema: Item }, async function (request) {
        expect(request.params).type.toBe<{ id: number }>()
        expect(request.body).type.toBe<NewItem>()
        return item
      })
    }))
    expect(Typed).type.not.toRaiseError()
  })

  test('a return the route\'s responseSchema refuses is a compile error', () => {
    const Count = Type.Object({ count: Type.Integer() })
    expect(route.get).type.toBeCallableWith('/count', { responseSchema: Count }, () => ({ count: 1 }))
    expect(route.get).type.not.toBeCallableWith('/count', { responseSchema: Count }, () => ({ count: 'one' }))
    expect(route.post).type.not.toBeCallableWith('/count', { schema: { body: ItemBody } }, (request: ViewRequest<{ body: typeof OtherBody }>) => request.body.title)
  })

  test('the third argument is a function of the builder', () => {
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith(
      { responseSchema: Item, repository: asyncMemory },
      {},
      { count: () => 1 }
    )
  })
})

describe('.with(statics, methods) on a subclass of the user\'s', () => {
  test('its methods reach the helpers the subclass declares, typed', () => {
    class ItemBase extends GenericViewSet.with(
      { responseSchema: Item, createSchema: ItemBody, detailParams: IdParams, repository: memory }
    ) {
      label (row: ItemData): string { return `#${row.id} ${row.name}` }
    }
    const Items = ItemBase.with({}, {
      retrieve (request) {
        expect(this.label).type.toBe<(row: ItemData) => string>()
        expect(request.params).type.toBe<{ id: number }>()
        const row = this.repository.get({ id: request.params.id })
        return row === null ? null : { ...row, name: this.label(row) }
      }
    })
    expect<InstanceType<typeof Items>['label']>().type.toBe<(row: ItemData) => string>()
    ItemBase.with({}, {
      retrieve () {
        // @ts-expect-error -- a helper the class does not have is still an error
        this.nothing()
        return null
      }
    })
  })

  test('nested views: prefixParams type the parameters of every action', () => {
    const Nested = GenericViewSet.with(
      {
        responseSchema: Item,
        createSchema: ItemBody,
        detailParams: IdParams,
        prefixParams: Type.Object({ ownerId: Type.Integer() }),
        repository: memory
      }
    )
    type Acting = InstanceType<typeof Nested>
    expect<Parameters<Acting['retrieve']>[0]['params']>().type.toBe<{ ownerId: number } & { id: number }>()
    expect<Parameters<Acting['list']>[0]['params']>().type.toBe<{ ownerId: number }>()
    expect<Parameters<Acting['create']>[0]['params']>().type.toBe<{ ownerId: number }>()
  })
})
