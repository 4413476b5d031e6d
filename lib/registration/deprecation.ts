// Deprecated routes (registration layer, a route feature): the `Deprecation` (RFC 9745) and `Sunset`
// (RFC 8594) headers on every answer of a route its options deprecate, and `deprecated: true` in the document.
import { Type } from '@sinclair/typebox'
import type { onSendHookHandler } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { RouteContribution, RouteDefinition, ViewClass } from '../views/view.js'

/** A route's deprecation: since when, until when it is served, and where the client reads more. */
export interface DeprecationOptions {
  /** When the route was deprecated, or will be (a `Date`, or a string `Date` reads): the `Deprecation` header (RFC 9745 §2). */
  since: Date | string
  /** When the route stops being served: the `Sunset` header (RFC 8594 §3). */
  sunset?: Date | string
  /** Where the deprecation is explained: `Link: <url>; rel="deprecation"` (RFC 9745 §3). */
  link?: string
}

declare module '../routes/types.js' {
  interface SharedRouteOptions {
    /**
     * The route is deprecated: every answer carries `Deprecation` (and `Sunset`, `Link`) headers, and
     * the document marks the operation deprecated (docs/routing.md#deprecated-routes). On a route's
     * decorator or `Override`, a registration entry (every route of the view) or a `ViewRouter`.
     */
    deprecation?: DeprecationOptions
  }
}

/** A date of the options as milliseconds; an unreadable one is a mistake of the route's, named with the fix. */
function timeOf (value: Date | string, what: string, where: string): number {
  const time = new Date(value).getTime()
  if (Number.isNaN(time)) {
    throw new ConfigurationError('FV_ERR_DEPRECATION', `${where} has deprecation.${what} ${JSON.stringify(value)}, which is not a date: ` +
      'give a Date or an ISO 8601 date (\'2026-12-31\')')
  }
  return time
}

const DOCUMENTED = {
  deprecation: Type.String({ description: 'When the operation was deprecated, a date as seconds since the epoch (RFC 9745).', examples: ['@1767225600'] }),
  sunset: Type.String({ description: 'When the operation stops being served, an HTTP-date (RFC 8594).' }),
  link: Type.String({ description: 'Where the deprecation is explained (rel="deprecation").' })
}

/** What a deprecated route adds to each of its operations: the headers on every answer, and the document's mark. */
export function deprecation (route: RouteDefinition, _method: string, view: ViewClass): RouteContribution | undefined {
  const options = route.options.deprecation
  if (options === undefined) return undefined
  const where = `Cannot register ${view.name}: ${view.name}.${route.name}`
  const headers: Record<string, string> = { deprecation: `@${Math.floor(timeOf(options.since, 'since', where) / 1000)}` }
  if (options.sunset !== undefined) headers.sunset = new Date(timeOf(options.sunset, 'sunset', where)).toUTCString()
  if (options.link !== undefined) headers.link = `<${options.link}>; rel="deprecation"`
  // On every answer, a refusal of any kind included: a client learns it whatever it sent.
  const stamp: onSendHookHandler = (_request, reply, payload, done) => {
    reply.headers(headers)
    done(null, payload)
  }
  // Only the headers the route sends; each a key of DOCUMENTED.
  const names = Object.keys(headers) as Array<keyof typeof DOCUMENTED>
  const documented = Object.fromEntries(names.map((name) => [name, DOCUMENTED[name]]))
  return { onSend: [stamp], responses: { [route.status]: { headers: documented } }, deprecated: true }
}
