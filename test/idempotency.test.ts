import { test, type Test } from 'tap'
import http from 'node:http'
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { BadRequest } from '../lib/errors.js'
import { memoryCache, type CacheOptions, type CacheStore } from '../lib/cache.js'
import { build, headerAuth, problem } from './helpers.js'

// Idempotent creates (docs/cache.md, "Idempotent retries"): `cache = { idempotency: true }` makes a
// create (POST, and the bulk POST) that carries `Idempotency-Key` run once per key and principal: a
// retry with the same body gets the first answer (`Idempotent-Replayed: true`) and writes nothing;
// another body is a 422; a retry while the first runs a 409 with Retry-After; a refused or failed
// create frees the key; a malformed key is a 400; a store that fails a 503. Then concurrent copies
// of one request, and a thousand clients that go away mid-flight over a real socket and retry.

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() }, { $id: 'IdempotentItem' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const ItemUpdate = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
interface ItemT { id: number, name: string, price: number }

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Waits (1 ms at a time, at most 2 s) until `done` holds: a request under way has reached its create. */
async function until (done: () => boolean): Promise<void> {
  for (const started = Date.now(); !done() && Date.now() - started < 2_000;) await sleep(1)
}

/** What a test tells the repository's creates to do, and how many ran. */
interface Creates {
  /** Creates (and batches) that reached the repository. */
  count: number
  /** Milliseconds each waits before it writes. */
  delay: () => number
  /** Held until it settles, when set as a create starts: a create that runs as long as the test needs. */
  gate?: Promise<void>
  /** The next ones refuse with a 400 (a check of the store's own), or fail with a 500. */
  refuse: number
  fail: number
  /** Told of each create's values as it starts. */
  started: (values: unknown) => void
}

function itemsView (repository: unknown, cache: CacheOptions | undefined) {
  return class Items extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet).with({
    responseSchema: Item,
    createSchema: ItemIn,
    updateSchema: ItemIn,
    bulkUpdateSchema: ItemUpdate,
    detailParams: Type.Object({ id: Type.Integer() }),
    filter: null,
    repository: repository as never
  }, {
    getLocation (item) { return `/items/${item.id}` }
  }) {
    static override cache = cache
  }
}

interface Opened {
  app: FastifyInstance
  memory: MemoryRepository<ItemT>
  creates: Creates
  post: (key: string | undefined, payload: unknown, headers?: Record<string, string>, url?: string) =>
  Promise<LightMyRequestResponse>
}

interface AppOptions {
  cache?: CacheOptions | undefined
  unique?: boolean
  store?: CacheStore
  auth?: boolean
  rows?: ItemT[]
}

interface User { name: string }
const USERS: Record<string, User> = { ann: { name: 'ann' }, bob: { name: 'bob' } }
const nameOf = (user: User): string => user.name

/** The items view at /items with idempotent creates (unless `cache` says otherwise), over a memory store of its own. */
async function itemsApp (t: Test, options: AppOptions = {}): Promise<Opened> {
  const memory = new MemoryRepository<ItemT>({
    rows: (options.rows ?? []).map((row) => ({ ...row })),
    unique: options.unique === false ? [] : ['name']
  })
  const creates: Creates = { count: 0, delay: () => 0, refuse: 0, fail: 0, started: () => {} }
  type Method = (...args: unknown[]) => Promise<unknown>
  const repository = asyncRepository<ItemT, MemoryRepository<ItemT>>(memory) as unknown as Record<string, Method>
  for (const method of ['create', 'createMany']) {
    const write = repository[method]
    repository[method] = async (...args) => {
      creates.count++
      creates.started(args[0])
      const wait = creates.delay()
      if (wait > 0) await sleep(wait)
      if (creates.gate !== undefined) await creates.gate
      if (creates.refuse > 0) {
        creates.refuse--
        throw new BadRequest('The store refused it.')
      }
      if (creates.fail > 0) {
        creates.fail--
        throw new Error('the database is down')
      }
      return await write(...args)
    }
  }
  const cache = 'cache' in options ? options.cache : { idempotency: true }
  const app = await build({
    cache: options.store ?? memoryCache(),
    views: [{ view: itemsView(repository, cache), prefix: '/items' }],
    ...options.auth === true ? { auth: { authenticators: [headerAuth(USERS)], principalId: nameOf } } : {}
  })
  t.teardown(() => app.close())
  const post: Opened['post'] = (key, payload, headers = {}, url = '/items') => app.inject({
    method: 'POST',
    url,
    headers: { 'content-type': 'application/json', ...key === undefined ? {} : { 'idempotency-key': key }, ...headers },
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload)
  })
  return { app, memory, creates, post }
}

const replayed = (res: LightMyRequestResponse): unknown => res.headers['idempotent-replayed']
const rows = (memory: MemoryRepository<ItemT>): ItemT[] => memory.list({}, { orderBy: [] })
const FIG = { name: 'fig', price: 1 }

test('a retry with the same key and body gets the first answer, and writes nothing', async (t) => {
  const { post, memory, creates } = await itemsApp(t)
  const first = await post('8e03978e-40d5-43e8-bc93-6894a57f9324', FIG)
  t.same([first.statusCode, replayed(first), first.json()], [201, undefined, { id: 1, ...FIG }])
  t.equal(first.headers.location, '/items/1', 'the first answer has its Location')
  for (const [name, key, payload] of [
    ['the same request', '8e03978e-40d5-43e8-bc93-6894a57f9324', FIG],
    ['the key as a quoted string', '"8e03978e-40d5-43e8-bc93-6894a57f9324"', FIG],
    ['the key with spaces around it', ' 8e03978e-40d5-43e8-bc93-6894a57f9324 ', FIG],
    ['the body\'s members in another order', '8e03978e-40d5-43e8-bc93-6894a57f9324', '{"price":1,"name":"fig"}']
  ] as const) {
    const retry = await post(key, payload)
    t.same([retry.statusCode, replayed(retry)], [201, 'true'], `${name}: replayed`)
    t.equal(retry.body, first.body, `${name}: the first body, byte for byte`)
    for (const header of ['content-type', 'location']) {
      t.equal(retry.headers[header], first.headers[header], `${name}: ${header}`)
    }
  }
  t.same([rows(memory), creates.count], [[{ id: 1, ...FIG }], 1], 'one row, one create')

  // Without a key, the same body is another create (a unique clash here): what the key saves a client from.
  problem(t, await post(undefined, FIG), 409)
  const other = await post('another-key', { name: 'kiwi', price: 2 })
  t.same([other.statusCode, replayed(other), other.json().id], [201, undefined, 2], 'another key is another create')
  const keyless = await post(undefined, { name: 'lime', price: 3 })
  t.same([keyless.statusCode, replayed(keyless), keyless.json().id], [201, undefined, 3], 'a create without a key is served as ever')
})

test('the same key with another body is a 422, and writes nothing', async (t) => {
  const { post, memory } = await itemsApp(t)
  const first = await post('k', FIG)
  t.equal(first.statusCode, 201)
  for (const payload of [{ name: 'fig', price: 2 }, { name: 'figs', price: 1 }]) {
    const mismatch = problem(t, await post('k', payload), 422)
    t.match(mismatch.detail, /used with another request body/)
  }
  t.equal(rows(memory).length, 1)
  const retry = await post('k', FIG)
  t.same([retry.statusCode, replayed(retry), retry.body], [201, 'true', first.body],
    'the key still holds the first answer')
})

test('a retry while the first request runs is a 409 with Retry-After', async (t) => {
  const { post, memory, creates } = await itemsApp(t)
  creates.delay = () => 100
  const running = post('slow', FIG)
  await until(() => creates.count === 1)
  const early = await post('slow', FIG)
  t.match(problem(t, early, 409).detail, /still being processed/)
  t.equal(early.headers['retry-after'], '1')
  problem(t, await post('slow', { name: 'other', price: 1 }), 422) // another body: mismatched, whether or not it runs
  const first = await running
  t.same([first.statusCode, replayed(first)], [201, undefined])
  creates.delay = () => 0
  const after = await post('slow', FIG)
  t.same([after.statusCode, replayed(after), after.body], [201, 'true', first.body])
  t.same([rows(memory).length, creates.count], [1, 1])
})

test('a refused or failed create frees its key for a retry', async (t) => {
  const { post, memory, creates } = await itemsApp(t, { rows: [{ id: 1, name: 'apple', price: 3 }] })
  problem(t, await post('clash', { name: 'apple', price: 1 }), 409)
  memory.delete({ id: 1 })
  const created = await post('clash', { name: 'apple', price: 1 })
  t.same([created.statusCode, replayed(created), created.json().price], [201, undefined, 1],
    'after a 409, the retry creates')

  problem(t, await post('invalid', { name: '', price: 1 }), 400)
  const valid = await post('invalid', FIG)
  t.same([valid.statusCode, replayed(valid)], [201, undefined],
    'an invalid body claimed nothing: a valid one is no mismatch')

  creates.refuse = 1
  t.equal(problem(t, await post('refused', { name: 'kiwi', price: 1 }), 400).detail, 'The store refused it.')
  const kiwi = await post('refused', { name: 'kiwi', price: 1 })
  t.same([kiwi.statusCode, replayed(kiwi)], [201, undefined], 'after a 400 of the action, the retry creates')

  creates.fail = 1
  problem(t, await post('failed', { name: 'lime', price: 1 }), 500)
  const lime = await post('failed', { name: 'lime', price: 1 })
  t.same([lime.statusCode, replayed(lime)], [201, undefined], 'after a 500, the retry creates')
  t.same(rows(memory).map((row) => row.name).sort(), ['apple', 'fig', 'kiwi', 'lime'], 'each once')
})

test('bulkCreate: a batch is replayed whole, once', async (t) => {
  const { post, memory, creates } = await itemsApp(t)
  const batch = [{ name: 'a', price: 1 }, { name: 'b', price: 2 }]
  const first = await post('batch', batch, {}, '/items/bulk')
  t.same([first.statusCode, first.json().map((item: ItemT) => item.name)], [201, ['a', 'b']])
  const retry = await post('batch', batch, {}, '/items/bulk')
  t.same([retry.statusCode, replayed(retry), retry.body], [201, 'true', first.body])
  problem(t, await post('batch', [...batch, { name: 'c', price: 3 }], {}, '/items/bulk'), 422)
  problem(t, await post('batch', [batch[1], batch[0]], {}, '/items/bulk'), 422) // another order is another batch
  const single = await post('batch', { name: 'c', price: 3 }, {}, '/items')
  t.same([single.statusCode, replayed(single)], [201, undefined], 'the same key on another route is another key')
  t.same([rows(memory).length, creates.count], [3, 2])
})

test('a malformed key is a 400 that names the header, and writes nothing', async (t) => {
  const { post, app, memory, creates } = await itemsApp(t)
  const malformed = ['', '""', '"open', '"open"end', 'two words', 'x'.repeat(256), `"${'x'.repeat(256)}"`,
    'caf\u00e9', 'a\tb', '"a"b"', '"a\\"', '"\\x"']
  for (const key of malformed) {
    const refused = problem(t, await post(key, FIG), 400)
    t.match(refused.detail, /^The Idempotency-Key header is not a key/, JSON.stringify(key))
  }
  const twice = await app.inject({
    method: 'POST', url: '/items', headers: { 'idempotency-key': ['a', 'b'] as never }, payload: FIG
  })
  t.match(problem(t, twice, 400).detail, /Idempotency-Key/, 'sent twice')
  t.same([rows(memory), creates.count], [[], 0])

  // The longest keys, and a quoted key with an escaped quote, which is the bare key with the quote.
  for (const key of ['x'.repeat(255), `"${'y'.repeat(255)}"`, '"a\\"b"', ',', 'close"']) {
    const res = await post(key, { name: `for ${key.slice(0, 3)}`, price: 1 })
    t.equal(res.statusCode, 201, `${JSON.stringify(key.slice(0, 8))}: a key`)
  }
  const same = await post('a"b', { name: 'for "a\\', price: 1 })
  t.same([same.statusCode, replayed(same)], [201, 'true'], 'a"b is "a\\"b" unquoted')
  t.equal(rows(memory).length, 5)
})

test('keys are each principal\'s own', async (t) => {
  const { post, memory } = await itemsApp(t, { auth: true, unique: false })
  const ann = await post('k', FIG, { 'x-user': 'ann' })
  const bob = await post('k', FIG, { 'x-user': 'bob' })
  const anonymous = await post('k', FIG)
  t.same([ann, bob, anonymous].map((res) => [res.statusCode, replayed(res), res.json().id]),
    [[201, undefined, 1], [201, undefined, 2], [201, undefined, 3]], 'three keys, three rows')
  const again = await post('k', FIG, { 'x-user': 'ann' })
  t.same([again.statusCode, replayed(again), again.json().id], [201, 'true', 1], 'ann gets her own answer')
  problem(t, await post('k', { name: 'other', price: 1 }, { 'x-user': 'bob' }), 422)
  t.same([(await post('k', FIG)).json().id, rows(memory).length], [3, 3])
  problem(t, await post('k', FIG, { 'x-user': 'mallory' }), 401)
})

test('a key names one request: the same key and body to another parent is not a retry', async (t) => {
  const Loan = Type.Object({
    id: Type.Integer(), member_id: Type.Integer(), book: Type.String()
  }, { $id: 'IdempotentLoan' })
  const members = new MemoryRepository({ rows: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Grace' }] })
  const loans = new MemoryRepository<Static<typeof Loan>>()
  class Loans extends AsyncGenericViewSet.with({
    responseSchema: Loan,
    createSchema: Type.Object({ book: Type.String() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    prefixParams: Type.Object({ memberId: Type.Integer() }),
    repository: asyncRepository(loans),
    parent: { repository: asyncRepository(members), lookup: { id: 'memberId' }, scope: { member_id: 'id' } }
  }) {
    static override cache = { idempotency: true }
  }
  const app = await build({ cache: memoryCache(), views: [{ view: Loans, prefix: '/members/:memberId/loans' }] })
  t.teardown(() => app.close())
  const lend = (member: number) => app.inject({
    method: 'POST', url: `/members/${member}/loans`, headers: { 'idempotency-key': 'dune' }, payload: { book: 'Dune' }
  })
  const ada = await lend(1)
  t.same([ada.statusCode, ada.json().member_id], [201, 1])
  t.equal(replayed(await lend(1)), 'true', 'a retry to the same parent is replayed')
  const grace = await lend(2)
  t.not(replayed(grace), 'true', 'not Ada\'s answer')
  t.not(grace.body, ada.body, 'nothing of it')
  const graces = loans.list({ member_id: 2 }, { orderBy: [] }).length
  t.ok(grace.statusCode === 422 || graces === 1, 'refused as a mismatch, or Grace\'s loan made')
})

test('a key still running is not forgotten when other keys fill the store', async (t) => {
  const { post, memory, creates } = await itemsApp(t, { store: memoryCache({ maxEntries: 2 }), unique: false })
  // The first create runs until the test lets it end, however slowly a loaded machine serves the others.
  let release = (): void => {}
  creates.gate = new Promise((resolve) => { release = resolve })
  const running = post('first', FIG)
  await until(() => creates.count === 1)
  creates.gate = undefined
  for (const key of ['second', 'third']) t.equal((await post(key, { name: key, price: 1 })).statusCode, 201)
  const retry = await post('first', FIG)
  t.equal(retry.statusCode, 409, 'the first is still running')
  release()
  t.equal((await running).statusCode, 201)
  t.equal(rows(memory).filter((row) => row.name === 'fig').length, 1, 'one row for the key')
  // Kept answers may be forgotten when the store is full: the bound is the store's memory.
})

test('a key is kept for idempotency.ttl', async (t) => {
  const { post, memory } = await itemsApp(t, { cache: { idempotency: { ttl: 0.05 } }, unique: false })
  t.equal((await post('k', FIG)).statusCode, 201)
  t.equal(replayed(await post('k', FIG)), 'true')
  await sleep(120)
  const later = await post('k', FIG)
  t.same([later.statusCode, replayed(later), later.json().id], [201, undefined, 2], 'past its ttl, the key is new')
  t.equal(rows(memory).length, 2)
})

test('Idempotency-Key is ignored where idempotency is off', async (t) => {
  const { post, app, memory } = await itemsApp(t, { cache: undefined })
  t.equal((await post('k', FIG)).statusCode, 201)
  const again = await post('k', FIG)
  t.same([again.statusCode, replayed(again)], [409, undefined], 'not replayed: the create runs again')
  t.equal((await post('not a key', { name: 'kiwi', price: 1 })).statusCode, 201, 'not read, so not refused')
  const put: InjectOptions = {
    method: 'PUT', url: '/items/1', headers: { 'idempotency-key': 'not a key' }, payload: { name: 'x', price: 1 }
  }
  t.equal((await app.inject(put)).statusCode, 200)
  t.equal(rows(memory).length, 2)
  const { app: on } = await itemsApp(t)
  t.equal((await on.inject(put)).statusCode, 404, 'nor read on a PUT where it is on')
})

/** A memory store whose `claim` or `settle` fails as told, synchronously or with a rejected promise. */
function failing (fails: { claim?: 'throw' | 'reject', settle?: 'throw' | 'reject' }): CacheStore {
  const memory = memoryCache()
  const broken = (how: 'throw' | 'reject') => () => {
    if (how === 'throw') throw new Error('the store is down')
    return Promise.reject(new Error('the store is down'))
  }
  return {
    kind: 'broken',
    lookup: (generations, key) => memory.lookup(generations, key),
    save: (key, tokens, answer, ttl) => { memory.save(key, tokens, answer, ttl) },
    bump: (generations) => { memory.bump(generations) },
    claim: fails.claim === undefined
      ? (key, fingerprint, lease) => memory.claim(key, fingerprint, lease)
      : broken(fails.claim),
    settle: fails.settle === undefined
      ? (key, owner, answer, ttl) => { memory.settle(key, owner, answer, ttl) }
      : broken(fails.settle)
  }
}

test('a store that cannot claim a key: a 503, nothing written; one that cannot settle it: the answer', async (t) => {
  for (const how of ['throw', 'reject'] as const) {
    const { post, memory } = await itemsApp(t, { store: failing({ claim: how }) })
    t.match(problem(t, await post('k', FIG), 503).detail, /Idempotency keys cannot be checked now/, `claim: ${how}`)
    t.same(rows(memory), [])
    t.equal((await post(undefined, FIG)).statusCode, 201, 'a create without a key does not ask the store')
  }
  for (const how of ['throw', 'reject'] as const) {
    const { post, memory } = await itemsApp(t, { store: failing({ settle: how }) })
    const created = await post('k', FIG)
    t.same([created.statusCode, created.json()], [201, { id: 1, ...FIG }], `settle: ${how}`)
    t.equal(rows(memory).length, 1)
  }
})

test('ten concurrent requests with one key: one row; the others are told to wait or get its answer', async (t) => {
  const { post, memory, creates } = await itemsApp(t, { unique: false })
  creates.delay = () => 20
  const answers = await Promise.all(Array.from({ length: 10 }, () => post('same', FIG)))
  t.equal(rows(memory).length, 1, 'one row')
  t.equal(creates.count, 1, 'one create')
  const fresh = answers.filter((res) => res.statusCode === 201 && replayed(res) === undefined)
  t.equal(fresh.length, 1, 'one ran')
  for (const res of answers) {
    if (res.statusCode === 409) t.equal(res.headers['retry-after'], '1')
    else t.same([res.statusCode, res.body], [201, fresh[0].body], 'or got its answer')
  }
  const mixed = await Promise.all(Array.from({ length: 10 }, (_, i) => post('mixed', { name: 'kiwi', price: i % 2 })))
  t.equal(rows(memory).filter((row) => row.name === 'kiwi').length, 1, 'two bodies at once: still one row')
  t.same([...new Set(mixed.map((res) => res.statusCode))].filter((status) => ![201, 409, 422].includes(status)), [])
})

/** Sends a create over a real socket and goes away once `leave` settles, whatever has happened by then. */
function abandon (port: number, key: string, body: string, leave: () => Promise<void>): Promise<void> {
  return new Promise((resolve) => {
    const request = http.request({
      host: '127.0.0.1',
      port,
      method: 'POST',
      path: '/items',
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'idempotency-key': key }
    })
    request.on('error', () => resolve())
    request.on('response', (res) => { res.resume() })
    request.end(body, () => {
      leave().then(() => {
        request.destroy()
        resolve()
      }, resolve)
    })
  })
}

test('a thousand clients go away mid-flight and retry: exactly one row per key', async (t) => {
  const { app, memory, creates } = await itemsApp(t, { unique: false })
  creates.delay = () => Math.floor(Math.random() * 15)
  // The creates under way, by name: half the clients go away while theirs is being written.
  const writing = new Map<string, () => void>()
  creates.started = (values) => { writing.get((values as { name: string }).name)?.() }
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const finals = new Map<number, { status: number, replayed: string | null, id: number }>()
  const midWrite = new Set<number>()
  const run = async (i: number) => {
    const key = `abandoned-${i}`
    const name = `row-${i}`
    const body = JSON.stringify({ name, price: i })
    const random = (most: number) => sleep(Math.floor(Math.random() * most))
    // Even: at a random point from the start. Odd: a random moment after the create began (or 500 ms).
    const leave = i % 2 === 0
      ? () => random(25)
      : () => new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, 500)
          writing.set(name, () => {
            clearTimeout(timer)
            midWrite.add(i)
            resolve()
          })
        }).then(() => random(10))
    await abandon(port, key, body, leave)
    writing.delete(name)
    const started = Date.now()
    // Until an answer to keep: a 409 while the abandoned request still runs.
    while (Date.now() - started < 5_000) {
      const res = await fetch(`http://127.0.0.1:${port}/items`, {
        method: 'POST', headers: { 'content-type': 'application/json', 'idempotency-key': key }, body
      })
      const text = await res.text()
      if (res.status !== 409) {
        finals.set(i, { status: res.status, replayed: res.headers.get('idempotent-replayed'), id: JSON.parse(text).id })
        return
      }
      await sleep(5)
    }
  }
  for (let batch = 0; batch < 1_000; batch += 50) {
    await Promise.all(Array.from({ length: 50 }, (_, j) => run(batch + j)))
  }
  t.equal(finals.size, 1_000, 'every client got an answer within 5 s of retries')
  t.same([...new Set([...finals.values()].map((final) => final.status))], [201], 'each a 201')
  const all = rows(memory)
  t.equal(all.length, 1_000, 'a thousand rows')
  const byName = new Map(all.map((row) => [row.name, row]))
  t.equal(byName.size, 1_000, 'one row per key')
  const wrong = [...finals].filter(([i, final]) => byName.get(`row-${i}`)?.id !== final.id)
  t.same(wrong, [], 'each client\'s answer names the one row of its key')
  t.ok(midWrite.size > 300, `most odd clients went away while their create was written (${midWrite.size})`)
  const notReplayed = [...midWrite].filter((i) => finals.get(i)?.replayed !== 'true')
  t.same(notReplayed, [], 'a client that went away mid-write gets that write\'s answer on its retry')
  const created = [...finals.values()].filter((final) => final.replayed === null).length
  t.ok(created > 0, `the retry of a request that never reached its create creates (${created})`)
})

test('a create that answers no body (returnOnCreate: false) is replayed with none', async (t) => {
  const memory = new MemoryRepository<ItemT>({ rows: [] })
  const repository = asyncRepository(memory)
  const statics = { responseSchema: Item, createSchema: ItemIn, returnOnCreate: false, repository }
  class Quiet extends mix(AsyncGenericViewSet).with(statics) {
    static override cache = { idempotency: true }
  }
  const app = await build({ cache: memoryCache(), views: [{ view: Quiet, prefix: '/quiet' }] })
  t.teardown(() => app.close())
  const send = async (): Promise<LightMyRequestResponse> =>
    app.inject({ method: 'POST', url: '/quiet', headers: { 'idempotency-key': 'q' }, payload: FIG })
  const first = await send()
  const again = await send()
  t.same([first.statusCode, first.body, replayed(first)], [201, '', undefined])
  t.same([again.statusCode, again.body, replayed(again)], [201, '', 'true'], 'the retry: the same empty answer')
  t.equal(rows(memory).length, 1)
})
