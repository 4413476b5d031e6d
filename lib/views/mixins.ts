import type { FastifyReply, FastifyRequest } from 'fastify'
import { APIView } from './api-view.js'
import type { Dependency } from '../routes/types.js'
import { ConfigurationError } from '../core/configuration-error.js'

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
  return base
}

/**
 * Declares a mixin: `apply` extends a base that has what `requires` lists (by default any
 * `APIView`). The returned class is the mixin applied to `APIView` with what it requires,
 * usable alone or in `mix(...)`.
 */
export function defineMixin<C, B extends ViewBase = ViewBase> (name: string, apply: (base: B) => ViewBase, requires: readonly MixinClass[] = []): C {
  // `build` applies every mixin in `requires` below this one (linearize), so the base it
  // hands `apply` always has the statics `B` names.
  const info: MixinInfo = { name, apply: apply as (base: ViewBase) => ViewBase, requires: requires.map((r) => r[MIXIN]) }
  const standalone = build([info], name)
  Object.defineProperty(standalone, MIXIN, { value: info })
  return standalone as unknown as C // the one bridge from the run-time class to the class type the mixin declares
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never

/** Action interface keys a mixin class contributes (type level only). */
export type KeysOf<T> = T extends { readonly [ACTION_KEYS]?: infer K } ? K : never

/** The statics of a class without its construct signature and prototype. */
export type StaticsOf<T> = T extends unknown ? Omit<T, 'prototype' | typeof ACTION_KEYS> : never

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

/**
 * `actionDependencies` of a class with standard actions: keyed by its action names only, so
 * a misspelt key (`destory`) is a compile error. Custom routes take their dependencies in
 * their decorator's `dependencies` option.
 */
export type ActionDependencies<A extends string> = { [P in A]?: Dependency[] }

/** A class built from mixins: generic in its item types, with the union of their statics. */
export type MixedClass<K extends keyof ActionRegistry<unknown>, S> = {
  // Keys outside ActionModels are `never`, so a misspelt one (`crate`) is an error, not silently ignored.
  new <M extends ActionModels & { [P in Exclude<keyof M, keyof ActionModels>]: never } = {}>(request: FastifyRequest, reply: FastifyReply): APIView & UnionToIntersection<ActionRegistry<M>[K]>
  readonly [ACTION_KEYS]?: K
  readonly [MIXIN]: MixinInfo
} & ([ActionNameOf<K>] extends [never] ? S : Omit<S, 'actionDependencies'> & { actionDependencies: ActionDependencies<ActionNameOf<K>> })

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
  /** The path parameters of detail routes (default `{ id: string }`). */
  params?: unknown
  /** The query string of `list`. */
  query?: unknown
}

/** Gives a composed class its public name (in messages and as a mixin). */
export function named<C extends MixinClass> (name: string, cls: C): C {
  Object.defineProperty(cls, 'name', { value: name })
  const info = cls[MIXIN]
  Object.defineProperty(cls, MIXIN, { value: { ...info, name }, configurable: true })
  return cls
}

/**
 * Combines mixins into one class (DESIGN.md principle 3): `mix(ConditionalMixin,
 * AsyncListAPIView, AsyncCreateAPIView)`. The first argument takes precedence,
 * so a mixin whose hooks must win goes first.
 */
export function mix<T extends MixinClass[]> (...classes: T): MixedClass<KeysOf<T[number]> & keyof ActionRegistry<unknown>, UnionToIntersection<StaticsOf<T[number]>>> {
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
