import t0, { type Test } from 'tap'
import { once } from 'node:events'
import { createHash } from 'node:crypto'
import Fastify, { type FastifyInstance, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import { Type } from '@sinclair/typebox'
import { Redis } from 'ioredis'
import views, { mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { redisCache, RedisCache, type RedisCacheClient, type RedisCacheOptions, type StoredAnswer } from '../lib/cache.js'
import { ConfigurationError } from '../lib/errors.js'
import { buildApp } from '../examples/app.js'
import { problem } from './helpers.js'
import { redisMissing, startRedis, type RedisServer } from './redis-server.js'

/**
 * The Redis cache store (`redisCache`), directly and through an application: what each operation
 * reads and writes in Redis, its keys and their lifetimes, and what a request gets when Redis has
 * forgotten its scripts, is gone, is back, or hangs: a read is served uncached; a write of a cached
 * resource is refused (503, nothing written) by default, and served with its invalidation owed under
 * `writesWhileUnreachable: 'accept'`.
 */

const missing = redisMissing()

const sleep = async (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** A client of `server` as the example makes one (fail fast rather than queue), connected. */
async function connect (t: Test, server: RedisServer): Promise<Redis> {
  const redis = new Redis({ port: server.port, host: '127.0.0.1', connectTimeout: 500, maxRetriesPerRequest: 1, enableOfflineQueue: false })
  redis.on('error', () => {})
  t.teardown(() => redis.disconnect())
  await once(redis, 'ready')
  return redis
}

/** A server for one test, stopped at its end. */
async function server (t: Test, durable = false): Promise<RedisServer> {
  const started = await startRedis({ durable })
  t.teardown(() => started.stop())
  return started
}

interface Call { method: 'evalsha' | 'eval', keys: string[], args: Array<string | number> }

/**
 * A client over a real one that records every call, and can be told it is not connected (`status`),
 * to fail (`failure`), or to be late by `delay` ms (the script runs in Redis at once; its answer
 * arrives late) or never to answer (`hang`).
 */
class Wrapped implements RedisCacheClient {
  readonly calls: Call[] = []
  forced: string | undefined
  failure: Error | undefined
  delay = 0
  hang = false
  constructor (readonly inner: Redis) {}
  get status (): string { return this.forced ?? this.inner.status }
  async evalsha (sha: string, numkeys: number, ...args: Array<string | number>): Promise<unknown> {
    return this.#call('evalsha', numkeys, args, () => this.inner.evalsha(sha, numkeys, ...args))
  }

  async eval (script: string, numkeys: number, ...args: Array<string | number>): Promise<unknown> {
    return this.#call('eval', numkeys, args, () => this.inner.eval(script, numkeys, ...args))
  }

  async #call (method: Call['method'], numkeys: number, args: Array<string | number>, run: () => Promise<unknown>): Promise<unknown> {
    this.calls.push({ method, keys: args.slice(0, numkeys).map(String), args: args.slice(numkeys) })
    if (this.hang) return new Promise(() => {})
    if (this.failure !== undefined) throw this.failure
    const answer = await run()
    if (this.delay > 0) await sleep(this.delay)
    return answer
  }
}

const answerOf = (body: string): StoredAnswer => ({ status: 200, headers: { 'content-type': 'application/json', etag: '"x"' }, body })
const fingerprint = (text: string): string => createHash('sha256').update(text).digest('hex')

/** How long `run` takes to settle, in ms, and whether it rejected (with what). */
async function timed (run: () => Promise<unknown>): Promise<{ ms: number, error: Error | undefined }> {
  const begun = performance.now()
  try {
    await run()
    return { ms: performance.now() - begun, error: undefined }
  } catch (error) {
    return { ms: performance.now() - begun, error: error as Error }
  }
}

t0.test('the store: a lookup reads the tokens and the answer saved under them; a bump makes it unreachable', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const store = redisCache(await connect(t, redis), { prefix: 'shop:' })
  const other = redisCache(await connect(t, redis), { prefix: 'shop:' })

  const first = await store.lookup(['Item', 'Tag'], 'k')
  t.equal(first.answer, undefined, 'nothing saved yet')
  const [item, tag] = first.tokens.split(',')
  t.equal(first.tokens.split(',').length, 2, 'a token for each generation')
  t.ok(item.length >= 16 && tag.length >= 16 && item !== tag, `two tokens, distinct (${first.tokens})`)
  t.same(await store.lookup(['Item', 'Tag'], 'k'), first, 'a second lookup reads the same tokens')
  t.same(await other.lookup(['Item', 'Tag'], 'k'), first, 'and so does another instance')
  t.same((await store.lookup(['Tag', 'Item'], 'k')).tokens, `${tag},${item}`, 'in the order of the generations asked for')

  const saved = answerOf('{"id":1,\n"name":"Lampe à pied"}\n')
  await store.save('k', first.tokens, saved, 60_000)
  t.same(await other.lookup(['Item', 'Tag'], 'k'), { tokens: first.tokens, answer: saved }, 'the answer, read by another instance, body and headers as saved')
  t.same(await store.lookup(['Item', 'Tag'], 'k2'), { tokens: first.tokens, answer: undefined }, 'another key has none')
  t.same(await store.lookup(['Item'], 'k'), { tokens: item, answer: undefined }, 'nor the key under other generations')

  await other.bump(['Tag'])
  const bumped = await store.lookup(['Item', 'Tag'], 'k')
  t.equal(bumped.tokens.split(',')[0], item, 'a bump of Tag leaves Item\'s token')
  t.not(bumped.tokens.split(',')[1], tag, 'and gives Tag a new one')
  t.equal(bumped.answer, undefined, 'the answer saved under the old one is unreachable, from the instance that did not bump')
  t.same(await store.lookup(['Item', 'Tag'], 'k'), bumped, 'the new token stays')

  await store.save('k', bumped.tokens, saved, 60_000)
  await store.bump(['Item', 'Unrelated'])
  const again = await store.lookup(['Item', 'Tag'], 'k')
  t.not(again.tokens.split(',')[0], item, 'a bump of several generations replaces each')
  t.equal(again.answer, undefined)
  const tokens = new Set([item, tag, bumped.tokens.split(',')[1], again.tokens.split(',')[0]])
  t.equal(tokens.size, 4, 'no token is ever used twice')

  const separate = redisCache(await connect(t, redis), { prefix: 'blog:' })
  const theirs = await separate.lookup(['Item', 'Tag'], 'k')
  t.not(theirs.tokens, again.tokens, 'another prefix has generations of its own')
  await separate.bump(['Item'])
  t.same(await store.lookup(['Item', 'Tag'], 'k'), again, 'and its bumps leave this prefix\'s alone')

  const keys = (await admin.keys('*')).sort()
  t.same(keys.filter((key) => !key.startsWith('shop:') && !key.startsWith('blog:')), [], 'every key carries its store\'s prefix')
  t.same(keys.filter((key) => key.startsWith('shop:g:')), ['shop:g:Item', 'shop:g:Tag', 'shop:g:Unrelated'], 'a generation is prefix g: and its name')
  t.ok(keys.includes(`shop:e:k|${first.tokens}`), 'an answer is prefix e:, its key and the tokens it was read under')
  t.equal(await admin.get('shop:g:Item'), again.tokens.split(',')[0], 'a generation key holds its token')

  await admin.set(`shop:e:k|${again.tokens}`, 'not an answer')
  t.same(await store.lookup(['Item', 'Tag'], 'k'), { tokens: again.tokens, answer: undefined }, 'a value that is not an answer is none')
  await admin.set(`shop:e:k|${again.tokens}`, '200\n[1]\nbody')
  t.equal((await store.lookup(['Item', 'Tag'], 'k')).answer, undefined, 'nor one whose headers are no object')
})

t0.test('the store: Redis keys expire', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const store = redisCache(await connect(t, redis))
  const { tokens } = await store.lookup(['Item'], 'k')
  const generation = await admin.pttl('fv:g:Item')
  t.ok(generation > 86_400_000 - 60_000 && generation <= 86_400_000, `a generation lives a day by default (${generation} ms)`)
  await store.save('k', tokens, answerOf('{}'), 30_000.4)
  const entry = await admin.pttl(`fv:e:k|${tokens}`)
  t.ok(entry > 25_000 && entry <= 30_000, `an answer lives its ttl (${entry} ms)`)
  await store.bump(['Item'])
  const renewed = await admin.pttl('fv:g:Item')
  t.ok(renewed > 86_400_000 - 60_000 && renewed <= 86_400_000, `a bumped generation lives a day again (${renewed} ms)`)

  const short = redisCache(await connect(t, redis), { prefix: 'short:', generationTtl: 2 })
  const made = await short.lookup(['Item'], 'k')
  const lived = await admin.pttl('short:g:Item')
  t.ok(lived > 0 && lived <= 2000, `generationTtl is in seconds (${lived} ms)`)
  await short.bump(['Item'])
  const bumpedTtl = await admin.pttl('short:g:Item')
  t.ok(bumpedTtl > 0 && bumpedTtl <= 2000, `a bump gives it the same lifetime (${bumpedTtl} ms)`)
  await short.save('k', (await short.lookup(['Item'], 'k')).tokens, answerOf('{}'), 100)
  t.ok((await short.lookup(['Item'], 'k')).answer !== undefined, 'an answer is there within its ttl')
  await sleep(200)
  t.equal((await short.lookup(['Item'], 'k')).answer, undefined, 'and gone after it')
  t.not(made.tokens, (await short.lookup(['Item'], 'k')).tokens)

  const claimed = await store.claim('key', fingerprint('a'), 5_000)
  t.equal(claimed.state, 'claimed')
  const lease = await admin.pttl('fv:i:key')
  t.ok(lease > 0 && lease <= 5_000, `a claim lives its lease (${lease} ms)`)
  await store.settle('key', (claimed as { owner: string }).owner, answerOf('{"id":1}'), 120_000)
  const kept = await admin.pttl('fv:i:key')
  t.ok(kept > 110_000 && kept <= 120_000, `a settled answer lives its ttl (${kept} ms)`)
  const immortal: string[] = []
  for (const key of await admin.keys('*')) if ((await admin.pttl(key)) < 0) immortal.push(key)
  t.same(immortal, [], 'no key the store writes lives forever')
})

t0.test('the store: claims and settles of idempotency keys', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const store = redisCache(await connect(t, redis), { prefix: 'p:' })
  const other = redisCache(await connect(t, redis), { prefix: 'p:' })
  const body = fingerprint('{"name":"a"}')
  const first = await store.claim('key', body, 60_000)
  t.equal(first.state, 'claimed', 'a free key is claimed')
  const owner = (first as { owner: string }).owner
  t.same(await other.claim('key', body, 60_000), { state: 'running' }, 'by one request: another instance sees it running')
  t.same(await other.claim('key', fingerprint('{"name":"b"}'), 60_000), { state: 'mismatch' }, 'and another body as a mismatch')

  const answer: StoredAnswer = { status: 201, headers: { location: '/items/1', 'content-type': 'application/json' }, body: '{"id":1}' }
  const intruder = await other.claim('free', body, 60_000)
  await other.settle('key', (intruder as { owner: string }).owner, answer, 60_000)
  t.same(await other.claim('key', body, 60_000), { state: 'running' }, 'a settle by another owner leaves the claim alone')
  await store.settle('key', owner, answer, 60_000)
  t.same(await other.claim('key', body, 60_000), { state: 'done', answer }, 'the owner\'s settle keeps the answer, for any instance')
  t.same(await other.claim('key', fingerprint('{}'), 60_000), { state: 'mismatch' }, 'still bound to its body')
  await store.settle('key', owner, undefined, 60_000)
  t.same(await other.claim('key', body, 60_000), { state: 'done', answer }, 'a settle once done changes nothing')

  const freed = await store.claim('freed', body, 60_000)
  await store.settle('freed', (freed as { owner: string }).owner, undefined, 60_000)
  t.equal(await admin.exists('p:i:freed'), 0, 'a settle without an answer frees the key')
  const retaken = await other.claim('freed', body, 60_000)
  t.equal(retaken.state, 'claimed', 'a retry claims it')
  t.not((retaken as { owner: string }).owner, (freed as { owner: string }).owner, 'as a new owner')

  const early = await store.claim('lease', body, 100)
  await sleep(200)
  const late = await other.claim('lease', body, 60_000)
  t.equal(late.state, 'claimed', 'a claim past its lease is free again')
  await store.settle('lease', (early as { owner: string }).owner, answerOf('first'), 60_000)
  t.same(await store.claim('lease', body, 60_000), { state: 'running' }, 'the first owner, back late, cannot settle it')
  await other.settle('lease', (late as { owner: string }).owner, answer, 60_000)
  t.same(await store.claim('lease', body, 60_000), { state: 'done', answer }, 'the second can')

  await admin.set('p:i:garbled', `d${body}not an answer`)
  t.same(await store.claim('garbled', body, 60_000), { state: 'running' }, 'a record that holds no answer is not replayed')
  t.same((await admin.keys('*')).filter((key) => !key.startsWith('p:i:')), [], 'idempotency keys are prefix i:')
})

t0.test('the store: scripts Redis has forgotten are sent again (NOSCRIPT)', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const store = redisCache(client)
  const methods = (): string[] => client.calls.splice(0).map((call) => call.method)

  const { tokens } = await store.lookup(['Item'], 'k')
  t.same(methods(), ['evalsha', 'eval'], 'a script Redis never saw: by its hash, then its text')
  await store.lookup(['Item'], 'k')
  t.same(methods(), ['evalsha'], 'then by its hash alone: Redis keeps what it ran')

  await admin.script('FLUSH')
  await store.save('k', tokens, answerOf('saved'), 60_000)
  t.same(methods(), ['evalsha', 'eval'], 'after SCRIPT FLUSH, a save sends its text again')
  t.same((await store.lookup(['Item'], 'k')).answer, answerOf('saved'), 'and it was saved')
  methods()

  await admin.script('FLUSH')
  await store.bump(['Item'])
  t.same(methods(), ['evalsha', 'eval'])
  t.equal((await store.lookup(['Item'], 'k')).answer, undefined, 'the bump happened')
  methods()

  await admin.script('FLUSH')
  const claim = await store.claim('key', fingerprint('b'), 60_000)
  t.equal(claim.state, 'claimed')
  await admin.script('FLUSH')
  await store.settle('key', (claim as { owner: string }).owner, answerOf('created'), 60_000)
  t.same(methods(), ['evalsha', 'eval', 'evalsha', 'eval'], 'claim and settle too')
  t.same(await store.claim('key', fingerprint('b'), 60_000), { state: 'done', answer: answerOf('created') })

  client.calls.length = 0
  client.failure = new Error('ERR something else')
  const failed = await timed(async () => store.lookup(['Item'], 'k'))
  t.equal(failed.error?.message, 'ERR something else', 'another error is the operation\'s')
  t.same(client.calls.map((call) => call.method), ['evalsha'], 'and is not answered by sending the text')
})

t0.test('the store: refused at once while the client is not ready, cut at its timeout', { skip: missing }, async (t) => {
  const redis = await server(t)
  const client = new Wrapped(await connect(t, redis))
  // Each operation on a store of its own: a refused bump would be remembered, and made before a lookup.
  const operations = (options = { timeout: 80 }): Record<string, () => Promise<unknown>> => ({
    lookup: async () => redisCache(client, options).lookup(['Item'], 'k'),
    save: async () => redisCache(client, options).save('k', 't', answerOf('x'), 1000),
    bump: async () => redisCache(client, options).bump(['Item']),
    claim: async () => redisCache(client, options).claim('k', fingerprint('x'), 1000),
    settle: async () => redisCache(client, options).settle('k', 'owner', undefined, 1000)
  })

  client.forced = 'reconnecting'
  for (const [name, run] of Object.entries(operations({ timeout: 5000 }))) {
    const { ms, error } = await timed(run)
    t.equal(error?.message, 'the Redis client is reconnecting', `${name} is refused, naming the client's state`)
    t.ok(ms < 250, `at once, not at the timeout of 5 s (${ms.toFixed(1)} ms)`)
  }
  t.same(client.calls, [], 'nothing was sent: a client that queues would make the request wait')

  client.forced = undefined
  client.hang = true
  for (const [name, run] of Object.entries(operations())) {
    const { ms, error } = await timed(run)
    t.equal(error?.message, 'Redis did not answer within 80 ms', `${name} is abandoned at the timeout`)
    t.ok(ms >= 75 && ms < 80 + 500, `after ${ms.toFixed(0)} ms`)
  }

  const { ms, error } = await timed(operations({} as { timeout: number }).lookup)
  t.equal(error?.message, 'Redis did not answer within 250 ms', 'the default timeout is 250 ms')
  t.ok(ms >= 245 && ms < 250 + 500, `after ${ms.toFixed(0)} ms`)

  client.hang = false
  client.delay = 120
  const slow = await timed(operations().lookup)
  t.equal(slow.error?.message, 'Redis did not answer within 80 ms', 'an answer later than the timeout is not waited for')

  const refused = [
    { timeout: 0 }, { timeout: -1 }, { timeout: Number.NaN }, { timeout: Infinity },
    { generationTtl: 0 }, { generationTtl: -5 }, { generationTtl: Infinity }
  ]
  for (const options of refused) {
    const expected = `redisCache: timeout (${String(options.timeout)}) and generationTtl (${String(options.generationTtl)}) must be positive numbers`
    t.throws(() => redisCache(client, options), new ConfigurationError('FV_ERR_CACHE', expected), `${String(Object.keys(options))} ${String(Object.values(options))}`)
  }
  t.ok(new RedisCache(client, { timeout: 0.5 }) instanceof RedisCache, 'a timeout of a fraction of a millisecond is a time')
})

t0.test('the store: a generationTtl in seconds is rounded to whole milliseconds, at least one', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const cases: Array<[number | undefined, number]> = [
    [undefined, 86_400_000], [2.5, 2500], [1.0005, 1001], [1.0004, 1000],
    [0.0015, 2], [0.0004, 1], [0.0001, 1], [1e-9, 1]
  ]
  for (const [generationTtl, ms] of cases) {
    const store = redisCache(client, { prefix: `ttl${String(generationTtl)}:`, generationTtl })
    client.calls.length = 0
    const looked = await timed(async () => store.lookup(['Item'], 'k'))
    const bumped = await timed(async () => store.bump(['Item']))
    const sent = client.calls.filter((call) => call.method === 'evalsha').map((call) => call.args[call.args.length - 1])
    t.same([looked.error?.message, bumped.error?.message, sent], [undefined, undefined, [ms, ms]],
      `generationTtl ${String(generationTtl)} s: ${ms} ms, which Redis takes, for a lookup and a bump`)
  }
  const ttl = await admin.pttl('ttl1.0005:g:Item')
  t.ok(ttl > 0 && ttl <= 1001, `the generation lives about a second (${ttl} ms)`)
  for (const generationTtl of [0, -0.0001, -5, Number.NaN]) {
    const expected = `redisCache: timeout (undefined) and generationTtl (${String(generationTtl)}) must be positive numbers`
    t.throws(() => redisCache(client, { generationTtl }), new ConfigurationError('FV_ERR_CACHE', expected),
      `generationTtl ${String(generationTtl)} is still refused: rounding makes no time of it`)
  }
})

t0.test('the store: a bump that could not be made is remembered, and made before the next lookup', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const store = redisCache(client, { timeout: 100 })
  const { tokens } = await store.lookup(['Item'], 'k')
  await store.save('k', tokens, answerOf('old'), 60_000)
  t.equal(store.pendingBumps, 0)
  client.calls.length = 0
  /** The scripts run, by their keys (a script sent a second time, by its text after NOSCRIPT, counted once). */
  const scripts = (): string[][] => client.calls.splice(0).filter((call) => call.method === 'evalsha').map((call) => call.keys)

  client.forced = 'reconnecting'
  await t.rejects(store.bump(['Item']), { message: 'the Redis client is reconnecting' })
  t.equal(store.pendingBumps, 1, 'the write\'s generation is remembered')
  await t.rejects(store.bump(['Item', 'Tag']))
  t.equal(store.pendingBumps, 2, 'each generation once')
  await t.rejects(store.lookup(['Item'], 'k'), 'a lookup meanwhile is refused too')
  t.equal(await admin.get('fv:g:Item'), tokens, 'Redis still holds the old token: a Redis that kept its data across the outage')
  t.same(client.calls, [])

  client.forced = undefined
  client.failure = new Error('ECONNRESET')
  await t.rejects(store.lookup(['Item'], 'k'), { message: 'ECONNRESET' }, 'a lookup whose bump fails fails: it would read the old token')
  t.equal(store.pendingBumps, 2, 'the bump is still remembered')
  client.failure = undefined
  scripts()

  const after = await store.lookup(['Item'], 'k')
  t.equal(after.answer, undefined, 'the answer read before the write is not served')
  t.not(after.tokens, tokens)
  t.equal(store.pendingBumps, 0, 'nothing is left to bump')
  t.same(scripts(), [['fv:g:Item', 'fv:g:Tag'], ['fv:g:Item']], 'every remembered generation in one bump, then the lookup')
  t.equal(await admin.exists('fv:g:Tag'), 1)

  client.forced = 'reconnecting'
  await t.rejects(store.bump(['Tag']))
  client.forced = undefined
  scripts()
  await store.bump(['Item'])
  t.same(scripts(), [['fv:g:Tag', 'fv:g:Item']], 'a later bump makes the remembered ones with its own')
  t.equal(store.pendingBumps, 0)

  // With a bump remembered and Redis hung, the bump is abandoned at the timeout, and the lookup with it.
  client.forced = 'reconnecting'
  await t.rejects(store.bump(['Item']))
  client.forced = undefined
  client.hang = true
  const { ms, error } = await timed(async () => store.lookup(['Item'], 'k'))
  t.match(error?.message, /^Redis did not answer within 100 ms$/)
  t.ok(ms < 100 + 80, `a lookup with a bump remembered is abandoned within the timeout, 100 ms (${ms.toFixed(0)} ms)`)
  t.equal(store.pendingBumps, 1, 'the bump is still remembered')
})

/** An idempotency claim whose answer comes after the timeout: the request is refused, and its key must stay free for the retry. */
t0.test('the store: a claim abandoned at the timeout, which Redis makes anyway, is freed when its answer arrives', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const store = redisCache(client, { timeout: 50 })
  const other = redisCache(await connect(t, redis), { timeout: 50 })
  const body = fingerprint('a')
  // Redis runs the claim at once; its answer arrives 150 ms later, 100 ms after the store gave up on it.
  client.delay = 150
  const abandoned = await timed(async () => store.claim('key', body, 60_000))
  t.equal(abandoned.error?.message, 'Redis did not answer within 50 ms', 'the claim is abandoned')
  t.ok(abandoned.ms >= 45 && abandoned.ms < 400, `at the timeout (${abandoned.ms.toFixed(0)} ms)`)
  client.delay = 0
  const given = performance.now()
  t.equal(await admin.exists('fv:i:key'), 1, 'Redis holds the claim nonetheless')
  t.same(await other.claim('key', body, 60_000), { state: 'running' }, 'so a retry at once finds it running (until its answer arrives)')
  let retry = await other.claim('key', body, 60_000)
  const states = [retry.state]
  while (retry.state !== 'claimed' && performance.now() - given < 3000) {
    await sleep(10)
    retry = await other.claim('key', body, 60_000)
    states.push(retry.state)
  }
  const ms = performance.now() - given
  t.equal(retry.state, 'claimed', 'a retry claims the key once the late answer has arrived: its owner freed it')
  t.ok(ms < 1000, `shortly after the timeout, not at the end of the lease of a minute (${ms.toFixed(0)} ms; ${states.join(', ')})`)
  t.same(states.filter((state) => state !== 'running' && state !== 'claimed'), [], 'until then, running')
  const owner = (retry as { owner: string }).owner
  await sleep(200)
  t.equal(await admin.get('fv:i:key'), owner, 'the retry\'s claim is its own, and stays: the freeing ends only the late claim')
  t.same(await store.claim('key', body, 60_000), { state: 'running' })
  t.equal((await admin.pttl('fv:i:key')) > 55_000, true, 'for its lease')

  // A claim abandoned at the timeout that found the key held, or done, leaves it as it was.
  const holder = await other.claim('held', body, 60_000)
  const done = await other.claim('done', body, 60_000)
  await other.settle('done', (done as { owner: string }).owner, answerOf('{"id":1}'), 60_000)
  const held = await admin.get('fv:i:held')
  const kept = await admin.get('fv:i:done')
  client.delay = 150
  for (const key of ['held', 'done']) {
    t.equal((await timed(async () => store.claim(key, body, 60_000))).error?.message, 'Redis did not answer within 50 ms', `${key}: abandoned`)
  }
  client.delay = 0
  await sleep(250)
  t.same([await admin.get('fv:i:held'), await admin.get('fv:i:done')], [held, kept], 'the keys another request holds, or answered, are left alone')
  await other.settle('held', (holder as { owner: string }).owner, answerOf('{"id":2}'), 60_000)
  t.same(await store.claim('held', body, 60_000), { state: 'done', answer: answerOf('{"id":2}') }, 'and their owner settles them')
})

// Through an application.

type Rows = MemoryRepository<{ id: number, name: string }>

/** A view over `rows` through the application's cache: reads kept a minute, creates idempotent. */
function itemsView (rows: Rows): unknown {
  return class Items extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: Type.Object({ id: Type.Integer(), name: Type.String() }),
    createSchema: Type.Object({ name: Type.String() }),
    partialUpdateSchema: Type.Object({ name: Type.String() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true },
    repository: asyncRepository(rows)
  }) {
    static override cache = { ttl: 60, idempotency: true, resource: 'Item' }
  }
}

/** An application whose store is `redisCache(client, options)`, over `rows`. */
async function instance (
  t: Test, client: RedisCacheClient, rows: Rows, options?: RedisCacheOptions
): Promise<{ app: FastifyInstance, store: RedisCache }> {
  const store = redisCache(client, options)
  const app = Fastify({ logger: false })
  t.teardown(() => app.close())
  await app.register(views, { cache: store, views: [{ view: itemsView(rows) as never, prefix: '/items' }] })
  await app.ready()
  return { app, store }
}

/** Waits until the example's own Redis client is connected: a read is answered from the cache. */
async function cacheReady (app: FastifyInstance, url = '/items?page_size=1'): Promise<void> {
  const deadline = Date.now() + 10_000
  while ((await app.inject(url)).headers['x-cache'] !== 'HIT') {
    if (Date.now() > deadline) throw new Error('the example never answered from the cache')
    await sleep(20)
  }
}

interface Log { level: number, time: number, msg: string, err?: { message: string } }

/** The example API over SQLite in memory and `redis`, with its warnings kept; closed at the test's end. */
async function example (t: Test, redis: RedisServer): Promise<{ app: FastifyInstance, logs: Log[] }> {
  const logs: Log[] = []
  const app = await buildApp({
    databaseUrl: 'sqlite::memory:',
    cacheUrl: redis.url,
    logger: { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } }
  })
  t.teardown(() => app.close())
  await app.ready()
  // Its Redis client connects in the background. A request before it is ready is served uncached
  // and warned about, and that warning's interval would hide the ones a test makes: wait until the
  // client has had Redis's answer to its ready check (INFO).
  const probe = await connect(t, redis)
  for (const deadline = Date.now() + 10_000; ;) {
    const clients = String(await probe.client('LIST')).split('\n')
    if (clients.some((line) => / cmd=info\b/.test(line))) break
    if (Date.now() > deadline) throw new Error('the example\'s Redis client never connected')
    await sleep(10)
  }
  probe.disconnect()
  await sleep(100)
  await cacheReady(app)
  if (logs.length > 0) throw new Error(`the example logged before the test began: ${JSON.stringify(logs)}`)
  return { app, logs }
}

const warnings = (logs: Log[]): Log[] => logs.filter((log) => log.level === 40)
const json = (res: LightMyRequestResponse): { name: string, items?: Array<{ name: string }> } => res.json()
const WARNING = 'fastify-views: the redis cache store failed; serving without it'

/** What a write of a cached resource is refused with while the store cannot be reached. */
const UNREACHABLE = 'The cache shared by this service cannot be reached, so this write could not be made known: nothing was written. Retry shortly.'

/** Asserts a refusal of a write because the store is unreachable: 503, `retry-after: 1`, and the detail saying nothing was written. */
function refusedUnreachable (t: Test, res: LightMyRequestResponse, what: string): void {
  t.same([res.statusCode, res.headers['retry-after'], res.statusCode === 503 ? res.json<{ detail: string }>().detail : res.body.slice(0, 120)],
    [503, '1', UNREACHABLE], `${what}: 503, retry-after 1, nothing written`)
}

t0.test('the example over Redis: hits, every write invalidates, keys with the prefix and a lifetime', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const { app } = await example(t, redis)
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })
  t.equal(created.statusCode, 201)
  const miss = await app.inject('/items/1')
  t.same([miss.statusCode, miss.headers['x-cache'], json(miss).name], [200, 'MISS', 'Lamp'])
  const hit = await app.inject('/items/1')
  t.same([hit.statusCode, hit.headers['x-cache'], hit.body], [200, 'HIT', miss.body], 'the same answer, from Redis')
  t.equal(hit.headers.etag, miss.headers.etag, 'with its ETag')
  t.equal(hit.headers['last-modified'], miss.headers['last-modified'], 'and its Last-Modified')
  t.equal(hit.headers['cache-control'], 'private, no-cache')
  const revalidated = await app.inject({ url: '/items/1', headers: { 'if-none-match': String(hit.headers.etag) } })
  t.equal(revalidated.statusCode, 304, 'a client holding the cached answer\'s tag gets a 304')

  for (const [method, payload, name] of [['PATCH', { name: 'Patched' }, 'Patched'], ['PUT', { name: 'Put', price: 3 }, 'Put']] as const) {
    await app.inject('/items')
    t.equal((await app.inject('/items')).headers['x-cache'], 'HIT')
    t.equal((await app.inject({ method, url: '/items/1', payload })).statusCode, 200)
    const item = await app.inject('/items/1')
    t.same([item.headers['x-cache'], json(item).name], ['MISS', name], `${method}: the item is read again`)
    const list = await app.inject('/items')
    t.same([list.headers['x-cache'], json(list).items?.map((row) => row.name)], ['MISS', [name]], `${method}: and the list`)
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/items/1' })).statusCode, 204)
  t.equal((await app.inject('/items/1')).statusCode, 404, 'DELETE: the item is gone')
  t.same(json(await app.inject('/items')).items, [], 'and from the list')

  const keyed = await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'order-1' }, payload: { name: 'Desk', price: 5 } })
  t.equal(keyed.statusCode, 201)
  const keys = await admin.keys('*')
  t.same(keys.filter((key) => !key.startsWith('fv:')), [], `every key carries the prefix fv: (${keys.length} keys)`)
  t.same(keys.filter((key) => key.startsWith('fv:g:')), ['fv:g:Item'], 'one generation, the resource Item')
  t.ok(keys.filter((key) => key.startsWith('fv:e:')).length >= 2, 'answers')
  t.equal(keys.filter((key) => key.startsWith('fv:i:')).length, 1, 'one idempotency key')
  for (const key of keys) {
    const ttl = await admin.pttl(key)
    const [low, high] = key.startsWith('fv:e:') ? [54_000 - 5_000, 60_000] : [86_400_000 - 60_000, 86_400_000]
    t.ok(ttl > low && ttl <= high, `${key.slice(0, 5)}... expires: ${ttl} ms`)
  }

  // Every write of the cached resource may be refused while Redis cannot be reached: its OpenAPI says so.
  const doc = (await app.inject('/docs/json')).json<{ paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }>()
  const documented = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, operation]) => `${method} ${path}${'503' in operation.responses ? ' 503' : ''}`))
  t.same(documented.sort(), [
    'delete /items/bulk 503', 'delete /items/{id} 503', 'get /health', 'get /items', 'get /items/events', 'get /items/{id}',
    'patch /items/bulk 503', 'patch /items/{id} 503', 'post /items 503', 'post /items/bulk 503', 'put /items/bulk 503', 'put /items/{id} 503'
  ], 'OpenAPI documents a 503 on every write of items, and on no read')
})

t0.test('a keyed create whose claim answers after the timeout: 503, and its retry a moment later is made, not refused as running for the lease', { skip: missing }, async (t) => {
  const redis = await server(t)
  const client = new Wrapped(await connect(t, redis))
  const rows: Rows = new MemoryRepository()
  const { app, store } = await instance(t, client, rows, { timeout: 100 })
  const create = { method: 'POST', url: '/items', headers: { 'idempotency-key': 'late-1' }, payload: { name: 'keyed' } } as const
  client.delay = 300
  const refused = await app.inject(create)
  client.delay = 0
  t.match(problem(t, refused, 503).detail, /^Idempotency keys cannot be checked now/, 'the create is refused: its key could not be checked in time')
  t.same(rows.list({}), [], 'and not made')
  t.equal(store.pendingBumps, 0, 'nor is anything to bump')
  const given = performance.now()
  const statuses: number[] = []
  for (let res = await app.inject(create); ; res = await app.inject(create)) {
    statuses.push(res.statusCode)
    if (res.statusCode !== 409 || performance.now() - given > 3000) break
    await sleep(20)
  }
  const ms = performance.now() - given
  t.equal(statuses[statuses.length - 1], 201, `retried, it is made (${statuses.join(', ')})`)
  t.ok(ms < 1500, `within a moment of the late claim's answer, not after the lease of a minute (${ms.toFixed(0)} ms)`)
  t.same(rows.list({}).map((row) => row.name), ['keyed'], 'once')
})

t0.test('Redis killed: reads served uncached at once, never a 5xx, one warning an interval; writes refused (503) and nothing written, served again when it is back', { skip: missing }, async (t) => {
  const redis = await server(t, true)
  const admin = await connect(t, redis)
  const { app, logs } = await example(t, redis)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'before', price: 1 } })).statusCode, 201)
  for (const url of ['/items/1', '/items']) {
    await app.inject(url)
    t.equal((await app.inject(url)).headers['x-cache'], 'HIT', `${url} is cached`)
  }
  const token = await admin.get('fv:g:Item')
  const entries = (await admin.keys('fv:e:*')).sort()
  admin.disconnect()

  await redis.kill()
  const slowest = { ms: 0 }
  const statuses = new Set<number>()
  const caches = new Set<unknown>()
  const send = async (options: string | InjectOptions): Promise<LightMyRequestResponse> => {
    const begun = performance.now()
    const res = await app.inject(options)
    slowest.ms = Math.max(slowest.ms, performance.now() - begun)
    statuses.add(res.statusCode)
    return res
  }
  for (let i = 0; i < 20; i++) {
    const res = await send(i % 2 === 0 ? '/items/1' : '/items')
    caches.add(res.headers['x-cache'])
    t.equal(res.statusCode, 200)
  }
  t.same([...caches], ['MISS'], 'every read served, uncached')
  // Until the event loop has handled the connection's close, the client still says `ready` (its
  // operations fail: "Stream isn't writeable"), and a write is served: the window the todo test
  // below shows. Once it has, every write is refused.
  await sleep(50)
  const writes: Array<[string, InjectOptions]> = [
    ['PATCH', { method: 'PATCH', url: '/items/1', payload: { name: 'during' } }],
    ['PUT', { method: 'PUT', url: '/items/1', payload: { name: 'during', price: 2 } }],
    ['DELETE', { method: 'DELETE', url: '/items/1' }],
    ['a create', { method: 'POST', url: '/items', payload: { name: 'plain', price: 1 } }],
    // The refusal comes before the key is claimed: the key is not even looked at.
    ['a create with Idempotency-Key', { method: 'POST', url: '/items', headers: { 'idempotency-key': 'k-1' }, payload: { name: 'keyed', price: 1 } }],
    ['a bulk create', { method: 'POST', url: '/items/bulk', payload: [{ name: 'bulk', price: 1 }] }]
  ]
  for (const [what, options] of writes) refusedUnreachable(t, await send(options), what)
  const item = await send('/items/1')
  t.same([item.statusCode, item.headers['x-cache'], json(item).name], [200, 'MISS', 'before'], 'the item is as it was: nothing was written')
  t.same(json(await send('/items')).items?.map((row) => row.name), ['before'], 'nothing was created')
  t.same([...statuses].sort(), [200, 503], 'no other status: reads 200, writes 503')
  t.ok(slowest.ms < 1000, `each answered in less than a second (the slowest: ${slowest.ms.toFixed(0)} ms)`)
  t.same(warnings(logs).map((log) => log.msg), [WARNING], 'one warning for the reads\' 22 failures')
  t.match(warnings(logs)[0].err?.message, /\w/, `with the failure (${warnings(logs)[0].err?.message})`)

  // The clock a minute on, as the warning's interval reads it.
  const now = Date.now
  t.teardown(() => { Date.now = now })
  const warned = warnings(logs)[0].time
  Date.now = () => warned + 59_990 // the log's time is a moment after the one the interval counts from
  await send('/items/1')
  t.equal(warnings(logs).length, 1, 'nothing more within the minute')
  Date.now = () => warned + 60_001
  await send('/items/1')
  t.equal(warnings(logs).length, 2, 'a minute later, a second warning')
  Date.now = now

  await redis.start()
  const back = await connect(t, redis)
  t.equal(await back.get('fv:g:Item'), token, 'Redis kept its data: the old token (the refused writes bumped nothing)...')
  t.same((await back.keys('fv:e:*')).sort(), entries, '...and the answers read before the outage')
  const names: string[] = []
  const deadline = Date.now() + 10_000
  for (let res = await send('/items/1'); ; res = await send('/items/1')) {
    names.push(json(res).name)
    if (res.headers['x-cache'] === 'HIT' || Date.now() > deadline) break
    await sleep(10)
  }
  t.same([...new Set(names)], ['before'], `once Redis is back, the item is read from the cache again (${names.length} reads until a hit), and it is still right`)
  const patched = await send({ method: 'PATCH', url: '/items/1', payload: { name: 'after' } })
  t.same([patched.statusCode, json(patched).name], [200, 'after'], 'a write is served again')
  t.not(await back.get('fv:g:Item'), token, 'and bumps')
  const read = await send('/items/1')
  t.same([read.headers['x-cache'], json(read).name], ['MISS', 'after'], 'the write is read at once')
  t.same(json(await send('/items')).items?.map((row) => row.name), ['after'], 'the list too')
  const keyed = await send({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'k-1' }, payload: { name: 'keyed', price: 1 } })
  t.equal(keyed.statusCode, 201, 'the create refused with its key is made when retried')
  t.same([...statuses].sort(), [200, 201, 503])
})

t0.test('Redis killed, writesWhileUnreachable: \'accept\': writes served meanwhile, their bump remembered and made once it is back', { skip: missing }, async (t) => {
  const redis = await server(t, true)
  const admin = await connect(t, redis)
  const { app, store } = await instance(t, await connect(t, redis), new MemoryRepository(), { writesWhileUnreachable: 'accept' })
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'before' } })).statusCode, 201)
  await app.inject('/items/1')
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'HIT', 'the item is cached')
  const token = await admin.get('fv:g:Item')
  admin.disconnect()

  await redis.kill()
  const patched = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'during' } })
  t.same([patched.statusCode, json(patched).name], [200, 'during'], 'a write is served')
  t.equal(store.pendingBumps, 1, 'its bump is remembered')
  const read = await app.inject('/items/1')
  t.same([read.statusCode, read.headers['x-cache'], json(read).name], [200, 'MISS', 'during'], 'and read, uncached')
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'plain' } })).statusCode, 201, 'a create without a key is served')
  const keyed = await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'k-1' }, payload: { name: 'keyed' } })
  t.match(problem(t, keyed, 503).detail, /^Idempotency keys cannot be checked now; retry the request later\.$/, 'a create with a key cannot be made safe: 503')
  t.equal(store.pendingBumps, 1, 'and bumps nothing')

  await redis.start()
  const back = await connect(t, redis)
  t.equal(await back.get('fv:g:Item'), token, 'Redis kept its data: the token the write should have replaced')
  const names: string[] = []
  for (const deadline = Date.now() + 10_000; ;) {
    const res = await app.inject('/items/1')
    names.push(json(res).name)
    if (res.headers['x-cache'] === 'HIT' || Date.now() > deadline) break
    await sleep(10)
  }
  t.same([...new Set(names)], ['during'], `every read once Redis is back is the write's (${names.length} reads until a hit)`)
  t.not(await back.get('fv:g:Item'), token, 'the write\'s bump was made once Redis answered')
  t.equal(store.pendingBumps, 0)
  t.same((await app.inject('/items')).json<Array<{ name: string }>>().map((row) => row.name), ['during', 'plain'], 'the list too')
})

t0.test('a client not ready: a write is refused (503) before anything is written, and bumps nothing; reads are served uncached', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const rows: Rows = new MemoryRepository()
  const { app, store } = await instance(t, client, rows)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'old' } })).statusCode, 201)
  await app.inject('/items/1')
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'HIT')
  const token = await admin.get('fv:g:Item')

  client.calls.length = 0
  client.forced = 'connecting'
  refusedUnreachable(t, await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } }), 'PATCH')
  refusedUnreachable(t, await app.inject({ method: 'DELETE', url: '/items/1' }), 'DELETE')
  refusedUnreachable(t, await app.inject({ method: 'POST', url: '/items', payload: { name: 'plain' } }), 'a create')
  refusedUnreachable(t, await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'k' }, payload: { name: 'keyed' } }),
    'a create with Idempotency-Key')
  t.same(rows.list({}), [{ id: 1, name: 'old' }], 'nothing was written')
  t.equal(store.pendingBumps, 0, 'and there is nothing to bump')
  t.same(client.calls, [], 'nothing was sent to Redis')
  const meanwhile = await app.inject('/items/1')
  t.same([meanwhile.statusCode, meanwhile.headers['x-cache'], json(meanwhile).name], [200, 'MISS', 'old'], 'a read is served uncached meanwhile')
  t.same([(await app.inject('/items')).statusCode], [200], 'a list too')
  t.equal(await admin.get('fv:g:Item'), token)

  client.forced = undefined
  const cached = await app.inject('/items/1')
  t.same([cached.headers['x-cache'], json(cached).name], ['HIT', 'old'], 'once the client is ready, the answer kept before is served: it is still right')
  const patched = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } })
  t.same([patched.statusCode, json(patched).name], [200, 'new'], 'a write is served again')
  t.not(await admin.get('fv:g:Item'), token, 'and bumps')
  const first = await app.inject('/items/1')
  t.same([first.headers['x-cache'], json(first).name], ['MISS', 'new'], 'the next read is the write\'s')
  const second = await app.inject('/items/1')
  t.same([second.headers['x-cache'], json(second).name], ['HIT', 'new'], 'and is cached')
  const keyed = await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'k' }, payload: { name: 'keyed' } })
  t.equal(keyed.statusCode, 201, 'the create refused with its key is made when retried')
  t.equal(store.pendingBumps, 0)
})

t0.test('bumps pending while the client is ready: a write tries them first, is refused while they fail, and served once they are made', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const rows: Rows = new MemoryRepository()
  const { app, store } = await instance(t, client, rows)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'a' } })).statusCode, 201)
  const token = await admin.get('fv:g:Item')

  // A write whose invalidation fails with the client ready (a connection reset): it was written, and
  // its bump is owed. This is the one write of an outage the store cannot refuse: it learns of the
  // outage from it.
  client.failure = new Error('ECONNRESET')
  const first = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'b' } })
  t.same([first.statusCode, json(first).name], [200, 'b'], 'a write whose bump fails after it ran is answered')
  t.equal(store.pendingBumps, 1, 'and its bump is owed')
  client.calls.length = 0
  refusedUnreachable(t, await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'c' } }), 'the next write, while the owed bump fails')
  t.same(client.calls.map((call) => call.keys), [['fv:g:Item']], 'the owed bump was tried first, and nothing else')
  t.same(rows.list({}), [{ id: 1, name: 'b' }], 'the refused write changed nothing')
  t.equal(store.pendingBumps, 1, 'the bump is still owed')
  t.equal(await admin.get('fv:g:Item'), token)

  client.failure = undefined
  client.calls.length = 0
  const served = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'd' } })
  t.same([served.statusCode, json(served).name], [200, 'd'], 'once the bump can be made, the write is served')
  t.same(client.calls.map((call) => call.keys), [['fv:g:Item'], ['fv:g:Item']], 'after the owed bump, then its own')
  t.equal(store.pendingBumps, 0)
  t.not(await admin.get('fv:g:Item'), token)
})

t0.test('writesWhileUnreachable: \'accept\', a client not ready: a write\'s bump is remembered, and made before the instance reads from the cache again', { skip: missing }, async (t) => {
  const redis = await server(t)
  const admin = await connect(t, redis)
  const client = new Wrapped(await connect(t, redis))
  const { app, store } = await instance(t, client, new MemoryRepository(), { writesWhileUnreachable: 'accept' })
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'old' } })).statusCode, 201)
  await app.inject('/items/1')
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'HIT')
  const token = await admin.get('fv:g:Item')

  client.forced = 'connecting'
  const patched = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } })
  t.same([patched.statusCode, json(patched).name], [200, 'new'], 'the write is served')
  t.equal(store.pendingBumps, 1, 'its bump is remembered')
  const meanwhile = await app.inject('/items/1')
  t.same([meanwhile.headers['x-cache'], json(meanwhile).name], ['MISS', 'new'], 'read uncached meanwhile')
  t.equal(await admin.get('fv:g:Item'), token, 'Redis still holds the answer read before the write')

  client.forced = undefined
  const first = await app.inject('/items/1')
  t.same([first.headers['x-cache'], json(first).name], ['MISS', 'new'], 'the first read through Redis again is the write\'s')
  t.equal(store.pendingBumps, 0)
  t.not(await admin.get('fv:g:Item'), token)
  const second = await app.inject('/items/1')
  t.same([second.headers['x-cache'], json(second).name], ['HIT', 'new'], 'and is cached')

  client.forced = 'connecting'
  const refused = await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'k' }, payload: { name: 'keyed' } })
  t.match(problem(t, refused, 503).detail, /^Idempotency keys cannot be checked now/)
  t.equal((await app.inject('/items')).json<unknown[]>().length, 1, 'a create whose key cannot be checked is not made')
  t.equal(store.pendingBumps, 0, 'so it changed nothing, and there is nothing to bump (nor a second timeout to wait for, when Redis hangs)')
})

t0.test('two instances, the writer\'s client not ready: the write is refused, so the other instance has nothing stale to serve', { skip: missing }, async (t) => {
  const redis = await server(t)
  const rows: Rows = new MemoryRepository() // one database under both
  const writerClient = new Wrapped(await connect(t, redis))
  const writer = await instance(t, writerClient, rows)
  const reader = await instance(t, new Wrapped(await connect(t, redis)), rows)
  t.equal((await writer.app.inject({ method: 'POST', url: '/items', payload: { name: 'old' } })).statusCode, 201)
  await reader.app.inject('/items/1')
  t.equal((await reader.app.inject('/items/1')).headers['x-cache'], 'HIT', 'the reader has the item cached')

  writerClient.forced = 'reconnecting' // the writer cannot reach Redis; the reader can
  refusedUnreachable(t, await writer.app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } }), 'the write')
  t.equal(writer.store.pendingBumps, 0)
  const read = await reader.app.inject('/items/1')
  t.same([read.statusCode, read.headers['x-cache'], json(read).name], [200, 'HIT', 'old'], 'the other instance serves what it kept: it is still right')
  t.same(rows.list({}), [{ id: 1, name: 'old' }])

  writerClient.forced = undefined
  const patched = await writer.app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } })
  t.equal(patched.statusCode, 200, 'once the writer reaches Redis, the write is served')
  const after = await reader.app.inject('/items/1')
  t.same([after.statusCode, after.headers['x-cache'], json(after).name], [200, 'MISS', 'new'], 'and the other instance\'s next read is the write\'s')
})

t0.test('writesWhileUnreachable: \'accept\', two instances, the writer\'s client not ready: the other serves stale answers until the writer reaches Redis, and no longer', { skip: missing }, async (t) => {
  const redis = await server(t)
  const rows: Rows = new MemoryRepository() // one database under both
  const writerClient = new Wrapped(await connect(t, redis))
  const writer = await instance(t, writerClient, rows, { writesWhileUnreachable: 'accept' })
  const reader = await instance(t, new Wrapped(await connect(t, redis)), rows, { writesWhileUnreachable: 'accept' })
  t.equal((await writer.app.inject({ method: 'POST', url: '/items', payload: { name: 'old' } })).statusCode, 201)
  await reader.app.inject('/items/1')
  t.equal((await reader.app.inject('/items/1')).headers['x-cache'], 'HIT', 'the reader has the item cached')

  writerClient.forced = 'reconnecting' // the writer cannot reach Redis; the reader can
  const patched = await writer.app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'new' } })
  t.equal(patched.statusCode, 200, 'the write is acknowledged')
  t.equal(writer.store.pendingBumps, 1)
  const read = await reader.app.inject('/items/1')
  t.same([read.statusCode, read.headers['x-cache'], json(read).name], [200, 'HIT', 'old'],
    'the documented limitation: the other instance serves the answer the acknowledged write made stale')
  await sleep(600)
  t.equal(json(await reader.app.inject('/items/1')).name, 'old', 'for as long as the writer cannot reach Redis (its retries are refused)')

  // Once the writer reaches Redis, it makes the bump within its retry interval (500 ms), without a request of its own.
  writerClient.calls.length = 0
  writerClient.forced = undefined
  const reached = performance.now()
  let name = 'old'
  let reads = 0
  while (name !== 'new' && performance.now() - reached < 3000) {
    await sleep(20)
    name = json(await reader.app.inject('/items/1')).name
    reads++
  }
  const ms = performance.now() - reached
  t.equal(name, 'new', 'the other instance reads the write once the writer reaches Redis again')
  t.ok(ms < 1000, `within a second of it (${ms.toFixed(0)} ms, ${reads} reads)`)
  t.same(writerClient.calls.map((call) => call.keys), [['fv:g:Item']], 'by the writer\'s retry: its one call to Redis')
  t.equal(writer.store.pendingBumps, 0)
})

t0.test('a hung Redis (SIGSTOP): requests are answered within the timeout, reads uncached, writes refused once the store knows, and the cache resumes with SIGCONT', { skip: missing }, async (t) => {
  const redis = await server(t)
  const { app, logs } = await example(t, redis)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'before', price: 1 } })).statusCode, 201)
  await app.inject('/items/1')
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'HIT')
  // The timeout, and a margin for a machine busy with other work.
  const limit = 250 + 300
  const timedInject = async (options: string | InjectOptions): Promise<{ res: LightMyRequestResponse, ms: number }> => {
    const begun = performance.now()
    const res = await app.inject(options)
    return { res, ms: performance.now() - begun }
  }

  redis.pause()
  t.teardown(() => { try { redis.resume() } catch {} })
  // The client's connection is open, so its status is still `ready`, and nothing has failed yet: the
  // first write is served, and the store learns of the hang from its bump, abandoned at the timeout
  // (another instance may serve what this write made stale until the bump is made).
  const patched = await timedInject({ method: 'PATCH', url: '/items/1', payload: { name: 'during' } })
  t.equal(patched.res.statusCode, 200, 'the first write is served: nothing has told the store Redis hangs')
  t.ok(patched.ms >= 240 && patched.ms < limit, `after its bump's timeout (${patched.ms.toFixed(0)} ms)`)
  for (const url of ['/items/1', '/items', '/items/1']) {
    const { res, ms } = await timedInject(url)
    t.same([res.statusCode, res.headers['x-cache'], url === '/items' ? undefined : json(res).name], [200, 'MISS', url === '/items' ? undefined : 'during'],
      `${url}: served uncached, with the write`)
    t.ok(ms >= 240 && ms < limit, `${url}: after the timeout (the owed bump's), not longer (${ms.toFixed(0)} ms)`)
  }
  const second = await timedInject({ method: 'PATCH', url: '/items/1', payload: { name: 'refused' } })
  refusedUnreachable(t, second.res, 'a write once a bump is owed (tried first, abandoned at the timeout)')
  t.ok(second.ms < limit, `within the timeout (${second.ms.toFixed(0)} ms)`)
  const keyed = await timedInject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'hung-1' }, payload: { name: 'keyed', price: 1 } })
  refusedUnreachable(t, keyed.res, 'a create with a key')
  t.ok(keyed.ms < limit, `refused within the timeout (${keyed.ms.toFixed(0)} ms)`)
  const after = await timedInject('/items/1')
  t.same([after.res.statusCode, json(after.res).name], [200, 'during'], 'the refused write wrote nothing')
  t.ok(after.ms < limit, `within the timeout too (${after.ms.toFixed(0)} ms)`)
  t.same(warnings(logs).map((log) => log.msg), [WARNING], 'one warning')
  t.match(warnings(logs)[0].err?.message, /^Redis did not answer within 250 ms$/)

  redis.resume()
  const names: string[] = []
  let res = await app.inject('/items/1')
  for (const deadline = Date.now() + 5000; res.headers['x-cache'] !== 'HIT' && Date.now() < deadline; res = await app.inject('/items/1')) {
    names.push(json(res).name)
    await sleep(10)
  }
  t.equal(res.headers['x-cache'], 'HIT', 'served from the cache again')
  t.same([...new Set([...names, json(res).name])], ['during'], 'with the write')
  const written = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'resumed' } })
  t.equal(written.statusCode, 200, 'writes are served again')
  t.equal(json(await app.inject('/items/1')).name, 'resumed')
  const retried = await app.inject({ method: 'POST', url: '/items', headers: { 'idempotency-key': 'hung-1' }, payload: { name: 'keyed', price: 1 } })
  t.equal(retried.statusCode, 201, `the create refused with a 503 is made when retried (got ${retried.statusCode}: ${retried.body.slice(0, 120)})`)
})

t0.test('the example waits up to a second for its Redis client, then serves reads uncached and refuses writes until Redis answers', { skip: missing }, async (t) => {
  const redis = await server(t)
  let begun = performance.now()
  const first = await buildApp({ databaseUrl: 'sqlite::memory:', cacheUrl: redis.url })
  t.teardown(() => first.close())
  const created = await first.inject({ method: 'POST', url: '/items', payload: { name: 'first', price: 1 } })
  const built = performance.now() - begun
  t.equal(created.statusCode, 201, 'with Redis up, its first write is served: the client was ready when buildApp resolved')
  t.ok(built < 1000, `at once (${built.toFixed(0)} ms)`)
  await first.inject('/items/1')
  t.equal((await first.inject('/items/1')).headers['x-cache'], 'HIT', 'and its reads are cached at once')

  await redis.kill()
  begun = performance.now()
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', cacheUrl: redis.url })
  const ms = performance.now() - begun
  t.teardown(() => app.close())
  t.ok(ms >= 950 && ms < 2000, `with Redis down, buildApp resolves after the second it waits (${ms.toFixed(0)} ms)`)
  const read = await app.inject('/items')
  t.same([read.statusCode, read.headers['x-cache']], [200, 'MISS'], 'a read is served uncached')
  refusedUnreachable(t, await app.inject({ method: 'POST', url: '/items', payload: { name: 'down', price: 1 } }), 'a write')
  await redis.start()
  // Both clients connected again before the end: closing the example while its client is not
  // connected would leave the client reconnecting (its onClose quits, which a client not connected refuses).
  await cacheReady(app, '/items')
  await cacheReady(first, '/items')
  const made = await app.inject({ method: 'POST', url: '/items', payload: { name: 'up', price: 1 } })
  t.same([made.statusCode, json(made).name], [201, 'up'], 'once its client connects, a write is served')
  t.same(json(await app.inject('/items')).items?.map((row) => row.name), ['up'], 'the refused one was not made')
})

/**
 * A gap of the lib the assertions marked with it show: they fail, as todo, until the store counts the
 * failures of its own operations as unreachable (then drop the marks).
 */

t0.test('a write after the store\'s operations began to fail, while the client still says ready, is refused too', { skip: missing }, async (t) => {
  const redis = await server(t)
  // A connection Redis closed: ioredis says `ready` until the event loop handles the close (tens of
  // milliseconds of requests through inject), and rejects every command meanwhile.
  const closed = new Wrapped(await connect(t, redis))
  const rows: Rows = new MemoryRepository()
  const { app, store } = await instance(t, closed, rows)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'a' } })).statusCode, 201)
  closed.failure = new Error('Stream isn\'t writeable and enableOfflineQueue options is false')
  for (let i = 0; i < 3; i++) t.same((await app.inject('/items/1')).headers['x-cache'], 'MISS', 'a read fails to reach Redis, served uncached')
  const patched = await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'b' } })
  t.equal(patched.statusCode, 503, 'a write after those failures is refused')
  t.same([rows.list({}).map((row) => row.name), store.pendingBumps], [['a'], 0], 'nothing written, nothing owed')

  // A hung Redis: the reads have each waited the timeout out.
  const hung = new Wrapped(await connect(t, redis))
  const other = await instance(t, hung, new MemoryRepository(), { timeout: 50, prefix: 'hung:' })
  t.equal((await other.app.inject({ method: 'POST', url: '/items', payload: { name: 'a' } })).statusCode, 201)
  hung.hang = true
  for (let i = 0; i < 3; i++) t.same((await other.app.inject('/items/1')).headers['x-cache'], 'MISS', 'a read abandoned at the timeout, served uncached')
  const written = await other.app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'b' } })
  t.equal(written.statusCode, 503, 'a write after those timeouts is refused')
  t.equal(other.store.pendingBumps, 0, 'nothing owed')
})
