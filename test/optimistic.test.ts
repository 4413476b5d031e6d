import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Fastify, { type FastifyRequest, type InjectOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { Put, mix } from '../lib/index.js'
import { AsyncGenericViewSet, GenericReadOnlyViewSet, GenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { ConditionalMixin, failsPrecondition } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'
import { build, problem } from './helpers.js'
import { changeBetweenCheckAndWrite, checkWriteGap, type CheckWriteGap, raceConditionalWrites, raceUnmodifiedSince } from './optimistic-cases.js'
import Database from 'better-sqlite3'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { Product, ProductIn, TableOptions, createTable, type ProductT } from './sql-cases.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
type ItemT = { id: number, name: string, price: number }

const turn = async (): Promise<void> => { await new Promise((resolve) => setImmediate(resolve)) }

/** The asynchronous protocol over a MemoryRepository, each call after a turn of the event loop. */
function slow (rows: MemoryRepository<ItemT>): unknown {
  const wrapped = asyncRepository<ItemT, MemoryRepository<ItemT>>(rows) as unknown as Record<string,
    (...args: unknown[]) => Promise<unknown>>
  return Object.fromEntries(Object.entries(wrapped).map(([name, fn]) => [name, typeof fn !== 'function' ? fn : async (...args: unknown[]) => { await turn(); return fn(...args) }]))
}

test('MemoryRepository: concurrent conditional writes with one ETag, one winner', async (t) => {
  const rows = new MemoryRepository<ItemT>()
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true }
    // Every call waits a turn of the event loop first, as a database round trip would: the
    // check in preValidation and the write of concurrent requests interleave.
    static override repository = slow(rows) as never
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  await raceConditionalWrites(t, [app])
})

test('SQLite (the example API): concurrent conditional writes with one ETag, one winner', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-race-'))
  const app = await buildApp({ databaseUrl: `sqlite:${path.join(dir, 'shop.db')}` })
  t.teardown(async () => { await app.close(); rmSync(dir, { recursive: true, force: true }) })
  await raceConditionalWrites(t, [app])
})

test('SQLite, two instances over one file: concurrent writes with one If-Unmodified-Since, at most one winner', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-race-'))
  const file = path.join(dir, 'shop.db')
  const one = await buildApp({ databaseUrl: `sqlite:${file}` })
  const two = await buildApp({ databaseUrl: `sqlite:${file}` })
  t.teardown(async () => { await one.close(); await two.close(); rmSync(dir, { recursive: true, force: true }) })
  await raceUnmodifiedSince(t, [one, two])
})

test('SQLite, two instances over one file: a row the other instance creates or changes between the check and the write fails the precondition', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-race-'))
  const file = path.join(dir, 'shop.db')
  const admin = new Database(file)
  admin.exec(createTable('INTEGER'))
  const gap = checkWriteGap()
  const instance = async (preHandler?: CheckWriteGap['hook']) => {
    const db = new Database(file)
    class Items extends mix(ConditionalMixin, GenericViewSet) {
      static override responseSchema = Product
      static override createSchema = Type.Object({ id: Type.Integer(), ...ProductIn.properties })
      static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
      static override detailParams = Type.Object({ id: Type.Integer() })
      static override conditional = { etag: true, lastModifiedField: 'updated_at' }
      static override repository = new SqliteRepository<ProductT>(db, TableOptions) as never
    }
    const app = await build({ views: [{ view: Items, prefix: '/items', ...(preHandler === undefined ? {} : { preHandler }) }] })
    app.addHook('onClose', () => { db.close() })
    return app
  }
  const one = await instance(gap.hook)
  const two = await instance()
  t.teardown(
    async () => { await one.close(); await two.close(); admin.close(); rmSync(dir, { recursive: true, force: true }) }
  )
  const insertOld = async (id: number, name: string) => { admin.prepare("INSERT INTO products (id, name, price, updated_at) VALUES (?, ?, 1, '2026-01-01T10:00:00.000Z')").run(id, name) }
  await changeBetweenCheckAndWrite(t, one, two, gap, insertOld)
})

test('If-Unmodified-Since: a representation changed within the current second counts as changed', async (t) => {
  const second = Date.UTC(2026, 0, 1, 10, 0, 0)
  const date = new Date(second).toUTCString()
  const fails = (lastModified: number, now: number): boolean => failsPrecondition({ 'if-unmodified-since': date }, { lastModified }, now)
  t.equal(fails(second + 500, second + 1000), false, 'changed within the named second, which has ended: unchanged since')
  t.equal(fails(second + 500, second + 999), true, 'changed within the named second, which is the current one: it may have changed again')
  t.equal(fails(second - 1000, second + 200), false, 'changed in an earlier second: unchanged since, even within the current one')
  t.equal(fails(second + 1000, second + 5000), true, 'changed in a later second: changed')
  t.equal(fails(second + 60_000, second + 1000), true, 'a change stamped ahead of this clock counts as changed')
  t.equal(failsPrecondition({ 'if-unmodified-since': date }, { lastModified: second + 500 }), false, 'the clock is the current time by default')
  t.equal(failsPrecondition({ 'if-match': '"a"', 'if-unmodified-since': date }, { etag: '"a"', lastModified: second + 500 }, second + 500), false,
    'with If-Match, If-Unmodified-Since is not evaluated (RFC 9110 section 13.2.2)')

  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json().id
  const read = await app.inject(`/items/${id}`)
  const lastModified = read.headers['last-modified'] as string
  if (Math.floor(Date.now() / 1000) === Math.floor(Date.parse(read.json().updated_at) / 1000)) {
    const early = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-unmodified-since': lastModified }, payload: { name: 'desk', price: 2 } })
    t.equal(problem(t, early, 412).status, 412, 'a write within the second of the last change is refused: another change in that second would look the same')
  }
  await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5))
  const later = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-unmodified-since': lastModified }, payload: { name: 'desk', price: 2 } })
  t.equal(later.statusCode, 200, 'once that second is over, the same date is enough')
  const again = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-unmodified-since': lastModified }, payload: { name: 'chair', price: 3 } })
  t.equal(again.statusCode, 412, 'and the write it allowed is stamped later: the date no longer holds')
  t.equal((await app.inject(`/items/${id}`)).json().name, 'desk')
})

test('a successful PUT or PATCH carries the ETag and Last-Modified a following GET sends', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json().id
  let etag = (await app.inject(`/items/${id}`)).headers.etag as string
  for (const [method, payload] of [['PUT', { name: 'desk', price: 2 }], ['PATCH', { price: 3 }]] as const) {
    const write = await app.inject({ method, url: `/items/${id}`, headers: { 'if-match': etag }, payload })
    t.equal(write.statusCode, 200)
    const read = await app.inject(`/items/${id}`)
    t.equal(write.headers.etag, read.headers.etag, `${method}: the new ETag is the one GET sends`)
    t.equal(write.headers['last-modified'], read.headers['last-modified'], `${method}: and so is Last-Modified`)
    t.not(write.headers.etag, etag, 'a new validator')
    etag = write.headers.etag as string
  }
  const unchanged = await app.inject({ method: 'PATCH', url: `/items/${id}`, headers: { 'if-match': etag }, payload: {} })
  t.equal(unchanged.statusCode, 200, 'a conditional PATCH that changes nothing')
  t.equal(unchanged.headers.etag, etag, 'keeps the tag: the row as it is, its touch column not stamped')
  const chained = await app.inject({ method: 'DELETE', url: `/items/${id}`, headers: { 'if-match': etag } })
  t.equal(chained.statusCode, 204, 'the ETag a write returned chains into the next conditional write')
})

test('requirePreconditions: an unconditional write is 428; the conditional headers and 428 are documented', async (t) => {
  const rows = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', price: 1 }] })
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true, require: true }
    static override repository = asyncRepository<ItemT, MemoryRepository<ItemT>>(rows) as never
    @Put('/:id/rename', { schema: { headers: Type.Object({ 'x-reason': Type.String() }) }, responseSchema: Type.Object({ ok: Type.Boolean() }) })
    rename () { return { ok: true } }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'x', version: '1' } }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  await app.ready()
  t.teardown(() => app.close())
  const blind = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'desk', price: 2 } })
  t.equal(problem(t, blind, 428).title, 'Precondition Required')
  t.equal(blind.json().detail, 'Send If-Match with the ETag of the representation you change; If-Match: *, a weak ETag or If-Unmodified-Since alone does not say which version you read.')
  // Only a strong tag names the version the client read (RFC 9110 sections 8.8.1, 8.8.2.2, 13.1.1).
  const namesNoVersion: Array<[string, Record<string, string>]> = [
    ['If-Match: *', { 'if-match': '*' }],
    ['a weak tag', { 'if-match': 'W/"x"' }],
    ['weak tags only', { 'if-match': 'W/"x", W/"y"' }],
    ['an unquoted tag', { 'if-match': 'abc' }],
    ['an empty If-Match', { 'if-match': '' }],
    ['If-Unmodified-Since alone', { 'if-unmodified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' }],
    ['an invalid If-Unmodified-Since', { 'if-unmodified-since': 'not-a-date' }],
    ['an empty If-Unmodified-Since', { 'if-unmodified-since': '' }],
    ['If-None-Match: *', { 'if-none-match': '*' }]
  ]
  for (const [name, headers] of namesNoVersion) {
    for (const method of ['PUT', 'PATCH', 'DELETE'] as const) {
      const res = await app.inject({ method, url: '/items/1', headers, ...(method === 'DELETE' ? {} : { payload: { name: 'desk', price: 2 } }) })
      t.equal(res.statusCode, 428, `${method} with ${name}: 428`)
    }
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/items/1' })).statusCode, 428, 'DELETE too')
  t.equal((await app.inject('/items/1')).json().name, 'lamp', 'nothing was written')
  const etag = (await app.inject('/items/1')).headers.etag as string
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': '"other"' }, payload: { name: 'desk' } })).statusCode, 412, 'a strong tag of another version: 412')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': `W/"x", ${etag}` }, payload: { name: 'desk' } })).statusCode, 200,
    'a list with a strong tag of this version goes through')
  t.equal((await app.inject({ method: 'GET', url: '/items' })).statusCode, 200, 'reads need no precondition')

  const doc = app.swagger() as unknown as {
    paths: Record<string, Record<string, {
      parameters?: Array<{ in: string, name: string }>,
      responses: Record<string, unknown>
    }>>
  }
  const headerNames = (path: string, method: string): string[] => (doc.paths[path][method].parameters ?? []).filter((p) => p.in === 'header').map((p) => p.name).sort()
  for (const method of ['put', 'patch', 'delete']) {
    t.same(headerNames('/items/{id}', method), ['if-match', 'if-none-match', 'if-unmodified-since'], `${method.toUpperCase()} documents the conditional request headers`)
    t.match(doc.paths['/items/{id}'][method].responses['428'], { description: /Precondition Required/, content: { 'application/problem+json': { schema: {} } } },
      `${method.toUpperCase()} documents 428, a problem`)
  }
  t.same(headerNames('/items/{id}/rename', 'put'), ['if-match', 'if-none-match', 'if-unmodified-since', 'x-reason'], 'a route\'s own headers stay beside them')
  t.same(headerNames('/items/{id}', 'get'), ['if-modified-since', 'if-none-match'], 'GET documents If-None-Match and If-Modified-Since')
  t.notOk(doc.paths['/items'].post?.responses['428'], 'POST is not conditional')
})

test('a view that checks If-Match over a repository that does not apply preconditions atomically is refused at registration', async (t) => {
  const rows = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', price: 1 }] })
  // A hand-written repository: the same methods, no declaration.
  const plain = {
    create: (values: Record<string, unknown>) => rows.create(values),
    get: (criteria: Record<string, unknown>) => rows.get(criteria),
    list: () => rows.list({}),
    count: () => rows.count({}),
    update: (criteria: Record<string, unknown>, values: Record<string, unknown>) => rows.update(criteria, values),
    delete: (criteria: Record<string, unknown>) => rows.delete(criteria)
  }
  class Items extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override conditional = { etag: true }
    static override repository = plain as never
  }
  await t.rejects(build({ views: [Items] }), { name: 'TypeError', message: /^Cannot register Items: it checks If-Match on .*update.*, but its repository does not declare atomicPreconditions: true/ })
  class Declared extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override conditional = { etag: true }
    static override repository = { ...plain, atomicPreconditions: true } as never
  }
  const app = await build({ views: [{ view: Declared, prefix: '' }] })
  t.equal((await app.inject('/')).statusCode, 200, 'declared: registered')
  class ReadOnly extends mix(ConditionalMixin, GenericReadOnlyViewSet) {
    static override responseSchema = Item
    static override conditional = { etag: true }
    static override repository = plain as never
  }
  t.ok(await build({ views: [{ view: ReadOnly, prefix: '' }] }), 'a view without writes needs no declaration')
  class HandRolled extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override conditional = { requests: true }
    static override repository = plain as never
  }
  await t.rejects(build({ views: [HandRolled] }), {
    code: 'FV_ERR_NOT_ATOMIC',
    message: 'Cannot register HandRolled: it checks If-Match on destroy, partialUpdate, update, but its repository does not declare atomicPreconditions: true, ' +
      'so a concurrent write could slip between the check and the write. Evaluate options.precondition in update and delete in the same step as the write and ' +
      'declare it (docs/repositories.md, "Conditional writes").'
  },
  'conditionalRequests without etag checks preconditions too, and is refused the same way')
  t.equal(asyncRepository<ItemT, MemoryRepository<ItemT>>(rows).atomicPreconditions, true, 'asyncRepository carries the declaration over')
})

test('only a conditional write hands its repository a precondition: an unconditional one stays the plain write', async (t) => {
  const seen: string[] = []
  class Recording extends MemoryRepository<ItemT> {
    override update (
      criteria: Record<string, unknown>,
      values: Record<string, unknown>,
      options: Record<string, unknown> = {}
    ) {
      seen.push(`update ${typeof options.precondition}`)
      return super.update(criteria, values, options)
    }

    override delete (criteria: Record<string, unknown>, options: Record<string, unknown> = {}) {
      seen.push(`delete ${typeof options.precondition}`)
      return super.delete(criteria, options)
    }
  }
  class Items extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true }
    static override repository = new Recording({ rows: [{ id: 1, name: 'lamp', price: 1 }, { id: 2, name: 'desk', price: 2 }] }) as never
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const later = 'Fri, 01 Jan 2100 00:00:00 GMT'
  const writes: Array<[InjectOptions, string]> = [
    [{ method: 'PUT', url: '/items/1', payload: { name: 'a', price: 1 } }, 'update undefined'],
    [{ method: 'PATCH', url: '/items/1', payload: { price: 3 } }, 'update undefined'],
    [{ method: 'PUT', url: '/items/1', headers: { 'if-match': '*' }, payload: { name: 'b', price: 1 } }, 'update function'],
    [{ method: 'PATCH', url: '/items/1', headers: { 'if-none-match': '"other"' }, payload: { price: 4 } }, 'update function'],
    [{ method: 'PATCH', url: '/items/1', headers: { 'if-unmodified-since': later }, payload: { price: 5 } }, 'update function'],
    [{ method: 'DELETE', url: '/items/2', headers: { 'if-unmodified-since': later } }, 'delete function'],
    [{ method: 'DELETE', url: '/items/1' }, 'delete undefined']
  ]
  for (const [request] of writes) t.ok((await app.inject(request)).statusCode < 300, `${request.method} ${JSON.stringify(request.headers ?? {})}`)
  t.same(seen, writes.map(([, expected]) => expected), 'the precondition goes with If-Match, If-None-Match or If-Unmodified-Since, and only with them')
})

test('the ETag of a write: only on a success with a body, never over the handler\'s own', async (t) => {
  const rows = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', price: 1 }, { id: 2, name: 'desk', price: 2 }] })
  class Items extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override updateSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true }
    static override repository = rows as never
    override partialUpdate (request: FastifyRequest) {
      this.reply.header('etag', '"own"')
      return super.partialUpdate(request as never)
    }
  }
  class Quiet extends Items {
    static override returnOnUpdate = false
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }, { view: Quiet, prefix: '/quiet' }] })
  t.teardown(() => app.close())
  const missing = await app.inject({ method: 'PUT', url: '/items/9', payload: { name: 'x', price: 1 } })
  t.equal(missing.statusCode, 404)
  t.equal(missing.headers.etag, undefined, 'a 404 has no tag')
  const own = await app.inject({ method: 'PATCH', url: '/items/1', payload: { price: 3 } })
  t.equal(own.headers.etag, '"own"', 'a tag the handler set is kept')
  const quiet = await app.inject({ method: 'PUT', url: '/quiet/2', payload: { name: 'desk', price: 5 } })
  t.equal(quiet.statusCode, 200)
  t.equal(quiet.headers.etag, undefined, 'an empty body has no representation to tag')
})
