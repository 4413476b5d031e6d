// The telemetry protocol as an application's own telemetry meets it: when each observer method runs, what a
// route that nothing observes is given, several telemetries nested, hooks of the route's own, clients that leave.
import { test } from 'tap'
import { once } from 'node:events'
import { request as httpRequest } from 'node:http'
import Fastify, { type FastifyReply, type FastifyRequest, type RouteOptions } from 'fastify'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, Post, configureApp } from '../lib/index.js'
import type { ObservedRoute, RouteObserver, Telemetry } from '../lib/types.js'
import { apiKeyAuth, IsAuthenticated } from '../lib/access.js'
import { buildViewRoutes } from '../lib/registration/register.js'

const Ok = Type.Object({ ok: Type.Boolean() })

/** What a recording telemetry saw: each call, in order, with the route and what the request said. */
interface Seen { calls: string[], routes: ObservedRoute[] }

function recording (seen: Seen, name = 't', within = false): Telemetry & { attached: number, detached: number } {
  const telemetry = {
    attached: 0,
    detached: 0,
    observe (route: ObservedRoute): RouteObserver | undefined {
      seen.routes.push(route)
      if (route.action === 'ignored') return undefined
      const observer: RouteObserver = {
        start: (request: FastifyRequest) => { seen.calls.push(`${name}.start ${request.method} ${route.view}.${route.action}`) },
        error: (_request, _reply, error) => { seen.calls.push(`${name}.error ${error.message}`) },
        end: (_request, reply: FastifyReply, finished) => { seen.calls.push(`${name}.end ${reply.statusCode} ${String(finished)}`) }
      }
      if (within) {
        observer.within = (_request, fn, thisArg, ...args) => {
          seen.calls.push(`${name}.within ${fn.name}`)
          return fn.apply(thisArg, args)
        }
      }
      return observer
    },
    attach () {
      telemetry.attached++
      return () => { telemetry.detached++ }
    }
  }
  return telemetry
}

class Things extends APIView {
  @Get('/', { responseSchema: Ok }) list () { return { ok: true } }
  @Get('/ignored', { responseSchema: Ok }) ignored () { return { ok: true } }
  @Post('/', { responseSchema: Ok, schema: { body: Ok } }) create () { return { ok: true } }
  @Get('/broken', { responseSchema: Ok }) broken (): never { throw new Error('broken on purpose') }
  @Get('/slow', { responseSchema: Ok })
  async slow () {
    await new Promise((resolve) => setTimeout(resolve, 300))
    return { ok: true }
  }
}

/** The hooks Fastify is given for each route of the app, by method and url. */
function hooksOf (routes: RouteOptions[], method: string, url: string): Record<string, number> {
  const route = routes.find((r) => r.method === method && r.url === url)
  const out: Record<string, number> = {}
  for (const phase of ['onRequest', 'preValidation', 'preHandler', 'onSend', 'onResponse', 'onError'] as const) {
    const hooks = route?.[phase]
    if (hooks !== undefined) out[phase] = Array.isArray(hooks) ? hooks.length : 1
  }
  return out
}

async function app (telemetry: Telemetry | Telemetry[] | undefined) {
  const routes: RouteOptions[] = []
  const instance = Fastify({ logger: false })
  instance.addHook('onRoute', (route) => { routes.push(route) })
  configureApp(instance, telemetry === undefined ? {} : { telemetry })
  await instance.register(views, { views: [{ view: Things, prefix: '/things' }] })
  await instance.ready()
  return { app: instance, routes }
}

test('each operation is shown to the telemetry once, at registration, with names from the application only', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const { app: server } = await app(recording(seen))
  t.teardown(() => server.close())
  t.same(seen.routes.map((r) => `${r.method} ${r.route} ${r.view}.${r.action}`).sort(), [
    'GET /things Things.list', 'GET /things/broken Things.broken', 'GET /things/ignored Things.ignored',
    'GET /things/slow Things.slow', 'POST /things Things.create'
  ])
  t.ok(seen.routes.every((r) => r.stream === undefined && !r.cached), 'no stream, nothing cached')
  t.equal(seen.calls.length, 0, 'nothing runs before a request')
})

test('an observer starts first, ends once when the response is over, and hears the errors', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const { app: server } = await app(recording(seen))
  t.teardown(() => server.close())
  t.equal((await server.inject({ url: '/things' })).statusCode, 200)
  t.same(seen.calls, ['t.start GET Things.list', 't.end 200 true'])
  seen.calls.length = 0
  t.equal((await server.inject({ url: '/things/broken' })).statusCode, 500)
  t.same(seen.calls, ['t.start GET Things.broken', 't.error broken on purpose', 't.end 500 true'])
  seen.calls.length = 0
  // A validation failure is an error the route's hooks throw: heard, and ended with its 400.
  t.equal((await server.inject({ method: 'POST', url: '/things', payload: { ok: 'no' } })).statusCode, 400)
  t.match(seen.calls, ['t.start POST Things.create', /^t\.error /, 't.end 400 true'])
  seen.calls.length = 0
  t.equal((await server.inject({ method: 'HEAD', url: '/things' })).statusCode, 200)
  t.same(seen.calls, ['t.start HEAD Things.list', 't.end 200 true'], 'a HEAD is observed as its GET route, with its own method')
})

test('a route nothing observes, and an app without telemetry, get exactly the hooks they had', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const plain = await app(undefined)
  const observed = await app(recording(seen))
  t.teardown(() => Promise.all([plain.app.close(), observed.app.close()]))
  t.same(hooksOf(observed.routes, 'GET', '/things/ignored'), hooksOf(plain.routes, 'GET', '/things/ignored'), 'observe returned nothing')
  t.same(hooksOf(plain.routes, 'GET', '/things'), {}, 'a plain route without telemetry has no hook')
  t.same(hooksOf(observed.routes, 'GET', '/things'), { onRequest: 1, onError: 1 }, 'an observed one: a first onRequest and an onError')
  t.equal(observed.routes.find((r) => r.url === '/things' && r.method === 'GET')?.handler.name, 'viewRouteHandler',
    'the handler, run inside the observers, keeps its name')
  await observed.app.inject({ url: '/things/ignored' })
  t.same(seen.calls, [], 'its requests are not seen')
})

test('several telemetries: each observes, their contexts nest, the first outermost, around every hook and the handler', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const key = apiKeyAuth({ lookup: (token) => token === 'k' ? { id: 1 } as never : null })
  class Guarded extends APIView {
    static override permissions = [IsAuthenticated]
    @Get('/', { responseSchema: Ok, onResponse: function ownResponse (_request, _reply, done) { seen.calls.push('own onResponse'); done() } })
    get () { return { ok: true } }
  }
  const server = Fastify({ logger: false })
  configureApp(server, { telemetry: [recording(seen, 'a', true), recording(seen, 'b', true)], auth: { authenticators: [key] } })
  await server.register(views, { views: [{ view: Guarded, prefix: '/guarded' }] })
  t.teardown(() => server.close())
  t.equal((await server.inject({ url: '/guarded', headers: { 'x-api-key': 'k' } })).statusCode, 200)
  const calls = seen.calls
  t.equal(calls[0], 'a.start GET Guarded.get')
  t.equal(calls[1], 'b.start GET Guarded.get')
  // Each later hook and the handler: a's context entered first, then b's inside it, given the hook under its own name.
  const handler = calls.indexOf('b.within viewRouteHandler')
  t.ok(handler > 2, 'the handler runs inside b')
  t.match(calls[handler - 1], /^a\.within /, 'within a')
  t.ok(calls.includes('b.within access'), 'so does the authentication hook')
  const own = calls.indexOf('b.within ownResponse')
  t.ok(own > handler, 'the route\'s own onResponse keeps its name and runs inside too')
  t.match(calls[own - 1], /^a\.within /)
  t.ok(calls.includes('own onResponse'))
  t.same(calls.slice(-2), ['a.end 200 true', 'b.end 200 true'])
  seen.calls.length = 0
  // Refused by the authentication hook: still started first, and ended with the 401.
  t.equal((await server.inject({ url: '/guarded' })).statusCode, 401)
  t.same(seen.calls.filter((c) => !c.includes('within')).slice(0, 2), ['a.start GET Guarded.get', 'b.start GET Guarded.get'])
  t.same(seen.calls.filter((c) => c.includes('.end')), ['a.end 401 true', 'b.end 401 true'])
})

test('a client that leaves before the answer: the observer ends with finished false', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const { app: server } = await app(recording(seen))
  t.teardown(() => server.close())
  await server.listen({ port: 0, host: '127.0.0.1' })
  const { port } = server.server.address() as { port: number }
  const request = httpRequest({ port, host: '127.0.0.1', path: '/things/slow' })
  request.on('error', () => {})
  request.end()
  await once(server.server, 'request')
  request.destroy()
  for (let i = 0; i < 100 && !seen.calls.some((c) => c.startsWith('t.end')); i++) await new Promise((resolve) => setTimeout(resolve, 20))
  t.same(seen.calls, ['t.start GET Things.slow', 't.end 200 false'], 'ended once, not finished')
})

test('a telemetry is attached once per application and detached when it closes; given again, it is the same', async (t) => {
  const seen: Seen = { calls: [], routes: [] }
  const telemetry = recording(seen)
  const server = Fastify({ logger: false })
  configureApp(server, { telemetry })
  configureApp(server, { telemetry: [telemetry] })
  await server.register(views, { telemetry, views: [{ view: Things, prefix: '/things' }] })
  await server.ready()
  t.equal(telemetry.attached, 1)
  t.equal(telemetry.detached, 0)
  await server.close()
  t.equal(telemetry.detached, 1)
})

test('a telemetry without attach needs none; a single entry that is no telemetry is refused by name', async (t) => {
  let started = 0
  const counting: Telemetry = { observe: () => ({ start: () => { started++ }, end: () => {} }) }
  const { app: server, routes } = await app(counting)
  await server.inject({ url: '/things' })
  await server.close()
  t.equal(started, 1)
  t.same(hooksOf(routes, 'GET', '/things'), { onRequest: 1 }, 'no onError hook where no observer hears errors')
  t.throws(() => configureApp(Fastify(), { telemetry: { start () {} } as never }), {
    code: 'FV_ERR_TELEMETRY',
    message: /^fastify-views: telemetry is not a telemetry \(an object with observe\(route\)\)/
  })
  t.throws(() => configureApp(Fastify(), { telemetry: [counting, null as never] }), {
    code: 'FV_ERR_TELEMETRY',
    message: /^fastify-views: telemetry\[1\] is not a telemetry/
  })
  // The same telemetries again are the same; fewer, or others, are another.
  const other: Telemetry = { observe: () => undefined }
  const twice = Fastify()
  configureApp(twice, { telemetry: [counting, other] })
  t.doesNotThrow(() => configureApp(twice, { telemetry: [counting, other] }))
  t.throws(() => configureApp(twice, { telemetry: [counting] }), { code: 'FV_ERR_TELEMETRY' })
  t.throws(() => configureApp(twice, { telemetry: [counting, counting] }), { code: 'FV_ERR_TELEMETRY' })
  // Routes built without an application have no telemetry to ask.
  t.ok(buildViewRoutes(Things).every((route) => route.onRequest === undefined), 'routes built without an app: no observer')
})
