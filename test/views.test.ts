import { test } from 'tap'
import { documentedSchema } from '../lib/openapi/swagger.js'
import { Type } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Action, APIView, Delete, Get, Patch, Post, Put, Route, View, extendContribution } from '../lib/index.js'
import type { RouteContribution, RouteDefinition, ViewRequest } from '../lib/types.js'
import { build, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
const IdParams = Type.Object({ id: Type.Integer() })
const StringId = Type.Object({ id: Type.String() })

declare module 'fastify' {
  interface FastifyInstance { greeting: string }
}

class Things extends View {
  static seen: View[] = []

  @Get('/')
  list () {
    Things.seen.push(this)
    return [{ id: 1, name: 'a', secret: 'dropped by the schema' }]
  }

  @Get('/text')
  text () { return 'plain words' }

  @Get('/bytes')
  bytes () { return Buffer.from('raw bytes') }

  @Get('/raw')
  raw () {
    return this.reply.code(202).header('x-raw', '1').type('application/json').send('{"hand":"made"}')
  }

  @Get('/raw-async')
  async rawAsync () {
    this.reply.code(203).send({ later: true })
    return this.reply
  }

  @Get('/greet')
  greet () { return this.server.greeting }

  @Get('/:id', { schema: { params: IdParams }, responseSchema: Item })
  async one (request: ViewRequest<{ params: typeof IdParams }>) {
    return { id: request.params.id, name: 'one', extra: true }
  }

  @Post('/')
  create () { return { created: true } }

  @Put('/:id')
  replace () { return { replaced: true } }

  @Patch('/:id')
  change () { return { changed: true } }

  @Delete('/:id')
  remove () { return { ignored: 'a 204 has no body' } }

  @Route('/multi', { methods: ['GET', 'POST'] })
  multi (request: FastifyRequest) { return { method: request.method } }

  @Route('/default-get')
  defaultGet () { return { ok: true } }

  @Action()
  statsSummary () { return { action: 'list-level' } }

  @Action('custom-path', { methods: ['POST'], statusCode: 202 })
  doSomething () { return { custom: true } }

  @Action(undefined, { detail: true, schema: { params: StringId } })
  history (request: ViewRequest<{ params: typeof StringId }>) { return { history: request.params.id } }

  @Get('/nothing')
  nothing () { return undefined }
}

test('View routes come from the decorators with the seed default statuses', async (t) => {
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())

  const list = await app.inject('/things')
  t.equal(list.statusCode, 200)
  t.same(list.json(), [{ id: 1, name: 'a', secret: 'dropped by the schema' }], 'a View without schema serializes as JSON')

  const one = await app.inject('/things/7')
  t.equal(one.statusCode, 200)
  t.same(one.json(), { id: 7, name: 'one' }, 'the route response schema serializes (unknown keys dropped)')

  t.equal((await app.inject({ method: 'POST', url: '/things' })).statusCode, 201, 'Post defaults to 201')
  t.equal((await app.inject({ method: 'PUT', url: '/things/1' })).statusCode, 200, 'Put defaults to 200')
  t.equal((await app.inject({ method: 'PATCH', url: '/things/1' })).statusCode, 200, 'Patch defaults to 200')
  const del = await app.inject({ method: 'DELETE', url: '/things/1' })
  t.equal(del.statusCode, 204, 'Delete defaults to 204')
  t.equal(del.body, '', '204 has no body')

  t.same((await app.inject('/things/multi')).json(), { method: 'GET' })
  t.same((await app.inject({ method: 'POST', url: '/things/multi' })).json(), { method: 'POST' }, 'Route takes several methods, 200 by default')
  t.equal((await app.inject({ method: 'POST', url: '/things/multi' })).statusCode, 200)
  t.same((await app.inject('/things/default-get')).json(), { ok: true }, 'Route defaults to GET')
  // The path is served by /default-get's GET, and by /:id's PUT, PATCH and DELETE: not with POST.
  const notAllowed = await app.inject({ method: 'POST', url: '/things/default-get' })
  t.equal(problem(t, notAllowed, 405).detail, '/things/default-get does not take POST; it takes GET, HEAD, PUT, PATCH, DELETE, OPTIONS.', 'Route defaults to GET only')
  t.equal(notAllowed.headers.allow, 'GET, HEAD, PUT, PATCH, DELETE, OPTIONS')
})

test('Action: hyphenated default path, custom path and methods, detail nesting', async (t) => {
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/things/stats-summary')).json(), { action: 'list-level' })
  const custom = await app.inject({ method: 'POST', url: '/things/custom-path' })
  t.equal(custom.statusCode, 202)
  t.same(custom.json(), { custom: true })
  t.same((await app.inject('/things/42/history')).json(), { history: '42' }, 'detail: true nests under /:id')
})

test('return values: text, bytes, a reply passed through, nothing', async (t) => {
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())

  const text = await app.inject('/things/text')
  t.equal(text.headers['content-type'], 'text/plain; charset=utf-8')
  t.equal(text.body, 'plain words')

  const bytes = await app.inject('/things/bytes')
  t.equal(bytes.headers['content-type'], 'text/plain; charset=utf-8', 'a Buffer is sent as text/plain')
  t.equal(bytes.body, 'raw bytes')

  const raw = await app.inject('/things/raw')
  t.equal(raw.statusCode, 202, 'a returned reply passes through untouched')
  t.equal(raw.headers['x-raw'], '1')
  t.equal(raw.body, '{"hand":"made"}')

  const rawAsync = await app.inject('/things/raw-async')
  t.equal(rawAsync.statusCode, 203)
  t.same(rawAsync.json(), { later: true })

  const nothing = await app.inject('/things/nothing')
  t.equal(nothing.statusCode, 200)
  t.equal(nothing.body, '')
  t.equal(nothing.headers['content-type'], undefined, 'an empty body has no content type')
})

test('each request gets its own view instance with request, reply and server', async (t) => {
  Things.seen = []
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  app.decorate('greeting', 'hello')
  await app.inject('/things')
  await app.inject('/things')
  t.equal(Things.seen.length, 2)
  t.not(Things.seen[0], Things.seen[1], 'a fresh instance per request')
  t.ok(Things.seen[0].request, 'this.request is set')
  t.ok(Things.seen[0].reply, 'this.reply is set')
  t.equal(Things.seen[0].server, Things.seen[0].request.server)
  t.equal((await app.inject('/things/greet')).body, 'hello', 'server decorations reach the view through this.server')
})

class Repo {
  readonly rows = new Map([[1, { id: 1, name: 'from the repo' }]])
  find (id: number) { return this.rows.get(id) ?? null }
}

declare module 'fastify' {
  interface FastifyInstance { repo: Repo }
}

class WithConstructor extends APIView {
  static override responseSchema = Item
  readonly repo: Repo

  constructor (request: FastifyRequest, reply: FastifyReply) {
    super(request, reply)
    this.repo = request.server.repo
  }

  @Get('/:id', { schema: { params: IdParams } })
  one (request: ViewRequest<{ params: typeof IdParams }>) {
    return this.repo.find(request.params.id) ?? this.reply.code(404).send()
  }
}

test('a view that needs a service overrides the constructor and reads it off the server', async (t) => {
  const app = await build({ views: [{ view: WithConstructor, prefix: '/repo' }] })
  t.teardown(() => app.close())
  app.decorate('repo', new Repo())
  t.same((await app.inject('/repo/1')).json(), { id: 1, name: 'from the repo' })
  t.equal((await app.inject('/repo/2')).statusCode, 404)
})

class Ordered extends View {
  @Get('/:id', { schema: { params: StringId } })
  byId (request: ViewRequest<{ params: typeof StringId }>) { return { route: 'id', id: request.params.id } }

  @Get('/*')
  wildcard () { return { route: 'wildcard' } }

  @Get('/stats')
  stats () { return { route: 'stats' } }

  @Get('/:id/parts/latest')
  latest () { return { route: 'latest' } }

  @Get('/:id/parts/:part')
  part () { return { route: 'part' } }
}

test('routes register most-specific-first: a static path is never shadowed', async (t) => {
  const app = await build({ views: [{ view: Ordered, prefix: '/o' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/o/stats')).json(), { route: 'stats' })
  t.same((await app.inject('/o/5')).json(), { route: 'id', id: '5' })
  t.same((await app.inject('/o/5/parts/latest')).json(), { route: 'latest' })
  t.same((await app.inject('/o/5/parts/9')).json(), { route: 'part' })
  t.same((await app.inject('/o/a/b/c/d/e')).json(), { route: 'wildcard' })
  const order = app.printRoutes({ commonPrefix: false })
  t.ok(order.length > 0)
})

test('a route returning a value its schema cannot serialize is a generic 500 problem', async (t) => {
  class Broken extends View {
    // @ts-expect-error the compiler refuses this handler too; the test proves the runtime does
    @Get('/', { responseSchema: Item })
    broken () { return { name: 'no id' } }
  }
  const app = await build({ views: [{ view: Broken, prefix: '/broken' }] })
  t.teardown(() => app.close())
  const body = problem(t, await app.inject('/broken'), 500)
  t.equal(body.detail, 'An unexpected error occurred.')
})

test('View does not validate responses; APIView falls back to the class responseSchema', async (t) => {
  class Plain extends APIView {
    static override responseSchema = Item
    @Get('/')
    get () { return { id: 1, name: 'fallback', hidden: 1 } }

    @Get('/own', { responseSchema: Type.Object({ other: Type.String() }) })
    own () { return { other: 'own schema' } }
  }
  const app = await build({ views: [{ view: Plain, prefix: '/p' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/p')).json(), { id: 1, name: 'fallback' })
  t.same((await app.inject('/p/own')).json(), { other: 'own schema' })
})

test('a route decorator and Override / Annotate stack in either order: the outer wins on scalars, responses add up', async (t) => {
  const { Annotate, Override } = await import('../lib/index.js')
  const { NotFound, Conflict, errors } = await import('../lib/errors.js')
  const { buildViewRoutes } = await import('../lib/registration/register.js')
  class Stacked extends APIView {
    // Decorators apply bottom-up: the upper one is the outer one.
    @Override({ summary: 'outer override', responses: errors(Conflict) })
    @Get('/a', { summary: 'inner get', tags: ['a'], responses: errors(NotFound) })
    overrideOutside () { return { ok: true } }

    @Get('/b', { summary: 'outer get', responses: errors(NotFound) })
    @Annotate({ summary: 'inner annotate', tags: ['b'], statusCode: 202, responses: errors(Conflict) })
    routeOutside () { return { ok: true } }
  }
  t.equal(Annotate, Override, 'Annotate is the alias of Override')
  const app = await build({ views: [Stacked] })
  t.teardown(() => app.close())
  const routes = Object.fromEntries(
    buildViewRoutes(Stacked).map(
      (r) => [
        r.url,
        documentedSchema(r.schema as { summary: string, tags: string[], response: Record<string, unknown> })
      ]
    )
  )
  t.same([routes['/a'].summary, routes['/a'].tags], ['outer override', ['a']], 'Override outside a Get: its summary wins, the inner tags stay')
  t.same([routes['/b'].summary, routes['/b'].tags], ['outer get', ['b']], 'Get outside an Annotate: its summary wins, the inner tags stay')
  for (const url of ['/a', '/b']) t.same(Object.keys(routes[url].response).filter((s) => s >= '400').sort(), ['404', '409'], `${url}: responses of both decorators, unioned (and nothing else: a GET's content is never read, so no 413 or 415)`)
  t.equal((await app.inject('/a')).statusCode, 200)
  t.equal((await app.inject('/b')).statusCode, 202, 'a scalar only the inner decorator set is kept')
})

test('steps before the action (a contribution\'s beforeAction): after every hook, in order, on the view the action gets', async (t) => {
  const { BadRequest } = await import('../lib/errors.js')
  const seen: string[] = []
  const Body = Type.Object({ name: Type.String({ alias: 'wire_name' }) })
  class Stepped extends APIView {
    declare mark: string
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      if (method !== 'POST') return inherited
      return extendContribution(inherited, {
        preHandler: [async () => { seen.push('preHandler') }],
        beforeAction: [
          () => { seen.push('first') },
          async (view, request) => {
            await new Promise((resolve) => setImmediate(resolve))
            seen.push(`async ${String((request.body as { wire_name?: string }).wire_name)}`);
            (view as unknown as { mark: string }).mark = 'set by a step'
          },
          (_view, request) => {
            seen.push('sync')
            if ((request.body as { wire_name?: string }).wire_name === 'refuse') throw new BadRequest('Refused before the action.')
          }
        ]
      })
    }

    @Post('/', { schema: { body: Body } })
    create (request: FastifyRequest) {
      seen.push('action')
      return { mark: this.mark, body: request.body }
    }

    @Get('/')
    read () { return { mark: this.mark ?? 'none' } }
  }
  const app = await build({ views: [Stepped] })
  t.teardown(() => app.close())
  const made = await app.inject({ method: 'POST', url: '/', payload: { wire_name: 'x' } })
  t.equal(made.statusCode, 201, made.body)
  t.same(made.json(), { mark: 'set by a step', body: { name: 'x' } }, 'the action gets the view the steps had, and the body renamed after them')
  t.same(seen, ['preHandler', 'first', 'async x', 'sync', 'action'], 'every hook first, then the steps in order, then the action')
  seen.length = 0
  const refused = await app.inject({ method: 'POST', url: '/', payload: { wire_name: 'refuse' } })
  t.equal(refused.statusCode, 400)
  t.equal(refused.json().detail, 'Refused before the action.')
  t.same(seen, ['preHandler', 'first', 'async refuse', 'sync'], 'a step that throws stops the action')
  seen.length = 0
  t.same((await app.inject('/')).json(), { mark: 'none' }, 'an operation without steps runs none')
  t.same(seen, [])
})
