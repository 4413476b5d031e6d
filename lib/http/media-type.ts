import type { FastifyRequest, preParsingHookHandler } from 'fastify'
import { UnsupportedMediaType } from './errors.js'

/** `application/json`, or any `+json` structured syntax suffix (RFC 6839 §3.1), parameters allowed. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/** Whether a `Content-Type` names JSON; an absent one says nothing against it. */
export function isJsonContent (type: string | undefined): boolean {
  return type === undefined || type === 'application/json' || JSON_MEDIA_TYPE.test(type)
}

/** The 415 (RFC 9110 §15.5.16) of a view route that takes a JSON body only, for another media type. */
export function notJson (type: string): UnsupportedMediaType {
  return new UnsupportedMediaType(`This route takes application/json, not ${type.split(';')[0].trim()}.`)
}

/**
 * Marks the body validation error of a route that takes JSON only. A body of another
 * media type either has no parser (Fastify's own 415), or is parsed and then fails
 * validation (a `text/plain` string) or passes it (a form). The error handler turns the
 * first two into this route's 415 (`jsonBodyError`), and the route handler refuses the
 * third (`isJsonContent`): nothing runs before parsing, so a JSON request pays no hook.
 */
export const JSON_BODY_ONLY = Symbol('fastify-views.jsonBodyOnly')

/**
 * The 415 that replaces an error of a request whose body was not JSON, on a view route
 * that takes JSON only; `undefined` for any other error.
 */
export function jsonBodyError (error: unknown, request: FastifyRequest): UnsupportedMediaType | undefined {
  const type = request.headers['content-type']
  if (!(error instanceof Error) || isJsonContent(type)) return undefined
  const marked = (error as Error & { [JSON_BODY_ONLY]?: true })[JSON_BODY_ONLY] === true
  // Fastify found no parser for the type: on a view route with a JSON body, the route's own answer.
  const unparsed = (error as Error & { code?: unknown }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' &&
    request.routeOptions.config.view !== undefined && takesJsonOnly(request.routeOptions.schema?.body)
  return marked || unparsed ? notJson(type!) : undefined
}

/** A documented body without `content`: JSON only (a body in several media types lists them). */
const takesJsonOnly = (body: unknown): boolean => body !== undefined && (body as { content?: unknown }).content === undefined

/**
 * The same refusal before a parser runs, for a route with an error handler of its own:
 * that handler must see the 415, not a validation error about a body of the wrong type.
 */
const requireJsonBody: preParsingHookHandler = function requireJsonBody (request, _reply, payload, done) {
  const type = request.headers['content-type']
  if (!isJsonContent(type)) {
    done(notJson(type!))
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
 * `bodyMediaTypes` lists the media types of a body taken in several; `jsonChecked`, that the
 * route refuses a body that is not JSON itself, after parsing (`JSON_BODY_ONLY`).
 */
export function mediaTypeHook (method: string, hasBodySchema: boolean, bodyMediaTypes?: readonly string[], jsonChecked = false): preParsingHookHandler | undefined {
  if (bodyMediaTypes !== undefined) return acceptOnly(bodyMediaTypes)
  if (hasBodySchema) return jsonChecked ? undefined : requireJsonBody
  return BODYLESS.has(method) ? undefined : ignoreEmptyBody
}
