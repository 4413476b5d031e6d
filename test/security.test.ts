import { test } from 'tap'
import Fastify from 'fastify'
import jwt from '@fastify/jwt'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { mix } from '../lib/index.js'
import type { Dependency } from '../lib/types.js'
import { Forbidden, Unauthorized } from '../lib/errors.js'
import { BaseFilter, GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { BulkAPIViewSet } from '../lib/bulk.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { problem } from './helpers.js'

// The recipe of docs/security.md: a dependency that verifies a bearer token with @fastify/jwt
// and says so, so that every route it guards documents the 401 problem and the requirement.

const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'GuardedItem' })
const ItemIn = Type.Object({ name: Type.String() })

const authenticate: Dependency = {
  onRequest: async (request) => {
    try {
      await request.jwtVerify()
    } catch {
      throw new Unauthorized('A valid bearer token is required.', { headers: { 'www-authenticate': 'Bearer' } })
    }
  },
  errors: [Unauthorized],
  security: [{ bearerAuth: [] }]
}
const requireAdmin: Dependency = {
  preHandler: (request) => {
    if ((request.user as { admin?: boolean }).admin !== true) throw new Forbidden('Only administrators may delete items.')
  },
  errors: [Forbidden]
}

class ByName extends BaseFilter {
  static override fields = { name: Type.String() }
}

class Items extends mix(BulkAPIViewSet, GenericViewSet) {
  static override responseSchema = Item
  static override createSchema = ItemIn
  static override updateSchema = ItemIn
  static override bulkUpdateSchema = Item
  static override detailParams = Type.Object({ id: Type.Integer() })
  static override filter = ByName
  static override repository = new MemoryRepository({ rows: [{ id: 1, name: 'lamp' }] }) as never
  static override unsafeDependencies = [authenticate]
  static override actionDependencies = { destroy: [requireAdmin], bulkDelete: [requireAdmin] }
}

test('a dependency documents its errors and security on every route it guards, and enforces them', async (t) => {
  const app = Fastify()
  await app.register(jwt, { secret: 'test-secret' })
  await app.register(swagger, swaggerOptions({
    info: { title: 'Guarded', version: '1.0.0' },
    components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } }
  }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  await app.ready()
  t.teardown(() => app.close())

  const doc = app.swagger() as unknown as {
    paths: Record<string, Record<string, {
      security?: unknown,
      responses: Record<string, { content?: Record<string, unknown> }>
    }>>
  }
  for (const [path, method] of [['/items', 'post'], ['/items/{id}', 'put'], ['/items/{id}', 'patch'], ['/items/{id}', 'delete'],
    ['/items/bulk', 'post'], ['/items/bulk', 'put'], ['/items/bulk', 'patch'], ['/items/bulk', 'delete']] as const) {
    const operation = doc.paths[path][method]
    t.same(operation.security, [{ bearerAuth: [] }], `${method.toUpperCase()} ${path} documents the bearer requirement`)
    t.ok(operation.responses['401']?.content?.['application/problem+json'], `${method.toUpperCase()} ${path} documents the 401 problem`)
  }
  t.ok(doc.paths['/items/{id}'].delete.responses['403']?.content?.['application/problem+json'], 'DELETE documents the 403 of the admin check')
  t.notOk(doc.paths['/items/{id}'].put.responses['403'], 'PUT has no admin check and documents no 403')
  for (const [path, method] of [['/items', 'get'], ['/items/{id}', 'get']] as const) {
    t.equal(doc.paths[path][method].security, undefined, `GET ${path} is open and documents no requirement`)
    t.equal(doc.paths[path][method].responses['401'], undefined, `GET ${path} documents no 401`)
  }

  const anonymous = await app.inject({ method: 'POST', url: '/items', payload: { name: 'desk' } })
  t.equal(problem(t, anonymous, 401).detail, 'A valid bearer token is required.')
  t.equal(anonymous.headers['www-authenticate'], 'Bearer')
  const user = app.jwt.sign({ sub: 'ada' })
  const admin = app.jwt.sign({ sub: 'root', admin: true })
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'desk' }, headers: { authorization: `Bearer ${user}` } })
  t.equal(created.statusCode, 201, 'a valid token creates')
  const forbidden = await app.inject({ method: 'DELETE', url: '/items/bulk?name=desk', headers: { authorization: `Bearer ${user}` } })
  t.equal(problem(t, forbidden, 403).detail, 'Only administrators may delete items.')
  const removed = await app.inject({ method: 'DELETE', url: '/items/bulk?name=desk', headers: { authorization: `Bearer ${admin}` } })
  t.equal(removed.statusCode, 204, 'an administrator deletes')
  t.equal((await app.inject('/items')).json().length, 1, 'a read needs no token')
})

test('the requirements of several dependencies combine: each alternative with each', async (t) => {
  const a: Dependency = { onRequest: () => {}, security: [{ bearerAuth: [] }, { apiKey: [] }] }
  const b: Dependency = { onRequest: () => {}, security: [{ tenant: ['read'] }] }
  class Combined extends GenericViewSet {
    static override responseSchema = Item
    static override repository = new MemoryRepository() as never
    static override actionDependencies = { list: [a, b] }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({
    info: { title: 'x', version: '1' },
    components: {
      securitySchemes: {
        bearerAuth: { type: 'http', scheme: 'bearer' },
        apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
        tenant: { type: 'oauth2', flows: { clientCredentials: { tokenUrl: '/token', scopes: { read: 'read items' } } } }
      }
    }
  }))
  await app.register(views, { views: [{ view: Combined, prefix: '/c' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as unknown as { paths: Record<string, Record<string, { security?: unknown }>> }
  t.same(doc.paths['/c'].get.security, [{ bearerAuth: [], tenant: ['read'] }, { apiKey: [], tenant: ['read'] }])
})
