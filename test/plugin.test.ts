import { test } from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, ResponseHeaders, View, ViewRouter, registerView, configureApp } from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import { buildViewRoutes } from '../lib/registration/register.js'
import { build } from './helpers.js'

class Ping extends View {
  @Get('/')
  ping () { return { pong: true } }

  @Get('/:id')
  one () { return { one: true } }
}

test('plugin entries: a class, { view, prefix, ...options }, and routers', async (t) => {
  const router = new ViewRouter({ prefix: '/v1' })
  router.registerView(Ping, { prefix: '/ping' }).registerView(Ping, { prefix: '/again' })
  const app = await build({ views: [Ping, { view: Ping, prefix: '/p', tags: ['ping'] }, router] })
  t.teardown(() => app.close())
  t.same((await app.inject('/')).json(), { pong: true }, 'a bare class registers at the root')
  t.same((await app.inject('/p')).json(), { pong: true })
  t.same((await app.inject('/p/3')).json(), { one: true })
  t.same((await app.inject('/v1/ping')).json(), { pong: true })
  t.same((await app.inject('/v1/again/1')).json(), { one: true })
})

test('a trailing slash on a prefix is normalised', async (t) => {
  const app = await build({ views: [{ view: Ping, prefix: '/slash/' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/slash')).json(), { pong: true })
  t.same((await app.inject('/slash/2')).json(), { one: true })
})

test('registration options reach every route; the route config names the view and action', async (t) => {
  const app = Fastify()
  const seen: unknown[] = []
  app.addHook('onRoute', (route) => { if (route.method === 'GET') seen.push({ url: route.url, tags: (route.schema as { tags?: string[] })?.tags, config: route.config }) })
  await app.register(views, { views: [{ view: Ping, prefix: '/t', tags: ['things'], summary: 'shared summary', bodyLimit: 10 }] })
  await app.ready()
  t.teardown(() => app.close())
  t.match(seen, [
    { url: '/t/:id', tags: ['things'], config: { view: 'Ping', action: 'one' } },
    { url: '/t', tags: ['things'], config: { view: 'Ping', action: 'ping' } }
  ], 'deeper paths register first')
})

test('registerView works on a plain Fastify instance and in encapsulated contexts', async (t) => {
  const app = Fastify()
  configureApp(app)
  await app.register(async (child) => {
    registerView(child, Ping, { prefix: '/inner' })
  }, { prefix: '/outer' })
  t.teardown(() => app.close())
  t.same((await app.inject('/outer/inner')).json(), { pong: true })
})

test('a router can register itself without the plugin', async (t) => {
  const app = Fastify()
  new ViewRouter({ prefix: '/r' }).registerView(Ping).register(app)
  t.teardown(() => app.close())
  t.same((await app.inject('/r')).json(), { pong: true })
})

test('invalid plugin entries are refused with a TypeError', async (t) => {
  for (const entry of [123, { prefix: '/x' }, class NotAView {}, null]) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(views, { views: [entry] } as unknown as FastifyViewsOptions).ready() }, { name: 'TypeError', message: /each entry of `views`/ })
  }
})

test('the plugin registers with no options', async (t) => {
  const app = Fastify()
  await app.register(views)
  t.teardown(() => app.close())
  t.equal((await app.inject('/missing')).statusCode, 404)
})

test('Override or Throws without a route decorator, on a method that is not a standard action, is refused', async (t) => {
  const { Override } = await import('../lib/index.js')
  class Stray extends APIView {
    @Override({ summary: 'nothing to override' })
    helper () { return 1 }
  }
  t.throws(() => buildViewRoutes(Stray), { name: 'TypeError', message: /Stray\.helper has @Override or @Throws but no route decorator/ })
})

test('routers keep their response headers to themselves', async (t) => {
  const Paging = ResponseHeaders.define({ x_total_count: Type.Integer() })
  const a = new ViewRouter({ prefix: '/a', responseHeaders: Paging })
  const b = new ViewRouter({ prefix: '/b' })
  a.registerView(Ping)
  b.registerView(Ping)
  t.equal(a.options.responseHeaders, Paging)
  t.equal(b.options.responseHeaders, undefined)
  const app = await build({ views: [a, b] })
  t.teardown(() => app.close())
  t.same((await app.inject('/b')).json(), { pong: true })
})

declare module 'fastify' {
  interface FastifyContextConfig { route?: boolean, router?: boolean, registration?: boolean }
}

test('hooks and config from the router, the registration and the route add up', async (t) => {
  const ran: string[] = []
  const hook = (name: string) => async () => { ran.push(name) }
  class Hooked extends View {
    @Get('/', { onRequest: hook('route'), config: { route: true } })
    get (request: import('fastify').FastifyRequest) { return request.routeOptions.config }
  }
  const router = new ViewRouter({ prefix: '/r', onRequest: hook('router'), config: { router: true } })
  router.registerView(Hooked, { onRequest: [hook('registration')], config: { registration: true } })
  const app = await build({ views: [router] })
  t.teardown(() => app.close())
  const config = (await app.inject('/r')).json()
  t.same(ran, ['router', 'registration', 'route'])
  t.match(config, { router: true, registration: true, route: true, view: 'Hooked', action: 'get' })
})

test('buildViewRoutes output registers as it is', async (t) => {
  const app = Fastify()
  for (const route of buildViewRoutes(Ping, { prefix: '/built' })) app.route(route)
  t.teardown(() => app.close())
  t.same((await app.inject('/built/3')).json(), { one: true })
})

test('a single route hook function, ResponseHeaders.apply, and the TypeBox validator compiler on a plain route', async (t) => {
  const { typeboxValidatorCompiler } = await import('../lib/index.js')
  const Paging = ResponseHeaders.define({
    x_total_count: Type.Integer(),
    x_next: Type.Optional(Type.String()),
    x_previous: Type.Union([Type.String(), Type.Null()])
  })
  class Counted extends View {
    @Get('/', { preHandler: async (request) => { (request as unknown as { seen: boolean }).seen = true } })
    get (request: import('fastify').FastifyRequest) {
      Paging.apply(this.reply, { x_total_count: 7, x_next: undefined, x_previous: null })
      return { seen: (request as unknown as { seen: boolean }).seen }
    }
  }
  const app = await build({ views: [Counted] })
  t.teardown(() => app.close())
  const res = await app.inject('/')
  t.same(res.json(), { seen: true })
  t.equal(res.headers['x-total-count'], '7')
  t.notOk('x-next' in res.headers, 'unset values are skipped')
  t.notOk('x-previous' in res.headers, 'and so are nulls')
  // A header field given as a plain JSON Schema object is refused where the route is registered, by its class and name.
  class Plain extends ResponseHeaders.define({ x_total_count: { type: 'integer' } as never }) {}
  class Listed extends View {
    @Get('/', { responseHeaders: Plain })
    get () { return {} }
  }
  await t.rejects(build({ views: [Listed] }), { code: 'FV_ERR_UNSUPPORTED_SCHEMA', message: /^Plain\.fields\.x_total_count is not a TypeBox schema/ })

  const plain = Fastify()
  plain.get('/n', { schema: { querystring: Type.Object({ n: Type.Integer() }) }, validatorCompiler: typeboxValidatorCompiler }, async (request) => request.query)
  plain.post('/b', { schema: { body: Type.Object({ n: Type.Integer() }) }, validatorCompiler: (input) => typeboxValidatorCompiler({ schema: input.schema }) }, async (request) => request.body)
  t.teardown(() => plain.close())
  t.same((await plain.inject('/n?n=5')).json(), { n: 5 })
  t.equal((await plain.inject('/n?n=1e3')).statusCode, 400)
  t.equal((await plain.inject({ method: 'POST', url: '/b', payload: { n: '5' } })).statusCode, 400, 'without a part, the body rules apply')
})

test('the plugin registered in two sibling contexts configures the app once', async (t) => {
  const app = Fastify()
  await app.register(views, { views: [{ view: Ping, prefix: '/a' }] })
  await app.register(async (child) => { await child.register(views, { views: [{ view: Ping, prefix: '/b' }] }) })
  await app.register(async (child) => { await child.register(views, { views: [{ view: Ping, prefix: '/c' }] }) })
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/c/1')).json(), { one: true })
  t.match((await app.inject('/nowhere')).headers['content-type'], /^application\/problem\+json/)
})

test('configureApp on the root after the plugin configured a child context still covers the root', async (t) => {
  const { configureApp } = await import('../lib/index.js')
  const app = Fastify()
  await app.register(async (child) => { await child.register(views, { views: [{ view: Ping, prefix: '/b' }] }) }, { prefix: '/api' })
  await app.register(async (child) => { await child.register(views, { views: [{ view: Ping, prefix: '/c' }] }) })
  app.get('/secret', async () => { throw new Error('db password hunter2') })
  configureApp(app)
  configureApp(app)
  await app.ready()
  t.teardown(() => app.close())
  const failed = await app.inject('/secret')
  t.equal(failed.statusCode, 500)
  t.match(failed.headers['content-type'], /^application\/problem\+json/, 'a root route answers problem+json')
  t.notMatch(failed.body, /hunter2/, 'and never its internal message')
  for (const url of ['/nowhere', '/api/nowhere']) {
    const missing = await app.inject(url)
    t.equal(missing.statusCode, 404, url)
    t.match(missing.headers['content-type'], /^application\/problem\+json/, `${url}: a 404 problem`)
  }
  t.same((await app.inject('/api/b/1')).json(), { one: true })
})

test('an entry of views that is neither a view, an entry object nor a router is refused, naming what was given', async (t) => {
  for (const [entry, given] of [[{ prefix: '/x' }, '{"prefix":"/x"}'], [42, '42']] as const) {
    const app = Fastify()
    await t.rejects(async () => { await app.register(views, { views: [entry] } as unknown as FastifyViewsOptions) }, { code: 'FV_ERR_VIEW_ENTRY', message: new RegExp(`got ${given.replace(/[{}]/g, '\\$&')}$`) })
    await app.close()
  }
})

test('a CRUD view needs a prefix from somewhere: its entry, its router, or the Fastify context', async (t) => {
  const { AsyncGenericViewSet, MemoryRepository, asyncRepository } = await import('../lib/generics.js')
  class Notes extends AsyncGenericViewSet {
    static override responseSchema = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(new MemoryRepository({ rows: [{ id: 1 }] })) as never
  }
  await t.rejects(build({ views: [Notes] }), { code: 'FV_ERR_NO_PREFIX' }, 'bare: refused')
  const router = new ViewRouter({ prefix: '/v1' })
  router.registerView(Notes)
  const routed = await build({ views: [router] })
  t.teardown(() => routed.close())
  t.equal((await routed.inject('/v1')).statusCode, 200, 'the router\'s prefix')
  const app = Fastify()
  await app.register(async (child) => { await child.register(views, { views: [Notes] }) }, { prefix: '/notes' })
  t.teardown(() => app.close())
  t.equal((await app.inject('/notes/1')).statusCode, 200, 'the context\'s prefix')
  const root = await build({ views: [{ view: Notes, prefix: '' }] })
  t.teardown(() => root.close())
  t.equal((await root.inject('/1')).statusCode, 200, 'prefix: \'\' is the root on purpose')

  const shared = Fastify()
  configureApp(shared)
  shared.get('/notes', async () => ({ mine: true }))
  await t.rejects(async () => { await shared.register(views, { views: [{ view: Notes, prefix: '/notes' }] }) },
    { code: 'FV_ERR_SHARED_ROUTE', message: /^Cannot register Notes: GET \/notes is already served by another route of the application/ }, 'a route of the application')
})

test('Fastify\'s own refusals of a route pass through as they are; routes added before the plugin are listed, five at most', async (t) => {
  await t.rejects(build({ views: [{ view: Ping, prefix: '/a', bodyLimit: 1.5 }] }), { code: 'FST_ERR_ROUTE_BODY_LIMIT_OPTION_NOT_INT' })
  const app = Fastify()
  for (const path of ['/a', '/b', '/c', '/d', '/e', '/f']) app.get(path, async () => 'x')
  await t.rejects(async () => { await app.register(views, { views: [] }) }, { code: 'FV_ERR_CONFIGURE_FIRST', message: /^fastify-views: 6 routes were added before the plugin \(\/a \(GET, HEAD\), .*\/e \(GET, HEAD\), \.\.\.\), so they keep Fastify's JSON errors/ })
})
