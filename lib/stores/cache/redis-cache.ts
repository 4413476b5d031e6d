// The Redis cache store (stores layer): answers, generations and idempotency records shared by every
// instance that uses one Redis, each operation one round trip (a Lua script), bounded in time.
import { createHash, randomBytes } from 'node:crypto'
import { ConfigurationError } from '../../core/configuration-error.js'
import { decodeAnswer, encodeAnswer, type CacheLookup, type CacheStore, type Claim, type StoredAnswer } from './cache-store.js'

/**
 * The commands the store uses, as ioredis (and iovalkey) spell them: any client with them will do.
 * `status` is `'ready'` while the client is connected; the store does not queue commands while it is not.
 */
export interface RedisCacheClient {
  readonly status: string
  evalsha (sha: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
  eval (script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown>
}

/** Options of a Redis store (docs/cache.md, "Redis"). */
export interface RedisCacheOptions {
  /** What every key the store writes starts with (default `fv:`): two applications sharing one Redis give two. */
  prefix?: string
  /** How long an operation may take before the request goes on without the cache, in milliseconds (default 250). */
  timeout?: number
  /** How long a generation's token lives, in seconds (default one day): when it expires, its answers are unreachable, never wrong. */
  generationTtl?: number
  /**
   * What a write of a cached resource gets while Redis cannot be reached (docs/cache.md, "When the
   * store fails"): `refuse` (default), a 503 before anything is written, since the other instances
   * could not be told of it; `accept`, written, at the cost of other instances serving what it made
   * stale until Redis is reached again (at most their `ttl`).
   */
  writesWhileUnreachable?: 'refuse' | 'accept'
}

// Reads the tokens of KEYS (a missing one is made from ARGV[2], never used before, and lives ARGV[3]
// milliseconds), then the answer under ARGV[1] and the tokens: one round trip, whatever the generations.
const LOOKUP = `local t = {}
for i = 1, #KEYS do
  local v = redis.call('GET', KEYS[i])
  if not v then v = ARGV[2] .. '.' .. i; redis.call('SET', KEYS[i], v, 'PX', ARGV[3]) end
  t[i] = v
end
local tokens = table.concat(t, ',')
return { tokens, redis.call('GET', ARGV[1] .. '|' .. tokens) }`

const SAVE = 'redis.call(\'SET\', KEYS[1], ARGV[1], \'PX\', ARGV[2]) return 1'

const BUMP = `for i = 1, #KEYS do redis.call('SET', KEYS[i], ARGV[1] .. '.' .. i, 'PX', ARGV[2]) end
return 1`

// An idempotency key: free, it is claimed (`r` + fingerprint + owner) for the lease; else what it holds.
const CLAIM = `local v = redis.call('GET', KEYS[1])
if v then return v end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return false`

// Ends a claim only while `owner` holds it: with an answer (`d` + fingerprint + answer), or freed.
const SETTLE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
if ARGV[2] == '' then redis.call('DEL', KEYS[1]) else redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) end
return 1`

const FINGERPRINT = 64
/** How often a bump Redis refused is tried again, in milliseconds. */
const RETRY = 500

interface Script { source: string, sha: string }
const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') })
const SCRIPTS = {
  lookup: script(LOOKUP), save: script(SAVE), bump: script(BUMP), claim: script(CLAIM), settle: script(SETTLE)
}

/** A store over one Redis, shared by every instance that uses it (docs/cache.md, "Redis"). */
export class RedisCache implements CacheStore {
  readonly kind = 'redis'
  readonly #client: RedisCacheClient
  readonly #prefix: string
  readonly #timeout: number
  readonly #generationTtl: number
  /**
   * Generations a write could not bump (Redis was unreachable): bumped before this instance uses the
   * store again, so that it never serves an answer its own acknowledged write made stale.
   */
  readonly #pending = new Set<string>()
  #retry: NodeJS.Timeout | undefined
  /** Whether the last operation failed: Redis is asked again before the next write is let through. */
  #failed = false
  readonly #accepts: boolean

  constructor (client: RedisCacheClient, options: RedisCacheOptions = {}) {
    this.#client = client
    this.#prefix = options.prefix ?? 'fv:'
    this.#timeout = options.timeout ?? 250
    this.#generationTtl = Math.max(1, Math.round((options.generationTtl ?? 86_400) * 1000))
    this.#accepts = options.writesWhileUnreachable === 'accept'
    const positive = (value: number): boolean => Number.isFinite(value) && value > 0
    if (!positive(this.#timeout) || !positive(options.generationTtl ?? 86_400)) {
      throw new ConfigurationError('FV_ERR_CACHE', `redisCache: timeout (${String(options.timeout)}) and generationTtl (${String(options.generationTtl)}) must be positive numbers`)
    }
  }

  /** The generations this instance still has to bump: not empty only while Redis is unreachable. */
  get pendingBumps (): number { return this.#pending.size }

  async lookup (generations: readonly string[], key: string): Promise<CacheLookup> {
    if (this.#pending.size > 0) await this.bump([])
    const keys = generations.map((name) => `${this.#prefix}g:${name}`)
    // LOOKUP's reply: the tokens joined, and the entry or nil.
    const found = await this.#run(SCRIPTS.lookup, keys, [`${this.#prefix}e:${key}`, fresh(), this.#generationTtl]) as [string, string | null]
    const answer = found[1] === null ? undefined : decodeAnswer(found[1])
    return { tokens: found[0], answer }
  }

  async save (key: string, tokens: string, answer: StoredAnswer, ttl: number): Promise<void> {
    await this.#run(SCRIPTS.save, [`${this.#prefix}e:${key}|${tokens}`], [encodeAnswer(answer), Math.max(1, Math.round(ttl))])
  }

  async bump (generations: readonly string[]): Promise<void> {
    for (const name of generations) this.#pending.add(name)
    const names = [...this.#pending]
    try {
      await this.#run(SCRIPTS.bump, names.map((name) => `${this.#prefix}g:${name}`), [fresh(), this.#generationTtl])
    } catch (error) {
      this.#retryLater()
      throw error
    }
    for (const name of names) this.#pending.delete(name)
  }

  /**
   * Tries the bumps a write could not make every `RETRY` milliseconds until Redis takes them: the
   * other instances, which may reach Redis meanwhile, stop finding what the write made stale then,
   * not only when this instance next uses the store.
   */
  #retryLater (): void {
    if (this.#retry !== undefined) return
    this.#retry = setInterval(() => {
      if (this.#pending.size === 0) {
        clearInterval(this.#retry)
        this.#retry = undefined
        return
      }
      this.bump([]).catch(() => {})
    }, RETRY).unref()
  }

  async reachable (): Promise<boolean> {
    if (this.#accepts) return true
    if (this.#client.status !== 'ready') return false
    // After a failure (a connection just dropped still reads `ready`; a hung one times out), Redis
    // is asked again before a write is let through: the owed bumps, or a round trip that does nothing.
    if (this.#pending.size === 0 && !this.#failed) return true
    try {
      if (this.#pending.size > 0) await this.bump([])
      else await this.#run(SCRIPTS.bump, [], [fresh(), this.#generationTtl])
      return true
    } catch {
      return false
    }
  }

  async claim (key: string, fingerprint: string, lease: number): Promise<Claim> {
    const owner = fresh()
    const running = `r${fingerprint}${owner}`
    const keys = [`${this.#prefix}i:${key}`]
    // A claim Redis makes after the request gave up on it (the timeout) is freed: nobody holds it.
    const late = (held: unknown): void => {
      if (held === null) this.#run(SCRIPTS.settle, keys, [running, '', 1]).catch(() => {})
    }
    // CLAIM's reply: what the key holds, or nil when this request claimed it.
    const held = await this.#run(SCRIPTS.claim, keys, [running, Math.max(1, Math.round(lease))], late) as string | null
    if (held === null) return { state: 'claimed', owner: running }
    if (held.slice(1, 1 + FINGERPRINT) !== fingerprint) return { state: 'mismatch' }
    const answer = held.startsWith('d') ? decodeAnswer(held.slice(1 + FINGERPRINT)) : undefined
    return answer === undefined ? { state: 'running' } : { state: 'done', answer }
  }

  async settle (key: string, owner: string, answer: StoredAnswer | undefined, ttl: number): Promise<void> {
    const done = answer === undefined ? '' : `d${owner.slice(1, 1 + FINGERPRINT)}${encodeAnswer(answer)}`
    await this.#run(SCRIPTS.settle, [`${this.#prefix}i:${key}`], [owner, done, Math.max(1, Math.round(ttl))])
  }

  /** Runs a script by its hash, loading it once when Redis does not know it; refused at once while disconnected, and cut at the timeout. */
  async #run (
    which: Script, keys: readonly string[], args: ReadonlyArray<string | number>,
    late: (result: unknown) => void = ignore
  ): Promise<unknown> {
    const client = this.#client
    // A client that is not connected would queue the command until it is: the request would wait.
    if (client.status !== 'ready') throw new Error(`the Redis client is ${client.status}`)
    let timer: NodeJS.Timeout | undefined
    let timedOut = false
    const expired = new Promise<never>((_resolve, reject) => {
      timer = setTimeout(() => {
        timedOut = true
        reject(new Error(`Redis did not answer within ${this.#timeout} ms`))
      }, this.#timeout)
    })
    const call = client.evalsha(which.sha, keys.length, ...keys, ...args).catch(async (error: unknown) => {
      // ioredis rejects with a ReplyError, whose message starts with Redis's error code.
      if (!String((error as Error | undefined)?.message).startsWith('NOSCRIPT')) throw error
      return client.eval(which.source, keys.length, ...keys, ...args)
    })
    const raced = Promise.race([call, expired])
    const ended = (failed: boolean) => (): void => {
      clearTimeout(timer)
      this.#failed = failed
      if (timedOut) call.then(late, ignore)
    }
    raced.then(ended(false), ended(true))
    return await raced
  }
}

const ignore = (): void => {}

/**
 * A token never used before: this process's own 96 random bits, then a counter (no random bytes on
 * every lookup). Two processes never share the first part; one never repeats the second.
 */
const PROCESS = randomBytes(12).toString('base64url')
let made = 0
const fresh = (): string => `${PROCESS}${(made++).toString(36)}`

/** A store over one Redis (an ioredis client), shared by every instance that uses it (docs/cache.md). */
export const redisCache = (client: RedisCacheClient, options?: RedisCacheOptions): RedisCache =>
  new RedisCache(client, options)
