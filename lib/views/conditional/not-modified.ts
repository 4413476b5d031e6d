// The 304 side of conditional requests (views layer): strong ETags hashed from the body sent, the
// Last-Modified of the object sent, and a current copy answered 304 without a body (RFC 9110 §13.2.2, §15.4.5).
import { Readable } from 'node:stream'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, onSendHookHandler, preSerializationHookHandler } from 'fastify'
import { etagOf, httpDate, isNotModified } from '../../http/preconditions.js'
import { compileRepresentation, type SerializerOptions } from '../../schema/wire.js'
import { envelopeSchema, wrapIn } from '../envelope.js'
import { fieldSetOf } from '../../query/field-set.js'

/**
 * The body of a 304. Fastify's HEAD route ends with a hook that sets `content-length: 0`
 * for an empty payload (and fails on `null`), and a 304 must not claim a length the 200
 * would not have (RFC 9110 section 8.6); an ended stream is the one payload it passes on
 * untouched. GET needs none of this.
 */
export function notModifiedBody (request: FastifyRequest): Readable | null {
  return request.method === 'HEAD' ? Readable.from([]) : null
}
/**
 * The `onSend` hook of GET/HEAD routes of views with `etag = true`: hashes a 2xx body
 * into a strong ETag (unless the handler set one) and turns a fresh request into a 304
 * with no body, no Content-Type and no Content-Length (RFC 9110 sections 13.2.2, 15.4.5).
 */
export const etagOnSend: onSendHookHandler = (request, reply, payload, done) => {
  const status = reply.statusCode
  // A 304 decided before serialization, from a stored version's tag (`tagStamp`): sent the same way.
  if (status === 304 && payload === '') {
    notModifiedAnswer(request, reply, done)
    return
  }
  if (status < 200 || status >= 300 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
    done(null, payload)
    return
  }
  const set = reply.getHeader('etag')
  let etag = typeof set === 'string' ? set : undefined
  if (etag === undefined) {
    etag = etagOf(payload)
    reply.header('etag', etag)
  }
  const stamped = reply.getHeader('last-modified')
  const lastModified = typeof stamped === 'string' ? stamped : undefined
  if (isNotModified(request.headers, { etag, lastModified })) {
    reply.code(304)
    notModifiedAnswer(request, reply, done)
    return
  }
  done(null, payload)
}

/** Ends an `onSend` hook with a 304: no body, no Content-Type and no Content-Length (RFC 9110 §15.4.5). */
function notModifiedAnswer (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error: null, payload: unknown) => void
): void {
  // Deleting a header that is set makes V8 store the reply's headers as a dictionary: Content-Type
  // only when present. Content-Length is set later by Fastify, if a handler did not: deleting an
  // absent property costs nothing.
  if (reply.hasHeader('content-type')) reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  done(null, notModifiedBody(request))
}

/** The `onSend` hook of PUT/PATCH detail routes with `etag = true`: the ETag of the new representation. */
export const etagOnWrite: onSendHookHandler = (_request, reply, payload, done) => {
  // Only a representation gets a tag: a success with the body the serializer wrote, and no tag of the handler's own.
  if (reply.statusCode < 300 && typeof payload === 'string' && payload !== '' && !reply.hasHeader('etag')) reply.header('etag', etagOf(payload))
  done(null, payload)
}

/** What GET sends of an item, in the view's envelope when it has one: what the ETag a client holds was hashed from. */
export function representationOf (
  item: TSchema,
  envelope: string | undefined,
  options: SerializerOptions,
  compile: (schema: TSchema) => (value: unknown) => string
): (value: unknown) => string {
  if (envelope === undefined) return compileRepresentation(item, options, compile)
  const serialize = compileRepresentation(envelopeSchema(item, envelope), options, compile)
  const wrap = wrapIn(envelope)
  return (value) => serialize(wrap(value))
}

/**
 * Stamps `Last-Modified` from a field of the object a GET returns, so If-Modified-Since can answer
 * 304. `sparse`: the route sends field sets (`SparseFieldsMixin`); one that embeds related objects
 * has no such date (they change without the object's field), and gets none.
 */
export function lastModifiedStamp (
  field: string, envelope: string | undefined, sparse = false
): preSerializationHookHandler<unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
  return (request, reply, payload, done) => {
    if (sparse && (fieldSetOf(request)?.expand.size ?? 0) > 0) {
      done(null, payload)
      return
    }
    // In a view's envelope (`{ "book": {...} }`), the object is the envelope's member.
    const object = envelope === undefined || !isObject(payload) ? payload : payload[envelope]
    const value = isObject(object) ? object[field] : undefined
    const stamp = value instanceof Date || typeof value === 'string' || typeof value === 'number' ? httpDate(value) : undefined
    if (stamp !== undefined && reply.statusCode < 300 && !reply.hasHeader('last-modified')) reply.header('last-modified', stamp)
    done(null, payload)
  }
}
