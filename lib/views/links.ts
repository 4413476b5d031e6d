// Links to objects (views layer): the URL of an object's detail route where its view is served, prefixes included.
import type { FastifyRequest } from 'fastify'
import { joinPath } from '../core/paths.js'
import { ConfigurationError } from '../core/configuration-error.js'

// Links to a view's objects, on the path the view is really served at: the application's prefix,
// its router's and its own (`/api/members/:memberId/loans/:id`), so that a `Location` stays right
// wherever the view is registered.

/**
 * The URL of an object's detail route: each `:name` of the path is the object's field of that
 * name, else the request's path parameter (a nested view's parent), percent-encoded.
 */
export function detailUrl (request: FastifyRequest, detailRoute: string, object: object): string {
  const path = joinPath(request.routeOptions.config.prefix ?? '', detailRoute)
  const params = request.params as Record<string, unknown>
  return path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const value = (object as Record<string, unknown>)[name] ?? params[name]
    if (value === undefined || value === null) {
      throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `getDetailUrl: ${path} names :${name}, which neither the object nor the request's path parameters hold`)
    }
    return encodeURIComponent(String(value))
  })
}
