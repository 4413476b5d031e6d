// What content a view route takes, read once at registration: a body (required or optional), the
// media types of one taken in several, and what a route without a body does with content sent anyway.
import { ConfigurationError } from '../core/configuration-error.js'
import { isOptionalNode } from '../core/schema-node.js'
import type { RouteContent, UnexpectedContent } from '../http/media-type.js'
import type { CollectedRoute, ViewClass } from '../views/view.js'

export type { RouteContent }

const UNEXPECTED_CONTENT = new Set<unknown>(['ignore', 'refuse'])

/**
 * What a route takes, from its collected definition and its merged options. Throws
 * `FV_ERR_ROUTE_CONTENT` for an `unexpectedContent` that is neither `'ignore'` nor `'refuse'`, and
 * for an optional body where the action needs one: a standard action reads the body it validates
 * (and only a standard action takes a body in several media types).
 */
export function routeContent (
  klass: ViewClass,
  route: CollectedRoute,
  merged: { unexpectedContent?: UnexpectedContent, errorHandler?: unknown },
  bodyLimit: number
): RouteContent {
  const body = route.options.schema?.body
  const takesBody = body !== undefined || route.anyJsonBody === true
  const unexpectedContent = merged.unexpectedContent ?? 'ignore'
  if (!UNEXPECTED_CONTENT.has(unexpectedContent)) {
    throw new ConfigurationError('FV_ERR_ROUTE_CONTENT', `Cannot register ${klass.name}: ${klass.name}.${route.name} has unexpectedContent ` +
      `${String(JSON.stringify(unexpectedContent))}; it is 'ignore' (the default: content on a route without a body is read and dropped) or 'refuse' (a 415)`)
  }
  const optionalBody = isOptionalNode(body)
  if (optionalBody && route.standard) {
    throw new ConfigurationError('FV_ERR_ROUTE_CONTENT', `Cannot register ${klass.name}: ${klass.name}.${route.name} declares an optional body (Type.Optional), ` +
      'but a standard action reads the body it validates. Declare the body without Type.Optional, or move the route to a method of its own (@Post(...))')
  }
  return {
    takesBody,
    optionalBody,
    bodyMediaTypes: route.bodyMediaTypes === undefined ? undefined : Object.keys(route.bodyMediaTypes),
    // A JSON-only body is checked after parsing, at no cost to a JSON request, unless the route
    // names its own error handler: that handler gets the 415 from a hook before parsing instead.
    jsonChecked: takesBody && route.bodyMediaTypes === undefined && merged.errorHandler === undefined,
    unexpectedContent,
    bodyLimit
  }
}
