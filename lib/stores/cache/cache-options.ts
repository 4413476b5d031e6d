// What a view declares of the cache (stores layer, a type): `static cache`, read by the cache feature at registration.

/** A view class named in `invalidates`: its resource is invalidated too. */
export type CachedViewClass = abstract new (...args: never[]) => unknown

/** Idempotent retries of the view's creates (docs/cache.md, "Idempotent retries"). */
export interface IdempotencyOptions {
  /** How long a key's answer is kept, in seconds (default one day). */
  ttl?: number
  /** How long a key is held by the request using it before another may take it, in seconds (default 60). */
  lease?: number
}

/**
 * `static cache` of a view (docs/cache.md): which of its reads are cached and for how long, what
 * its writes invalidate, and whether its creates take `Idempotency-Key`. The store is the
 * application's (`configureApp(app, { cache })`).
 */
export interface CacheOptions {
  /** How long a cached answer is kept, in seconds (a little less, by the jitter); unset, the view's reads are not cached. */
  ttl?: number
  /** The reads cached (GET actions of the view); default `['list', 'retrieve']`, those the view has. */
  actions?: readonly string[]
  /**
   * The name of what the view reads and writes: every write of one resource invalidates every cached
   * answer of it, whichever view wrote or read. Default: the view's component name (`Item`).
   */
  resource?: string
  /** Other resources a write of this view changes (a parent's counts, related rows in its transaction): names or view classes. */
  invalidates?: ReadonlyArray<string | CachedViewClass>
  /** Request headers the answer depends on (`accept-language`): part of the key, and sent in `Vary`. */
  vary?: readonly string[]
  /**
   * The answer is the same whoever asks: cached once for every principal (`Cache-Control: public`).
   * Unset, an application with authentication caches each principal's answers apart (`private`).
   */
  shared?: boolean
  /** `max-age` of the `Cache-Control` sent, in seconds; unset, `no-cache`: clients revalidate (a 304 from the cache) and read their own writes. */
  maxAge?: number
  /** The fraction of `ttl` an entry may expire early by, so that entries saved together expire apart (default 0.1, at most 0.5). */
  jitter?: number
  /** The view's `create` (and `bulkCreate`) take `Idempotency-Key`: `true`, or the key's lifetimes. */
  idempotency?: boolean | IdempotencyOptions
}
