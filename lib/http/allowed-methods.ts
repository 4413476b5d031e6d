// The methods a target resource is served with (RFC 9110 §10.2.1 `Allow`): what a request no route
// matched is told, as a 405 or as the answer to OPTIONS, instead of a 404 for a path that exists.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import FindMyWay from 'find-my-way'

/** What the router of PATCH routes keeps for each: the media types its body takes, if it takes one. */
interface PatchRoute { acceptPatch: string | undefined }

/**
 * The PATCH routes of the views, in a router of their own per server, with the application's
 * router options: Fastify's `findRoute` tells that a path is served, not by which route (it hands
 * back one handler for all), so the `Accept-Patch` an OPTIONS request on the path is told (RFC 5789
 * §3.1) is found by matching the path the same way, with the same router. Every PATCH route is in
 * it, those without patch documents too, so that a static path (`/items/bulk`) is not taken for
 * the parametric one beside it (`/items/:id`).
 */
const patchRouters = new WeakMap<object, FindMyWay.Instance<FindMyWay.HTTPVersion.V1>>()

/** The handler the router of PATCH routes needs for each: never called, since it only finds them. */
/* c8 ignore next */
const findOnly = (): void => {}

/** The options of a router that decide which path a route matches (`useSemicolonDelimiter`: one find-my-way reads that its types leave out). */
type RouterOptions = Pick<FindMyWay.Config<FindMyWay.HTTPVersion.V1>, 'caseSensitive' | 'ignoreTrailingSlash' | 'ignoreDuplicateSlashes' | 'maxParamLength' |
'allowUnsafeRegex'> & { useSemicolonDelimiter?: boolean }

/** Records a PATCH route (`url` as the route declares it) and the media types its body takes, if it takes one, for the OPTIONS of its path. */
export function notePatchRoute (app: FastifyInstance, url: string, mediaTypes: readonly string[] | undefined): void {
  let router = patchRouters.get(app.server)
  if (router === undefined) {
    // Fastify 5's routerOptions, when given, hold the router's options; the top-level ones otherwise.
    const config: RouterOptions = app.initialConfig.routerOptions ?? app.initialConfig
    const options: RouterOptions = {
      caseSensitive: config.caseSensitive,
      ignoreTrailingSlash: config.ignoreTrailingSlash,
      ignoreDuplicateSlashes: config.ignoreDuplicateSlashes,
      maxParamLength: config.maxParamLength,
      allowUnsafeRegex: config.allowUnsafeRegex,
      useSemicolonDelimiter: config.useSemicolonDelimiter
    }
    router = FindMyWay(options)
    patchRouters.set(app.server, router)
  }
  const route: PatchRoute = { acceptPatch: mediaTypes?.join(', ') }
  // Two PATCH routes on one path differ by a constraint (a host): the first one's media types are told.
  if (!router.hasRoute('PATCH', url)) router.on('PATCH', url, findOnly, route)
}

/** What the routes of a path answer to, as a 405 or an OPTIONS answer tells it. */
export interface AllowedMethods {
  /** The methods, GET, HEAD, POST, PUT, PATCH, DELETE first, then the server's others, OPTIONS last (`GET, HEAD, POST, OPTIONS`). */
  allow: string
  /** The media types a view's PATCH takes here, when one serves the path. */
  acceptPatch: string | undefined
}

/** The usual order of methods in an `Allow` list; others follow in the server's order. */
const METHOD_ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']

/** The methods of a server, in `Allow` order, computed once per server. */
const orderedMethods = new WeakMap<object, readonly string[]>()

function methodsOf (app: FastifyInstance): readonly string[] {
  let methods = orderedMethods.get(app.server)
  if (methods === undefined) {
    const rank = (method: string): number => METHOD_ORDER.includes(method)
      ? METHOD_ORDER.indexOf(method)
      : METHOD_ORDER.length
    methods = [...app.supportedMethods].sort((a, b) => rank(a) - rank(b))
    orderedMethods.set(app.server, methods)
  }
  return methods
}

/**
 * The methods the application's routes serve the request's path with (its own routes and the
 * views', as its router matches them: trailing slashes, letter case and percent-encoding as it is
 * configured), or `undefined` when no route serves the path with any method other than OPTIONS:
 * an OPTIONS route matching every path (`@fastify/cors`'s `OPTIONS *`) does not make a path exist.
 * Routes that only match under a constraint (a host, a version) are not looked at. OPTIONS is
 * allowed wherever another method is, since the not-found handler answers it (`ErrorFormat.notFoundHandler`).
 */
export function allowedMethods (request: FastifyRequest): AllowedMethods | undefined {
  const app = request.server
  const url = request.url
  const allow: string[] = []
  let acceptPatch: string | undefined
  for (const method of methodsOf(app)) {
    if (method === 'OPTIONS' || app.findRoute({ method, url }) === null) continue
    allow.push(method)
    if (method !== 'PATCH') continue
    // The router's store is what notePatchRoute gave it (find-my-way types it `any`).
    const route = patchRouters.get(app.server)?.find('PATCH', url)?.store as PatchRoute | undefined
    acceptPatch = route?.acceptPatch
  }
  if (allow.length === 0) return undefined
  allow.push('OPTIONS')
  return { allow: allow.join(', '), acceptPatch }
}
