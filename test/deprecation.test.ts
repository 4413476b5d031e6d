// Deprecated routes (a route feature): Deprecation (RFC 9745) and Sunset (RFC 8594) on every answer,
// `deprecated: true` in the document, on a route, a registration entry or a router.
import { test } from 'tap'
import Fastify, { type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, Override, Post, ViewRouter, configureApp } from '../lib/index.js'
import { NotFound } from '../lib/errors.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { problem } from './helpers.js'

const SINCE = '2026-11-01T00:00:00Z'
const SUNSET = '2027-06-30T00:00:00Z'
const Pong = Type.Object({ pong: Type.Boolean() })

class Legacy extends APIView {
  @Get('/ping', { responseSchema: Pong, deprecation: { since: SINCE, sunset: SUNSET, link: 'https://example.com/migrate' } })
  ping () { return { pong: true } }

  @Get('/missing', { responseSchema: Pong, deprecation: { since: new Date(SINCE) } })
  missing (): never { throw new NotFound() }

  @Post('/current', { statusCode: 200, responseSchema: Pong })
  current () { return { pong: true } }
}

type Operation = { deprecated?: boolean, responses: Record<string, { headers?: Record<string, unknown> }> }
type Doc = { paths: Record<string, Record<string, Operation>> }

test('a deprecated route: Deprecation, Sunset and Link on every answer, a refusal included; the document marks it', async (t) => {
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'Legacy', version: '1.0.0' } }))
  await app.register(views, { views: [Legacy] })
  t.teardown(() => app.close())
  const ping = await app.inject('/ping')
  t.equal(ping.statusCode, 200)
  t.equal(ping.headers.deprecation, `@${Date.parse(SINCE) / 1000}`, 'Deprecation: the date as seconds since the epoch (RFC 9745 §2.1)')
  t.equal(ping.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', 'Sunset: an HTTP-date (RFC 8594 §3)')
  t.equal(ping.headers.link, '<https://example.com/migrate>; rel="deprecation"', 'Link: where it is explained (RFC 9745 §3)')
  const missing = await app.inject('/missing')
  problem(t, missing, 404)
  t.equal(missing.headers.deprecation, `@${Date.parse(SINCE) / 1000}`, 'a refusal carries it too; a Date is taken as given')
  t.equal(missing.headers.sunset, undefined, 'no Sunset without a date')
  t.equal(missing.headers.link, undefined, 'no Link without one')
  const head = await app.inject({ method: 'HEAD', url: '/ping' })
  t.equal(head.headers.deprecation, `@${Date.parse(SINCE) / 1000}`, 'HEAD too')
  const current = await app.inject({ method: 'POST', url: '/current' })
  t.equal(current.headers.deprecation, undefined, 'a route that is not deprecated says nothing')
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  t.equal(doc.paths['/ping'].get.deprecated, true, 'deprecated: true in the document')
  t.same(Object.keys(doc.paths['/ping'].get.responses['200'].headers ?? {}).sort(), ['deprecation', 'link', 'sunset'], 'its headers documented')
  t.same(Object.keys(doc.paths['/missing'].get.responses['200'].headers ?? {}), ['deprecation'], 'only the headers it sends')
  t.equal(doc.paths['/current'].post.deprecated, undefined, 'the others are not')
})

test('a whole view deprecated by its registration entry or its router; one action of a generic view through Override', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
  class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = Type.Object({ name: Type.String() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(new MemoryRepository<{ id: number, name: string }>({ rows: [{ id: 1, name: 'lamp' }] })) as never

    @Override({ deprecation: { since: SINCE } })
    override async destroy (request: FastifyRequest) { return await super.destroy(request as never) } // the request the route's schemas validated
  }
  class Health extends APIView {
    @Get('/health', { responseSchema: Pong }) health () { return { pong: true } }
  }
  const app = Fastify()
  configureApp(app)
  await app.register(views, {
    views: [
      { view: Items, prefix: '/items' },
      { view: Items, prefix: '/old-items', deprecation: { since: SINCE, sunset: SUNSET } },
      new ViewRouter({ prefix: '/v1', deprecation: { since: SINCE } }).registerView(Health)
    ]
  })
  t.teardown(() => app.close())
  t.equal((await app.inject('/items/1')).headers.deprecation, undefined, 'retrieve is not deprecated')
  t.equal((await app.inject({ method: 'DELETE', url: '/items/1' })).headers.deprecation, `@${Date.parse(SINCE) / 1000}`, 'destroy is, through Override')
  for (const [method, url] of [['GET', '/old-items'], ['GET', '/old-items/1'], ['POST', '/old-items']] as const) {
    const res = await app.inject({ method, url, payload: method === 'POST' ? { name: 'desk' } : undefined })
    t.equal(res.headers.sunset, 'Wed, 30 Jun 2027 00:00:00 GMT', `${method} ${url}: every route of the entry`)
  }
  t.equal((await app.inject('/v1/health')).headers.deprecation, `@${Date.parse(SINCE) / 1000}`, 'every route of the router')
})

test('a date that is no date is refused when the view is registered, naming the route and the fix', async (t) => {
  class Typo extends APIView {
    @Get('/x', { deprecation: { since: '2026-13-45' } }) x () { return {} }
  }
  await t.rejects(async () => {
    const app = Fastify()
    await app.register(views, { views: [Typo] })
    await app.ready()
  }, { code: 'FV_ERR_DEPRECATION', message: /^Cannot register Typo: Typo\.x has deprecation\.since "2026-13-45", which is not a date: give a Date or an ISO 8601 date/ })
})
