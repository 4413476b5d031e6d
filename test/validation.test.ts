import { test } from 'tap'
import { Type } from '@sinclair/typebox'
import { APIView, Get, Post } from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import { build, problem } from './helpers.js'

const Query = Type.Object({
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  ratio: Type.Optional(Type.Number()),
  flag: Type.Optional(Type.Boolean()),
  ids: Type.Optional(Type.Array(Type.Integer())),
  tags: Type.Optional(Type.Array(Type.String())),
  name: Type.Optional(Type.String()),
  either: Type.Optional(Type.Union([Type.Integer(), Type.Literal('all')])),
  numberish: Type.Optional(Type.Union([Type.Integer(), Type.Number()]))
})
const Params = Type.Object({ id: Type.Integer() })
const Headers = Type.Object({ 'X-Page': Type.Optional(Type.Integer()), 'x-mode': Type.Optional(Type.String()) })
const Nested = Type.Object({
  item: Type.Object({ name: Type.String() }),
  list: Type.Array(Type.Object({ n: Type.Integer() })),
  open: Type.Object({ a: Type.String() }, { additionalProperties: true }),
  choice: Type.Optional(Type.Union([Type.Object({ kind: Type.Literal('a'), a: Type.String() }), Type.Object({ kind: Type.Literal('b'), b: Type.Integer() })])),
  both: Type.Optional(Type.Intersect([Type.Object({ x: Type.Integer() }), Type.Object({ y: Type.Integer() })])),
  when: Type.Optional(Type.String({ format: 'date-time' })),
  mail: Type.Optional(Type.String({ format: 'email' }))
})

class Echo extends APIView {
  @Get('/q', { schema: { querystring: Query } })
  query (request: ViewRequest<{ querystring: typeof Query }>) { return request.query }

  @Get('/p/:id', { schema: { params: Params } })
  params (request: ViewRequest<{ params: typeof Params }>) {
    return {
      id: request.params.id,
      type: typeof request.params.id
    }
  }

  @Get('/h', { schema: { headers: Headers } })
  headers (request: ViewRequest<{ headers: typeof Headers }>) { return { page: request.headers['x-page'] ?? null, mode: request.headers['x-mode'] ?? null } }

  @Post('/b', { schema: { body: Nested }, statusCode: 200 })
  body (request: ViewRequest<{ body: typeof Nested }>) { return request.body }
}

test('query values convert only from their plain decimal form', async (t) => {
  const app = await build({ views: [Echo] })
  t.teardown(() => app.close())
  t.same((await app.inject('/q?limit=5&ratio=2.5&flag=true&name=007')).json(), { limit: 5, ratio: 2.5, flag: true, name: '007' })
  t.same((await app.inject('/q?limit=007')).json(), { limit: 7 }, 'leading zeros are still decimal')
  t.same((await app.inject('/q?flag=false&ratio=-3')).json(), { flag: false, ratio: -3 })
  for (const bad of ['1e3', '10.5', '0x10', '', ' 5', '5 ', '+5', 'Infinity', '99999999999999999999']) {
    const body = problem(t, await app.inject(`/q?limit=${encodeURIComponent(bad)}`), 400)
    t.same(body.errors.map((e: { parameter: string, in: string }) => [e.in, e.parameter]), [['query', 'limit']], `limit=${JSON.stringify(bad)}`)
  }
  for (const bad of ['1e3', '0x10', '.5', '5.']) {
    problem(t, await app.inject(`/q?ratio=${bad}`), 400)
  }
  for (const bad of ['1', 'yes', 'TRUE']) {
    problem(t, await app.inject(`/q?flag=${bad}`), 400)
  }
  const range = problem(t, await app.inject('/q?limit=101'), 400)
  t.equal(range.errors[0].pointer, '#/limit')
  t.equal(range.detail, 'The query string is invalid.')
})

test('repeated and single query values fill arrays; unions keep strings they accept', async (t) => {
  const app = await build({ views: [Echo] })
  t.teardown(() => app.close())
  t.same((await app.inject('/q?ids=1&ids=2&tags=a')).json(), { ids: [1, 2], tags: ['a'] })
  t.same((await app.inject('/q?ids=3')).json(), { ids: [3] })
  t.same(problem(t, await app.inject('/q?ids=1&ids=x'), 400).errors[0].pointer, '#/ids/1')
  t.same((await app.inject('/q?either=all')).json(), { either: 'all' })
  t.same((await app.inject('/q?either=4')).json(), { either: 4 })
  t.same((await app.inject('/q?numberish=4.5')).json(), { numberish: 4.5 })
  t.same((await app.inject('/q?unknown=1')).json(), { unknown: '1' }, 'unknown query parameters are not refused (cache busters, tracking)')
})

test('path parameters convert like query values; a non-integer id is a 400 naming it', async (t) => {
  const app = await build({ views: [Echo] })
  t.teardown(() => app.close())
  t.same((await app.inject('/p/12')).json(), { id: 12, type: 'number' })
  for (const bad of ['abc', '1.5', '1e2']) {
    const body = problem(t, await app.inject(`/p/${bad}`), 400)
    t.same(body.errors, [{ detail: 'Expected integer', pointer: '#/id', in: 'path', parameter: 'id' }])
    t.equal(body.detail, 'The path parameters are invalid.')
  }
})

test('headers are matched case-insensitively and converted', async (t) => {
  const app = await build({ views: [Echo] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/h', headers: { 'X-Page': '3', 'x-mode': 'fast' } })).json(), { page: 3, mode: 'fast' })
  const body = problem(t, await app.inject({ url: '/h', headers: { 'x-page': 'three' } }), 400)
  t.same(body.errors, [{ detail: 'Expected integer', pointer: '#/x-page', in: 'header', parameter: 'x-page' }])
  t.equal(body.detail, 'The request headers are invalid.', 'the detail names the part')
})

test('bodies reject unknown properties at any depth, unless the schema opens them', async (t) => {
  const app = await build({ views: [Echo] })
  t.teardown(() => app.close())
  const ok = { item: { name: 'n' }, list: [{ n: 1 }], open: { a: 'x', more: true } }
  t.same((await app.inject({ method: 'POST', url: '/b', payload: ok })).json(), ok, 'additionalProperties: true is kept open')
  const cases: Array<[unknown, string[]]> = [
    [{ ...ok, top: 1 }, ['#/top']],
    [{ ...ok, item: { name: 'n', deep: 1 } }, ['#/item/deep']],
    [{ ...ok, list: [{ n: 1 }, { n: 2, m: 3 }] }, ['#/list/1/m']],
    [{ ...ok, choice: { kind: 'a', a: 'x', b: 1 } }, ['#/choice']],
    [{ ...ok, both: { x: 1, y: 2, z: 3 } }, ['#/both/z']],
    [{ ...ok, when: 'yesterday' }, ['#/when']],
    [{ ...ok, mail: 'not-an-email' }, ['#/mail']]
  ]
  for (const [payload, pointers] of cases) {
    const body = problem(t, await app.inject({ method: 'POST', url: '/b', payload: payload as object }), 400)
    t.same(body.errors.map((e: { pointer: string }) => e.pointer), pointers, pointers.join())
  }
  const good = { ...ok, choice: { kind: 'b', b: 2 }, both: { x: 1, y: 2 }, when: '2026-11-21T10:00:00Z', mail: 'a@b.example' }
  t.same((await app.inject({ method: 'POST', url: '/b', payload: good })).json(), good, 'unions, intersections and formats accept valid data')
})

test('many errors are capped; a pointer escapes / and ~ in keys', async (t) => {
  class Wide extends APIView {
    @Post('/', { schema: { body: Type.Array(Type.Integer()) } })
    wide () { return {} }

    @Get('/odd', { schema: { querystring: Type.Object({ 'a/b~c': Type.Optional(Type.Integer()) }) } })
    odd () { return {} }
  }
  const app = await build({ views: [Wide] })
  t.teardown(() => app.close())
  const body = problem(t, await app.inject({ method: 'POST', url: '/', payload: Array.from({ length: 100 }, () => 'x') }), 400)
  t.equal(body.errors.length, 20)
  t.equal(body.errors[19].pointer, '#/19')
  const odd = problem(t, await app.inject('/odd?a%2Fb~c=x'), 400)
  t.same(odd.errors, [{ detail: 'Expected integer', pointer: '#/a~1b~0c', in: 'query', parameter: 'a/b~c' }])
})

test('conversion corners: numeric and boolean literals, nullable numbers, schemas without properties', async (t) => {
  const Corner = Type.Object({
    nullable: Type.Optional(Type.Union([Type.Integer(), Type.Null()])),
    five: Type.Optional(Type.Literal(5)),
    either: Type.Optional(Type.Union([Type.Literal(1), Type.Literal(2)])),
    yes: Type.Optional(Type.Literal(true))
  })
  class Corners extends APIView {
    @Get('/q', { schema: { querystring: Corner } })
    q (request: ViewRequest<{ querystring: typeof Corner }>) { return request.query }

    @Get('/any', { schema: { querystring: Type.Any(), headers: Type.Any() } })
    any (request: ViewRequest) { return request.query }
  }
  const app = await build({ views: [Corners] })
  t.teardown(() => app.close())
  t.same((await app.inject('/q?nullable=3&five=5&either=2&yes=true')).json(), { nullable: 3, five: 5, either: 2, yes: true })
  problem(t, await app.inject('/q?five=6'), 400)
  t.same((await app.inject('/any?x=1')).json(), { x: '1' }, 'a schema without properties converts nothing')
})

test('bodies: recursive schemas, intersections that say otherwise; required headers; whole-query errors', async (t) => {
  const Node = Type.Recursive((This) => Type.Object({ name: Type.String(), children: Type.Array(This) }))
  const Open = Type.Object({
    tree: Node,
    both: Type.Intersect(
      [Type.Object({ a: Type.Integer() }), Type.Object({ b: Type.Integer() })],
      { unevaluatedProperties: true }
    ),
    nested: Type.Intersect([Type.Object({ inner: Type.Intersect([Type.Object({ x: Type.Integer() })]) })]),
    deep: Type.Optional(
      Type.Intersect(
        [
          Type.Intersect([Type.Object({ a: Type.Integer() }), Type.Object({ b: Type.Integer() })]),
          Type.Object({ c: Type.Integer() })
        ]
      )
    ),
    meta: Type.Optional(
      Type.Intersect([Type.Object({ tags: Type.Object({ k: Type.String() }) }), Type.Object({ c: Type.Integer() })])
    )
  })
  const Needed = Type.Object({ 'X-Key': Type.String() })
  const NonEmpty = Type.Object({ a: Type.Optional(Type.String()) }, { minProperties: 1 })
  class Shapes extends APIView {
    @Post('/', { schema: { body: Open }, statusCode: 200 })
    post (request: ViewRequest<{ body: typeof Open }>) { return request.body }

    @Get('/key', { schema: { headers: Needed } })
    key (request: ViewRequest<{ headers: typeof Needed }>) { return { key: request.headers['x-key'] } }

    @Get('/some', { schema: { querystring: NonEmpty } })
    some () { return {} }
  }
  const app = await build({ views: [Shapes] })
  t.teardown(() => app.close())
  const body = { tree: { name: 'root', children: [{ name: 'leaf', children: [] }] }, both: { a: 1, b: 2, extra: true }, nested: { inner: { x: 1 } }, deep: { a: 1, b: 2, c: 3 } }
  t.same((await app.inject({ method: 'POST', url: '/', payload: body })).json(), body, 'a recursive body validates; an open intersection stays open')
  problem(t, await app.inject({ method: 'POST', url: '/', payload: { ...body, deep: { a: 1, b: 2, c: 3, d: 4 } } }), 400)
  const nested = problem(t, await app.inject({ method: 'POST', url: '/', payload: { ...body, meta: { tags: { k: 'v', extra: 1 }, c: 1 } } }), 400)
  t.ok(nested.errors.some((e: { pointer: string }) => e.pointer === '#/meta/tags/extra'), 'objects nested in an intersection member are closed too')
  t.same((await app.inject({ url: '/key', headers: { 'x-key': 'k' } })).json(), { key: 'k' })
  t.same(problem(t, await app.inject('/key'), 400).errors[0].parameter, 'x-key', 'a required header, matched in lower case')
  const whole = problem(t, await app.inject('/some'), 400)
  t.same(whole.errors, [{ detail: 'Expected object to have at least 1 properties', pointer: '#', in: 'query' }])
})

test('registerFormats keeps registered formats and skips formats of other types', async (t) => {
  const { registerFormats } = await import('../lib/schema/validation.js')
  const { FormatRegistry } = await import('@sinclair/typebox')
  FormatRegistry.Set('x-taken', () => true)
  registerFormats({
    'x-taken': /^never$/,
    'x-regex': /^a+$/,
    'x-fn': (v: string) => v === 'ok',
    'x-object-regex': { validate: /^b+$/ },
    'x-object-fn': { type: 'string', validate: (v: string) => v === 'yes' },
    'x-number': { type: 'number', validate: () => true }
  })
  t.ok(FormatRegistry.Get('x-taken')!('anything'), 'an application format is not replaced')
  t.ok(FormatRegistry.Get('x-regex')!('aaa'))
  t.notOk(FormatRegistry.Get('x-fn')!('no'))
  t.ok(FormatRegistry.Get('x-object-regex')!('bb'))
  t.ok(FormatRegistry.Get('x-object-fn')!('yes'))
  t.notOk(FormatRegistry.Has('x-number'))
})

test('formats: importing the library registers none; compiling a view registers what its schemas use, and an app\'s own wins', async (t) => {
  // A fresh process: TypeBox's registry is shared by everything in one.
  const { execFileSync } = await import('node:child_process')
  const out = execFileSync(process.execPath, [...process.execArgv, 'test/fixtures/formats.ts'], { encoding: 'utf8' })
  t.same(JSON.parse(out), { before: [], after: ['email', 'uuid'], status: 200, body: [{ id: 'mine', email: 'a@b.example' }] },
    'none on import; email once a view uses it; the app\'s uuid kept (its check passed "mine")')
})

test('the fast date-time check accepts only what ajv-formats accepts, and the canonical shape', async (t) => {
  const { isCanonicalDateTime } = await import('../lib/schema/validation.js')
  const { fullFormats } = await import('ajv-formats/dist/formats.js')
  const full = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate // ajv-formats types its entries as a union
  const accepted = ['2024-02-29T23:59:59.999Z', '2000-02-29T00:00:00.000Z', '2026-11-24T03:14:00.123Z', '1999-12-31T12:30:45.000Z']
  const rejected = ['1900-02-29T00:00:00.000Z', '2023-02-29T00:00:00.000Z', '2024-04-31T00:00:00.000Z', '2024-13-01T00:00:00.000Z',
    '2024-00-10T00:00:00.000Z', '2024-01-00T00:00:00.000Z', '2024-01-01T24:00:00.000Z', '2024-01-01T00:60:00.000Z',
    '2024-01-01T00:00:60.000Z', '2024-01-01T00:00:00.00xZ', '2024-01-01T00:00:00.0x0Z', 'x024-01-01T00:00:00.000Z',
    '20x4-01-01T00:00:00.000Z', '2024-01-01 00:00:00.000Z', '2024-01-01T00:00:00.000+', '2024-01-01T00:00:00Z', '2024/01/01T00:00:00.000Z']
  for (const value of accepted) {
    t.ok(isCanonicalDateTime(value), value)
    t.ok(full(value), `ajv-formats agrees on ${value}`)
  }
  for (const value of rejected) t.notOk(isCanonicalDateTime(value), value)
  // Every canonical string of a real instant takes the fast path.
  for (let ms = Date.UTC(1899, 0, 1); ms < Date.UTC(2101, 0, 1); ms += 86_399_123) {
    const value = new Date(ms).toISOString()
    if (!isCanonicalDateTime(value)) t.fail(value)
  }
  // Through TypeBox, forms only ajv-formats accepts still pass and the rest still fail.
  const { FormatRegistry } = await import('@sinclair/typebox')
  ;(await import('../lib/schema/validation.js')).useFormatsOf({ format: 'date-time' })
  const registered = FormatRegistry.Get('date-time')
  t.ok(registered?.('2016-12-31T23:59:60Z'), 'leap second via ajv-formats')
  t.ok(registered?.('2024-01-01t10:00:00+02:00'), 'offset via ajv-formats')
  t.notOk(registered?.('2023-02-29T00:00:00.000Z'))
})

test('a value that is none of a union of literals is answered with the choices', async (t) => {
  const many = Type.Union(Array.from({ length: 25 }, (_, i) => Type.Literal(`v${i}`)))
  class Choices extends APIView {
    @Post('/', { schema: { body: Type.Object({ size: Type.Union([Type.Literal('s'), Type.Literal('m'), Type.Literal(3), Type.Literal(true)]), many: Type.Optional(many) }) }, responseSchema: Type.Object({}) })
    create () { return {} }
  }
  const app = await build({ views: [Choices] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/', payload: { size: 'xl', many: 'nope' } })
  t.same(problem(t, res, 400).errors, [
    { detail: 'Expected one of: s, m, 3, true', pointer: '#/size' },
    { detail: `Expected one of: ${Array.from({ length: 20 }, (_, i) => `v${i}`).join(', ')}, and 5 more`, pointer: '#/many' }
  ])
})
