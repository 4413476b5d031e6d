import { schemaStatic } from '../core/typebox-lines.js'
import type { FastifyRequest } from 'fastify'
import {
  actionMixin, createMembers, DETAIL, STANDARD_ACTIONS, updateMembers,
  type ActionViewClass, type CreateStatics, type DetailStatics, type Get, type ItemOf, type ListStatics, type Ret,
  type UpdateStatics
} from './actions.js'
import { loadParent, objectParams, parentObject, parentScope, type ParentLookup } from './parent.js'
import { judges, LIBRARY_OBJECT_PERMISSIONS, OBJECT_ACTIONS, objectPermission, type ObjectAction } from './object-permissions.js'
import { Forbidden, NotFound } from '../http/errors.js'
import type { APIView } from './api-view.js'
import type { BaseFilter, FilterClass } from '../query/filters.js'
import { defineMixin, type ActionRegistry, type MixinClass, type ViewBase } from './mixins.js'
import type { ConditionalMembers } from './conditional.js'
import { fieldNamesOf, honoursPreconditions, storedFieldNamesOf, type AsyncRepository, type Criteria, type FieldOf, type Operator, type Precondition, type Repository, type RepositoryOptions } from '../stores/repository.js'
import { patchPrecondition } from './patch.js'
import type { ActionRoute, BeforeAction, RouteDefinition, StandardAction } from './view.js'
import { mergeResponses } from '../routes/route-meta.js'
import type { ResponsesMap } from '../routes/types.js'
import { genericListClass } from './generic-list.js'
import { then } from '../core/maybe-promise.js'
import { comparesVersion } from './versioned.js'
import { ConfigurationError } from '../core/configuration-error.js'

type AnyRepository = Repository<unknown> | AsyncRepository<unknown>

/** What `resolveFilter` hands the repository: positional criteria (SQL expressions) and keyword criteria. */
export interface FilterArgs { args: unknown[], kwargs: Criteria }

/**
 * What `getKwargs` returns: criteria keyed by the fields of the repository's rows (`field`, or
 * `field__op` with an operator) when the view's models say what its rows are (`row`), else any
 * criteria. Every key is optional, so an answer naming none of the fields (a misspelt column) is
 * a compile error rather than a query the store refuses on the first request.
 */
export type KwargsOf<M> = M extends { row: infer R } ? CriteriaOf<R> : Criteria

/** Criteria over the fields of rows `R`: each field, or `field__op` with an operator, optional. */
export type CriteriaOf<R> = { [P in FieldOf<R> | `${FieldOf<R>}__${Operator}`]?: unknown }

/** The `get*` hooks of generic views (docs/generics.md), shared by CRUD and bulk ones; `M` the view's models. */
export interface GenericHooks<M = unknown> {
  /** Criteria merged into every repository call of an action (tenant scoping). */
  getKwargs (action?: string): KwargsOf<M>
  /** Options forwarded to every repository call of an action; default: `repositoryOptions`. */
  getRepositoryOptions (action: string): RepositoryOptions
  /** The filter of this request, built from its validated query; `undefined` without a `filter`. */
  getFilter (request: FastifyRequest): BaseFilter | undefined
  /** Turns a filter into repository criteria. Default: no positional criteria, `filter.asKwargs()`. */
  resolveFilter (filter: BaseFilter): FilterArgs
  /** `getScopeKwargs(action)` merged into the filter (they win over what the client sent), then `resolveFilter`. */
  getFilterArgs (filter: BaseFilter | undefined, action?: string): FilterArgs
  /**
   * What every repository call of an action is limited to: the parent's scope of a nested view
   * (`parent`), with `getKwargs(action)` over it. Override `getKwargs`, not this.
   */
  getScopeKwargs (action?: string): Criteria
  /**
   * The object permission of one object (DRF's `check_object_permissions`): throw (`Forbidden`,
   * a 403) to refuse. Called with the row a retrieve read, and with the current row of an update,
   * a partial update, a destroy and every row a bulk write changes, inside the write's atomic step
   * (docs/generics.md, "Object permissions"). Synchronous; the request is `this.request`.
   */
  checkObjectPermissions (object: ItemOf<M>, action: string): void
  /** The parent object of a nested view (`parent`), once the request read it; `undefined` otherwise. */
  getParent (): unknown
}

/** Values a create writes: the body, with the scope of the action over it. */
export type CreateValues<M> = Get<M, 'create', Record<string, unknown>> & Record<string, unknown>

/**
 * The writes of the generic views, one per kind (docs/generics.md, "Write seams"): each receives
 * what the action computed, including `options.precondition` (If-Match, a patch's check, the
 * object permission), which a replacement passes on to keep the write atomic.
 */
export interface WriteSeams<M, Async> {
  /** Stores a new object: `repository.create(values, options)`; `null` answers 409. */
  performCreate (values: CreateValues<M>, options: RepositoryOptions): Ret<Async, ItemOf<M> | null>
  /** Changes the object `criteria` select: `repository.update(criteria, values, options)`; `null` answers 404. */
  performUpdate (
    criteria: Criteria,
    values: Record<string, unknown>,
    options: RepositoryOptions
  ): Ret<Async, ItemOf<M> | null>
  /** Deletes the object `criteria` select: `repository.delete(criteria, options)`; `false` answers 404. */
  performDestroy (criteria: Criteria, options: RepositoryOptions): Ret<Async, boolean>
}

/** The members every generic CRUD view has, typed by the view's item type. */
export interface GenericMembers<M, Async> extends GenericHooks<M>, WriteSeams<M, Async> {
  /** The repository the actions call; override the getter to take it from `this.server`. */
  readonly repository: Async extends true ? AsyncRepository<ItemOf<M>> : Repository<ItemOf<M>>
}

declare module './mixins.js' {
  interface ActionRegistry<M> {
    asyncGeneric: GenericMembers<M, true>
    generic: GenericMembers<M, false>
  }
}

/** Statics of generic views; `R` is the repository protocol of the family (and of bulk actions, when mixed in). */
export interface GenericStatics<R = object> {
  /** The repository instance (or leave it unset and override the `repository` getter). */
  repository: R | undefined
  /** The filter class whose fields are the list's query parameters and whose pagination shapes its page; `null` for none. */
  filter: FilterClass | null
  /** Extra options forwarded to every repository call. */
  repositoryOptions: RepositoryOptions
  /** The parent of a nested view: read once per request, 404 when missing, scoping every call (docs/generics.md). */
  parent: ParentLookup | undefined
  /** The actions whose objects `checkObjectPermissions` judges (and whose 403 is documented); unset: every action on named objects. */
  objectPermissionActions: readonly ObjectAction[] | undefined
}

/** A base with the statics of `GenericViewMixin` below it: what every generic action builds on. */
export type GenericBase = ViewBase & GenericStatics

/**
 * The base a mixin of the user's over generic views extends, with their members and statics
 * typed (`Async`: the async family's repository): `defineMixin<C, GenericMixinBase>('SoftDelete',
 * (Base) => class extends Base { ... }, [GenericViewMixin])` (docs/generics.md, "Write seams").
 * The construct signature takes `any[]` for the reason `ViewBase` does (TS2545).
 */
export type GenericMixinBase<Async = false> = (new (...args: any[]) => APIView & GenericMembers<unknown, Async>) & Omit<ViewBase, 'prototype'> & GenericStatics
// A generic view may also be conditional: the members of ConditionalMixin its writes call when present.
type GenericView = APIView & GenericMembers<unknown, false> & Partial<Pick<ConditionalMembers, 'writePrecondition' | 'versionCriteria' | 'versionMissed'>>

/**
 * A request as the generic actions read it: a JSON object body, path parameters and a query
 * by name, as the route's schemas validated them.
 */
type GenericRequest = FastifyRequest<{
  Body: Record<string, unknown>,
  Params: Criteria,
  Querystring: Record<string, unknown>
}>

/** The `getKwargs` of the library, which adds nothing to a create's values. */
const LIBRARY_KWARGS = new WeakSet<object>()
/** The library's write seams, which hand the values to the repository as they are. */
const LIBRARY_SEAMS = new WeakSet<object>()

const SEAM_OF: Record<string, string> = { create: 'performCreate', update: 'performUpdate', partialUpdate: 'performUpdate' }

/**
 * Whether an action of a view writes what its body holds through the library's own seam: a
 * `performCreate` or `performUpdate` of the user's may map the values, so its body is not checked
 * against the repository's fields. Bulk actions have no seam.
 */
export const writesThroughLibrarySeam = (klass: { prototype: object }, action: string): boolean =>
  SEAM_OF[action] === undefined || LIBRARY_SEAMS.has(Reflect.get(klass.prototype, SEAM_OF[action]) as object)

/** Whether a view's creates store their body as it is: its `getKwargs` is the library's, which adds no field. */
export const addsNoKwargs = (klass: { prototype: object }): boolean => LIBRARY_KWARGS.has(Reflect.get(klass.prototype, 'getKwargs') as object)

/** The fields a view's scope adds to every create when its `getKwargs` is the library's: its parent's scope, or none. */
export const scopeFieldsOf = (klass: object): readonly string[] =>
  Object.keys((klass as Partial<GenericStatics>).parent?.scope ?? {}) // any view class; generic ones have `parent`

/** The class of generic views: a repository, an optional filter, the `get*` hooks (docs/generics.md). */
export const GenericViewMixin = defineMixin<ActionViewClass<'generic', GenericStatics>>('GenericViewMixin', (Base) => {
  const cls = class GenericViewMixin extends Base {
    static repository: object | undefined = undefined
    static filter: FilterClass | null = null
    static repositoryOptions: RepositoryOptions = {}
    static parent: ParentLookup | undefined = undefined
    static objectPermissionActions: readonly ObjectAction[] | undefined = undefined

    static override assertRegistrable (): void {
      super.assertRegistrable()
      const getter = Object.getOwnPropertyDescriptor(cls.prototype, 'repository')?.get
      let own: PropertyDescriptor | undefined
      for (let proto = this.prototype; proto !== cls.prototype &&
        own === undefined; proto = Object.getPrototypeOf(proto)) {
        own = Object.getOwnPropertyDescriptor(proto, 'repository')
      }
      if (this.repository === undefined && (own === undefined || own.get === getter)) {
        throw new ConfigurationError('FV_ERR_NO_REPOSITORY', `Cannot register ${this.name}: set its static repository or override its repository getter`)
      }
      // A field the repository does not have would fail on the first request that uses it (or,
      // on a store without fixed fields, match nothing and order nothing): refused now, by name.
      // An object permission is checked on the row a write changes, in the write's atomic step.
      const notJudged = this.objectPermissionActions?.find((action) =>
        !(OBJECT_ACTIONS as readonly string[]).includes(action))
      if (notJudged !== undefined) {
        throw new ConfigurationError('FV_ERR_UNKNOWN_ACTION', `Cannot register ${this.name}: objectPermissionActions names "${String(notJudged)}", which is not an action ` +
          `on objects the client names (${OBJECT_ACTIONS.join(', ')})`)
      }
      const judgesWrites = OBJECT_ACTIONS.some((action) => action !== 'retrieve' && judges(this, action))
      if (judgesWrites && this.repository !== undefined && !honoursPreconditions(this.repository)) {
        throw new ConfigurationError('FV_ERR_NOT_ATOMIC', `Cannot register ${this.name}: checkObjectPermissions judges the row a write changes in the same step as ` +
          'the write, but its repository does not declare atomicPreconditions: true (docs/repositories.md, "Conditional writes")')
      }
      if (this.filter == null) return
      const fixed = fieldNamesOf(this.repository)
      // A store of rows of any shape: a field that neither the response schema nor any stored row has.
      const stored = fixed === undefined ? storedFieldNamesOf(this.repository) : undefined
      if (fixed === undefined && stored === undefined) return
      const known = new Set(fixed ?? [...stored!, ...Object.keys(Object(schemaStatic(this, 'responseSchema')?.properties) as object)])
      const unknown = this.filter.namedFields().find(({ field }) => !known.has(field))
      if (unknown === undefined) return
      const lacking = fixed === undefined ? 'which neither its responseSchema nor a row of its repository has (their fields' : 'which its repository does not have (its fields'
      throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${this.name}: ${this.filter.name}.${unknown.static} names "${unknown.field}", ${lacking}: ${[...known].join(', ')})`)
    }

    // A nested view can answer 404 on every route (its parent is missing), and one with object
    // permissions 403 on the routes that act on named objects: both documented where they can happen.
    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      const added = [
        ...(this.parent === undefined ? [] : [NotFound]),
        ...(judges(this, action.name) ? [Forbidden] : [])
      ]
      return added.length === 0 ? route : { ...route, throws: [...(route.throws ?? []), ...added] }
    }

    // A route of the view's own reads the parent first too (routeHooks below): its 404 is documented there.
    static override extraResponses (route: RouteDefinition, method: string): ResponsesMap | undefined {
      const inherited = super.extraResponses(route, method)
      return this.parent === undefined || route.standard
        ? inherited
        : mergeResponses(inherited, { 404: { errors: [NotFound] } })
    }

    // A route of the view's own on a nested view reads the parent before its handler, as the
    // standard actions do: a 404 without one, and `getParent()` and the scope within it.
    static override routeHooks (route: RouteDefinition, method: string): ReturnType<ViewBase['routeHooks']> {
      const inherited = super.routeHooks(route, method)
      if (this.parent === undefined || route.standard) return inherited
      const readParent: BeforeAction = (view) => loadParent(view)
      return { ...inherited, beforeAction: [...inherited.beforeAction ?? [], readParent] }
    }

    get repository (): AnyRepository {
      return (this.constructor as typeof cls).repository as AnyRepository
    }

    getKwargs (_action?: string): Criteria {
      return {}
    }

    getRepositoryOptions (_action: string): RepositoryOptions {
      return (this.constructor as typeof cls).repositoryOptions
    }

    getFilter (request: FastifyRequest): BaseFilter | undefined {
      const Filter = (this.constructor as typeof cls).filter
      return Filter == null ? undefined : new Filter(request.query as Record<string, unknown>)
    }

    resolveFilter (filter: BaseFilter): FilterArgs {
      return { args: [], kwargs: filter.asKwargs() }
    }

    getFilterArgs (filter: BaseFilter | undefined, action?: string): FilterArgs {
      if (filter === undefined) return { args: [], kwargs: this.getScopeKwargs(action) }
      return this.resolveFilter(filter.withKwargs(this.getScopeKwargs(action)))
    }

    getScopeKwargs (action?: string): Criteria {
      const scope = parentScope(this)
      return scope === undefined ? this.getKwargs(action) : { ...scope, ...this.getKwargs(action) }
    }

    checkObjectPermissions (_object: unknown, _action: string): void {}

    getParent (): unknown {
      return parentObject(this)
    }

    performCreate (values: Record<string, unknown>, options: RepositoryOptions): unknown {
      return this.repository.create(values, options)
    }

    performUpdate (criteria: Criteria, values: Record<string, unknown>, options: RepositoryOptions): unknown {
      return this.repository.update(criteria, values, options)
    }

    performDestroy (criteria: Criteria, options: RepositoryOptions): unknown {
      return this.repository.delete(criteria, options)
    }

    // The object a merge patch or JSON Patch applies to: the one the partial update's criteria
    // select, which the client must be allowed to change before it learns anything of it.
    getPatchTarget (request: GenericRequest): unknown {
      return readObject(this as GenericView, request, 'partialUpdate')
    }
  }
  LIBRARY_KWARGS.add(cls.prototype.getKwargs)
  LIBRARY_OBJECT_PERMISSIONS.add(cls.prototype.checkObjectPermissions)
  LIBRARY_SEAMS.add(cls.prototype.performCreate).add(cls.prototype.performUpdate)
  return cls
})

function detailCriteria (view: GenericView, request: GenericRequest, action: string): Criteria {
  return withKwargs(objectParams(view, request.params), view.getScopeKwargs(action))
}

/**
 * The request's own values (its path, its body) with the view's kwargs over them, which win.
 * Without kwargs, the default, they are passed as they are: no copy per request.
 */
function withKwargs (values: Record<string, unknown>, kwargs: Criteria): Record<string, unknown> {
  return Object.keys(kwargs).length === 0 ? values : { ...values, ...kwargs }
}

/** What every generic action mixin requires below it. */
export const GENERIC: MixinClass[] = [GenericViewMixin]

/**
 * The library's actions that hand their body to the repository as it is (create, update and the
 * bulk writes): a member the repository has no field for would fail there, on the first request,
 * so registration checks it (`writesBodyAsIs`). An action of the user's own is free to map its body.
 */
const BODY_WRITERS = new WeakSet<object>()

/** Marks the named method of a class's prototype as one of the library's body writers; returns the class. */
export function bodyWriter<C extends { prototype: object }> (cls: C, name: string): C {
  BODY_WRITERS.add(Reflect.get(cls.prototype, name) as object) // a method the class body just defined
  return cls
}

/** Whether `method` is one of the library's actions that write their body as it is. */
export const writesBodyAsIs = (method: unknown): boolean => typeof method === 'function' && BODY_WRITERS.has(method)

/**
 * The library's actions that send the rows their repository returns, as they are (list,
 * retrieve, create, the updates, the bulk create and update): the response schema must describe
 * such a row, so registration checks it against what the store says of its fields (`sendsStoredRows`).
 */
const ROW_SENDERS = new WeakSet<object>()

/** Marks the named method of a class's prototype as one of the library's row senders; returns the class. */
export function rowSender<C extends { prototype: object }> (cls: C, name: string): C {
  ROW_SENDERS.add(Reflect.get(cls.prototype, name) as object) // a method the class body just defined
  return cls
}

/** Whether `method` is one of the library's actions that send the stored rows as they are. */
export const sendsStoredRows = (method: unknown): boolean => typeof method === 'function' && ROW_SENDERS.has(method)

// Each generic action is a real method of a named class, so a stack trace or a debugger
// stepping into `super.partialUpdate(request)` lands in `GenericPartialUpdate.partialUpdate`.
// The list is in views/generic-list.ts, with the pages of its filter's pagination.
const listImpl = <B extends GenericBase>(Base: B): ViewBase => rowSender(genericListClass(Base), 'list')

const createImpl = (Base: GenericBase): ViewBase =>
  rowSender(bodyWriter(class GenericCreate extends createMembers(Base) {
    create (this: GenericView, request: GenericRequest): unknown {
      return then(loadParent(this), () =>
        this.performCreate(withKwargs(request.body, this.getScopeKwargs('create')), this.getRepositoryOptions('create')))
    }
  }, 'create'), 'create')

const retrieveImpl = (Base: GenericBase): ViewBase => rowSender(class GenericRetrieve extends Base {
  retrieve (this: GenericView, request: GenericRequest): unknown {
    return readObject(this, request, 'retrieve')
  }
}, 'retrieve')

const updateImpl = (Base: GenericBase): ViewBase =>
  comparesVersion(rowSender(bodyWriter(class GenericUpdate extends updateMembers(Base) {
    update (this: GenericView, request: GenericRequest): unknown {
      return detailWrite(this, request, 'update', (criteria, options) => this.performUpdate(criteria, request.body, options))
    }
  }, 'update'), 'update'), 'update')

const partialUpdateImpl = (Base: GenericBase): ViewBase =>
  comparesVersion(rowSender(bodyWriter(class GenericPartialUpdate extends updateMembers(Base) {
    // The body holds only what the client sent (or what its patch changed), so a partial update
    // changes only those fields.
    partialUpdate (this: GenericView, request: GenericRequest): unknown {
      return detailWrite(this, request, 'partialUpdate', (criteria, options) => this.performUpdate(criteria, request.body, options))
    }
  }, 'partialUpdate'), 'partialUpdate'), 'partialUpdate')

const destroyImpl = (Base: GenericBase): ViewBase => comparesVersion(class GenericDestroy extends Base {
  destroy (this: GenericView, request: GenericRequest): unknown {
    return detailWrite(this, request, 'destroy', (criteria, options) => then(this.performDestroy(criteria, options), (deleted) => deleted ? true : null))
  }
}, 'destroy')

/**
 * The one object a detail action reads: its parent first (a nested view), then the row the
 * path selects within the scope, which the client must be allowed to see (a 403 otherwise).
 */
function readObject (view: GenericView, request: GenericRequest, action: string): unknown {
  return then(loadParent(view), () =>
    then(view.repository.get(detailCriteria(view, request, action), view.getRepositoryOptions(action)), (found) => {
      if (found !== null && found !== undefined && judges(view.constructor, action)) {
        view.checkObjectPermissions(found, action)
      }
      return found
    }))
}

/**
 * A detail write within its parent: the object the path selects, with the options of
 * `writeOptions`. A conditional request whose `If-Match` names a stored version
 * (`versionField`) adds the version to the criteria, so that the write itself is the
 * comparison (one `UPDATE ... AND version = ?`); when it then finds nothing, the object
 * either has another version (412) or does not exist (`null`, the action's 404).
 */
function detailWrite (view: GenericView, request: GenericRequest, action: string,
  write: (criteria: Criteria, options: RepositoryOptions) => unknown): unknown {
  return then(loadParent(view), () => {
    const version = view.versionCriteria?.(request)
    const criteria = detailCriteria(view, request, action)
    if (version === undefined) return write(criteria, writeOptions(view, request, action))
    // versionCriteria and versionMissed are both ConditionalMixin's.
    return then(
      write({ ...criteria, ...version }, writeOptions(view, request, action)),
      (written) => written ?? view.versionMissed?.(request)
    )
  })
}

/**
 * The options of a detail write. A conditional request on a view with `ConditionalMixin`
 * adds its precondition, a patch document the check that the object is still the one
 * it was applied to, and an object permission its check of the current row: the
 * repository evaluates them in the same atomic step as the write, permission first
 * (a 403 before a 412: RFC 9110 §13.2.1 evaluates preconditions after every other check).
 */
function writeOptions (view: GenericView, request: FastifyRequest, action: string): RepositoryOptions {
  const options = view.getRepositoryOptions(action)
  const checks = [
    objectPermission(view, action),
    view.writePrecondition?.(request),
    patchPrecondition(request)
  ].filter((check): check is Precondition => check !== undefined)
  if (checks.length === 0) return options
  const precondition: Precondition = checks.length === 1
    ? checks[0]
    : (current) => { for (const check of checks) check(current) }
  return { ...options, precondition }
}

type Family<K> = K extends `async${string}` ? 'asyncGeneric' : 'generic'
type RepositoryOf<K> = K extends `async${string}` ? AsyncRepository<unknown> : Repository<unknown>
type G<K extends keyof ActionRegistry<unknown>, S> = ActionViewClass<K | Family<K>, GenericStatics<RepositoryOf<K>> & S>
type Detail<K extends keyof ActionRegistry<unknown>, S = unknown> = ActionViewClass<K | Family<K> | 'detail', GenericStatics<RepositoryOf<K>> & DetailStatics & S>

/** GET on the prefix over `repository.list` (and `count` for numbered and offset pages), filtered by `filter`. */
export const AsyncGenericListAPIView = actionMixin<G<'asyncList', ListStatics>, GenericBase>('AsyncGenericListAPIView', STANDARD_ACTIONS.list, GENERIC, listImpl)
/** Sync counterpart of `AsyncGenericListAPIView`. */
export const GenericListAPIView = actionMixin<G<'list', ListStatics>, GenericBase>('GenericListAPIView', STANDARD_ACTIONS.list, GENERIC, listImpl)
/** POST on the prefix over `repository.create` (`getKwargs('create')` merged into the values); `null` is a 409. */
export const AsyncGenericCreateAPIView = actionMixin<G<'asyncCreate', CreateStatics>, GenericBase>('AsyncGenericCreateAPIView', STANDARD_ACTIONS.create, GENERIC, createImpl)
/** Sync counterpart of `AsyncGenericCreateAPIView`. */
export const GenericCreateAPIView = actionMixin<G<'create', CreateStatics>, GenericBase>('GenericCreateAPIView', STANDARD_ACTIONS.create, GENERIC, createImpl)
/** GET on the detail route over `repository.get`. */
export const AsyncGenericRetrieveAPIView = actionMixin<Detail<'asyncRetrieve'>, GenericBase>('AsyncGenericRetrieveAPIView', STANDARD_ACTIONS.retrieve, [...GENERIC, ...DETAIL], retrieveImpl)
/** Sync counterpart of `AsyncGenericRetrieveAPIView`. */
export const GenericRetrieveAPIView = actionMixin<Detail<'retrieve'>, GenericBase>('GenericRetrieveAPIView', STANDARD_ACTIONS.retrieve, [...GENERIC, ...DETAIL], retrieveImpl)
/** PUT on the detail route over `repository.update`. */
export const AsyncGenericUpdateAPIView = actionMixin<Detail<'asyncUpdate', UpdateStatics & Pick<CreateStatics, 'createSchema'>>, GenericBase>('AsyncGenericUpdateAPIView', STANDARD_ACTIONS.update, [...GENERIC, ...DETAIL], updateImpl)
/** Sync counterpart of `AsyncGenericUpdateAPIView`. */
export const GenericUpdateAPIView = actionMixin<Detail<'update', UpdateStatics & Pick<CreateStatics, 'createSchema'>>, GenericBase>('GenericUpdateAPIView', STANDARD_ACTIONS.update, [...GENERIC, ...DETAIL], updateImpl)
/** PATCH on the detail route over `repository.update` with only the fields sent. */
export const AsyncGenericPartialUpdateAPIView = actionMixin<Detail<'asyncPartialUpdate', UpdateStatics & Pick<CreateStatics, 'createSchema'>>, GenericBase>('AsyncGenericPartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, [...GENERIC, ...DETAIL], partialUpdateImpl)
/** Sync counterpart of `AsyncGenericPartialUpdateAPIView`. */
export const GenericPartialUpdateAPIView = actionMixin<Detail<'partialUpdate', UpdateStatics & Pick<CreateStatics, 'createSchema'>>, GenericBase>('GenericPartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, [...GENERIC, ...DETAIL], partialUpdateImpl)
/** DELETE on the detail route over `repository.delete`; nothing deleted is a 404. */
export const AsyncGenericDestroyAPIView = actionMixin<Detail<'asyncDestroy'>, GenericBase>('AsyncGenericDestroyAPIView', STANDARD_ACTIONS.destroy, [...GENERIC, ...DETAIL], destroyImpl)
/** Sync counterpart of `AsyncGenericDestroyAPIView`. */
export const GenericDestroyAPIView = actionMixin<Detail<'destroy'>, GenericBase>('GenericDestroyAPIView', STANDARD_ACTIONS.destroy, [...GENERIC, ...DETAIL], destroyImpl)
