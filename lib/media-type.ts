import type { FastifyRequest, preParsingAsyncHookHandler } from 'fastify'
import { UnsupportedMediaType } from './errors.js'

/** `application/json`, or any `+json` structured syntax suffix (RFC 6839 §3.1), parameters allowed. */
const JSON_MEDIA_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i

/**
 * A view route that validates a JSON body answers 415 to any other media type (RFC 9110
 * §15.5.16) before a parser runs: Fastify's default `text/plain` parser would otherwise
 * hand the validator a string, and the client would get a 400 about the body's shape.
 */
async function requireJsonBody (request: FastifyRequest, _reply: unknown, payload: unknown): Promise<unknown> {
  const type = request.headers['content-type']
  if (type !== undefined && !JSON_MEDIA_TYPE.test(type)) {
    throw new UnsupportedMediaType(`This route takes application/json, not ${type.split(';')[0].trim()}.`)
  }
  return payload
}

/**
 * A route that takes no body must not fail on an empty one: clients that always send
 * `content-type: application/json` send it on a DELETE too, and Fastify's JSON parser
 * refuses an empty document. With nothing to parse, the media type is dropped.
 */
async function ignoreEmptyBody (request: FastifyRequest, _reply: unknown, payload: unknown): Promise<unknown> {
  const headers = request.headers
  if (headers['content-type'] !== undefined && (headers['content-length'] === '0' || headers['content-length'] === undefined) && headers['transfer-encoding'] === undefined) {
    delete headers['content-type']
  }
  return payload
}

/** Methods whose body Fastify never parses. */
const BODYLESS = new Set(['GET', 'HEAD'])

/** The media-type hook a view route needs, chosen once at registration; `undefined` for none. */
export function mediaTypeHook (method: string, hasBodySchema: boolean): preParsingAsyncHookHandler | undefined {
  if (hasBodySchema) return requireJsonBody as preParsingAsyncHookHandler
  return BODYLESS.has(method) ? undefined : ignoreEmptyBody as preParsingAsyncHookHandler
}
