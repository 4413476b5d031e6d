// Cached reads (registration layer, part of the cache feature): a GET answered from the store when the
// answer saved under the current generations is there, else read once (per key and instance) and saved.
import type { FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify'
import { Type } from '@sinclair/typebox'
import { etagOf } from '../http/preconditions.js'
import type { CacheStore, StoredAnswer } from '../stores/cache/cache-store.js'
import { ANSWERED, type BeforeAction, type RouteContribution } from '../views/view.js'
import { isThenable } from '../core/maybe-promise.js'
import { canonical, hashKey, varyPart, type Asker } from './cache-key.js'
import { storeFailed, tolerated, type ResolvedCache } from './cache-settings.js'

/** The headers of an answer that describe its body, replayed with it; any other is the request's own (a throttle's budget). */
const KEPT_HEADERS = ['content-type', 'etag', 'last-modified', 'link', 'content-language', 'content-location']

/** How many finished reads an instance keeps for the requests whose lookups were under way meanwhile. */
const FINISHED_READS = 10_000
/** How long, in milliseconds: longer than a store's round trip. */
const FINISHED_FOR = 1_000
/** The largest body, in characters, a finished read is held with. */
const FINISHED_BODY = 1_000_000

/** A read under way or just finished, by its key and tokens: the answer it saved, `undefined` for none. */
type Flight = Promise<StoredAnswer | undefined>

/** What a request that reads for others keeps until its answer is sent. */
interface Leading {
  readonly key: string
  readonly tokens: string
  /** The answer its `onSend` took, kept once it is sent. */
  answer: StoredAnswer | undefined
}

const LEADING = new WeakMap<FastifyRequest, Leading>()

const ignore = (): void => {}

/** An answer with the headers describing its body that hooks after the cache's gave it (a route's own `onSend`). */
function withLater (answer: StoredAnswer, reply: FastifyReply): StoredAnswer {
  let headers: Record<string, string> | undefined
  for (const name of KEPT_HEADERS) {
    const value = reply.getHeader(name)
    if (value === undefined || Object.hasOwn(answer.headers, name)) continue
    headers ??= { ...answer.headers }
    headers[name] = String(value)
  }
  return headers === undefined ? answer : { ...answer, headers }
}

/** Adds the headers an answer varies on to the ones another hook named (CORS's `Origin`). */
function addVary (reply: FastifyReply, vary: string): void {
  const named = reply.getHeader('vary')
  reply.header('vary', named === undefined ? vary : `${String(named)}, ${vary}`)
}

/** What the cache adds to a GET or HEAD of a cached read. */
export interface CachedRead {
  readonly store: CacheStore
  readonly cache: ResolvedCache
  /** How long an answer is kept, in milliseconds: the view's `cache.ttl`. */
  readonly ttl: number
  /** Every generation the answer depends on: the view's resource, and those of the relations it may embed. */
  readonly generations: readonly string[]
  readonly asker: Asker
  /** Whether the route's view sends strong ETags (ConditionalMixin's `etag`): a saved answer carries the one a fresh read would. */
  readonly tagged: boolean
}

const documented = (cache: ResolvedCache): Record<string, ReturnType<typeof Type.String>> => ({
  'cache-control': Type.String({ description: 'How clients may keep the answer: revalidate it (`no-cache`), and share it only when it is the same for everyone (`public`).', examples: [cache.cacheControl] }),
  'x-cache': Type.String({ description: 'Whether the answer came from the server\'s cache (`HIT`) or was read (`MISS`).', enum: ['HIT', 'MISS'] }),
  ...cache.vary.length === 0 ? {} : { vary: Type.String({ description: 'The request headers the answer depends on.', examples: [cache.vary.join(', ')] }) }
})

/**
 * A cached read: a step before the action looks the answer up (after every hook: the permissions,
 * the dependencies and the preconditions have passed) and replays it; a miss reads, and its `onSend`
 * saves the 200 it sends. Concurrent misses of one key on one instance wait for the first.
 */
export function cachedRead (read: CachedRead, status: number): RouteContribution {
  const { store, cache, generations, asker, tagged, ttl } = read
  const flights = new Map<string, Flight>()
  const vary = cache.vary.length === 0 ? undefined : cache.vary.join(', ')

  const replay = (reply: FastifyReply, answer: StoredAnswer): typeof ANSWERED => {
    reply.code(answer.status)
    for (const name in answer.headers) reply.header(name, answer.headers[name])
    reply.header('x-cache', 'HIT').header('cache-control', cache.cacheControl)
    if (vary !== undefined) addVary(reply, vary)
    reply.send(answer.body)
    return ANSWERED
  }

  type Found = typeof ANSWERED | undefined | Promise<typeof ANSWERED | undefined>
  const found = (
    request: FastifyRequest, reply: FastifyReply, key: string, tokens: string, answer?: StoredAnswer
  ): Found => {
    if (answer !== undefined) return replay(reply, answer)
    const id = `${key}|${tokens}`
    const flight = flights.get(id)
    if (flight !== undefined) return flight.then((shared) => shared === undefined ? undefined : replay(reply, shared))
    // Fastify's HEAD route runs the GET route's hooks: a HEAD reads a kept answer and keeps none.
    if (request.method !== 'GET') return undefined
    let settle!: (answer: StoredAnswer | undefined) => void
    const started: Flight = new Promise((resolve) => { settle = resolve })
    flights.set(id, started)
    const leading: Leading = { key, tokens, answer: undefined }
    LEADING.set(request, leading)
    let settled = false
    const end = (answer: StoredAnswer | undefined): void => {
      if (settled) return
      settled = true
      settle(answer)
      // A finished read stays a moment for the requests whose lookups were under way meanwhile (its
      // key holds the generations it was read under: no later write's readers can find it).
      if (answer === undefined || dropsFinished(answer)) flights.delete(id)
      else setTimeout(() => flights.delete(id), FINISHED_FOR).unref()
    }
    // The answer is kept once it is sent, with the headers every hook gave it: one that sets a
    // cookie is a client's own. A request that ends otherwise (the client went away) keeps nothing.
    reply.raw.once('finish', () => {
      const kept = leading.answer === undefined || reply.hasHeader('set-cookie') ? undefined : withLater(leading.answer, reply)
      if (kept !== undefined) save(request, leading, kept)
      end(kept)
    })
    reply.raw.once('close', () => { end(undefined) })
    return undefined
  }
  // A finished read is not held past its ttl, nor beyond a bounded number of them, nor with a large body.
  const dropsFinished = (answer: StoredAnswer): boolean =>
    ttl < FINISHED_FOR || flights.size > FINISHED_READS || answer.body.length > FINISHED_BODY

  const save = (request: FastifyRequest, leading: Leading, answer: StoredAnswer): void => {
    // Saved without making anyone wait: an answer saved late is under the generations read before the action.
    const lived = ttl * (1 - cache.jitter * Math.random())
    tolerated(store, request.log, () => store.save(leading.key, leading.tokens, answer, lived), ignore)
  }

  let url: string | undefined
  const lookUp: BeforeAction = (_view, request, reply) => {
    url ??= String(request.routeOptions.url) // a view route's, always set
    const who = asker(request)
    if (who === undefined) return undefined
    const params = canonical(request.params)
    const key = hashKey(url, params, canonical(request.query), who, varyPart(request, cache.vary))
    let lookup
    try {
      lookup = store.lookup(generations, key)
    } catch (error) {
      storeFailed(store, request.log, error)
      return undefined
    }
    if (!isThenable(lookup)) return found(request, reply, key, lookup.tokens, lookup.answer)
    return Promise.resolve(lookup).then(
      (result) => found(request, reply, key, result.tokens, result.answer),
      (error: unknown) => { storeFailed(store, request.log, error) }
    )
  }

  // What a miss sends, taken before it is sent: a 200 with a body of text (a 304, an error or a
  // stream is not an answer to replay), with the tag the view's own hook would hash from it.
  const take: onSendHookHandler = (request, reply, payload, done) => {
    if (reply.getHeader('x-cache') === 'HIT') {
      done(null, payload)
      return
    }
    reply.header('x-cache', 'MISS').header('cache-control', cache.cacheControl)
    if (vary !== undefined) addVary(reply, vary)
    const leading = LEADING.get(request)
    if (leading === undefined || reply.statusCode !== status || typeof payload !== 'string') {
      done(null, payload)
      return
    }
    if (tagged && !reply.hasHeader('etag')) reply.header('etag', etagOf(payload))
    const headers: Record<string, string> = {}
    for (const name of KEPT_HEADERS) {
      const value = reply.getHeader(name)
      if (value !== undefined) headers[name] = String(value)
    }
    leading.answer = { status, headers, body: payload }
    done(null, payload)
  }

  return {
    beforeAction: [lookUp],
    onSend: [take],
    responses: { [status]: { headers: documented(cache) } }
  }
}
