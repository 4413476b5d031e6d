import { test } from 'tap'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { APIView, mix } from '../lib/index.js'
import { Forbidden } from '../lib/errors.js'
import { AsyncGenericViewSet, BaseFilter, GenericViewSet, MemoryRepository, type Criteria } from '../lib/generics.js'
import {
  AsyncBulkAPIViewSet, AsyncBulkCreateAPIView, AsyncBulkDestroyAPIView, AsyncBulkUpdateAPIView,
  AsyncGenericBulkCreateAPIView, AsyncGenericBulkDestroyAPIView, AsyncGenericBulkUpdateAPIView,
  AsyncUpdateManyAPIView, BulkAPIViewSet, BulkCreateAPIView, BulkDestroyAPIView, BulkUpdateAPIView,
  GenericBulkCreateAPIView, GenericBulkDestroyAPIView, GenericBulkUpdateAPIView, UpdateManyAPIView
} from '../lib/bulk.js'
import { build, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), tenant: Type.String() }, { $id: 'Item' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const ItemUpdate = Type.Object(
  { id: Type.Integer(), name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) }
)
const ItemValues = Type.Partial(ItemIn)
type ItemT = Static<typeof Item>

class NameFilter extends BaseFilter {
  static override fields = { name: Type.String() }
  static override operatorFields = { price: Type.Number() }
  static override operators = { price: ['gt'] as const }
}

/** A minimal thenable, as a query builder is: `then` settles on a later tick and returns nothing, so only awaiting it works. */
function thenable (run: () => unknown): PromiseLike<unknown> {
  return {
    then (resolve, reject) {
      setTimeout(() => {
        try {
          resolve?.(run())
        } catch (error) {
          reject?.(error)
        }
      }, 1)
      return undefined as never
    }
  }
}

/**
 * A repository that records every call, synchronous or asynchronous (a promise, or with
 * `thenables` a bare thenable); each call's name goes into `log` too, beside the hooks.
 */
function recorded (async: boolean, log: string[] = [], thenables = false) {
  const store = new MemoryRepository<ItemT>({
    unique: ['name'],
    optionKeys: ['batch_size'],
    rows: [
      { id: 1, name: 'apple', price: 3, tenant: 'a' },
      { id: 2, name: 'banana', price: 1, tenant: 'a' },
      { id: 3, name: 'cherry', price: 5, tenant: 'b' }
    ]
  })
  const calls: Array<{ method: string, args: unknown[] }> = []
  const repo: Record<string, unknown> = {}
  for (const method of ['create', 'get', 'list', 'count', 'update', 'delete', 'createMany', 'updateMany', 'bulkUpdate', 'deleteMany']) {
    repo[method] = (...args: unknown[]) => {
      calls.push({ method, args: structuredClone(args.filter((a) => typeof a !== 'function')) })
      log.push(method)
      if (thenables) {
        return thenable(
          () => (store as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args)
        )
      }
      if (!async) return (store as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args)
      try {
        return Promise.resolve((store as unknown as Record<string, (...a: unknown[]) => unknown>)[method](...args))
      } catch (error) {
        return Promise.reject(error)
      }
    }
  }
  return { store, calls, repo }
}

const families = [
  {
    name: 'async',
    async: true,
    Bulk: AsyncBulkAPIViewSet,
    Crud: AsyncGenericViewSet,
    Abstract: [AsyncBulkCreateAPIView, AsyncBulkUpdateAPIView, AsyncUpdateManyAPIView, AsyncBulkDestroyAPIView],
    Generic: {
      Create: AsyncGenericBulkCreateAPIView,
      Update: AsyncGenericBulkUpdateAPIView,
      Destroy: AsyncGenericBulkDestroyAPIView
    }
  },
  {
    name: 'sync',
    async: false,
    Bulk: BulkAPIViewSet,
    Crud: GenericViewSet,
    Abstract: [BulkCreateAPIView, BulkUpdateAPIView, UpdateManyAPIView, BulkDestroyAPIView],
    Generic: { Create: GenericBulkCreateAPIView, Update: GenericBulkUpdateAPIView, Destroy: GenericBulkDestroyAPIView }
  }
] as const
type Family = (typeof families)[number]

/** `run` now on a sync view; on an async view after a timer, so that only a hook that is awaited has run before the next step. */
function later (family: Family, run: () => unknown): Promise<void> | undefined {
  if (family.async) return new Promise((resolve) => setTimeout(() => { run(); resolve() }, 1))
  run()
  return undefined
}

/** Mixes `classes` into a plain `typeof APIView`, whatever family they come from. */
const mixAny = (...classes: unknown[]) => (mix as unknown as (...c: unknown[]) => typeof APIView)(...classes)

/**
 * A bulk viewset of `family` over `repo`, with the CRUD viewset mixed in unless `crud` is false.
 * Its hooks log into `log` when they finish, beside the calls of a `recorded` repository sharing it.
 */
function itemsView (
  family: Family,
  repo: unknown,
  overrides: Record<string, unknown> = {},
  { log = [], crud = true }: { log?: string[], crud?: boolean } = {}
) {
  const hooks = log
  const hook = (entry: string) => later(family, () => hooks.push(entry))
  class Items extends (crud ? mixAny(family.Bulk, family.Crud) : mixAny(family.Bulk)) {
    static override responseSchema = Item
    static createSchema = ItemIn
    static bulkUpdateSchema = ItemUpdate
    static updateSchema = ItemValues
    static detailParams = Type.Object({ id: Type.Integer() })
    static filter: unknown = NameFilter
    static repository = repo
    static repositoryOptions = { batch_size: 100 }
    getKwargs (): Criteria { return { tenant: this.request.headers['x-tenant'] ?? 'a' } }
    beforeBulkCreate (data: unknown[]) { return hook(`beforeBulkCreate:${data.length}`) }
    afterBulkCreate (objs: unknown[]) { return hook(`afterBulkCreate:${objs.length}`) }
    beforeBulkUpdate (data: unknown[]) { return hook(`beforeBulkUpdate:${data.length}`) }
    afterBulkUpdate (...args: unknown[]) { return hook(`afterBulkUpdate:${args.length}`) }
    beforeUpdateMany (values: object) { return hook(`beforeUpdateMany:${Object.keys(values).join()}`) }
    afterUpdateMany (objs: unknown[]) { return hook(`afterUpdateMany:${objs.length}`) }
    beforeBulkDelete (...args: unknown[]) { return hook(`beforeBulkDelete:${args.length}`) }
    afterBulkDelete (...args: unknown[]) { return hook(`afterBulkDelete:${args.length}`) }
  }
  Object.assign(Items, overrides)
  return { Items, hooks }
}

for (const family of families) {
  test(`${family.name}: the four verbs on one route, each one repository call built as SEED 4.1 says`, async (t) => {
    const { calls, repo, store } = recorded(family.async)
    const { Items, hooks } = itemsView(family, repo)
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())

    const created = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'date', price: 2 }, { name: 'elder', price: 4 }] })
    t.equal(created.statusCode, 201)
    t.same(created.json().map((i: ItemT) => [i.id, i.name, i.tenant]), [[4, 'date', 'a'], [5, 'elder', 'a']])
    t.same(calls, [{ method: 'createMany', args: [[{ name: 'date', price: 2, tenant: 'a' }, { name: 'elder', price: 4, tenant: 'a' }], { batch_size: 100 }] }],
      'createMany: plain items merged with getKwargs, then only the repository options')
    t.same(hooks.splice(0), ['beforeBulkCreate:2', 'afterBulkCreate:2'])

    calls.length = 0
    const put = await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: 1, name: 'apricot', price: 9 }] })
    t.equal(put.statusCode, 204)
    t.equal(put.body, '')
    t.same(calls, [{ method: 'bulkUpdate', args: [[{ id: 1, name: 'apricot', price: 9, tenant: 'a' }], { batch_size: 100 }] }])
    t.same(hooks.splice(0), ['beforeBulkUpdate:1', 'afterBulkUpdate:0'])

    calls.length = 0
    const patch = await app.inject({ method: 'PATCH', url: '/items/bulk?name=banana', payload: { price: 7 } })
    t.equal(patch.statusCode, 200)
    t.same(patch.json(), [{ id: 2, name: 'banana', price: 7, tenant: 'a' }])
    t.same(calls, [{ method: 'updateMany', args: [{ price: 7 }, { name: 'banana', tenant: 'a', batch_size: 100 }] }],
      'updateMany: only the values sent, then the criteria merged with the options')
    t.same(hooks.splice(0), ['beforeUpdateMany:price', 'afterUpdateMany:1'])

    calls.length = 0
    const del = await app.inject({ method: 'DELETE', url: '/items/bulk?price__gt=4' })
    t.equal(del.statusCode, 204)
    t.same(calls, [{ method: 'deleteMany', args: [{ price__gt: 4, tenant: 'a', batch_size: 100 }] }])
    t.same(hooks.splice(0), ['beforeBulkDelete:0', 'afterBulkDelete:0'])
    t.same(store.list({}).map((r) => r.id), [3, 4, 5], "tenant a's rows over 4 went (apricot 9, banana 7); tenant b's cherry stayed")
  })

  test(`${family.name}: CRUD and bulk routes coexist for every verb`, async (t) => {
    const { repo } = recorded(family.async)
    const { Items } = itemsView(family, repo)
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    t.equal((await app.inject('/items')).statusCode, 200)
    t.equal((await app.inject('/items/1')).statusCode, 200)
    t.equal((await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'x', price: 1 } })).statusCode, 200, 'PUT /items/:id')
    t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: 2, name: 'y', price: 1 }] })).statusCode, 204, 'PUT /items/bulk is the bulk route')
    t.equal((await app.inject({ method: 'PATCH', url: '/items/2', payload: { price: 2 } })).statusCode, 200)
    t.equal((await app.inject({ method: 'PATCH', url: '/items/bulk?name=y', payload: { price: 3 } })).statusCode, 200)
    t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'z', price: 1 } })).statusCode, 201)
    t.equal((await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'w', price: 1 }] })).statusCode, 201)
    t.equal((await app.inject({ method: 'DELETE', url: '/items/1' })).statusCode, 204)
    t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?name=w' })).statusCode, 204)
  })

  test(`${family.name}: bad input is a 4xx problem and the repository is never called`, async (t) => {
    const { calls, repo, store } = recorded(family.async)
    const { Items } = itemsView(family, repo, { maxBatchSize: 3 })
    const app = await build({ views: [{ view: Items, prefix: '/items' }] }, { bodyLimit: 2048 })
    t.teardown(() => app.close())
    const before = store.list({})
    const cases: Array<[string, string, unknown, number, string[]?]> = [
      ['POST', '/items/bulk', { name: 'not an array', price: 1 }, 400, ['#']],
      ['POST', '/items/bulk', [null], 400, ['#/0']],
      ['POST', '/items/bulk', [{ name: 'ok', price: 1 }, { name: 'x', price: '2' }], 400, ['#/1/price']],
      ['POST', '/items/bulk', [{ name: 'ok', price: 1 }, { name: 'ok2', price: 1 }, { name: '', price: 1 }], 400, ['#/2/name']],
      ['POST', '/items/bulk', [{ name: 'ok', price: 1, tenant: 'b' }], 400, ['#/0/tenant']],
      ['POST', '/items/bulk', Array.from({ length: 4 }, (_, i) => ({ name: `n${i}`, price: 1 })), 413],
      ['POST', '/items/bulk', Array.from({ length: 3 }, (_, i) => ({ name: 'x'.repeat(1000) + i, price: 1 })), 413],
      ['PUT', '/items/bulk', Array.from({ length: 4 }, (_, i) => ({ id: i + 1, name: `n${i}`, price: 1 })), 413],
      ['PUT', '/items/bulk', Array.from({ length: 4 }, (_, i) => ({ id: i + 1, name: '', price: 'bad' })), 413],
      ['PUT', '/items/bulk', [{ id: 1, name: 'a', price: 1 }, { id: 2, name: 'b', price: 1 }, { id: 1, name: 'c', price: 1 }], 400, ['#/0/id', '#/2/id']],
      ['PUT', '/items/bulk', [{ name: 'no id', price: 1 }], 400, ['#/0/id']],
      ['PATCH', '/items/bulk?name=apple', {}, 400, ['#']],
      ['PATCH', '/items/bulk?name=apple', { price: -1 }, 400, ['#/price']],
      ['PATCH', '/items/bulk', { price: 1 }, 400],
      ['PATCH', '/items/bulk?price__gt=abc', { price: 1 }, 400],
      ['DELETE', '/items/bulk', undefined, 400],
      ['DELETE', '/items/bulk?unknown=1', undefined, 400]
    ]
    for (const [method, url, payload, status, pointers] of cases) {
      const res = await app.inject({ method: method as 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) })
      const body = problem(t, res, status)
      if (pointers !== undefined) t.same(body.errors?.map((e: { pointer: string }) => e.pointer) ?? ['#'], pointers, `${method} ${JSON.stringify(payload)?.slice(0, 60)}`)
    }
    t.same(calls, [], 'not one repository call')
    t.same(store.list({}), before, 'and nothing changed')
  })

  test(`${family.name}: all or nothing inside the repository; an empty batch is a no-op`, async (t) => {
    const { calls, repo, store } = recorded(family.async)
    const { Items, hooks } = itemsView(family, repo)
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    const before = store.list({})
    t.equal(problem(t, await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'new', price: 1 }, { name: 'apple', price: 1 }] }), 409).detail, 'Item 1 clashes with an existing row.')
    t.equal(problem(t, await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'twin', price: 1 }, { name: 'twin', price: 2 }] }), 409).detail, 'Item 1 clashes with item 0.')
    t.equal(problem(t, await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: 1, name: 'x', price: 1 }, { id: 99, name: 'y', price: 1 }] }), 404).status, 404)
    t.equal(problem(t, await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: 1, name: 'banana', price: 1 }] }), 409).status, 409)
    t.equal(problem(t, await app.inject({ method: 'PATCH', url: '/items/bulk?price__gt=0', payload: { name: 'same' } }), 409).status, 409)
    t.same(store.list({}), before, 'no failed batch left a trace')
    t.same(calls.map((c) => c.method), ['createMany', 'createMany', 'bulkUpdate', 'bulkUpdate', 'updateMany'], 'one call per request')

    calls.length = 0
    hooks.length = 0
    const empty = await app.inject({ method: 'POST', url: '/items/bulk', payload: [] })
    t.equal(empty.statusCode, 201)
    t.same(empty.json(), [])
    t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [] })).statusCode, 204)
    t.same(calls, [], 'an empty batch calls nothing')
    t.same(hooks, [], 'and runs no hooks')
  })

  test(`${family.name}: options, filter opt-out, the unfiltered guard, returnOnCreate/Update, bulkRoute`, async (t) => {
    const { calls, repo, store } = recorded(family.async)
    const { Items: Scoped } = itemsView(family, repo, { filter: null, bulkRoute: '/batch', returnOnCreate: false, returnOnUpdate: false })
    const { Items: Everything } = itemsView(family, repo, { allowUnfiltered: true })
    const app = await build({ views: [{ view: Scoped, prefix: '/scoped' }, { view: Everything, prefix: '/all' }] })
    t.teardown(() => app.close())

    const moved = await app.inject({ method: 'POST', url: '/scoped/bulk', payload: [] })
    t.equal(problem(t, moved, 405).detail, '/scoped/bulk does not take POST; it takes GET, HEAD, PUT, PATCH, DELETE, OPTIONS.', 'bulkRoute moved all four verbs')
    t.equal(moved.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS', '/scoped/bulk is only the detail route /:id now')
    const created = await app.inject({ method: 'POST', url: '/scoped/batch', payload: [{ name: 'fig', price: 1 }] })
    t.equal(created.statusCode, 201)
    t.equal(created.body, '', 'returnOnCreate false: status kept, empty body')
    const patched = await app.inject({ method: 'PATCH', url: '/scoped/batch', headers: { 'x-tenant': 'b' }, payload: { price: 6 } })
    t.equal(patched.statusCode, 200)
    t.equal(patched.body, '', 'returnOnUpdate false')
    t.same(calls.at(-1), { method: 'updateMany', args: [{ price: 6 }, { tenant: 'b', batch_size: 100 }] }, 'filter null: acts on what getKwargs selects')
    t.equal(store.get({ id: 3 })!.price, 6)
    t.equal(store.get({ id: 1 })!.price, 3, "another tenant's rows are untouched")
    t.equal((await app.inject({ method: 'DELETE', url: '/scoped/batch', headers: { 'x-tenant': 'b' } })).statusCode, 204)
    t.same(calls.at(-1), { method: 'deleteMany', args: [{ tenant: 'b', batch_size: 100 }] })

    const everything = await app.inject({ method: 'PATCH', url: '/all/bulk', payload: { price: 0 } })
    t.equal(everything.statusCode, 200, 'allowUnfiltered: no filter parameter means every selected row')
    t.same(calls.at(-1), { method: 'updateMany', args: [{ price: 0 }, { tenant: 'a', batch_size: 100 }] })
    const everyRow = await app.inject({ method: 'DELETE', url: '/all/bulk' })
    t.equal(everyRow.statusCode, 204, 'allowUnfiltered on DELETE: no filter parameter deletes every selected row')
    t.equal(everyRow.body, '')
    t.same(calls.at(-1), { method: 'deleteMany', args: [{ tenant: 'a', batch_size: 100 }] })
    t.same(store.list({}).map((r) => r.tenant), [], "tenant a's rows are gone; tenant b's went with the scoped DELETE")
  })

  test(`${family.name}: a repository option that shadows a filter field is a TypeError only once a request sends it`, async (t) => {
    const { calls, repo } = recorded(family.async)
    const { Items } = itemsView(family, repo, { repositoryOptions: { name: 'shadow' } })
    const lines: string[] = []
    const app = await build({ views: [{ view: Items, prefix: '/items' }] }, { logger: { level: 'error', stream: { write: (l: string) => { lines.push(l) } } } })
    t.teardown(() => app.close())
    t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?price__gt=100' })).statusCode, 204, 'inert while the client does not send name')
    const clash = await app.inject({ method: 'DELETE', url: '/items/bulk?name=apple' })
    t.equal(problem(t, clash, 500).detail, 'An unexpected error occurred.')
    t.match(lines.join(''), /TypeError.*repository option \\"name\\" is also a filter criterion/)
    t.equal(calls.length, 1, 'the clashing request never reached the repository')

    lines.length = 0
    t.equal((await app.inject({ method: 'PATCH', url: '/items/bulk?price__gt=100', payload: { price: 1 } })).statusCode, 200, 'PATCH: inert too')
    const patch = await app.inject({ method: 'PATCH', url: '/items/bulk?name=apple', payload: { price: 1 } })
    const body = problem(t, patch, 500)
    t.equal(body.detail, 'An unexpected error occurred.', 'PATCH: a 500 problem that does not leak the TypeError')
    t.notOk(patch.body.includes('TypeError') || patch.body.includes('shadow'), 'no message, no stack in the response')
    t.match(lines.join(''), /TypeError.*repository option \\"name\\" is also a filter criterion/)
    t.same(calls.map((c) => c.method), ['deleteMany', 'updateMany'], 'neither clashing request reached the repository')
  })

  test(`${family.name}: hooks and the repository call share one log: before, call, after, each hook awaited`, async (t) => {
    const log: string[] = []
    const { repo } = recorded(family.async, log)
    // On the async family each hook logs only once a timer has fired: had the view not
    // awaited the before hook, the repository call would come first in the log.
    const { Items } = itemsView(family, repo, {}, { log })
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    const requests: Array<[string, string, unknown, number, string[]]> = [
      ['POST', '/items/bulk', [{ name: 'date', price: 2 }, { name: 'elder', price: 4 }], 201, ['beforeBulkCreate:2', 'createMany', 'afterBulkCreate:2']],
      ['PUT', '/items/bulk', [{ id: 1, name: 'apricot', price: 9 }], 204, ['beforeBulkUpdate:1', 'bulkUpdate', 'afterBulkUpdate:0']],
      ['PATCH', '/items/bulk?name=banana', { price: 7 }, 200, ['beforeUpdateMany:price', 'updateMany', 'afterUpdateMany:1']],
      ['DELETE', '/items/bulk?price__gt=4', undefined, 204, ['beforeBulkDelete:0', 'deleteMany', 'afterBulkDelete:0']]
    ]
    for (const [method, url, payload, status, expected] of requests) {
      const res = await app.inject({ method: method as 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) })
      t.equal(res.statusCode, status, `${method} ${url}`)
      t.same(log.splice(0), expected, `${method}: before hook, then the call, then the after hook, all before the response`)
    }
  })

  test(`${family.name}: a before hook that throws means a problem response and zero repository calls`, async (t) => {
    const { calls, repo, store } = recorded(family.async)
    const { Items } = itemsView(family, repo)
    const refuse = family.async
      ? async () => { await new Promise((resolve) => setTimeout(resolve, 1)); throw new Forbidden('Refused by a hook.') }
      : () => { throw new Forbidden('Refused by a hook.') }
    for (const hook of ['beforeBulkCreate', 'beforeBulkUpdate', 'beforeUpdateMany', 'beforeBulkDelete']) {
      Object.defineProperty(Items.prototype, hook, { value: refuse })
    }
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    const before = store.list({})
    const requests: Array<[string, string, unknown]> = [
      ['POST', '/items/bulk', [{ name: 'date', price: 2 }]],
      ['PUT', '/items/bulk', [{ id: 1, name: 'apricot', price: 9 }]],
      ['PATCH', '/items/bulk?name=banana', { price: 7 }],
      ['DELETE', '/items/bulk?name=banana', undefined]
    ]
    for (const [method, url, payload] of requests) {
      const res = await app.inject({ method: method as 'POST', url, ...(payload === undefined ? {} : { payload: payload as object }) })
      t.equal(problem(t, res, 403).detail, 'Refused by a hook.', method)
    }
    t.same(calls, [], 'not one repository call')
    t.same(store.list({}), before, 'and nothing changed')
  })

  test(`${family.name}: bulkRoute = '/batch' moves all four verbs`, async (t) => {
    const { calls, repo } = recorded(family.async)
    const { Items } = itemsView(family, repo, { bulkRoute: '/batch' }, { crud: false })
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    const requests: Array<[string, string, unknown, number]> = [
      ['POST', '?', [{ name: 'date', price: 2 }], 201],
      ['PUT', '?', [{ id: 1, name: 'apricot', price: 9 }], 204],
      ['PATCH', '?name=banana', { price: 7 }, 200],
      ['DELETE', '?name=banana', undefined, 204]
    ]
    for (const [method, query, payload] of requests) {
      const res = await app.inject({ method: method as 'POST', url: `/items/bulk${query}`, ...(payload === undefined ? {} : { payload: payload as object }) })
      problem(t, res, 404)
    }
    t.same(calls, [], 'nothing is left on /bulk')
    for (const [method, query, payload, status] of requests) {
      const res = await app.inject({ method: method as 'POST', url: `/items/batch${query}`, ...(payload === undefined ? {} : { payload: payload as object }) })
      t.equal(res.statusCode, status, `${method} /items/batch`)
    }
    t.same(calls.map((c) => c.method), ['createMany', 'bulkUpdate', 'updateMany', 'deleteMany'], 'all four verbs answer on /batch')
  })

  test(`${family.name}: the abstract bulk views over HTTP: the method's result is the answer, PUT and DELETE always empty`, async (t) => {
    const received: unknown[] = []
    const answer = (value: unknown) => family.async ? Promise.resolve(value) : value
    type Request = FastifyRequest<{ Body: Array<Record<string, unknown>>, Querystring: Record<string, unknown> }>
    class Manual extends mixAny(...family.Abstract) {
      static override responseSchema = Item
      static createSchema = ItemIn
      static bulkUpdateSchema = ItemUpdate
      static updateSchema = ItemValues
      static filter = NameFilter
      bulkCreate (request: Request) {
        received.push(['bulkCreate', request.body])
        return answer(request.body.map((item, i) => ({ ...item, id: i + 1, tenant: 'm' })))
      }

      bulkUpdate (request: Request) { received.push(['bulkUpdate', request.body]); return answer([{ ignored: true }]) }
      updateMany (request: Request) { received.push(['updateMany', request.query, request.body]); return answer([{ id: 7, name: 'g', price: 1, tenant: 'm' }]) }
      bulkDelete (request: Request) { received.push(['bulkDelete', request.query]); return answer('ignored') }
    }
    const app = await build({ views: [{ view: Manual, prefix: '/manual' }] })
    t.teardown(() => app.close())

    const created = await app.inject({ method: 'POST', url: '/manual/bulk', payload: [{ name: 'a', price: 1 }] })
    t.equal(created.statusCode, 201)
    t.same(created.json(), [{ id: 1, name: 'a', price: 1, tenant: 'm' }])
    const put = await app.inject({ method: 'PUT', url: '/manual/bulk', payload: [{ id: 3, name: 'c', price: 2 }] })
    t.equal(put.statusCode, 204)
    t.equal(put.body, '', 'PUT: no body, whatever bulkUpdate returned')
    const patched = await app.inject({ method: 'PATCH', url: '/manual/bulk?name=a', payload: { price: 1 } })
    t.equal(patched.statusCode, 200)
    t.same(patched.json(), [{ id: 7, name: 'g', price: 1, tenant: 'm' }])
    const deleted = await app.inject({ method: 'DELETE', url: '/manual/bulk?name=a' })
    t.equal(deleted.statusCode, 204)
    t.equal(deleted.body, '', 'DELETE: no body, whatever bulkDelete returned')
    t.same(received, [
      ['bulkCreate', [{ name: 'a', price: 1 }]],
      ['bulkUpdate', [{ id: 3, name: 'c', price: 2 }]],
      ['updateMany', { name: 'a' }, { price: 1 }],
      ['bulkDelete', { name: 'a' }]
    ])
    problem(t, await app.inject({ method: 'PUT', url: '/manual/bulk', payload: [{ name: 'no id', price: 1 }] }), 400)
    problem(t, await app.inject({ method: 'DELETE', url: '/manual/bulk?name=1&price__gt=x' }), 400)
    t.equal(received.length, 4, 'invalid input never reaches the method')
  })

  test(`${family.name}: a generic subset registers only its verbs: POST and DELETE answer, PUT and PATCH are 405`, async (t) => {
    const { calls, repo } = recorded(family.async)
    class Subset extends mixAny(family.Generic.Create, family.Generic.Destroy) {
      static override responseSchema = Item
      static createSchema = ItemIn
      static filter = NameFilter
      static repository = repo
      getKwargs (): Criteria { return { tenant: 'a' } }
    }
    const app = await build({ views: [{ view: Subset, prefix: '/items' }] })
    t.teardown(() => app.close())
    t.equal((await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'date', price: 2 }] })).statusCode, 201)
    for (const [method, payload] of [['PUT', [{ id: 1, name: 'apricot', price: 9 }]], ['PATCH', { price: 7 }]] as const) {
      const res = await app.inject({ method, url: '/items/bulk?name=apple', payload })
      t.equal(problem(t, res, 405).detail, `/items/bulk does not take ${method}; it takes POST, DELETE, OPTIONS.`, `no bulk ${method} route`)
      t.equal(res.headers.allow, 'POST, DELETE, OPTIONS', `${method}: Allow names the two verbs of the subset`)
    }
    t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?name=apple' })).statusCode, 204)
    t.same(calls.map((c) => c.method), ['createMany', 'deleteMany'])
  })

  test(`${family.name}: bulkUpdateSchema must require the primary key, a TypeError at registration`, async (t) => {
    const { repo } = recorded(family.async)
    const keyed = (schema: unknown, statics: Record<string, unknown> = {}) => {
      class Keyed extends mixAny(family.Generic.Update) {
        static bulkUpdateSchema = schema
        static repository = repo
      }
      return Object.assign(Keyed, statics)
    }
    const refused = (field: string) => ({ name: 'TypeError', message: `Cannot register Keyed: bulkUpdateSchema must require the primary key "${field}" (set primaryKey to the field that identifies a PUT item)` })
    await t.rejects(build({ views: [keyed(ItemIn)] }), refused('id'), 'no id at all')
    await t.rejects(build({ views: [keyed(Type.Object({ id: Type.Optional(Type.Integer()), name: Type.String() }))] }), refused('id'), 'an optional id')
    await t.rejects(build({ views: [keyed(Type.Partial(ItemUpdate))] }), refused('id'), 'no property required')
    await t.rejects(build({ views: [keyed(Type.Unknown())] }), refused('id'), 'not an object schema')
    await t.rejects(build({ views: [keyed(ItemUpdate, { primaryKey: 'sku' })] }), refused('sku'), 'the view\'s primaryKey, not id')
    await t.rejects(build({ views: [keyed(Type.Union([ItemUpdate, ItemIn]))] }), refused('id'), 'a union with a member lacking it')
    await t.rejects(build({ views: [keyed(Type.Intersect([ItemIn, Type.Object({ note: Type.String() })]))] }), refused('id'), 'an intersection with no member requiring it')

    const accepted = [
      keyed(ItemUpdate),
      keyed(Type.Object({ sku: Type.String(), name: Type.String() }), { primaryKey: 'sku' }),
      keyed(Type.Intersect([Type.Object({ id: Type.Integer() }), ItemIn])),
      keyed(Type.Union([ItemUpdate, Type.Object({ id: Type.Integer(), archived: Type.Boolean() })]))
    ]
    for (const [i, view] of accepted.entries()) {
      const app = await build({ views: [{ view, prefix: `/v${i}` }] })
      await app.close()
    }
    t.pass('object, custom primaryKey, intersection and union schemas that require it register')

    const { Items } = itemsView(family, repo, { bulkUpdateSchema: ItemIn })
    await t.rejects(build({ views: [Items] }), { name: 'TypeError', message: /^Cannot register Items: bulkUpdateSchema must require the primary key "id"/ }, 'a bulk viewset too')
  })

  test(`${family.name}: a hook that returns the reply is not waited on like a thenable`, async (t) => {
    const { calls, repo } = recorded(family.async)
    const { Items } = itemsView(family, repo)
    // A reply is thenable, but settles only once the response is sent: awaiting it here would hang.
    Object.defineProperty(Items.prototype, 'beforeBulkDelete', { value: function (this: APIView) { return this.reply } })
    Object.defineProperty(Items.prototype, 'afterBulkDelete', { value: function (this: APIView) { return this.reply } })
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())
    let timer: NodeJS.Timeout | undefined
    const hung = new Promise<'hung'>((resolve) => { timer = setTimeout(() => resolve('hung'), 2000) })
    const res = await Promise.race([app.inject({ method: 'DELETE', url: '/items/bulk?name=apple' }), hung])
    clearTimeout(timer)
    t.not(res, 'hung', 'the request does not wait for its own response')
    t.equal(res === 'hung' ? 0 : res.statusCode, 204)
    t.same(calls.map((c) => c.method), ['deleteMany'])
  })
}

test('an async repository returning bare thenables (a query builder) is awaited', async (t) => {
  const log: string[] = []
  const { calls, repo, store } = recorded(true, log, true)
  const { Items } = itemsView(families[0], repo, {}, { log })
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())

  const created = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'date', price: 2 }] })
  t.equal(created.statusCode, 201)
  t.same(created.json(), [{ id: 4, name: 'date', price: 2, tenant: 'a' }], 'the rows the thenable resolved to')
  t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: 1, name: 'apricot', price: 9 }] })).statusCode, 204)
  const patched = await app.inject({ method: 'PATCH', url: '/items/bulk?name=banana', payload: { price: 7 } })
  t.equal(patched.statusCode, 200)
  t.same(patched.json(), [{ id: 2, name: 'banana', price: 7, tenant: 'a' }])
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?name=date' })).statusCode, 204)
  t.same(store.list({}).map((r) => r.name), ['apricot', 'banana', 'cherry'])
  t.same(log, [
    'beforeBulkCreate:1', 'createMany', 'afterBulkCreate:1', 'beforeBulkUpdate:1', 'bulkUpdate', 'afterBulkUpdate:0',
    'beforeUpdateMany:price', 'updateMany', 'afterUpdateMany:1', 'beforeBulkDelete:0', 'deleteMany', 'afterBulkDelete:0'
  ], 'each after hook ran once its thenable settled')

  const clash = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'banana', price: 1 }] })
  t.equal(problem(t, clash, 409).detail, 'Item 0 clashes with an existing row.', 'a thenable that rejects answers its problem')
  t.equal(calls.length, 5)
})

test('abstract bulk views: the method body defines the action; subsets register only their verbs', async (t) => {
  const received: unknown[] = []
  class Manual extends mix(
    AsyncBulkCreateAPIView,
    AsyncBulkUpdateAPIView,
    AsyncUpdateManyAPIView,
    AsyncBulkDestroyAPIView
  ) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemValues
    static override filter = NameFilter
    override async bulkCreate (request: FastifyRequest<{ Body: Array<Static<typeof ItemIn>> }>) {
      received.push(request.body)
      return request.body.map((item, i) => ({ ...item, id: i + 1, tenant: 'm' }))
    }

    override async bulkUpdate () { return undefined }
    override async updateMany (
      request: FastifyRequest<{ Querystring: { name?: string } }>
    ) { received.push(request.query); return [] }

    override async bulkDelete () { return undefined }
  }
  class CreateOnly extends BulkCreateAPIView {
    override bulkCreate () { return [] }
  }
  const app = await build({ views: [{ view: Manual, prefix: '/manual' }, { view: CreateOnly, prefix: '/create-only' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/manual/bulk', payload: [{ name: 'a', price: 1 }] })
  t.equal(created.statusCode, 201)
  t.same(created.json(), [{ id: 1, name: 'a', price: 1, tenant: 'm' }])
  const put = await app.inject({ method: 'PUT', url: '/manual/bulk', payload: [] })
  t.equal(put.statusCode, 204)
  t.same((await app.inject({ method: 'PATCH', url: '/manual/bulk?name=a', payload: { price: 1 } })).json(), [])
  t.same(received, [[{ name: 'a', price: 1 }], { name: 'a' }])
  t.equal((await app.inject({ method: 'DELETE', url: '/manual/bulk?name=a' })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url: '/create-only/bulk', payload: [] })).statusCode, 201)
  const notRouted = await app.inject({ method: 'PUT', url: '/create-only/bulk', payload: [] })
  t.equal(problem(t, notRouted, 405).detail, '/create-only/bulk does not take PUT; it takes POST, OPTIONS.', 'subsets register only their verbs')
  t.equal(notRouted.headers.allow, 'POST, OPTIONS')
  t.ok(AsyncBulkDestroyAPIView)
})

test('updateMany without an updateSchema takes any object; mergeRepositoryOptions is callable directly', async (t) => {
  class Loose extends AsyncUpdateManyAPIView {
    override async updateMany (request: FastifyRequest) { return [request.body] as never }
  }
  const app = await build({ views: [{ view: Loose, prefix: '' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'PATCH', url: '/bulk', payload: { any: 1 } })).json(), [{ any: 1 }])
  const { repo } = recorded(false)
  const { Items } = itemsView(families[1], repo)
  const view = new (Items as unknown as new (...a: unknown[]) => {
    mergeRepositoryOptions: (k: object, a: string) => object
  })({ headers: {} }, {})
  t.same(view.mergeRepositoryOptions({ name: 'x' }, 'bulkDelete'), { name: 'x', batch_size: 100 })
})

test('the default hooks are no-ops', async (t) => {
  const { repo, calls } = recorded(false)
  class Plain extends BulkAPIViewSet {
    static override responseSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override createSchema = ItemIn
    static override bulkUpdateSchema = ItemUpdate
    static override updateSchema = ItemValues
    static override filter = NameFilter
    static override repository = repo as never
  }
  const app = await build({ views: [{ view: Plain, prefix: '' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/bulk', payload: [{ name: 'x', price: 1 }] })
  t.equal(created.statusCode, 201, created.body)
  t.equal((await app.inject({ method: 'PUT', url: '/bulk', payload: [{ id: 1, name: 'y', price: 1 }] })).statusCode, 204)
  t.equal((await app.inject({ method: 'PATCH', url: '/bulk?name=y', payload: { price: 2 } })).statusCode, 200)
  t.equal((await app.inject({ method: 'DELETE', url: '/bulk?name=y' })).statusCode, 204)
  t.same(calls.map((c) => c.method), ['createMany', 'bulkUpdate', 'updateMany', 'deleteMany'])
})

test('bulk PUT never reaches another tenant\'s row when the repository knows its scope', async (t) => {
  const store = new MemoryRepository<ItemT>({ scopeFields: ['tenant'], rows: [{ id: 1, name: 'a-row', price: 1, tenant: 'a' }, { id: 2, name: 'b-row', price: 1, tenant: 'b' }] })
  const { GenericBulkUpdateAPIView } = await import('../lib/bulk.js')
  class Scoped extends GenericBulkUpdateAPIView {
    static override bulkUpdateSchema = ItemUpdate
    static override repository = store as never
    override getKwargs () { return { tenant: String(this.request.headers['x-tenant']) } }
  }
  const app = await build({ views: [{ view: Scoped, prefix: '' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PUT', url: '/bulk', headers: { 'x-tenant': 'a' }, payload: [{ id: 2, name: 'stolen', price: 0 }] })
  problem(t, res, 404)
  t.same(store.get({ id: 2 }), { id: 2, name: 'b-row', price: 1, tenant: 'b' })
  t.equal((await app.inject({ method: 'PUT', url: '/bulk', headers: { 'x-tenant': 'b' }, payload: [{ id: 2, name: 'mine', price: 0 }] })).statusCode, 204)
})

test('duplicate primary keys: each occurrence names the others', async (t) => {
  const { repo } = recorded(false)
  const { Items } = itemsView(families[1], repo)
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const item = (id: number) => ({ id, name: `n${id}`, price: 1 })
  const body = problem(t, await app.inject({ method: 'PUT', url: '/items/bulk', payload: [item(1), item(2), item(1), item(1)] }), 400)
  t.same(body.errors, [
    { detail: 'Duplicate primary key 1, also at #/2/id, #/3/id', pointer: '#/0/id' },
    { detail: 'Duplicate primary key 1, also at #/0/id, #/3/id', pointer: '#/2/id' },
    { detail: 'Duplicate primary key 1, also at #/0/id, #/2/id', pointer: '#/3/id' }
  ])
})

test('generic bulk views name their missing attributes at registration; filter must be set, null to opt out', async (t) => {
  const { AsyncGenericBulkCreateAPIView, AsyncGenericBulkDestroyAPIView, AsyncGenericUpdateManyAPIView } = await import('../lib/bulk.js')
  const { repo } = recorded(true)
  class NoSchema extends AsyncGenericBulkCreateAPIView {
    static override responseSchema = Item
    static override repository = repo as never
  }
  class NoFilter extends AsyncGenericBulkDestroyAPIView { static override repository = repo as never }
  class NoValues extends AsyncGenericUpdateManyAPIView {
    static override responseSchema = Item
    static override filter = null
    static override repository = repo as never
  }
  await t.rejects(build({ views: [NoSchema] }), { name: 'TypeError', message: 'Cannot register NoSchema: bulkCreate needs createSchema' })
  await t.rejects(build({ views: [NoFilter] }), { name: 'TypeError', message: /bulkDelete needs filter \(a filter class, or null/ })
  await t.rejects(build({ views: [NoValues] }), { name: 'TypeError', message: /updateMany needs updateSchema/ })
})

test('bulk PATCH accepts any subset of updateSchema, which can stay the full PUT body', async (t) => {
  const { repo } = recorded(false)
  const { Items } = itemsView(families[1], repo, { updateSchema: ItemIn })
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'PATCH', url: '/items/bulk?name=apple', payload: { price: 4 } })).statusCode, 200, 'a subset for PATCH')
  problem(t, await app.inject({ method: 'PUT', url: '/items/1', payload: { price: 4 } }), 400)
  t.equal((await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'apple', price: 4 } })).statusCode, 200, 'the whole object for PUT')
})

test('generic bulk actions are real methods of named classes', async (t) => {
  const { BulkAPIViewSet } = await import('../lib/bulk.js')
  for (const [action, owner] of [['bulkCreate', 'GenericBulkCreate'], ['bulkUpdate', 'GenericBulkUpdate'], ['updateMany', 'GenericUpdateMany'], ['bulkDelete', 'GenericBulkDelete']]) {
    let proto: object | null = BulkAPIViewSet.prototype
    while (proto !== null && !Object.hasOwn(proto, action)) proto = Object.getPrototypeOf(proto)
    t.equal((proto as Record<string, { name: string }>)[action].name, action)
    t.equal((proto as { constructor: { name: string } }).constructor.name, owner)
  }
})
