import { test } from 'tap'
import { Type } from '@sinclair/typebox'
import { APIView, Get, Post } from '../lib/index.js'
import type { SerializerOptions, ViewRequest } from '../lib/types.js'
import { build, problem } from './helpers.js'

const CaseParams = Type.Object({ case: Type.String() })

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  note: Type.Optional(Type.Union([Type.String(), Type.Null()]))
})

class Entity {
  #name: string
  constructor (readonly id: number, name: string) { this.#name = name }
  get name (): string { return this.#name.toUpperCase() }
  get internal (): string { return 'not for clients' }
}

function logCapture () {
  const lines: string[] = []
  return { lines, logger: { level: 'error', stream: { write: (line: string) => { lines.push(line) } } } }
}

test('validateResponse: a returned value that does not match is a 500 and nothing wrong is sent', async (t) => {
  class Strict extends APIView {
    static override responseSchema = Item
    @Get('/bad')
    bad () { return { id: 'one', name: 'x', password: 'secret' } }

    @Get('/good')
    good () { return { id: 1, name: 'x', password: 'secret' } }
  }
  const { lines, logger } = logCapture()
  const app = await build({ views: [Strict] }, { logger })
  t.teardown(() => app.close())
  const res = await app.inject('/bad')
  const body = problem(t, res, 500)
  t.equal(body.detail, 'An unexpected error occurred.')
  t.notMatch(res.body, /secret|one/)
  t.match(lines.join(''), /"mismatches":\[\{"detail":"Expected integer","pointer":"#\/id"\}\]/, 'the log names the mismatch')
  t.same((await app.inject('/good')).json(), { id: 1, name: 'x' }, 'unknown properties are dropped by the serializer')
})

test('validateResponse checks the shape by default; strictResponse adds formats and bounds', async (t) => {
  const Event = Type.Object({
    id: Type.Integer({ minimum: 1 }),
    code: Type.String({ pattern: '^[A-Z]{3}$', minLength: 3, maxLength: 3 }),
    at: Type.String({ format: 'date-time' }),
    tags: Type.Array(Type.String(), { minItems: 1, uniqueItems: true }),
    kind: Type.Union([Type.Literal('a'), Type.Literal('b')]),
    parent: Type.Union([Type.Object({ id: Type.Integer() }), Type.Null()])
  })
  // Within the shape, outside every bound.
  const outOfBounds = { id: 0, code: 'toolong', at: 'yesterday', tags: [], kind: 'a', parent: null }
  const shapes: Record<string, unknown> = {
    '/type': { ...outOfBounds, id: '1' },
    '/missing': { code: 'ABC', at: '2026-01-01T00:00:00.000Z', tags: ['x'], kind: 'a', parent: null },
    '/literal': { ...outOfBounds, kind: 'c' },
    '/nested': { ...outOfBounds, parent: { id: 'x' } },
    '/item': { ...outOfBounds, tags: [1] }
  }
  class Events extends APIView {
    static override responseSchema = Event
    @Get('/bounds') bounds () { return outOfBounds }
    @Get('/:case', { schema: { params: CaseParams } }) shape (request: ViewRequest<{ params: typeof CaseParams }>) { return shapes['/' + request.params.case] }
  }
  class StrictEvents extends Events {
    static override strictResponse = true
  }
  const app = await build({ views: [{ view: Events, prefix: '/default' }, { view: StrictEvents, prefix: '/strict' }] })
  t.teardown(() => app.close())
  const sent = await app.inject('/default/bounds')
  t.equal(sent.statusCode, 200, 'the default check lets value constraints pass')
  t.same(sent.json(), outOfBounds, 'the value is sent as returned')
  problem(t, await app.inject('/strict/bounds'), 500)
  for (const path of Object.keys(shapes)) {
    problem(t, await app.inject('/default' + path), 500)
    problem(t, await app.inject('/strict' + path), 500)
  }
})

test('validateResponse = false serializes without validating', async (t) => {
  class Loose extends APIView {
    static override responseSchema = Item
    static override validateResponse = false
    @Get('/')
    get () { return { id: '7', name: 'x' } }
  }
  const app = await build({ views: [Loose] })
  t.teardown(() => app.close())
  t.same((await app.inject('/')).json(), { id: 7, name: 'x' }, 'the serializer coerces, nothing checks')
})

test('fromAttributes: true reads getters into plain data; false refuses class instances; null takes values as they are', async (t) => {
  class Reads extends APIView {
    static override responseSchema = Item
    static override fromAttributes = true
    @Get('/one')
    one () { return new Entity(1, 'ada') }

    @Get('/many', { responseSchema: Type.Array(Item) })
    many () { return [new Entity(1, 'a'), new Entity(2, 'b')] }

    @Get('/scalar', { responseSchema: Type.Integer() })
    scalar () { return 5 }
  }
  class Refuses extends APIView {
    static override responseSchema = Item
    static override fromAttributes = false
    @Get('/instance')
    instance () { return new Entity(1, 'ada') }

    @Get('/plain')
    plain () { return { id: 1, name: 'plain', note: null } }

    @Get('/list', { responseSchema: Type.Array(Item) })
    list () { return [{ id: 1, name: 'plain' }] }
  }
  class AsIs extends APIView {
    static override responseSchema = Item
    @Get('/instance')
    instance () { return new Entity(2, 'bob') }
  }
  const app = await build({ views: [{ view: Reads, prefix: '/reads' }, { view: Refuses, prefix: '/refuses' }, { view: AsIs, prefix: '/as-is' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/reads/one')).json(), { id: 1, name: 'ADA' })
  t.same((await app.inject('/reads/many')).json(), [{ id: 1, name: 'A' }, { id: 2, name: 'B' }])
  t.same((await app.inject('/reads/scalar')).json(), 5)
  problem(t, await app.inject('/refuses/instance'), 500)
  t.same((await app.inject('/refuses/plain')).json(), { id: 1, name: 'plain', note: null })
  t.same((await app.inject('/refuses/list')).json(), [{ id: 1, name: 'plain' }])
  t.same((await app.inject('/as-is/instance')).json(), { id: 2, name: 'BOB' }, 'getters are read by the validator and serializer alike')
})

test('serializerOptions: copied from the defaults per request, excludeNone drops nulls at any depth', async (t) => {
  const Nested = Type.Object(
    {
      id: Type.Integer(),
      note: Type.Union([Type.String(), Type.Null()]),
      child: Type.Optional(Type.Object({ note: Type.Union([Type.String(), Type.Null()]) }))
    }
  )
  const seen: SerializerOptions[] = []
  class Options extends APIView {
    static override responseSchema = Nested
    @Get('/default')
    plain () {
      seen.push(this.serializerOptions)
      return { id: 1, note: null, child: { note: null } }
    }

    @Get('/exclude')
    exclude () {
      this.serializerOptions.excludeNone = true
      return { id: 1, note: null, child: { note: null } }
    }

    @Get('/replace')
    replace () {
      this.serializerOptions = { excludeNone: true }
      return { id: 2, note: 'kept', child: { note: null } }
    }
  }
  class ExcludeByDefault extends Options {
    static override defaultSerializerOptions = { byAlias: true, excludeNone: true }
  }
  const app = await build({ views: [{ view: Options, prefix: '/o' }, { view: ExcludeByDefault, prefix: '/d' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/o/default')).json(), { id: 1, note: null, child: { note: null } })
  t.same((await app.inject('/o/exclude')).json(), { id: 1, child: {} }, 'required nulls are dropped too')
  t.same((await app.inject('/o/default')).json(), { id: 1, note: null, child: { note: null } }, 'one request never changes the next')
  t.same((await app.inject('/o/replace')).json(), { id: 2, note: 'kept', child: {} })
  t.same((await app.inject('/d/default')).json(), { id: 1, child: {} }, 'class defaults apply without touching the options')
  t.not(seen[0], seen[1], 'each request gets its own copy')
  t.same(seen[0], { byAlias: true })
  t.same(Options.defaultSerializerOptions, { byAlias: true }, 'the class default is never mutated')
})

test('aliases: wire names on output (byAlias) and input, field names in the handler', async (t) => {
  const Person = Type.Object({
    full_name: Type.String({ alias: 'fullName' }),
    birth_year: Type.Optional(Type.Integer({ alias: 'birthYear' })),
    address: Type.Optional(Type.Object({ zip_code: Type.String({ alias: 'zipCode' }) })),
    tags: Type.Optional(Type.Array(Type.Object({ tag_name: Type.String({ alias: 'tagName' }) }))),
    plain: Type.Optional(Type.String()),
    nick_name: Type.Optional(Type.Union([Type.String(), Type.Null()], { alias: 'nickName' }))
  })
  const PersonIn = Type.Object({ full_name: Type.String({ alias: 'fullName' }), address: Type.Optional(Type.Object({ zip_code: Type.String({ alias: 'zipCode' }) })) })
  class People extends APIView {
    static override responseSchema = Person
    @Get('/')
    one () {
      return { full_name: 'Ada Lovelace', birth_year: 1815, address: { zip_code: 'W1' }, tags: [{ tag_name: 'math' }], plain: 'p' }
    }

    @Get('/fields')
    fields () {
      this.serializerOptions.byAlias = false
      return { full_name: 'Ada Lovelace', birth_year: 1815 }
    }

    @Get('/fields-exclude')
    fieldsExclude () {
      this.serializerOptions = { byAlias: false, excludeNone: true }
      return { full_name: 'Ada', nick_name: null }
    }

    @Post('/', { schema: { body: PersonIn } })
    create (request: ViewRequest<{ body: typeof PersonIn }>) {
      return { full_name: request.body.full_name, address: request.body.address }
    }
  }
  const app = await build({ views: [People] })
  t.teardown(() => app.close())
  t.same((await app.inject('/')).json(), { fullName: 'Ada Lovelace', birthYear: 1815, address: { zipCode: 'W1' }, tags: [{ tagName: 'math' }], plain: 'p' })
  t.same((await app.inject('/fields')).json(), { full_name: 'Ada Lovelace', birth_year: 1815 }, 'byAlias = false sends field names')
  t.same((await app.inject('/fields-exclude')).json(), { full_name: 'Ada' }, 'byAlias = false with excludeNone')

  const created = await app.inject({ method: 'POST', url: '/', payload: { fullName: 'Grace', address: { zipCode: '02139' } } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { fullName: 'Grace', address: { zipCode: '02139' } }, 'the body arrives by alias and reaches the handler by field name')
  const wrong = problem(t, await app.inject({ method: 'POST', url: '/', payload: { full_name: 'Grace' } }), 400)
  t.same(wrong.errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/fullName', '#/full_name'], 'field names are not wire names')
})

test('validationContext: a per-request record the view may use in its own checks', async (t) => {
  const contexts: Array<Record<string, unknown>> = []
  class Ctx extends APIView {
    @Get('/')
    get () {
      this.validationContext.tenant = 't1'
      contexts.push(this.validationContext)
      this.validationContext = { replaced: true }
      contexts.push(this.validationContext)
      return { ok: true }
    }
  }
  const app = await build({ views: [Ctx] })
  t.teardown(() => app.close())
  await app.inject('/')
  await app.inject('/')
  t.same(contexts, [{ tenant: 't1' }, { replaced: true }, { tenant: 't1' }, { replaced: true }])
  t.not(contexts[0], contexts[2], 'never shared between requests')
})

test('aliases inside a union are renamed too', async (t) => {
  const Shape = Type.Union([
    Type.Object({ kind: Type.Literal('circle'), circle_radius: Type.Number({ alias: 'radius' }) }),
    Type.Object({ kind: Type.Literal('square'), side_length: Type.Number({ alias: 'side' }) })
  ])
  class Shapes extends APIView {
    @Get('/circle', { responseSchema: Shape })
    circle () { return { kind: 'circle' as const, circle_radius: 2 } }

    @Get('/plain', { responseSchema: Type.Union([Type.String(), Type.Number()]) })
    plain () { return 3 }
  }
  const app = await build({ views: [Shapes] })
  t.teardown(() => app.close())
  t.same((await app.inject('/circle')).json(), { kind: 'circle', radius: 2 })
  t.same((await app.inject('/plain')).json(), 3)
})

test('serialization corners: nulls where aliased objects or arrays may be, lists under excludeNone, nested attributes', async (t) => {
  const Child = Type.Object({ child_name: Type.String({ alias: 'childName' }) })
  const Parent = Type.Object({
    kid: Type.Union([Child, Type.Null()]),
    kids: Type.Union([Type.Array(Child), Type.Null()]),
    tags: Type.Union([Type.Array(Type.String()), Type.Null()]),
    plain_list: Type.Array(Type.Object({ n: Type.Union([Type.Integer(), Type.Null()]) })),
    labels: Type.Optional(Type.Array(Type.String())),
    one_or_many: Type.Optional(Type.Union([Child, Type.Array(Child)]))
  })
  class Owner {
    get kid () { return { child_name: 'from a getter' } }
    kids = null
    tags = null
    plain_list = [{ n: 1 }]
    labels = ['x']
    one_or_many = [{ child_name: 'd' }]
  }
  class Corners extends APIView {
    static override responseSchema = Parent
    @Get('/nulls')
    nulls () {
      this.serializerOptions.excludeNone = true
      return { kid: null, kids: null, tags: null, plain_list: [{ n: null }, { n: 2 }] }
    }

    @Get('/aliased')
    aliased () { return { kid: { child_name: 'a' }, kids: [{ child_name: 'b' }], tags: ['t'], plain_list: [], one_or_many: [{ child_name: 'c' }] } }
  }
  class Attributes extends Corners {
    static override fromAttributes = true
    @Get('/owner')
    owner () { return new Owner() }
  }
  class Strict extends APIView {
    static override responseSchema = Type.Object({ inner: Type.Object({ v: Type.Integer() }) })
    static override fromAttributes = false
    @Get('/nested-instance')
    nested () { return { inner: new (class { v = 1 })() } }
  }
  const app = await build({ views: [{ view: Corners, prefix: '/c' }, { view: Attributes, prefix: '/a' }, { view: Strict, prefix: '/s' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/c/nulls')).json(), { plain_list: [{}, { n: 2 }] }, 'excludeNone walks into lists')
  t.same((await app.inject('/c/aliased')).json(), { kid: { childName: 'a' }, kids: [{ childName: 'b' }], tags: ['t'], plain_list: [], one_or_many: [{ childName: 'c' }] }, 'a union of object or array renames either')
  t.same((await app.inject('/a/owner')).json(), { kid: { childName: 'from a getter' }, kids: null, tags: null, plain_list: [{ n: 1 }], labels: ['x'], one_or_many: [{ childName: 'd' }] }, 'fromAttributes reads nested getters')
  problem(t, await app.inject('/s/nested-instance'), 500)
})

test('fromAttributes with a wrong shape still fails the response check', async (t) => {
  class Wrong extends APIView {
    static override fromAttributes = true
    @Get('/null-object', { responseSchema: Type.Object({ inner: Type.Object({ v: Type.Integer() }) }) })
    nullObject () { return { inner: null } as never }

    @Get('/scalar-list', { responseSchema: Type.Object({ list: Type.Array(Type.Object({ v: Type.Integer() })) }) })
    scalarList () { return { list: 'not a list' } as never }
  }
  const app = await build({ views: [Wrong] })
  t.teardown(() => app.close())
  problem(t, await app.inject('/null-object'), 500)
  problem(t, await app.inject('/scalar-list'), 500)
})
