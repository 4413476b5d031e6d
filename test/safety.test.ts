import { test } from 'tap'
import Database from 'better-sqlite3'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, Post, configureApp, mix } from '../lib/index.js'
import type { Dependency } from '../lib/types.js'
import { BaseFilter, GenericRetrieveAPIView, GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { BulkAPIViewSet } from '../lib/bulk.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { build, problem } from './helpers.js'
import { checkNoHiddenColumn, USERS_OPTIONS, USERS_SEED, USERS_TABLE } from './leak-cases.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'SafeItem' })
const ItemIn = Type.Object({ name: Type.String() })
const IdParams = Type.Object({ id: Type.Integer() })

const seeded = () => new MemoryRepository<{ id: number, name: string }>({ rows: [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }] })

test('SQLite: a column the repository does not name never reaches the client', async (t) => {
  const db = new Database(':memory:')
  db.exec(USERS_TABLE)
  db.exec(USERS_SEED)
  const repository = new SqliteRepository(db, USERS_OPTIONS)
  t.same(repository.get({ id: 1 }), { id: 1, name: 'ada' }, 'a detail read selects the declared columns')
  t.same(repository.list({}, { orderBy: [] }), [{ id: 1, name: 'ada' }], 'a list selects the declared columns')
  await checkNoHiddenColumn(t, repository, false)
})

test('a view over a repository without a response schema is refused at registration, naming the view', async (t) => {
  class Users extends GenericViewSet {
    static override repository = seeded() as never
  }
  await t.rejects(build({ views: [Users] }), { name: 'TypeError', message: /^Cannot register Users: partialUpdate, update, retrieve, create, list send stored objects but have no response schema/ })
  class OneBare extends GenericRetrieveAPIView {
    static override repository = seeded() as never
  }
  await t.rejects(build({ views: [OneBare] }), { name: 'TypeError', message: /^Cannot register OneBare: retrieve sends stored objects but has no response schema/ })
  class Deliberate extends GenericViewSet {
    static override responseSchema = Type.Object({}, { additionalProperties: true })
    static override repository = seeded() as never
  }
  const app = await build({ views: [{ view: Deliberate, prefix: '' }] })
  t.same((await app.inject('/')).json(), [{ id: 1, name: 'lamp' }, { id: 2, name: 'desk' }], 'an open schema sends every stored field, deliberately')
})

const deny: Dependency = (request) => {
  if (request.headers.authorization !== 'Bearer ok') throw Object.assign(new Error('Credentials are required.'), { statusCode: 401 })
}

test('a misspelt actionDependencies key is a TypeError at registration listing the actions', async (t) => {
  // A compile error too (test/types/dependencies.tst.ts); JavaScript users meet the TypeError.
  // @ts-expect-error 'destory' is not an action of the view
  class Things extends GenericViewSet {
    static override responseSchema = Item
    static override repository = seeded() as never
    static override actionDependencies = { destory: [deny] }
  }
  class Two extends APIView {
    static override actionDependencies = { a: [deny], b: [deny] }
  }
  await t.rejects(build({ views: [Two] }), { message: 'Cannot register Two: actionDependencies names "a", "b", which are not actions of this view; its actions are ' })
  await t.rejects(build({ views: [Things] }), {
    name: 'TypeError',
    message: 'Cannot register Things: actionDependencies names "destory", which is not an action of this view; its actions are create, destroy, list, partialUpdate, retrieve, update'
  })
})

class ByName extends BaseFilter {
  static override fields = { name: Type.String() }
}

test('unsafeDependencies guards every write, bulk and decorated routes included, and no read', async (t) => {
  class Items extends mix(BulkAPIViewSet, GenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override bulkUpdateSchema = Item
    static override detailParams = IdParams
    static override repository = seeded() as never
    static override filter = ByName
    static override unsafeDependencies = [deny]
    @Post('/touch', { responseSchema: Type.Object({ ok: Type.Boolean() }) })
    touch () { return { ok: true } }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  const writes = [
    ['POST', '/items', { name: 'x' }], ['PUT', '/items/1', { name: 'x' }], ['PATCH', '/items/1', { name: 'x' }], ['DELETE', '/items/1'],
    ['POST', '/items/bulk', [{ name: 'x' }]], ['PUT', '/items/bulk', [{ id: 1, name: 'x' }]], ['PATCH', '/items/bulk?name=lamp', { name: 'x' }],
    ['DELETE', '/items/bulk?name=lamp'], ['POST', '/items/touch']
  ] as const
  for (const [method, url, payload] of writes) {
    const res = await app.inject({ method, url, ...(payload === undefined ? {} : { payload }) })
    t.equal(res.statusCode, 401, `${method} ${url} without credentials: 401`)
  }
  t.same((await app.inject('/items')).json().length, 2, 'nothing was written')
  t.equal((await app.inject('/items/1')).statusCode, 200, 'a read is not guarded')
  const allowed = await app.inject({ method: 'DELETE', url: '/items/bulk?name=lamp', headers: { authorization: 'Bearer ok' } })
  t.equal(allowed.statusCode, 204, 'with credentials the write goes through')
})

/** A full CRUD viewset over two seeded rows, with a JSON body on create and update. */
function crudItems () {
  return class Items extends GenericViewSet {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override detailParams = IdParams
    static override repository = seeded() as never
  }
}

test('415 for a body that is not JSON; an empty body with a JSON media type on a route without one', async (t) => {
  const Items = crudItems()
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded', 'text/plain; charset=utf-8']) {
    const res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': type }, payload: 'name=x' })
    t.equal(problem(t, res, 415).detail, `This route takes application/json, not ${type.split(';')[0]}.`, `POST with ${type}: 415`)
  }
  const json = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json; charset=utf-8' }, payload: '{"name":"x"}' })
  t.equal(json.statusCode, 201, 'application/json with parameters is JSON')
  const empty = await app.inject({ method: 'DELETE', url: '/items/1', headers: { 'content-type': 'application/json' } })
  t.equal(empty.statusCode, 204, 'DELETE with a JSON media type and no body')
  t.equal((await app.inject('/items/1')).statusCode, 404, 'and the row is gone')
  const emptyPost = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' } })
  t.equal(problem(t, emptyPost, 400).status, 400, 'a route that takes a body still needs one')
})

test('415 for a body of another media type that a parser of the app reads, and on a route with its own error handler', async (t) => {
  const Items = crudItems()
  class Guarded extends Items {}
  const seen: unknown[] = []
  const app = Fastify()
  // A form parser gives an object that passes the body's validation: the route still takes JSON only.
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_request, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)))
  })
  await app.register(views, {
    views: [
      { view: Items, prefix: '/items' },
      {
        view: Guarded,
        prefix: '/guarded',
        errorHandler (error, _request, reply) {
          seen.push(error)
          return reply.code((error as { statusCode: number }).statusCode).send({ own: true })
        }
      }
    ]
  })
  const form = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'name=lamp' })
  t.equal(problem(t, form, 415).detail, 'This route takes application/json, not application/x-www-form-urlencoded.', 'a valid form body: 415')
  const invalidForm = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: 'colour=red' })
  t.equal(problem(t, invalidForm, 415).status, 415, 'an invalid form body: 415, not a 400 about its shape')
  t.same((await app.inject('/items')).json().length, 2, 'nothing was written')
  const jsonString = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '"name=lamp"' })
  t.equal(problem(t, jsonString, 400).status, 400, 'a JSON string where an object is expected: 400')
  const other = await app.inject({ method: 'GET', url: '/items/abc', headers: { 'content-type': 'text/plain' } })
  t.equal(problem(t, other, 400).status, 400, 'another error of a request that names a media type keeps its status')

  for (const type of ['text/plain', 'application/xml']) {
    const res = await app.inject({ method: 'POST', url: '/guarded', headers: { 'content-type': type }, payload: 'name=x' })
    t.same(res.json(), { own: true }, `${type}: the route's own error handler answers`)
    t.equal(res.statusCode, 415, `${type}: with a 415`)
  }
  t.match(seen, [{ statusCode: 415, message: 'This route takes application/json, not text/plain.' }, { statusCode: 415 }], 'and it was given the 415 itself')
  const json = await app.inject({ method: 'POST', url: '/guarded', headers: { 'content-type': 'application/json' }, payload: '{"name":"lamp"}' })
  t.equal(json.statusCode, 201, 'JSON passes the hook')
})

test('a thrown value that is not an Error, on a request with another media type, is a 500', async (t) => {
  class Thrower extends APIView {
    @Get('/')
    async boom (): Promise<never> {
      throw 'not an error' // eslint-disable-line no-throw-literal -- what the error handler must survive
    }
  }
  const app = await build({ views: [{ view: Thrower, prefix: '/thrower' }] })
  // A media type without content: a route that takes none serves it, and its handler throws.
  const res = await app.inject({ method: 'GET', url: '/thrower', headers: { 'content-type': 'text/plain' } })
  t.equal(problem(t, res, 500).detail, 'An unexpected error occurred.')
})

test('configureApp first: a route registered before the plugin answers problem+json too', async (t) => {
  const app = Fastify()
  configureApp(app)
  app.get('/plain', async () => { throw new Error('secret internal detail') })
  class Health extends APIView {}
  await app.register(views, { views: [Health] })
  const res = await app.inject('/plain')
  t.equal(res.statusCode, 500)
  t.match(res.headers['content-type'], /^application\/problem\+json/)
  t.notMatch(res.body, /secret internal detail/, 'the internal message stays in the log')
  const missing = await app.inject('/nowhere')
  t.equal(problem(t, missing, 404).status, 404)
})
