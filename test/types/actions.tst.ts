import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import {
  APIViewSet, AsyncAPIViewSet, AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncListCreateAPIView,
  AsyncPartialUpdateAPIView, AsyncReadOnlyAPIViewSet, AsyncRetrieveAPIView, AsyncRetrieveUpdateDestroyAPIView,
  AsyncUpdateAPIView, CreateAPIView, ListAPIView, ListCreateAPIView, ReadOnlyAPIViewSet, RetrieveAPIView,
  RetrieveUpdateDestroyAPIView, UpdateAPIView, mix
} from '../../lib/index.js'
import type { ActionModels, ViewRequest, Schema } from '../../lib/types.js'
import { IdParams, Item, ItemBody, ListQuery, OtherBody, StringIdParams } from './schemas.js'

type ItemData = Static<typeof Item>
type NewItem = Static<typeof ItemBody>
const item: ItemData = { id: 1, name: 'a' }
const Envelope = Type.Object({ items: Type.Array(Item), total: Type.Integer() })
type EnvelopeData = Static<typeof Envelope>

type Models = { item: ItemData, params: { id: number } }
type CrudModels = Models & { create: NewItem, update: NewItem, partialUpdate: Partial<NewItem> }

// A subclass whose override does not fit fails to compile because the override's type is not
// assignable to the base member's type. The negative tests assert that relation,
// `expect<Override>().type.not.toBeAssignableTo<View['member']>()`, instead of matching the
// compiler's message (which changes between TypeScript versions), each next to the correct
// override, asserted the same way and as a class that compiles.
const AsyncListRetrieve = mix(AsyncListAPIView, AsyncRetrieveAPIView)
type ListRetrieving = InstanceType<typeof AsyncListRetrieve<Models>>

describe('mix(...)<M>: list', () => {
  test('an async list returning Promise<Item[]> compiles on the async family', () => {
    expect(class extends mix(AsyncListAPIView, AsyncRetrieveAPIView)<Models> {
      override async list () { return [item] }
      override async retrieve () { return item }
    }).type.not.toRaiseError()

    expect(class extends mix(AsyncListAPIView, AsyncRetrieveAPIView)<Models> {
      override list (): Promise<ItemData[]> { return Promise.resolve([]) }
      override async retrieve () { return null }
    }).type.not.toRaiseError()
  })

  test('an async list returning other objects is an error', () => {
    expect<() => Promise<ItemData[]>>().type.toBeAssignableTo<ListRetrieving['list']>()
    expect<() => Promise<Array<{ wrong: 1 }>>>().type.not.toBeAssignableTo<ListRetrieving['list']>()
  })

  test('a sync list (a value, not a promise) is an error on the async family', () => {
    expect<() => ItemData[]>().type.not.toBeAssignableTo<ListRetrieving['list']>()
  })

  test('the sync family returns values: Item[] compiles, a promise is an error', () => {
    expect(class extends ListAPIView<Models> {
      override list () { return [item] }
    }).type.not.toRaiseError()

    type Listing = InstanceType<typeof ListAPIView<Models>>
    expect<() => ItemData[]>().type.toBeAssignableTo<Listing['list']>()
    expect<() => Promise<ItemData[]>>().type.not.toBeAssignableTo<Listing['list']>()
  })

  test('the query of list is typed from { query }', () => {
    expect(class extends AsyncListAPIView<{ item: ItemData, query: Static<typeof ListQuery> }> {
      override async list (request: ViewRequest<{ querystring: typeof ListQuery }>) { return [{ id: request.query.page, name: 'a' }] }
    }).type.not.toRaiseError()

    type Querying = InstanceType<typeof AsyncListAPIView<{ item: ItemData, query: Static<typeof ListQuery> }>>
    expect<(request: ViewRequest<{ querystring: typeof ListQuery }>) => Promise<ItemData[]>>().type.toBeAssignableTo<Querying['list']>()
    expect<(request: ViewRequest<{ querystring: typeof OtherBody }>) => Promise<ItemData[]>>().type.not.toBeAssignableTo<Querying['list']>()
  })

  test('responseSchemaAsList = false with { list: Envelope } types list as the envelope', () => {
    expect(class extends AsyncListAPIView<{ item: ItemData, list: EnvelopeData }> {
      static override responseSchema = Envelope
      static override responseSchemaAsList = false
      override async list () { return { items: [item], total: 1 } }
    }).type.not.toRaiseError()

    type AsyncEnveloped = InstanceType<typeof AsyncListAPIView<{ item: ItemData, list: EnvelopeData }>>
    expect<() => Promise<EnvelopeData>>().type.toBeAssignableTo<AsyncEnveloped['list']>()
    expect<() => Promise<ItemData[]>>().type.not.toBeAssignableTo<AsyncEnveloped['list']>()

    type Enveloped = InstanceType<typeof ListAPIView<{ item: ItemData, list: EnvelopeData }>>
    expect<ReturnType<Enveloped['list']>>().type.toBe<EnvelopeData | FastifyReply>()
  })
})

describe('mix(...)<M>: retrieve', () => {
  test('retrieve may return the item, null, undefined or a reply', () => {
    expect(class extends AsyncRetrieveAPIView<Models> {
      override async retrieve (
        request: ViewRequest<{ params: typeof IdParams }>
      ) { return request.params.id === 1 ? item : null }
    }).type.not.toRaiseError()

    expect(class extends AsyncRetrieveAPIView<Models> {
      override async retrieve () { return undefined }
    }).type.not.toRaiseError()

    expect(class extends AsyncRetrieveAPIView<Models> {
      override async retrieve () { return this.reply.code(204).send() }
    }).type.not.toRaiseError()

    expect(class extends RetrieveAPIView<Models> {
      override retrieve (
        request: FastifyRequest<{ Params: { id: number } }>
      ) { return request.params.id === 1 ? item : this.reply.code(204) }
    }).type.not.toRaiseError()

    type Retrieving = InstanceType<typeof AsyncRetrieveAPIView<Models>>
    expect<ReturnType<Retrieving['retrieve']>>().type.toBe<Promise<ItemData | null | undefined | FastifyReply>>()
  })

  test('retrieve returning something else than the item is an error', () => {
    type Retrieving = InstanceType<typeof AsyncRetrieveAPIView<Models>>
    expect<() => Promise<ItemData | null>>().type.toBeAssignableTo<Retrieving['retrieve']>()
    expect<() => Promise<{ wrong: number }>>().type.not.toBeAssignableTo<Retrieving['retrieve']>()

    type SyncRetrieving = InstanceType<typeof RetrieveAPIView<Models>>
    expect<() => ItemData>().type.toBeAssignableTo<SyncRetrieving['retrieve']>()
    expect<() => Promise<ItemData>>().type.not.toBeAssignableTo<SyncRetrieving['retrieve']>()
  })

  test('the request params are typed from { params }', () => {
    type Retrieving = InstanceType<typeof AsyncRetrieveAPIView<Models>>
    expect<Parameters<Retrieving['retrieve']>[0]['params']>().type.toBe<{ id: number }>()

    expect<(request: ViewRequest<{ params: typeof IdParams }>) => Promise<ItemData>>().type.toBeAssignableTo<Retrieving['retrieve']>()
    expect<(request: ViewRequest<{ params: typeof StringIdParams }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Retrieving['retrieve']>()
  })

  test('without { params } the detail params are { id: string }', () => {
    type Default = InstanceType<typeof AsyncRetrieveAPIView<{ item: ItemData }>>
    expect<Parameters<Default['retrieve']>[0]['params']>().type.toBe<{ id: string }>()

    expect(class extends AsyncRetrieveAPIView<{ item: ItemData }> {
      override async retrieve (_request: ViewRequest<{ params: typeof StringIdParams }>) { return item }
    }).type.not.toRaiseError()

    expect<(request: ViewRequest<{ params: typeof StringIdParams }>) => Promise<ItemData>>().type.toBeAssignableTo<Default['retrieve']>()
    expect<(request: ViewRequest<{ params: typeof IdParams }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Default['retrieve']>()
  })

  test('a handler that expects more params than { params } gives is an error', () => {
    // Actions are declared with method syntax, so their parameters are checked bivariantly:
    // a request type that is a subtype of the declared one (here: an extra `slug`) passes.
    // A documented limit (docs/actions.md): `.fail` records it; mismatched types are still errors.
    const ExtraParams = Type.Object({ id: Type.Integer(), slug: Type.String() })
    type Retrieving = InstanceType<typeof AsyncRetrieveAPIView<Models>>
    expect.fail<(request: ViewRequest<{ params: typeof ExtraParams }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Retrieving['retrieve']>()
  })
})

describe('mix(...)<M>: create', () => {
  test('the create body is typed from { create }', () => {
    type Creating = InstanceType<typeof AsyncCreateAPIView<{ item: ItemData, create: NewItem }>>
    expect<Parameters<Creating['create']>[0]['body']>().type.toBe<NewItem>()

    expect(class extends AsyncCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async create (request: ViewRequest<{ body: typeof ItemBody }>) { return request.body.name === 'taken' ? null : { id: 2, name: request.body.name } }
    }).type.not.toRaiseError()

    expect<(request: ViewRequest<{ body: typeof ItemBody }>) => Promise<ItemData>>().type.toBeAssignableTo<Creating['create']>()
    expect<(request: ViewRequest<{ body: typeof OtherBody }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Creating['create']>()

    expect(class extends CreateAPIView<{ item: ItemData, create: NewItem }> {
      override create (request: FastifyRequest<{ Body: NewItem }>) { return { id: 2, name: request.body.name } }
    }).type.not.toRaiseError()
  })

  test('getLocation takes the created item', () => {
    type Creating = InstanceType<typeof AsyncCreateAPIView<{ item: ItemData, create: NewItem }>>
    expect<Parameters<Creating['getLocation']>>().type.toBe<[obj: ItemData]>()
    expect<ReturnType<Creating['getLocation']>>().type.toBe<string | undefined>()

    expect(class extends AsyncCreateAPIView<{ item: ItemData, create: NewItem }> {
      override async create () { return item }
      override getLocation (obj: ItemData) { return `/items/${obj.id}` }
    }).type.not.toRaiseError()

    expect<(obj: ItemData) => string>().type.toBeAssignableTo<Creating['getLocation']>()
    expect<(obj: { slug: string }) => string>().type.not.toBeAssignableTo<Creating['getLocation']>()
    expect<(obj: ItemData) => number>().type.not.toBeAssignableTo<Creating['getLocation']>()
  })
})

describe('mix(...)<M>: update and partialUpdate', () => {
  test('the bodies are typed from { update, partialUpdate }', () => {
    type Updating = InstanceType<typeof AsyncUpdateAPIView<CrudModels>>
    type Patching = InstanceType<typeof AsyncPartialUpdateAPIView<CrudModels>>
    expect<Parameters<Updating['update']>[0]['body']>().type.toBe<NewItem>()
    expect<Parameters<Updating['update']>[0]['params']>().type.toBe<{ id: number }>()
    expect<Parameters<Patching['partialUpdate']>[0]['body']>().type.toBe<Partial<NewItem>>()

    expect(class extends mix(AsyncUpdateAPIView, AsyncPartialUpdateAPIView)<CrudModels> {
      override async update (request: ViewRequest<{ params: typeof IdParams, body: typeof ItemBody }>) {
        return {
          id: request.params.id,
          name: request.body.name
        }
      }

      override async partialUpdate (request: FastifyRequest<{ Params: { id: number }, Body: Partial<NewItem> }>) {
        return { id: request.params.id, name: request.body.name ?? 'unchanged' }
      }
    }).type.not.toRaiseError()
  })

  test('a body other than the declared one is an error', () => {
    type Updating = InstanceType<typeof AsyncUpdateAPIView<CrudModels>>
    type Patching = InstanceType<typeof AsyncPartialUpdateAPIView<CrudModels>>
    expect<(request: ViewRequest<{ params: typeof IdParams, body: typeof ItemBody }>) => Promise<ItemData>>().type.toBeAssignableTo<Updating['update']>()
    expect<(request: ViewRequest<{ params: typeof IdParams, body: typeof OtherBody }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Updating['update']>()

    expect<(request: ViewRequest<{ params: typeof IdParams, body: typeof ItemBody }>) => Promise<ItemData>>().type.toBeAssignableTo<Patching['partialUpdate']>()
    expect<(request: ViewRequest<{ params: typeof IdParams, body: typeof OtherBody }>) => Promise<ItemData>>().type.not.toBeAssignableTo<Patching['partialUpdate']>()
  })

  test('the sync family returns values', () => {
    expect(class extends UpdateAPIView<CrudModels> {
      override update (request: ViewRequest<{ params: typeof IdParams, body: typeof ItemBody }>) {
        return {
          id: request.params.id,
          name: request.body.name
        }
      }
    }).type.not.toRaiseError()

    type SyncUpdating = InstanceType<typeof UpdateAPIView<CrudModels>>
    expect<() => ItemData>().type.toBeAssignableTo<SyncUpdating['update']>()
    expect<() => Promise<ItemData>>().type.not.toBeAssignableTo<SyncUpdating['update']>()
  })
})

describe('the generic argument of a mixed class', () => {
  // A view is constructed with the request and the reply: the accepted models make a constructable class.
  const request = {} as FastifyRequest
  const reply = {} as FastifyReply
  const ListOnly = mix(AsyncListAPIView)

  test('keys outside ActionModels are refused', () => {
    expect(ListOnly<{ item: ItemData }>).type.toBeConstructableWith(request, reply)
    expect<{ itme: ItemData }>().type.not.toBeAssignableTo<ActionModels>()
    // Bare toRaiseError(): a type argument outside its constraint is refused where it is written; no matcher takes type arguments.
    expect(ListOnly<{ itme: ItemData }>).type.toRaiseError()
  })

  test('a misspelt key next to a valid one is refused', () => {
    // Type arguments get no excess property check of their own; MixedClass maps keys
    // outside ActionModels to `never`, so `crate` is an error instead of silently ignored.
    expect(AsyncAPIViewSet<{ item: ItemData, create: NewItem }>).type.toBeConstructableWith(request, reply)
    // Bare toRaiseError(): as above, the constraint of a type argument.
    expect(AsyncAPIViewSet<{ item: ItemData, crate: NewItem }>).type.toRaiseError()
  })

  test('without it, item types are unknown', () => {
    type Untyped = InstanceType<typeof AsyncReadOnlyAPIViewSet>
    expect<ReturnType<Untyped['retrieve']>>().type.toBe<Promise<unknown>>()
  })
})

describe('the statics of a mixed class', () => {
  const ListOnly = mix(AsyncListAPIView)
  const ListCreate = mix(AsyncListAPIView, AsyncCreateAPIView)
  const ReadOnly = mix(AsyncListAPIView, AsyncRetrieveAPIView)
  const Crud = mix(
    AsyncListAPIView,
    AsyncCreateAPIView,
    AsyncRetrieveAPIView,
    AsyncUpdateAPIView,
    AsyncPartialUpdateAPIView,
    AsyncDestroyAPIView
  )

  test('detail mixins add detailParams, raiseOnNone and errorMessage', () => {
    expect(ReadOnly.detailParams).type.toBe<Schema>()
    expect(ReadOnly.raiseOnNone).type.toBe<boolean>()
    expect(ReadOnly.errorMessage).type.toBe<string>()
    expect(mix(AsyncDestroyAPIView)).type.toHaveProperty('detailParams')
    expect(ListOnly).type.not.toHaveProperty('detailParams')
    expect(ListCreate).type.not.toHaveProperty('raiseOnNone')
    expect(ListCreate).type.not.toHaveProperty('errorMessage')
  })

  test('list adds responseSchemaAsList; create adds createSchema and returnOnCreate', () => {
    expect(ListOnly.responseSchemaAsList).type.toBe<boolean>()
    expect(ListCreate.createSchema).type.toBe<Schema | undefined>()
    expect(ListCreate.returnOnCreate).type.toBe<boolean>()
    expect(ListOnly).type.not.toHaveProperty('createSchema')
    expect(ReadOnly).type.not.toHaveProperty('createSchema')
    expect(ReadOnly).type.not.toHaveProperty('returnOnCreate')
    expect(mix(AsyncRetrieveAPIView)).type.not.toHaveProperty('responseSchemaAsList')
  })

  test('update mixins add updateSchema, partialUpdateSchema, returnOnUpdate (and read createSchema)', () => {
    expect(Crud.updateSchema).type.toBe<Schema | undefined>()
    expect(Crud.partialUpdateSchema).type.toBe<Schema | undefined>()
    expect(Crud.returnOnUpdate).type.toBe<boolean>()
    expect(mix(AsyncPartialUpdateAPIView)).type.toHaveProperty('createSchema')
    expect(ListCreate).type.not.toHaveProperty('updateSchema')
    expect(ReadOnly).type.not.toHaveProperty('returnOnUpdate')
  })

  test('the APIView statics are kept', () => {
    expect(ListOnly.responseSchema).type.toBe<Schema | undefined>()
    expect(Crud.detailRoute).type.toBe<string>()
    expect(Crud.getDetailRoute).type.toBeCallableWith('retrieve')
  })

  test('a subclass overrides the statics it has, and only those', () => {
    expect(class extends ReadOnly<Models> {
      static override responseSchema = Item
      static override detailParams = IdParams
      static override raiseOnNone = false
      static override errorMessage = 'No {} here'
      static override responseSchemaAsList = true
    }).type.not.toRaiseError()

    expect(class extends Crud<CrudModels> {
      static override createSchema = ItemBody
      static override returnOnCreate = false
      static override updateSchema = ItemBody
      static override returnOnUpdate = false
    }).type.not.toRaiseError()

    // `static override createSchema` on ListOnly fails because ListOnly has no such static;
    // an initializer `= 'no'` is a string, and raiseOnNone a boolean.
    expect(ListCreate).type.toHaveProperty('createSchema')
    expect(ListOnly).type.not.toHaveProperty('createSchema')
    expect<boolean>().type.toBeAssignableTo<typeof ReadOnly.raiseOnNone>()
    expect<string>().type.not.toBeAssignableTo<typeof ReadOnly.raiseOnNone>()
  })
})

describe('viewsets', () => {
  test('every viewset takes the generic argument', () => {
    expect(class extends AsyncAPIViewSet<CrudModels> {
      static override responseSchema = Item
      static override createSchema = ItemBody
      static override detailParams = IdParams
      override async list () { return [item] }
      override async create (request: ViewRequest<{ body: typeof ItemBody }>) {
        return {
          id: 2,
          name: request.body.name
        }
      }

      override getLocation (obj: ItemData) { return `/items/${obj.id}` }
      override async retrieve (
        request: ViewRequest<{ params: typeof IdParams }>
      ) { return request.params.id === 1 ? item : null }

      override async update (request: ViewRequest<{ params: typeof IdParams, body: typeof ItemBody }>) {
        return {
          id: request.params.id,
          name: request.body.name
        }
      }

      override async partialUpdate (request: FastifyRequest<{ Params: { id: number }, Body: Partial<NewItem> }>) { return { id: request.params.id, name: request.body.name ?? 'a' } }
      override async destroy () { return true }
    }).type.not.toRaiseError()

    expect(class extends APIViewSet<CrudModels> {
      override list () { return [item] }
      override create (request: ViewRequest<{ body: typeof ItemBody }>) { return { id: 2, name: request.body.name } }
      override retrieve () { return item }
      override update () { return item }
      override partialUpdate () { return null }
      override destroy () { return true }
    }).type.not.toRaiseError()

    type Sync = InstanceType<typeof APIViewSet<CrudModels>>
    expect<() => ItemData>().type.toBeAssignableTo<Sync['retrieve']>()
    expect<() => Promise<ItemData>>().type.not.toBeAssignableTo<Sync['retrieve']>()
  })

  test('a sync destroy returning a promise is an error', () => {
    // A sync destroy may return any value but a promise, like every other sync action.
    type Sync = InstanceType<typeof APIViewSet<CrudModels>>
    expect<() => boolean>().type.toBeAssignableTo<Sync['destroy']>()
    expect<() => Promise<boolean>>().type.not.toBeAssignableTo<Sync['destroy']>()
  })

  test('AsyncAPIViewSet and APIViewSet have every CRUD method', () => {
    type Async = InstanceType<typeof AsyncAPIViewSet<CrudModels>>
    type Sync = InstanceType<typeof APIViewSet<CrudModels>>
    expect<Async>().type.toHaveProperty('getLocation')
    expect<Async>().type.toHaveProperty('destroy')
    expect<ReturnType<Async['list']>>().type.toBe<Promise<ItemData[] | FastifyReply>>()
    expect<ReturnType<Async['partialUpdate']>>().type.toBe<Promise<ItemData | null | undefined | FastifyReply>>()
    expect<ReturnType<Sync['list']>>().type.toBe<ItemData[] | FastifyReply>()
    expect<ReturnType<Sync['update']>>().type.toBe<ItemData | null | undefined | FastifyReply>()
    expect<boolean | null>().type.toBeAssignableTo<ReturnType<Sync['destroy']>>()
  })

  test('the read-only, list-create and retrieve-update-destroy viewsets have their methods only', () => {
    type ReadOnlyAsync = InstanceType<typeof AsyncReadOnlyAPIViewSet<Models>>
    type ReadOnlySync = InstanceType<typeof ReadOnlyAPIViewSet<Models>>
    type ListCreateAsync = InstanceType<typeof AsyncListCreateAPIView<Models>>
    type ListCreateSync = InstanceType<typeof ListCreateAPIView<Models>>
    type RudAsync = InstanceType<typeof AsyncRetrieveUpdateDestroyAPIView<Models>>
    type RudSync = InstanceType<typeof RetrieveUpdateDestroyAPIView<Models>>

    expect<ReturnType<ReadOnlyAsync['retrieve']>>().type.toBe<Promise<ItemData | null | undefined | FastifyReply>>()
    expect<ReturnType<ReadOnlySync['retrieve']>>().type.toBe<ItemData | null | undefined | FastifyReply>()
    expect<ReadOnlyAsync>().type.not.toHaveProperty('create')
    expect<ReadOnlySync>().type.not.toHaveProperty('destroy')

    expect<ListCreateAsync>().type.toHaveProperty('getLocation')
    expect<ReturnType<ListCreateSync['create']>>().type.toBe<ItemData | null | undefined | FastifyReply>()
    expect<ListCreateAsync>().type.not.toHaveProperty('retrieve')

    expect<ReturnType<RudAsync['destroy']>>().type.toBe<Promise<unknown>>()
    expect<RudSync>().type.toHaveProperty('partialUpdate')
    expect<RudAsync>().type.not.toHaveProperty('list')
    expect<RudSync>().type.not.toHaveProperty('create')
  })

  test('viewset statics follow their mixins', () => {
    expect(AsyncAPIViewSet.createSchema).type.toBe<Schema | undefined>()
    expect(APIViewSet.detailParams).type.toBe<Schema>()
    expect(AsyncReadOnlyAPIViewSet).type.not.toHaveProperty('createSchema')
    expect(ListCreateAPIView).type.not.toHaveProperty('detailParams')
    expect(RetrieveUpdateDestroyAPIView).type.not.toHaveProperty('responseSchemaAsList')
  })
})
