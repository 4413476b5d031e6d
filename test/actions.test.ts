import { test } from 'tap'
import { documentedSchema } from '../lib/openapi/swagger.js'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import {
  APIView, AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView, AsyncRetrieveAPIView,
  AsyncUpdateAPIView, CreateAPIView, DestroyAPIView, DetailViewMixin, Get, ListAPIView, Override,
  PartialUpdateAPIView, RetrieveAPIView, UpdateAPIView, mix, Throws, Action, AsyncAPIViewSet, APIViewSet,
  AsyncReadOnlyAPIViewSet, ReadOnlyAPIViewSet, AsyncListCreateAPIView, ListCreateAPIView,
  AsyncRetrieveUpdateDestroyAPIView, RetrieveUpdateDestroyAPIView
} from '../lib/index.js'
import { Conflict } from '../lib/errors.js'
import { buildViewRoutes } from '../lib/registration/register.js'
import { build, expectActions, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() }, { $id: 'Item' })
const ItemIn = Type.Object({ name: Type.String(), price: Type.Number({ minimum: 0 }) })
const IdParams = Type.Object({ id: Type.Integer() })
type ItemT = Static<typeof Item>

/** The two families share one runtime; the table runs every case on both. */
const families = [
  {
    name: 'async',
    wrap: <T>(value: T) => Promise.resolve(value),
    List: AsyncListAPIView,
    Create: AsyncCreateAPIView,
    Retrieve: AsyncRetrieveAPIView,
    Update: AsyncUpdateAPIView,
    PartialUpdate: AsyncPartialUpdateAPIView,
    Destroy: AsyncDestroyAPIView,
    ViewSet: AsyncAPIViewSet,
    ReadOnly: AsyncReadOnlyAPIViewSet,
    ListCreate: AsyncListCreateAPIView,
    RetrieveUpdateDestroy: AsyncRetrieveUpdateDestroyAPIView
  },
  {
    name: 'sync',
    wrap: <T>(value: T) => value,
    List: ListAPIView,
    Create: CreateAPIView,
    Retrieve: RetrieveAPIView,
    Update: UpdateAPIView,
    PartialUpdate: PartialUpdateAPIView,
    Destroy: DestroyAPIView,
    ViewSet: APIViewSet,
    ReadOnly: ReadOnlyAPIViewSet,
    ListCreate: ListCreateAPIView,
    RetrieveUpdateDestroy: RetrieveUpdateDestroyAPIView
  }
] as const

type Family = (typeof families)[number]

/** Every CRUD action implemented over a map of rows, on `Base` (by default all six actions mixed). */
function crud (family: Family, Base = mix(
  family.List,
  family.Create,
  family.Retrieve,
  family.Update,
  family.PartialUpdate,
  family.Destroy
) as unknown as typeof APIView,
initial: ItemT[] = [{ id: 1, name: 'one', price: 1 }]) {
  const rows = new Map<number, ItemT>(initial.map((row) => [row.id, { ...row }]))
  const { wrap } = family
  class Items extends Base {
    static override responseSchema = Item
    static createSchema = ItemIn
    static detailParams = IdParams
    list () { return wrap([...rows.values()]) }
    create (request: FastifyRequest<{ Body: Static<typeof ItemIn> }>) {
      if (request.body.name === 'taken') return wrap(null)
      const id = Math.max(0, ...rows.keys()) + 1
      rows.set(id, { id, ...request.body })
      return wrap(rows.get(id))
    }

    getLocation (obj: ItemT) { return `/items/${obj.id}` }
    retrieve (request: FastifyRequest<{ Params: { id: number } }>) { return wrap(rows.get(request.params.id) ?? null) }
    update (request: FastifyRequest<{ Params: { id: number }, Body: Static<typeof ItemIn> }>) {
      const row = rows.get(request.params.id)
      if (row === undefined) return wrap(null)
      Object.assign(row, request.body)
      return wrap(row)
    }

    partialUpdate (request: FastifyRequest<{ Params: { id: number }, Body: Partial<Static<typeof ItemIn>> }>) {
      const row = rows.get(request.params.id)
      if (row === undefined) return wrap(undefined)
      Object.assign(row, request.body)
      return wrap(row)
    }

    destroy (request: FastifyRequest<{ Params: { id: number } }>) {
      return wrap(
        rows.delete(request.params.id) ? true : null
      )
    }
  }
  return { Items, rows }
}

/** The ready-made abstract viewsets of each family, with the actions each composes. */
const VIEWSETS: Array<{ name: string, Base: (f: Family) => unknown, actions: string[] }> = [
  { name: 'full viewset', Base: (f) => f.ViewSet, actions: ['list', 'create', 'retrieve', 'update', 'partialUpdate', 'destroy'] },
  { name: 'read-only viewset', Base: (f) => f.ReadOnly, actions: ['list', 'retrieve'] },
  { name: 'list-create view', Base: (f) => f.ListCreate, actions: ['list', 'create'] },
  { name: 'retrieve-update-destroy view', Base: (f) => f.RetrieveUpdateDestroy, actions: ['retrieve', 'update', 'partialUpdate', 'destroy'] }
]

for (const family of families) {
  test(`${family.name}: every CRUD action with its seed status`, async (t) => {
    const { Items, rows } = crud(family)
    const app = await build({ views: [{ view: Items, prefix: '/items' }] })
    t.teardown(() => app.close())

    t.same((await app.inject('/items')).json(), [{ id: 1, name: 'one', price: 1 }], 'list: 200 array')

    const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'two', price: 2 } })
    t.equal(created.statusCode, 201, 'create: 201')
    t.equal(created.headers.location, '/items/2', 'getLocation sets Location')
    t.same(created.json(), { id: 2, name: 'two', price: 2 })
    t.equal(problem(t, await app.inject({ method: 'POST', url: '/items', payload: { name: 'taken', price: 2 } }), 409).title, 'Conflict', 'create returning null: 409')

    t.same((await app.inject('/items/2')).json(), { id: 2, name: 'two', price: 2 }, 'retrieve: 200')
    const missing = problem(t, await app.inject('/items/99'), 404)
    t.equal(missing.detail, 'Item does not exist', 'errorMessage formatted with the component name')

    const put = await app.inject({ method: 'PUT', url: '/items/2', payload: { name: 'deux', price: 3 } })
    t.equal(put.statusCode, 200)
    t.same(put.json(), { id: 2, name: 'deux', price: 3 })
    problem(t, await app.inject({ method: 'PUT', url: '/items/99', payload: { name: 'x', price: 1 } }), 404)
    problem(t, await app.inject({ method: 'PUT', url: '/items/2', payload: { name: 'x' } }), 400)

    const patch = await app.inject({ method: 'PATCH', url: '/items/2', payload: { price: 4 } })
    t.same(patch.json(), { id: 2, name: 'deux', price: 4 }, 'partialUpdate: only the fields sent')
    problem(t, await app.inject({ method: 'PATCH', url: '/items/99', payload: {} }), 404)
    problem(t, await app.inject({ method: 'PATCH', url: '/items/2', payload: { price: -1 } }), 400)

    const del = await app.inject({ method: 'DELETE', url: '/items/2' })
    t.equal(del.statusCode, 204)
    t.equal(del.body, '')
    problem(t, await app.inject({ method: 'DELETE', url: '/items/2' }), 404)
    t.equal(rows.size, 1)

    const bad = problem(t, await app.inject('/items/abc'), 400)
    t.same(bad.errors, [{ detail: 'Expected integer', pointer: '#/id', in: 'path', parameter: 'id' }], 'the id is typed by detailParams')
  })

  test(`${family.name}: subsets register only their verbs`, async (t) => {
    class ReadOnly extends (mix(family.List, family.Retrieve) as unknown as typeof APIView) {
      static override responseSchema = Item
      list () { return family.wrap([]) }
      retrieve () { return family.wrap({ id: 1, name: 'r', price: 0 }) }
    }
    const app = await build({ views: [{ view: ReadOnly, prefix: '/ro' }] })
    t.teardown(() => app.close())
    t.equal((await app.inject('/ro')).statusCode, 200)
    t.equal((await app.inject('/ro/1')).statusCode, 200)
    const post = await app.inject({ method: 'POST', url: '/ro', payload: {} })
    t.equal(problem(t, post, 405).detail, '/ro does not take POST; it takes GET, HEAD, OPTIONS.', 'no create route')
    t.equal(post.headers.allow, 'GET, HEAD, OPTIONS')
    const remove = await app.inject({ method: 'DELETE', url: '/ro/1' })
    t.equal(problem(t, remove, 405).detail, '/ro/1 does not take DELETE; it takes GET, HEAD, OPTIONS.', 'no destroy route')
    t.equal(remove.headers.allow, 'GET, HEAD, OPTIONS')
  })

  test(`${family.name}: returnOnCreate and returnOnUpdate false keep the status with an empty body`, async (t) => {
    const { Items } = crud(family)
    class Quiet extends Items {
      static returnOnCreate = false
      static returnOnUpdate = false
    }
    const app = await build({ views: [{ view: Quiet, prefix: '/q' }] })
    t.teardown(() => app.close())
    for (const [method, url, status] of [['POST', '/q', 201], ['PUT', '/q/1', 200], ['PATCH', '/q/1', 200]] as const) {
      const res = await app.inject({ method, url, payload: { name: 'n', price: 1 } })
      t.equal(res.statusCode, status, `${method} keeps ${status}`)
      t.equal(res.body, '', `${method} has an empty body`)
      t.equal(res.headers['content-type'], undefined, `${method} has no content type`)
    }
    t.equal((await app.inject({ method: 'POST', url: '/q', payload: { name: 'n', price: 1 } })).headers.location, '/items/3', 'Location is still sent')
  })

  test(`${family.name}: raiseOnNone false and a custom errorMessage`, async (t) => {
    class Lenient extends (family.Retrieve as unknown as typeof APIView) {
      static override responseSchema = Item
      static raiseOnNone = false
      retrieve () { return family.wrap(null) }
    }
    class Worded extends (family.Retrieve as unknown as typeof APIView) {
      static override apiComponentName = 'Widget'
      static errorMessage = 'No {} here'
      retrieve () { return family.wrap(null) }
    }
    const app = await build({ views: [{ view: Lenient, prefix: '/l' }, { view: Worded, prefix: '/w' }] })
    t.teardown(() => app.close())
    const lenient = await app.inject('/l/1')
    t.equal(lenient.statusCode, 200)
    t.equal(lenient.body, '')
    t.equal(problem(t, await app.inject('/w/1'), 404).detail, 'No Widget here')
  })

  test(`${family.name}: the ready-made viewsets answer their verbs and only theirs`, async (t) => {
    for (const { name, Base, actions } of VIEWSETS) {
      const Composed = Base(family) as typeof APIView
      await t.rejects(build({ views: [Composed] }), { name: 'TypeError', message: new RegExp(`^Cannot register ${Composed.name}: it is abstract, action method "(${actions.join('|')})" is not implemented$`) }, `${name}: abstract until implemented`)
      // The same six implementations on every composition: those it does not compose stay unrouted.
      const { Items, rows } = crud(family, Composed, [{ id: 1, name: 'one', price: 1 }, { id: 2, name: 'two', price: 2 }])
      const app = await build({ views: [{ view: Items, prefix: '/v' }] })
      t.teardown(() => app.close())
      const res = await expectActions(t, app, '/v', actions)
      if (actions.includes('list')) t.same(res.list.json().map((i: ItemT) => i.id), [1, 2], `${name}: list`)
      if (actions.includes('create')) {
        t.same(res.create.json(), { id: 3, name: 'created', price: 1 }, `${name}: create`)
        t.equal(res.create.headers.location, '/items/3', `${name}: Location`)
      }
      if (actions.includes('retrieve')) t.same(res.retrieve.json().id, 1, `${name}: retrieve`)
      if (actions.includes('update')) t.same(res.update.json(), { id: 1, name: 'put', price: 2 }, `${name}: update`)
      if (actions.includes('partialUpdate')) t.same(res.partialUpdate.json(), { id: 1, name: 'put', price: 7 }, `${name}: partialUpdate keeps the name`)
      t.equal(rows.has(2), !actions.includes('destroy'), `${name}: row 2 ${actions.includes('destroy') ? 'destroyed' : 'kept'}`)
      t.equal(rows.get(1)!.price, actions.includes('partialUpdate') ? 7 : 1, `${name}: row 1 ${actions.includes('partialUpdate') ? 'changed' : 'untouched'}`)
    }
  })

  test(`${family.name}: responseSchemaAsList false lets list return an envelope`, async (t) => {
    const Page = Type.Object({ items: Type.Array(Item), total: Type.Integer() })
    class Enveloped extends (family.List as unknown as typeof APIView) {
      static override responseSchema = Page
      static responseSchemaAsList = false
      list () { return family.wrap({ items: [{ id: 1, name: 'one', price: 1, secret: 'x' }], total: 1 }) }
    }
    class Listed extends (family.List as unknown as typeof APIView) {
      static override responseSchema = Item
      list () { return family.wrap([{ id: 1, name: 'one', price: 1, secret: 'x' }]) }
    }
    const app = await build({ views: [{ view: Enveloped, prefix: '/e' }, { view: Listed, prefix: '/l' }] })
    t.teardown(() => app.close())
    t.same((await app.inject('/e')).json(), { items: [{ id: 1, name: 'one', price: 1 }], total: 1 }, 'serialized by the envelope schema')
    t.same((await app.inject('/l')).json(), [{ id: 1, name: 'one', price: 1 }], 'the default: an array of responseSchema')
    const schemas = Object.fromEntries([Enveloped, Listed].map((v) => [v.name, (buildViewRoutes(v)[0].schema as { response: Record<string, { type: string }> }).response['200'].type]))
    t.same(schemas, { Enveloped: 'object', Listed: 'array' }, 'the documented 200 follows responseSchemaAsList')
  })

  test(`${family.name}: getDetailRoute varies the detail path per action; custom routes coexist`, async (t) => {
    class Slugged extends (mix(family.Retrieve, family.Destroy) as unknown as typeof APIView) {
      static detailParams = Type.Object({ slug: Type.String({ pattern: '^[a-z-]+$' }) })
      static override getDetailRoute (action: string): string {
        return action === 'destroy' ? '/:slug/remove' : '/:slug'
      }

      retrieve (request: FastifyRequest<{ Params: { slug: string } }>) {
        return family.wrap(
          { slug: request.params.slug }
        )
      }

      destroy () { return family.wrap(true) }

      @Get('/stats')
      stats () { return { stats: true } }
    }
    const app = await build({ views: [{ view: Slugged, prefix: '/s' }] })
    t.teardown(() => app.close())
    t.same(buildViewRoutes(Slugged).map((r) => `${String(r.method)} ${r.url}`).sort(), ['DELETE /:slug/remove', 'GET /:slug', 'GET /stats'])
    t.same((await app.inject('/s/hello-world')).json(), { slug: 'hello-world' })
    t.same((await app.inject('/s/stats')).json(), { stats: true }, 'a static route is not shadowed by /:slug')
    const removed = await app.inject({ method: 'DELETE', url: '/s/abc/remove' })
    t.equal(removed.statusCode, 204)
    t.equal(removed.body, '')
    const notHere = await app.inject({ method: 'DELETE', url: '/s/abc' })
    t.equal(problem(t, notHere, 405).detail, '/s/abc does not take DELETE; it takes GET, HEAD, OPTIONS.', 'destroy is not on /:slug')
    t.equal(notHere.headers.allow, 'GET, HEAD, OPTIONS', '/:slug is served by retrieve only')
    t.equal((await app.inject('/s/abc/remove')).headers.allow, 'DELETE, OPTIONS', '/:slug/remove is served by destroy only')
    t.match(problem(t, await app.inject('/s/NOT_OK'), 400).errors, [{ in: 'path', parameter: 'slug', pointer: '#/slug' }])
  })

  test(`${family.name}: a static detailRoute moves every detail action and detail custom route`, async (t) => {
    const rows = new Map<string, { slug: string, title: string }>([['hello', { slug: 'hello', title: 'Hello' }]])
    class BySlug extends (mix(
      family.Retrieve,
      family.Update,
      family.PartialUpdate,
      family.Destroy
    ) as unknown as typeof APIView) {
      static override detailRoute = '/:slug'
      static detailParams = Type.Object({ slug: Type.String({ pattern: '^[a-z]+$' }) })
      static createSchema = Type.Object({ title: Type.String() })
      static override apiComponentName = 'Post'

      retrieve (request: FastifyRequest<{ Params: { slug: string } }>) {
        return family.wrap(
          rows.get(request.params.slug) ?? null
        )
      }

      update (request: FastifyRequest<{ Params: { slug: string }, Body: { title: string } }>) {
        const row = rows.get(request.params.slug)
        return family.wrap(row === undefined ? null : Object.assign(row, request.body))
      }

      partialUpdate (request: FastifyRequest<{ Params: { slug: string }, Body: { title?: string } }>) {
        const row = rows.get(request.params.slug)
        return family.wrap(row === undefined ? null : Object.assign(row, request.body))
      }

      destroy (request: FastifyRequest<{ Params: { slug: string } }>) {
        return family.wrap(
          rows.delete(request.params.slug) ? true : null
        )
      }

      @Action('/publish', { methods: ['POST'], detail: true })
      publish (request: FastifyRequest) { return { published: (request.params as { slug: string }).slug } }
    }
    t.same(buildViewRoutes(BySlug).map((r) => `${String(r.method)} ${r.url}`).sort(),
      ['DELETE /:slug', 'GET /:slug', 'PATCH /:slug', 'POST /:slug/publish', 'PUT /:slug'], 'every detail path is under /:slug')
    const app = await build({ views: [{ view: BySlug, prefix: '/posts' }] })
    t.teardown(() => app.close())
    t.same((await app.inject('/posts/hello')).json(), { slug: 'hello', title: 'Hello' })
    t.same((await app.inject({ method: 'PUT', url: '/posts/hello', payload: { title: 'Hi' } })).json(), { slug: 'hello', title: 'Hi' })
    t.same((await app.inject({ method: 'PATCH', url: '/posts/hello', payload: {} })).json(), { slug: 'hello', title: 'Hi' })
    t.same((await app.inject({ method: 'POST', url: '/posts/hello/publish' })).json(), { published: 'hello' })
    t.match(problem(t, await app.inject('/posts/Hello1'), 400).errors, [{ in: 'path', parameter: 'slug', pointer: '#/slug' }], 'the slug is validated by detailParams')
    t.equal(problem(t, await app.inject('/posts/nope'), 404).detail, 'Post does not exist')
    t.equal((await app.inject({ method: 'DELETE', url: '/posts/hello' })).statusCode, 204)
    problem(t, await app.inject({ method: 'DELETE', url: '/posts/hello' }), 404)
    t.equal(rows.size, 0)
  })
}

test('an abstract view (an action left unimplemented) is a TypeError naming view and method', async (t) => {
  class HalfDone extends mix(AsyncListAPIView, AsyncRetrieveAPIView) {
    override async list () { return [] }
  }
  await t.rejects(build({ views: [HalfDone] }), { name: 'TypeError', message: 'Cannot register HalfDone: it is abstract, action method "retrieve" is not implemented' })
  await t.rejects(build({ views: [AsyncListAPIView] }), { name: 'TypeError', message: /Cannot register AsyncListAPIView: .*"list"/ })
})

test('Override changes a standard action; the outer decorator wins on scalars', async (t) => {
  class Items extends AsyncCreateAPIView {
    static override responseSchema = Item
    static override createSchema = ItemIn

    // Decorators apply bottom-up: the upper one is applied last, so it is the outer one.
    @Override({ statusCode: 200, summary: 'outer' })
    @Override({ summary: 'inner', tags: ['items'] })
    override async create () { return { id: 1, name: 'n', price: 1 } }
  }
  const app = await build({ views: [{ view: Items, prefix: '' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/', payload: { name: 'n', price: 1 } })
  t.equal(res.statusCode, 200, 'statusCode from Override')
  const [route] = buildViewRoutes(Items)
  t.match(route.schema, { summary: 'outer', tags: ['items'] }, 'the outer summary wins; the inner tags stay')
})

test('mix: first argument wins, shared mixins apply once, and mixed classes mix again', async (t) => {
  const ReadWrite = mix(AsyncListAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView)
  const chain: string[] = []
  for (let proto = Object.getPrototypeOf(ReadWrite.prototype); proto !== null; proto = Object.getPrototypeOf(proto)) {
    chain.push(proto.constructor.name)
  }
  t.equal(chain.filter((n) => n === 'DetailViewMixin').length, 1, 'DetailViewMixin once')
  t.ok(chain.indexOf('DetailViewMixin') > chain.findIndex((n) => n.length === 0 || n !== 'DetailViewMixin'), 'below the actions')
  t.same(ReadWrite.standardActions().map((a) => a.name), ['update', 'retrieve', 'list'])
  const Again = mix(AsyncCreateAPIView, ReadWrite)
  t.same(Again.standardActions().map((a) => a.name), ['update', 'retrieve', 'list', 'create'])
  t.equal(DetailViewMixin.raiseOnNone, true)
  t.throws(() => mix(APIView as never), { name: 'TypeError', message: /mix\(\) combines mixin classes/ })
  t.throws(() => mix(null as never), { name: 'TypeError' })
})

test('the same action mixed in twice is one route', async (t) => {
  // Both families at once cannot type one method; the runtime still makes one route.
  class Twice extends (mix(AsyncListAPIView, ListAPIView) as unknown as typeof APIView) {
    list () { return [] }
  }
  const app = await build({ views: [{ view: Twice, prefix: '' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/')).statusCode, 200)
})

test('body schemas: partialUpdateSchema wins; without create or update schemas bodies are not validated', async (t) => {
  class Explicit extends mix(AsyncCreateAPIView, AsyncPartialUpdateAPIView) {
    static override partialUpdateSchema = Type.Object({ price: Type.Number() })
    override async create (request: FastifyRequest) { return request.body as object }
    override async partialUpdate (request: FastifyRequest) { return request.body as object }
  }
  const app = await build({ views: [{ view: Explicit, prefix: '' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/', payload: { anything: 1 } })).json(), { anything: 1 }, 'no createSchema: any JSON body')
  problem(t, await app.inject({ method: 'PATCH', url: '/1', payload: { name: 'x' } }), 400)
  t.same((await app.inject({ method: 'PATCH', url: '/1', payload: { price: 2 } })).json(), { price: 2 })
  class NoSchemas extends AsyncPartialUpdateAPIView {
    override async partialUpdate (request: FastifyRequest) { return request.body as object }
  }
  const app2 = await build({ views: [{ view: NoSchemas, prefix: '' }] })
  t.teardown(() => app2.close())
  t.same((await app2.inject({ method: 'PATCH', url: '/1', payload: { free: true } })).json(), { free: true })
})

test('an abstract action placeholder refuses to run if called directly', async (t) => {
  const view = new (AsyncListAPIView as unknown as new (...a: unknown[]) => { list: () => unknown })({}, {})
  t.throws(() => view.list(), { name: 'TypeError', message: /^AsyncListAPIView\.list is not implemented/ })
})

test('Override can add request schemas to a standard action; Throws and Override stack in either order', async (t) => {
  const Query = Type.Object({ expand: Type.Optional(Type.Boolean()) })
  class Stacked extends mix(AsyncRetrieveAPIView, AsyncListAPIView)<{
    params: { id: number },
    query: { expand?: boolean }
  }> {
    static override detailParams = IdParams
    @Override({ schema: { querystring: Query } })
    @Throws(Conflict)
    override async retrieve (
      request: FastifyRequest<{ Params: { id: number }, Querystring: { expand?: boolean } }>
    ) { return { id: request.params.id, expand: request.query.expand ?? false } }

    @Throws(Conflict)
    @Override({ summary: 'Everything' })
    override async list () { return [] }
  }
  const app = await build({ views: [{ view: Stacked, prefix: '' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/3?expand=true')).json(), { id: 3, expand: true }, 'params from detailParams and query from Override, both validated')
  problem(t, await app.inject('/3?expand=maybe'), 400)
  const routes = buildViewRoutes(Stacked)
  const retrieve = routes.find((r) => r.config?.action === 'retrieve')!
  const list = routes.find((r) => r.config?.action === 'list')!
  // Error statuses are documented (documentedSchema), not served by Fastify.
  t.ok(documentedSchema(retrieve.schema as { response: Record<string, unknown> }).response['409'])
  t.match(documentedSchema(list.schema), { summary: 'Everything', response: { 409: {} } })
})

test('the default getLocation sends no Location', async (t) => {
  const view = new (AsyncCreateAPIView as unknown as new (...a: unknown[]) => {
    getLocation: (o: object) => unknown
  })({}, {})
  t.equal(view.getLocation({ id: 1 }), undefined)
})

test('204 without a body: a create with returnOnCreate = false may answer it, and a custom route without a response schema', async (t) => {
  const { GenericViewSet, MemoryRepository } = await import('../lib/generics.js')
  const { Override, Post } = await import('../lib/index.js')
  const { Type } = await import('@sinclair/typebox')
  class Notes extends GenericViewSet {
    static override repository = new MemoryRepository({ rows: [{ id: 1 }] }) as never
    static override responseSchema = Type.Object({ id: Type.Integer() })
    static override createSchema = Type.Object({ id: Type.Integer() })
    static override returnOnCreate = false
    @Override({ statusCode: 204 })
    override create (request: FastifyRequest) { return super.create(request) }

    @Post('/touch', { statusCode: 204 })
    touch () { return { ignored: true } }
  }
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/notes', payload: { id: 2 } })
  t.equal(created.statusCode, 204)
  t.equal(created.body, '')
  const touched = await app.inject({ method: 'POST', url: '/notes/touch' })
  t.same([touched.statusCode, touched.body], [204, ''], 'the class responseSchema is no schema of a 204 route')
})
