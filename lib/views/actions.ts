import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { APIView } from './api-view.js'
import { Conflict, NotFound } from '../http/errors.js'
import { defineMixin, type ActionRegistry, type MixedClass, type MixinClass, type StaticsOf } from './mixins.js'
import { componentName } from './naming.js'
import { mergeResponses } from '../routes/route-meta.js'
import type { ResponsesMap } from '../routes/types.js'
import { alwaysSent } from '../http/response-headers.js'
import { type View, type ViewClass, abstractAction, type RouteDefinition, type StandardAction } from './view.js'

export type Ret<Async, T> = Async extends true ? Promise<T> : T
export type Get<M, K extends string, D> = M extends { [P in K]: infer T } ? T : D
export type ItemOf<M> = Get<M, 'item', unknown>
type ParamsOf<M> = Get<M, 'params', { id: string }>
/**
 * The request an action receives, structurally: every `FastifyRequest` or `ViewRequest`
 * whose params, query and body have these types fits, however its generics are spelled.
 */
export type Req<P, Q, B> = FastifyRequest & { params: P, query: Q, body: B }
type DetailResult<M> = ItemOf<M> | null | undefined | FastifyReply

/** `list`: GET on the prefix, 200, an array of `responseSchema` (or an envelope). */
export interface ListActions<M, Async> {
  list (request: Req<unknown, Get<M, 'query', unknown>, unknown>): Ret<Async, Get<M, 'list', Array<ItemOf<M>>> | FastifyReply>
}
/** `create`: POST on the prefix, 201; `null` answers 409. */
export interface CreateActions<M, Async> {
  create (request: Req<unknown, unknown, Get<M, 'create', unknown>>): Ret<Async, DetailResult<M>>
  /** The URL sent as `Location` with the 201, or `undefined` for none. */
  getLocation (obj: ItemOf<M>): string | undefined
}
/** `retrieve`: GET on the detail route, 200; `null` answers 404. */
export interface RetrieveActions<M, Async> {
  retrieve (request: Req<ParamsOf<M>, unknown, unknown>): Ret<Async, DetailResult<M>>
}
/** `update`: PUT on the detail route, 200; `null` answers 404. */
export interface UpdateActions<M, Async> {
  update (request: Req<ParamsOf<M>, unknown, Get<M, 'update', unknown>>): Ret<Async, DetailResult<M>>
}
/** `partialUpdate`: PATCH on the detail route, 200; `null` answers 404. */
export interface PartialUpdateActions<M, Async> {
  partialUpdate (request: Req<ParamsOf<M>, unknown, Get<M, 'partialUpdate', unknown>>): Ret<Async, DetailResult<M>>
}
/** Any value but a promise: what a sync action may return when its result is not typed. */
type SyncValue = null | undefined | string | number | boolean | bigint | symbol | FastifyReply | (object & { then?: never })

/** `destroy`: DELETE on the detail route, 204; `null` or `undefined` answers 404. */
export interface DestroyActions<M, Async> {
  destroy (request: Req<ParamsOf<M>, unknown, unknown>): Async extends true ? Promise<unknown> : SyncValue
}

declare module './mixins.js' {
  interface ActionRegistry<M> {
    detail: object
    asyncList: ListActions<M, true>
    list: ListActions<M, false>
    asyncCreate: CreateActions<M, true>
    create: CreateActions<M, false>
    asyncRetrieve: RetrieveActions<M, true>
    retrieve: RetrieveActions<M, false>
    asyncUpdate: UpdateActions<M, true>
    update: UpdateActions<M, false>
    asyncPartialUpdate: PartialUpdateActions<M, true>
    partialUpdate: PartialUpdateActions<M, false>
    asyncDestroy: DestroyActions<M, true>
    destroy: DestroyActions<M, false>
  }
  interface ActionNameRegistry {
    asyncList: 'list',
    list: 'list',
    asyncCreate: 'create',
    create: 'create',
    asyncRetrieve: 'retrieve',
    retrieve: 'retrieve'
    asyncUpdate: 'update',
    update: 'update',
    asyncPartialUpdate: 'partialUpdate',
    partialUpdate: 'partialUpdate'
    asyncDestroy: 'destroy',
    destroy: 'destroy'
  }
}

/** Statics of detail views (docs/actions.md). */
export interface DetailStatics {
  /** A detail action returning `null`/`undefined` answers 404 (default true). */
  raiseOnNone: boolean
  /** The 404 detail; `{}` is replaced by the view's component name. */
  errorMessage: string
  /** Schema of the detail route's path parameters (default `{ id: string }`). */
  detailParams: TSchema
}
/** Statics of list views. */
export interface ListStatics {
  /** Wrap `responseSchema` in an array for `list` (default true); false when `list` returns an envelope. */
  responseSchemaAsList: boolean
}
/** Statics of create views. */
export interface CreateStatics {
  /** Body schema of `create`. */
  createSchema: TSchema | undefined
  /** Respond with the created object (default true); false keeps the 201 with an empty body. */
  returnOnCreate: boolean
}
/** Statics of update views. */
export interface UpdateStatics {
  /** Body schema of `update` (default `createSchema`). */
  updateSchema: TSchema | undefined
  /** Body schema of `partialUpdate` (default: `updateSchema` with every property optional). */
  partialUpdateSchema: TSchema | undefined
  /** Respond with the updated object (default true); false keeps the 200 with an empty body. */
  returnOnUpdate: boolean
}

type Statics = StaticsOf<typeof APIView>
/** The class type of an action mixin: generic in its item types (`<{ item: Item }>`). */
export type ActionViewClass<K extends keyof ActionRegistry<unknown>, S> = MixedClass<K, Statics & S>

type Loose = ViewClass & Partial<DetailStatics & ListStatics & CreateStatics & UpdateStatics> & { responseSchema?: TSchema, getLocation?: unknown }

/** The class of detail views: `detailRoute`, `raiseOnNone`, `errorMessage`, `detailParams`. */
export const DetailViewMixin = defineMixin<ActionViewClass<'detail', DetailStatics>>('DetailViewMixin', (Base) =>
  class DetailViewMixin extends Base {
    static raiseOnNone = true
    static errorMessage = '{} does not exist'
    static detailParams: TSchema = Type.Object({ id: Type.String() })
  })

function notFound (klass: Loose): (() => Error) | undefined {
  if (klass.raiseOnNone === false) return undefined
  const message = klass.errorMessage!.replace('{}', componentName(klass))
  return () => new NotFound(message)
}

const detailSchema = (klass: Loose, body?: TSchema): { schema: { params: TSchema, body?: TSchema } } =>
  ({ schema: body === undefined ? { params: klass.detailParams! } : { params: klass.detailParams!, body } })

const updateBody = (klass: Loose): TSchema | undefined => klass.updateSchema ?? klass.createSchema

function partialBody (klass: Loose): TSchema | undefined {
  if (klass.partialUpdateSchema !== undefined) return klass.partialUpdateSchema
  const full = updateBody(klass)
  return full === undefined ? undefined : Type.Partial(full)
}

const defaultGetLocation = (): string | undefined => undefined

/** Whether a create view sends `Location`: its `getLocation` is its own, not the default. */
const providesLocation = (k: ViewClass): boolean => (k.prototype as { getLocation?: unknown }).getLocation !== defaultGetLocation

/** The documented `Location` of a create view that provides one: its getLocation answers every created object (docs/actions.md). */
const LOCATION_HEADER = alwaysSent(Type.String({ format: 'uri-reference', description: 'The URL of the created item.' }))

/** The standard CRUD actions (docs/actions.md), as the registration reads them. */
export const STANDARD_ACTIONS = {
  list: {
    name: 'list',
    method: 'GET',
    detail: false,
    status: 200,
    options: () => ({}),
    responseSchema: (k) => {
      const schema = (k as Loose).responseSchema
      return schema !== undefined && (k as Loose).responseSchemaAsList !== false ? Type.Array(schema) : schema
    }
  },
  create: {
    name: 'create',
    method: 'POST',
    detail: false,
    status: 201,
    throws: [Conflict],
    options: (k) => ((k as Loose).createSchema === undefined ? {} : { schema: { body: (k as Loose).createSchema } }),
    responseSchema: (k) => (k as Loose).responseSchema,
    onNone: () => () => new Conflict(),
    emptyBody: (k) => (k as Loose).returnOnCreate === false,
    after: (k) => {
      if (!providesLocation(k)) return undefined
      return (view, value, reply) => {
        const location = (view as View & Pick<CreateActions<object, false>, 'getLocation'>).getLocation(value)
        if (location !== undefined) reply.header('location', location)
      }
    }
  },
  retrieve: {
    name: 'retrieve',
    method: 'GET',
    detail: true,
    status: 200,
    throws: [NotFound],
    options: (k) => detailSchema(k as Loose),
    responseSchema: (k) => (k as Loose).responseSchema,
    onNone: (k) => notFound(k as Loose)
  },
  update: {
    name: 'update',
    method: 'PUT',
    detail: true,
    status: 200,
    throws: [NotFound, Conflict],
    options: (k) => detailSchema(k as Loose, updateBody(k as Loose)),
    responseSchema: (k) => (k as Loose).responseSchema,
    onNone: (k) => notFound(k as Loose),
    emptyBody: (k) => (k as Loose).returnOnUpdate === false
  },
  partialUpdate: {
    name: 'partialUpdate',
    method: 'PATCH',
    detail: true,
    status: 200,
    throws: [NotFound, Conflict],
    options: (k) => detailSchema(k as Loose, partialBody(k as Loose)),
    responseSchema: (k) => (k as Loose).responseSchema,
    onNone: (k) => notFound(k as Loose),
    emptyBody: (k) => (k as Loose).returnOnUpdate === false
  },
  destroy: {
    name: 'destroy',
    method: 'DELETE',
    detail: true,
    status: 204,
    throws: [NotFound],
    options: (k) => detailSchema(k as Loose),
    onNone: (k) => notFound(k as Loose),
    emptyBody: () => true
  }
} satisfies Record<string, StandardAction>

/**
 * Builds one action mixin: `members` adds the action's statics and hooks (and may
 * implement the action), then the action joins `standardActions()`; a method nothing
 * implements yet starts out abstract.
 */
export function actionMixin<C> (name: string, action: StandardAction, requires: MixinClass[], members?: (base: typeof APIView) => typeof APIView): C {
  return defineMixin<C>(name, (Base) => {
    const Parent = members === undefined ? Base : members(Base)
    const cls = class extends Parent {
      static override standardActions (): StandardAction[] {
        return [...super.standardActions(), action]
      }
    }
    if (!(action.name in cls.prototype)) {
      Object.defineProperty(cls.prototype, action.name, { value: abstractAction(action.name), writable: true, configurable: true })
    }
    return cls
  }, requires)
}

export const listMembers = (Base: typeof APIView): typeof APIView => class extends Base {
  static responseSchemaAsList = true
}
export const createMembers = (Base: typeof APIView): typeof APIView => {
  const cls = class extends Base {
    static createSchema: TSchema | undefined = undefined
    static returnOnCreate = true

    // The 201 documents `Location` when the view provides one (docs/actions.md).
    static override extraResponses (route: RouteDefinition, method: string): ResponsesMap | undefined {
      const inherited = super.extraResponses(route, method)
      if (route.name !== 'create' || !providesLocation(this)) return inherited
      return mergeResponses(inherited, { [route.status]: { headers: { location: LOCATION_HEADER } } })
    }
  }
  Object.defineProperty(cls.prototype, 'getLocation', { value: defaultGetLocation, writable: true, configurable: true })
  return cls
}
export const updateMembers = (Base: typeof APIView): typeof APIView => class extends Base {
  static updateSchema: TSchema | undefined = undefined
  static partialUpdateSchema: TSchema | undefined = undefined
  static returnOnUpdate = true
}

export const DETAIL: MixinClass[] = [DetailViewMixin]

/** GET on the prefix: implement `async list(request)`. */
export const AsyncListAPIView = actionMixin<ActionViewClass<'asyncList', ListStatics>>('AsyncListAPIView', STANDARD_ACTIONS.list, [], listMembers)
/** Sync counterpart of `AsyncListAPIView`: `list(request)` returns a value. */
export const ListAPIView = actionMixin<ActionViewClass<'list', ListStatics>>('ListAPIView', STANDARD_ACTIONS.list, [], listMembers)
/** POST on the prefix, 201: implement `async create(request)`; `getLocation(obj)` sets `Location`. */
export const AsyncCreateAPIView = actionMixin<ActionViewClass<'asyncCreate', CreateStatics>>('AsyncCreateAPIView', STANDARD_ACTIONS.create, [], createMembers)
/** Sync counterpart of `AsyncCreateAPIView`. */
export const CreateAPIView = actionMixin<ActionViewClass<'create', CreateStatics>>('CreateAPIView', STANDARD_ACTIONS.create, [], createMembers)
/** GET on the detail route: implement `async retrieve(request)`. */
export const AsyncRetrieveAPIView = actionMixin<ActionViewClass<'asyncRetrieve' | 'detail', DetailStatics>>('AsyncRetrieveAPIView', STANDARD_ACTIONS.retrieve, DETAIL)
/** Sync counterpart of `AsyncRetrieveAPIView`. */
export const RetrieveAPIView = actionMixin<ActionViewClass<'retrieve' | 'detail', DetailStatics>>('RetrieveAPIView', STANDARD_ACTIONS.retrieve, DETAIL)
/** PUT on the detail route: implement `async update(request)`. */
export const AsyncUpdateAPIView = actionMixin<ActionViewClass<'asyncUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('AsyncUpdateAPIView', STANDARD_ACTIONS.update, DETAIL, updateMembers)
/** Sync counterpart of `AsyncUpdateAPIView`. */
export const UpdateAPIView = actionMixin<ActionViewClass<'update' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('UpdateAPIView', STANDARD_ACTIONS.update, DETAIL, updateMembers)
/** PATCH on the detail route: implement `async partialUpdate(request)`. */
export const AsyncPartialUpdateAPIView = actionMixin<ActionViewClass<'asyncPartialUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('AsyncPartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, DETAIL, updateMembers)
/** Sync counterpart of `AsyncPartialUpdateAPIView`. */
export const PartialUpdateAPIView = actionMixin<ActionViewClass<'partialUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('PartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, DETAIL, updateMembers)
/** DELETE on the detail route, 204: implement `async destroy(request)`. */
export const AsyncDestroyAPIView = actionMixin<ActionViewClass<'asyncDestroy' | 'detail', DetailStatics>>('AsyncDestroyAPIView', STANDARD_ACTIONS.destroy, DETAIL)
/** Sync counterpart of `AsyncDestroyAPIView`. */
export const DestroyAPIView = actionMixin<ActionViewClass<'destroy' | 'detail', DetailStatics>>('DestroyAPIView', STANDARD_ACTIONS.destroy, DETAIL)
