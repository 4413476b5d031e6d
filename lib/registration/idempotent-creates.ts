// Idempotent retries (registration layer, part of the cache feature): a create that carries
// `Idempotency-Key` (draft-ietf-httpapi-idempotency-key-header) is run once per key; a retry with the
// same body gets the stored answer, another body a 422, and one while the first runs a 409.
import { createHash } from 'node:crypto'
import { Type } from '@sinclair/typebox'
import type { FastifyRequest, onSendHookHandler } from 'fastify'
import { BadRequest, Conflict, ServiceUnavailable, UnprocessableContent } from '../http/errors.js'
import type { CacheStore, Claim, StoredAnswer } from '../stores/cache/cache-store.js'
import { ANSWERED, type BeforeAction, type RouteContribution } from '../views/view.js'
import { isThenable, type MaybePromise } from '../core/maybe-promise.js'
import { canonical, hashKey, type PrincipalAsker } from './cache-key.js'
import { refuseByCache, storeFailed, tolerated } from './cache-settings.js'

/** The headers of a create's answer replayed with its body. */
const REPLAYED = ['content-type', 'location', 'etag', 'last-modified', 'content-location']

/**
 * A key as the draft writes it, a Structured Field string (`"8e03978e-..."`, RFC 8941 §3.3.3), or the
 * bare token many clients send: at most 255 visible ASCII characters.
 */
const QUOTED = /^"((?:[\x20\x21\x23-\x5b\x5d-\x7e]|\\["\\]){1,255})"$/
const BARE = /^[\x21\x23-\x7e][\x21-\x7e]{0,254}$/

/** The key a request carries, `undefined` for none; a malformed one is a 400 that names the header. */
export function idempotencyKeyOf (request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key']
  if (header === undefined) return undefined
  // Node joins a header sent twice with a comma, which no bare key holds: refused as not a key.
  const value = String(header).trim()
  const quoted = QUOTED.exec(value)
  if (quoted !== null) return quoted[1].replace(/\\(["\\])/g, '$1')
  if (BARE.test(value)) return value
  throw new BadRequest('The Idempotency-Key header is not a key: send a string of 1 to 255 visible ASCII characters, quoted ("...") or bare.')
}

interface Holding { readonly key: string, readonly owner: string }
const HOLDING = new WeakMap<FastifyRequest, Holding>()

const KEY_HEADER = {
  'idempotency-key': Type.Optional(Type.String({
    description: 'Makes the request safe to retry: a retry with the same key and body gets the first answer, and writes nothing.',
    maxLength: 257,
    examples: ['"8e03978e-40d5-43e8-bc93-6894a57f9324"']
  }))
}

/** What a create of a view whose cache has `idempotency` adds: the claim before the action, the answer kept after it. */
export function idempotentCreate (
  store: CacheStore, asker: PrincipalAsker, lifetimes: { ttl: number, lease: number }, status: number
): RouteContribution {
  let url: string | undefined
  const claimed = (request: FastifyRequest, key: string, claim: Exclude<Claim, { state: 'done' }>): undefined => {
    if (claim.state === 'claimed') {
      HOLDING.set(request, { key, owner: claim.owner })
      return undefined
    }
    if (claim.state === 'running') {
      throw new Conflict('A request with this Idempotency-Key is still being processed; retry it once it has been answered.', { headers: { 'retry-after': 1 } })
    }
    throw new UnprocessableContent('This Idempotency-Key was used with another request body; a retry must send the same body, or a new key.')
  }
  const claim: BeforeAction = (_view, request, reply) => {
    const sent = idempotencyKeyOf(request)
    if (sent === undefined) return undefined
    url ??= String(request.routeOptions.url) // a view route's, always set
    // A key is the client's own, for one resource: the same key from another principal, or on
    // another parent (`/members/2/loans`), is another key.
    const key = hashKey(url, canonical(request.params), asker(request), sent)
    const fingerprint = createHash('sha256').update(canonical(request.body)).digest('hex')
    const unavailable = (error: unknown): never => {
      storeFailed(store, request.log, error)
      refuseByCache(request)
      throw new ServiceUnavailable('Idempotency keys cannot be checked now; retry the request later.')
    }
    let result
    try {
      result = store.claim(key, fingerprint, lifetimes.lease)
    } catch (error) {
      return unavailable(error)
    }
    const decide = (found: Claim): typeof ANSWERED | undefined => {
      if (found.state !== 'done') return claimed(request, key, found)
      reply.code(found.answer.status)
      for (const name in found.answer.headers) reply.header(name, found.answer.headers[name])
      reply.header('idempotent-replayed', 'true').send(found.answer.body)
      return ANSWERED
    }
    return isThenable(result) ? Promise.resolve(result).then(decide, unavailable) : decide(result)
  }
  // Before the answer is sent: a success is kept for the key's retries; anything else wrote nothing
  // (a refused or failed create is all-or-nothing) and frees the key for a retry.
  const keep: onSendHookHandler = (request, reply, payload, done) => {
    const holding = HOLDING.get(request)
    if (holding === undefined) {
      done(null, payload)
      return
    }
    HOLDING.delete(request)
    let answer: StoredAnswer | undefined
    // A create's answer is its JSON text, or nothing (`returnOnCreate: false`).
    if (reply.statusCode >= 200 && reply.statusCode < 300) {
      const headers: Record<string, string> = {}
      for (const name of REPLAYED) {
        const value = reply.getHeader(name)
        if (value !== undefined) headers[name] = String(value)
      }
      answer = { status: reply.statusCode, headers, body: String(payload ?? '') }
    }
    const settle = (): MaybePromise<void> => store.settle(holding.key, holding.owner, answer, lifetimes.ttl)
    tolerated(store, request.log, settle, () => { done(null, payload) })
  }
  return {
    beforeAction: [claim],
    onSend: [keep],
    requestHeaders: KEY_HEADER,
    responses: {
      400: { errors: [BadRequest] },
      409: { errors: [Conflict] },
      422: { errors: [UnprocessableContent] },
      503: { errors: [ServiceUnavailable] },
      [status]: { headers: { 'idempotent-replayed': Type.String({ description: 'Present on the answer of a retry: it is the first request\'s.', enum: ['true'] }) } }
    }
  }
}
