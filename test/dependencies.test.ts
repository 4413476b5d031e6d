import { test } from 'tap'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { APIView, Delete, Get, Post, ViewRouter } from '../lib/index.js'
import type { Dependency } from '../lib/types.js'
import { Forbidden, Unauthorized } from '../lib/errors.js'
import { build, problem } from './helpers.js'

declare module 'fastify' {
  interface FastifyRequest { account?: { name: string, admin: boolean } }
}

/** A real auth-like dependency: a bearer token names a user; no token is 401, a non-admin 403. */
const USERS: Record<string, { name: string, admin: boolean }> = { 'admin-token': { name: 'ada', admin: true }, 'user-token': { name: 'bob', admin: false } }

function authenticate (request: FastifyRequest): void {
  const header = request.headers.authorization ?? ''
  const user = header.startsWith('Bearer ') ? USERS[header.slice(7)] : undefined
  if (user === undefined) throw new Unauthorized('A valid bearer token is required.', { headers: { 'www-authenticate': 'Bearer realm="shop"' } })
  request.account = user
}

async function requireAdmin (request: FastifyRequest): Promise<void> {
  if (request.account?.admin !== true) throw new Forbidden('Only administrators may delete items.')
}

class Items extends APIView {
  static override actionDependencies = {
    remove: [authenticate, requireAdmin],
    create: [authenticate]
  }

  @Get('/')
  list () { return [{ open: true }] }

  @Post('/', { schema: { body: Type.Object({ name: Type.String() }) } })
  create (request: FastifyRequest) { return { by: request.account?.name } }

  @Delete('/:id')
  remove () { return null }
}

test('action dependencies guard their action only: 401 and 403 problems, others open', async (t) => {
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())

  t.equal((await app.inject('/items')).statusCode, 200, 'list is open')

  const anonymous = await app.inject({ method: 'DELETE', url: '/items/1' })
  t.equal(problem(t, anonymous, 401).detail, 'A valid bearer token is required.')
  t.equal(anonymous.headers['www-authenticate'], 'Bearer realm="shop"')

  const user = await app.inject({ method: 'DELETE', url: '/items/1', headers: { authorization: 'Bearer user-token' } })
  t.equal(problem(t, user, 403).detail, 'Only administrators may delete items.')

  const admin = await app.inject({ method: 'DELETE', url: '/items/1', headers: { authorization: 'Bearer admin-token' } })
  t.equal(admin.statusCode, 204)

  const created = await app.inject({ method: 'POST', url: '/items', headers: { authorization: 'Bearer user-token' }, payload: { name: 'x' } })
  t.same(created.json(), { by: 'bob' }, 'the dependency decorated the request for the handler')
})

test('a function dependency runs before the body is parsed: no token beats a bad body', async (t) => {
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: '{not json' })
  problem(t, res, 401)
})

test('dependencies merge: router first, then registration, then route, then action', async (t) => {
  const order: string[] = []
  const mark = (name: string): Dependency => (request: FastifyRequest) => { order.push(`${name}:${request.routeOptions.url}`) }

  class Tracked extends APIView {
    static override actionDependencies = { one: [mark('action')] }
    @Get('/one', { dependencies: [mark('route')] })
    one () { return { ok: 1 } }

    @Get('/two')
    two () { return { ok: 2 } }
  }

  const router = new ViewRouter({ prefix: '/api', dependencies: [mark('router')] })
  router.registerView(Tracked, { prefix: '/t', dependencies: [mark('registration')] })
  const app = await build({ views: [router] })
  t.teardown(() => app.close())

  await app.inject('/api/t/one')
  t.same(order, ['router:/api/t/one', 'registration:/api/t/one', 'route:/api/t/one', 'action:/api/t/one'])
  order.length = 0
  await app.inject('/api/t/two')
  t.same(order, ['router:/api/t/two', 'registration:/api/t/two'], 'action dependencies stay on their action')
})

test('getDependencies computes dependencies; object forms choose the hook phase', async (t) => {
  const seen: string[] = []
  class Dynamic extends APIView {
    static override getDependencies (action: string): Dependency[] {
      if (action !== 'guarded') return []
      return [
        { preValidation: (request: FastifyRequest) => { seen.push(`preValidation:${typeof request.body}`) } },
        { preHandler: async (request: FastifyRequest) => { seen.push(`preHandler:${(request.body as { n: number }).n}`) } },
        { onRequest: (request: FastifyRequest) => { seen.push(`onRequest:${String(request.body)}`) } }
      ]
    }

    @Post('/guarded', { schema: { body: Type.Object({ n: Type.Integer() }) } })
    guarded () { return { done: true } }

    @Post('/open')
    open () { return { open: true } }
  }
  const app = await build({ views: [Dynamic] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/guarded', payload: { n: 3 } })
  t.equal(res.statusCode, 201)
  t.same(seen, ['onRequest:undefined', 'preValidation:object', 'preHandler:3'])
  seen.length = 0
  await app.inject({ method: 'POST', url: '/open', payload: {} })
  t.same(seen, [])
})

test('a dependency may answer by itself through the reply', async (t) => {
  class Redirecting extends APIView {
    static override actionDependencies = {
      old: [(_request: FastifyRequest, reply: FastifyReply) => reply.redirect('/new', 308)]
    }

    @Get('/old')
    old () { return { unreachable: true } }
  }
  const app = await build({ views: [Redirecting] })
  t.teardown(() => app.close())
  const res = await app.inject('/old')
  t.equal(res.statusCode, 308)
  t.equal(res.headers.location, '/new')
})

test('a dependency that returns false denies with 403, as a guard does; any other value lets the request through', async (t) => {
  const rows = new Map<number, string>([[1, 'lamp']])
  let writes = 0
  class Guarded extends APIView {
    static override unsafeDependencies = [async () => false]
    static override actionDependencies = {
      sync: [() => false],
      onPreHandler: [{ preHandler: async () => await Promise.resolve(false) }],
      truthy: [() => true, async () => ({ user: 'ada' }), () => 0, () => null, () => '']
    }

    @Post('/', { schema: { body: Type.Object({ name: Type.String() }) } })
    create (
      request: FastifyRequest
    ) { writes++; rows.set(2, (request.body as { name: string }).name); return { ok: true } }

    @Get('/sync')
    sync () { return { reached: true } }

    @Get('/pre')
    onPreHandler () { return { reached: true } }

    @Get('/truthy')
    truthy () { return { reached: true } }
  }
  const app = await build({ views: [{ view: Guarded, prefix: '/items' }] })
  t.teardown(() => app.close())
  const denied = await app.inject({ method: 'POST', url: '/items', payload: { name: 'desk' } })
  t.equal(problem(t, denied, 403).detail, 'You do not have permission to perform this action.', 'an async guard resolving to false: 403')
  t.equal(writes, 0, 'the write never ran')
  t.equal(rows.size, 1)
  t.equal(problem(t, await app.inject('/items/sync'), 403).status, 403, 'a sync one too')
  t.equal(problem(t, await app.inject('/items/pre'), 403).status, 403, 'in any phase')
  t.same((await app.inject('/items/truthy')).json(), { reached: true }, 'true, an object, 0, null and "" let it through: only false denies')
})
