// Bulk views (views layer): all-or-nothing bulk actions on one route (docs/bulk.md), their statics, their
// routes and the abstract action views; the generic ones, over a bulk repository, are in generic-bulk.ts.
import { Type, type TSchema } from '@sinclair/typebox'
import { schemaStatic, type Schema } from '../../core/typebox-lines.js'
import type { preValidationHookHandler } from 'fastify'
import { actionMixin, withSchema, type ActionViewClass, type Get, type ItemOf, type ActionRequest, type Ret, type SentReply } from '../actions/standard.js'
import { Conflict, ContentTooLarge, NotFound } from '../../http/errors.js'
import type { FilterClass } from '../../query/filters.js'
import type { GenericHooks } from '../generic/generic-view.js'
import type { ActionRegistry, ViewBase } from '../mixins.js'
import type { AsyncBulkRepository, BulkRepository, Criteria } from '../../stores/repository.js'
import type { ViewRouteOptions } from '../../routes/types.js'
import type { ActionRoute, StandardAction } from '../view.js'

type BulkReq<Q, B> = ActionRequest<unknown, Q, B>

/** The item types of bulk views, besides `item`: `create`, `bulkUpdate`, `update` and the filter `query`. */
export interface BulkModels {
  item?: unknown,
  create?: unknown,
  bulkUpdate?: unknown,
  update?: unknown,
  query?: unknown
}

/** `bulkCreate`: POST on `bulkRoute`, 201, an array of created objects. */
export interface BulkCreateActions<M, Async> { bulkCreate (request: BulkReq<unknown, Array<Get<M, 'create', unknown>>>): Ret<Async, Array<ItemOf<M>> | SentReply> }
/** `bulkUpdate`: PUT on `bulkRoute`, 204. */
export interface BulkUpdateActions<M, Async> { bulkUpdate (request: BulkReq<unknown, Array<Get<M, 'bulkUpdate', unknown>>>): Ret<Async, unknown> }
type PartialOf<T> = unknown extends T ? unknown : Partial<T>
/** `updateMany`: PATCH on `bulkRoute` with filter parameters, 200, the updated objects; the body is any subset of `update`. */
export interface UpdateManyActions<M, Async> { updateMany (request: BulkReq<Get<M, 'query', unknown>, PartialOf<Get<M, 'update', unknown>>>): Ret<Async, Array<ItemOf<M>> | SentReply> }
/** `bulkDelete`: DELETE on `bulkRoute` with filter parameters, 204. */
export interface BulkDestroyActions<M, Async> { bulkDelete (request: BulkReq<Get<M, 'query', unknown>, unknown>): Ret<Async, unknown> }

/** The hooks around each bulk repository call (docs/bulk.md): plain methods on sync views, awaited on async ones. */
export interface BulkHooks<M, Async> {
  beforeBulkCreate (data: Array<Record<string, unknown>>): Ret<Async, void> | void
  afterBulkCreate (objs: Array<ItemOf<M>>): Ret<Async, void> | void
  beforeBulkUpdate (data: Array<Record<string, unknown>>): Ret<Async, void> | void
  afterBulkUpdate (): Ret<Async, void> | void
  beforeUpdateMany (values: Record<string, unknown>): Ret<Async, void> | void
  afterUpdateMany (objs: Array<ItemOf<M>>): Ret<Async, void> | void
  beforeBulkDelete (): Ret<Async, void> | void
  afterBulkDelete (): Ret<Async, void> | void
}

/** Generic bulk views: a repository with the bulk protocol, and the merge of filter criteria and options. */
export interface GenericBulkMembers<M, Async> extends GenericHooks<M>, BulkHooks<M, Async> {
  readonly repository: Async extends true ? AsyncBulkRepository<ItemOf<M>> : BulkRepository<ItemOf<M>>
  /** `getRepositoryOptions(action)` added to the criteria; a key in both is a `TypeError` (docs/generics.md). */
  mergeRepositoryOptions (kwargs: Criteria, action: string): Record<string, unknown>
}

/** Types `repository` as an async bulk repository (docs/bulk.md). */
export interface WithAsyncBulkRepositoryMixin<M> { readonly repository: AsyncBulkRepository<ItemOf<M>> }
/** Types `repository` as a sync bulk repository. */
export interface WithBulkRepositoryMixin<M> { readonly repository: BulkRepository<ItemOf<M>> }

declare module '../mixins.js' {
  interface ActionRegistry<M> {
    asyncBulkCreate: BulkCreateActions<M, true>
    bulkCreate: BulkCreateActions<M, false>
    asyncBulkUpdate: BulkUpdateActions<M, true>
    bulkUpdate: BulkUpdateActions<M, false>
    asyncUpdateMany: UpdateManyActions<M, true>
    updateMany: UpdateManyActions<M, false>
    asyncBulkDestroy: BulkDestroyActions<M, true>
    bulkDestroy: BulkDestroyActions<M, false>
    asyncGenericBulk: GenericBulkMembers<M, true>
    genericBulk: GenericBulkMembers<M, false>
  }
  interface ActionNameRegistry {
    asyncBulkCreate: 'bulkCreate',
    bulkCreate: 'bulkCreate',
    asyncBulkUpdate: 'bulkUpdate',
    bulkUpdate: 'bulkUpdate'
    asyncUpdateMany: 'updateMany',
    updateMany: 'updateMany',
    asyncBulkDestroy: 'bulkDelete',
    bulkDestroy: 'bulkDelete'
  }
}

/** Statics of bulk views (docs/bulk.md). */
export interface BulkStatics {
  /** Path of all bulk actions, relative to the prefix (default `/bulk`). */
  bulkRoute: string
  /** Per-item schema of the POST body. */
  createSchema: Schema | undefined
  /** Per-item schema of the PUT body; carries the primary key. */
  bulkUpdateSchema: Schema | undefined
  /** Schema of the values PATCH applies to every selected row. */
  updateSchema: Schema | undefined
  /** The filter selecting rows for PATCH and DELETE; required: `null` acts on what `getKwargs` selects. */
  filter: FilterClass | null | undefined
  /** The primary key field of PUT items (default `id`). */
  primaryKey: string
  /** Largest accepted array; a longer one is a 413 before any item is validated (default: no limit). */
  maxBatchSize: number | undefined
  /** PATCH and DELETE without any filter parameter act on every selected row instead of answering 400 (default false). */
  allowUnfiltered: boolean
  /** POST responds with the created objects (default true). */
  returnOnCreate: boolean
  /** PATCH responds with the updated objects (default true). */
  returnOnUpdate: boolean
}

/** A class with the bulk statics, as the bulk mixins build it. */
export type BulkClass = ViewBase & BulkStatics

function batchLimit (klass: BulkClass): Pick<ViewRouteOptions, 'preValidation' | 'responses'> {
  const max = klass.maxBatchSize
  if (max === undefined) return {}
  // Runs before validation, so an oversized batch costs no per-item checks.
  const hook: preValidationHookHandler = (request, _reply, done) => {
    const body = request.body
    done(Array.isArray(body) && body.length > max ? new ContentTooLarge(`A batch holds at most ${max} items; this one has ${body.length}.`) : undefined)
  }
  return { preValidation: [hook], responses: { 413: { errors: [ContentTooLarge] } } }
}

/** The body of POST and PUT: an array of `schema`, as long as `maxBatchSize` allows. */
function batchOptions (klass: BulkClass, route: ActionRoute, schema: TSchema | undefined): ViewRouteOptions {
  const options = { ...route.options, ...batchLimit(klass) }
  return schema === undefined
    ? options
    : withSchema(
      options,
      { body: Type.Array(schema, klass.maxBatchSize === undefined ? {} : { maxItems: klass.maxBatchSize }) }
    )
}

/**
 * The query of PATCH and DELETE on `bulkRoute`, and what the operation says selects the rows.
 * Unless `allowUnfiltered`, the server refuses a request that names no filter parameter
 * (`selection`): a single parameter is then documented as required (and validated so), and
 * several, which OpenAPI cannot mark "at least one of", are named in the description.
 */
function selectionOptions (klass: BulkClass, route: ActionRoute, verb: string): ViewRouteOptions {
  if (klass.filter == null) return { ...route.options, description: `${verb} every row this endpoint selects.` }
  const criteria = klass.filter.criteriaSchema()
  const names = Object.keys(criteria.properties)
  const list = names.map((name) => `\`${name}\``).join(', ')
  if (klass.allowUnfiltered) return withSchema({ ...route.options, description: `${verb} the rows selected by the filter parameters ${list}; with none, every row this endpoint selects.` }, { querystring: criteria })
  if (names.length === 1) return withSchema({ ...route.options, description: `${verb} the rows selected by the filter parameter ${list}, which is required.` }, { querystring: Type.Object(criteria.properties, { required: names }) })
  return withSchema({ ...route.options, description: `${verb} the rows selected by the filter parameters ${list}: at least one is required, and a request without any is a 400.` }, { querystring: criteria })
}

const responseList = (klass: BulkClass): TSchema | undefined => {
  const item = schemaStatic(klass, 'responseSchema')
  return item === undefined ? undefined : Type.Array(item)
}

/** The four bulk actions on `bulkRoute` (docs/bulk.md): what is the same for every class. */
export const BULK_ACTIONS = {
  bulkCreate: { name: 'bulkCreate', method: 'POST', detail: false, status: 201, body: true, throws: [Conflict] },
  bulkUpdate: { name: 'bulkUpdate', method: 'PUT', detail: false, status: 204, body: true, throws: [NotFound, Conflict] },
  updateMany: { name: 'updateMany', method: 'PATCH', detail: false, status: 200, body: true, throws: [Conflict] },
  bulkDelete: { name: 'bulkDelete', method: 'DELETE', detail: false, status: 204 }
} as const satisfies Record<string, StandardAction>

/** The bulk routes of a class, from its statics. */
function bulkActionRoute (klass: BulkClass, action: StandardAction, inherited: ActionRoute): ActionRoute {
  const route = { ...inherited, path: klass.bulkRoute }
  switch (action.name) {
    case 'bulkCreate':
      return { ...route, options: batchOptions(klass, route, schemaStatic(klass, 'createSchema')), responseSchema: responseList(klass), emptyBody: klass.returnOnCreate === false }
    case 'bulkUpdate':
      return { ...route, options: batchOptions(klass, route, schemaStatic(klass, 'bulkUpdateSchema')) }
    case 'updateMany': {
      // Only the fields sent are applied, so each is optional; an empty object would select
      // rows and change nothing: refused rather than a silent no-op. `updateSchema` itself
      // can stay the full PUT body of a CRUD view mixed in.
      const options = selectionOptions(klass, route, 'Updates')
      const values = schemaStatic(klass, 'updateSchema')
      return {
        ...route,
        options: values === undefined
          ? options
          : withSchema(
            options,
            { body: Type.Partial(values, { minProperties: 1 }) }
          ),
        responseSchema: responseList(klass),
        emptyBody: klass.returnOnUpdate === false
      }
    }
    default:
      // Criteria sent in a body instead of the query would be ignored, and the delete would select more than meant: refused (docs/bulk.md).
      return { ...route, options: { ...selectionOptions(klass, route, 'Deletes'), unexpectedContent: 'refuse' } }
  }
}

const BULK_NAMES = new Set(Object.keys(BULK_ACTIONS))

export const bulkMembers = <B extends ViewBase>(Base: B): B & BulkStatics => {
  const cls = class extends Base {
    static bulkRoute = '/bulk'
    static createSchema: Schema | undefined = undefined
    static bulkUpdateSchema: Schema | undefined = undefined
    static updateSchema: Schema | undefined = undefined
    static filter: FilterClass | null | undefined = undefined
    static primaryKey = 'id'
    static maxBatchSize: number | undefined = undefined
    static allowUnfiltered = false
    static returnOnCreate = true
    static returnOnUpdate = true

    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      return BULK_NAMES.has(action.name) ? bulkActionRoute(this, action, route) : route
    }
  }
  for (const hook of ['beforeBulkCreate', 'afterBulkCreate', 'beforeBulkUpdate', 'afterBulkUpdate', 'beforeUpdateMany', 'afterUpdateMany', 'beforeBulkDelete', 'afterBulkDelete']) {
    if (!(hook in cls.prototype)) {
      Object.defineProperty(
        cls.prototype,
        hook,
        { value: () => undefined, writable: true, configurable: true }
      )
    }
  }
  return cls
}

type Abstract<K extends keyof ActionRegistry<unknown>> = ActionViewClass<K, BulkStatics>

/** POST on `bulkRoute`: implement `bulkCreate(request)`, which receives the validated array. */
export const AsyncBulkCreateAPIView = actionMixin<Abstract<'asyncBulkCreate'>>('AsyncBulkCreateAPIView', BULK_ACTIONS.bulkCreate, [], bulkMembers)
/** Sync counterpart of `AsyncBulkCreateAPIView`. */
export const BulkCreateAPIView = actionMixin<Abstract<'bulkCreate'>>('BulkCreateAPIView', BULK_ACTIONS.bulkCreate, [], bulkMembers)
/** PUT on `bulkRoute`, 204: implement `bulkUpdate(request)`. */
export const AsyncBulkUpdateAPIView = actionMixin<Abstract<'asyncBulkUpdate'>>('AsyncBulkUpdateAPIView', BULK_ACTIONS.bulkUpdate, [], bulkMembers)
/** Sync counterpart of `AsyncBulkUpdateAPIView`. */
export const BulkUpdateAPIView = actionMixin<Abstract<'bulkUpdate'>>('BulkUpdateAPIView', BULK_ACTIONS.bulkUpdate, [], bulkMembers)
/** PATCH on `bulkRoute` with filter parameters: implement `updateMany(request)`. */
export const AsyncUpdateManyAPIView = actionMixin<Abstract<'asyncUpdateMany'>>('AsyncUpdateManyAPIView', BULK_ACTIONS.updateMany, [], bulkMembers)
/** Sync counterpart of `AsyncUpdateManyAPIView`. */
export const UpdateManyAPIView = actionMixin<Abstract<'updateMany'>>('UpdateManyAPIView', BULK_ACTIONS.updateMany, [], bulkMembers)
/** DELETE on `bulkRoute` with filter parameters, 204: implement `bulkDelete(request)`. */
export const AsyncBulkDestroyAPIView = actionMixin<Abstract<'asyncBulkDestroy'>>('AsyncBulkDestroyAPIView', BULK_ACTIONS.bulkDelete, [], bulkMembers)
/** Sync counterpart of `AsyncBulkDestroyAPIView`. */
export const BulkDestroyAPIView = actionMixin<Abstract<'bulkDestroy'>>('BulkDestroyAPIView', BULK_ACTIONS.bulkDelete, [], bulkMembers)
