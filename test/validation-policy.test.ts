import { test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Kind, Type, type TSchema } from '@sinclair/typebox'
import views, { APIView, Get, Patch, Post, Put, ViewRouter, typeboxValidatorCompiler } from '../lib/index.js'
import type { FastifyViewsOptions, ValidationPolicy, ViewRequest } from '../lib/types.js'
import { ConfigurationError } from '../lib/errors.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { assertDefaultsValid, compilePartValidator, strictBodySchema } from '../lib/schema/validation.js'
import { resolveValidationPolicy } from '../lib/schema/validation-policy.js'
import { compileDefaults, declaredDefaults, optionalDefaults, unfilledDefaults } from '../lib/schema/defaults.js'
import { compileStrip } from '../lib/schema/strip.js'
import { build, caught, problem } from './helpers.js'

const Query = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
  offset: Type.Optional(Type.Integer({ minimum: 0, default: 0 })),
  sort: Type.Optional(Type.Union([Type.Literal('name'), Type.Literal('-name')], { default: 'name' })),
  tags: Type.Optional(Type.Array(Type.String(), { default: ['all'] })),
  q: Type.Optional(Type.String())
})
const Params = Type.Object({ id: Type.Integer(), mode: Type.Optional(Type.String({ default: 'full' })) })
const Headers = Type.Object({ 'X-Mode': Type.Optional(Type.String({ default: 'fast' })), 'x-page': Type.Integer({ default: 1 }) })
const Line = Type.Object({ sku: Type.String(), qty: Type.Integer({ minimum: 1, default: 1 }), note: Type.Optional(Type.String({ default: '' })) })
const Order = Type.Object({
  customer: Type.String(),
  priority: Type.Integer({ default: 3 }),
  express: Type.Optional(Type.Boolean({ default: false })),
  lines: Type.Array(Line, { default: [] }),
  address: Type.Optional(Type.Object({ city: Type.String(), country: Type.String({ default: 'NL' }) })),
  meta: Type.Object({ source: Type.String({ default: 'api' }), seen: Type.Array(Type.String(), { default: [] }) }, { default: {} })
})

class Shop extends APIView {
  @Get('/q', { schema: { querystring: Query } })
  query (request: ViewRequest<{ querystring: typeof Query }>) { return request.query }

  @Get('/p/:id/:mode?', { schema: { params: Params } })
  params (request: ViewRequest<{ params: typeof Params }>) { return request.params }

  @Get('/h', { schema: { headers: Headers } })
  headers (request: ViewRequest<{ headers: typeof Headers }>) { return { mode: request.headers['x-mode'], page: request.headers['x-page'] } }

  @Post('/orders', { schema: { body: Order }, statusCode: 200 })
  order (request: ViewRequest<{ body: typeof Order }>) {
    // The action may change what it got: another request's default is a copy of its own.
    request.body.meta.seen.push('action')
    return request.body
  }

  @Put('/orders/1', { schema: { body: Order } })
  put (request: ViewRequest<{ body: typeof Order }>) { return request.body }

  @Patch('/orders/1', { schema: { body: Type.Partial(Order), querystring: Type.Object({ dry: Type.Boolean({ default: false }) }) } })
  patch (request: ViewRequest) { return { body: request.body, query: request.query } }
}

const post = (url: string, payload: unknown, method: 'POST' | 'PUT' | 'PATCH' = 'POST') => ({ method, url, payload: payload as object })

test('defaults are filled in the query, the path, headers and the body; what the client sends is kept', async (t) => {
  const app = await build({ views: [{ view: Shop, prefix: '' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/q')).json(), { limit: 20, offset: 0, sort: 'name', tags: ['all'] }, 'a required member with a default, and optional ones, are filled')
  t.same((await app.inject('/q?limit=5&offset=10&sort=-name&tags=a&q=x')).json(), { limit: 5, offset: 10, sort: '-name', tags: ['a'], q: 'x' }, 'sent values are converted and kept')
  t.equal(problem(t, await app.inject('/q?limit=0'), 400).errors[0].pointer, '#/limit', 'a sent value is still checked')
  t.equal(problem(t, await app.inject('/q?limit='), 400).errors[0].pointer, '#/limit', 'an empty value is a value, not a missing one')
  t.same((await app.inject('/p/7')).json(), { id: 7, mode: 'full' }, 'a path parameter left out')
  t.same((await app.inject('/p/7/brief')).json(), { id: 7, mode: 'brief' })
  t.same((await app.inject('/h')).json(), { mode: 'fast', page: 1 }, 'headers, whatever the case of the schema key')
  t.same((await app.inject({ url: '/h', headers: { 'x-mode': 'slow', 'X-Page': '4' } })).json(), { mode: 'slow', page: 4 })

  const created = (await app.inject(post('/orders', { customer: 'c', lines: [{ sku: 'a' }, { sku: 'b', qty: 2 }], address: { city: 'Delft' } }))).json()
  t.same(created, {
    customer: 'c',
    lines: [{ sku: 'a', qty: 1, note: '' }, { sku: 'b', qty: 2, note: '' }],
    address: { city: 'Delft', country: 'NL' },
    priority: 3,
    express: false,
    meta: { source: 'api', seen: ['action'] }
  }, 'top level, array items, a nested object sent, an object default with its own defaults filled in')
  const bare = (await app.inject(post('/orders', { customer: 'd' }))).json()
  t.same(bare, { customer: 'd', priority: 3, express: false, lines: [], meta: { source: 'api', seen: ['action'] } }, 'an optional object left out stays out; each request gets its own copy of a default')
  t.same(problem(t, await app.inject(post('/orders', { priority: 1 })), 400).errors, [{ detail: 'Expected required property', pointer: '#/customer' }], 'a member without a default is still required')
  t.same(problem(t, await app.inject(post('/orders', { customer: 'c', lines: [{ sku: 'a', qty: 0 }] })), 400).errors.map((e: { pointer: string }) => e.pointer), ['#/lines/0/qty'])
  t.same(problem(t, await app.inject(post('/orders', { customer: 'c', lines: 'none' })), 400).errors.map((e: { pointer: string }) => e.pointer), ['#/lines'], 'a value of another type is left for the check')
})

test('a PATCH body gets no default (a partial update changes what it names); its query does; PUT replaces, so it does', async (t) => {
  const app = await build({ views: [{ view: Shop, prefix: '' }] })
  t.teardown(() => app.close())
  t.same((await app.inject(post('/orders/1', { customer: 'c' }, 'PATCH'))).json(), { body: { customer: 'c' }, query: { dry: false } })
  t.same(problem(t, await app.inject(post('/orders/1', { address: { city: 'Delft' } }, 'PATCH')), 400).errors, [{ detail: 'Expected required property', pointer: '#/address/country' }],
    'not inside a member either: what a member requires, a PATCH sends')
  t.same((await app.inject(post('/orders/1', { customer: 'c' }, 'PUT'))).json(), { customer: 'c', priority: 3, express: false, lines: [], meta: { source: 'api', seen: [] } })
})

const Thing = Type.Object({ id: Type.Integer(), name: Type.String(), stock: Type.Integer({ default: 0 }), color: Type.String({ default: 'black' }) }, { $id: 'PolicyThing' })
const ThingIn = Type.Object({ name: Type.String(), stock: Type.Integer({ default: 0 }), color: Type.String({ default: 'black' }) }, { $id: 'PolicyThingIn' })

function things (): typeof GenericViewSet {
  return class Things extends GenericViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = new MemoryRepository({ rows: [] })
  }
}

test('a generic view: create and PUT fill defaults; a plain, merge or JSON Patch never overwrites a stored value with one', async (t) => {
  const app = await build({ views: [{ view: things(), prefix: '/things' }] })
  t.teardown(() => app.close())
  const created = (await app.inject(post('/things', { name: 'lamp' }))).json()
  t.same(created, { id: created.id, name: 'lamp', stock: 0, color: 'black' })
  const url = `/things/${created.id as number}`
  t.same((await app.inject(post(url, { name: 'lamp', stock: 5, color: 'red' }, 'PUT'))).json().color, 'red')
  t.same((await app.inject(post(url, { name: 'desk lamp' }, 'PATCH'))).json(), { id: created.id, name: 'desk lamp', stock: 5, color: 'red' }, 'JSON partial body')
  t.same((await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify({ name: 'lamp 2' }) })).json(),
    { id: created.id, name: 'lamp 2', stock: 5, color: 'red' }, 'merge patch')
  t.same((await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/json-patch+json' }, payload: JSON.stringify([{ op: 'replace', path: '/name', value: 'lamp 3' }]) })).json(),
    { id: created.id, name: 'lamp 3', stock: 5, color: 'red' }, 'JSON Patch')
  t.same((await app.inject(post(url, { name: 'lamp' }, 'PUT'))).json(), { id: created.id, name: 'lamp', stock: 0, color: 'black' }, 'a PUT that leaves a member out sets its default, as creating it would')
  // Patch documents are checked as they are applied, whatever the policy.
  const stripping = await build({ views: [{ view: things(), prefix: '/things', validation: { unknownProperties: 'strip' } }] })
  t.teardown(() => stripping.close())
  const id = (await stripping.inject(post('/things', { name: 'lamp', id: 99 }))).json().id as number
  const merge = (payload: unknown) => stripping.inject({ method: 'PATCH', url: `/things/${id}`, headers: { 'content-type': 'application/merge-patch+json' }, payload: JSON.stringify(payload) })
  t.same((await merge({ id, name: 'sent back', stock: 0 })).json(), { id, name: 'sent back', stock: 0, color: 'black' }, 'the representation sent back unchanged but for one member')
  t.same(problem(t, await merge({ name: 'x', extra: 1 }), 400).errors.map((e: { pointer: string }) => e.pointer), ['#/extra'], 'a member the update schema lacks')
  t.same((await stripping.inject(post(`/things/${id}`, { name: 'plain', extra: 1 }, 'PATCH'))).json().name, 'plain', 'a plain JSON partial body is stripped')
})

test('a plain Fastify route with the same schemas fills the same values (Ajv useDefaults)', async (t) => {
  const app = Fastify()
  await app.register(views, { views: [{ view: Shop, prefix: '/v' }] })
  app.get('/plain/q', { schema: { querystring: Query } }, async (request) => request.query)
  app.post('/plain/orders', { schema: { body: Order } }, async (request) => {
    (request.body as { meta: { seen: string[] } }).meta.seen.push('action')
    return request.body
  })
  const Nested = Type.Object({
    items: Type.Array(Type.Object({ n: Type.Integer({ default: 0 }) })),
    both: Type.Optional(
      Type.Intersect(
        [Type.Object({ x: Type.Integer({ default: 1 }) }), Type.Object({ y: Type.Integer({ default: 2 }) })]
      )
    ),
    byKey: Type.Optional(Type.Record(Type.String(), Type.Object({ r: Type.Integer({ default: 9 }) }))),
    pair: Type.Optional(Type.Tuple([Type.Object({ t: Type.Integer({ default: 4 }) }), Type.Integer()])),
    choice: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')], { default: 'a' })),
    nullable: Type.Optional(Type.Union([Type.String({ default: 'ignored: a member of a union' }), Type.Null()]))
  })
  class Same extends APIView {
    @Post('/nested', { schema: { body: Nested }, statusCode: 200 })
    nested (request: ViewRequest) { return request.body }
  }
  await app.register(views, { views: [{ view: Same, prefix: '/v' }], configureApp: false })
  app.post('/plain/nested', { schema: { body: Nested } }, async (request) => request.body)
  await app.ready()
  t.teardown(() => app.close())
  for (const query of ['', '?limit=5', '?offset=3&tags=x&tags=y']) {
    t.same((await app.inject(`/v/q${query}`)).json(), (await app.inject(`/plain/q${query}`)).json(), `query ${JSON.stringify(query)}`)
  }
  for (const body of [{ customer: 'c' }, { customer: 'c', lines: [{ sku: 'a' }], address: { city: 'x' } }, { customer: 'c', meta: { source: 'web' } }]) {
    t.same((await app.inject(post('/v/orders', body))).json(), (await app.inject(post('/plain/orders', body))).json(), `body ${JSON.stringify(body)}`)
  }
  const nested = { items: [{}, { n: 5 }], both: {}, byKey: { k: {} }, pair: [{}, 1] }
  t.same((await app.inject(post('/v/nested', nested))).json(), (await app.inject(post('/plain/nested', nested))).json(), 'items, intersections, records, tuples; none inside a union')
})

test('a default inside a union member is refused at registration, as Fastify\'s Ajv refuses it', async (t) => {
  const Inside = Type.Object({ kind: Type.Union([Type.Object({ k: Type.Literal('a'), a: Type.Optional(Type.Integer({ default: 5 })) }), Type.Null()]) })
  class Unioned extends APIView {
    @Post('/', { schema: { body: Inside } })
    create () { return {} }
  }
  const error = await caught(() => build({ views: [{ view: Unioned, prefix: '/u' }] }))
  t.ok(error instanceof ConfigurationError)
  t.equal((error as ConfigurationError).code, 'FV_ERR_VALIDATION_POLICY')
  t.match((error as Error).message, /^Unioned\.create schema\.body: the default of kind\.a is inside a union \(anyOf\), where no default is filled/)
  const plain = Fastify()
  plain.post('/', { schema: { body: Inside } }, async () => ({}))
  t.match(await caught(() => plain.ready()), { message: /default is ignored/ }, 'Fastify refuses the same schema')
  await plain.close()
  const off = await build({ views: [{ view: Unioned, prefix: '/u' }], validation: { useDefaults: false } })
  t.equal((await off.inject(post('/u', { kind: null }))).statusCode, 201, 'without defaults the schema is taken as it is')
  await off.close()
})

test('useDefaults: false keeps the schema as declared: a member with a default is required, an optional one stays out', async (t) => {
  const app = await build({ views: [{ view: Shop, prefix: '' }], validation: { useDefaults: false } })
  t.teardown(() => app.close())
  t.same(problem(t, await app.inject('/q'), 400).errors[0].pointer, '#/limit')
  t.same((await app.inject('/q?limit=5')).json(), { limit: 5 })
  t.same((await app.inject('/p/7')).json(), { id: 7 })
})

const Profile = Type.Object({
  name: Type.String(),
  address: Type.Optional(Type.Object({ city: Type.String() })),
  lines: Type.Optional(Type.Array(Type.Object({ sku: Type.String() }))),
  pet: Type.Optional(Type.Union([Type.Object({ kind: Type.Literal('cat'), lives: Type.Integer() }), Type.Object({ kind: Type.Literal('dog'), good: Type.Boolean() }), Type.Null()])),
  both: Type.Optional(Type.Intersect([Type.Object({ x: Type.Integer() }), Type.Object({ y: Type.Integer() })])),
  open: Type.Optional(Type.Object({ a: Type.String() }, { additionalProperties: true })),
  byKey: Type.Optional(Type.Record(Type.String(), Type.Object({ v: Type.Integer() }))),
  exact: Type.Optional(
    Type.Union(
      [
        Type.Object({ a: Type.Integer() }, { additionalProperties: false }),
        Type.Object({ a: Type.Integer(), b: Type.Integer() }, { additionalProperties: false })
      ]
    )
  ),
  full_name: Type.Optional(Type.String({ alias: 'fullName', default: 'anonymous' }))
})

class Profiles extends APIView {
  @Post('/', { schema: { body: Profile }, statusCode: 200 })
  create (request: ViewRequest<{ body: typeof Profile }>) {
    return {
      seen: request.body,
      keys: Object.keys(request.body)
    }
  }
}

test('unknown body members: refused by default (a 400 naming each), stripped at any depth under strip', async (t) => {
  const sent = {
    name: 'n',
    id: 7,
    address: { city: 'Delft', zip: '2611' },
    lines: [{ sku: 'a', price: 3 }, { sku: 'b' }],
    pet: { kind: 'dog', good: true, lives: 9 },
    both: { x: 1, y: 2, z: 3 },
    open: { a: 'a', more: 1 },
    byKey: { k: { v: 1, w: 2 } },
    exact: { a: 1, b: 2 }
  }
  const refusing = await build({ views: [{ view: Profiles, prefix: '/p' }] })
  t.teardown(() => refusing.close())
  t.same(problem(t, await refusing.inject(post('/p', sent)), 400).errors.map((e: { pointer: string }) => e.pointer).sort(),
    ['#/address/zip', '#/both/z', '#/id', '#/lines/0/price', '#/pet'])
  const stripping = await build({ views: [{ view: Profiles, prefix: '/p', validation: { unknownProperties: 'strip' } }] })
  t.teardown(() => stripping.close())
  const { seen, keys } = (await stripping.inject(post('/p', sent))).json()
  t.same(seen, {
    name: 'n',
    address: { city: 'Delft' },
    lines: [{ sku: 'a' }, { sku: 'b' }],
    pet: { kind: 'dog', good: true },
    both: { x: 1, y: 2 },
    open: { a: 'a', more: 1 },
    byKey: { k: { v: 1, w: 2 } },
    exact: { a: 1, b: 2 },
    full_name: 'anonymous'
  }, 'closed objects lose what they do not name; open ones and records keep it; a union member that takes the value as it is keeps it whole')
  t.notOk(keys.includes('id'))
  t.same((await stripping.inject(post('/p', { name: 'n', fullName: 'Ann', full_name: 'field name' }))).json().seen, { name: 'n', full_name: 'Ann' }, 'aliases: the wire name is known, the field name is not')
  t.same(problem(t, await stripping.inject(post('/p', { name: 'n', pet: { kind: 'fish' } })), 400).errors.map((e: { pointer: string }) => e.pointer), ['#/pet'], 'a value no member matches is refused')
  t.same(problem(t, await stripping.inject(post('/p', { name: 1, extra: true })), 400).errors, [{ detail: 'Expected string', pointer: '#/name' }], 'what is left is still checked')
  t.same(problem(t, await stripping.inject(post('/p', ['not', 'an', 'object'])), 400).errors[0].pointer, '#')
})

test('the policy at the plugin, a router and a registration entry: each option from the innermost level that sets it', async (t) => {
  const sent = { name: 'n', id: 1 }
  const router = new ViewRouter({ prefix: '/r', validation: { unknownProperties: 'strip' } })
  router.registerView(Profiles, { prefix: '/inherits' })
  router.registerView(Profiles, { prefix: '/own', validation: { unknownProperties: 'refuse', useDefaults: true } })
  const app = await build({
    validation: { useDefaults: false },
    views: [
      { view: Profiles, prefix: '/plugin' },
      { view: Profiles, prefix: '/entry', validation: { unknownProperties: 'strip', useDefaults: undefined } },
      router
    ]
  })
  t.teardown(() => app.close())
  t.equal((await app.inject(post('/plugin', sent))).statusCode, 400, 'the plugin\'s level: refused (the default)')
  t.same((await app.inject(post('/entry', sent))).json().seen, { name: 'n' }, 'an entry\'s own strip; the plugin\'s useDefaults: false (undefined sets nothing)')
  t.same((await app.inject(post('/r/inherits', sent))).json().seen, { name: 'n' }, 'the router\'s strip, the plugin\'s useDefaults: false')
  t.equal((await app.inject(post('/r/own', sent))).statusCode, 400, 'a registration of the router wins over it')
  t.same((await app.inject(post('/r/own', { name: 'n' }))).json().seen, { name: 'n', full_name: 'anonymous' }, 'and its useDefaults over the plugin\'s')

  // A router registered by hand has no plugin level; a class entry takes the plugin's.
  const own = Fastify()
  await own.register(views, { views: [Profiles], validation: { unknownProperties: 'strip' } })
  const direct = new ViewRouter({ prefix: '/d' })
  direct.registerView(Profiles, { prefix: '' })
  direct.register(own)
  await own.ready()
  t.teardown(() => own.close())
  t.same((await own.inject(post('/', sent))).json().seen, { name: 'n', full_name: 'anonymous' })
  t.equal((await own.inject(post('/d', sent))).statusCode, 400)
})

test('a policy the library cannot apply is refused at registration, naming where', async (t) => {
  const cases: Array<[FastifyViewsOptions, RegExp]> = [
    [{ views: [{ view: Profiles, prefix: '/p', validation: { strip: true } as ValidationPolicy }] }, /^Profiles's registration: validation\.strip is not an option of the validation policy/],
    [{ views: [{ view: Profiles, prefix: '/p' }], validation: { useDefaults: 'yes' as unknown as boolean } }, /validation\.useDefaults must be true or false; got "yes"$/],
    [{ views: [{ view: Profiles, prefix: '/p', validation: 'strip' as ValidationPolicy }] }, /validation must be an object \(\{ useDefaults, unknownProperties \}\); got "strip"$/],
    [{ views: [{ view: Profiles, prefix: '/p', validation: null as unknown as ValidationPolicy }] }, /validation must be an object .*; got null$/]
  ]
  for (const [options, message] of cases) {
    const error = await caught(() => build(options))
    t.equal((error as ConfigurationError).code, 'FV_ERR_VALIDATION_POLICY', message.source)
    t.match((error as Error).message, message)
  }
  class BadDefault extends APIView {
    @Post('/', { schema: { body: Type.Object({ lines: Type.Array(Type.Object({ at: Type.String({ format: 'date-time', default: 'now' }) })) }) } })
    create () { return {} }
  }
  t.match(await caught(() => build({ views: [{ view: BadDefault, prefix: '/b' }] })),
    { code: 'FV_ERR_VALIDATION_POLICY', message: /^BadDefault\.create schema\.body: the default of lines\.\*\.at \("now"\) is not a value its own schema accepts/ })
  t.equal((await caught(() => build({ views: [{ view: BadDefault, prefix: '/b' }], validation: { useDefaults: false } }).then((app) => app.close()))), undefined, 'no default is checked where none is filled')
  class PatchOnly extends APIView {
    @Patch('/', { schema: { body: Type.Object({ n: Type.Optional(Type.Integer({ default: 'x' })) }) } })
    change () { return {} }
  }
  t.equal(await caught(() => build({ views: [{ view: PatchOnly, prefix: '/po' }] }).then((app) => app.close())), undefined, 'nor in the body of a PATCH')
})

async function documented (options: FastifyViewsOptions): Promise<any> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Policy', version: '1.0.0' } }))
  await app.register(views, options)
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  await app.close()
  return doc
}

test('the OpenAPI document says what is enforced: a member with a default is optional where defaults are filled', async (t) => {
  const doc = await documented({ views: [{ view: Shop, prefix: '' }, { view: things(), prefix: '/things' }] })
  const params = (path: string, method = 'get') => Object.fromEntries(doc.paths[path][method].parameters.map((p: { name: string, required: boolean, schema: { default?: unknown } }) => [p.name, [p.required, p.schema.default]]))
  t.same(params('/q'), { limit: [false, 20], offset: [false, 0], sort: [false, 'name'], tags: [false, ['all']], q: [false, undefined] })
  t.same(params('/h'), { 'x-mode': [false, 'fast'], 'x-page': [false, 1] })
  t.same(params('/p/{id}/{mode}?').id, [true, undefined], 'a path parameter is required in any case')
  const body = (path: string, method: string) => doc.paths[path][method].requestBody.content['application/json'].schema
  t.same(body('/orders', 'post').required, ['customer'])
  t.same(body('/orders', 'post').properties.lines.items.required, ['sku'], 'at every depth defaults are filled')
  t.same(body('/orders/1', 'put').required, ['customer'])
  t.same(body('/orders/1', 'patch').required, undefined, 'a partial body requires nothing anyway')
  t.same(params('/orders/1', 'patch'), { dry: [false, false] })
  t.same(body('/things', 'post'), { $ref: '#/components/schemas/PolicyThingInInput' }, 'a named schema that changes is its request form, <name>Input')
  t.same(doc.components.schemas.PolicyThingInInput.required, ['name'])
  t.same(doc.components.schemas.PolicyThing.required, ['id', 'name', 'stock', 'color'], 'the form answers send keeps every member required')
  t.same(doc.paths['/things/{id}'].patch.requestBody.content['application/merge-patch+json'].schema.required, undefined)

  const off = await documented({ views: [{ view: Shop, prefix: '' }, { view: things(), prefix: '/things' }], validation: { useDefaults: false } })
  t.same(off.paths['/q'].get.parameters.find((p: { name: string }) => p.name === 'limit').required, true, 'without defaults filled, the schema as declared')
  t.same(off.paths['/things'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/PolicyThingIn' })
})

test('typeboxValidatorCompiler on an app\'s own routes fills defaults as Ajv does, never into a PATCH body', async (t) => {
  const app = Fastify({ ajv: { customOptions: { strict: false } } })
  app.setValidatorCompiler(typeboxValidatorCompiler)
  const Body = Type.Object({ n: Type.Integer({ default: 1 }) })
  app.get('/q', { schema: { querystring: Type.Object({ limit: Type.Integer({ default: 20 }) }) } }, async (request) => request.query)
  app.post('/b', { schema: { body: Body } }, async (request) => request.body)
  app.patch('/b', { schema: { body: Type.Partial(Body) } }, async (request) => request.body)
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject('/q')).json(), { limit: 20 })
  t.same((await app.inject(post('/b', {}))).json(), { n: 1 })
  t.same((await app.inject(post('/b', {}, 'PATCH'))).json(), {})
  const bad = Fastify()
  bad.get('/q', { schema: { querystring: Type.Object({ limit: Type.Integer({ default: 'x' }) }) }, validatorCompiler: typeboxValidatorCompiler }, async () => ({}))
  t.match(await caught(() => bad.ready()), { message: /the querystring schema of \/q: the default of limit \("x"\)/ })
  await bad.close()
})

test('hostile: a body at the size limit with 100,000 unknown members is stripped in bounded time', async (t) => {
  const app = await build({ views: [{ view: Profiles, prefix: '/p', validation: { unknownProperties: 'strip' } }] })
  t.teardown(() => app.close())
  const members: string[] = ['"name":"n"']
  let size = 12
  for (let i = 0; size < 1024 * 1024 - 32; i++) {
    const member = `"u${i}":0`
    members.push(member)
    size += member.length + 1
  }
  const payload = `{${members.join(',')}}`
  t.ok(payload.length <= 1024 * 1024, `${payload.length} bytes, ${members.length - 1} unknown members`)
  let started = performance.now()
  const res = await app.inject({ method: 'POST', url: '/p', headers: { 'content-type': 'application/json' }, payload })
  const stripped = performance.now() - started
  t.same(res.json().seen, { name: 'n', full_name: 'anonymous' })
  t.ok(stripped < 3000, `stripped in ${Math.round(stripped)} ms`)
  // Nested in an array item, the same.
  const nested = `{"name":"n","lines":[{"sku":"a",${members.slice(1, 50_000).join(',')}}]}`
  started = performance.now()
  t.same((await app.inject({ method: 'POST', url: '/p', headers: { 'content-type': 'application/json' }, payload: nested })).json().seen.lines, [{ sku: 'a' }])
  t.ok(performance.now() - started < 3000)
  const refusing = await build({ views: [{ view: Profiles, prefix: '/p' }] })
  t.teardown(() => refusing.close())
  started = performance.now()
  t.equal(problem(t, await refusing.inject({ method: 'POST', url: '/p', headers: { 'content-type': 'application/json' }, payload }), 400).errors.length, 20, 'refused, at most 20 entries')
  t.ok(performance.now() - started < 3000)
})

test('hostile: __proto__ and constructor members neither pollute a prototype nor escape the policy', async (t) => {
  const Keys = Type.Object({
    name: Type.String(),
    constructor: Type.Optional(Type.String({ default: 'made' })),
    inner: Type.Optional(Type.Object({ toString: Type.Optional(Type.String({ default: 's' })) }))
  })
  class Protos extends APIView {
    @Post('/', { schema: { body: Keys }, statusCode: 200 })
    create (request: ViewRequest) {
      const body = request.body as Record<string, unknown>
      return { own: Object.getOwnPropertyNames(body), proto: Object.getPrototypeOf(body) === Object.prototype, body }
    }

    @Get('/q', { schema: { querystring: Type.Object({ constructor: Type.Optional(Type.String({ default: 'q' })) }) } })
    query (request: ViewRequest) { return { ...(request.query as object) } }
  }
  // Fastify's own parser refuses a __proto__ member unless told otherwise; with 'ignore' it reaches the policy as an own member.
  const guarded = await build({ views: [{ view: Protos, prefix: '/x', validation: { unknownProperties: 'strip' } }] })
  t.teardown(() => guarded.close())
  t.equal((await guarded.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload: '{"name":"n","__proto__":{"polluted":true}}' })).statusCode, 400)
  for (const unknownProperties of ['strip', 'refuse'] as const) {
    const app = await build({ views: [{ view: Protos, prefix: '/x', validation: { unknownProperties } }] }, { onProtoPoisoning: 'ignore', onConstructorPoisoning: 'ignore' })
    t.teardown(() => app.close())
    const payload = '{"name":"n","__proto__":{"polluted":true},"inner":{"__proto__":{"polluted":true}}}'
    const res = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload })
    if (unknownProperties === 'strip') {
      t.same(res.json(), { own: ['name', 'inner', 'constructor'], proto: true, body: { name: 'n', inner: { toString: 's' }, constructor: 'made' } }, 'stripped as own members; inherited names filled as own ones')
    } else {
      t.same(problem(t, res, 400).errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/__proto__', '#/inner/__proto__'])
    }
    t.same((await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'application/json' }, payload: '{"name":"n","constructor":"sent"}' })).json().body.constructor, 'sent')
    t.same((await app.inject('/x/q?__proto__=x')).json(), JSON.parse('{"__proto__":"x","constructor":"q"}'))
  }
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is untouched')
  t.equal((Object.prototype as Record<string, unknown>).polluted, undefined)
})

test('hostile: 10,000 array items each get their default, in bounded time and memory, each its own copy', async (t) => {
  const Batch = Type.Object(
    {
      items: Type.Array(
        Type.Object(
          { name: Type.String(), tags: Type.Array(Type.String(), { default: [] }), n: Type.Integer({ default: 0 }) }
        ),
        { maxItems: 10_000 }
      )
    }
  )
  class Batches extends APIView {
    @Post('/', { schema: { body: Batch }, statusCode: 200 })
    create (request: ViewRequest<{ body: typeof Batch }>) {
      const { items } = request.body
      items[0].tags.push('changed')
      return {
        count: items.length,
        filled: items.filter((item) => item.n === 0 && Array.isArray(item.tags)).length,
        shared: items[1].tags.length
      }
    }
  }
  const app = await build({ views: [{ view: Batches, prefix: '/b' }] })
  t.teardown(() => app.close())
  const payload = JSON.stringify({ items: Array.from({ length: 10_000 }, (_, i) => ({ name: `item ${i}` })) })
  const heap = process.memoryUsage().heapUsed
  const started = performance.now()
  const res = await app.inject({ method: 'POST', url: '/b', headers: { 'content-type': 'application/json' }, payload })
  const took = performance.now() - started
  t.same(res.json(), { count: 10_000, filled: 10_000, shared: 0 })
  t.ok(took < 3000, `${Math.round(took)} ms`)
  t.ok(process.memoryUsage().heapUsed - heap < 200 * 1024 * 1024, 'memory grows by the items, not beyond')
})

test('hostile: deep schemas fill defaults at every level; a recursive one stops at maxBodyDepth', async (t) => {
  let Deep: TSchema = Type.Object({ leaf: Type.Integer({ default: 0 }) })
  for (let i = 0; i < 60; i++) Deep = Type.Object({ level: Type.Integer({ default: i }), child: Type.Optional(Deep) })
  const Tree = Type.Recursive((This) => Type.Object({ name: Type.String(), size: Type.Integer({ default: 1 }), kids: Type.Optional(Type.Array(This)) }), { $id: 'PolicyTree' })
  class Deeps extends APIView {
    @Post('/deep', { schema: { body: Deep }, statusCode: 200 })
    deep (request: ViewRequest) { return request.body }

    @Post('/tree', { schema: { body: Tree }, statusCode: 200 })
    tree (request: ViewRequest) { return request.body }
  }
  const app = await build({ views: [{ view: Deeps, prefix: '', validation: { unknownProperties: 'strip' } }] })
  t.teardown(() => app.close())
  let sent: Record<string, unknown> = {}
  const root = sent
  for (let i = 0; i < 60; i++) sent = (sent.child = {})
  const filled = (await app.inject(post('/deep', root))).json()
  let levels = 0
  for (let node = filled; node !== undefined; node = node.child) {
    if (node.child !== undefined) t.equal(node.level, 59 - levels++)
    else t.same(node, { leaf: 0 }, 'the innermost object')
  }
  t.equal(levels, 60)
  const nest = (depth: number): unknown => depth === 0 ? { name: 'leaf', junk: 1 } : { name: `n${depth}`, kids: [nest(depth - 1)], junk: 1 }
  const tree = (await app.inject(post('/tree', nest(40)))).json()
  let node = tree
  for (let depth = 40; depth > 0; depth--) {
    t.same(Object.keys(node).sort(), ['kids', 'name', 'size'], `depth ${depth}: filled and stripped`)
    node = node.kids[0]
  }
  t.same(node, { name: 'leaf', size: 1 })
  const tooDeep = problem(t, await app.inject(post('/tree', nest(100))), 400)
  t.match(tooDeep.errors[0].detail, /Nested more than 128 levels deep/, 'walked for its depth before anything is filled')
})

test('schemas without defaults or closed objects compile to nothing more; the pieces on their own', async (t) => {
  t.equal(compileDefaults(Type.Object({ a: Type.Integer(), b: Type.Array(Type.Object({ c: Type.String() })) })), undefined, 'no default: no step')
  t.equal(compileDefaults(Type.Object({ u: Type.Optional(Type.Union([Type.Object({ x: Type.Integer({ default: 1 }) }), Type.Null()])) })), undefined, 'a default only inside a union: none filled')
  t.equal(compileStrip(Type.Object({ a: Type.Integer() }, { additionalProperties: true }), () => () => true), undefined, 'an open object: nothing to strip')
  t.equal(compileStrip(strictBodySchema(Type.Union([Type.Integer(), Type.Array(Type.String())])), () => () => true), undefined, 'a union of scalars and arrays of them: nothing to strip')
  t.same(optionalDefaults(Type.Object({ a: Type.Integer() })), Type.Object({ a: Type.Integer() }))
  const Open = Type.Object(
    { a: Type.Integer({ default: 1 }) },
    { additionalProperties: Type.Object({ b: Type.Integer({ default: 2 }) }) }
  )
  const value: Record<string, unknown> = { x: {}, y: 3 }
  compileDefaults(Open)!(value)
  t.same(value, { x: { b: 2 }, y: 3, a: 1 }, 'additionalProperties: defaults inside the other members')
  const shown = optionalDefaults(Type.Object({
    a: Type.Integer({ default: 1 }),
    m: Type.Record(Type.String(), Type.Object({ r: Type.Integer({ default: 1 }), s: Type.String() })),
    t: Type.Tuple([Type.Object({ u: Type.Integer({ default: 0 }) }), Type.Integer()]),
    i: Type.Intersect([Type.Object({ v: Type.Integer({ default: 0 }) }), Type.Object({ w: Type.Integer() })]),
    o: Type.Object({}, { additionalProperties: Type.Object({ z: Type.Integer({ default: 0 }) }) })
  })) as any
  t.same(shown.required, ['m', 't', 'i', 'o'])
  t.same(Object.values(shown.properties.m.patternProperties).map((s: any) => s.required), [['s']])
  t.same(shown.properties.t.items[0].required, undefined)
  t.same(shown.properties.i.allOf.map((s: any) => s.required), [undefined, ['w']])
  t.same(shown.properties.o.additionalProperties.required, undefined)
  const Tree = Type.Recursive((This) => Type.Object({ n: Type.Integer({ default: 0 }), kids: Type.Array(This) }), { $id: 'ShownTree' })
  t.equal(optionalDefaults(Tree), Tree, 'a schema that refers to itself is shown as declared')
  t.same(declaredDefaults(Tree).map((d) => d.path), ['/n'])
  t.same(unfilledDefaults(Type.Object({ n: Type.Not(Type.Object({ a: Type.Integer({ default: 1 }) })) })), ['/n/a'])
  t.same(resolveValidationPolicy([undefined, { useDefaults: false }, { unknownProperties: 'strip' }], 'x'), { useDefaults: false, unknownProperties: 'strip' })
  // Values of another type than the schema's are left for the check.
  const Shapes = Type.Object(
    {
      o: Type.Object({ d: Type.Integer({ default: 1 }) }),
      a: Type.Array(Type.Object({ d: Type.Integer({ default: 1 }) })),
      t: Type.Tuple([Type.Object({ d: Type.Integer({ default: 1 }) })]),
      r: Type.Record(Type.String(), Type.Object({ d: Type.Integer({ default: 1 }) }))
    }
  )
  const shapes = compileDefaults(Shapes)!
  for (const wrong of ['text', 3, null, [1]]) shapes(wrong)
  const mixed: Record<string, unknown> = { o: [], a: {}, t: {}, r: [] }
  shapes(mixed)
  t.same(mixed, { o: [], a: {}, t: {}, r: [] })
  // A member named __proto__ is defined as an own one: the prototype stays.
  const Proto = Type.Object({})
  Object.defineProperty(Proto.properties, '__proto__', { value: Type.Optional(Type.Object({ polluted: Type.Boolean({ default: true }) }, { default: {} })), enumerable: true })
  const target: Record<string, unknown> = {}
  compileDefaults(Proto)!(target)
  t.same(Object.getOwnPropertyDescriptor(target, '__proto__')?.value, { polluted: true })
  t.equal(Object.getPrototypeOf(target), Object.prototype)
  t.equal(({} as Record<string, unknown>).polluted, undefined)
  // A schema used twice, and a recursive one without defaults beside one with.
  const Both = Type.Object({ d: Type.Integer({ default: 1 }) })
  const Plain = Type.Recursive((This) => Type.Object({ kids: Type.Array(This) }))
  const twice: Record<string, unknown> = { x: {}, y: {}, p: { kids: [{ kids: [] }] } }
  const Given = Type.Object({ a: Type.Integer() }, { default: { a: 1 } })
  compileDefaults(Type.Object({ x: Both, y: Both, p: Plain, g: Given, h: Given }))!(twice)
  t.same(twice, { x: { d: 1 }, y: { d: 1 }, p: { kids: [{ kids: [] }] }, g: { a: 1 }, h: { a: 1 } })
  t.not(twice.g, twice.h, 'each a copy of its own')
  // A default whose schema refers to the recursive schema around it cannot be checked alone: the request's check covers it.
  const Kids = Type.Recursive((This) => Type.Object({ name: Type.String(), kids: Type.Array(This, { default: [] }) }))
  assertDefaultsValid(Kids, 'Kids')
  const kids = { name: 'a', kids: [{ name: 'b' }] }
  t.equal(compilePartValidator(Kids, 'body', { useDefaults: true })(kids), true)
  t.same(kids, { name: 'a', kids: [{ name: 'b', kids: [] }] })
  // A union member that refers to the recursive schema around it is not compiled alone: that union is checked, not stripped.
  const Rec = Type.Recursive((This) => Type.Object({ next: Type.Optional(Type.Union([This, Type.Null()])) }))
  const validate = compilePartValidator(strictBodySchema(Rec), 'body', { stripUnknown: true })
  t.equal(validate({ next: { next: null } }), true)
  t.not(validate({ next: { next: null, extra: 1 } }), true, 'inside such a union, an unknown member is refused')
  t.equal(validate({ next: null, extra: 1 }), true, 'around it, stripped')
})

test('strip: an intersection keeps the names its check takes (a record member takes any); unions are stripped by the member that matches', async (t) => {
  const strip = (schema: TSchema) => compilePartValidator(strictBodySchema(schema), 'body', { stripUnknown: true })
  const cases: Array<[string, TSchema, unknown, unknown]> = [
    ['an intersection of intersections', Type.Intersect([Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Object({ b: Type.Integer() })]), Type.Object({ c: Type.Object({ d: Type.Integer() }) })]),
      { a: 1, b: 2, c: { d: 3, e: 4 }, f: 5 }, { a: 1, b: 2, c: { d: 3 } }],
    ['a record member evaluates every name', Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Record(Type.String(), Type.Integer())]), { a: 1, b: 2 }, { a: 1, b: 2 }],
    ['an open member does not (TypeBox evaluates the names members declare)', Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Object({}, { additionalProperties: true })]), { a: 1, b: 2 }, { a: 1 }],
    ['an inner intersection that cannot tell', Type.Intersect([Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Record(Type.String(), Type.Integer())]), Type.Object({ b: Type.Integer() })]), { a: 1, b: 2, c: 3 }, { a: 1, b: 2, c: 3 }],
    ['a union member holding arrays, intersections and unions', Type.Union([
      Type.Object({ kind: Type.Literal('list'), items: Type.Array(Type.Object({ n: Type.Integer() })) }),
      Type.Object({ kind: Type.Literal('pair'), both: Type.Intersect([Type.Object({ x: Type.Integer() }), Type.Object({ y: Type.Integer() })]), maybe: Type.Union([Type.Object({ m: Type.Integer() }), Type.Null()]) })
    ]), { kind: 'pair', both: { x: 1, y: 2, z: 3 }, maybe: { m: 1, o: 2 }, extra: true }, { kind: 'pair', both: { x: 1, y: 2 }, maybe: { m: 1 } }],
    ['the same member list', Type.Union([Type.Object({ kind: Type.Literal('list'), items: Type.Array(Type.Object({ n: Type.Integer() })) }), Type.Null()]),
      { kind: 'list', items: [{ n: 1, m: 2 }] }, { kind: 'list', items: [{ n: 1 }] }],
    ['a null the union takes', Type.Object({ maybe: Type.Union([Type.Object({ m: Type.Integer() }), Type.Null()]) }), { maybe: null, x: 1 }, { maybe: null }],
    ['a oneOf', Type.Object({ one: Type.Unsafe<unknown>({ [Kind]: 'Union', oneOf: [Type.Object({ m: Type.Integer() })], anyOf: [Type.Object({ m: Type.Integer() })] }) }), { one: { m: 1, n: 2 } }, { one: { m: 1 } }]
  ]
  for (const [what, schema, sent, kept] of cases) {
    const value = structuredClone(sent)
    t.equal(strip(schema)(value), true, what)
    t.same(value, kept, what)
  }
  const Tree = Type.Recursive((This) => Type.Object({ n: Type.Integer(), kids: Type.Array(This) }), { $id: 'StripTree' })
  const shared = Type.Object({ a: Type.Integer() })
  const value = { t: { n: 1, kids: [{ n: 2, kids: [], x: 1 }] }, s1: { a: 1, b: 2 }, s2: { a: 1, b: 2 } }
  t.equal(strip(Type.Object({ t: Tree, s1: shared, s2: shared }))(value), true)
  t.same(value, { t: { n: 1, kids: [{ n: 2, kids: [] }] }, s1: { a: 1 }, s2: { a: 1 } }, 'a recursive schema, a schema used twice')
})
