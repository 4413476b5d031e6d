import t0, { type Test } from 'tap'
import http from 'node:http'
import { once } from 'node:events'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Writable } from 'node:stream'
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import rateLimit, { type RateLimitPluginOptions } from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { Redis } from 'ioredis'
import views, { APIView, Get, Post, ViewRouter } from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import type { Authenticator } from '../lib/access.js'
import { ConfigurationError } from '../lib/errors.js'
import { LOCAL_CLIENTS, throttleHooks, type Throttle } from '../lib/access/throttle.js'
import { buildViewRoutes } from '../lib/registration/register.js'
import { problem } from './helpers.js'
import { redisMissing, startRedis, type RedisServer } from './redis-server.js'

const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')
const per = (rate: Throttle['rate'], scope = 'reads'): Throttle => ({ scope, rate })

class Books extends APIView {
  static override throttles = [per('3/minute')]
  @Get('/books') books () { return { books: [] } }
}

class Authors extends APIView {
  static override throttles = [per('3/minute')]
  @Get('/authors') authors () { return { authors: [] } }
}

class Search extends APIView {
  static override throttles = [per('5/minute', 'search')]
  @Get('/search') search () { return { hits: [] } }
}

interface User { id: string }

/** A principal named by the `x-user` header; no header, anonymous. */
const byHeader: Authenticator<User> = {
  scheme: 'userHeader',
  securityScheme: { type: 'apiKey', in: 'header', name: 'x-user' },
  challenge: 'User realm="test"',
  authenticate: (request) => {
    const user = request.headers['x-user']
    return typeof user === 'string' ? { id: user } : undefined
  }
}
const principalId = (user: User): string => user.id

interface AppOptions {
  limiter?: RateLimitPluginOptions | false
  server?: FastifyServerOptions
}

/** An application with @fastify/rate-limit (unless `limiter: false`) and the views; ready, closed by the test. */
async function throttled (
  t: Test,
  options: FastifyViewsOptions,
  { limiter = {}, server = {} }: AppOptions = {}
): Promise<FastifyInstance> {
  const app = Fastify({ logger: false, ...server })
  t.teardown(async () => app.close())
  if (limiter !== false) await app.register(rateLimit, { global: false, ...limiter })
  await app.register(views, options)
  await app.ready()
  return app
}

t0.test('the request past the budget is a 429 problem with Retry-After and the plugin\'s headers', async (t) => {
  const app = await throttled(t, { views: [Books] })
  const remaining: unknown[] = []
  for (let i = 0; i < 3; i++) {
    const res = await app.inject('/books')
    t.equal(res.statusCode, 200)
    t.equal(res.headers['x-ratelimit-limit'], '3')
    remaining.push(res.headers['x-ratelimit-remaining'])
    t.ok(Number(res.headers['x-ratelimit-reset']) > 0 && Number(res.headers['x-ratelimit-reset']) <= 60, 'the window ends within a minute')
  }
  t.same(remaining, ['2', '1', '0'], 'each request spends one')
  const refused = await app.inject('/books')
  const body = problem(t, refused, 429)
  t.equal(body.title, 'Too Many Requests')
  t.match(body.detail, /^Too many requests; try again in \d+ seconds?\.$/)
  const wait = Number(refused.headers['retry-after'])
  t.ok(Number.isInteger(wait) && wait >= 1 && wait <= 60, `Retry-After is whole seconds within the window (${wait})`)
  t.equal(refused.headers['x-ratelimit-limit'], '3')
  t.equal(refused.headers['x-ratelimit-remaining'], '0')
  t.equal(refused.headers['x-ratelimit-reset'], String(wait))
  t.equal((await app.inject('/books')).statusCode, 429, 'and the next one too')
})

t0.test('requests that arrive together are each counted once: exactly the budget is served', async (t) => {
  const app = await throttled(t, { views: [Books, Search] })
  const together = await Promise.all(Array.from({ length: 8 }, async () => app.inject('/books')))
  t.same(together.map((res) => res.statusCode).sort(), [200, 200, 200, 429, 429, 429, 429, 429])
  t.same(together.map((res) => res.headers['x-ratelimit-remaining']).sort(), ['0', '0', '0', '0', '0', '0', '1', '2'],
    'each sees its own count, not a later one\'s')
  const clients = await Promise.all(['10.0.0.1', '10.0.0.2', '10.0.0.1', '10.0.0.2'].map(async (remoteAddress) =>
    app.inject({ url: '/search', remoteAddress })))
  t.same(clients.map((res) => res.headers['x-ratelimit-remaining']), ['4', '4', '3', '3'], 'two clients, counted side by side')
})

t0.test('HEAD counts against the budget of its GET', async (t) => {
  const app = await throttled(t, { views: [Books] })
  t.same([(await app.inject({ method: 'HEAD', url: '/books' })).statusCode, (await app.inject('/books')).statusCode,
    (await app.inject({ method: 'HEAD', url: '/books' })).statusCode, (await app.inject('/books')).statusCode], [200, 200, 200, 429])
})

t0.test('a window renews the budget', async (t) => {
  class Burst extends APIView {
    static override throttles = [per('2/second', 'burst')]
    @Get('/burst') burst () { return {} }
  }
  const app = await throttled(t, { views: [Burst] })
  t.same([await app.inject('/burst'), await app.inject('/burst'), await app.inject('/burst')].map((res) => res.statusCode), [200, 200, 429])
  await new Promise((resolve) => setTimeout(resolve, 1100))
  t.equal((await app.inject('/burst')).statusCode, 200, 'served again once the second is over')
})

t0.test('views naming one scope share its budget; another scope has its own', async (t) => {
  const app = await throttled(t, { views: [Books, Authors, Search] })
  t.equal((await app.inject('/books')).statusCode, 200)
  t.equal((await app.inject('/authors')).statusCode, 200)
  const third = await app.inject('/books')
  t.equal(third.headers['x-ratelimit-remaining'], '0', 'the third request of the scope, on either view, spends its last')
  t.equal((await app.inject('/authors')).statusCode, 429, 'Authors is refused: Books spent the budget of "reads"')
  t.equal((await app.inject('/books')).statusCode, 429)
  const search = await app.inject('/search')
  t.equal(search.statusCode, 200, 'the scope "search" is untouched')
  t.equal(search.headers['x-ratelimit-remaining'], '4')
})

t0.test('each principal has its own budget, and anonymous requests are counted by their address', async (t) => {
  const app = await throttled(t, { views: [Books], auth: { authenticators: [byHeader], principalId } })
  const as = async (user?: string, remoteAddress = '10.0.0.1') =>
    (await app.inject({ url: '/books', remoteAddress, headers: user === undefined ? {} : { 'x-user': user } })).statusCode
  t.same([await as('ann'), await as('ann'), await as('ann'), await as('ann')], [200, 200, 200, 429], 'ann spends hers')
  t.same([await as('bob'), await as('bob', '10.0.0.2')], [200, 200], 'bob has his, from any address')
  t.equal(await as(), 200, 'an anonymous request from ann\'s address has the address\'s budget')
  t.same([await as(), await as(), await as()], [200, 200, 429])
  t.equal(await as(undefined, '10.0.0.9'), 200, 'another address has its own')
  t.equal(await as('bob'), 200, 'bob is untouched by the address he shares with anonymous requests')
})

t0.test('a principal whose id is an address\'s key does not count against that address', async (t) => {
  const app = await throttled(t, { views: [Books], auth: { authenticators: [byHeader], principalId } })
  for (let i = 0; i < 3; i++) t.equal((await app.inject({ url: '/books', headers: { 'x-user': 'ip:127.0.0.1' } })).statusCode, 200)
  t.equal((await app.inject('/books')).statusCode, 200, 'the address 127.0.0.1 still has its budget')
})

t0.test('without principalId, signed-in requests are counted by their address', async (t) => {
  const app = await throttled(t, { views: [Books], auth: { authenticators: [byHeader] } })
  const codes = []
  for (const user of ['ann', 'bob', 'cy', 'dee']) codes.push((await app.inject({ url: '/books', headers: { 'x-user': user } })).statusCode)
  t.same(codes, [200, 200, 200, 429])
})

t0.test('a principalId that answers no id is refused on the request, naming the route; a number is an id', async (t) => {
  const logs: string[] = []
  const ids: Record<string, unknown> = { ann: undefined, bob: Number.NaN, cy: 7 }
  const app = await throttled(t, {
    views: [Books],
    auth: { authenticators: [byHeader], principalId: (user) => ids[user.id] as number } // as a JavaScript caller could
  }, { server: { logger: { level: 'error', stream: { write: (line: string) => logs.push(line) } } } })
  const as = async (user: string) => app.inject({ url: '/books', headers: { 'x-user': user } })
  problem(t, await as('ann'), 500)
  problem(t, await as('bob'), 500)
  t.match(logs[0], /"message":"Books's books \(GET \/books\): principalId returned undefined for a principal\. It must return a string/)
  t.match(logs[0], /"code":"FV_ERR_THROTTLE"/)
  t.match(logs[1], /principalId returned NaN for a principal/)
  t.equal((await as('cy')).headers['x-ratelimit-remaining'], '2', 'counted by the number')
})

t0.test('a route counts against the view\'s throttles and its action\'s: refused past either', async (t) => {
  class Uploads extends APIView {
    static override throttles = [per('5/minute', 'api')]
    static override actionThrottles = { upload: [per('2/minute', 'uploads')] }
    @Post('/uploads') upload () { return {} }
    @Get('/uploads') list () { return [] }
  }
  const app = await throttled(t, { views: [Uploads] })
  const post = async () => app.inject({ method: 'POST', url: '/uploads' })
  const first = await post()
  t.same([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']], ['2', '1'], 'the tightest budget is reported')
  t.equal((await post()).statusCode, 201)
  const refused = await post()
  t.equal(refused.statusCode, 429, 'the third upload is refused by "uploads"')
  t.equal(refused.headers['x-ratelimit-limit'], '2', 'and names its limit')
  const list = await app.inject('/uploads')
  t.equal(list.statusCode, 200, 'the list has no "uploads" throttle')
  t.same([list.headers['x-ratelimit-limit'], list.headers['x-ratelimit-remaining']], ['5', '1'], 'but every request counted against "api", the refused one too')
  t.equal((await app.inject('/uploads')).statusCode, 200)
  t.equal((await app.inject('/uploads')).statusCode, 429, 'refused by "api" now')
})

t0.test('throttles of every level add up: router, registration, route and view', async (t) => {
  class Reports extends APIView {
    @Get('/daily', { throttles: [per('2/minute', 'daily')] }) daily () { return {} }
    @Get('/weekly') weekly () { return {} }
  }
  class Status extends APIView {
    @Get('/') status () { return {} }
  }
  const router = new ViewRouter({ prefix: '/api', throttles: [per('6/minute', 'api')] })
    .registerView(Reports, { prefix: '/reports', throttles: [per('4/minute', 'reports')] })
    .registerView(Status, { prefix: '/status' })
  const app = await throttled(t, { views: [router] })
  const limits = async (url: string) => {
    const res = await app.inject(url)
    return [res.statusCode, res.headers['x-ratelimit-limit'], res.headers['x-ratelimit-remaining']]
  }
  t.same(await limits('/api/reports/daily'), [200, '2', '1'], 'the route\'s own budget is the tightest')
  t.same(await limits('/api/reports/daily'), [200, '2', '0'])
  t.same(await limits('/api/reports/daily'), [429, '2', '0'], 'refused by the route\'s')
  t.same(await limits('/api/reports/weekly'), [200, '4', '0'], 'the registration\'s counted the three')
  t.same(await limits('/api/status'), [200, '6', '1'], 'another view of the router counts against the router\'s only')
  t.same(await limits('/api/status'), [200, '6', '0'])
  t.same(await limits('/api/status'), [429, '6', '0'], 'which the reports spent their part of')
})

t0.test('of two spent budgets, Retry-After is the longer wait', async (t) => {
  class Two extends APIView {
    static override throttles = [per('1/second', 'short'), per('1/hour', 'long')]
    @Get('/two') two () { return {} }
  }
  const app = await throttled(t, { views: [Two] })
  t.equal((await app.inject('/two')).statusCode, 200)
  const refused = await app.inject('/two')
  t.equal(refused.statusCode, 429)
  t.ok(Number(refused.headers['retry-after']) > 3500, 'the hour\'s wait, not the second\'s')
  t.equal(refused.headers['x-ratelimit-limit'], '1')
})

t0.test('of two budgets with as many requests left, the one renewed later is reported', async (t) => {
  class Two extends APIView {
    static override throttles = [per('2/minute', 'minute'), per('2/hour', 'hour'), per('2/second', 'second')]
    @Get('/two') two () { return {} }
  }
  const app = await throttled(t, { views: [Two] })
  const res = await app.inject('/two')
  t.equal(res.headers['x-ratelimit-remaining'], '1')
  t.ok(Number(res.headers['x-ratelimit-reset']) > 3500, 'the hour\'s')
})

t0.test('a scope listed twice on one route counts the request once', async (t) => {
  class Twice extends APIView {
    static override throttles = [per('3/minute')]
    static override actionThrottles = { twice: [per('3/minute')] }
    @Get('/twice') twice () { return {} }
  }
  const app = await throttled(t, { views: [Twice] })
  t.equal((await app.inject('/twice')).headers['x-ratelimit-remaining'], '2')
})

t0.test('the 429 is documented on every throttled operation, with its headers', async (t) => {
  const app = Fastify({ logger: false })
  t.teardown(async () => app.close())
  await app.register(rateLimit, { global: false })
  await app.register(swagger, swaggerOptions({ info: { title: 'throttles', version: '1' } }))
  class Plain extends APIView {
    @Get('/plain') plain () { return {} }
  }
  await app.register(views, { views: [Books, Plain] })
  await app.ready()
  type Responses = Record<string, { headers?: Record<string, { schema: { type: string } }>, content?: unknown }>
  const doc = app.swagger() as { paths: Record<string, { get: { responses: Responses } }> }
  const tooMany = doc.paths['/books'].get.responses['429']
  t.ok(tooMany?.content, 'a 429 problem')
  t.same(Object.keys(tooMany.headers ?? {}).sort(), ['retry-after', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'])
  t.equal(tooMany.headers?.['retry-after'].schema.type, 'integer')
  t.equal(doc.paths['/plain'].get.responses['429'], undefined, 'an operation without throttles documents none')
})

t0.test('mistakes are refused when the views are registered', async (t) => {
  const refusal = async (options: FastifyViewsOptions, limiter?: AppOptions['limiter']) => {
    const app = Fastify({ logger: false })
    t.teardown(async () => app.close())
    if (limiter !== false) await app.register(rateLimit, { global: false, ...limiter })
    const error = await app.register(views, options).then(async () => app.ready())
      .then(() => undefined, (e: unknown) => e)
    t.ok(error instanceof ConfigurationError && error.code === 'FV_ERR_THROTTLE', 'FV_ERR_THROTTLE')
    return String((error as Error).message)
  }
  class Stricter extends APIView {
    static override throttles = [per('1/minute')]
    @Get('/stricter') stricter () { return {} }
  }
  t.match(await refusal({ views: [Books, Stricter] }),
    /^Cannot register Stricter's stricter \(GET \/stricter\): the throttle scope 'reads' has the rate '1\/minute' here and '3\/minute' at Books's books \(GET \/books\), but a scope is one budget, shared by every route that names it\. Give it one rate, or name another scope$/)
  class Torn extends APIView {
    static override throttles = [per('3/minute')]
    static override actionThrottles = { torn: [per('180/hour')] }
    @Get('/torn') torn () { return {} }
  }
  t.match(await refusal({ views: [Torn] }), /the throttle scope 'reads' has the rate '180\/hour' here and '3\/minute' too/, 'the same budget per hour is another rate')
  class Equal extends APIView {
    static override throttles = [per('3/minute')]
    @Get('/equal') equal () { return {} }
  }
  class Sibling extends APIView {
    static override throttles = [per('3/minute')]
    @Get('/sibling') sibling () { return {} }
  }
  const fine = await throttled(t, { views: [Equal, Sibling] })
  t.equal((await fine.inject('/sibling')).statusCode, 200, 'one rate given twice is one budget')
  for (const rate of ['0/minute', '1.5/minute', 'ten/minute', '10/week', '10 / minute', '', 10]) {
    class Bad extends APIView {
      static override throttles = [{ scope: 'bad', rate } as Throttle] // as a JavaScript caller could
      @Get('/bad') bad () { return {} }
    }
    t.match(await refusal({ views: [Bad] }),
      new RegExp(`^Cannot register Bad's bad \\(GET /bad\\): the throttle scope 'bad' has the rate ${escape(JSON.stringify(rate))}, which is no rate\\. Write a whole number of requests above 0 per second, minute, hour or day \\('100/minute'\\)$`), `rate ${JSON.stringify(rate)}`)
  }
  for (const scope of ['', 'a:b', 'with space', 'x'.repeat(65), undefined]) {
    class Bad extends APIView {
      static override throttles = [{ scope, rate: '1/second' } as Throttle] // as a JavaScript caller could
      @Get('/bad') bad () { return {} }
    }
    t.match(await refusal({ views: [Bad] }), /^Cannot register Bad's bad \(GET \/bad\): the throttle scope .* is no name\. A scope is 1 to 64 letters, digits, '_', '\.' or '-' \('uploads', 'burst'\)$/, `scope ${JSON.stringify(scope)}`)
  }
  t.match(await refusal({ views: [Books] }, false),
    /^Cannot register Books's books \(GET \/books\): it is throttled \('reads'\), but the application has no @fastify\/rate-limit 11 to count with\. Register it before the views: `await app\.register\(rateLimit, \{ global: false \}\)`, with `import rateLimit from '@fastify\/rate-limit'`$/)
})

t0.test('an application with an older @fastify/rate-limit is told so', async (t) => {
  const app = Fastify({ logger: false })
  t.teardown(async () => app.close())
  app.decorate('rateLimit', () => async () => {}) // what 10.x decorates, without createRateLimit
  app.register(views, { views: [Books] }) // ready() reports what it throws
  const error = await app.ready().then(() => undefined, (e: unknown) => e)
  t.match(error, { code: 'FV_ERR_THROTTLE', message: /no @fastify\/rate-limit 11 to count with \(the one registered is older than 11, which has no createRateLimit\)\. Register it/ })
})

t0.test('a view built without an application cannot count', async (t) => {
  t.throws(() => buildViewRoutes(Books), { code: 'FV_ERR_THROTTLE', message: /no @fastify\/rate-limit 11 to count with\. Register it/ })
  t.same(throttleHooks([], undefined, undefined, 'nowhere'), { hooks: [], responses: {} }, 'no throttles, nothing to count with')
})

t0.test('a store that fails lets requests through uncounted, and is logged once a minute', async (t) => {
  const logs: Array<{ level: number, msg: string, throttle?: string }> = []
  // The plugin's store protocol (`incr`, `child`), failing as an unreachable Redis does.
  class Down {
    incr (_key: string, callback: (error: Error) => void): void { callback(new Error('connect ECONNREFUSED')) }
    child (): Down { return this }
  }
  const app = await throttled(t, { views: [Books] }, {
    limiter: { store: Down },
    server: { logger: { level: 'warn', stream: { write: (line: string) => logs.push(JSON.parse(line)) } } }
  })
  const codes = []
  for (let i = 0; i < 5; i++) {
    const res = await app.inject('/books')
    codes.push(res.statusCode)
    t.equal(res.headers['x-ratelimit-limit'], undefined, 'no count to report')
  }
  t.same(codes, [200, 200, 200, 200, 200], 'served past the budget: nothing counts')
  t.same(logs.map(({ level, msg, throttle }) => ({ level, msg, throttle })), [
    { level: 40, msg: 'throttle "reads": its store failed; requests pass uncounted until it answers again', throttle: 'reads' }
  ], 'one warning for five failures')
})

t0.test('the plugin\'s own settings of its store apply: continueExceeding', async (t) => {
  class Burst extends APIView {
    static override throttles = [per('1/second', 'burst')]
    @Get('/burst') burst () { return {} }
  }
  const app = await throttled(t, { views: [Burst] }, { limiter: { continueExceeding: true } })
  t.equal((await app.inject('/burst')).statusCode, 200)
  t.equal((await app.inject('/burst')).statusCode, 429)
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal((await app.inject('/burst')).statusCode, 429, 'a request past the budget starts the window again')
  await new Promise((resolve) => setTimeout(resolve, 600))
  t.equal((await app.inject('/burst')).statusCode, 429, 'still inside the window the last one started')
})

/** Sends a GET over a real connection (a TCP port or a Unix socket) and answers its status and headers. */
async function get (
  target: { port: number } | { socketPath: string },
  url: string,
  headers: Record<string, string> = {},
  agent?: http.Agent
): Promise<{ status: number, headers: http.IncomingHttpHeaders }> {
  const request = http.request({ ...target, host: '127.0.0.1', path: url, headers, agent })
  request.end()
  const [response] = await once(request, 'response') as [http.IncomingMessage]
  response.resume()
  await once(response, 'end')
  return { status: response.statusCode ?? 0, headers: response.headers }
}

const listening = async (app: FastifyInstance): Promise<number> => {
  await app.listen({ port: 0, host: '127.0.0.1' })
  const address = app.server.address()
  return typeof address === 'object' && address !== null ? address.port : 0
}

t0.test('a forged X-Forwarded-For does not change whom a request is counted as, unless a proxy is trusted', async (t) => {
  const app = await throttled(t, { views: [Books] })
  const port = await listening(app)
  const forged = (i: number) => ({ 'x-forwarded-for': `10.${i}.0.1, ${'x'.repeat(10_000)}` })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await get({ port }, '/books', forged(i))).status)
  t.same(statuses, [200, 200, 200, 429], 'four addresses claimed, one peer counted')
})

t0.test('behind a trusted proxy, an address that is no address is one shared client, whatever its length', async (t) => {
  const app = await throttled(t, { views: [Books] }, { server: { trustProxy: true } })
  const from = async (forwarded: string) => (await app.inject({ url: '/books', headers: { 'x-forwarded-for': forwarded } })).statusCode
  t.same([await from('x'.repeat(10_000)), await from('y'.repeat(10_000)), await from('not an address'), await from('z')],
    [200, 200, 200, 429], 'four inventions share one budget')
  t.equal(await from('10.0.0.7'), 200, 'an address the proxy forwards is counted as itself')
})

t0.test('an IPv6 client is counted by its /64, an IPv4-mapped one as its IPv4 address', async (t) => {
  const app = await throttled(t, { views: [Books] })
  const from = async (remoteAddress: string) => (await app.inject({ url: '/books', remoteAddress })).statusCode
  const spend = async (...addresses: string[]) => Promise.all(addresses.map(from)).then((codes) => codes)
  t.same(await spend('2001:db8::1', '2001:db8::2:3', '2001:db8:0:0:ffff:1:2:3', '2001:db8::7'), [200, 200, 200, 429], 'one /64')
  t.equal(await from('2001:db8:0:1::1'), 200, 'the next /64 is another client')
  t.same(await spend('::ffff:192.0.2.1', '192.0.2.1', '::ffff:c000:201', '192.0.2.1'), [200, 200, 200, 429], 'IPv4-mapped is IPv4')
  t.same(await spend('fe80::1%eth0', 'fe80::2%eth1', 'fe80::3', 'fe80::4'), [200, 200, 200, 429], 'a zone names no client')
  t.same(await spend('64:ff9b::192.0.2.1', '64:ff9b::198.51.100.1', '64:ff9b:0:0:0:0:1.2.3.4', '64:ff9b::5'), [200, 200, 200, 429],
    'an IPv4 address embedded in another prefix is IPv6')
  t.same(await spend('::192.0.2.1', '::1', '::', '::2'), [200, 200, 200, 429], 'the /64 of zeros')
})

t0.test('the in-process store remembers a bounded number of clients per scope: the least recently seen is forgotten', async (t) => {
  const app = await throttled(t, { views: [Books] })
  const from = async (remoteAddress: string) => (await app.inject({ url: '/books', remoteAddress })).statusCode
  const others = async (first: number, count: number) => {
    for (let i = first; i < first + count; i++) await from(`10.${(i >> 16) & 0xff}.${(i >> 8) & 0xff}.${i & 0xff}`)
  }
  const spent = async () => [await from('192.0.2.1'), await from('192.0.2.1'), await from('192.0.2.1'), await from('192.0.2.1')]
  t.same(await spent(), [200, 200, 200, 429])
  await others(0, LOCAL_CLIENTS - 1)
  t.equal(await from('192.0.2.1'), 429, `remembered after ${LOCAL_CLIENTS - 1} other clients`)
  await others(LOCAL_CLIENTS, LOCAL_CLIENTS)
  t.equal(await from('192.0.2.1'), 200, `forgotten after ${LOCAL_CLIENTS} others: the store holds ${LOCAL_CLIENTS} clients, not one per address ever seen`)
})

t0.test('a request with no address (a Unix socket) is counted as one shared client', async (t) => {
  const app = await throttled(t, { views: [Books] })
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-throttle-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const socketPath = path.join(dir, 'socket')
  await app.listen({ path: socketPath })
  const statuses = []
  for (let i = 0; i < 4; i++) statuses.push((await get({ socketPath }, '/books')).status)
  t.same(statuses, [200, 200, 200, 429])
})

const missing = redisMissing()

t0.test('Redis: instances over one server share every budget', { skip: missing }, async (t) => {
  const server: RedisServer = await startRedis()
  t.teardown(async () => server.stop())
  // What the plugin's README advises for rate limiting: fail fast rather than queue while Redis is away.
  const client = async () => {
    const redis = new Redis({ port: server.port, host: '127.0.0.1', connectTimeout: 500, maxRetriesPerRequest: 1, enableOfflineQueue: false })
    redis.on('error', () => {}) // the throttles log what a failure costs; the client's own reports would repeat it
    t.teardown(() => redis.disconnect())
    await once(redis, 'ready')
    return redis
  }
  const logs: Array<{ msg: string }> = []
  const instance = async (options: FastifyViewsOptions, server: FastifyServerOptions = {}) => {
    const app = await throttled(t, options, {
      limiter: { redis: await client() },
      server: { logger: { level: 'warn', stream: new Writable({ write (line, _encoding, done) { logs.push(JSON.parse(String(line))); done() } }) }, ...server }
    })
    return { app, port: await listening(app) }
  }
  class Bulk extends APIView {
    static override throttles = [per('40/minute', 'bulk')]
    @Get('/bulk') bulk () { return {} }
  }
  const a = await instance({ views: [Books, Bulk] })
  const b = await instance({ views: [Authors, Books, Bulk] })
  const admin = await client()

  t.test('two routes on two instances share one scope', async (t) => {
    await admin.flushall()
    t.same([(await get(a, '/books')).status, (await get(b, '/authors')).status, (await get(a, '/books')).status], [200, 200, 200])
    t.equal((await get(b, '/books')).status, 429, 'B refuses: A and B spent the budget together')
    t.equal((await get(b, '/authors')).status, 429)
  })

  t.test('16 clients at once, over both instances: exactly the budget is served', async (t) => {
    await admin.flushall()
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    t.teardown(() => agent.destroy())
    const statuses: number[] = []
    let sent = 0
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (sent < 320) {
        const n = sent++
        statuses.push((await get(n % 2 === 0 ? a : b, '/bulk', {}, agent)).status)
      }
    }))
    const count = (status: number) => statuses.filter((one) => one === status).length
    t.equal(statuses.length, 320)
    t.equal(count(200), 40, 'the budget, exactly: none lost, none over')
    t.equal(count(429), 280, 'every other request refused')
    const keys = await admin.keys('*')
    t.same(keys, ['fastify-rate-limit-undefinedundefined-bulk:ip:127.0.0.1'], 'one key: the scope and the client')
    t.equal(await admin.get(keys[0]), '320', 'every request counted once')
  })

  t.test('keys stay short whatever a client sends', async (t) => {
    await admin.flushall()
    const proxied = await instance({ views: [Bulk] }, { trustProxy: true })
    for (let i = 0; i < 5; i++) await get(proxied, '/bulk', { 'x-forwarded-for': `${i}`.repeat(10_000) })
    const keys = await admin.keys('*')
    t.same(keys, ['fastify-rate-limit-undefinedundefined-bulk:ip:unknown'])
  })

  t.test('Redis gone mid-run: requests are served uncounted, never a 5xx, and counting resumes when it is back', async (t) => {
    await admin.flushall()
    logs.length = 0
    const before: number[] = []
    for (let i = 0; i < 44; i++) before.push((await get(i % 2 === 0 ? a : b, '/bulk')).status)
    t.equal(before.filter((status) => status === 429).length, 4, 'the budget is spent')
    const statuses: number[] = []
    const running = { on: true }
    const agent = new http.Agent({ keepAlive: true, maxSockets: 16 })
    t.teardown(() => agent.destroy())
    const run = Promise.all(Array.from({ length: 16 }, async (_, worker) => {
      while (running.on) statuses.push((await get(worker % 2 === 0 ? a : b, '/bulk', {}, agent)).status)
    }))
    await new Promise((resolve) => setTimeout(resolve, 200))
    await server.kill()
    const atKill = statuses.length
    await new Promise((resolve) => setTimeout(resolve, 1500))
    running.on = false
    await run
    const after = statuses.slice(atKill)
    t.same([...new Set(statuses)].sort(), [200, 429], 'only 200 and 429, no 5xx')
    t.ok(after.length > 100, `requests kept being answered after the kill (${after.length})`)
    t.same([...new Set(after.slice(-50))], [200], 'once Redis is gone, the spent budget no longer refuses: it fails open')
    t.ok(logs.some((line) => line.msg === 'throttle "bulk": its store failed; requests pass uncounted until it answers again'), 'logged')
    t.ok(logs.length <= 2, `once per scope and instance, not per request (${logs.length})`)

    await server.start()
    let counted: string | undefined
    for (let i = 0; i < 100 && counted === undefined; i++) {
      counted = (await get(a, '/bulk')).headers['x-ratelimit-remaining'] as string | undefined
      if (counted === undefined) await new Promise((resolve) => setTimeout(resolve, 100))
    }
    t.equal(counted, '39', 'counted again once Redis is back (an empty one: it kept nothing)')
  })
})
