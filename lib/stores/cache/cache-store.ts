// The cache store protocol (stores layer): where cached answers, the generations that invalidate them and
// idempotency records live; one file per kind (memoryCache, redisCache).
import type { MaybePromise } from '../../core/maybe-promise.js'

/** An answer as it is replayed: status, the headers that describe the body, and the body sent. */
export interface StoredAnswer {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

/** What a lookup found: the generation tokens it read (the stored answer is saved under them) and the answer, if any. */
export interface CacheLookup {
  readonly tokens: string
  readonly answer: StoredAnswer | undefined
}

/**
 * The state of an idempotency key when a request claims it: `claimed` (this request runs),
 * `running` (another request with it is still running), `mismatch` (it was used with another body),
 * `done` (the answer of the request that used it).
 */
export type Claim =
  | { readonly state: 'claimed', readonly owner: string }
  | { readonly state: 'running' }
  | { readonly state: 'mismatch' }
  | { readonly state: 'done', readonly answer: StoredAnswer }

/**
 * A cache store (docs/cache.md, "Stores"): an extension point, one file per kind. A generation is a
 * named token that every write of its resource replaces by a new one that was never used before;
 * an answer is saved under the tokens of the generations it depends on, so a write makes every
 * answer read before it unreachable without finding or deleting one of them. Every method may
 * answer synchronously (in process) or with a promise (over the network), and a failing one rejects.
 */
export interface CacheStore {
  /** What kind of store it is, for logs and docs: `memory`, `redis`. */
  readonly kind: string
  /** Reads the current tokens of `generations` (making the missing ones) and the answer saved under `key` with them, in one step. */
  lookup (generations: readonly string[], key: string): MaybePromise<CacheLookup>
  /** Saves an answer under `key` and the tokens a lookup read, for `ttl` milliseconds. */
  save (key: string, tokens: string, answer: StoredAnswer, ttl: number): MaybePromise<void>
  /** Gives each generation a new token: every answer saved under the old ones is unreachable. */
  bump (generations: readonly string[]): MaybePromise<void>
  /** Claims an idempotency key for a request whose body hashes to `fingerprint`, for `lease` milliseconds. */
  claim (key: string, fingerprint: string, lease: number): MaybePromise<Claim>
  /**
   * Ends a claim `owner` holds: stores the answer for `ttl` milliseconds, or, with none (the request
   * changed nothing), frees the key for a retry. A claim another request took since is left alone.
   */
  settle (key: string, owner: string, answer: StoredAnswer | undefined, ttl: number): MaybePromise<void>
  /**
   * Whether a write can be made known to every instance now; a write is refused (503) before it runs
   * while it cannot. Absent: always (a store of one process).
   */
  reachable? (): MaybePromise<boolean>
}

/** An answer as one string: `status`, its headers as JSON and its body, on three lines (the body may hold more). */
export function encodeAnswer (answer: StoredAnswer): string {
  return `${answer.status}\n${JSON.stringify(answer.headers)}\n${answer.body}`
}

/** The answer `encodeAnswer` wrote; `undefined` for a value that is not one (a store shared with something else). */
export function decodeAnswer (value: string): StoredAnswer | undefined {
  const first = value.indexOf('\n')
  const second = first < 0 ? -1 : value.indexOf('\n', first + 1)
  if (second < 0) return undefined
  const status = Number(value.slice(0, first))
  let headers: unknown
  try {
    headers = JSON.parse(value.slice(first + 1, second))
  } catch {
    return undefined
  }
  if (!Number.isInteger(status) || typeof headers !== 'object' || headers === null || Array.isArray(headers)) return undefined
  return { status, headers: headers as Record<string, string>, body: value.slice(second + 1) } // an object of strings, as encodeAnswer wrote it
}
