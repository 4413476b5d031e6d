// Throttles (access layer): DRF's scoped throttles, counted by @fastify/rate-limit's store; past its budget a request is a 429.
import { isIP } from 'node:net'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { TooManyRequests, type APIErrorClass } from '../http/errors.js'
import { principalOf } from './principal.js'

/** A budget of requests: DRF's scoped throttle. Views (or actions, routers) naming one scope share its budget. */
export interface Throttle { scope: string, rate: `${number}/${'second' | 'minute' | 'hour' | 'day'}` }

/**
 * The responses a throttle documents, by status: an entry of the routes layer's `ResponsesMap`,
 * said here without it, since the access layer sits below the routes layer.
 */
export type ThrottleResponses = Record<number, { errors: APIErrorClass[], headers: Record<string, TSchema> }>

/*
 * What the library uses of @fastify/rate-limit 11 (`createRateLimit` and what it answers), restated
 * so that the library compiles, and its declarations resolve, without that optional peer installed.
 */
interface Counted {
  readonly isAllowed: false
  readonly max: number
  readonly remaining: number
  readonly ttlInSeconds: number
  readonly isExceeded: boolean
}
type Count = { readonly isAllowed: true } | Counted
interface LimiterOptions {
  max: number
  timeWindow: number
  keyGenerator: (request: FastifyRequest) => string
  skipOnError: boolean
  cache: number
}
type CreateRateLimit = (options: LimiterOptions) => (request: FastifyRequest) => Promise<Count>

/** What identifies a principal for its budgets: `AuthOptions.principalId`. */
type PrincipalId = (principal: unknown) => string | number

/** A rate as the store counts it: `max` requests in each `timeWindow` milliseconds. */
interface Budget { readonly max: number, readonly timeWindow: number }

/** One scope's budget within one registration of @fastify/rate-limit: every route naming the scope counts here. */
interface Counter {
  readonly scope: string
  readonly rate: string
  readonly budget: Budget
  /** The route that first named the scope, for the message when another gives it a second rate. */
  readonly where: string
  readonly count: (request: FastifyRequest) => Promise<Count>
  /** The last count under way of each client, which the client's next count waits for. */
  readonly pending: Map<string, Promise<unknown>>
  /** When a failure of the store was last logged (ms since the epoch); 0 before any. */
  warnedAt: number
}

const PERIODS: Readonly<Record<string, number>> = { second: 1_000, minute: 60_000, hour: 3_600_000, day: 86_400_000 }
const RATE = /^([1-9][0-9]{0,14})\/(second|minute|hour|day)$/
// A scope is part of every key the store holds (and of Redis's key names): a plain name, so that
// no scope's key can be read as another scope's (`a:b` + `c` against `a` + `b:c`).
const SCOPE = /^[A-Za-z0-9_.-]{1,64}$/

/**
 * The clients a scope's in-process store remembers, least recently seen forgotten first (the
 * plugin's LRU): a bound on its memory whatever number of addresses a client sends requests from.
 * The plugin's own `cache` option sizes only its global store, not the ones made for throttles.
 */
export const LOCAL_CLIENTS = 5000

/** A store that fails is logged once in this many milliseconds per scope, not on every request it lets through. */
const WARNING_INTERVAL = 60_000

/*
 * The scopes counted by each registration of @fastify/rate-limit, keyed by its `createRateLimit`
 * (one function per registration, inherited by the contexts inside it). The plugin makes a store
 * for each limiter it creates, and its in-process store does not share counts between them: a scope
 * is given one limiter, so that every route naming it counts against the same budget.
 */
const COUNTERS = new WeakMap<CreateRateLimit, Map<string, Counter>>()

// What each request is counted by (its principal or its address), set by the route's hook before it counts.
const CLIENTS = new WeakMap<FastifyRequest, string>()

/** What the access feature adds to a throttled route: its hooks (onRequest, after the permissions) and its documentation. */
export function throttleHooks (
  throttles: readonly Throttle[],
  app: FastifyInstance | undefined,
  principalId: ((principal: unknown) => string | number) | undefined,
  where: string
): { hooks: onRequestHookHandler[], responses: ThrottleResponses } {
  if (throttles.length === 0) return { hooks: [], responses: {} }
  const budgets = new Map<string, { rate: string, budget: Budget }>()
  for (const throttle of throttles) {
    const budget = budgetOf(throttle, where)
    const listed = budgets.get(throttle.scope)
    if (listed !== undefined && !sameBudget(listed.budget, budget)) {
      throw twoRates(throttle.scope, listed.rate, throttle.rate, where, where)
    }
    // A scope listed twice on one route (by its router and its view) counts the request once.
    budgets.set(throttle.scope, { rate: throttle.rate, budget })
  }
  const create = rateLimitOf(app, [...budgets.keys()], where)
  let counters = COUNTERS.get(create)
  if (counters === undefined) COUNTERS.set(create, counters = new Map())
  const used: Counter[] = []
  for (const [scope, { rate, budget }] of budgets) {
    let counter = counters.get(scope)
    if (counter === undefined) {
      const count = create({
        ...budget,
        // The hook of the route sets the request's client before it counts (with the route's principalId).
        keyGenerator: (request) => `${scope}:${String(CLIENTS.get(request))}`,
        // A failing store is this module's to handle: it lets the request through and logs (throttled).
        skipOnError: false,
        cache: LOCAL_CLIENTS
      })
      counters.set(scope, counter = { scope, rate, budget, where, count, pending: new Map(), warnedAt: 0 })
    } else if (!sameBudget(counter.budget, budget)) {
      throw twoRates(scope, counter.rate, rate, counter.where, where)
    }
    used.push(counter)
  }
  return { hooks: [throttleHook(used, principalId, where)], responses: throttled() }
}

/** The hook of a route: counts the request against every budget it is in, and refuses it past any. */
function throttleHook (
  counters: readonly Counter[],
  principalId: PrincipalId | undefined,
  where: string
): onRequestHookHandler {
  return async function throttle (request, reply) {
    CLIENTS.set(request, clientOf(request, principalId, where))
    // Every budget counts the request, a refused one too: the plugin's stores count each request they see.
    const counts = await Promise.all(counters.map(async (counter) => countIn(counter, request)))
    let tightest: Counted | undefined
    let refusal: Counted | undefined
    for (const count of counts) {
      if (count === undefined || count.isAllowed) continue
      if (count.isExceeded) {
        // Retry-After is the longest wait among the spent budgets: a request sooner would be refused again.
        if (refusal === undefined || count.ttlInSeconds > refusal.ttlInSeconds) refusal = count
      } else if (tightest === undefined || count.remaining < tightest.remaining ||
        (count.remaining === tightest.remaining && count.ttlInSeconds > tightest.ttlInSeconds)) {
        tightest = count
      }
    }
    if (refusal !== undefined) {
      // A window the store reports as ending now (or with no expiry) still asks for a wait of a second.
      const wait = Math.max(1, refusal.ttlInSeconds)
      throw new TooManyRequests(`Too many requests; try again in ${wait} second${wait === 1 ? '' : 's'}.`, {
        headers: { 'retry-after': wait, 'x-ratelimit-limit': refusal.max, 'x-ratelimit-remaining': 0, 'x-ratelimit-reset': wait }
      })
    }
    if (tightest !== undefined) {
      reply.header('x-ratelimit-limit', tightest.max)
      reply.header('x-ratelimit-remaining', tightest.remaining)
      reply.header('x-ratelimit-reset', tightest.ttlInSeconds)
    }
  }
}

/**
 * One budget's count of a request, or `undefined` when its store failed (Redis unreachable): a
 * throttle protects capacity, and an outage of its store should not become an outage of the API, so
 * the request goes through uncounted (fails open) and the failure is logged, once a minute per scope.
 */
async function countIn (counter: Counter, request: FastifyRequest): Promise<Count | undefined> {
  const client = String(CLIENTS.get(request))
  // One client's counts in a budget run one after another. The plugin's in-process store hands
  // every count of a client the same object, which it goes on incrementing, and reads it only after
  // an `await`: two counts in one turn of the event loop would both read the second's number, and
  // a request within the budget would be refused. Other clients, and other budgets, do not wait.
  const previous = counter.pending.get(client)
  const counted = previous === undefined ? counter.count(request) : previous.then(async () => counter.count(request))
  // Settled, the count leaves the map unless a later one of the client's took its place.
  const settled: Promise<void> = counted.then(forget, forget)
  function forget (): void { if (counter.pending.get(client) === settled) counter.pending.delete(client) }
  counter.pending.set(client, settled)
  try {
    return await counted
  } catch (error) {
    const now = Date.now()
    if (now - counter.warnedAt >= WARNING_INTERVAL) {
      counter.warnedAt = now
      request.log.warn({ err: error, throttle: counter.scope },
        `throttle "${counter.scope}": its store failed; requests pass uncounted until it answers again`)
    }
    return undefined
  }
}

/**
 * Whom a request is counted as: its principal, by `principalId`, when it has one; otherwise its
 * address (`request.ip`: the peer's address, or what Fastify's `trustProxy` takes from a trusted proxy).
 */
function clientOf (request: FastifyRequest, principalId: PrincipalId | undefined, where: string): string {
  const principal = principalOf(request)
  if (principal === null || principalId === undefined) return `ip:${addressOf(request.ip)}`
  const id = principalId(principal)
  // An id of another kind would be one string (`undefined`) for every principal: one budget for all.
  if (typeof id !== 'string' && !(typeof id === 'number' && Number.isFinite(id))) {
    throw new ConfigurationError('FV_ERR_THROTTLE',
      `${where}: principalId returned ${String(id)} for a principal. ` +
      'It must return a string or a finite number that identifies the principal, as its throttles count by it')
  }
  // Apart from the addresses' keys, so that no principal's id (`ip:10.0.0.1`) counts against an address's budget.
  return `principal:${id}`
}

/**
 * The address a budget is kept for. An IPv6 client is counted by its /64: a global unicast address
 * leaves its last 64 bits to the host (RFC 4291 §2.5.4), and a site is given a /64 at least (RFC 6177),
 * so one client has 2^64 addresses to rotate through. An IPv4-mapped address is its IPv4 address.
 * Anything else (no socket address, or a forged `X-Forwarded-For` taken through `trustProxy: true`)
 * is one shared `unknown`, so no client sets the length of a key or gains a budget by inventing one.
 */
function addressOf (ip: string | undefined): string {
  if (ip === undefined) return 'unknown'
  const address = ip.split('%')[0] // a zone (`fe80::1%eth0`) names an interface of this host, not the client
  const version = isIP(address)
  if (version === 4) return address
  if (version !== 6) return 'unknown'
  const groups = ipv6Groups(address)
  if (groups.slice(0, 6).every((group, i) => group === (i === 5 ? 0xffff : 0))) {
    return [groups[6] >> 8, groups[6] & 0xff, groups[7] >> 8, groups[7] & 0xff].join('.')
  }
  return `${groups.slice(0, 4).map((group) => group.toString(16)).join(':')}::/64`
}

/** The eight 16-bit groups of an IPv6 address `isIP` accepted (RFC 4291 §2.2: `::` and a trailing IPv4 part). */
function ipv6Groups (address: string): number[] {
  let text = address
  const tail: number[] = []
  const last = text.slice(text.lastIndexOf(':') + 1)
  if (last.includes('.')) {
    const [a, b, c, d] = last.split('.').map(Number)
    tail.push((a << 8) | b, (c << 8) | d)
    text = text.slice(0, text.length - last.length)
    if (!text.endsWith('::')) text = text.slice(0, -1)
  }
  const groupsOf = (part: string): number[] => part === '' ? [] : part.split(':').map((group) => parseInt(group, 16))
  const [head, rest] = text.split('::')
  const left = groupsOf(head)
  const right = rest === undefined ? [] : groupsOf(rest)
  const zeros = new Array<number>(8 - left.length - right.length - tail.length).fill(0)
  return [...left, ...zeros, ...right, ...tail]
}

/** The budget a throttle declares, checked: a plain scope name, and a whole number of requests per second, minute, hour or day. */
function budgetOf (throttle: Throttle, where: string): Budget {
  // Read as unknown: a JavaScript caller, or a cast, can pass anything here.
  const { scope, rate }: { scope: unknown, rate: unknown } = throttle
  if (typeof scope !== 'string' || !SCOPE.test(scope)) {
    throw new ConfigurationError('FV_ERR_THROTTLE',
      `Cannot register ${where}: the throttle scope ${JSON.stringify(scope)} is no name. ` +
      "A scope is 1 to 64 letters, digits, '_', '.' or '-' ('uploads', 'burst')")
  }
  const parsed = typeof rate === 'string' ? RATE.exec(rate) : null
  if (parsed === null) {
    throw new ConfigurationError('FV_ERR_THROTTLE',
      `Cannot register ${where}: the throttle scope '${scope}' has the rate ${JSON.stringify(rate)}, which is no rate. ` +
      "Write a whole number of requests above 0 per second, minute, hour or day ('100/minute')")
  }
  return { max: Number(parsed[1]), timeWindow: PERIODS[parsed[2]] }
}

const sameBudget = (a: Budget, b: Budget): boolean => a.max === b.max && a.timeWindow === b.timeWindow

/** The refusal of a second rate for a scope: `first` was given at `firstWhere`, `second` at `where`. */
function twoRates (scope: string, first: string, second: string, firstWhere: string, where: string): Error {
  const there = firstWhere === where ? 'too' : `at ${firstWhere}`
  return new ConfigurationError('FV_ERR_THROTTLE',
    `Cannot register ${where}: the throttle scope '${scope}' has the rate '${second}' here and '${first}' ${there}, ` +
    'but a scope is one budget, shared by every route that names it. Give it one rate, or name another scope')
}

/** The application's `createRateLimit` (@fastify/rate-limit 11), which counts every throttle. */
function rateLimitOf (app: FastifyInstance | undefined, scopes: readonly string[], where: string): CreateRateLimit {
  const create: unknown = app === undefined ? undefined : Reflect.get(app, 'createRateLimit')
  // A function decorated by @fastify/rate-limit: its signature is the plugin's, restated above.
  if (typeof create === 'function') return create as CreateRateLimit
  const older = app !== undefined && app.hasDecorator('rateLimit') ? ' (the one registered is older than 11, which has no createRateLimit)' : ''
  throw new ConfigurationError('FV_ERR_THROTTLE',
    `Cannot register ${where}: it is throttled (${scopes.map((scope) => `'${scope}'`).join(', ')}), ` +
    `but the application has no @fastify/rate-limit 11 to count with${older}. Register it before the views: ` +
    "`await app.register(rateLimit, { global: false })`, with `import rateLimit from '@fastify/rate-limit'`")
}

const SECONDS_LEFT = 'Seconds until the window of the spent budget ends, when a request may succeed again'

/** What a throttled route documents: its 429, with the headers every one of them carries (RFC 6585 §4); new for each route. */
const throttled = (): ThrottleResponses => ({
  429: {
    errors: [TooManyRequests],
    headers: {
      'retry-after': Type.Integer({ minimum: 1, description: `${SECONDS_LEFT} (RFC 9110 §10.2.3).` }),
      'x-ratelimit-limit': Type.Integer({ minimum: 1, description: 'The requests the spent budget allows in each window.' }),
      'x-ratelimit-remaining': Type.Integer({ minimum: 0, maximum: 0, description: 'The requests left in the window: none.' }),
      'x-ratelimit-reset': Type.Integer({ minimum: 1, description: `${SECONDS_LEFT}.` })
    }
  }
})
