// The standard CRUD actions (views layer): their requests and results as types, their statics, the
// detail mixin, and how an action mixin is built (`actionMixin`). The members of each action are beside.
import { Type } from '@sinclair/typebox'
import { schemaStatic, type Schema } from '../../core/typebox-lines.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { APIView } from '../api-view.js'
import { Conflict, NotFound } from '../../http/errors.js'
import { defineMixin, type ActionRegistry, type MixedClass, type MixinClass, type StaticsOf, type ViewBase } from '../mixins.js'
import { componentName } from '../naming.js'
import type { PatchFormat } from '../patch/patch.js'
import type { RouteSchemas, ViewRouteOptions } from '../../routes/types.js'
import { abstractAction, type ActionRoute, type StandardAction } from '../view.js'

export type Ret<Async, T> = Async extends true ? Promise<T> : T
export type Get<M, K extends string, D> = M extends { [P in K]: infer T } ? T : D
export type ItemOf<M> = Get<M, 'item', unknown>
type ParamsOf<M> = Get<M, 'params', { id: string }>
/**
 * The request an action receives, structurally: every `FastifyRequest` or `ViewRequest`
 * whose params, query and body have these types fits, however its generics are spelled.
 */
export type ActionRequest<P, Q, B> = FastifyRequest & { params: P, query: Q, body: B }
/**
 * The request's own reply, returned by an action that answered by hand (a 304 from
 * `checkLastModified`): the response is already on its way. Named, so that a compiler
 * message about an action's return type reads `Promise<Item[] | SentReply>`, not Fastify's
 * reply type spelt out with its eight type arguments.
 */
export interface SentReply extends FastifyReply {}
type DetailResult<M> = ItemOf<M> | null | undefined | SentReply

/** `list`: GET on the prefix, 200, an array of `responseSchema` (or an envelope). */
export interface ListActions<M, Async> {
  list (request: ActionRequest<Get<M, 'prefixParams', unknown>, Get<M, 'query', unknown>, unknown>): Ret<Async, Get<M, 'list', Array<ItemOf<M>>> | SentReply>
}
/** `create`: POST on the prefix, 201; `null` answers 409. */
export interface CreateActions<M, Async> {
  create (request: ActionRequest<Get<M, 'prefixParams', unknown>, unknown, Get<M, 'create', unknown>>): Ret<Async, DetailResult<M>>
  /** The URL sent as `Location` with the 201, or `undefined` for none. */
  getLocation (obj: ItemOf<M>): string | undefined
}
/** `retrieve`: GET on the detail route, 200; `null` answers 404. */
export interface RetrieveActions<M, Async> {
  retrieve (request: ActionRequest<ParamsOf<M>, unknown, unknown>): Ret<Async, DetailResult<M>>
}
/** `update`: PUT on the detail route, 200; `null` answers 404. */
export interface UpdateActions<M, Async> {
  update (request: ActionRequest<ParamsOf<M>, unknown, Get<M, 'update', unknown>>): Ret<Async, DetailResult<M>>
}
/** `partialUpdate`: PATCH on the detail route, 200; `null` answers 404. */
export interface PartialUpdateActions<M, Async> {
  partialUpdate (request: ActionRequest<ParamsOf<M>, unknown, Get<M, 'partialUpdate', unknown>>): Ret<Async, DetailResult<M>>
  /**
   * The current object a merge patch or JSON Patch applies to, `null` when there is none
   * (docs/patch.md). Generic views read it through their repository; an action view that
   * accepts patch formats implements it.
   */
  getPatchTarget (request: ActionRequest<ParamsOf<M>, unknown, unknown>): Ret<Async, ItemOf<M> | null | undefined>
}
/** Any value but a promise: what a sync action may return when its result is not typed. */
type SyncValue =
  null | undefined | string | number | boolean | bigint | symbol | SentReply | (object & { then?: never })

/** `destroy`: DELETE on the detail route, 204; `null` or `undefined` answers 404. */
export interface DestroyActions<M, Async> {
  destroy (request: ActionRequest<ParamsOf<M>, unknown, unknown>): Async extends true ? Promise<unknown> : SyncValue
}

declare module '../mixins.js' {
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
  detailParams: Schema
}
/** Statics of list views. */
export interface ListStatics {
  /** Wrap `responseSchema` in an array for `list` (default true); false when `list` returns an envelope. */
  responseSchemaAsList: boolean
  /**
   * The item schema of `list` when it sends less than one object does (a summary, the article
   * without its body); default `responseSchema`. Its page, its component and its type follow it.
   */
  listItemSchema: Schema | undefined
}
/** Statics of create views. */
export interface CreateStatics {
  /** Body schema of `create`. */
  createSchema: Schema | undefined
  /** Respond with the created object (default true); false keeps the 201 with an empty body. */
  returnOnCreate: boolean
}
/** Statics of update views. */
export interface UpdateStatics {
  /** Body schema of `update` (default `createSchema`). */
  updateSchema: Schema | undefined
  /** Body schema of `partialUpdate` (default: `updateSchema` with every property optional). */
  partialUpdateSchema: Schema | undefined
  /** Respond with the updated object (default true); false keeps the 200 with an empty body. */
  returnOnUpdate: boolean
  /** What `partialUpdate` takes besides plain JSON, and its bounds (docs/patch.md): `{ formats, maxOperations, maxDepth, maxSize }`. */
  patch: PatchOptions
  /** The formats in effect: `patch.formats`, or the family's default. */
  acceptedPatchFormats (): readonly PatchFormat[]
}

/** The statics of patch documents, as one group: `static patch = { formats: ['json', 'merge-patch'] }`. */
export interface PatchOptions {
  /**
   * The body formats `partialUpdate` takes, chosen by `Content-Type` (docs/patch.md); unset: the
   * family's default (`['json']` on action views, all three on generic views over an atomic repository).
   */
  formats?: readonly PatchFormat[] | undefined
  /** The operations a JSON Patch may hold (default 1,000; docs/patch.md, "Limits"). */
  maxOperations?: number
  /** How many levels arrays and objects may nest in a patch and in the patched representation (default 128). */
  maxDepth?: number
  /**
   * The largest patched representation, in characters of its JSON text, and the work a patch
   * may take, in steps; unset: the route's body limit.
   */
  maxSize?: number | undefined
}

type Statics = StaticsOf<typeof APIView>
/** The class type of an action mixin: generic in its item types (`<{ item: Item }>`). */
export type ActionViewClass<K extends keyof ActionRegistry<unknown>, S> = MixedClass<K, Statics & S>

/** Adds request schemas to options, keeping the ones already there. */
export const withSchema = (options: ViewRouteOptions, schema: RouteSchemas): ViewRouteOptions =>
  ({ ...options, schema: { ...options.schema, ...schema } })

/** The 404 detail of a missing object, `{}` the view's component name: `errorMessage` by default. */
export const DEFAULT_ERROR_MESSAGE = '{} does not exist'

/** The class of detail views: `detailRoute`, `raiseOnNone`, `errorMessage`, `detailParams`. */
export const DetailViewMixin = defineMixin<ActionViewClass<'detail', DetailStatics>>('DetailViewMixin', (Base) =>
  class DetailViewMixin extends Base {
    static raiseOnNone = true
    static errorMessage = DEFAULT_ERROR_MESSAGE
    static detailParams: Schema = Type.Object({ id: Type.String() })

    // Every detail action reads its path parameters with detailParams and, unless
    // raiseOnNone is off, answers 404 when it finds nothing (and documents it only then:
    // a view whose object is always there, such as the signed-in user, turns it off).
    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (!action.detail) return route
      const params = schemaStatic(this, 'detailParams')
      const withParams = { ...route, options: withSchema(route.options, { params }) }
      if (!this.raiseOnNone) return withParams
      const message = this.errorMessage.replace('{}', componentName(this))
      return { ...withParams, onNone: () => new NotFound(message), throws: [...(route.throws ?? []), NotFound] }
    }
  })

/** The standard CRUD actions (docs/actions.md): what is the same for every class. */
export const STANDARD_ACTIONS = {
  list: { name: 'list', method: 'GET', detail: false, status: 200 },
  create: { name: 'create', method: 'POST', detail: false, status: 201, body: true, throws: [Conflict] },
  retrieve: { name: 'retrieve', method: 'GET', detail: true, status: 200 },
  update: { name: 'update', method: 'PUT', detail: true, status: 200, body: true, throws: [Conflict] },
  partialUpdate: { name: 'partialUpdate', method: 'PATCH', detail: true, status: 200, body: true, throws: [Conflict] },
  destroy: { name: 'destroy', method: 'DELETE', detail: true, status: 204 }
} as const satisfies Record<string, StandardAction>

/**
 * Builds one action mixin: `members` adds the action's statics and hooks (and may
 * implement the action), then the action joins `standardActions()`; a method nothing
 * implements yet starts out abstract. `B` is the base `members` needs: what the mixins
 * in `requires` put below it.
 */
export function actionMixin<C, B extends ViewBase = ViewBase> (
  name: string,
  action: StandardAction,
  requires: MixinClass[],
  members?: (base: B) => ViewBase
): C {
  return defineMixin<C, B>(name, (Base) => {
    const Parent: ViewBase = members === undefined ? Base : members(Base)
    const cls = class extends Parent {
      static override standardActions (): StandardAction[] {
        return [...super.standardActions(), action]
      }
    }
    if (!(action.name in cls.prototype)) {
      Object.defineProperty(
        cls.prototype,
        action.name,
        { value: abstractAction(action.name), writable: true, configurable: true }
      )
    }
    return cls
  }, requires)
}

/** What every detail action mixin requires below it. */
export const DETAIL: MixinClass[] = [DetailViewMixin]
