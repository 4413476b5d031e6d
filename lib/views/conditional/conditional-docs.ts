// What conditional requests document (views layer): the request headers a client may send, and the
// validators of each success response (RFC 9110 §8.8, §13.1).
import { Type, type TSchema } from '@sinclair/typebox'
import { alwaysSent } from '../../http/response-headers.js'
import { isUnionNode, type SchemaNode } from '../../core/schema-node.js'
import type { RouteDefinition } from '../view.js'
import type { ConditionalOptions } from './conditional-options.js'

// The conditional request headers, documented as parameters so that Swagger UI's "Try it out" can send them (RFC 9110 §13.1).
export const READ_CONDITIONS: Record<string, TSchema> = {
  'if-none-match': Type.Optional(Type.String({ description: 'The ETags of the copies the client holds, or *: 304 when one is current (RFC 9110 §13.1.2).' })),
  'if-modified-since': Type.Optional(Type.String({ description: 'The Last-Modified of the client\'s copy, an HTTP-date: 304 when unchanged since (RFC 9110 §13.1.3).' }))
}
export const WRITE_CONDITIONS: Record<string, TSchema> = {
  'if-match': Type.Optional(Type.String({ description: 'The ETag the change is based on (strong comparison), or *: 412 when it no longer matches (RFC 9110 §13.1.1).' })),
  'if-unmodified-since': Type.Optional(Type.String({ description: 'The Last-Modified the change is based on, an HTTP-date: 412 when modified since, or within the current second (RFC 9110 §13.1.4).' })),
  'if-none-match': Type.Optional(Type.String({ description: '*: change only a resource that does not exist yet; 412 otherwise (RFC 9110 §13.1.2).' }))
}

/** Whether a property schema holds a time: a date-time or date string, nullable or not. */
export function holdsTime (schema: SchemaNode): boolean {
  if (isUnionNode(schema)) {
    const members = schema.anyOf.filter((member) => member.type !== 'null')
    return members.length > 0 && members.every(holdsTime)
  }
  return schema.type === 'string' && (schema.format === 'date-time' || schema.format === 'date')
}

/**
 * `Last-Modified` as servers send it: an IMF-fixdate (RFC 9110 section 5.6.7). JSON Schema has
 * no format for HTTP-dates, so the shape is a pattern, with an example for Swagger UI.
 */
const LAST_MODIFIED = Type.String({
  description: 'When the representation last changed, as an HTTP-date (RFC 9110 section 8.8.2).',
  pattern: '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$',
  examples: ['Thu, 01 Jan 2026 10:00:00 GMT']
})

/** What a view's validators depend on: `etag`, hand-rolled validators (`requests`), the field of `Last-Modified`. */
export interface ValidatorClass { readonly conditional: Pick<ConditionalOptions, 'etag' | 'requests' | 'lastModifiedField'> }

export const validatorHeaders = (klass: ValidatorClass, route: RouteDefinition): Record<string, unknown> => {
  const etag = Type.String({ description: 'Strong validator of the representation (RFC 9110 section 8.8.3).' })
  // With etag = true every 2xx and 304 of the route carries one; hand-rolled validators may not.
  const { etag: hashed, requests, lastModifiedField: field } = klass.conditional
  // A list that also streams (`listStream`) sends its streamed forms without one: the tag is not known until the last row is.
  const streams = route.name === 'list' && route.standard && Boolean(Reflect.get(klass, 'listStream'))
  const headers: Record<string, unknown> = { etag: hashed === true && !streams ? alwaysSent(etag) : etag }
  // lastModifiedField is stamped (with etag) from that field of the object sent: only a route
  // whose body has the field sends it; a list, a page or a custom shape never does.
  const stamped = hashed === true && field !== undefined &&
    (route.responseSchema?.properties as Record<string, unknown> | undefined)?.[field] !== undefined
  if (requests === true || stamped) headers['last-modified'] = LAST_MODIFIED
  return headers
}
