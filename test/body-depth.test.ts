import { test } from 'tap'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import { APIView, Post, configureApp, typeboxValidatorCompiler } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { schemaDepth } from '../lib/schema/depth.js'
import { strictBodySchema } from '../lib/schema/validation.js'
import { build, problem } from './helpers.js'

test('schemaDepth: how deeply a value a schema accepts can nest', async (t) => {
  const Leaf = Type.Object({ name: Type.String() })
  const cases: Array<[string, unknown, number]> = [
    ['a string', Type.String(), 0],
    ['a literal', Type.Literal('a'), 0],
    ['a nullable integer', Type.Union([Type.Integer(), Type.Null()]), 0],
    ['an enum of scalars', Type.Enum({ a: 'a', b: 1 }), 0],
    ['a const object', { const: { a: [1] } }, 2],
    ['an enum of objects', { enum: [1, { a: {} }] }, 2],
    ['a type list of scalars', { type: ['string', 'null'] }, 0],
    ['a closed object', strictBodySchema(Leaf), 1],
    ['an object open to other members', Leaf, Number.POSITIVE_INFINITY],
    ['an object whose other members are strings', Type.Object({}, { additionalProperties: Type.String() }), 1],
    ['objects in arrays in a closed object', strictBodySchema(Type.Object({ list: Type.Array(Leaf) })), 3],
    ['an array of anything', Type.Array(Type.Unknown()), Number.POSITIVE_INFINITY],
    ['an array without items', { type: 'array' }, Number.POSITIVE_INFINITY],
    ['unknown', Type.Unknown(), Number.POSITIVE_INFINITY],
    ['any', Type.Any(), Number.POSITIVE_INFINITY],
    ['a record of numbers', Type.Record(Type.String(), Type.Number()), 1],
    ['a record of anything', Type.Record(Type.String(), Type.Unknown()), Number.POSITIVE_INFINITY],
    ['a tuple', Type.Tuple([Type.String(), Type.Array(Type.Number())]), 2],
    ['a tuple in prefixItems form, bounded', { type: 'array', prefixItems: [{ type: 'array', items: { type: 'number' } }], maxItems: 1 }, 2],
    ['prefixItems and more items', { type: 'array', prefixItems: [{ type: 'string' }], items: { type: 'array', items: { type: 'string' } } }, 2],
    ['prefixItems, anything after', { type: 'array', prefixItems: [{ type: 'string' }] }, Number.POSITIVE_INFINITY],
    ['a union, the deepest member', Type.Union([Type.String(), Type.Array(Type.Array(Type.String()))]), 2],
    ['an intersection', strictBodySchema(Type.Intersect([Type.Object({ a: Type.Array(Type.String()) }), Type.Object({ b: Type.String() })])), 2],
    ['a recursive schema', Type.Recursive((This) => Type.Object({ children: Type.Array(This) })), Number.POSITIVE_INFINITY],
    ['a reference', Type.Ref('Other'), Number.POSITIVE_INFINITY],
    ['a negation', Type.Not(Type.String()), Number.POSITIVE_INFINITY],
    ['a type it does not know', Type.Date(), Number.POSITIVE_INFINITY],
    ['an object and a string together', { type: ['object', 'string'], properties: { a: { type: 'string' } }, additionalProperties: false }, 1],
    ['a union with a type beside it', { type: 'object', additionalProperties: false, anyOf: [{ type: 'array', items: { type: 'array', items: { type: 'string' } } }] }, 2]
  ]
  for (const [name, schema, depth] of cases) t.equal(schemaDepth(schema as never), depth, name)
})

const Item = Type.Object({ id: Type.Integer(), data: Type.Unknown() })
const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)

test('a body nested deeper than maxBodyDepth is a 400 naming where, and nothing is stored that no answer could serialize', async (t) => {
  const rows = new MemoryRepository<{ id: number, data: unknown }>()
  class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = Type.Object({ data: Type.Unknown() })
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(rows) as never
  }
  class Shallow extends Items {
    static override maxBodyDepth = 3
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }, { view: Shallow, prefix: '/shallow' }] }, { bodyLimit: 4 * 1024 * 1024 })
  t.teardown(() => app.close())
  for (const depth of [129, 10_000, 1_000_000]) {
    const res = await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: `{"data":${nested(depth)}}` })
    t.same(problem(t, res, 400).errors, [{ detail: 'Nested more than 128 levels deep', pointer: '#/data' + '/0'.repeat(127) }], `${depth} levels: the first container too deep`)
  }
  t.same((await app.inject('/items')).json(), [], 'nothing was stored')
  t.equal((await app.inject({ method: 'POST', url: '/items', headers: { 'content-type': 'application/json' }, payload: `{"data":${nested(127)}}` })).statusCode, 201, '128 levels, the object included')
  t.equal((await app.inject('/items')).statusCode, 200, 'and it is served')
  const put = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'content-type': 'application/json' }, payload: `{"data":${nested(500)}}` })
  t.equal(problem(t, put, 400).errors[0].detail, 'Nested more than 128 levels deep', 'every body of the view')
  const shallow = await app.inject({ method: 'POST', url: '/shallow', payload: { data: { a: [{ b: 1 }] } } })
  t.same(problem(t, shallow, 400).errors, [{ detail: 'Nested more than 3 levels deep', pointer: '#/data/a/0' }], 'the view sets its own bound')
  t.equal((await app.inject({ method: 'POST', url: '/shallow', payload: { data: { a: [1] } } })).statusCode, 201)
})

test('a bounded schema deeper than maxBodyDepth is held to it too; the app\'s own routes get the default', async (t) => {
  class Forms extends APIView {
    static override maxBodyDepth = 2
    @Post('/', { schema: { body: Type.Object({ a: Type.Object({ b: Type.Array(Type.String()) }) }) }, responseSchema: Type.Object({ ok: Type.Boolean() }) })
    create () { return { ok: true } }
  }
  const app = Fastify()
  configureApp(app)
  app.post('/own', { schema: { body: Type.Object({ data: Type.Unknown() }) }, validatorCompiler: typeboxValidatorCompiler }, async () => ({ ok: true }))
  await app.register((await import('../lib/index.js')).views, { views: [{ view: Forms, prefix: '/forms' }] })
  t.teardown(() => app.close())
  t.same(problem(t, await app.inject({ method: 'POST', url: '/forms', payload: { a: { b: ['x'] } } }), 400).errors, [{ detail: 'Nested more than 2 levels deep', pointer: '#/a/b' }])
  t.same(problem(t, await app.inject({ method: 'POST', url: '/own', headers: { 'content-type': 'application/json' }, payload: `{"data":${nested(200)}}` }), 400).errors[0].detail,
    'Nested more than 128 levels deep', 'typeboxValidatorCompiler on a route of the app')
  t.equal((await app.inject({ method: 'POST', url: '/own', payload: { data: [[1]] } })).statusCode, 200)
})
