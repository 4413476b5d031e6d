// Route metadata (routes layer): what decorators record on a method, and how route options and responses merge.
import type { HTTPMethods } from 'fastify'
import type { APIErrorClass } from '../http/errors.js'
import type { CustomRouteOptions, ResolvedRouteOptions, ResolvedRouteSchemas, ResponseDoc, ResponsesMap, ViewRouteOptions } from './types.js'
import { toTypeBox } from '../core/typebox-lines.js'
import type { EventRoute } from './events.js'

/** How one `Catch` maps an exception type to an error (its own status and detail, else `raises`). */
export interface CatchSpec {
  type: abstract new (...args: never[]) => unknown
  status?: number
  detail?: string
}

/** The route a route decorator (or the route builder) declares: its methods, path and status, always all three. */
export interface DeclaredRoute {
  methods: HTTPMethods[]
  path: string
  /** The decorator's own status (Post 201, Delete 204); `options.statusCode` wins over it. */
  defaultStatus: number
}

/**
 * What decorators record about a method. Stacked decorators merge into one record,
 * whatever their order; the one applied last (the outer one) wins on scalars.
 */
export interface RouteMeta {
  /** Set by a route decorator; absent when only `Override` / `Throws` applied. */
  route?: DeclaredRoute
  /** `Action(..., { detail: true })`: the path nests under the detail route. */
  detail?: boolean
  /** A route decorator's options (`envelope` included), merged with those of `Override`. */
  options: CustomRouteOptions
  throws: APIErrorClass[]
  /** Set by `Events`: the route answers a stream of these events. */
  events?: EventRoute
}

/** The record of each annotated method: a function's metadata lives beside it, not on it. */
const META = new WeakMap<object, RouteMeta>()

/** The route metadata recorded on a method, if any. */
export function getRouteMeta (fn: object): RouteMeta | undefined {
  return META.get(fn)
}

/** Copies the metadata of one function onto another (a wrapper replacing it). */
export function copyRouteMeta (from: object, to: object): void {
  const meta = getRouteMeta(from)
  if (meta !== undefined) META.set(to, meta)
}

/**
 * Merges two `responses` maps: statuses are unioned, within a status the later wins key by
 * key, headers add up and error lists are unioned. A body the later entry declares (`schema`,
 * `content` or `errors`) replaces the earlier `schema` and `content`, whichever form each uses.
 */
export function mergeResponses (base: ResponsesMap, over: ResponsesMap | undefined): ResponsesMap
export function mergeResponses (
  base: ResponsesMap | undefined,
  over: ResponsesMap | undefined
): ResponsesMap | undefined
export function mergeResponses (
  base: ResponsesMap | undefined,
  over: ResponsesMap | undefined
): ResponsesMap | undefined {
  if (base === undefined) return over
  if (over === undefined) return base
  const out: ResponsesMap = { ...base }
  for (const status of Object.keys(over)) {
    const a = base[status]
    const b = over[status]
    out[status] = a === undefined ? b : mergeEntry(a, b)
  }
  return out
}

function mergeEntry (a: ResponseDoc, b: ResponseDoc): ResponseDoc {
  const entry: ResponseDoc = {
    ...a,
    ...b,
    headers: a.headers === undefined ? b.headers : { ...a.headers, ...b.headers },
    errors: unionErrors(a.errors, b.errors)
  }
  if (b.schema !== undefined || b.content !== undefined || b.errors !== undefined) {
    if (b.schema === undefined) delete entry.schema
    if (b.content === undefined) delete entry.content
  }
  return entry
}

function unionErrors (a: APIErrorClass[] | undefined, b: APIErrorClass[] | undefined): APIErrorClass[] | undefined {
  if (a === undefined) return b
  if (b === undefined) return a
  return [...new Set([...a, ...b])]
}

/** Fastify hooks a route option may carry: outer levels' run first, then the route's own. */
const HOOKS = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onTimeout', 'onError', 'onRequestAbort'] as const

const asList = (value: unknown): unknown[] => Array.isArray(value) ? value : [value]

/**
 * Merges route options: `over` wins on scalars (tags included: the innermost list
 * replaces the outer ones); responses, dependencies, hooks and `config` combine.
 */
export function mergeRouteOptions<O extends ViewRouteOptions> (base: ViewRouteOptions, over: O): O {
  const merged: O = { ...base, ...over }
  const responses = mergeResponses(base.responses, over.responses)
  if (responses !== undefined) merged.responses = responses
  if (base.schema !== undefined && over.schema !== undefined) merged.schema = { ...base.schema, ...over.schema }
  if (base.dependencies !== undefined && over.dependencies !== undefined) {
    merged.dependencies = [
      ...base.dependencies,
      ...over.dependencies
    ]
  }
  // Permissions and throttles of every level apply: an inner level adds to the outer ones, never replaces them.
  if (base.permissions !== undefined && over.permissions !== undefined) {
    merged.permissions = [...base.permissions, ...over.permissions]
  }
  if (base.throttles !== undefined && over.throttles !== undefined) {
    merged.throttles = [...base.throttles, ...over.throttles]
  }
  if (base.config !== undefined && over.config !== undefined) merged.config = { ...base.config, ...over.config }
  const hooks: Record<string, unknown> = {}
  for (const hook of HOOKS) {
    if (base[hook] !== undefined && over[hook] !== undefined) {
      hooks[hook] = [
        ...asList(base[hook]),
        ...asList(over[hook])
      ]
    }
  }
  return Object.assign(merged, hooks)
}

/**
 * The options of a route with its request schemas and success schema in the 0.34 form, so
 * that a route may declare them with either TypeBox line. `where` names the route in errors.
 */
export function resolveRouteOptions (options: ViewRouteOptions, where: string): ResolvedRouteOptions {
  const { schema, responseSchema, ...rest } = options
  const resolved: ResolvedRouteOptions = rest
  if (responseSchema !== undefined) resolved.responseSchema = toTypeBox(responseSchema, `${where} responseSchema`)
  if (schema !== undefined) {
    const parts: ResolvedRouteSchemas = {}
    for (const part of REQUEST_PARTS) {
      if (schema[part] !== undefined) parts[part] = toTypeBox(schema[part], `${where} schema.${part}`)
    }
    resolved.schema = parts
  }
  return resolved
}

const REQUEST_PARTS = ['params', 'querystring', 'body', 'headers'] as const

/** Records metadata on a method, merging with what earlier (inner) decorators recorded. */
export function annotate (fn: object, patch: Partial<RouteMeta>): void {
  const prev = META.get(fn)
  if (prev === undefined) {
    META.set(fn, { options: {}, throws: [], ...patch })
    return
  }
  META.set(fn, {
    ...prev,
    ...patch,
    // A route decorator's placement wins, however Override/Throws were stacked around it.
    route: patch.route ?? prev.route,
    detail: patch.detail ?? prev.detail,
    options: patch.options === undefined ? prev.options : mergeRouteOptions(prev.options, patch.options),
    throws: patch.throws === undefined ? prev.throws : [...new Set([...prev.throws, ...patch.throws])]
  })
}
