import { test } from 'tap'
import type { FastifyRequest } from 'fastify'
import { ANYONE, SHARED, askerOf, canonical, hashKey, varyPart } from '../lib/registration/cache-key.js'
import { GRANTED_SCOPES } from '../lib/access/permission.js'
import { keepRule } from '../lib/access/access-rule.js'
import { decodeAnswer, encodeAnswer, memoryCache, MemoryCache } from '../lib/cache.js'
import { ConfigurationError } from '../lib/errors.js'

// The parts of the cache that a request does not show one by one: the canonical form and the hash a
// key is made of, who asks, the encoding of an answer, and the in-process store's accounting.

// A request with the members these parts read.
const request = (fields: Record<string, unknown>): FastifyRequest =>
  ({ headers: {}, ...fields }) as unknown as FastifyRequest

test('canonical: object keys in one order, arrays in theirs, undefined members left out', async (t) => {
  t.equal(canonical({ b: 2, a: 1 }), '{"a":1,"b":2}')
  t.equal(canonical({ a: 1, b: 2 }), canonical({ b: 2, a: 1 }), 'the order of members does not matter')
  t.equal(canonical({ a: { d: [2, 1], c: 'x' } }), '{"a":{"c":"x","d":[2,1]}}', 'nested objects too; arrays keep their order')
  t.not(canonical([1, 2]), canonical([2, 1]))
  t.equal(canonical({ a: undefined, b: null }), '{"b":null}')
  t.equal(canonical(undefined), 'null')
  t.equal(canonical('a"b'), '"a\\"b"', 'strings are JSON strings')
  t.equal(canonical(new Date(0)), '"1970-01-01T00:00:00.000Z"', 'a date is its JSON form, not an empty object')
  t.not(canonical('\u00e9'), canonical('e\u0301'), 'composed and decomposed are two values')
  t.not(canonical({ 'a,b': 1 }), canonical({ a: 1, b: 1 }))
})

test('hashKey: a fixed-length hash in which the boundaries between parts count', async (t) => {
  t.match(hashKey('a'), /^[A-Za-z0-9_-]{43}$/)
  t.equal(hashKey('a', 'b'), hashKey('a', 'b'))
  t.not(hashKey('ab', 'c'), hashKey('a', 'bc'))
  t.not(hashKey('a', ''), hashKey('a'))
})

test('varyPart: the values of the named headers, null for one not sent, a list for one sent twice', async (t) => {
  t.equal(varyPart(request({ headers: { 'accept-language': 'fr' } }), []), '')
  t.equal(varyPart(request({ headers: { 'accept-language': 'fr' } }), ['accept-language', 'x-tenant']), '["fr",null]')
  t.equal(varyPart(request({ headers: { 'x-tenant': ['a', 'b'] } }), ['x-tenant']), '[["a","b"]]')
})

test('askers: anyone, each principal with its granted scopes, and a shared view\'s narrowed requests', async (t) => {
  t.equal(ANYONE(request({})), '')
  const byId = askerOf((principal) => (principal as { id: number }).id)
  t.equal(byId(request({ principal: null })), '-', 'anonymous')
  t.equal(byId(request({})), '-', 'no principal resolved')
  t.equal(byId(request({ principal: { id: 7 } })), '"7"')
  t.not(byId(request({ principal: { id: 7 } })), byId(request({ principal: { id: 8 } })))
  const scoped = request({ principal: { id: 7 } })
  GRANTED_SCOPES.set(scoped, ['write', 'read'])
  const reordered = request({ principal: { id: 7 } })
  GRANTED_SCOPES.set(reordered, ['read', 'write'])
  t.equal(byId(scoped), '"7"["read","write"]', 'the scopes, sorted')
  t.equal(byId(scoped), byId(reordered))
  const none = request({ principal: { id: 7 } })
  GRANTED_SCOPES.set(none, [])
  t.equal(byId(none), '"7"', 'no scopes granted is none')
  t.equal(SHARED(request({})), '', 'a shared view: one answer for everyone')
  const narrowed = request({})
  keepRule(narrowed, { criteria: { owner: 1 } } as never) // a rule as a permission's scope leaves it
  t.equal(SHARED(narrowed), undefined, 'except a request a rule narrows: not cached')
})

test('an answer survives its encoding; a value that is not one is undefined', async (t) => {
  const answer = { status: 201, headers: { location: '/items/1', 'content-type': 'application/json' }, body: 'a\nb\n{"x":1}' }
  t.same(decodeAnswer(encodeAnswer(answer)), answer)
  t.same(decodeAnswer('200\n{}\n'), { status: 200, headers: {}, body: '' })
  for (const value of ['', '200', '200\n{}', 'x\n{}\nbody', '200\n[]\nbody', '200\nnull\nbody', '200\n{bad\nbody', '2.5\n{}\nb']) {
    t.equal(decodeAnswer(value), undefined, JSON.stringify(value))
  }
})

test('the in-process store: its bounds, its accounting and its tokens', async (t) => {
  for (const [options, name] of [[{ maxEntries: 0 }, 'maxEntries'], [{ maxBytes: -1 }, 'maxBytes'], [{ maxEntries: 1.5 }, 'maxEntries']] as const) {
    t.throws(() => memoryCache(options), new ConfigurationError('FV_ERR_CACHE', `memoryCache: ${name} is ${String(Object.values(options)[0])}; give a positive integer (default ${name === 'maxEntries' ? 10000 : 67108864})`))
  }
  const store = new MemoryCache({ maxEntries: 3, maxBytes: 10_000 })
  const answer = { status: 200, headers: { etag: '"a"' }, body: 'x'.repeat(100) }
  const { tokens } = store.lookup(['R'], 'k')
  t.equal(store.lookup(['R'], 'k').tokens, tokens, 'a generation keeps its token until it is bumped')
  store.save('k', tokens, answer, 60_000)
  const bytes = store.bytes
  t.ok(bytes > 100 && bytes < 200, `the answer counts its bytes (${bytes})`)
  store.save('k', tokens, answer, 60_000)
  t.equal(store.bytes, bytes, 'saved again, it is counted once')
  t.equal(store.size, 1)
  t.same(store.lookup(['R'], 'k').answer, answer)
  const two = store.lookup(['R', 'S'], 'k').tokens
  t.match(two, new RegExp(`^${tokens},.+`), 'the tokens of two generations, in order')
  t.equal(store.lookup(['R', 'S'], 'k').answer, undefined, 'another set of generations is another answer')
  store.bump(['R'])
  t.not(store.lookup(['R'], 'k').tokens, tokens, 'a bump gives a new token')
  t.equal(store.lookup(['R'], 'k').answer, undefined, 'and the answer under the old one is not found')
  store.save('short', '', answer, 1)
  await new Promise((resolve) => setTimeout(resolve, 5))
  t.equal(store.lookup([], 'short').answer, undefined, 'an expired answer is not found')
  t.equal(store.bytes, bytes, 'and is no longer counted once read')
  for (const key of ['a', 'b', 'c', 'd']) store.save(key, '', answer, 60_000)
  t.equal(store.size, 3, 'at most maxEntries')
  t.equal(store.lookup([], 'a').answer, undefined, 'the least recently used went first')
  t.ok(store.lookup([], 'd').answer !== undefined)
  store.save('huge', '', { ...answer, body: 'x'.repeat(20_000) }, 60_000)
  t.equal(store.lookup([], 'huge').answer, undefined, 'an answer larger than the store is not kept')
  t.equal(store.size, 3, 'and evicted nothing')
  const other = new MemoryCache()
  t.not(other.lookup(['R'], 'k').tokens, store.lookup(['R'], 'k').tokens, 'two stores never make the same token')
})

test('the in-process store\'s idempotency records: claimed, running, mismatch, done; a foreign owner changes nothing', async (t) => {
  const store = new MemoryCache({ maxEntries: 2 })
  const answer = { status: 201, headers: {}, body: '{}' }
  const claim = store.claim('k', 'f', 60_000)
  t.equal(claim.state, 'claimed')
  t.same(store.claim('k', 'f', 60_000), { state: 'running' })
  t.same(store.claim('k', 'g', 60_000), { state: 'mismatch' })
  store.settle('k', 'someone else', answer, 60_000)
  t.same(store.claim('k', 'f', 60_000), { state: 'running' }, 'another owner cannot settle it')
  store.settle('k', (claim as { owner: string }).owner, answer, 60_000)
  t.same(store.claim('k', 'f', 60_000), { state: 'done', answer })
  t.same(store.claim('k', 'g', 60_000), { state: 'mismatch' })
  const freed = store.claim('free', 'f', 60_000) as { owner: string }
  store.settle('free', freed.owner, undefined, 60_000)
  t.equal(store.claim('free', 'f', 60_000).state, 'claimed', 'a freed key is claimed again')
  t.equal(store.claim('late', 'f', 100).state, 'claimed')
  t.throws(() => store.claim('third', 'f', 60_000), { message: '2 idempotency keys are in use' }, 'past maxEntries running claims, refused')
  await new Promise((resolve) => setTimeout(resolve, 120))
  const third = store.claim('third', 'f', 60_000) as { state: string, owner: string }
  t.equal(third.state, 'claimed', 'a claim whose lease ended makes room')
  store.settle('third', third.owner, answer, 60_000)
  t.equal(store.claim('late', 'f', 60_000).state, 'claimed', 'and its key is claimed anew: its first owner lost it')
})
