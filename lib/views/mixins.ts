// Mixins (views layer): `defineMixin` and `mix`, mixins ordered as Python's method resolution, `.with()`, and the types that make a mix typed.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { APIView } from './api-view.js'
import type { Dependency } from '../routes/types.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { assignStatics, withName } from '../core/statics.js'
import type { DidYouMean } from '../core/names.js'
import { routeBuilder, type RouteBuilder, type RouteHandler } from './route-builder.js'
import type { Schema } from '../core/typebox-lines.js'
import type { ModelsOf, NullableFieldOf, RepositoryFits, TimeFieldOf, UnknownFilterFields } from './schema-models.js'
import type { Permission } from '../access/permission.js'
import type { Throttle } from '../access/throttle.js'

/**
 * A base a mixin extends: `APIView` or a class built on it, with its statics. The construct
 * signature takes `any[]` because TypeScript allows a class to extend a type parameter only
 * through such a signature (TS2545), which is how a mixin keeps the statics of its base.
 */
export type ViewBase = (new (...args: any[]) => APIView) & Omit<typeof APIView, 'prototype'>

/** The runtime description of a mixin: how it extends a base, and what it needs below it. */
export interface MixinInfo {
  readonly name: string
  readonly apply: (base: ViewBase) => ViewBase
  readonly requires: readonly MixinInfo[]
}

// The two keys below are strings, not symbols: a consumer's declaration emit must be able
// to name every member of an exported class built with `mix(...)`, and a symbol key from
// another module cannot be named there (TS4020/TS4023).

/** Where a mixin class keeps its description. */
export const MIXIN = '~mixin'

/** Type-level tag naming the action interfaces a mixin class contributes (never set at run time). */
export const ACTION_KEYS = '~actions'

/** Any class built by `defineMixin` (or `mix`). */
export interface MixinClass { readonly [MIXIN]: MixinInfo }

/**
 * Orders mixins like Python's method resolution: the first named wins, and a mixin
 * several others require (DetailViewMixin) sits below all of them, applied once.
 */
function linearize (infos: readonly MixinInfo[]): MixinInfo[] {
  const order: MixinInfo[] = []
  const visit = (info: MixinInfo): void => {
    order.push(info)
    for (const required of info.requires) visit(required)
  }
  for (const info of infos) visit(info)
  const kept: MixinInfo[] = []
  const seen = new Set<MixinInfo>()
  for (let i = order.length - 1; i >= 0; i--) {
    if (seen.has(order[i])) continue
    seen.add(order[i])
    kept.unshift(order[i])
  }
  return kept
}

function build (infos: readonly MixinInfo[], name: string): ViewBase {
  let base: ViewBase = APIView
  for (const info of linearize(infos).reverse()) base = info.apply(base)
  Object.defineProperty(base, 'name', { value: name })
  Object.defineProperty(base, 'with', { value: withStatics, configurable: true, writable: true })
  return base
}

/**
 * `Base` extended by a class that has `statics` as its own static properties and the
 * functions of `methods` as its own methods. A name `Base` does not have is a typo
 * (`responseSchemas`, `retreive`) that nothing would ever read: it is refused.
 */
function extendWith (
  Base: ViewBase,
  statics: Record<string, unknown>,
  methods: Record<string, unknown>,
  routes: Record<string, RouteHandler>,
  name: string
): ViewBase {
  const typed = class extends Base {}
  assignStatics(typed, Base, statics, name)
  for (const [key, handler] of Object.entries(routes)) {
    // A route named like a method of the class would replace that method (an action, a hook).
    if (key in Base.prototype) {
      throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${name}: the route "${key}" is named like a member of ${Base.name}; give it another name, or put an action in the methods`)
    }
    Object.defineProperty(
      typed.prototype,
      key,
      { value: handler, writable: true, enumerable: false, configurable: true }
    )
  }
  for (const key of Object.keys(methods)) {
    if (typeof Reflect.get(Base.prototype, key) !== 'function') {
      throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${name}: "${key}" is not a method of ${Base.name}, so it would never be called`)
    }
    if (typeof methods[key] !== 'function') {
      throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${name}: "${key}" must be a function, not ${typeof methods[key]}`)
    }
    // Non-enumerable, as a method declared in a class body is.
    Object.defineProperty(
      typed.prototype,
      key,
      { value: methods[key], writable: true, enumerable: false, configurable: true }
    )
  }
  Object.defineProperty(typed, 'name', { value: name })
  return typed
}

/**
 * The run-time `.with(statics, methods, routes)` of every mixin class: a subclass with those
 * statics, methods and custom routes, which mixes again like the class it extends (its
 * description applies the same).
 */
function withStatics (
  this: ViewBase & MixinClass,
  statics: Record<string, unknown>,
  methods: Record<string, unknown> = {},
  routes?: (route: RouteBuilder<unknown>) => Record<string, RouteHandler>
): ViewBase {
  const name = withName(this, statics)
  // Built once: the same handlers (and the routes recorded on them) wherever the class is mixed.
  const built = routes === undefined ? {} : routes(routeBuilder)
  const typed = extendWith(this, statics, methods, built, name)
  const info: MixinInfo = {
    name,
    requires: [this[MIXIN]],
    apply: (base) => extendWith(base, statics, methods, built, name)
  }
  Object.defineProperty(typed, MIXIN, { value: info, configurable: true })
  return typed
}

/**
 * Declares a mixin: `apply` extends a base that has what `requires` lists (by default any
 * `APIView`). The returned class is the mixin applied to `APIView` with what it requires,
 * usable alone or in `mix(...)`.
 */
export function defineMixin<C, B extends ViewBase = ViewBase> (
  name: string,
  apply: (base: B) => ViewBase,
  requires: readonly MixinClass[] = []
): C {
  // `build` applies every mixin in `requires` below this one (linearize), so the base it
  // hands `apply` always has the statics `B` names.
  const info: MixinInfo = {
    name,
    apply: apply as (base: ViewBase) => ViewBase,
    requires: requires.map((r) => r[MIXIN])
  }
  const standalone = build([info], name)
  Object.defineProperty(standalone, MIXIN, { value: info })
  return standalone as unknown as C // the one bridge from the run-time class to the class type the mixin declares
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/** Action interface keys a mixin class contributes (type level only). */
export type KeysOf<T> = T extends { readonly [ACTION_KEYS]?: infer K } ? K : never

/** The statics of a class without its construct signature, prototype and `with` (each class built from mixins types its own). */
export type StaticsOf<T> = T extends unknown ? Omit<T, 'prototype' | typeof ACTION_KEYS | 'with'> : never

/**
 * The action interfaces, by key, for the item types `M`. Each action module adds its
 * interfaces here by declaration merging, so `mix` can type any combination.
 */

export interface ActionRegistry<M> { base: { readonly models?: M } }

/**
 * The action name each registry key contributes (`asyncList` -> `list`); keys that add
 * members but no action (`generic`, `detail`, `conditional`) are absent. Each action
 * module adds its names here by declaration merging.
 */

export interface ActionNameRegistry {}

/** The action names of a class built from the registry keys `K`. */
export type ActionNameOf<K> = K extends keyof ActionNameRegistry ? ActionNameRegistry[K] : never

/** `actionDependencies` keyed by the class's action names only: a misspelt key (`destory`) is a compile error. */
export type ActionDependencies<A extends string> = { [P in A]?: Dependency[] }

/** The statics of a class built from the registry keys `K` with statics `S`: `actionDependencies`, `actionPermissions` and `actionThrottles` keyed by its actions. */
export type StaticsWithActions<K, S> = [ActionNameOf<K>] extends [never] ? S : Omit<S, 'actionDependencies' | 'actionPermissions' | 'actionThrottles'> & {
  actionDependencies: ActionDependencies<ActionNameOf<K>>
  actionPermissions: { readonly [P in ActionNameOf<K>]?: readonly Permission<never>[] }
  actionThrottles: { readonly [P in ActionNameOf<K>]?: readonly Throttle[] }
}

/** The row a view's permissions judge, from `.with()`'s statics: the stored row, else the item, else anything. */
type PermissionRowOf<C> = ModelsOf<C> extends { row: infer R } ? R : ModelsOf<C> extends { item: infer I } ? I : unknown

/**
 * The statics set as one object (`patch`, `conditional`), by name. Each feature adds its group by
 * declaration merging (and `defineStaticGroup` at run time), so that `.with()` checks its members.
 */
export interface StaticGroupRegistry {}

/**
 * The flat statics a group replaced, by old name, with the new spelling (`etag: 'conditional: { etag }'`):
 * what the compiler prints for `.with({ etag: true })`. Each feature adds its own by declaration merging.
 */
export interface RetiredStaticRegistry {}

/**
 * The statics `.with({...})` takes: any of the class's own, each with its declared type;
 * `lastModifiedField` a time field of `responseSchema`, a `repository` of those items, and a `filter` made with
 * `.with()` naming only fields the rows have (`UnknownFilterFields`); a group's members by their
 * types (`GroupInput`). A name the class does not have is typed as a sentence saying so (a retired
 * one, its new spelling), which is what the compiler prints for the mistake.
 */
export type StaticsInput<S, C> = {
  [P in keyof C]: P extends keyof S
    ? P extends keyof StaticGroupRegistry ? GroupInput<C, C[P], NonNullable<S[P]>, P>
      : P extends 'filter' ? ([UnknownFilterFields<C>] extends [never] ? S[P] : `the filter names ${UnknownFilterFields<C>}, a field the items do not have`)
        : P extends 'repository' ? (RepositoryFits<C> extends true ? FamilyFits<C[P], S[P]> : 'the repository holds other items than responseSchema describes')
          : PlainJsonSchema<C[P], S[P]> extends true ? `${P & string} takes a TypeBox schema: build it with Type.Object({ ... })`
            // Permissions judge the view's rows: one over other rows (`Member` on `Loan`s) does not fit.
            : P extends 'permissions' ? readonly Permission<PermissionRowOf<C>>[]
              : P extends 'actionPermissions' ? { readonly [A in keyof S[P]]?: readonly Permission<PermissionRowOf<C>>[] }
                : S[P]
    : P extends keyof RetiredStaticRegistry ? `${P & string} is now ${RetiredStaticRegistry[P] & string}`
      : `unknown static ${P & string}${DidYouMean<P & string, keyof S & string>}`
}

/**
 * What a group of statics takes in `.with()`: its members by their declared types (`lastModifiedField`
 * a time field of `responseSchema`), a member it does not have typed as a sentence saying so.
 */
type GroupInput<C, Given, Declared, Group extends string> = Given extends object ? {
  [Q in keyof Given]: Q extends keyof Declared
    ? Q extends 'lastModifiedField' ? LastModifiedFieldOf<C, Declared[Q]>
      : Group extends 'softDelete' ? (Q extends 'field' ? NullableFieldOf<C, Declared[Q]> : Declared[Q]) : Declared[Q]
    : `unknown option ${Q & string} of ${Group}${DidYouMean<Q & string, keyof Declared & string>}`
} : Declared

/**
 * Whether a static that takes a schema was given a plain JSON Schema object (`{ type: 'object',
 * ... }`), which TypeBox did not make: the compiler would only list the members of `TSchema` it
 * lacks, without naming the static or the fix.
 */
type PlainJsonSchema<Given, Declared> = [Schema] extends [NonNullable<Declared>]
  ? (Given extends Schema ? false : Given extends { type: unknown } | {
      properties: unknown
    } | { anyOf: unknown } ? true : false)
  : false

/** Whether a repository answers with promises (its `get` returns one), or `undefined` when its type does not say (`any`, no `get`). */
type AnswersPromises<R> = [R] extends [never] ? undefined : [R] extends [{
  get: (...args: never) => infer V
}] ? (0 extends 1 & V ? undefined : [V] extends [PromiseLike<unknown>] ? true : false) : undefined

/**
 * The declared type of `repository` when the given one is of the view's family, else the
 * sentence the compiler prints: a sync store on an async view is the common slip (`asyncRepository`
 * forgotten), and the structural message would only say that `create(...)` returns no promise.
 */
export type FamilyFits<Given, Declared> = AnswersPromises<Given> extends false
  ? (AnswersPromises<NonNullable<Declared>> extends true ? 'sync repository, async view: wrap it in asyncRepository()' : Declared)
  : AnswersPromises<Given> extends true
    ? (AnswersPromises<NonNullable<Declared>> extends false ? 'async repository, sync view: use a sync one, or Async views' : Declared)
    : Declared

/** What `lastModifiedField` may be in `.with()`: a field of the item `responseSchema` gives that holds a time, or (without one) what the static declares. */
export type LastModifiedFieldOf<C, Declared> = C extends {
  readonly responseSchema: Schema
} ? TimeFieldOf<C> | Exclude<Declared, string> : Declared

/**
 * A class built from mixins with the statics `C` set by `.with({...})`: its item types are read
 * from the schemas among them (`ModelsOf`), so it takes no type argument that could disagree.
 */
export type TypedClass<K extends keyof ActionRegistry<unknown>, S, C, X = unknown> = {
  new (request: FastifyRequest, reply: FastifyReply): ViewInstance<K, ModelsOf<C>> & X
  readonly [ACTION_KEYS]?: K
  readonly [MIXIN]: MixinInfo
  /**
   * This class with more statics set (they replace the ones of the same name) and more methods.
   * Called on a subclass of the user's, its methods see the subclass's own members (helpers) on `this`.
   */
  with<const C2 extends StaticsInput<StaticsWithActions<K, S>, C2>, Self = unknown>(this: Self, statics: C2,
    methods?: ViewMethods<K, ModelsOf<C2 & Omit<C, keyof C2>>, X & OwnMembers<Self, K>>,
    routes?: ViewRoutes<K, ModelsOf<C2 & Omit<C, keyof C2>>, X & OwnMembers<Self, K>>): TypedClass<K, S, C2 & Omit<C,
      keyof C2>, X & OwnMembers<Self, K>>
} & StaticsWithActions<K, S>

/**
 * The members a subclass of the user's adds to a view class (helpers shared by its actions),
 * which `.with()` methods called on that subclass may use: its instance's members beyond the
 * view's own. Nothing for a class the library built.
 */
export type OwnMembers<Self,
  K extends keyof ActionRegistry<unknown>> = Self extends abstract new (...args: never[]) => infer I
    ? ([Exclude<keyof I, keyof ViewInstance<K, unknown>>] extends [never] ? unknown : Pick<I, Exclude<keyof I,
    keyof ViewInstance<K, unknown>>>)
    : unknown

/** An instance of a class built from the registry keys `K` for the item types `M`. */
export type ViewInstance<K extends keyof ActionRegistry<unknown>,
  M> = APIView & UnionToIntersection<ActionRegistry<M>[K]>

/**
 * The methods `.with(statics, methods)` takes: the class's own actions and hooks, written as
 * an object literal, so that TypeScript types each parameter from the action it implements
 * (a method in a class body gets no type from the method it overrides). `this` is the view.
 */
export type ViewMethods<K extends keyof ActionRegistry<unknown>, M,
  X = unknown> = Partial<UnionToIntersection<ActionRegistry<M>[K]>> & ThisType<ViewInstance<K, M> & X>

/**
 * The custom routes `.with(statics, methods, routes)` takes: a function of a `RouteBuilder`
 * returning the routes by method name, each handler typed from its route's schemas, with `this`
 * the view (`routes: (route) => ({ search: route.get('/search', { schema }, async function (request) { ... }) })`).
 */
export type ViewRoutes<K extends keyof ActionRegistry<unknown>, M, X = unknown> = (
  route: RouteBuilder<ViewInstance<K, M> & X>
) => Record<string, RouteHandler>

/** A class built from mixins: generic in its item types, with the union of their statics. */
export type MixedClass<K extends keyof ActionRegistry<unknown>, S> = {
  // Keys outside ActionModels are `never`, so a misspelt one (`crate`) is an error, not silently ignored.
  new <M extends ActionModels & { [P in Exclude<keyof M, keyof ActionModels>]: never } = {}>(request: FastifyRequest,
    reply: FastifyReply): ViewInstance<K, M>
  readonly [ACTION_KEYS]?: K
  readonly [MIXIN]: MixinInfo
  /**
   * This class with its statics set once, its item types read from the schemas among them:
   * `mix(AsyncListAPIView, AsyncRetrieveAPIView).with({ responseSchema: Item, detailParams: IdParams })`.
   */
  with<const C extends StaticsInput<StaticsWithActions<K, S>, C>, Self = unknown>(this: Self, statics: C,
    methods?: ViewMethods<K, ModelsOf<C>, OwnMembers<Self, K>>,
    routes?: ViewRoutes<K, ModelsOf<C>, OwnMembers<Self, K>>): TypedClass<K, S, C, OwnMembers<Self, K>>
} & StaticsWithActions<K, S>

/**
 * The item types a view's actions are checked against. Give the ones you use:
 * `mix(AsyncListAPIView, AsyncCreateAPIView)<{ item: Item, create: NewItem }>`.
 */
export interface ActionModels {
  /** What a detail action returns, and a list the array of. */
  item?: unknown
  /** What `list` returns when `responseSchemaAsList` is false (an envelope). */
  list?: unknown
  /** The validated body of `create`. */
  create?: unknown
  /** The validated body of `update`. */
  update?: unknown
  /** The validated body of `partialUpdate`. */
  partialUpdate?: unknown
  /** One validated item of a bulk PUT body. */
  bulkUpdate?: unknown
  /** The path parameters of detail routes (default `{ id: string }`), the prefix's included. */
  params?: unknown
  /** The path parameters of the prefix (a nested view's `prefixParams`): what list and create routes receive. */
  prefixParams?: unknown
  /** The query string of `list`. */
  query?: unknown
  /** The stored rows, when they have fields the items do not show: what `getKwargs` may scope by. */
  row?: unknown
  /** The repository's own type (`SqliteRepository<Row>`): `this.repository` with its methods beyond the protocol (`transaction`). */
  repository?: unknown
}

/** Gives a composed class its public name (in messages and as a mixin). */
export function named<C extends MixinClass> (name: string, cls: C): C {
  Object.defineProperty(cls, 'name', { value: name })
  const info = cls[MIXIN]
  Object.defineProperty(cls, MIXIN, { value: { ...info, name }, configurable: true })
  return cls
}

/**
 * Combines mixins into one class (docs/actions.md#mix): `mix(ConditionalMixin,
 * AsyncListAPIView, AsyncCreateAPIView)`. The first argument takes precedence,
 * so a mixin whose hooks must win goes first.
 */
export function mix<T extends MixinClass[]> (
  ...classes: T
): MixedClass<KeysOf<T[number]> & keyof ActionRegistry<unknown>, UnionToIntersection<StaticsOf<T[number]>>> {
  for (const cls of classes) {
    if (typeof cls !== 'function' || (cls as Partial<MixinClass>)[MIXIN] === undefined) {
      throw new ConfigurationError('FV_ERR_NOT_A_MIXIN', 'mix() combines mixin classes such as AsyncListAPIView; got ' + String((cls as { name?: string })?.name ?? cls))
    }
  }
  const name = `mix(${classes.map((c) => c[MIXIN].name).join(', ')})`
  const infos = classes.map((c) => c[MIXIN])
  const mixed = build(infos, name)
  // A mixed class mixes again: it stands for what it was made of.
  const info: MixinInfo = { name, requires: infos, apply: (b) => b }
  Object.defineProperty(mixed, MIXIN, { value: info, configurable: true })
  return mixed as never
}
