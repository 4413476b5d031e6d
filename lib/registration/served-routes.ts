// The routes a server serves (registration layer): which view serves each, a route served twice named by both, and operationIds made unique per document.
import type { FastifyInstance, RouteOptions } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { ViewClass } from '../views/view.js'

// Which view serves each route the library added to an application: what a refused duplicate
// route names, and what tells the plugin that views were registered before it was configured.

const viewsOfRoutes = new WeakMap<object, Map<string, string>>()

/** Whether the library has added any route to the application's server yet. */
export const hasViewRoutes = (app: FastifyInstance): boolean => (viewsOfRoutes.get(app.server)?.size ?? 0) > 0

/** Which view serves each route the library added to an application (method and URL -> view name). */
export function servedBy (app: FastifyInstance): Map<string, string> {
  let served = viewsOfRoutes.get(app.server)
  if (served === undefined) viewsOfRoutes.set(app.server, served = new Map())
  return served
}

/** Fastify's refusal of a route another view already serves, rewritten to name both views. */
export function sharedRoute (app: FastifyInstance, klass: ViewClass, route: RouteOptions, error: unknown): unknown {
  if ((error as { code?: unknown }).code !== 'FST_ERR_DUPLICATED_ROUTE') return error
  const method = String(route.method)
  const other = servedBy(app).get(`${method} ${route.url}`)
  return new ConfigurationError('FV_ERR_SHARED_ROUTE', `Cannot register ${klass.name}: ${method} ${route.url} is already served by ${other ?? 'another route of the application'}. ` +
    'Give one of them another prefix (or detailRoute), or leave one of the two actions out')
}

const operationIds = new WeakMap<object, Set<string>>()

/** OpenAPI operationIds are unique per document: a view registered twice gets `listItems2`. */
export function uniqueOperationId (app: FastifyInstance, schema: { operationId?: string }): void {
  let taken = operationIds.get(app.server)
  if (taken === undefined) operationIds.set(app.server, taken = new Set())
  const base = schema.operationId!
  let id = base
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`
  taken.add(id)
  schema.operationId = id
}
