// Route decorators (views layer): Get, Post, Put, Patch, Delete, Route, Action, Events, Override, Throws, Catch, CatchDefined, and the `raises` they read.
import type { TSchema } from '@sinclair/typebox'
import { toTypeBox, type Schema } from '../core/typebox-lines.js'
import type { HTTPMethods } from 'fastify'
import { APIError, type APIErrorClass } from '../http/errors.js'
import { annotate, copyRouteMeta, type CatchSpec } from '../routes/route-meta.js'
import type { CustomRouteOptions, RouteMethod, RouteSchemas, ViewRouteOptions } from '../routes/types.js'
import { isThenable } from '../core/maybe-promise.js'
import { ConfigurationError } from '../core/configuration-error.js'
import type { EventRouteMethod, EventSchemas, EventStreamLimits, EventStreamSettings } from '../routes/events.js'

/** What TypeScript knows of a public instance method's decorator context: static and `#private` methods are refused by the types too. */
export interface PublicInstance { readonly static: false, readonly private: false }

/** A TC39 method decorator that records a route; the method's type is checked against the route's schemas. */
export type RouteDecorator<S extends RouteSchemas, R> =
  <This, F extends RouteMethod<This, S, R>>(
    method: F,
    context: ClassMethodDecoratorContext<This, F> & PublicInstance
  ) => void

/** A TC39 method decorator that only records metadata (`Override`, `Throws`). */
export type MetaDecorator = (
  method: (...args: never[]) => unknown,
  context: ClassMethodDecoratorContext & PublicInstance
) => void

function checkContext (context: { static: boolean, private: boolean, name: string | symbol }, decorator: string): void {
  if (context.static || context.private) {
    throw new ConfigurationError('FV_ERR_DECORATOR_TARGET', `@${decorator} applies to public instance methods, not to ${String(context.name)}`)
  }
}

/** `statsSummary` -> `stats-summary`: the default path of an `Action`. */
export function hyphenate (name: string): string {
  return name.replace(/([a-z0-9])([A-Z])/g, '$1-$2').replace(/_/g, '-').toLowerCase()
}

function route<S extends RouteSchemas, R extends Schema | undefined> (
  decorator: string, methods: HTTPMethods[], defaultStatus: number, path: string | undefined,
  options: CustomRouteOptions<S, R> | undefined, detail?: boolean
): RouteDecorator<S, R> {
  return (method, context) => {
    checkContext(context, decorator)
    annotate(method, {
      route: { methods, path: path ?? '/' + hyphenate(String(context.name)), defaultStatus },
      detail,
      options: (options ?? {})
    })
  }
}

/** Declares a GET route (200). The method receives the request typed from `options.schema`. */
export function Get<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R>
): RouteDecorator<S, R> {
  return route('Get', ['GET'], 200, path, options)
}

/** Declares a POST route (201). */
export function Post<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R>
): RouteDecorator<S, R> {
  return route('Post', ['POST'], 201, path, options)
}

/** Declares a PUT route (200). */
export function Put<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R>
): RouteDecorator<S, R> {
  return route('Put', ['PUT'], 200, path, options)
}

/** Declares a PATCH route (200). */
export function Patch<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R>
): RouteDecorator<S, R> {
  return route('Patch', ['PATCH'], 200, path, options)
}

/** Declares a DELETE route (204). */
export function Delete<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R>
): RouteDecorator<S, R> {
  return route('Delete', ['DELETE'], 204, path, options)
}

/** Options of `Route` and `Action`: the HTTP methods besides the route options. */
export interface MethodsOption { methods?: HTTPMethods[] }

/** Declares a route for any methods (GET by default, 200). */
export function Route<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path: string,
  options?: CustomRouteOptions<S, R> & MethodsOption
): RouteDecorator<S, R> {
  const { methods = ['GET'], ...rest } = options ?? {}
  return route('Route', methods, 200, path, rest as CustomRouteOptions<S, R>)
}

/**
 * Declares an extra action (GET by default, 200). The path defaults to the hyphenated
 * method name; `detail: true` nests it under the view's detail route (`/:id/...`).
 */
export function Action<const S extends RouteSchemas = {}, R extends Schema | undefined = undefined> (
  path?: string,
  options?: CustomRouteOptions<S, R> & MethodsOption & { detail?: boolean }
): RouteDecorator<S, R> {
  const { methods = ['GET'], detail = false, ...rest } = options ?? {}
  return route('Action', methods, 200, path, rest as CustomRouteOptions<S, R>, detail)
}

/**
 * Changes the route options of a standard action that has no route decorator of its
 * own, such as `@Override({ statusCode: 200, summary: 'Create an item' })` on `create`.
 */
export function Override (options: ViewRouteOptions): MetaDecorator {
  return (method, context) => {
    checkContext(context, 'Override')
    annotate(method, { options })
  }
}

/** Alias of `Override`. */
export const Annotate = Override

/** Documents the errors an action can answer with (docs/openapi.md). */
export function Throws (...errors: APIErrorClass[]): MetaDecorator {
  return (method, context) => {
    checkContext(context, 'Throws')
    annotate(method, { throws: errors })
  }
}

/** What `raises` maps an exception type to: a detail (status 400) or a status and detail. */
export type RaisesEntry = string | { status: number, detail: string }

/** An exception type `raises` maps: any class. */
export type ExceptionType = abstract new (...args: never[]) => unknown

/** One entry of `raises`: an exception type and the error it becomes. */
export type RaisesPair = readonly [ExceptionType, RaisesEntry]

/**
 * The `raises` attribute: exception type -> error, a `Map` or an array of pairs. TypeScript types
 * an array literal in a class body as an array of arrays, not of pairs (nothing gives it the
 * base's type), so that is accepted too, and every entry is checked when the view is registered
 * (`FV_ERR_RAISES`).
 */
export type Raises = Iterable<RaisesPair> | ReadonlyArray<ReadonlyArray<ExceptionType | RaisesEntry>>

interface RaisesOwner { name?: string, raises?: Raises }

const isRaisesEntry = (value: unknown): value is RaisesEntry => typeof value === 'string' ||
  (typeof value === 'object' && value !== null && Number.isInteger(Reflect.get(value, 'status')) && typeof Reflect.get(value, 'detail') === 'string')

/** The checked pairs of each `raises` value, read once. */
const checkedRaises = new WeakMap<object, RaisesPair[]>()

/**
 * The pairs of an owner's `raises`, each checked to be an exception class and a detail or
 * `{ status, detail }`; registration calls it first, so a request never meets the error.
 */
export function raisesPairs (owner: RaisesOwner): RaisesPair[] {
  const raises = owner.raises
  if (raises === undefined) return []
  let pairs = checkedRaises.get(raises)
  if (pairs === undefined) {
    pairs = [...raises].map((pair: Iterable<unknown>, i) => {
      const [type, entry, ...rest] = pair
      if (typeof type !== 'function' || !isRaisesEntry(entry) || rest.length > 0) {
        throw new ConfigurationError('FV_ERR_RAISES', `${String(owner.name)}.raises[${i}] is not a pair of an exception class and its error: ` +
          'write [ExceptionClass, \'detail\'] (a 400) or [ExceptionClass, { status, detail }]')
      }
      // typeof narrows to Function only; any function may stand on the right of instanceof.
      return [type as ExceptionType, entry] as const
    })
    checkedRaises.set(raises, pairs)
  }
  return pairs
}

function lookupRaises (owner: RaisesOwner, error: unknown): RaisesEntry | undefined {
  for (const [type, entry] of raisesPairs(owner)) {
    if (error instanceof type) return entry
  }
  return undefined
}

function toAPIError (entry: RaisesEntry, cause: unknown): APIError {
  if (typeof entry === 'string') return new APIError(entry, { status: 400, cause })
  return new APIError(entry.detail, { status: entry.status, cause })
}

function mapCaught (view: object, specs: CatchSpec[] | undefined, error: unknown): unknown {
  const owner = view.constructor as RaisesOwner // a view instance's class
  // With Catch specs, the first that the error is an instance of decides; an error none names stays as it is.
  const spec = specs?.find((candidate) => error instanceof candidate.type)
  if (specs !== undefined && spec === undefined) return error
  if (spec !== undefined && (spec.status !== undefined || spec.detail !== undefined)) {
    return new APIError(spec.detail, { status: spec.status ?? 400, cause: error })
  }
  // Without specs, or with a Catch(Type) that `raises` maps (registration refused one it does not): `raises` decides.
  const entry = lookupRaises(owner, error)
  return entry === undefined ? error : toAPIError(entry, error)
}

/** Catch specs recorded on a wrapper, for the registration-time check and the docs. */
export const CATCH_SPECS = Symbol('fastify-views.catch-specs')

type Catching = { [CATCH_SPECS]?: CatchSpec[] | 'defined' }

/** The catch specs of a method: the listed types, `'defined'` for `CatchDefined`, or none. */
export function getCatchSpecs (fn: object): CatchSpec[] | 'defined' | undefined {
  return (fn as Catching)[CATCH_SPECS]
}

function wrapCatching<F extends (...args: never[]) => unknown> (method: F, specs: CatchSpec[] | undefined): F {
  const wrapper = function (this: object, ...args: Parameters<F>): unknown {
    let result: unknown
    try {
      result = method.apply(this, args)
    } catch (error) {
      throw mapCaught(this, specs, error)
    }
    // A rejected thenable (a query builder's) is caught as a rejected promise is; the view's reply is not waited on.
    if (isThenable(result, (this as { reply?: unknown }).reply)) {
      return Promise.resolve(result).catch((error: unknown) => { throw mapCaught(this, specs, error) })
    }
    return result
  } as unknown as F // the wrapper takes and returns what the method does; TypeScript cannot see that through the rest parameters
  copyRouteMeta(method, wrapper)
  const previous = getCatchSpecs(method)
  ;(wrapper as Catching)[CATCH_SPECS] = specs === undefined || previous === 'defined'
    ? 'defined'
    : [...(previous ?? []), ...specs]
  return wrapper
}

/**
 * Turns an exception of `type` thrown by the method (sync or async) into an API error:
 * the one `raises` maps it to, or the status and detail given here.
 */
export function Catch (
  type: abstract new (...args: never[]) => unknown,
  options?: { status?: number, detail?: string }
) {
  return <F extends (...args: never[]) => unknown>(
    method: F,
    context: ClassMethodDecoratorContext & PublicInstance
  ): F => {
    checkContext(context, 'Catch')
    return wrapCatching(method, [{ type, ...options }])
  }
}

/** Turns every exception type listed in the view's `raises` into its API error. */
export function CatchDefined<F extends (...args: never[]) => unknown> (
  method: F,
  context: ClassMethodDecoratorContext & PublicInstance
): F {
  checkContext(context, 'CatchDefined')
  return wrapCatching(method, undefined)
}

/** The `raises` entry for an exception type, if the owner maps it. */
export function findRaises (owner: RaisesOwner, type: ExceptionType): RaisesEntry | undefined {
  for (const [t, entry] of raisesPairs(owner)) {
    if (t === type || type.prototype instanceof t) return entry
  }
  return undefined
}

/** The options of `Events`: a GET route's options, the events it sends, and how its connection is kept. */
export interface EventsOptions<S extends RouteSchemas, E extends EventSchemas> extends
  Omit<CustomRouteOptions<S, undefined>, 'responseSchema' | 'statusCode' | 'envelope'>, EventStreamSettings {
  /** Each event's name and the schema of its data: `{ created: Item, deleted: ItemId }`. */
  events: E
  /** Nest the route under the view's detail route (`/:id/...`), as `Action`'s `detail` does. */
  detail?: boolean
}

/** A TC39 method decorator of an event-stream route: the method's type is checked against the route's schemas and events. */
export type EventsDecorator<S extends RouteSchemas, E extends EventSchemas> =
  <This, F extends EventRouteMethod<This, S, E>>(
    method: F,
    context: ClassMethodDecoratorContext<This, F> & PublicInstance
  ) => void

const EVENT_DEFAULTS: EventStreamLimits = {
  heartbeat: 15_000,
  maxBufferedBytes: 65_536,
  stallTimeout: 30_000,
  openAfter: 1000
}

/** The settings of an event-stream route, each checked: a mistake fails where the class is declared. */
function eventLimits (settings: EventStreamSettings, where: string): EventStreamLimits {
  const limits = { ...EVENT_DEFAULTS, ...settings }
  const smallest = { heartbeat: 0, maxBufferedBytes: 1024, stallTimeout: 1, openAfter: 0 }
  for (const key of Object.keys(EVENT_DEFAULTS) as Array<keyof EventStreamLimits>) {
    const value = limits[key]
    if (!Number.isSafeInteger(value) || value < smallest[key]) {
      throw new ConfigurationError('FV_ERR_STREAM', `${where}: ${key} is a whole number of ${key === 'maxBufferedBytes' ? 'bytes' : 'milliseconds'} ` +
        `from ${smallest[key]}, not ${String(value)}`)
    }
  }
  return limits
}

/** Each event's data schema in the 0.34 form, its name checked: a line break in it would end the field it is sent in. */
function eventSchemas (events: EventSchemas, where: string): Record<string, TSchema> {
  const names = typeof events === 'object' && events !== null ? Object.keys(events) : []
  if (names.length === 0) throw new ConfigurationError('FV_ERR_STREAM', `${where}: events names no event; write events: { name: Schema, ... }`)
  const schemas: Record<string, TSchema> = {}
  for (const name of names) {
    if (/[\r\n]/.test(name)) throw new ConfigurationError('FV_ERR_STREAM', `${where}: the event name ${JSON.stringify(name)} holds a line break`)
    const schema = events[name]
    if (typeof schema !== 'object' || schema === null) throw new ConfigurationError('FV_ERR_STREAM', `${where}: events.${name} is not a schema`)
    schemas[name] = toTypeBox(schema, `${where}: events.${name}`)
  }
  return schemas
}

/**
 * Declares a GET route that answers a stream of server-sent events (text/event-stream,
 * docs/streaming.md). The method runs after the route's dependencies and permissions, is given
 * the request and an `EventStreamContext` (the client's `Last-Event-ID`, a signal aborted when the
 * stream ends), and returns an async iterable of `{ event, data, id?, retry? }`, `data` typed by the
 * schema of its `event`. An error before the first event is an error answer.
 */
export function Events<const S extends RouteSchemas = {}, const E extends EventSchemas = EventSchemas> (
  path: string | undefined,
  options: EventsOptions<S, E>
): EventsDecorator<S, E> {
  const { events, heartbeat, maxBufferedBytes, stallTimeout, openAfter, detail = false, ...rest } = options
  return (method, context) => {
    checkContext(context, 'Events')
    const where = `@Events ${String(context.name)}`
    const settings: EventStreamSettings = {}
    if (heartbeat !== undefined) settings.heartbeat = heartbeat
    if (maxBufferedBytes !== undefined) settings.maxBufferedBytes = maxBufferedBytes
    if (stallTimeout !== undefined) settings.stallTimeout = stallTimeout
    if (openAfter !== undefined) settings.openAfter = openAfter
    annotate(method, {
      route: { methods: ['GET'], path: path ?? '/' + hyphenate(String(context.name)), defaultStatus: 200 },
      detail,
      options: rest,
      events: { schemas: eventSchemas(events, where), limits: eventLimits(settings, where) }
    })
  }
}
