import { test } from 'tap'
import Fastify from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { AsyncListAPIView, AsyncRetrieveAPIView, Get, mix, MIXIN } from '../lib/index.js'
import { ConfigurationError } from '../lib/errors.js'
import {
  AsyncGenericViewSet, GenericListAPIView, GenericViewSet, GenericRetrieveAPIView, MemoryRepository, PaginationFilter,
  asyncRepository
} from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import views from '../lib/index.js'
import { StampingRepository, build, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), updated_at: Type.String({ format: 'date-time' }) })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }) })
const IdParams = Type.Object({ id: Type.Integer() })
type Item = Static<typeof Item>
const STAMP = '2026-01-02T03:04:05.000Z'

test('.with(statics, methods): the statics are set, the methods serve the actions, and decorated routes sit beside them', async (t) => {
  const rows = new Map<number, Item>([[1, { id: 1, name: 'Lamp', updated_at: STAMP }]])
  class Items extends mix(
    AsyncListAPIView,
    AsyncRetrieveAPIView
  ).with({ responseSchema: Item, detailParams: IdParams }, {
    async list () { return [...rows.values()] },
    async retrieve (request) { return rows.get(request.params.id) ?? null }
  }) {
    @Get('/count', { responseSchema: Type.Object({ count: Type.Integer() }) })
    count () { return { count: rows.size } }
  }
  t.equal(Items.responseSchema, Item, 'the static is read from the class')
  t.equal(Items.detailParams, IdParams)
  t.equal(Object.getPrototypeOf(Items).name, 'mix(AsyncListAPIView, AsyncRetrieveAPIView).with(responseSchema, detailParams)', 'the base says what it was made with')
  t.notOk(Object.keys(Items.prototype).includes('list'), 'methods are not enumerable, as in a class body')
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.same((await app.inject('/items')).json(), [...rows.values()], 'list')
  t.same((await app.inject('/items/1')).json(), rows.get(1), 'retrieve, with the integer id of detailParams')
  t.equal(problem(t, await app.inject('/items/2'), 404).status, 404, 'null is a 404')
  t.match(problem(t, await app.inject('/items/abc'), 400).errors, [{ in: 'path', parameter: 'id' }], 'the params schema validates')
  t.same((await app.inject('/items/count')).json(), { count: 1 }, 'a decorated route in the class body')
})

test('.with() on a generic viewset: the repository, a hook in the methods, and more statics in the class body', async (t) => {
  const repository = asyncRepository(new MemoryRepository<Item>({ rows: [{ id: 1, name: 'Lamp', updated_at: STAMP }] }))
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: Item, createSchema: ItemIn, detailParams: IdParams, filter: PaginationFilter, conditional: { lastModifiedField: 'updated_at' }, repository
  }, {
    getLocation (item) { return `/items/${item.id}` },
    getKwargs (action) { return action === 'create' ? { updated_at: STAMP } : {} }
  }) {
    static override conditional = { ...super.conditional, etag: true }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Desk' } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, `/items/${created.json().id as number}`, 'getLocation from the methods object')
  const page = (await app.inject('/items')).json()
  t.equal(page.total_items, 2, 'the filter given to .with() pages the list')
  const one = await app.inject('/items/1')
  t.equal(one.headers['last-modified'], new Date(STAMP).toUTCString(), 'lastModifiedField given to .with()')
  t.type(one.headers.etag, 'string', 'a static set in the class body')
})

test('a typed class mixes again with its statics and methods, and .with() chains', async (t) => {
  const rows = new Map<number, Item>([[1, { id: 1, name: 'Lamp', updated_at: STAMP }]])
  const Typed = GenericRetrieveAPIView.with({
    responseSchema: Item,
    detailParams: IdParams,
    repository: new MemoryRepository<Item>({ rows: [...rows.values()] })
  }, {
    getKwargs () { return { name: 'Lamp' } }
  })
  t.equal(Typed[MIXIN].requires[0], GenericRetrieveAPIView[MIXIN], 'it stands for what it extends')
  class Stamped extends mix(ConditionalMixin, Typed) {
    static override conditional = { etag: true, lastModifiedField: 'updated_at' }
  }
  const Renamed = Typed.with({ errorMessage: 'No such lamp' })
  const app = await build({ views: [{ view: Stamped, prefix: '/stamped' }, { view: Renamed, prefix: '/renamed' }] })
  const one = await app.inject('/stamped/1')
  t.same(one.json(), rows.get(1), 'the statics of .with() survive mixing')
  t.ok(one.headers['last-modified'], 'with the mixin applied over them')
  t.equal(problem(t, await app.inject('/renamed/2'), 404).detail, 'No such lamp', 'a second .with() adds to the first')
})

test('a name the class does not have, or a method that is not a function, is FV_ERR_UNKNOWN_STATIC naming both', async (t) => {
  const Base = mix(AsyncListAPIView)
  // What a JavaScript caller (or a cast) can pass: the types refuse all three.
  const loose = Base.with as unknown as (statics: object, methods?: object) => unknown
  const cases: Array<[object, object | undefined, RegExp]> = [
    [{ responseSchemas: Item }, undefined, /mix\(AsyncListAPIView\)\.with\(responseSchemas\): "responseSchemas" is not a static of mix\(AsyncListAPIView\), so it would never be read/],
    [{ responseSchema: Item }, { retreive () {} }, /"retreive" is not a method of mix\(AsyncListAPIView\), so it would never be called/],
    [{ responseSchema: Item }, { list: [] }, /"list" must be a function, not object/],
    [{ name: 'Items' }, undefined, /"name" is not a static of mix\(AsyncListAPIView\)/]
  ]
  for (const [statics, methods, message] of cases) {
    t.throws(() => loose.call(Base, statics, methods), Object.assign(new ConfigurationError('FV_ERR_UNKNOWN_STATIC', ''), { message }))
  }
})

test('a filter\'s .with() sets its statics; a name the filter does not have is FV_ERR_UNKNOWN_STATIC', async (t) => {
  const ByName = PaginationFilter.with({ fields: { name: Type.String() }, orderingFields: ['name'], defaultPageSize: 1 })
  t.equal(ByName.name, 'PaginationFilter.with(fields, orderingFields, defaultPageSize)')
  t.same(ByName.orderingFields, ['name'])
  t.equal(ByName.paginator, PaginationFilter.paginator, 'the rest is inherited')
  class Items extends GenericListAPIView.with({ responseSchema: Item, filter: ByName, repository: new MemoryRepository<Item>({ rows: [{ id: 1, name: 'b', updated_at: STAMP }, { id: 2, name: 'a', updated_at: STAMP }] }) }) {}
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  const page = (await app.inject('/items?sort=name')).json()
  t.same(page.items.map((i: Item) => i.name), ['a'], 'ordered by the field given, one per page')
  const loose = PaginationFilter.with as unknown as (statics: object) => unknown
  t.throws(() => loose.call(PaginationFilter, { orderingField: ['name'] }), { code: 'FV_ERR_UNKNOWN_STATIC', message: /PaginationFilter\.with\(orderingField\): "orderingField" is not a static of PaginationFilter/ })
})

test('detailParams without a required parameter registers on any detail path', async (t) => {
  const Loose = GenericRetrieveAPIView.with(
    {
      responseSchema: Item,
      detailParams: Type.Object({ id: Type.Optional(Type.String()) }),
      repository: new MemoryRepository<Item>()
    }
  )
  const app = await build({ views: [{ view: Loose, prefix: '/loose' }] })
  t.equal((await app.inject('/loose/1')).statusCode, 404, 'registered, and a missing row is a 404')
})

test('detailParams may name a parameter of the prefix: the view\'s or the application\'s (a nested resource)', async (t) => {
  const Comment = Type.Object({ id: Type.Integer(), slug: Type.String(), body: Type.String() })
  type CommentT = Static<typeof Comment>
  const Params = Type.Object({ slug: Type.String(), id: Type.Integer() })
  const store = () => new MemoryRepository<CommentT>({ rows: [{ id: 1, slug: 'intro', body: 'first' }] })
  const Comments = GenericRetrieveAPIView.with({ responseSchema: Comment, detailParams: Params, repository: store() })
  const app = await build({ views: [{ view: Comments, prefix: '/articles/:slug/comments' }] })
  t.same((await app.inject('/articles/intro/comments/1')).json(), { id: 1, slug: 'intro', body: 'first' }, 'both parameters select the row')
  t.equal((await app.inject('/articles/other/comments/1')).statusCode, 404, 'the parent\'s parameter is a criterion too')
  await app.close()

  const outer = Fastify({ logger: false })
  await outer.register(async (api) => { await api.register(views, { views: [{ view: Comments, prefix: '/comments' }] }) }, { prefix: '/articles/:slug' })
  await outer.ready()
  t.equal((await outer.inject('/articles/intro/comments/1')).statusCode, 200, 'the parameter in the prefix the plugin is registered under')
  await outer.close()

  await t.rejects(build({ views: [{ view: Comments, prefix: '/comments' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /requires "slug", which the path of retrieve \(\/comments\/:id\) does not have/ },
    'nowhere in the URL: refused')
})

test('custom routes given to .with(): typed handlers, installed as routes, kept when mixed again', async (t) => {
  const Query = Type.Object({ q: Type.String({ minLength: 1 }) })
  const Typed = AsyncGenericViewSet.with({
    responseSchema: Item,
    createSchema: ItemIn,
    detailParams: IdParams,
    repository: asyncRepository(new StampingRepository<Item>({ rows: [{ id: 1, name: 'Lamp', updated_at: STAMP }, { id: 2, name: 'Desk', updated_at: STAMP }] }))
  }, {}, (route) => ({
    search: route.get('/search', { schema: { querystring: Query }, responseSchema: Type.Array(Item) }, async function (request) {
      const rows = await this.repository.list({}, { orderBy: [] }, {})
      return rows.filter((row) => row.name.toLowerCase().includes(request.query.q))
    }),
    touch: route.post('/touch', { responseSchema: Type.Object({ touched: Type.Integer() }) }, function () {
      return { touched: 2 }
    }),
    reset: route.delete('/reset', {}, () => undefined),
    rename: route.put('/:id/name', { schema: { params: IdParams, body: ItemIn }, responseSchema: Item }, async function (request) {
      return await this.repository.update({ id: request.params.id }, request.body, {})
    }),
    retitle: route.patch('/:id/title', { schema: { params: IdParams, body: ItemIn }, responseSchema: Item }, async function (request) {
      return await this.repository.update({ id: request.params.id }, request.body, {})
    })
  }))
  class Stamped extends mix(ConditionalMixin, Typed) {
    static override conditional = { etag: true }
  }
  const app = await build({ views: [{ view: Typed, prefix: '/items' }, { view: Stamped, prefix: '/stamped' }] })
  t.same((await app.inject('/items/search?q=la')).json().map((row: Item) => row.id), [1], 'GET, with the query typed and validated')
  t.equal(problem(t, await app.inject('/items/search'), 400).status, 400, 'the query schema is the route\'s')
  const touched = await app.inject({ method: 'POST', url: '/items/touch' })
  t.equal(touched.statusCode, 201, 'POST answers 201')
  t.same(touched.json(), { touched: 2 })
  t.equal((await app.inject({ method: 'DELETE', url: '/items/reset' })).statusCode, 204, 'DELETE answers 204')
  t.equal((await app.inject({ method: 'PUT', url: '/items/2/name', payload: { name: 'Chair' } })).json().name, 'Chair', 'PUT, with params and body')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/2/title', payload: { name: 'Stool' } })).json().name, 'Stool', 'PATCH')
  const stamped = await app.inject('/stamped/search?q=desk')
  t.equal(stamped.statusCode, 200, 'the routes survive mixing')
  t.type(stamped.headers.etag, 'string', 'with the mixin applied over them')
  t.equal(Object.keys(Typed.prototype).length, 0, 'routes are not enumerable, as methods in a class body')

  const loose = AsyncGenericViewSet.with as unknown as (
    statics: object,
    methods: object,
    routes: (route: unknown) => object
  ) => unknown
  t.throws(() => loose.call(AsyncGenericViewSet, { responseSchema: Item }, {}, () => ({ list: () => [] })), {
    code: 'FV_ERR_UNKNOWN_STATIC',
    message: /the route "list" is named like a member of AsyncGenericViewSet; give it another name, or put an action in the methods/
  })
})

test('.with() on a subclass of the user\'s: its methods call the subclass\'s helpers', async (t) => {
  const repository = new MemoryRepository<Static<typeof Item>>({ rows: [{ id: 1, name: 'lamp', updated_at: STAMP }] })
  class Shared extends GenericViewSet.with(
    {
      responseSchema: Item,
      createSchema: Type.Object({ ...ItemIn.properties, updated_at: Type.String() }),
      detailParams: IdParams,
      repository
    }
  ) {
    shout (name: string): string { return name.toUpperCase() }
  }
  const Loud = Shared.with({}, {
    retrieve (request) {
      const row = this.repository.get({ id: request.params.id })
      return row === null ? null : { ...row, name: this.shout(row.name) }
    }
  })
  const app = await build({ views: [{ view: Loud, prefix: '/items' }] })
  t.equal((await app.inject({ method: 'GET', url: '/items/1' })).json().name, 'LAMP')
  t.equal((await app.inject({ method: 'GET', url: '/items' })).json()[0].name, 'lamp', 'the other actions are the class\'s')
  t.ok(new Loud({} as never, {} as never) instanceof Shared, 'the class built extends the subclass')
})
