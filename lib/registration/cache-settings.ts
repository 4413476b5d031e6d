// The cache of an application (registration layer): its store, each view's options checked and resolved
// once, the resources they name, and a store's failures logged once in an interval.
import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { CacheStore } from '../stores/cache/cache-store.js'
import { isThenable, type MaybePromise } from '../core/maybe-promise.js'
import type { CacheOptions, CachedViewClass } from '../stores/cache/cache-options.js'
import type { ViewClass } from '../views/view.js'
import { componentName } from '../views/naming.js'

const APP_CACHE = Symbol('fastify-views.cache')
type WithCache = FastifyInstance & { [APP_CACHE]?: CacheStore }

/** Records a context's cache store: every view route registered after it caches and invalidates through it. */
export function configureCache (app: FastifyInstance, store: CacheStore): void {
  const own = Object.hasOwn(app, APP_CACHE) ? (app as WithCache)[APP_CACHE] : undefined
  if (own !== undefined && own !== store) {
    throw new ConfigurationError('FV_ERR_CACHE', 'fastify-views: the application was configured with one cache store and is now given another; ' +
      'give it once, in the first configureApp(app, { cache }) or the plugin\'s cache')
  }
  ;(app as WithCache)[APP_CACHE] = store
}

/** The cache store of a context (or of the one around it), if the application configured one. */
export const appCache = (app: FastifyInstance | undefined): CacheStore | undefined =>
  app === undefined ? undefined : (app as WithCache)[APP_CACHE]

/** A view's cache options, checked and with their defaults. */
export interface ResolvedCache {
  /** Milliseconds, or `undefined` when the view's reads are not cached. */
  readonly ttl: number | undefined
  readonly actions: ReadonlySet<string>
  /** The view's resource: its `cache.resource`, or a generic view's component name. */
  readonly resource: string
  /** What a write of the view bumps: its resource and the ones it invalidates. */
  readonly writes: readonly string[]
  readonly vary: readonly string[]
  readonly shared: boolean
  readonly cacheControl: string
  readonly jitter: number
  /** Milliseconds: how long an idempotency key's answer is kept and a running request holds it; `undefined` when off. */
  readonly idempotency: { readonly ttl: number, readonly lease: number } | undefined
}

// A resource's name is part of the store's keys (and of Redis's key names): a plain name, so that
// no resource's keys can be read as another's.
const RESOURCE = /^[A-Za-z0-9_.-]{1,100}$/
// A request header's name (RFC 9110 §5.1: a token), lower case as Node gives them.
const HEADER = /^[!#$%&'*+.^_`|~0-9a-z-]{1,100}$/
const YEAR = 365 * 86_400

const RESOLVED = new WeakMap<object, ResolvedCache>()

const IDEMPOTENCY_OPTIONS: ReadonlySet<string> = new Set(['ttl', 'lease'])
const OPTIONS: ReadonlySet<string> = new Set(['ttl', 'actions', 'resource', 'invalidates', 'vary', 'shared', 'maxAge', 'jitter', 'idempotency'])

/** Whether a view class is a generic view: it has a repository whose writes are the resource's. */
const isGeneric = (view: object): boolean => 'repositoryOptions' in view

/** The resource a view reads and writes: its `cache.resource`, or its component name for a generic view. */
export function resourceOf (view: object): string | undefined {
  // Any view class: an APIView's `cache` static, where it has one, and its name.
  const options = (view as { cache?: CacheOptions }).cache
  if (options?.resource !== undefined) return checkedResource(options.resource, (view as { name: string }).name)
  return isGeneric(view) ? componentName(view as ViewClass) : undefined
}

function checkedResource (name: string, where: string): string {
  if (!RESOURCE.test(name)) {
    throw refuse(where, `cache.resource "${name}" is not a plain name: use letters, digits, _ . - (at most 100)`)
  }
  return name
}

const refuse = (where: string, why: string): ConfigurationError => new ConfigurationError('FV_ERR_CACHE', `Cannot register ${where}: ${why}`)

function seconds (value: number | undefined, what: string, where: string): number | undefined {
  if (value === undefined) return undefined
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || value > YEAR) {
    throw refuse(where, `cache.${what} is ${String(value)}; give a number of seconds above 0 and at most a year (${YEAR})`)
  }
  return value
}

const secondsOr = (value: number | undefined, what: string, where: string, fallback: number): number =>
  seconds(value, what, where) ?? fallback

/** A view's cache options, checked once: a mistake in them is a registration error naming the option and the fix. */
export function cacheOf (view: ViewClass): ResolvedCache | undefined {
  const options = (view as { cache?: CacheOptions }).cache // APIView's static, where the view has it
  if (options === undefined && !isGeneric(view)) return undefined
  let resolved = RESOLVED.get(view)
  if (resolved !== undefined) return resolved
  const where = view.name
  const own = options ?? {}
  // A class's static is not checked for excess properties by the compiler: a misspelt option would do nothing.
  const unknown = Object.keys(own).find((name) => !OPTIONS.has(name))
  if (unknown !== undefined) throw refuse(where, `cache has no option "${unknown}" (its options: ${[...OPTIONS].join(', ')})`)
  if (typeof own.idempotency === 'object') {
    const extra = Object.keys(own.idempotency).find((name) => !IDEMPOTENCY_OPTIONS.has(name))
    if (extra !== undefined) throw refuse(where, `cache.idempotency has no option "${extra}" (its options: ttl, lease)`)
  }
  const ttl = seconds(own.ttl, 'ttl', where)
  const maxAge = own.maxAge === undefined ? undefined : seconds(own.maxAge, 'maxAge', where)
  const jitter = own.jitter ?? 0.1
  if (!(jitter >= 0 && jitter <= 0.5)) throw refuse(where, `cache.jitter is ${String(jitter)}; give a fraction from 0 to 0.5`)
  const vary = (own.vary ?? []).map((name) => {
    const lower = String(name).toLowerCase()
    if (!HEADER.test(lower)) throw refuse(where, `cache.vary names "${String(name)}", which is not a header's name`)
    return lower
  })
  const resource = resourceOf(view)
  const invalidated = (own.invalidates ?? []).map((target) => invalidatedResource(target, where))
  if (resource === undefined) {
    throw refuse(where, 'it is not a generic view, so the cache cannot tell what it reads and writes: name it, cache = { resource: \'items\', ... }')
  }
  const idempotency = own.idempotency === undefined || own.idempotency === false
    ? undefined
    : {
        ttl: secondsOr(own.idempotency === true ? undefined : own.idempotency.ttl, 'idempotency.ttl', where, 86_400) * 1000,
        lease: secondsOr(own.idempotency === true ? undefined : own.idempotency.lease, 'idempotency.lease', where, 60) * 1000
      }
  const shared = own.shared === true
  const visibility = shared ? 'public' : 'private'
  resolved = {
    ttl: ttl === undefined ? undefined : ttl * 1000,
    actions: new Set(own.actions ?? ['list', 'retrieve']),
    resource,
    writes: [...new Set([resource, ...invalidated])],
    vary,
    shared,
    cacheControl: maxAge === undefined ? `${visibility}, no-cache` : `${visibility}, max-age=${Math.floor(maxAge)}`,
    jitter,
    idempotency
  }
  RESOLVED.set(view, resolved)
  return resolved
}

function invalidatedResource (target: string | CachedViewClass, where: string): string {
  if (typeof target === 'string') return checkedResource(target, where)
  const resource = typeof target === 'function' ? resourceOf(target) : undefined
  if (resource === undefined) {
    throw refuse(where, `cache.invalidates names ${String((target as { name?: string } | undefined)?.name ?? target)}, which has no resource: name a generic view, or a resource's name`)
  }
  return resource
}

/** How often a failing store is logged: once a minute per store, not on every request it lets through. */
const WARNING_INTERVAL = 60_000
const WARNED = new WeakMap<CacheStore, number>()

/** Logs a store's failure (the request goes on without the cache), at most once in `WARNING_INTERVAL`. */
export function storeFailed (store: CacheStore, log: FastifyBaseLogger, error: unknown): void {
  const now = Date.now()
  if (now - (WARNED.get(store) ?? -Infinity) < WARNING_INTERVAL) return
  WARNED.set(store, now)
  log.warn({ err: error }, `fastify-views: the ${store.kind} cache store failed; serving without it`)
}

/** Requests a step of the cache refused before their action ran (a 503): they wrote nothing, and invalidate nothing. */
const REFUSED = new WeakSet<FastifyRequest>()
export const refuseByCache = (request: FastifyRequest): void => { REFUSED.add(request) }
export const refusedByCache = (request: FastifyRequest): boolean => REFUSED.has(request)

/**
 * Runs a store operation the request does not depend on (a bump, a save, a settle): a failure, thrown
 * or rejected, is logged (`storeFailed`) and never reaches the request. Calls `after` once it is done,
 * at once for a store that answers at once.
 */
export function tolerated (
  store: CacheStore, log: FastifyBaseLogger, operation: () => MaybePromise<void>, after: () => void
): void {
  let done
  try {
    done = operation()
  } catch (error) {
    storeFailed(store, log, error)
  }
  if (!isThenable(done)) {
    after()
    return
  }
  done.then(after, (error: unknown) => {
    storeFailed(store, log, error)
    after()
  })
}
