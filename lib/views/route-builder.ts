// The route builder (views layer): custom routes declared in `.with()`'s third argument, each typed from its own schemas.
import type { Schema } from '../core/typebox-lines.js'
import type { HTTPMethods } from 'fastify'
import { annotate } from '../routes/route-meta.js'
import type { CustomRouteOptions, RouteMethod, RouteSchemas } from '../routes/types.js'

/** A custom route made by a `RouteBuilder`: its handler, with the route recorded on it as a decorator records it. */
export type RouteHandler = (...args: never[]) => unknown

/** Declares one route of a method (or several), with the handler typed from the route's schemas and `this` the view `V`. */
type BuildRoute<V> = <const S extends RouteSchemas = {}, R extends Schema | undefined = undefined>(
  path: string,
  options: CustomRouteOptions<S, R>,
  handler: RouteMethod<V, S, R>
) => RouteHandler

/**
 * What the third argument of `.with(statics, methods, routes)` is given: one function per HTTP
 * method, each declaring a custom route the way `@Get`, `@Post`, ... do, with the handler's
 * `request` typed from `options.schema` and its return type from `options.responseSchema`, no
 * annotation needed (a decorator cannot type the method it decorates).
 */
export interface RouteBuilder<V> {
  /** A GET route (200). */
  get: BuildRoute<V>
  /** A POST route (201). */
  post: BuildRoute<V>
  /** A PUT route (200). */
  put: BuildRoute<V>
  /** A PATCH route (200). */
  patch: BuildRoute<V>
  /** A DELETE route (204). */
  delete: BuildRoute<V>
}

const builds = (methods: HTTPMethods[], defaultStatus: number) => (
  path: string,
  options: CustomRouteOptions,
  handler: RouteHandler
): RouteHandler => {
  annotate(handler, { route: { methods, path, defaultStatus }, options })
  return handler
}

/** The one run-time route builder: it records each route on its handler, which `.with()` installs as a method. */
export const routeBuilder: RouteBuilder<unknown> = {
  get: builds(['GET'], 200),
  post: builds(['POST'], 201),
  put: builds(['PUT'], 200),
  patch: builds(['PATCH'], 200),
  delete: builds(['DELETE'], 204)
}
