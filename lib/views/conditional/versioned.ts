// Version tags (views layer): strong ETags from a stored version, and an If-Match naming one compared in the write itself.
import type { FastifyReply, FastifyRequest, preSerializationHookHandler } from 'fastify'
import type { TSchema } from '@sinclair/typebox'
import { etagOf, isNotModified } from '../../http/preconditions.js'
import type { SerializerOptions } from '../../schema/wire.js'
import { checkedEarly } from '../../schema/validation.js'
import { isRecord } from '../../core/record.js'
import { fieldSetOf } from '../../query/field-set.js'

/**
 * Strong ETags from a stored version (`versionField`, docs/conditional.md): `"<representation>.<version>"`.
 * The first part names the representation GET sends (its schema, envelope and serializer
 * options, hashed once at registration), the second is the object's version, which its store
 * changes on every update. Two representations of one object, or two states of it, never share
 * a tag, so the tag is a strong validator (RFC 9110 §8.8.1) without a hash of each body; and an
 * `If-Match` naming one such tag is a criterion of the write itself (`version = n`), a
 * compare-and-set that costs one statement.
 */
export interface VersionTags {
  /** The field holding the version. */
  readonly field: string
  /** The ETag of an object; `undefined` when its version is not an integer (a row written before the column existed). */
  tagOf (object: unknown): string | undefined
  /** The version an `If-Match` names when it is one tag of this representation, as sent; `undefined` otherwise. */
  versionIn (header: string | string[] | undefined): number | undefined
}

/** A version as tags spell it: a non-negative integer in plain decimal, within the doubles' exact range. */
const VERSION = /^(?:0|[1-9][0-9]{0,14})$/

/** The version tags of objects sent with `item` as their schema, in `envelope` when the route has one. */
export function versionTags (
  field: string,
  item: TSchema,
  envelope: string | undefined,
  options: SerializerOptions
): VersionTags {
  // Eight characters of the representation's hash: what tells a tag of this representation from another's.
  const prefix = etagOf(JSON.stringify([item, envelope ?? null, options])).slice(1, 9) + '.'
  const opening = '"' + prefix
  return {
    field,
    tagOf (object) {
      // The objects tagged are the items a route sends; anything else has no version to read.
      const version: unknown = Reflect.get(Object(object), field)
      return typeof version === 'number' && Number.isSafeInteger(version) && version >= 0 ? `"${prefix}${version}"` : undefined
    },
    versionIn (header) {
      // The header a client sends back: exactly one of these tags. Anything else (`*`, a list, a
      // weak tag) is judged by the early read, which answers it the same way at the cost of a read.
      if (typeof header !== 'string' || !header.startsWith(opening) || !header.endsWith('"')) return undefined
      const version = header.slice(opening.length, -1)
      return VERSION.test(version) ? Number(version) : undefined
    }
  }
}

/** Serializes nothing: a 304 decided before serialization sends no body. */
const NOTHING = (): string => ''

/**
 * The `preSerialization` hook that stamps the ETag of the object a 2xx answer sends (the
 * envelope's member in a view's envelope), unless the handler set one: `tagOf` gives it, or
 * `undefined` to leave the body to the `onSend` hook of `etag = true`, which hashes it. On GET
 * and HEAD (`notModified`), a client whose copy is current gets its 304 here, before the body is
 * serialized (RFC 9110 §13.2.2, §15.4.5); `etagOnSend` then sends it without a body. `sparse`: the
 * route sends field sets (`SparseFieldsMixin`), whose tags name the set too.
 */
export function tagStamp (
  tagOf: (object: unknown) => string | undefined,
  envelope: string | undefined,
  notModified: boolean,
  sparse: boolean
): preSerializationHookHandler<unknown> {
  return (request, reply, payload, done) => {
    if (reply.statusCode < 300 && !reply.hasHeader('etag')) {
      const object = envelope === undefined || !isRecord(payload) ? payload : payload[envelope]
      let tag = tagOf(object)
      // A field set is another representation of the object: another tag (RFC 9110 §8.8.3), which
      // an If-Match of a write, comparing the whole object's, never matches. Related objects
      // embedded in it change without its version: that body is hashed (etagOnSend) instead.
      const set = sparse ? fieldSetOf(request) : undefined
      if (tag !== undefined && set !== undefined) tag = set.expand.size > 0 ? undefined : `${tag.slice(0, -1)}-${set.tag}"`
      if (tag !== undefined) {
        reply.header('etag', tag)
        const current = { etag: tag, lastModified: stampedDate(reply) }
        if (notModified && reply.statusCode >= 200 && isNotModified(request.headers, current)) {
          reply.code(304).serializer(NOTHING)
        }
      }
    }
    done(null, payload)
  }
}

/** The Last-Modified a hook stamped before this one (`lastModifiedField`), for If-Modified-Since. */
function stampedDate (reply: FastifyReply): string | undefined {
  const stamped = reply.getHeader('last-modified')
  return typeof stamped === 'string' ? stamped : undefined
}

/**
 * Whether the body of a write is valid, checked early by the route's own validator (which then
 * passes the same body in Fastify's phase without checking it again: `checkedEarly`). A write
 * whose `If-Match` is compared in the write itself skips the early read only when it is: an
 * invalid request with a stale tag must still be a 412, since preconditions are evaluated before
 * the content is processed (RFC 9110 §13.2.1). The path and query were checked already
 * (`validateTargetEarly`), and the library's generic writes declare no headers.
 */
export function contentValidEarly (request: FastifyRequest): boolean {
  const body: unknown = request.getValidationFunction('body')
  if (body === undefined) return true
  // With several media types (patch formats), Fastify keeps one validator per type and picks by the request's.
  const validate: unknown = typeof body === 'function' || request.mediaType === undefined ? body : Reflect.get(Object(body), request.mediaType)
  if (typeof validate !== 'function' || validate(request.body) !== true) return false
  checkedEarly('body', request.body)
  return true
}
