// The cache (registration layer, a route feature): cached reads, the invalidation every write of a cached
// resource makes before it is answered, and idempotent creates, through the application's store.
import type { onSendHookHandler } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { then, type MaybePromise } from '../core/maybe-promise.js'
import { appAuth } from '../access/authenticator.js'
import type { CacheStore } from '../stores/cache/cache-store.js'
import type { BeforeAction, RouteContribution, RouteDefinition, ViewClass } from '../views/view.js'
import { ServiceUnavailable } from '../http/errors.js'
import { extendContribution } from '../views/view.js'
import { collectRoutes } from './collect.js'
import { addsNoKwargs } from '../views/generic/generic-view.js'
import { judges } from '../views/generic/object-permissions.js'
import { ANYONE, SHARED, askerOf, type Asker, type PrincipalAsker } from './cache-key.js'
import { appCache, cacheOf, refuseByCache, refusedByCache, resourceOf, tolerated, type ResolvedCache } from './cache-settings.js'
import { cachedRead } from './cached-reads.js'
import { idempotentCreate } from './idempotent-creates.js'

const SAFE = new Set(['GET', 'HEAD'])
const CREATES = new Set(['create', 'bulkCreate'])

/**
 * A route's part in the application's cache (docs/cache.md): a cached read of a view's `cache.actions`,
 * the invalidation of its resource by every other method, and `Idempotency-Key` on its creates.
 * Nothing on an application without a store, or a route with nothing to do: such a route pays nothing.
 */
export function cache (route: RouteDefinition, method: string, view: ViewClass): RouteContribution | undefined {
  const store = appCache(route.app)
  const options = (view as { cache?: unknown }).cache // APIView's static, where the view has it
  if (store === undefined) {
    if (options !== undefined && route.app !== undefined) {
      throw new ConfigurationError('FV_ERR_CACHE', `Cannot register ${view.name}: it declares static cache, and the application has no cache store. ` +
        'Give it one before the views: configureApp(app, { cache: memoryCache() }) (or redisCache(client)), or the plugin\'s cache option')
    }
    return undefined
  }
  const cache = cacheOf(view)
  if (cache === undefined) return undefined
  checkShared(store, view, cache)
  if (cache.ttl !== undefined) assertActions(view, cache)
  if (SAFE.has(method)) {
    const ttl = cache.ttl
    if (ttl === undefined || !cache.actions.has(route.name)) return undefined
    const generations = readsOf(view, cache)
    for (const name of generations) cachedResources(store).add(name)
    const read = { store, cache, ttl, generations, asker: askerFor(route, view, cache), tagged: tagsBodies(view) }
    return cachedRead(read, route.status)
  }
  const reachable = store.reachable?.bind(store)
  const invalidation: RouteContribution = reachable === undefined
    ? { onSend: [invalidate(store, cache.writes)] }
    : {
        beforeAction: [unreachableRefused(store, reachable, cache.writes)],
        onSend: [invalidate(store, cache.writes)],
        responses: { 503: { errors: [ServiceUnavailable] } }
      }
  if (cache.idempotency === undefined || !CREATES.has(route.name) || method !== 'POST') return invalidation
  // An idempotency key is always the principal's own, even where answers are shared.
  const asker = principalAsker(route, view)
  return extendContribution(invalidation, idempotentCreate(store, asker, cache.idempotency, route.status))
}

/**
 * Every write of a resource gives its generations new tokens before it is answered, so that a read
 * that starts after the answer finds nothing saved before the write, on any instance. A refused
 * write (4xx) changed nothing and invalidates nothing; a failed one (5xx) may have, and does.
 */
function invalidate (store: CacheStore, generations: readonly string[]): onSendHookHandler {
  return (request, reply, payload, done) => {
    const status = reply.statusCode
    if ((status >= 400 && status < 500) || refusedByCache(request)) {
      done(null, payload)
      return
    }
    tolerated(store, request.log, () => store.bump(generations), () => { done(null, payload) })
  }
}

/** The resources some view of a store's application caches reads of: the writes the store must be told of. */
const CACHED = new WeakMap<CacheStore, Set<string>>()
function cachedResources (store: CacheStore): Set<string> {
  let names = CACHED.get(store)
  if (names === undefined) CACHED.set(store, names = new Set())
  return names
}

/**
 * A write of a resource whose reads are cached is refused (503, before the action: nothing is
 * written) while the store cannot be told of it: another instance would go on serving what it
 * made stale (docs/cache.md, "When the store fails"; a Redis store's `writesWhileUnreachable`).
 */
function unreachableRefused (
  store: CacheStore, reachable: () => MaybePromise<boolean>, generations: readonly string[]
): BeforeAction {
  return (_view, request) => {
    const cached = cachedResources(store)
    if (!generations.some((name) => cached.has(name))) return undefined
    return then(reachable(), (yes) => {
      if (yes) return
      refuseByCache(request)
      throw new ServiceUnavailable('The cache shared by this service cannot be reached, so this write could not be made known: ' +
        'nothing was written. Retry shortly.', { headers: { 'retry-after': 1 } })
    })
  }
}

/** The generations a view's reads depend on: its resource's, and those of the relations `?expand=` may embed. */
function readsOf (view: ViewClass, cache: ResolvedCache): string[] {
  const expand = (view as { expand?: Record<string, { view: unknown }> }).expand ?? {} // SparseFieldsMixin's static
  const related = Object.values(expand).map((relation) => resourceOf(relation.view as object)) // a relation's view is a view class
  return [...new Set([cache.resource, ...related.filter((name) => name !== undefined)])]
}

/** Who the answers are kept for: everyone, when the application authenticates nobody or the view says they are `shared`; else each principal. */
function askerFor (route: RouteDefinition, view: ViewClass, cache: ResolvedCache): Asker {
  if (cache.shared && (!addsNoKwargs(view) || judges(view, route.name))) {
    throw new ConfigurationError('FV_ERR_CACHE', `Cannot register ${view.name}: cache.shared keeps one answer for everyone, and the view's ` +
      `${judges(view, route.name) ? 'checkObjectPermissions judges' : 'getKwargs narrows'} what each request reads, so one principal's answer could reach another. ` +
      'Leave shared out (each principal\'s answers are kept apart)')
  }
  return cache.shared ? SHARED : principalAsker(route, view)
}

/** Each principal apart (by `auth.principalId`), or everyone when the application authenticates nobody. */
function principalAsker (route: RouteDefinition, view: ViewClass): PrincipalAsker {
  const auth = appAuth(route.app)
  if (auth === undefined) return ANYONE
  if (auth.principalId === undefined) {
    throw new ConfigurationError('FV_ERR_CACHE', `Cannot register ${view.name}: its answers are kept for each principal apart, and the application's auth has no principalId ` +
      'to tell them by. Give auth a principalId (principal => principal.id), or declare cache = { shared: true } if every principal gets the same answer')
  }
  return askerOf(auth.principalId)
}

/** Whether the view sends strong ETags hashed from its body (ConditionalMixin's `etag`). */
const tagsBodies = (view: ViewClass): boolean =>
  (view as { conditional?: { etag?: boolean } }).conditional?.etag === true // ConditionalMixin's static, where the view has it

const CHECKED = new WeakSet<object>()

/** Every action `cache.actions` names is a GET route of the view: a misspelt one would silently cache nothing. */
function assertActions (view: ViewClass, cache: ResolvedCache): void {
  // The default names both reads; a view with one of them caches that one. (`cache`: APIView's static.)
  if (CHECKED.has(view) || (view as { cache?: { actions?: unknown } }).cache?.actions === undefined) return
  CHECKED.add(view)
  const reads = new Set(collectRoutes(view).filter(({ route }) => route.methods.includes('GET')).map(({ route }) => route.name))
  for (const action of cache.actions) {
    if (reads.has(action)) continue
    throw new ConfigurationError('FV_ERR_CACHE', `Cannot register ${view.name}: cache.actions names "${action}", which is not a GET action of the view ` +
      `(its GET actions: ${[...reads].join(', ')})`)
  }
}

/** The resource each repository of a store's views is known by: two names for one repository would let a write miss the other's answers. */
const REPOSITORIES = new WeakMap<CacheStore, WeakMap<object, { resource: string, view: string }>>()

function checkShared (store: CacheStore, view: ViewClass, cache: ResolvedCache): void {
  const repository = (view as { repository?: unknown }).repository // a generic view's static; none from a getter
  if (typeof repository !== 'object' || repository === null) return
  let known = REPOSITORIES.get(store)
  if (known === undefined) REPOSITORIES.set(store, known = new WeakMap())
  const seen = known.get(repository)
  if (seen === undefined) {
    known.set(repository, { resource: cache.resource, view: view.name })
    return
  }
  if (seen.resource === cache.resource) return
  throw new ConfigurationError('FV_ERR_CACHE', `Cannot register ${view.name}: its repository is ${seen.view}'s, whose resource is "${seen.resource}", and its own is ` +
    `"${cache.resource}", so a write through one would leave the other's cached answers stale. Give both one name: cache = { resource: '${seen.resource}' }`)
}
