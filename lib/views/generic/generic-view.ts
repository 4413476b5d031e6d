// The generic view (views layer): a repository, an optional filter, the `get*` hooks, the one read of an
// object (`getObject`) and the description of a write on one (`describeWrite`), which features extend.
import type { FastifyRequest } from 'fastify'
import type { ActionViewClass, Get, ItemOf, Ret } from '../actions/standard.js'
import { loadParent, objectParams, parentObject, type ParentLookup, type ParentState } from './parent.js'
import { ownScope } from './view-scope.js'
import { judgeObject, judges, LIBRARY_OBJECT_PERMISSIONS, OBJECT_ACTIONS, objectPermission, type ObjectAction } from './object-permissions.js'
import { ruleOf } from '../../access/access-rule.js'
import { scopedBy } from '../../access/scope-criteria.js'
import { missingObject, ownRouteContribution } from './object-routes.js'
import { Forbidden, NotFound } from '../../http/errors.js'
import type { APIView } from '../api-view.js'
import type { BaseFilter, FilterClass } from '../../query/filters.js'
import { defineMixin, type MixinClass, type ViewBase } from '../mixins.js'
import { honoursPreconditions, type AsyncRepository, type Criteria, type FieldOf, type Operator, type Repository, type RepositoryOptions } from '../../stores/repository.js'
import { extendContribution, type ActionRoute, type RouteContribution, type RouteDefinition, type StandardAction } from '../view.js'
import type { WriteDescription } from '../write.js'
import { then } from '../../core/maybe-promise.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import { assertFilterFieldsKnown } from './filter-fields.js'
import type { ListStreamOptions } from './list-stream.js'

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

/**
 * Criteria over the fields of rows `R`: each field, or `field__op` with an operator, optional. A
 * relation's criterion (`followedBy.follower_id`) is no field of the rows: a `getKwargs` answering
 * one says so by its return type, `Criteria`, and the repository checks it by its relations.
 */
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
   * (docs/generics.md, "Object permissions"). Synchronous; the request is `this.request`. The object
   * is the stored row (`ObjectOf`): a field the answer does not show (an `authorId`) is there to judge.
   */
  checkObjectPermissions (object: ObjectOf<M>, action: string): void
  /** The parent object of a nested view (`parent`), once the request read it; `undefined` otherwise. */
  getParent (): unknown
  /**
   * What the detail write of `action` selects, what must hold of the current row when it is written,
   * and what a write that changes nothing answers (`WriteDescription`). ConditionalMixin and patch
   * documents extend it with `super`: the preconditions of a conditional request, the check that a
   * patched row did not change meanwhile.
   */
  describeWrite (action: string): WriteDescription
}

/** Values a create writes: the body, with the scope of the action over it. */
export type CreateValues<M> = Get<M, 'create', Record<string, unknown>> & Record<string, unknown>

/**
 * Values an update writes: the validated body of `update` or of `partialUpdate` (every member
 * optional), as the client sent it; any record when the view's models give neither.
 */
export type UpdateValues<M> = M extends { update: infer U } ? U | Get<M, 'partialUpdate', Partial<U>>
  : M extends { partialUpdate: infer P } ? P : Record<string, unknown>

/**
 * An object as it is stored: the repository's row when the view's models say what it is (`row`,
 * which may hold fields the answer does not show), else the item.
 */
export type ObjectOf<M> = Get<M, 'row', ItemOf<M>>

/** The protocol of a family's repository, over the view's items. */
type RepositoryProtocol<M, Async> = Async extends true ? AsyncRepository<ItemOf<M>> : Repository<ItemOf<M>>

/**
 * The repository a generic view calls: the family's protocol over the items and, when the models
 * give it (`.with({ repository })`, or the `repository` model), the type it was given as, with the
 * methods it has beyond the protocol (a SQL repository's `transaction`). The protocol comes first,
 * so that its methods stay typed by the items whatever the repository's own type says of them.
 */
export type ViewRepository<M, Async> = M extends { repository: infer R }
  ? RepositoryProtocol<M, Async> & R
  : RepositoryProtocol<M, Async>

/**
 * The writes of the generic views, one per kind (docs/generics.md, "Write seams"): each receives
 * what the action computed, including `options.precondition` (If-Match, a patch's check, the
 * object permission), which a replacement passes on to keep the write atomic. A write on one object
 * also receives the row as the request read it before the write (`current`: the object a patch
 * document was applied to, or the one a conditional request's preconditions were checked on), or
 * `undefined` when it read none.
 */
export interface WriteSeams<M, Async> {
  /** Stores a new object: `repository.create(values, options)`; `null` answers 409. */
  performCreate (values: CreateValues<M>, options: RepositoryOptions): Ret<Async, ItemOf<M> | null>
  /** Changes the object `criteria` select: `repository.update(criteria, values, options)`; `null` answers 404. */
  performUpdate (
    criteria: Criteria,
    values: UpdateValues<M>,
    options: RepositoryOptions,
    current?: ObjectOf<M>
  ): Ret<Async, ItemOf<M> | null>
  /** Deletes the object `criteria` select: `repository.delete(criteria, options)`; `false` answers 404. */
  performDestroy (criteria: Criteria, options: RepositoryOptions, current?: ObjectOf<M>): Ret<Async, boolean>
}

/** The members every generic CRUD view has, typed by the view's item type. */
export interface GenericMembers<M, Async> extends GenericHooks<M>, WriteSeams<M, Async> {
  /**
   * The one object a detail action acts on (DRF's `get_object()`): the nested view's parent read
   * first (a 404 when it is missing), then the row the path's parameters select within the scope,
   * which the client must be allowed to see (`checkObjectPermissions`, a 403); `null` when there is
   * none. Every read of a target goes through it: retrieve, the object a patch applies to, the
   * validators of a conditional request. `action` defaults to the route's own.
   */
  getObject (action?: string): Ret<Async, ItemOf<M> | null>

  /**
   * `getObject(action)` for a route that needs the object (DRF's `get_object()`, Django's
   * `get_object_or_404`): the parent, the scope, the object permission, and a 404 worded as the
   * view's retrieve words it (`errorMessage`) when there is no object. Typed by the stored row
   * (`ObjectOf`), as the repository reads it: its key is there to write a related row by.
   */
  getObjectOr404 (action?: string): Ret<Async, ObjectOf<M>>

  /** The repository the actions call, as its own type when `.with({ repository })` gave it; override the getter to take it from `this.server`. */
  readonly repository: ViewRepository<M, Async>
}

declare module '../mixins.js' {
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
  /**
   * The library's actions write their body to the repository and send its rows as they are, so
   * registration holds their schemas to the store's fields. An action of yours (or a write seam)
   * that maps what it writes or sends is named here, and is not held to them (docs/generics.md).
   */
  mappingActions: readonly string[]
  /** The list also answers NDJSON or a JSON array sent as it is read, when `Accept` asks for one (docs/streaming.md, "Streamed lists"). */
  listStream: ListStreamOptions | boolean | undefined
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
/** A generic view as its own actions see it. */
export type GenericView = APIView & GenericMembers<unknown, false> & { parentState: ParentState | undefined }

/**
 * A request as the generic actions read it: a JSON object body, path parameters and a query
 * by name, as the route's schemas validated them.
 */
export type GenericRequest = FastifyRequest<{
  Body: Record<string, unknown>,
  Params: Criteria,
  Querystring: Record<string, unknown>
}>

/** The library's own `getKwargs` and `performCreate`, one each per application of the mixin (each `mix` applies it anew). */
const LIBRARY_METHODS = new WeakSet<object>()
const libraryOwn = (klass: { prototype: object }, name: string): boolean =>
  LIBRARY_METHODS.has(Reflect.get(klass.prototype, name) as object) // a method, or nothing

/**
 * Whether a view's creates store their body as it is: its `getKwargs` is the library's, which adds
 * no field. One of yours may add any (a tenant): the check that a create stores every member the
 * response requires cannot know which, so it does not judge such a view.
 */
export const addsNoKwargs = (klass: { prototype: object }): boolean => libraryOwn(klass, 'getKwargs')

/** Whether a view's `performCreate` is the library's: one of yours may set what a bulk create would skip (an owner). */
export const createsAsGiven = (klass: { prototype: object }): boolean => libraryOwn(klass, 'performCreate')

/** The class of generic views: a repository, an optional filter, the `get*` hooks (docs/generics.md). */
export const GenericViewMixin = defineMixin<ActionViewClass<'generic', GenericStatics>>('GenericViewMixin', (Base) => {
  const cls = class GenericViewMixin extends Base {
    static repository: object | undefined = undefined
    static filter: FilterClass | null = null
    static repositoryOptions: RepositoryOptions = {}
    static parent: ParentLookup | undefined = undefined
    static objectPermissionActions: readonly ObjectAction[] | undefined = undefined
    static mappingActions: readonly string[] = []
    static listStream: ListStreamOptions | boolean | undefined = undefined
    /** This request's parent, once `getObject` or an action read it (a nested view). */
    declare parentState: ParentState | undefined

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
      assertFilterFieldsKnown(this)
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

    // A route of the view's own on a nested view reads the parent as the standard actions do; one on
    // one object documents what `getObjectOr404` can answer there (object-routes.ts).
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      const own = route.standard ? undefined : ownRouteContribution(this, route)
      return own === undefined ? inherited : extendContribution(inherited, own)
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

    // The view's own scope wins over what the client sent; the permissions' criteria hold beside it
    // (a client's `?owner_id=1` with a scope of owner 2 selects nothing, not owner 2's rows).
    getFilterArgs (filter: BaseFilter | undefined, action?: string): FilterArgs {
      if (filter === undefined) return { args: [], kwargs: this.getScopeKwargs(action) }
      const criteria = ruleOf(this.request)?.criteria
      if (criteria === undefined) return this.resolveFilter(filter.withKwargs(this.getScopeKwargs(action)))
      const resolved = this.resolveFilter(filter.withKwargs(ownScope(this, action)))
      return { args: resolved.args, kwargs: scopedBy(resolved.kwargs, criteria) }
    }

    // The permissions' criteria narrow every read and write of an existing row; what a create stores
    // is judged by their rule instead (judgeObject), since criteria such as `member_id__in` write nothing.
    getScopeKwargs (action?: string): Criteria {
      const own = ownScope(this, action)
      const criteria = ruleOf(this.request)?.criteria
      return criteria === undefined || action === 'create' || action === 'bulkCreate' ? own : scopedBy(own, criteria)
    }

    checkObjectPermissions (_object: unknown, _action: string): void {}

    getParent (): unknown {
      return parentObject(this)
    }

    getObject (this: GenericView, action = actionOf(this.request)): unknown {
      return then(loadParent(this), () =>
        then(this.repository.get(detailCriteria(this, action), this.getRepositoryOptions(action)), (found) => {
          if (found === null || found === undefined) return null
          judgeObject(this, found, action)
          return found
        }))
    }

    getObjectOr404 (this: GenericView, action?: string): unknown {
      return then(this.getObject(action), (found) => found ?? missingObject(this.constructor))
    }

    // The object the path selects within the scope; its object permission judged first, before any
    // other check (a 403 before a 412: RFC 9110 §13.2.1 evaluates preconditions after every other check).
    override describeWrite (action: string): WriteDescription {
      const write = super.describeWrite(action)
      // What the write sets: the validated body, or what a patch document made of it.
      const values = CHANGES.has(action) ? () => this.request.body as Record<string, unknown> : undefined
      const permission = objectPermission(this, action, values)
      return {
        ...write,
        criteria: { ...detailCriteria(this as GenericView, action), ...write.criteria }, // this mixin's instances are generic views
        preconditions: permission === undefined ? write.preconditions : [permission, ...write.preconditions]
      }
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

    // The object a merge patch or JSON Patch applies to: the one the partial update writes, which
    // the client must be allowed to change before it learns anything of it.
    getPatchTarget (this: GenericView): unknown {
      return this.getObject('partialUpdate')
    }
  }
  LIBRARY_OBJECT_PERMISSIONS.add(cls.prototype.checkObjectPermissions)
  LIBRARY_METHODS.add(cls.prototype.getKwargs).add(cls.prototype.performCreate)
  return cls
})

/** The detail writes that set values on the row they change (a destroy sets none). */
const CHANGES: ReadonlySet<string> = new Set(['update', 'partialUpdate'])

/** The action of the route a request reached (every view route's config names it). */
const actionOf = (request: FastifyRequest): string => request.routeOptions.config.action ?? ''

/**
 * The criteria of a detail action: the path's parameters naming the object, and the scope, which
 * must hold of it too: a scope naming the path's own field (`{ id: reader.id }`) narrows the object
 * the path names, never replaces it with another.
 */
function detailCriteria (view: GenericView, action: string): Criteria {
  return scopedBy(objectParams(view, view.request.params as Criteria), view.getScopeKwargs(action)) // path parameters, as the route's schema validated them
}

/** The fields a view's scope adds to every create: its parent's scope, or none. */
export const scopeFieldsOf = (klass: object): readonly string[] =>
  Object.keys((klass as Partial<GenericStatics>).parent?.scope ?? {}) // any view class; generic ones have `parent`

/** Whether a view declares that its own `action` maps what it writes or sends (`mappingActions`). */
export const mapsItself = (klass: object, action: string): boolean =>
  (klass as Partial<GenericStatics>).mappingActions?.includes(action) === true // any view class; generic ones have `mappingActions`

/** What every generic action mixin requires below it. */
export const GENERIC: MixinClass[] = [GenericViewMixin]
