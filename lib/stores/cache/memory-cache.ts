// The in-process cache store (stores layer): answers and idempotency records in a least-recently-used
// map bounded by entries and by bytes, generations as tokens of a counter that never repeats.
import { randomUUID } from 'node:crypto'
import { ConfigurationError } from '../../core/configuration-error.js'
import type { CacheLookup, CacheStore, Claim, StoredAnswer } from './cache-store.js'

/** The bounds of an in-process store (docs/cache.md). */
export interface MemoryCacheOptions {
  /** The most answers it keeps (and, apart, the most idempotency keys); default 10,000. */
  maxEntries?: number
  /** The most bytes of answers it keeps (keys, headers and bodies, as UTF-8), and of idempotency records apart; default 64 MiB. */
  maxBytes?: number
}

interface Slot<V> { value: V, bytes: number, expires: number }

/** A map that forgets its least recently used values past `maxEntries` or `maxBytes`, and its expired ones when read. */
class Lru<V> {
  readonly #slots = new Map<string, Slot<V>>()
  #bytes = 0
  constructor (private readonly maxEntries: number, private readonly maxBytes: number) {}

  get bytes (): number { return this.#bytes }
  get size (): number { return this.#slots.size }

  get (key: string, now: number): V | undefined {
    const slot = this.#slots.get(key)
    if (slot === undefined) return undefined
    if (slot.expires <= now) {
      this.delete(key)
      return undefined
    }
    // Read again: the most recently used, last in the map's order.
    this.#slots.delete(key)
    this.#slots.set(key, slot)
    return slot.value
  }

  set (key: string, value: V, bytes: number, expires: number): void {
    this.delete(key)
    // A value larger than the whole store is not kept: it would evict everything and then itself.
    if (bytes > this.maxBytes) return
    this.#slots.set(key, { value, bytes, expires })
    this.#bytes += bytes
    for (const [oldest, slot] of this.#slots) {
      if (this.#slots.size <= this.maxEntries && this.#bytes <= this.maxBytes) break
      this.#slots.delete(oldest)
      this.#bytes -= slot.bytes
    }
  }

  delete (key: string): void {
    const slot = this.#slots.get(key)
    if (slot === undefined) return
    this.#slots.delete(key)
    this.#bytes -= slot.bytes
  }
}

const bytesOf = (key: string, answer: StoredAnswer): number =>
  Buffer.byteLength(key) + Buffer.byteLength(answer.body) + Buffer.byteLength(JSON.stringify(answer.headers)) + 16

/** The answer of the request that used an idempotency key. */
interface Done { answer: StoredAnswer, fingerprint: string }
/** A claim running: never forgotten to make room (a retry would run the create again), only when its lease ends. */
interface Running { owner: string, fingerprint: string, expires: number }

function bound (value: number | undefined, fallback: number, name: string): number {
  const bounded = value ?? fallback
  if (!Number.isSafeInteger(bounded) || bounded < 1) {
    throw new ConfigurationError('FV_ERR_CACHE', `memoryCache: ${name} is ${String(value)}; give a positive integer (default ${fallback})`)
  }
  return bounded
}

/** The in-process store of one instance: `memoryCache({ maxEntries: 10_000, maxBytes: 64 * 2 ** 20 })`. */
export class MemoryCache implements CacheStore {
  readonly kind = 'memory'
  readonly #answers: Lru<StoredAnswer>
  readonly #records: Lru<Done>
  readonly #running = new Map<string, Running>()
  readonly #maxRunning: number
  readonly #generations = new Map<string, string>()
  // Tokens are this store's own (a random prefix) and never repeat (a counter).
  readonly #prefix = randomUUID().slice(0, 8)
  #next = 0

  constructor (options: MemoryCacheOptions = {}) {
    const entries = bound(options.maxEntries, 10_000, 'maxEntries')
    const bytes = bound(options.maxBytes, 64 * 2 ** 20, 'maxBytes')
    this.#answers = new Lru(entries, bytes)
    this.#records = new Lru(entries, bytes)
    this.#maxRunning = entries
  }

  /** The bytes of the answers it holds now: at most `maxBytes`. */
  get bytes (): number { return this.#answers.bytes }
  /** The answers it holds now: at most `maxEntries`. */
  get size (): number { return this.#answers.size }

  lookup (generations: readonly string[], key: string): CacheLookup {
    let tokens = ''
    for (const name of generations) {
      let token = this.#generations.get(name)
      if (token === undefined) this.#generations.set(name, token = this.#token())
      tokens = tokens === '' ? token : `${tokens},${token}`
    }
    return { tokens, answer: this.#answers.get(`${key}|${tokens}`, Date.now()) }
  }

  save (key: string, tokens: string, answer: StoredAnswer, ttl: number): void {
    const full = `${key}|${tokens}`
    this.#answers.set(full, answer, bytesOf(full, answer), Date.now() + ttl)
  }

  bump (generations: readonly string[]): void {
    for (const name of generations) this.#generations.set(name, this.#token())
  }

  claim (key: string, fingerprint: string, lease: number): Claim {
    const now = Date.now()
    const running = this.#running.get(key)
    if (running !== undefined && running.expires > now) {
      return running.fingerprint === fingerprint ? { state: 'running' } : { state: 'mismatch' }
    }
    const done = this.#records.get(key, now)
    if (done !== undefined) {
      return done.fingerprint === fingerprint ? { state: 'done', answer: done.answer } : { state: 'mismatch' }
    }
    if (running === undefined && this.#running.size >= this.#maxRunning) this.#forgetEnded(now)
    // As many creates running at once as answers kept: past that, the request is refused (503), not run unguarded.
    if (running === undefined && this.#running.size >= this.#maxRunning) throw new Error(`${this.#maxRunning} idempotency keys are in use`)
    const owner = this.#token()
    this.#running.set(key, { owner, fingerprint, expires: now + lease })
    return { state: 'claimed', owner }
  }

  settle (key: string, owner: string, answer: StoredAnswer | undefined, ttl: number): void {
    const running = this.#running.get(key)
    if (running === undefined || running.owner !== owner) return
    this.#running.delete(key)
    if (answer === undefined) return
    this.#records.set(key, { answer, fingerprint: running.fingerprint }, bytesOf(key, answer), Date.now() + ttl)
  }

  #forgetEnded (now: number): void {
    for (const [key, running] of this.#running) if (running.expires <= now) this.#running.delete(key)
  }

  #token (): string {
    return `${this.#prefix}${(this.#next++).toString(36)}`
  }
}

/** An in-process store, for one instance (docs/cache.md): bounded by entries and bytes. */
export const memoryCache = (options?: MemoryCacheOptions): MemoryCache => new MemoryCache(options)
