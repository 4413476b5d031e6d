import type { preParsingHookHandler } from 'fastify'
import { UnsupportedMediaType } from './errors.js'

/** `application/json`, or any `+json` structured syntax suffix (RFC 6839 §3.1), parameters allowed. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * A view route that validates a JSON body answers 415 to any other media type (RFC 9110
 * §15.5.16) before a parser runs: Fastify's default `text/plain` parser would otherwise
 * hand the validator a string, and the client would get a 400 about the body's shape.
 */
const requireJsonBody: preParsingHookHandler = function requireJsonBody (request, _reply, payload, done) {
  const type = request.headers['content-type']
  if (type !== undefined && type !== 'application/json' && !JSON_MEDIA_TYPE.test(type)) {
    done(new UnsupportedMediaType(`This route takes application/json, not ${type.split(';')[0].trim()}.`))
    return
  }
  done(null, payload)
}

/**
 * A route that takes no body must not fail on an empty one: clients that always send
 * `content-type: application/json` send it on a DELETE too, and Fastify's JSON parser
 * refuses an empty document. With nothing to parse, the media type is dropped.
 */
const ignoreEmptyBody: preParsingHookHandler = function ignoreEmptyBody (request, _reply, payload, done) {
  const headers = request.headers
  if (headers['content-type'] !== undefined && (headers['content-length'] === '0' || headers['content-length'] === undefined) && headers['transfer-encoding'] === undefined) {
    delete headers['content-type']
  }
  done(null, payload)
}

/** Methods whose body Fastify never parses. */
const BODYLESS = new Set(['GET', 'HEAD'])

// Callback hooks, not async ones: no promise per request on every route with a body.

/**
 * A route whose body may have one of several media types (a partial update's patch formats)
 * answers 415 to any other, naming the ones it takes in `Accept-Patch` (RFC 5789 section 2.2).
 */
function acceptOnly (types: readonly string[]): preParsingHookHandler {
  const accepted = new Set(types)
  const headers = { 'accept-patch': types.join(', ') }
  return function acceptMediaTypes (request, _reply, payload, done) {
    const type = request.headers['content-type']
    // Fastify's own reading of the header: the one its body validation is chosen by.
    if (type !== undefined && !accepted.has(request.mediaType!)) {
      done(new UnsupportedMediaType(`This route takes ${types.join(', ')}, not ${type.split(';')[0].trim()}.`, { headers }))
      return
    }
    done(null, payload)
  }
}

/**
 * The media-type hook a view route needs, chosen once at registration; `undefined` for none.
 * `bodyMediaTypes` lists the media types of a body taken in several.
 */
export function mediaTypeHook (method: string, hasBodySchema: boolean, bodyMediaTypes?: readonly string[]): preParsingHookHandler | undefined {
  if (bodyMediaTypes !== undefined) return acceptOnly(bodyMediaTypes)
  if (hasBodySchema) return requireJsonBody
  return BODYLESS.has(method) ? undefined : ignoreEmptyBody
}
