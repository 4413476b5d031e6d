import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import { Type } from '@sinclair/typebox'
import views, { configureApp, mix } from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import {
  AsyncGenericViewSet, BaseFilter, GenericViewSet, MemoryRepository, SparseFieldsMixin, asyncRepository,
  type MemoryRepositoryOptions
} from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { memoryCache, type CacheOptions, type CacheStore, type MemoryCache, type StoredAnswer } from '../lib/cache.js'
import { permission } from '../lib/access.js'
import { build, headerAuth, problem } from './helpers.js'

// The cache (docs/cache.md): cached GET list and retrieve (x-cache MISS, then HIT without a
// repository read), the headers of each, invalidation by every write of the resource through any
// view (and by `invalidates` and expanded relations), conditional GETs answered from the cache,
// single flight, expiry, per-principal keys, `vary`, the document, and the bounds of the in-process
// store. Then an adversary's requests: cache-key confusion (order, repeats, case, Unicode forms,
// headers, HEAD, principals) and poisoning (errors, 304, set-cookie, huge bodies).

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() }, { $id: 'CacheItem' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const ItemUpdate = Type.Object({
  id: Type.Integer(), name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 })
})
const IdParams = Type.Object({ id: Type.Integer() })
interface ItemT { id: number, name: string, price: number }
const ITEMS: ItemT[] = [
  { id: 1, name: 'apple', price: 3 }, { id: 2, name: 'pear', price: 5 }, { id: 3, name: 'plum', price: 5 }
]

class ItemFilter extends BaseFilter.with({ fields: { name: Type.String(), price: Type.Number() } }) {}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** The repository calls a test counts: reads by method, and failures it is told to make. */
interface Calls { list: number, get: number, failReads: number, failCreates: number }

/**
 * An async repository over a MemoryRepository whose `list` and `get` are counted (after `delay`
 * milliseconds, so that concurrent requests overlap) and fail while `failReads` is above 0; `create`
 * fails while `failCreates` is.
 */
function counted<T extends object> (rows: T[], options: { delay?: number, memory?: MemoryRepositoryOptions<T> } = {}) {
  const memory = new MemoryRepository<T>({ rows: rows.map((row) => ({ ...row })), ...options.memory })
  const calls: Calls = { list: 0, get: 0, failReads: 0, failCreates: 0 }
  type Method = (...args: unknown[]) => Promise<unknown>
  const repository = asyncRepository<T, MemoryRepository<T>>(memory) as unknown as Record<string, Method>
  for (const method of ['list', 'get'] as const) {
    const read = repository[method]
    repository[method] = async (...args) => {
      calls[method]++
      if ((options.delay ?? 0) > 0) await sleep(options.delay ?? 0)
      if (calls.failReads > 0) {
        calls.failReads--
        throw new Error('the database is down')
      }
      return await read(...args)
    }
  }
  const create = repository.create
  repository.create = async (...args) => {
    if (calls.failCreates > 0) {
      calls.failCreates--
      throw new Error('the database is down')
    }
    return await create(...args)
  }
  return { memory, repository: repository as never, calls }
}

/** A sync repository's `list` and `get`, counted in `calls`. */
function countReads<R extends object> (repository: R, calls: Pick<Calls, 'list' | 'get'>): R {
  for (const method of ['list', 'get'] as const) {
    const read = Reflect.get(repository, method) as (...args: unknown[]) => unknown
    Reflect.set(repository, method, (...args: unknown[]) => {
      calls[method]++
      return read.apply(repository, args)
    })
  }
  return repository
}

/** The items view: every CRUD action, the four bulk verbs, filtered by name and price. */
function itemsView (repository: unknown, cache: CacheOptions | undefined) {
  return class Items extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet).with({
    responseSchema: Item,
    createSchema: ItemIn,
    updateSchema: ItemIn,
    bulkUpdateSchema: ItemUpdate,
    detailParams: IdParams,
    filter: ItemFilter,
    repository: repository as never
  }) {
    static override cache = cache
  }
}

interface Opened {
  app: FastifyInstance
  store: MemoryCache
  memory: MemoryRepository<ItemT>
  calls: Calls
  get: (url: string, headers?: Record<string, string>) => Promise<LightMyRequestResponse>
  inject: (options: InjectOptions) => Promise<LightMyRequestResponse>
}

/** An app with the items view cached (ttl 60 s unless `cache` says otherwise) at /items, over a store of its own. */
async function itemsApp (t: Test, options: {
  cache?: CacheOptions
  rows?: ItemT[]
  delay?: number
  store?: CacheStore
  more?: (repository: unknown) => FastifyViewsOptions['views']
} = {}): Promise<Opened> {
  const rows = options.rows ?? ITEMS
  const { memory, repository, calls } = counted(rows, { delay: options.delay, memory: { unique: ['name'] } })
  const store = options.store ?? memoryCache()
  const entries = [
    { view: itemsView(repository, options.cache ?? { ttl: 60 }), prefix: '/items' },
    ...options.more?.(repository) ?? []
  ]
  const app = await build({ views: entries, cache: store })
  t.teardown(() => app.close())
  return {
    app,
    store: store as MemoryCache, // the tests that read the store's size give it no store of their own
    memory,
    calls,
    get: (url, headers = {}) => app.inject({ url, headers }),
    inject: (request) => app.inject(request)
  }
}

const xCache = (res: LightMyRequestResponse): unknown => res.headers['x-cache']
const rowsOf = (memory: MemoryRepository<ItemT>): ItemT[] => memory.list({}, { orderBy: [] })

test('a cached read: a miss reads the repository, a hit does not; each says which it was', async (t) => {
  const { get, calls, store } = await itemsApp(t)
  const miss = await get('/items')
  t.equal(miss.statusCode, 200)
  t.same([xCache(miss), miss.headers['cache-control'], calls.list], ['MISS', 'private, no-cache', 1])
  t.equal(miss.headers.vary, undefined, 'no Vary without cache.vary')
  const hit = await get('/items')
  t.same([hit.statusCode, xCache(hit), hit.headers['cache-control'], calls.list], [200, 'HIT', 'private, no-cache', 1])
  t.equal(hit.body, miss.body, 'the body sent on the miss, byte for byte')
  t.equal(hit.headers['content-type'], miss.headers['content-type'])
  t.same(hit.json(), ITEMS)

  t.equal(xCache(await get('/items/1')), 'MISS')
  const one = await get('/items/1')
  t.same([xCache(one), one.json(), calls.get], ['HIT', ITEMS[0], 1])
  const two = await get('/items/2')
  t.same([xCache(two), two.json(), calls.get], ['MISS', ITEMS[1], 2], 'the path parameters are part of the key')
  t.equal(xCache(await get('/items?name=pear')), 'MISS', 'so is the query')
  t.equal(calls.list, 2)
  t.equal(store.size, 4, 'four answers kept')
})

test('cache.actions, maxAge and shared shape what is cached and the Cache-Control sent', async (t) => {
  const only = await itemsApp(t, { cache: { ttl: 60, actions: ['retrieve'], maxAge: 30.9 } })
  for (let i = 1; i <= 2; i++) {
    const list = await only.get('/items')
    t.same([list.statusCode, xCache(list), list.headers['cache-control']], [200, undefined, undefined],
      'the list is not cached')
  }
  t.equal(only.calls.list, 2)
  await only.get('/items/1')
  const hit = await only.get('/items/1')
  t.same([xCache(hit), hit.headers['cache-control'], only.calls.get], ['HIT', 'private, max-age=30', 1])

  const shared = await itemsApp(t, { cache: { ttl: 60, shared: true, maxAge: 5 } })
  t.equal((await shared.get('/items')).headers['cache-control'], 'public, max-age=5')
  t.equal((await shared.get('/items')).headers['cache-control'], 'public, max-age=5', 'on a hit too')
})

test('cache.actions naming no GET action of the view is refused, not silently inert', async (t) => {
  for (const actions of [['lists'], ['create'], ['list', 'create']]) {
    const { repository } = counted(ITEMS)
    let error: unknown
    try {
      const view = itemsView(repository, { ttl: 60, actions })
      const app = await build({ cache: memoryCache(), views: [{ view, prefix: '/items' }] })
      await app.close()
    } catch (thrown) {
      error = thrown
    }
    const refusal = { code: 'FV_ERR_CACHE', message: /cache\.actions names "(lists|create)"/ }
    t.match(error, refusal, JSON.stringify(actions))
  }
})

/** The writes of the items view, each changing something the reads send. */
const write = (name: string, status: number, method: string, url: string, payload?: unknown) =>
  ({ name, status, request: { method, url, payload } as InjectOptions })
const WRITES = [
  write('create', 201, 'POST', '/items', { name: 'fig', price: 1 }),
  write('update', 200, 'PUT', '/items/1', { name: 'apricot', price: 4 }),
  write('partialUpdate', 200, 'PATCH', '/items/1', { price: 9 }),
  write('destroy', 204, 'DELETE', '/items/3'),
  write('bulkCreate', 201, 'POST', '/items/bulk', [{ name: 'kiwi', price: 2 }]),
  write('bulkUpdate', 204, 'PUT', '/items/bulk', [{ id: 1, name: 'quince', price: 6 }]),
  write('updateMany', 200, 'PATCH', '/items/bulk?name=pear', { price: 7 }),
  write('bulkDelete', 204, 'DELETE', '/items/bulk?name=kiwi')
]

test('every write of the resource invalidates its cached answers before it is answered', async (t) => {
  const { get, inject, calls, memory } = await itemsApp(t)
  for (const write of WRITES) {
    await get('/items')
    await get('/items/1')
    t.equal(xCache(await get('/items')), 'HIT', `${write.name}: the list is cached before`)
    t.equal(xCache(await get('/items/1')), 'HIT', `${write.name}: so is the item`)
    const [lists, gets] = [calls.list, calls.get]
    t.equal((await inject(write.request)).statusCode, write.status, `${write.name} answers ${write.status}`)
    const list = await get('/items')
    t.same([xCache(list), calls.list], ['MISS', lists + 1], `${write.name}: the list is read again`)
    t.same(list.json(), rowsOf(memory), `${write.name}: and sends what the repository holds now`)
    const item = await get('/items/1')
    t.equal(xCache(item), 'MISS', `${write.name}: so is the item`)
    t.same(item.json(), memory.get({ id: 1 }), `${write.name}: the item as it is now`)
    t.ok(calls.get > gets, `${write.name}: read from the repository`)
  }
})

test('a write through another view of the same resource invalidates; one of another resource does not', async (t) => {
  const Other = Type.Object({ id: Type.Integer(), label: Type.String() }, { $id: 'CacheOther' })
  const others = new MemoryRepository({ rows: [{ id: 1, label: 'a' }] })
  const { get, inject, memory } = await itemsApp(t, {
    more: (repository) => [
      // The same repository and component, so the same resource: no static cache of its own.
      { view: itemsView(repository, undefined), prefix: '/admin/items' },
      { view: GenericViewSet.with({ responseSchema: Other, detailParams: IdParams, repository: others }), prefix: '/o' }
    ]
  })
  await get('/items')
  t.equal(xCache(await get('/items')), 'HIT')
  t.equal((await inject({ method: 'PUT', url: '/o/1', payload: { label: 'b' } })).statusCode, 200)
  t.equal(xCache(await get('/items')), 'HIT', 'another resource\'s write leaves the answer')
  const admin = await inject({ method: 'PATCH', url: '/admin/items/2', payload: { price: 50 } })
  t.equal(admin.statusCode, 200)
  t.equal(admin.headers['x-cache'], undefined, 'a write is no cached read')
  const list = await get('/items')
  t.same([xCache(list), list.json()[1].price], ['MISS', 50], 'the other view\'s write is seen at once')
  t.same(list.json(), rowsOf(memory))
})

test('a refused write (4xx) invalidates nothing; a failed one (5xx) does', async (t) => {
  const { get, inject, calls } = await itemsApp(t)
  await get('/items')
  const refused: Array<[string, InjectOptions, number]> = [
    ['an invalid body', { method: 'POST', url: '/items', payload: { name: '', price: 1 } }, 400],
    ['a unique clash', { method: 'POST', url: '/items', payload: { name: 'apple', price: 1 } }, 409],
    ['a missing row', { method: 'PUT', url: '/items/99', payload: { name: 'x', price: 1 } }, 404],
    ['a bad patch', { method: 'PATCH', url: '/items/1', payload: { price: -1 } }, 400],
    ['a missing row deleted', { method: 'DELETE', url: '/items/99' }, 404],
    ['a bad item in a bulk', { method: 'POST', url: '/items/bulk', payload: [{ name: 'a', price: 1 }, {}] }, 400]
  ]
  for (const [name, request, status] of refused) {
    problem(t, await inject(request), status)
    t.equal(xCache(await get('/items')), 'HIT', `${name} (${status}) leaves the cached list`)
  }
  t.equal(calls.list, 1)
  calls.failCreates = 1
  problem(t, await inject({ method: 'POST', url: '/items', payload: { name: 'fig', price: 1 } }), 500)
  t.equal(xCache(await get('/items')), 'MISS', 'a failed write may have written: the list is read again')
})

test('invalidates: a nested resource\'s write invalidates its parent\'s answers, where declared', async (t) => {
  const Member = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'CacheMember' })
  const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer(), book: Type.String() }, { $id: 'CacheLoan' })
  const reads = { list: 0, get: 0 }
  const members = countReads(new MemoryRepository({ rows: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Grace' }] }), reads)
  const loans = new MemoryRepository({
    rows: [{ id: 1, member_id: 1, book: 'Dune' }, { id: 2, member_id: 2, book: 'Emma' }]
  })
  class Members extends GenericViewSet.with({ responseSchema: Member, detailParams: IdParams, repository: members }) {
    static override cache = { ttl: 60 }
  }
  const loanStatics = {
    responseSchema: Loan,
    createSchema: Type.Object({ book: Type.String() }),
    detailParams: IdParams,
    prefixParams: Type.Object({ memberId: Type.Integer() }),
    repository: loans,
    parent: { repository: members, lookup: { id: 'memberId' }, scope: { member_id: 'id' } }
  }
  class Loans extends GenericViewSet.with(loanStatics) {
    static override cache = { ttl: 60, invalidates: [Members] }
  }
  class NamedLoans extends GenericViewSet.with(loanStatics) {
    static override cache = { invalidates: ['CacheMember'] }
  }
  const PlainLoans = GenericViewSet.with(loanStatics)
  const app = await build({
    cache: memoryCache(),
    views: [
      { view: Members, prefix: '/members' },
      { view: Loans, prefix: '/members/:memberId/loans' },
      { view: NamedLoans, prefix: '/named/:memberId/loans' },
      { view: PlainLoans, prefix: '/plain/:memberId/loans' }
    ]
  })
  t.teardown(() => app.close())
  const get = (url: string) => app.inject(url)
  const post = (url: string) => app.inject({ method: 'POST', url, payload: { book: 'Ulysses' } })

  t.same((await get('/members/1/loans')).json(), [{ id: 1, member_id: 1, book: 'Dune' }])
  t.equal(xCache(await get('/members/2/loans')), 'MISS', 'each parent\'s children are an answer of their own')
  const grace = await get('/members/2/loans')
  t.same([xCache(grace), grace.json()], ['HIT', [{ id: 2, member_id: 2, book: 'Emma' }]])
  t.equal(xCache(await get('/members/1/loans')), 'HIT')
  await get('/members')
  t.equal(xCache(await get('/members')), 'HIT')

  t.equal((await post('/plain/1/loans')).statusCode, 201)
  t.equal(xCache(await get('/members')), 'HIT', 'a view that does not declare invalidates leaves the parent')
  t.equal(xCache(await get('/members/1/loans')), 'MISS', 'but the loans, its own resource, are read again')

  t.equal((await post('/members/1/loans')).statusCode, 201)
  t.equal(xCache(await get('/members')), 'MISS', 'invalidates: [Members] (a view class)')
  const loansOfAda = await get('/members/1/loans')
  t.same([xCache(loansOfAda), loansOfAda.json().length], ['MISS', 3])
  t.equal(xCache(await get('/members')), 'HIT')
  t.equal((await post('/named/2/loans')).statusCode, 201)
  t.equal(xCache(await get('/members')), 'MISS', 'invalidates: [\'CacheMember\'] (a resource\'s name)')
  t.equal(reads.list, 3)
})

test('expanded relations: a write of the related resource invalidates the reads that embed it', async (t) => {
  const Book = Type.Object({ id: Type.Integer(), title: Type.String() }, { $id: 'CacheBook' })
  const Loan = Type.Object({
    id: Type.Integer(), book_id: Type.Integer(), member: Type.String()
  }, { $id: 'CacheBookLoan' })
  const reads = { list: 0, get: 0 }
  const books = new MemoryRepository({ rows: [{ id: 1, title: 'Emma' }, { id: 2, title: 'Dune' }] })
  const loans = countReads(new MemoryRepository({ rows: [{ id: 1, book_id: 1, member: 'ann' }] }), reads)
  const Books = mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Book, detailParams: IdParams, repository: books
  })
  class Loans extends mix(SparseFieldsMixin, GenericViewSet).with({
    responseSchema: Loan,
    detailParams: IdParams,
    repository: loans,
    expand: { book: { view: Books, on: { id: 'book_id' } } }
  }) {
    static override cache = { ttl: 60 }
  }
  const entries = [{ view: Books, prefix: '/books' }, { view: Loans, prefix: '/loans' }]
  const app = await build({ cache: memoryCache(), views: entries })
  t.teardown(() => app.close())
  const first = await app.inject('/loans?expand=book')
  t.same([xCache(first), first.json()[0].book], ['MISS', { id: 1, title: 'Emma' }])
  t.equal(xCache(await app.inject('/loans/1?expand=book')), 'MISS')
  t.equal(xCache(await app.inject('/loans?expand=book')), 'HIT')
  t.equal(xCache(await app.inject('/loans/1?expand=book')), 'HIT')
  t.equal((await app.inject({ method: 'PUT', url: '/books/2', payload: { title: 'Dune Messiah' } })).statusCode, 200)
  // Book 2 is embedded nowhere, but the reads depend on the resource, not on the rows they embed.
  t.equal((await app.inject({ method: 'PUT', url: '/books/1', payload: { title: 'Persuasion' } })).statusCode, 200)
  const list = await app.inject('/loans?expand=book')
  t.same([xCache(list), list.json()[0].book.title], ['MISS', 'Persuasion'], 'the book as it is now')
  const one = await app.inject('/loans/1?expand=book')
  t.same([xCache(one), one.json().book.title], ['MISS', 'Persuasion'])
  t.same(reads, { list: 2, get: 2 })
})

// A document with a Last-Modified field, behind ConditionalMixin's strong ETags.
const Doc = Type.Object({
  id: Type.Integer(), title: Type.String(), updated_at: Type.String({ format: 'date-time' })
}, { $id: 'CacheDoc' })
const DOCS = [
  { id: 1, title: 'one', updated_at: '2026-01-02T03:04:05.000Z' },
  { id: 2, title: 'two', updated_at: '2026-02-03T04:05:06.000Z' }
]

function docsView (repository: unknown, cache: CacheOptions | undefined) {
  return class Docs extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: Doc,
    createSchema: Type.Object({ title: Type.String() }),
    detailParams: IdParams,
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository: repository as never
  }) {
    static override cache = cache
  }
}

/** The docs view cached on one app and, over the same repository, uncached on another: what a fresh read sends. */
async function docsApps (t: Test) {
  const { repository, calls, memory } = counted(DOCS, { memory: { touchField: 'updated_at' } })
  const cached = await build({
    cache: memoryCache(), views: [{ view: docsView(repository, { ttl: 60 }), prefix: '/docs' }]
  })
  const fresh = await build({ views: [{ view: docsView(repository, undefined), prefix: '/docs' }] })
  t.teardown(async () => { await cached.close(); await fresh.close() })
  return { cached, fresh, calls, memory }
}

test('a hit carries a fresh read\'s ETag and Last-Modified; a conditional GET on it is a 304, no read', async (t) => {
  const { cached, fresh, calls } = await docsApps(t)
  for (const url of ['/docs/1', '/docs']) {
    const truth = await fresh.inject(url)
    const miss = await cached.inject(url)
    const hit = await cached.inject(url)
    t.same([xCache(miss), xCache(hit)], ['MISS', 'HIT'], url)
    t.match(truth.headers.etag, /^"[^"]+"$/, `${url}: a strong ETag`)
    t.equal(miss.headers.etag, truth.headers.etag, `${url}: the miss sends the fresh read's ETag`)
    t.equal(hit.headers.etag, truth.headers.etag, `${url}: so does the hit, byte for byte`)
    t.equal(hit.body, truth.body)
    t.equal(hit.headers['last-modified'], truth.headers['last-modified'], `${url}: Last-Modified replayed`)
    const reads = calls.list + calls.get
    const revalidated = await cached.inject({ url, headers: { 'if-none-match': String(truth.headers.etag) } })
    t.same([revalidated.statusCode, revalidated.body, xCache(revalidated)], [304, '', 'HIT'],
      `${url}: a 304 from the cache`)
    t.equal(revalidated.headers.etag, truth.headers.etag)
    t.equal(revalidated.headers['content-type'], undefined, `${url}: a 304 has no Content-Type`)
    t.equal(calls.list + calls.get, reads, `${url}: and read nothing`)
    const stale = await cached.inject({ url, headers: { 'if-none-match': '"stale"' } })
    t.same([stale.statusCode, stale.body], [200, truth.body], `${url}: another tag gets the body`)
  }
  const retrieved = await fresh.inject('/docs/1')
  t.equal(retrieved.headers['last-modified'], 'Fri, 02 Jan 2026 03:04:05 GMT')
  const since = await cached.inject({
    url: '/docs/1', headers: { 'if-modified-since': 'Fri, 02 Jan 2026 03:04:05 GMT' }
  })
  t.same([since.statusCode, xCache(since)], [304, 'HIT'], 'If-Modified-Since against the replayed Last-Modified')
  const before = await cached.inject({
    url: '/docs/1', headers: { 'if-modified-since': 'Fri, 02 Jan 2026 03:04:04 GMT' }
  })
  t.equal(before.statusCode, 200)
})

test('a real socket: HEAD and a conditional GET answered from the cache, with the headers on the wire', async (t) => {
  const { cached, fresh, calls } = await docsApps(t)
  const base = await cached.listen({ port: 0, host: '127.0.0.1' })
  const truth = await fresh.inject('/docs/2')
  const miss = await fetch(`${base}/docs/2`)
  t.same([miss.status, miss.headers.get('x-cache'), await miss.text()], [200, 'MISS', truth.body])
  const reads = calls.get
  const head = await fetch(`${base}/docs/2`, { method: 'HEAD' })
  t.same([head.status, head.headers.get('x-cache'), await head.text()], [200, 'HIT', ''],
    'HEAD reads the hit, sends no body')
  t.equal(head.headers.get('etag'), truth.headers.etag)
  t.equal(head.headers.get('content-length'), String(Buffer.byteLength(truth.body)), 'the length the GET would send')
  t.equal(head.headers.get('cache-control'), 'private, no-cache')
  const notModified = await fetch(`${base}/docs/2`, { headers: { 'if-none-match': String(truth.headers.etag) } })
  t.same([notModified.status, notModified.headers.get('x-cache'), await notModified.text()], [304, 'HIT', ''])
  t.equal(notModified.headers.get('etag'), truth.headers.etag)
  t.equal(notModified.headers.get('content-length'), null, 'a 304 claims no length')
  const headNotModified = await fetch(`${base}/docs/2`, {
    method: 'HEAD', headers: { 'if-none-match': String(truth.headers.etag) }
  })
  t.same([headNotModified.status, await headNotModified.text()], [304, ''])
  const hit = await fetch(`${base}/docs/2`)
  t.same([hit.status, hit.headers.get('x-cache'), hit.headers.get('etag'), await hit.text()],
    [200, 'HIT', truth.headers.etag, truth.body])
  t.equal(calls.get, reads, 'none of them read the repository')
})

test('single flight: concurrent misses of one key read once; of two keys, twice', async (t) => {
  const { get, calls } = await itemsApp(t, { delay: 30 })
  const answers = await Promise.all(Array.from({ length: 24 }, () => get('/items?price=5')))
  t.equal(calls.list, 1, '24 concurrent misses, one repository read')
  t.same(answers.map(xCache).sort(), ['MISS', ...Array.from({ length: 23 }, () => 'HIT')].sort())
  t.same(new Set(answers.map((res) => res.statusCode + res.body)), new Set([`200${JSON.stringify(ITEMS.slice(1))}`]))
  const two = await Promise.all(Array.from({ length: 24 }, (_, i) => get(i % 2 === 0 ? '/items/1' : '/items/2')))
  t.equal(calls.get, 2, 'one read per key')
  t.same(two.map((res) => res.json().id), Array.from({ length: 24 }, (_, i) => i % 2 === 0 ? 1 : 2),
    'each its own answer')
})

test('ttl: an answer expires after ttl seconds', async (t) => {
  const { get, calls, store } = await itemsApp(t, { cache: { ttl: 0.05, jitter: 0 } })
  t.equal(xCache(await get('/items')), 'MISS')
  t.equal(xCache(await get('/items')), 'HIT')
  await sleep(120)
  const late = await get('/items')
  t.same([xCache(late), calls.list], ['MISS', 2], 'an expired answer is not served')
  await sleep(1_100)
  const later = await get('/items')
  t.same([xCache(later), later.statusCode], ['MISS', 200], 'read again after it expired')
  t.ok(store.size <= 2)
})

interface User { name: string, admin?: boolean }
const USERS: Record<string, User> = { ann: { name: 'ann' }, bob: { name: 'bob' }, root: { name: 'root', admin: true } }
const IsAdmin = permission<unknown, User>({ name: 'IsAdmin', request: (user) => user.admin === true })
const Note = Type.Object({ id: Type.Integer(), owner: Type.String(), text: Type.String() }, { $id: 'CacheNote' })
const NOTES = [
  { id: 1, owner: 'ann', text: 'ann\'s' },
  { id: 2, owner: 'bob', text: 'bob\'s' },
  { id: 3, owner: 'nobody', text: 'public' }
]

/** Notes: each principal reads its own (getKwargs), an anonymous request the public ones. */
async function notesApp (t: Test, scopes?: (request: { headers: Record<string, unknown> }) => string[]) {
  const reads = { list: 0, get: 0 }
  const repository = countReads(new MemoryRepository({ rows: NOTES.map((note) => ({ ...note })) }), reads)
  class Notes extends GenericViewSet.with({ responseSchema: Note, detailParams: IdParams, repository }, {
    getKwargs () { return { owner: (this.request.principal as User | undefined)?.name ?? 'nobody' } }
  }) {
    static override cache = { ttl: 60 }
  }
  class Board extends GenericViewSet.with({ responseSchema: Note, detailParams: IdParams, repository }) {
    static override cache = { ttl: 60, shared: true }
  }
  class Staff extends Board {
    static override permissions = [IsAdmin]
  }
  const byHeader = headerAuth(USERS)
  const authenticator = scopes === undefined
    ? byHeader
    : { ...byHeader, scopesOf: (_user: User, request: { headers: Record<string, unknown> }) => scopes(request) }
  const app = await build({
    auth: { authenticators: [authenticator], principalId: (user: User) => user.name },
    cache: memoryCache(),
    views: [{ view: Notes, prefix: '/notes' }, { view: Board, prefix: '/board' }, { view: Staff, prefix: '/staff' }]
  })
  t.teardown(() => app.close())
  const as = (user: string | undefined, url = '/notes', headers: Record<string, string> = {}) =>
    app.inject({ url, headers: user === undefined ? headers : { 'x-user': user, ...headers } })
  return { app, reads, as }
}

test('per principal: one principal\'s answer never reaches another, nor an anonymous request', async (t) => {
  const { as, reads } = await notesApp(t)
  const texts = (res: LightMyRequestResponse) => res.json().map((note: { text: string }) => note.text)
  const ann = await as('ann')
  t.same([xCache(ann), texts(ann)], ['MISS', ['ann\'s']])
  const bob = await as('bob')
  t.same([xCache(bob), texts(bob)], ['MISS', ['bob\'s']], 'bob reads his own, not ann\'s page')
  const anonymous = await as(undefined)
  t.same([xCache(anonymous), texts(anonymous)], ['MISS', ['public']], 'no header: anonymous, read apart')
  t.same([xCache(await as('ann')), texts(await as('ann'))], ['HIT', ['ann\'s']])
  t.same([xCache(await as('bob')), texts(await as('bob'))], ['HIT', ['bob\'s']])
  t.same([xCache(await as(undefined)), texts(await as(undefined))], ['HIT', ['public']])
  problem(t, await as('mallory'), 401)
  t.equal(reads.list, 3, 'one read per principal')
  t.equal(xCache(await as('ann', '/notes/1')), 'MISS')
  problem(t, await as('bob', '/notes/1'), 404)
  problem(t, await as(undefined, '/notes/1'), 404)
  t.equal((await as('ann', '/notes/1')).json().text, 'ann\'s')

  // Concurrent misses of one URL by two principals: each its own single flight.
  const { as: fresh, reads: freshReads } = await notesApp(t)
  const mixed = await Promise.all(Array.from({ length: 24 }, (_, i) => fresh(['ann', 'bob', undefined][i % 3])))
  t.same(mixed.map(texts), Array.from({ length: 24 }, (_, i) => [['ann\'s'], ['bob\'s'], ['public']][i % 3]))
  t.equal(freshReads.list, 3)
})

test('per principal: the scopes a request\'s credentials grant are part of the key', async (t) => {
  const scopes = (request: { headers: Record<string, unknown> }) =>
    String(request.headers['x-scopes'] ?? '').split(',').filter(Boolean)
  const { as, reads } = await notesApp(t, scopes)
  t.equal(xCache(await as('ann', '/notes', { 'x-scopes': 'read' })), 'MISS')
  t.equal(xCache(await as('ann', '/notes', { 'x-scopes': 'read,write' })), 'MISS', 'more scopes, another answer')
  t.equal(xCache(await as('ann', '/notes', { 'x-scopes': 'write,read' })), 'HIT', 'the same scopes in another order')
  t.equal(xCache(await as('ann', '/notes')), 'MISS', 'none')
  t.equal(reads.list, 3)
})

test('shared: one answer for every principal, sent public', async (t) => {
  const { as, reads } = await notesApp(t)
  const ann = await as('ann', '/board')
  t.same([xCache(ann), ann.headers['cache-control'], ann.json().length], ['MISS', 'public, no-cache', 3])
  for (const user of ['bob', undefined, 'ann']) {
    const res = await as(user, '/board')
    t.same([xCache(res), res.body], ['HIT', ann.body], `${user ?? 'anonymous'} gets the one answer`)
  }
  t.equal(reads.list, 1)
  // The permissions are judged before the cache is looked at: a shared answer is shared with those allowed it.
  const root = await as('root', '/staff/3')
  t.same([root.statusCode, xCache(root), xCache(await as('root', '/staff/3'))], [200, 'MISS', 'HIT'])
  for (let i = 0; i < 2; i++) {
    const refused = await as('ann', '/staff/3')
    problem(t, refused, 403)
    t.not(xCache(refused), 'HIT', 'ann is refused, not answered from the cache')
  }
  t.equal(problem(t, await as(undefined, '/staff/3'), 401).title, 'Unauthorized', 'an anonymous request too')
  t.equal(reads.get, 1)
})

test('adversary: shared with a permission that scopes or judges each principal\'s rows', async (t) => {
  type Owned = { owner: string }
  const OwnerScope = permission<Owned, User>({ name: 'OwnerScope', scope: (user) => ({ owner: user.name }) })
  const OwnerObject = permission<Owned, User>({ name: 'OwnerObject', object: (user, note) => note.owner === user.name })
  for (const [name, statics] of [
    ['a scope', { permissions: [OwnerScope] }],
    ['an object rule', { actionPermissions: { retrieve: [OwnerObject] } }]
  ] as const) {
    const repository = new MemoryRepository({ rows: NOTES.map((note) => ({ ...note })) })
    class Private extends GenericViewSet.with({ responseSchema: Note, detailParams: IdParams, repository }) {
      static override cache = { ttl: 60, shared: true, actions: ['retrieve'] }
    }
    Object.assign(Private, statics)
    let app: FastifyInstance
    try {
      const auth = { authenticators: [headerAuth(USERS)] }
      app = await build({ auth, cache: memoryCache(), views: [{ view: Private, prefix: '/private' }] })
    } catch (error) {
      t.match(error, { code: 'FV_ERR_CACHE' }, `${name}: refused at registration`)
      continue
    }
    t.teardown(() => app.close())
    const own = await app.inject({ url: '/private/1', headers: { 'x-user': 'ann' } })
    t.same([own.statusCode, own.json().text], [200, 'ann\'s'], `${name}: ann reads her own note`)
    const other = await app.inject({ url: '/private/1', headers: { 'x-user': 'bob' } })
    t.not(other.statusCode, 200, `${name}: bob is not sent ann's note`)
    t.notOk(other.body.includes('ann\'s'), `${name}: nothing of it`)
  }
})

test('vary: the headers named are part of the key and sent in Vary', async (t) => {
  const { get, calls } = await itemsApp(t, { cache: { ttl: 60, vary: ['Accept-Language', 'x-tenant'] } })
  const en = await get('/items', { 'accept-language': 'en' })
  t.same([xCache(en), en.headers.vary], ['MISS', 'accept-language, x-tenant'])
  const again = await get('/items', { 'accept-language': 'en' })
  t.same([xCache(again), again.headers.vary], ['HIT', 'accept-language, x-tenant'], 'Vary on a hit too')
  t.equal(xCache(await get('/items', { 'accept-language': 'fr' })), 'MISS', 'another value')
  t.equal(xCache(await get('/items', { 'accept-language': 'EN' })), 'MISS', 'values are compared as sent')
  t.equal(xCache(await get('/items')), 'MISS', 'the header omitted')
  t.equal(xCache(await get('/items', { 'accept-language': '' })), 'MISS', 'sent empty is not omitted')
  t.equal(xCache(await get('/items')), 'HIT')
  t.equal(xCache(await get('/items', { 'accept-language': 'en', 'x-tenant': 'a' })), 'MISS', 'the second header')
  t.equal(xCache(await get('/items', { 'accept-language': 'en', 'x-other': 'a' })), 'HIT', 'a header not named')
  t.equal(calls.list, 6)

  // A Vary of the application's own (CORS sends Vary: Origin) is kept beside the cache's.
  const { repository } = counted(ITEMS)
  const app = Fastify()
  app.addHook('onRequest', async (_request, reply) => { reply.header('vary', 'Origin') })
  const view = itemsView(repository, { ttl: 60, vary: ['accept-language'] })
  await app.register(views, { cache: memoryCache(), views: [{ view, prefix: '/items' }] })
  t.teardown(() => app.close())
  for (const expected of ['MISS', 'HIT']) {
    const res = await app.inject('/items')
    t.equal(xCache(res), expected)
    const names = String(res.headers.vary).split(',').map((name) => name.trim().toLowerCase())
    t.ok(names.includes('accept-language'), `${expected}: the cache's Vary`)
    t.ok(names.includes('origin'), `${expected}: and the application's`)
  }
})

test('the document: the cache\'s response headers and Idempotency-Key, and it validates', async (t) => {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'cache', version: '1' } }))
  const others = new MemoryRepository({ rows: [{ id: 1, label: 'a' }] })
  const Other = Type.Object({ id: Type.Integer(), label: Type.String() }, { $id: 'CacheOther' })
  const repository = asyncRepository(new MemoryRepository<ItemT>({ rows: ITEMS.map((row) => ({ ...row })) }))
  await app.register(views, {
    cache: memoryCache(),
    views: [
      { view: itemsView(repository, { ttl: 60, vary: ['accept-language'], idempotency: true }), prefix: '/items' },
      { view: GenericViewSet.with({ responseSchema: Other, repository: others }), prefix: '/others' }
    ]
  })
  await app.ready()
  t.teardown(() => app.close())
  const document = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(document), { valid: true })
  for (const path of ['/items', '/items/{id}']) {
    const headers = document.paths[path].get.responses['200'].headers
    t.ok(headers['cache-control'], `${path}: Cache-Control documented`)
    t.same(headers['x-cache'].schema.enum, ['HIT', 'MISS'], `${path}: X-Cache documented`)
    t.ok(headers.vary, `${path}: Vary documented`)
  }
  t.equal(document.paths['/others'].get.responses['200'].headers?.['x-cache'], undefined, 'not on an uncached read')
  type Parameter = { name: string, in: string }
  for (const path of ['/items', '/items/bulk']) {
    const post = document.paths[path].post
    const key = post.parameters.find((p: Parameter) => p.name.toLowerCase() === 'idempotency-key')
    t.equal(key?.in, 'header', `${path}: Idempotency-Key is a request header`)
    for (const status of ['409', '422']) t.ok(post.responses[status], `${path}: documents ${status}`)
    t.ok(post.responses['201'].headers['idempotent-replayed'], `${path}: and the header of a replay`)
  }
  const put = document.paths['/items/{id}'].put
  t.notOk(put.parameters?.some((p: Parameter) => p.name.toLowerCase() === 'idempotency-key'), 'not on a PUT')
  t.notOk(document.paths['/others'].post.parameters?.some((p: Parameter) => p.name.toLowerCase() === 'idempotency-key'))
})

const answer = (body: string): StoredAnswer => ({ status: 200, headers: { 'content-type': 'application/json' }, body })

test('the in-process store: within its bounds under 100,000 distinct keys, least recently used out', async (t) => {
  const byEntries = memoryCache({ maxEntries: 1_000 })
  const byBytes = memoryCache({ maxEntries: 100_000, maxBytes: 200_000 })
  let [largestSize, largestBytes, lost] = [0, 0, 0]
  for (let i = 0; i < 100_000; i++) {
    const key = `k${i}`
    const body = 'x'.repeat(i % 300)
    for (const store of [byEntries, byBytes]) store.save(key, store.lookup(['r'], key).tokens, answer(body), 60_000)
    // k0 is read now and then, so it stays among the most recently used of byEntries.
    if (i % 100 === 0 && byEntries.lookup(['r'], 'k0').answer === undefined) lost++
    largestSize = Math.max(largestSize, byEntries.size)
    largestBytes = Math.max(largestBytes, byBytes.bytes)
  }
  t.equal(lost, 0, 'an answer read now and then is never dropped')
  t.equal(largestSize, 1_000, 'never more than maxEntries answers')
  t.equal(byEntries.size, 1_000, 'and full')
  t.ok(largestBytes <= 200_000, `never more than maxBytes (at most ${largestBytes})`)
  t.ok(byBytes.bytes > 199_000, `and nearly full (${byBytes.bytes})`)
  t.ok(byBytes.size < 2_000, 'bytes bound it before entries do')
  t.same(byEntries.lookup(['r'], 'k99999').answer, answer('x'.repeat(99_999 % 300)), 'the last kept')
  t.not(byEntries.lookup(['r'], 'k0').answer, undefined, 'one read recently kept')
  t.equal(byEntries.lookup(['r'], 'k1').answer, undefined, 'the oldest unread dropped')
  t.equal(byEntries.lookup(['r'], 'k98999').answer, undefined, 'past the last 1,000')
  t.not(byEntries.lookup(['r'], 'k99001').answer, undefined)

  byEntries.bump(['r'])
  t.equal(byEntries.lookup(['r'], 'k99999').answer, undefined, 'a bump makes the generation\'s answers unreachable')
  byEntries.save('other', byEntries.lookup(['s'], 'other').tokens, answer('s'), 60_000)
  byEntries.bump(['r'])
  t.not(byEntries.lookup(['s'], 'other').answer, undefined, 'another generation\'s answers stay')
  byEntries.save('short', byEntries.lookup(['s'], 'short').tokens, answer('s'), 1)
  await sleep(5)
  t.equal(byEntries.lookup(['s'], 'short').answer, undefined, 'an answer past its ttl is gone')
})

test('the in-process store: a value larger than maxBytes is not kept, and evicts nothing', async (t) => {
  const store = memoryCache({ maxBytes: 1_000 })
  store.save('small', store.lookup(['r'], 'small').tokens, answer('x'.repeat(100)), 60_000)
  const bytes = store.bytes
  t.ok(bytes > 100 && bytes < 1_000)
  store.save('large', store.lookup(['r'], 'large').tokens, answer('x'.repeat(1_000)), 60_000)
  t.equal(store.lookup(['r'], 'large').answer, undefined, 'not kept')
  t.same([store.size, store.bytes], [1, bytes])
  t.not(store.lookup(['r'], 'small').answer, undefined, 'the small one is still there')
  // Just at the bound: kept, alone.
  const exact = 1_000 - (Buffer.byteLength('exact|') + store.lookup(['r'], 'exact').tokens.length +
    JSON.stringify(answer('').headers).length + 16)
  store.save('exact', store.lookup(['r'], 'exact').tokens, answer('x'.repeat(exact)), 60_000)
  t.same([store.size, store.bytes], [1, 1_000], 'an answer of maxBytes evicts the rest')
  t.not(store.lookup(['r'], 'exact').answer, undefined)
})

test('through requests: thousands of distinct queries keep the store within its bounds', async (t) => {
  for (const bounds of [{ maxEntries: 300 }, { maxBytes: 20_000 }]) {
    const store = memoryCache(bounds)
    const { get } = await itemsApp(t, { store })
    let [size, bytes] = [0, 0]
    for (let i = 0; i < 2_000; i++) {
      const res = await get(`/items?name=n${i}`)
      if (res.statusCode !== 200) t.fail(`n${i}: ${res.statusCode}`)
      size = Math.max(size, store.size)
      bytes = Math.max(bytes, store.bytes)
    }
    const within = size <= (bounds.maxEntries ?? Infinity) && bytes <= (bounds.maxBytes ?? Infinity)
    t.ok(within, `${JSON.stringify(bounds)}: at most ${size} answers, ${bytes} bytes`)
    t.ok(size >= 100, 'and used')
    t.equal(xCache(await get('/items?name=n1999')), 'HIT', 'the most recent is kept')
  }
})

test('adversary, key confusion: the order of the query\'s parameters does not matter', async (t) => {
  const { get, calls } = await itemsApp(t)
  const first = await get('/items?name=pear&price=5')
  const second = await get('/items?price=5&name=pear')
  t.same([xCache(first), xCache(second), calls.list], ['MISS', 'HIT', 1])
  t.equal(second.body, first.body)
  t.same(first.json(), [ITEMS[1]])
})

test('adversary, key confusion: a repeated parameter, another case, another Unicode form', async (t) => {
  const composed = 'caf\u00e9'
  const decomposed = 'cafe\u0301'
  const rows = [...ITEMS, { id: 10, name: composed, price: 1 }, { id: 11, name: decomposed, price: 1 }]
  const { get } = await itemsApp(t, { rows })
  const apple = await get('/items?name=apple')
  t.same(apple.json(), [ITEMS[0]])
  const repeated = await get('/items?name=apple&name=pear')
  t.not(xCache(repeated), 'HIT', '?name=apple&name=pear is not ?name=apple')
  t.not(repeated.body, apple.body)
  problem(t, repeated, 400)
  problem(t, await get('/items?name=apple&name=apple'), 400)

  const otherCase = await get('/items?Name=apple')
  t.not(xCache(otherCase), 'HIT', '?Name= is not ?name=')
  t.same(otherCase.json().length, rows.length, 'an unknown parameter filters nothing')
  const capital = await get('/items?name=Apple')
  t.same([xCache(capital), capital.json()], ['MISS', []], 'values are compared as sent')

  const nfc = await get(`/items?name=${encodeURIComponent(composed)}`)
  const nfd = await get(`/items?name=${encodeURIComponent(decomposed)}`)
  t.same([xCache(nfc), nfc.json().map((item: ItemT) => item.id)], ['MISS', [10]], 'NFC')
  t.same([xCache(nfd), nfd.json().map((item: ItemT) => item.id)], ['MISS', [11]], 'NFD is another entry')
  for (let i = 0; i < 2; i++) {
    const again = await get(`/items?name=${encodeURIComponent(decomposed)}`)
    t.same([xCache(again), again.json()[0].id], ['HIT', 11], 'NFD never gets NFC\'s answer')
    const back = await get(`/items?name=${encodeURIComponent(composed)}`)
    t.same([xCache(back), back.json()[0].id], ['HIT', 10], 'nor NFC NFD\'s')
  }
})

test('adversary, key confusion: HEAD reads what GET stored, and stores nothing itself', async (t) => {
  const { get, inject, calls, store } = await itemsApp(t)
  await get('/items/1')
  const head = await inject({ method: 'HEAD', url: '/items/1' })
  t.same([head.statusCode, xCache(head), head.body, calls.get], [200, 'HIT', '', 1], 'HEAD after GET is a hit')
  const size = store.size
  const alone = await inject({ method: 'HEAD', url: '/items/2' })
  t.same([alone.statusCode, alone.body, calls.get], [200, '', 2], 'HEAD alone reads')
  t.equal(store.size, size, 'HEAD alone stores nothing')
  t.equal(xCache(await get('/items/2')), 'MISS', 'the GET after it reads')
})

test('adversary, poisoning: a 404, a 400 and a 500 are never stored', async (t) => {
  const { get, calls, memory } = await itemsApp(t)
  for (let i = 0; i < 2; i++) {
    const missing = await get('/items/99')
    problem(t, missing, 404)
    t.not(xCache(missing), 'HIT', 'a 404 is not replayed')
  }
  t.equal(calls.get, 2, 'each 404 read')
  memory.create({ id: 99, name: 'late', price: 1 }) // behind the view's back: no invalidation
  t.same((await get('/items/99')).json(), { id: 99, name: 'late', price: 1 }, 'the row, not a kept 404')

  for (const url of ['/items?price=cheap', '/items/x', '/items/1.5']) {
    for (let i = 0; i < 2; i++) {
      const invalid = await get(url)
      problem(t, invalid, 400)
      t.not(xCache(invalid), 'HIT', `${url}: not replayed`)
    }
  }

  calls.failReads = 1
  problem(t, await get('/items/2'), 500)
  const after = await get('/items/2')
  t.same([after.statusCode, xCache(after), after.json()], [200, 'MISS', ITEMS[1]], 'the 500 was not kept')
  t.equal(xCache(await get('/items/2')), 'HIT')

  // 24 concurrent copies of a miss whose read fails: the failure is not shared as an answer.
  const { get: slow, calls: slowCalls } = await itemsApp(t, { delay: 20 })
  slowCalls.failReads = 1
  const answers = await Promise.all(Array.from({ length: 24 }, () => slow('/items/3')))
  t.same(answers.map((res) => res.statusCode).sort(), [...Array.from({ length: 23 }, () => 200), 500])
  const bodies = new Set(answers.filter((res) => res.statusCode === 200).map((res) => res.body))
  t.same(bodies, new Set([JSON.stringify(ITEMS[2])]))
  const next = await slow('/items/3')
  t.same([next.statusCode, next.json()], [200, ITEMS[2]])
})

test('adversary, poisoning: a 304 is never stored as the answer', async (t) => {
  const { cached, fresh } = await docsApps(t)
  const truth = await fresh.inject('/docs/1')
  const conditional = await cached.inject({ url: '/docs/1', headers: { 'if-none-match': String(truth.headers.etag) } })
  t.same([conditional.statusCode, conditional.body, xCache(conditional)], [304, '', 'MISS'], 'a conditional miss')
  for (let i = 0; i < 2; i++) {
    const plain = await cached.inject('/docs/1')
    t.same([plain.statusCode, plain.body, plain.headers.etag], [200, truth.body, truth.headers.etag],
      'an unconditional GET gets the body')
    t.equal(plain.headers['content-type'], truth.headers['content-type'])
  }
  const head = await cached.inject({ method: 'HEAD', url: '/docs/2', headers: { 'if-none-match': '*' } })
  t.equal(head.statusCode, 304)
  const two = await cached.inject('/docs/2')
  t.same([two.statusCode, two.json().id], [200, 2])
})

test('adversary, poisoning: an answer that sets a cookie is never stored', async (t) => {
  const { repository, calls } = counted(ITEMS)
  const app = Fastify()
  app.addHook('onSend', async (request, reply, payload) => {
    const asked = request.headers['x-cookie'] !== undefined && request.url.startsWith('/items')
    if (asked) reply.header('set-cookie', 'session=ann')
    return payload
  })
  await app.register(views, {
    cache: memoryCache(),
    views: [
      { view: itemsView(repository, { ttl: 60 }), prefix: '/items' },
      {
        view: itemsView(repository, { ttl: 60 }),
        prefix: '/hooked',
        onSend: async (request, reply, payload) => {
          if (request.headers['x-cookie'] !== undefined) reply.header('set-cookie', 'session=bob')
          return payload
        }
      }
    ]
  })
  await app.ready()
  t.teardown(() => app.close())
  const cookie = await app.inject({ url: '/items/1', headers: { 'x-cookie': '1' } })
  t.same([cookie.statusCode, cookie.headers['set-cookie']], [200, 'session=ann'], 'an application hook sets a cookie')
  const after = await app.inject('/items/1')
  t.same([xCache(after), after.headers['set-cookie'], calls.get], ['MISS', undefined, 2], 'not kept')
  t.equal(xCache(await app.inject('/items/1')), 'HIT', 'the next answer without one is')
  t.equal((await app.inject({ url: '/items/1', headers: { 'x-cookie': '1' } })).headers['set-cookie'], 'session=ann')

  const hooked = await app.inject({ url: '/hooked/2', headers: { 'x-cookie': '1' } })
  t.same([hooked.statusCode, hooked.headers['set-cookie']], [200, 'session=bob'],
    'a registration\'s onSend hook sets one')
  const next = await app.inject('/hooked/2')
  t.equal(next.headers['set-cookie'], undefined, 'a request without the header gets no cookie')
  t.equal(xCache(next), 'MISS', 'the answer that set one was not kept')
})

test('adversary: a list body of several MB, over a store of 1 MiB, is answered whole and not kept', async (t) => {
  const rows = Array.from({ length: 2_000 }, (_, i) => ({ id: i + 1, name: `${i}-${'x'.repeat(2_000)}`, price: i }))
  const store = memoryCache({ maxBytes: 2 ** 20 })
  const { get, calls } = await itemsApp(t, { rows, store })
  const huge = await get('/items')
  t.equal(huge.statusCode, 200)
  t.ok(huge.body.length > 4_000_000, `several MB (${huge.body.length})`)
  t.equal(huge.json().length, 2_000, 'every row')
  t.same([store.size, store.bytes], [0, 0], 'nothing kept')
  const small = await get('/items/1')
  t.same([small.statusCode, store.size], [200, 1], 'a small answer still is')
  const again = await get('/items')
  t.same([xCache(again), calls.list], ['MISS', 2], 'the next request reads again')
  const whole = await get('/items')
  t.equal(whole.body, huge.body, 'answered whole again')
})

test('a store that fails at once, not with a promise: reads served uncached, writes served, keyed creates 503', async (t) => {
  const down = (): never => { throw new Error('down') }
  const saving: CacheStore = {
    kind: 'broken',
    lookup: () => ({ tokens: '', answer: undefined }),
    save: down,
    bump: down,
    claim: () => ({ state: 'claimed', owner: 'o' }),
    settle: down
  }
  const warnings: unknown[] = []
  const opened = await itemsApp(t, { store: saving, cache: { ttl: 60, idempotency: true } })
  opened.app.log.warn = (...args: unknown[]) => { warnings.push(args) } // the app's own logger, watched
  const read = await opened.get('/items/1')
  t.same([read.statusCode, xCache(read)], [200, 'MISS'], 'a save that throws: the read is served')
  const again = await opened.get('/items/1')
  t.same([again.statusCode, again.body], [200, read.body], 'and served again (for a second, the read just made)')
  const patched = await opened.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'patched' } })
  t.equal(patched.statusCode, 200, 'a bump that throws: the write is served')
  const keyed = await opened.inject({ method: 'POST', url: '/items', payload: { name: 'keyed', price: 1 }, headers: { 'idempotency-key': 'k' } })
  t.equal(keyed.statusCode, 201, 'a settle that throws: the create is served')
  t.equal(rowsOf(opened.memory).filter((row) => row.name === 'keyed').length, 1)

  const looking: CacheStore = { ...saving, lookup: down, claim: down }
  const other = await itemsApp(t, { store: looking, cache: { ttl: 60, idempotency: true } })
  const uncached = await other.get('/items/1')
  t.same([uncached.statusCode, xCache(uncached)], [200, 'MISS'], 'a lookup that throws: the read is served uncached')
  const refused = await other.inject({ method: 'POST', url: '/items', payload: { name: 'refused', price: 1 }, headers: { 'idempotency-key': 'k' } })
  problem(t, refused, 503)
  t.equal(rowsOf(other.memory).filter((row) => row.name === 'refused').length, 0, 'a claim that throws: nothing written')
})

test('the headers that describe the body (Link, Content-Language, Content-Location) are replayed with it', async (t) => {
  const { repository, calls } = counted(ITEMS)
  const onSend = async (request: FastifyRequest, reply: FastifyReply): Promise<void> => {
    if (request.method !== 'GET') return
    // Only on the read itself: a hit replays them, and the hook sets none then.
    if (calls.get > 1 || reply.getHeader('x-cache') === 'HIT') return
    reply.header('link', '</items/2>; rel="next"').header('content-language', 'en').header('content-location', '/items/1')
  }
  const app = await build({ views: [{ view: itemsView(repository, { ttl: 60 }), prefix: '/items', onSend }], cache: memoryCache() })
  t.teardown(() => app.close())
  const first = await app.inject({ url: '/items/1' })
  const hit = await app.inject({ url: '/items/1' })
  t.equal(xCache(hit), 'HIT')
  for (const name of ['link', 'content-language', 'content-location', 'content-type']) t.equal(hit.headers[name], first.headers[name], name)
  t.equal(calls.get, 1)
})

test('a leader whose client goes away before its answer does not hold back the requests waiting for it', async (t) => {
  const { app, calls } = await itemsApp(t, { delay: 150 })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as { port: number }
  const { request } = await import('node:http')
  const gone = request({ port, host: '127.0.0.1', path: '/items/3' })
  gone.on('error', () => {})
  gone.end()
  await sleep(30)
  const waiting = fetch(`http://127.0.0.1:${port}/items/3`)
  await sleep(30)
  gone.destroy()
  const answered = await waiting
  t.equal(answered.status, 200, 'the request waiting for the read is answered')
  t.same(await answered.json(), { id: 3, name: 'plum', price: 5 })
  t.ok(calls.get >= 1 && calls.get <= 2, `the read was made once or, after the leader left, once more (${calls.get})`)
})

test('the plugin\'s cache with configureApp: false, on an application configured before', async (t) => {
  const { repository, calls } = counted(ITEMS)
  const app = Fastify()
  configureApp(app)
  await app.register(views, { configureApp: false, cache: memoryCache(), views: [{ view: itemsView(repository, { ttl: 60 }), prefix: '/items' }] })
  t.teardown(() => app.close())
  await app.inject({ url: '/items/1' })
  t.same([xCache(await app.inject({ url: '/items/1' })), calls.get], ['HIT', 1])
})

test('a view whose repository comes from a getter is cached and invalidated as any', async (t) => {
  const { repository, calls } = counted(ITEMS)
  const statics = { responseSchema: Item, createSchema: ItemIn, detailParams: IdParams }
  class Gotten extends mix(AsyncGenericViewSet).with(statics) {
    static override cache = { ttl: 60 }
    override get repository (): never { return repository }
  }
  const app = await build({ cache: memoryCache(), views: [{ view: Gotten, prefix: '/items' }] })
  t.teardown(() => app.close())
  await app.inject({ url: '/items/1' })
  t.same([xCache(await app.inject({ url: '/items/1' })), calls.get], ['HIT', 1])
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'kiwi', price: 1 } })).statusCode, 201)
  t.equal(xCache(await app.inject({ url: '/items/1' })), 'MISS', 'a write invalidates')
})

test('a store that cannot be told of a write: the cached resource\'s writes refused, another resource\'s served', async (t) => {
  const store = Object.assign(memoryCache(), { reachable: (): boolean => false })
  const { repository, memory } = counted(ITEMS)
  const Note = Type.Object({ id: Type.Integer(), text: Type.String() }, { $id: 'CacheUncachedNote' })
  class Notes extends mix(AsyncGenericViewSet).with({
    responseSchema: Note,
    createSchema: Type.Object({ text: Type.String() }),
    repository: asyncRepository(new MemoryRepository<{ id: number, text: string }>())
  }) {}
  const app = await build({ cache: store, views: [{ view: itemsView(repository, { ttl: 60 }), prefix: '/items' }, { view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const refused = await app.inject({ method: 'POST', url: '/items', payload: { name: 'kiwi', price: 1 } })
  t.equal(problem(t, refused, 503).detail, 'The cache shared by this service cannot be reached, so this write could not be made known: nothing was written. Retry shortly.')
  t.equal(refused.headers['retry-after'], '1')
  t.equal(rowsOf(memory).length, ITEMS.length, 'nothing written')
  t.equal((await app.inject({ method: 'POST', url: '/notes', payload: { text: 'n' } })).statusCode, 201, 'a resource nobody caches is written')
  t.equal((await app.inject({ url: '/items/1' })).statusCode, 200, 'reads are served')
})
