import { Type, type TSchema } from '@sinclair/typebox'
import { schemaStatic, type Schema } from '../core/typebox-lines.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { APIView } from './api-view.js'
import { Conflict, NotFound } from '../http/errors.js'
import { defineMixin, type ActionRegistry, type MixedClass, type MixinClass, type StaticsOf, type ViewBase } from './mixins.js'
import { componentName } from './naming.js'
import { hasPatchHooks, patchHooks, patchMediaTypes, type PatchFormat, type PatchTarget } from './patch.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { honoursPreconditions } from '../stores/repository.js'
import { toList } from '../core/list.js'
import { DEFAULT_PATCH_LIMITS } from '../http/patch-budget.js'
import { mergeResponses } from '../routes/route-meta.js'
import type { ResponsesMap, RouteSchemas, ViewRouteOptions } from '../routes/types.js'
import { alwaysSent } from '../http/response-headers.js'
import { type ActionRoute, type AfterAction, type View, abstractAction, type RouteDefinition, type StandardAction } from './view.js'

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
  detailParams: Schema
}
/** Statics of list views. */
export interface ListStatics {
  /** Wrap `responseSchema` in an array for `list` (default true); false when `list` returns an envelope. */
  responseSchemaAsList: boolean
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
  /**
   * The body formats `partialUpdate` takes, chosen by `Content-Type` (docs/patch.md); unset: the
   * family's default (`['json']` on action views, all three on generic views over an atomic repository).
   */
  patchFormats: readonly PatchFormat[] | undefined
  /** The formats in effect: `patchFormats`, or the default. */
  acceptedPatchFormats (): readonly PatchFormat[]
  /** The operations a JSON Patch may hold (default 1,000; docs/patch.md, "Limits"). */
  maxPatchOperations: number
  /** How many levels arrays and objects may nest in a patch and in the patched representation (default 128). */
  maxPatchDepth: number
  /**
   * The largest patched representation, in characters of its JSON text, and the work a patch
   * may take, in steps; unset: the route's body limit.
   */
  maxPatchSize: number | undefined
}

type Statics = StaticsOf<typeof APIView>
/** The class type of an action mixin: generic in its item types (`<{ item: Item }>`). */
export type ActionViewClass<K extends keyof ActionRegistry<unknown>, S> = MixedClass<K, Statics & S>

/** Adds request schemas to options, keeping the ones already there. */
export const withSchema = (options: ViewRouteOptions, schema: RouteSchemas): ViewRouteOptions =>
  ({ ...options, schema: { ...options.schema, ...schema } })

/** The class of detail views: `detailRoute`, `raiseOnNone`, `errorMessage`, `detailParams`. */
export const DetailViewMixin = defineMixin<ActionViewClass<'detail', DetailStatics>>('DetailViewMixin', (Base) =>
  class DetailViewMixin extends Base {
    static raiseOnNone = true
    static errorMessage = '{} does not exist'
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

const defaultGetLocation = (): string | undefined => undefined

/** Whether a create view sends `Location`: its `getLocation` is its own, not the default. */
const providesLocation = (k: ViewBase): boolean => (k.prototype as Partial<CreateActions<unknown,
  false>>).getLocation !== defaultGetLocation

/** Sends the `Location` of a created object, when `getLocation` gives one. */
const sendLocation: AfterAction = (view, value, reply) => {
  const location = (view as View & Pick<CreateActions<unknown, false>, 'getLocation'>).getLocation(value)
  if (location !== undefined) reply.header('location', location)
}

/** The documented `Location` of a create view that provides one: its getLocation answers every created object (docs/actions.md). */
const LOCATION_HEADER = alwaysSent(Type.String({ format: 'uri-reference', description: 'The URL of the created item.' }))

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

/** The statics and route of `list`: an array of `responseSchema`, unless `responseSchemaAsList` is off. */
export const listMembers = <B extends ViewBase>(Base: B): B & ListStatics => class extends Base {
  static responseSchemaAsList = true

  static override getActionRoute (action: StandardAction): ActionRoute {
    const route = super.getActionRoute(action)
    const item = action.name === 'list' && this.responseSchemaAsList ? schemaStatic(this, 'responseSchema') : undefined
    return item === undefined ? route : { ...route, responseSchema: Type.Array(item) }
  }
}

/** The statics and route of `create`: its body, the 409 of `null`, the 201's `Location`. */
export const createMembers = <B extends ViewBase>(Base: B): B & CreateStatics => {
  const cls = class extends Base {
    static createSchema: Schema | undefined = undefined
    static returnOnCreate = true

    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name !== 'create') return route
      return {
        ...route,
        options: this.createSchema === undefined
          ? route.options
          : withSchema(
            route.options,
            { body: this.createSchema }
          ),
        onNone: () => new Conflict(),
        emptyBody: this.returnOnCreate === false,
        after: providesLocation(this) ? sendLocation : undefined
      }
    }

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

/** Stands for `getPatchTarget` until a view implements it: action views read their objects themselves. */
function noPatchTarget (this: View): never {
  throw new ConfigurationError('FV_ERR_PATCH_TARGET', `${this.constructor.name}.getPatchTarget is not implemented: a partial update that accepts patch documents reads the object they apply to through it`)
}

/** The body of `update`: `updateSchema`, else `createSchema`. */
function updateBody (klass: ViewBase & Partial<UpdateStatics & CreateStatics>): TSchema | undefined {
  return klass.updateSchema === undefined ? schemaStatic(klass, 'createSchema') : schemaStatic(klass, 'updateSchema')
}

/** The statics and routes of `update` and `partialUpdate`: their bodies, empty responses, and patch formats. */
export const updateMembers = <B extends ViewBase>(Base: B): B & UpdateStatics => {
  const cls = class extends Base {
    static updateSchema: Schema | undefined = undefined
    static partialUpdateSchema: Schema | undefined = undefined
    static returnOnUpdate = true
    static patchFormats: readonly PatchFormat[] | undefined = undefined
    static maxPatchOperations = DEFAULT_PATCH_LIMITS.maxOperations
    static maxPatchDepth = DEFAULT_PATCH_LIMITS.maxDepth
    static maxPatchSize: number | undefined = undefined
    /** Owned by the create mixins; the default body of `update` when `updateSchema` is unset. */
    declare static createSchema: Schema | undefined

    // A generic view (a `repository` static) takes every format when its repository writes
    // atomically (the patch's read and write are then one step) and it has the representation
    // a patch applies to. An action view reads its
    // objects itself, so it takes JSON unless it says otherwise.
    static acceptedPatchFormats (): readonly PatchFormat[] {
      if (this.patchFormats !== undefined) return this.patchFormats
      // A patch document applies to the representation; one in an envelope is the envelope's, which no client means.
      return 'repository' in this && honoursPreconditions(this.repository) && this.responseSchema !== undefined && this.envelope === undefined ? ALL_PATCH_FORMATS : ['json']
    }

    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name !== 'update' && action.name !== 'partialUpdate') return route
      const full = updateBody(this)
      const partial = schemaStatic(this, 'partialUpdateSchema') ?? (full === undefined ? undefined : Type.Partial(full))
      const body = action.name === 'update' ? full : partial
      const options = body === undefined ? route.options : withSchema(route.options, { body })
      // A partial update takes exactly its formats: another `+json` type is a 415, not a plain body.
      const formats = action.name === 'partialUpdate' && partial !== undefined ? patchMediaTypes(this.acceptedPatchFormats(), partial) : undefined
      return { ...route, options, emptyBody: this.returnOnUpdate === false, bodyMediaTypes: formats }
    }

    static override assertRegistrable (): void {
      super.assertRegistrable()
      const patches = this.acceptedPatchFormats().filter((f) => f !== 'json')
      if (patches.length === 0 || !this.standardActions().some((a) => a.name === 'partialUpdate')) return
      if (this.responseSchema === undefined) {
        throw new ConfigurationError('FV_ERR_PATCH_TARGET', `Cannot register ${this.name}: patchFormats ${patches.join(', ')} apply to the representation responseSchema describes; set responseSchema`)
      }
      if ((this.prototype as Partial<PatchTarget>).getPatchTarget === noPatchTarget) { // the prototype of a view class with this mixin
        throw new ConfigurationError('FV_ERR_PATCH_TARGET', `Cannot register ${this.name}: patchFormats ${patches.join(', ')} need the current object; implement getPatchTarget(request), or set patchFormats = ['json']`)
      }
      // A repository from an instance getter is only known per request: its class answers for it.
      const repository: unknown = 'repository' in this ? this.repository : undefined
      if (repository !== undefined && !honoursPreconditions(repository)) {
        throw new ConfigurationError('FV_ERR_NOT_ATOMIC', `Cannot register ${this.name}: patchFormats ${patches.join(', ')} read the object and write the change in one step, ` +
          'but its repository does not declare atomicPreconditions: true. Set patchFormats = [\'json\'], or evaluate options.precondition in update ' +
          'in the same step as the write and declare it (docs/repositories.md, "Conditional writes").')
      }
    }

    // Accept-Patch on every answer of the route, and patch documents turned into the members they change.
    static override routeHooks (route: RouteDefinition, method: string): ReturnType<ViewBase['routeHooks']> {
      const inherited = super.routeHooks(route, method)
      // Both update mixins bring this hook; the route gets the patch hooks once.
      if (route.name !== 'partialUpdate' || method !== 'PATCH' || route.options.schema?.body === undefined || hasPatchHooks(toList(inherited.preValidation))) return inherited
      const limits = {
        maxOperations: this.maxPatchOperations,
        maxDepth: this.maxPatchDepth,
        maxSize: this.maxPatchSize ?? route.bodyLimit
      }
      const hooks = patchHooks(
        this,
        route,
        this.acceptedPatchFormats(),
        route.options.schema.body,
        updateBody(this),
        limits
      )
      // After the hooks of the mixins below (a precondition check, RFC 9110 §13.2.1: preconditions
      // come before the content is looked at), wherever this mixin stands in the mix.
      return {
        ...inherited,
        preValidation: [...toList(inherited.preValidation), hooks.preValidation],
        onSend: [hooks.onSend, ...toList(inherited.onSend)],
        ...(hooks.applyPatch === undefined ? {} : { beforeAction: [...inherited.beforeAction ?? [], hooks.applyPatch] })
      }
    }

    // A 415 names the formats the route takes (RFC 5789 section 2.2).
    static override extraResponses (route: RouteDefinition, method: string): ResponsesMap | undefined {
      const inherited = super.extraResponses(route, method)
      if (route.name !== 'partialUpdate' || method !== 'PATCH') return inherited
      return mergeResponses(inherited, { [route.status]: { headers: { 'accept-patch': ACCEPT_PATCH_HEADER } } })
    }
  }
  // A generic view reads the target through its repository (GenericViewMixin, below).
  if (!('getPatchTarget' in cls.prototype)) Object.defineProperty(cls.prototype, 'getPatchTarget', { value: noPatchTarget, writable: true, configurable: true })
  return cls
}

const ALL_PATCH_FORMATS: readonly PatchFormat[] = ['json', 'merge-patch', 'json-patch']

/** The documented `Accept-Patch` of a partial update's success response. */
const ACCEPT_PATCH_HEADER = alwaysSent(Type.String({ description: 'The media types PATCH takes here (RFC 5789 section 3.1).', examples: ['application/json, application/merge-patch+json, application/json-patch+json'] }))

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
