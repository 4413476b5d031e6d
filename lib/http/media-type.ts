// The media types a view route takes (RFC 9110 §8.3): what is refused with a 415, and where.
import type { IncomingHttpHeaders } from 'node:http'
import { errorCodes, type FastifyBodyParser, type FastifyInstance, type FastifyReply, type FastifyRequest, type preParsingHookHandler, type RouteOptions } from 'fastify'
import { UnsupportedMediaType } from './errors.js'

/**
 * `application/json` with or without parameters (`; charset=utf-8`). Type and subtype are
 * case-insensitive (RFC 9110 §8.3.1), so `APPLICATION/JSON` is JSON too; a `+json` type is
 * not: it names another format (a merge patch, a problem) written in JSON.
 */
const JSON_MEDIA_TYPE = /^application\/json[\t ]*(?:;|$)/i

/**
 * Whether a request carries content: a Content-Length other than 0, or a Transfer-Encoding,
 * whose content has a length nobody announced (RFC 9112 §6.3).
 */
export function hasContent (headers: IncomingHttpHeaders): boolean {
  const length = headers['content-length']
  return (length !== undefined && length !== '0') || headers['transfer-encoding'] !== undefined
}

/**
 * Whether a request is what a route that takes `application/json` only accepts: JSON, or no
 * content at all. Content without a Content-Type is not JSON: a recipient may take it for
 * `application/octet-stream` (RFC 9110 §8.3).
 */
export function isJsonRequest (headers: IncomingHttpHeaders): boolean {
  const type = headers['content-type']
  if (type === undefined) return !hasContent(headers)
  return type === 'application/json' || JSON_MEDIA_TYPE.test(type)
}

/** How a refusal names what was sent: the media type without parameters, or its absence. */
const sent = (type: string | undefined): string => type === undefined ? '; the content has no media type.' : `, not ${type.split(';')[0].trim()}.`

/** The 415 (RFC 9110 §15.5.16) of a view route that takes a JSON body only, for anything else. */
export function notJson (type: string | undefined): UnsupportedMediaType {
  return new UnsupportedMediaType(`This route takes application/json${sent(type)}`)
}

/**
 * The 415 of a route that takes no content and refuses it (`unexpectedContent: 'refuse'`): its
 * operation documents no request body, so content would be ignored, and ignoring it could act on
 * more than the client meant (a bulk DELETE whose criteria were sent in a body instead of the query).
 */
export function noContent (): UnsupportedMediaType {
  return new UnsupportedMediaType('This route takes no content.')
}

/**
 * Marks the body validation error of a route that takes JSON only. A body of another
 * media type either has no parser (Fastify's own 415), or is parsed and then fails
 * validation (a `text/plain` string) or passes it (a form). The error handler turns the
 * first two into this route's 415 (`jsonBodyError`), and the route handler refuses the
 * third (`isJsonRequest`): nothing runs before parsing, so a JSON request pays no hook.
 */
export const JSON_BODY_ONLY = Symbol('fastify-views.jsonBodyOnly')

/**
 * The 415 that replaces an error of a request whose body was not JSON, on a view route
 * that takes JSON only; `undefined` for any other error.
 */
export function jsonBodyError (error: unknown, request: FastifyRequest): UnsupportedMediaType | undefined {
  if (!(error instanceof Error) || isJsonRequest(request.headers)) return undefined
  const marked = (error as Error & { [JSON_BODY_ONLY]?: true })[JSON_BODY_ONLY] === true
  // Fastify found no parser for the type: on a view route with a JSON body, the route's own answer.
  const unparsed = (error as Error & { code?: unknown }).code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' &&
    request.routeOptions.config.view !== undefined && takesJsonOnly(request.routeOptions.schema?.body)
  return marked || unparsed ? notJson(request.headers['content-type']) : undefined
}

/** A documented body without `content`: JSON only (a body in several media types lists them). */
const takesJsonOnly = (body: unknown): boolean => body !== undefined &&
  (body as { content?: unknown }).content === undefined

// Callback hooks, not async ones: no promise per request on the routes that have them.

/**
 * The same refusal before a parser runs, for a route with an error handler of its own:
 * that handler must see the 415, not a validation error about a body of the wrong type.
 */
const requireJsonBody: preParsingHookHandler = function requireJsonBody (request, _reply, payload, done) {
  if (!isJsonRequest(request.headers)) {
    done(notJson(request.headers['content-type']))
    return
  }
  done(null, payload)
}

/**
 * Clients that always send `content-type: application/json` send it on an empty DELETE too, and
 * Fastify's JSON parser refuses an empty document: the media type of no content is dropped.
 * Deleting a header the request does not have changes nothing: no test first.
 */
const dropEmptyType = (headers: IncomingHttpHeaders): void => { delete headers['content-type'] }

/**
 * A route that takes no content and refuses it (`unexpectedContent: 'refuse'`) does so before
 * anything is read: no parser runs, so neither its media type nor its size matters.
 */
const refuseContent: preParsingHookHandler = function refuseContent (request, _reply, payload, done) {
  const headers = request.headers
  if (hasContent(headers)) {
    done(noContent())
    return
  }
  dropEmptyType(headers)
  done(null, payload)
}

/**
 * A route that takes no content ignores any, as Fastify does for a route without a body schema
 * and RFC 9110 lets it (§9.3.1, §9.3.5: such content has no defined semantics): it is read within
 * `bodyLimit` and discarded unparsed, so neither its media type nor its syntax matters, and a
 * request whose content passes the limit is a 413, as a body would be. Once read, the request is
 * left without content (its `Content-Type`, `Content-Length` and `Transfer-Encoding` removed), so
 * that Fastify parses nothing and the route sees no body. Nothing is buffered: only the bytes are counted.
 */
function ignoreContent (limit: number): preParsingHookHandler {
  return function ignoreContent (request, reply, payload, done) {
    const headers = request.headers
    if (!hasContent(headers)) {
      dropEmptyType(headers)
      done(null, payload)
      return
    }
    // A Content-Length past the limit is refused unread, as Fastify refuses a body (its own error, so the same problem).
    if (Number(headers['content-length']) > limit) {
      tooLarge(reply, done)
      return
    }
    let received = 0
    // Settled once: by the end of the content, by its error (a client that went away), or past the limit.
    const settle = (error?: Error): void => {
      payload.removeListener('data', count)
      payload.removeListener('end', settle)
      payload.removeListener('error', settle)
      if (error === TOO_LARGE) tooLarge(reply, done)
      else if (error !== undefined) done(error)
      else {
        delete headers['content-type']
        delete headers['content-length']
        delete headers['transfer-encoding']
        done(null, payload)
      }
    }
    const count = (chunk: Buffer): void => {
      received += chunk.length
      if (received > limit) settle(TOO_LARGE)
    }
    payload.on('data', count)
    payload.on('end', settle)
    payload.on('error', settle)
  }
}

/** What `ignoreContent` settles with past the limit: the marker, not the answer (`tooLarge`). */
const TOO_LARGE = new Error('past bodyLimit')

/**
 * Content past the limit is refused, and the connection is closed once the 413 is sent: the rest
 * of it is never read (Node would otherwise read it all to reach the next request).
 */
function tooLarge (reply: FastifyReply, done: (error: Error) => void): void {
  reply.raw.shouldKeepAlive = false
  done(new errorCodes.FST_ERR_CTP_BODY_TOO_LARGE())
}

/**
 * The content of a GET or HEAD, which Fastify never reads, on a route that ignores it: within the
 * limit, Node discards it once the answer is sent and the connection serves the next request; past
 * it, or of a length nobody announced (chunked), the answer closes the connection instead, so that
 * none of it is read. Called by the route's handler, only for a request that has content.
 */
export function ignoreUnreadContent (request: FastifyRequest, reply: FastifyReply, limit: number): void {
  if (!(Number(request.headers['content-length']) <= limit)) reply.raw.shouldKeepAlive = false
}

/**
 * A route whose body is optional (`Type.Optional(Body)`: this JSON, or nothing) takes an empty
 * request with a JSON media type as no body, rather than as an empty JSON document (a 400).
 */
const emptyIsNone: preParsingHookHandler = function emptyIsNone (request, _reply, payload, done) {
  if (!hasContent(request.headers)) dropEmptyType(request.headers)
  done(null, payload)
}

/**
 * Methods whose content Fastify never reads or parses (RFC 9110 §9.3.1: content of a GET
 * has no defined semantics). No hook before parsing is needed to keep it from being read;
 * a route that takes none deals with it in its handler (`readsNoContent`, `ignoreUnreadContent`).
 */
const BODYLESS = new Set(['GET', 'HEAD'])

/** Whether Fastify leaves the content of a request with this method unread. */
export const readsNoContent = (method: string): boolean => BODYLESS.has(method)

/**
 * A route whose body may have one of several media types (a partial update's patch formats)
 * answers 415 to any other, naming the ones it takes. A partial update's route names them in
 * `Accept-Patch` on every answer, this one included (RFC 5789 section 2.2: `views/patch.ts`).
 */
function acceptOnly (types: readonly string[]): preParsingHookHandler {
  const accepted = new Set<string | undefined>(types)
  return function acceptMediaTypes (request, _reply, payload, done) {
    const type = request.headers['content-type']
    // Fastify's own reading of the header: the one its body validation is chosen by.
    if (type === undefined ? hasContent(request.headers) : !accepted.has(request.mediaType)) {
      done(new UnsupportedMediaType(`This route takes ${types.join(', ')}${sent(type)}`))
      return
    }
    done(null, payload)
  }
}

/** What a route takes as content, as registration read it (`mediaTypeHooks`). */
export interface RouteContent {
  /** The route takes a body: a body schema, one per media type, or any JSON. */
  takesBody: boolean
  /** The body may be left out (`Type.Optional(Body)`). */
  optionalBody: boolean
  /** The media types of a body taken in several. */
  bodyMediaTypes: readonly string[] | undefined
  /** The route refuses a body that is not JSON itself, after parsing (`JSON_BODY_ONLY`). */
  jsonChecked: boolean
  /** What a route without a body does with content: ignore it (the default) or refuse it with a 415. */
  unexpectedContent: UnexpectedContent
  /** The route's `bodyLimit`, the application's, or Fastify's default. */
  bodyLimit: number
}

/** What a route without a body does with content a client sends anyway (docs/routing.md#media-types). */
export type UnexpectedContent = 'ignore' | 'refuse'

/** The media-type hooks a view route needs before parsing, chosen once at registration; none for most. */
export function mediaTypeHooks (method: string, content: RouteContent): preParsingHookHandler[] {
  const { takesBody, optionalBody, bodyMediaTypes, jsonChecked, unexpectedContent, bodyLimit } = content
  if (!takesBody) {
    // The content of a GET is never read: its handler deals with it (`ignoreUnreadContent`), after the route's dependencies.
    if (readsNoContent(method)) return []
    return [unexpectedContent === 'refuse' ? refuseContent : ignoreContent(bodyLimit)]
  }
  const first = optionalBody ? [emptyIsNone] : []
  if (bodyMediaTypes !== undefined) return [...first, acceptOnly(bodyMediaTypes)]
  return jsonChecked ? first : [...first, requireJsonBody]
}

/** Whether the route a request reached documents `type` among its body's media types. */
function listsMediaType (request: FastifyRequest, type: string): boolean {
  const content = (request.routeOptions.schema?.body as { content?: Record<string, unknown> } | undefined)?.content
  return content !== undefined && Object.hasOwn(content, type)
}

/**
 * The parser of a `+json` media type a view route's body lists (a merge patch, a JSON Patch):
 * JSON, with the app's own protections against prototype poisoning. Fastify keeps parsers
 * per context, not per route, so the one parser serves every route of the context and
 * parses only for the routes whose body lists the type. Any other route (a view route of
 * another action, the application's own routes) is refused as if the app had no parser for
 * the type: Fastify's `FST_ERR_CTP_INVALID_MEDIA_TYPE` (415), or its 404 where no route matched.
 * The content is read, within `bodyLimit`, before that refusal.
 */
export function listedJsonParser (app: FastifyInstance, type: string): FastifyBodyParser<string> {
  const { onProtoPoisoning = 'error', onConstructorPoisoning = 'error' } = app.initialConfig
  const parse = app.getDefaultJsonParser(onProtoPoisoning, onConstructorPoisoning)
  return function parseListedJson (request, body, done) {
    if (listsMediaType(request, type)) {
      parse(request, body, done)
      return
    }
    // Fastify without a parser lets the not-found handler answer an unknown route.
    if (request.is404) done(null, undefined)
    else done(new errorCodes.FST_ERR_CTP_INVALID_MEDIA_TYPE(), undefined)
  }
}

/**
 * The `+json` media types a route's body may have (a merge patch, a JSON Patch) are parsed
 * as JSON for the routes that list them, and for no other route (`listedJsonParser`).
 * Fastify parses only `application/json` as JSON by default. A parser the application
 * registered for the type itself is kept.
 */
export function parseJsonMediaTypes (app: FastifyInstance, route: RouteOptions): void {
  const content = (route.schema?.body as { content?: Record<string, unknown> } | undefined)?.content
  if (content === undefined) return
  for (const type of Object.keys(content)) {
    if (app.hasContentTypeParser(type)) continue
    app.addContentTypeParser(type, { parseAs: 'string' }, listedJsonParser(app, type))
  }
}
