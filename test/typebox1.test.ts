import { test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Kind, Type as T034, TypeRegistry } from '@sinclair/typebox'
import { Type, type Static } from 'typebox'
import { Value } from 'typebox/value'
import { Type as ProviderType, TypeBoxValidatorCompiler, type TypeBoxTypeProvider } from '@fastify/type-provider-typebox'
import {
  APIView, Get, Post, ResponseHeaders, alwaysSent, mix, typeboxValidatorCompiler, views
} from '../lib/index.js'
import { ConfigurationError } from '../lib/errors.js'
import { GenericViewSet, MemoryRepository, PaginationFilter } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { toTypeBox } from '../lib/core/typebox-lines.js'
import { compileCheck } from '../lib/schema/validation.js'
import { build, caught, problem } from './helpers.js'

// The schemas of a Book API, written with `typebox` 1.x (the line @fastify/type-provider-typebox 6 uses).
const Genre = Type.Enum(['novel', 'essay', 'poetry'])
const Book = Type.Object({
  id: Type.Integer(),
  title: Type.String({ minLength: 1 }),
  genre: Genre,
  year: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  tags: Type.Array(Type.String()),
  note: Type.Optional(Type.String()),
  updated_at: Type.String({ format: 'date-time' })
}, { $id: 'Book1', additionalProperties: false })
const BookIn = Type.Object({
  title: Type.String({ minLength: 1 }),
  genre: Genre,
  year: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()]),
  tags: Type.Array(Type.String(), { maxItems: 3 }),
  note: Type.Optional(Type.String())
})
const IdParams = Type.Object({ id: Type.Integer() })
type Book = Static<typeof Book>

const STAMP = '2026-01-02T03:04:05.000Z'
const rows = (): Book[] => [
  { id: 1, title: 'Dune', genre: 'novel', year: 1965, tags: ['sf'], updated_at: STAMP },
  { id: 2, title: 'Essays', genre: 'essay', year: null, tags: [], note: 'old', updated_at: STAMP }
]

function booksView () {
  let next = 3
  return mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Book,
    createSchema: BookIn,
    detailParams: IdParams,
    repository: new MemoryRepository<Book>({ rows: rows() }),
    filter: PaginationFilter.with({ fields: { genre: Genre }, orderingFields: ['year', 'title'] }),
    conditional: { lastModifiedField: 'updated_at', etag: true }
  }, {
    getKwargs (action) { return action === 'create' ? { id: next++, updated_at: STAMP } : {} }
  })
}

test('a generic viewset declared with typebox 1.x schemas validates, converts, pages, filters and answers as with 0.34', async (t) => {
  class Books extends booksView() {
    static override conditional = { ...super.conditional, etag: true }
  }
  const app = await build({ views: [{ view: Books, prefix: '/books' }] })
  t.teardown(() => app.close())

  const page = (await app.inject('/books?genre=essay')).json()
  t.same(page.items.map((b: Book) => b.id), [2], 'a filter field of typebox 1.x (an enum)')
  t.same((await app.inject('/books?sort=-title')).json().items.map((b: Book) => b.id), [2, 1], 'ordering')
  t.match(problem(t, await app.inject('/books?genre=poem'), 400).errors, [{ in: 'query', parameter: 'genre' }], 'a value outside the 1.x enum is a 400')

  const one = await app.inject('/books/1')
  t.same(one.json(), rows()[0], 'retrieve: integer params of 1.x, converted from the path')
  t.equal(one.headers['last-modified'], new Date(STAMP).toUTCString(), 'lastModifiedField of a 1.x date-time field')
  t.type(one.headers.etag, 'string')

  const created = await app.inject({ method: 'POST', url: '/books', payload: { title: 'Odes', genre: 'poetry', year: 1819, tags: ['verse'] } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { id: 3, title: 'Odes', genre: 'poetry', year: 1819, tags: ['verse'], updated_at: STAMP })

  const bad = problem(t, await app.inject({ method: 'POST', url: '/books', payload: { title: '', genre: 'opera', year: -1, tags: ['a', 'b', 'c', 'd'], id: 9 } }), 400)
  t.same(bad.errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/genre', '#/id', '#/tags', '#/title', '#/year'], 'every keyword of the 1.x body schema is checked, and the body is closed')
  t.equal((await app.inject('/books')).json().total_items, 3, 'nothing was written by the refused create')

  const merged = await app.inject({ method: 'PATCH', url: '/books/2', headers: { 'content-type': 'application/merge-patch+json', 'if-match': (await app.inject('/books/2')).headers.etag }, payload: { note: null, year: 1580 } })
  t.equal(merged.statusCode, 200, 'a merge patch over a 1.x schema')
  t.same(merged.json(), { id: 2, title: 'Essays', genre: 'essay', year: 1580, tags: [], updated_at: STAMP }, 'the optional member of 1.x is removed')
  const refused = await app.inject({ method: 'PATCH', url: '/books/2', headers: { 'content-type': 'application/merge-patch+json' }, payload: { genre: 'opera' } })
  t.match(problem(t, refused, 400).errors, [{ pointer: '#/genre' }], 'the patched result is checked against the 1.x schema')
})

test('a typebox 1.x response schema checks what the view returns', async (t) => {
  class Broken extends APIView {
    static override responseSchema = Book
    @Get('/')
    one () { return { ...rows()[0], genre: 'opera' } }
  }
  const app = await build({ views: [Broken] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/'), 500).status, 500, 'an item outside the 1.x enum fails the response check')
})

test('decorated routes take typebox 1.x schemas for every request part', async (t) => {
  const Query = Type.Object({ limit: Type.Integer({ minimum: 1, maximum: 10 }), flag: Type.Optional(Type.Boolean()) })
  const Headers = Type.Object({ 'x-tenant': Type.String({ pattern: '^[a-z]+$' }) })
  const Echo = Type.Object({ limit: Type.Integer(), flag: Type.Boolean(), tenant: Type.String(), title: Type.String() })
  class Search extends APIView {
    @Post('/:id', { schema: { params: IdParams, querystring: Query, headers: Headers, body: BookIn }, responseSchema: Echo, statusCode: 200 })
    echo (request: import('../lib/types.js').ViewRequest<{ params: typeof IdParams, querystring: typeof Query, headers: typeof Headers, body: typeof BookIn }>) {
      return { limit: request.query.limit + request.params.id, flag: request.query.flag ?? false, tenant: request.headers['x-tenant'], title: request.body.title }
    }
  }
  const app = await build({ views: [Search] })
  t.teardown(() => app.close())
  const ok = await app.inject({ method: 'POST', url: '/4?limit=2&flag=true', headers: { 'x-tenant': 'acme' }, payload: { title: 'T', genre: 'novel', year: null, tags: [] } })
  t.same(ok.json(), { limit: 6, flag: true, tenant: 'acme', title: 'T' }, 'query and path coerced from 1.x integer and boolean schemas')
  const send = { method: 'POST', payload: { title: 'T', genre: 'novel', year: null, tags: [] } } as const
  t.match(problem(t, await app.inject({ ...send, url: '/4?limit=20', headers: { 'x-tenant': 'acme' } }), 400).errors, [{ in: 'query', parameter: 'limit' }], 'a query value over its maximum')
  t.match(problem(t, await app.inject({ ...send, url: '/4?limit=2', headers: { 'x-tenant': 'ACME' } }), 400).errors, [{ in: 'header', parameter: 'x-tenant' }], 'a header outside its pattern')
  t.match(problem(t, await app.inject({ ...send, url: '/x?limit=2', headers: { 'x-tenant': 'acme' } }), 400).errors, [{ in: 'path', parameter: 'id' }], 'a path parameter that is not an integer')
})

test('an app using @fastify/type-provider-typebox 6 for its own routes registers views with the same schemas, and documents both', async (t) => {
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  await app.register(swagger, swaggerOptions({ info: { title: 'Books', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: booksView(), prefix: '/books' }] })
  app.post('/plain', { schema: { body: BookIn, response: { 200: Type.Object({ title: Type.String() }) } } }, async (request) => ({ title: request.body.title }))
  app.get('/own', { schema: { querystring: Type.Object({ genre: Genre }) }, validatorCompiler: typeboxValidatorCompiler }, async (request) => ({ genre: request.query.genre }))
  await app.ready()
  t.teardown(() => app.close())

  const payload = { title: 'Odes', genre: 'poetry', year: null, tags: [] }
  t.same((await app.inject({ method: 'POST', url: '/plain', payload })).json(), { title: 'Odes' }, 'the app route, validated by Fastify')
  t.equal((await app.inject({ method: 'POST', url: '/books', payload })).statusCode, 201, 'the view, validated by the library')
  t.same((await app.inject('/own?genre=essay')).json(), { genre: 'essay' }, 'typeboxValidatorCompiler on an app route takes a 1.x schema')
  t.equal((await app.inject('/own?genre=x')).statusCode, 400)

  const doc = JSON.parse(JSON.stringify(app.swagger()))
  const book = doc.components.schemas.Book1
  t.same(book.properties.genre, { anyOf: [{ type: 'string', enum: ['novel'] }, { type: 'string', enum: ['essay'] }, { type: 'string', enum: ['poetry'] }] }, 'a 1.x enum is documented as the union of literals 0.34 makes')
  t.same(book.properties.updated_at, { type: 'string', format: 'date-time' }, 'the other keywords as written')
  t.same(book.required, ['id', 'title', 'genre', 'year', 'tags', 'updated_at'], 'the optional member is not required')
  t.notOk(JSON.stringify(doc).includes('~'), 'no marker of either line reaches the document')
  t.ok(doc.paths['/plain'].post, 'the app route is documented beside the views')
})

test('typebox 1.x features that JSON Schema cannot check are refused at registration, naming the view and the static', async (t) => {
  const cases = [
    ['Type.Refine', Type.Refine(Type.String(), (value) => value.length > 2)],
    ['Type.Codec', Type.Codec(Type.String()).Decode((value) => new Date(value)).Encode((date) => date.toISOString())],
    ['Type.Unsafe', Type.Unsafe<'a'>({ type: 'string' })],
    ['Type.Cyclic', Type.Cyclic({ Node: Type.Object({ next: Type.Union([Type.Ref('Node'), Type.Null()]) }) }, 'Node')]
  ] as const
  for (const [name, schema] of cases) {
    class Odd extends APIView {
      static override responseSchema = Type.Object({ value: schema })
      @Get('/')
      one () { return { value: 'x' } }
    }
    const error = await caught(() => build({ views: [Odd] }))
    t.type(error, ConfigurationError, name)
    t.match(error, { code: 'FV_ERR_UNSUPPORTED_SCHEMA', message: `Odd.responseSchema: ${name} (typebox 1.x) is not supported` }, `${name}: the message names the view and the static`)
  }
  class Echo extends APIView {
    @Post('/', { schema: { body: Type.Refine(Type.String(), () => true) } })
    echo () { return null }
  }
  const route = await caught(() => build({ views: [Echo] }))
  t.match(route, { code: 'FV_ERR_UNSUPPORTED_SCHEMA', message: /^Echo\.echo schema\.body: Type\.Refine/ }, 'a route schema names the method and the part')
})

test('toTypeBox: a 0.34 schema is itself, a 1.x one is converted once; tuples of either line keep their length in the response check', async (t) => {
  const old = T034.Object({ id: T034.Integer(), pair: T034.Tuple([T034.Literal(1), T034.Boolean()]) })
  t.equal(toTypeBox(old, 'x'), old, 'a 0.34 schema is returned as it is')
  t.equal(toTypeBox(Book, 'x'), toTypeBox(Book, 'y'), 'a 1.x schema is converted once')
  type Looped = ReturnType<typeof T034.Object> & { examples?: unknown[] }
  const looped = T034.Object({ name: Type.String() } as never) as Looped // a 1.x member inside 0.34, made only to build a cycle
  looped.examples = [looped]
  const done = toTypeBox(looped, 'x') as typeof looped
  t.equal(done.examples?.[0], looped, 'a cycle of objects ends: the inner reference is left as it was')
  t.match(await caught(() => toTypeBox({ type: 'string' } as never, 'Books.responseSchema')), { code: 'FV_ERR_UNSUPPORTED_SCHEMA', message: /^Books\.responseSchema is not a TypeBox schema/ }, 'a plain JSON Schema object is refused by name')
  const Unsafe = T034.Unsafe<string>({ type: 'string', format: 'isbn' })
  class Isbn extends APIView {
    @Get('/', { schema: { querystring: T034.Object({ isbn: Unsafe }) } })
    one () { return null }
  }
  t.match(await caught(() => build({ views: [Isbn] })), { code: 'FV_ERR_UNSUPPORTED_SCHEMA', message: /^Isbn\.one schema\.querystring: a schema of kind "Unsafe" \(Type\.Unsafe of @sinclair\/typebox\) has no TypeRegistry entry/ }, 'a 0.34 Type.Unsafe without a TypeRegistry entry is refused by name')
  TypeRegistry.Set('Isbn', (_schema, value) => typeof value === 'string' && /^[0-9]{13}$/.test(value))
  t.teardown(() => { TypeRegistry.Delete('Isbn') })
  const Registered = T034.Unsafe<string>({ [Kind]: 'Isbn', type: 'string' })
  class Registry extends APIView {
    @Get('/', { schema: { querystring: T034.Object({ isbn: Registered }) } })
    one () { return null }
  }
  const registry = await build({ views: [Registry] })
  t.teardown(() => registry.close())
  t.equal((await registry.inject('/?isbn=9780441013593')).statusCode, 200, 'a kind with a TypeRegistry entry is checked by it')
  t.equal((await registry.inject('/?isbn=x')).statusCode, 400)
  const fresh = Type.Object({ id: Type.Integer(), pair: Type.Tuple([Type.Literal(1), Type.Boolean()]) })
  class Pairs extends APIView {
    @Get('/old', { responseSchema: old })
    one () { return { id: 1, pair: [1, true] satisfies [1, boolean] } }

    @Get('/new', { responseSchema: fresh })
    two () { return { id: 2, pair: [1, false] satisfies [1, boolean] } }

    @Get('/long', { responseSchema: fresh })
    long () { return { id: 3, pair: [1, false, true] as unknown as [1, boolean] } } // a bug the types would have caught
  }
  const app = await build({ views: [Pairs] })
  t.teardown(() => app.close())
  t.same((await app.inject('/old')).json(), { id: 1, pair: [1, true] }, 'a 0.34 tuple')
  t.same((await app.inject('/new')).json(), { id: 2, pair: [1, false] }, 'a 1.x tuple')
  t.equal((await app.inject('/long')).statusCode, 500, 'a tuple of the wrong length fails the default response check')
})

test('response headers and their alwaysSent mark take typebox 1.x schemas', async (t) => {
  const Paging = ResponseHeaders.define({ x_total_count: alwaysSent(Type.Integer({ minimum: 0 })) })
  class Counted extends APIView {
    @Get('/', { responseHeaders: Paging })
    one () {
      Paging.apply(this.reply, { x_total_count: 3 })
      return {}
    }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'x', version: '1' } }))
  await app.register(views, { views: [Counted] })
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject('/')).headers['x-total-count'], '3')
  const header = JSON.parse(JSON.stringify(app.swagger())).paths['/'].get.responses['200'].headers['x-total-count']
  t.same(header, { required: true, schema: { type: 'integer', minimum: 0 } }, 'documented, and marked as always sent')
})

test('every kind typebox 1.x builds converts to a 0.34 schema that accepts exactly what typebox 1.x accepts', async (t) => {
  const Item = Type.Object({ a: Type.String(), b: Type.Optional(Type.Number()) })
  const schemas = {
    any: Type.Any(),
    array: Type.Array(Type.Integer(), { minItems: 1, uniqueItems: true }),
    boolean: Type.Boolean(),
    integer: Type.Integer({ minimum: 0, maximum: 3 }),
    intersect: Type.Intersect([Item, Type.Object({ c: Type.Null() })]),
    literal: Type.Literal('x'),
    literalNumber: Type.Literal(2),
    literalBoolean: Type.Literal(false),
    never: Type.Never(),
    null: Type.Null(),
    number: Type.Number({ exclusiveMaximum: 10, multipleOf: 0.5 }),
    object: Item,
    closed: Type.Object({ a: Type.String() }, { additionalProperties: false }),
    record: Type.Record(Type.String(), Type.Number()),
    string: Type.String({ minLength: 2, maxLength: 4, pattern: '^[a-z]+$' }),
    email: Type.String({ format: 'email' }),
    templateLiteral: Type.TemplateLiteral('id-${number}'), // eslint-disable-line no-template-curly-in-string -- a TypeBox template, not a JavaScript one
    tuple: Type.Tuple([Type.String(), Type.Number()]),
    union: Type.Union([Type.String(), Type.Null()]),
    unknown: Type.Unknown(),
    enum: Type.Enum(['a', 1]),
    partial: Type.Partial(Item),
    required: Type.Required(Type.Partial(Item)),
    pick: Type.Pick(Item, ['a']),
    omit: Type.Omit(Item, ['a']),
    keyOf: Type.KeyOf(Item),
    readonly: Type.Object({ r: Type.Readonly(Type.String()) }),
    evaluated: Type.Evaluate(Type.Intersect([Item, Type.Object({ z: Type.String() })])),
    nonNullable: Type.NonNullable(Type.Union([Type.String(), Type.Null()])),
    exclude: Type.Exclude(Type.Union([Type.Literal('a'), Type.Literal('b')]), Type.Literal('a'))
  }
  const values = [
    undefined, null, true, false, 0, 1, 2, 2.5, 3, 7, 12, -1, '', 'x', 'a', 'ab', 'abcde', 'AB', 'id-3', 'id-x', 'me@example.com',
    [], [1], [1, 1], [1, 2], ['a', 1], ['a', 1, 2], [1, 'a'], {}, { a: 'x' }, { a: 'x', b: 1 }, { a: 'x', b: 'y' }, { a: 'x', c: null },
    { a: 'x', z: 'y' }, { a: 1 }, { b: 2 }, { r: 'x' }, { n: 1, m: 2 }, { n: 'x' }, { a: 'x', extra: true }
  ]
  let compared = 0
  for (const [name, schema] of Object.entries(schemas)) {
    const check = compileCheck(toTypeBox(schema, name)) // the library's compiler, with its string formats
    const differ = values.filter((value) => check.Check(value) !== Value.Check(schema, value))
    t.same(differ, [], `${name}: both lines accept the same values`)
    compared += values.length
  }
  t.ok(compared > 1000, `${compared} comparisons`)
})

test('an app whose validator compiler is TypeBoxValidatorCompiler of @fastify/type-provider-typebox 6: views keep their own', async (t) => {
  const Note = ProviderType.Object({ text: ProviderType.String({ minLength: 2 }) }) // the Type the type provider re-exports
  class Notes extends APIView {
    @Post('/notes', { schema: { body: Note }, responseSchema: Note, statusCode: 200 })
    note (request: import('../lib/types.js').ViewRequest<{ body: typeof Note }>) { return { text: request.body.text } }
  }
  const app = Fastify().withTypeProvider<TypeBoxTypeProvider>()
  app.setValidatorCompiler(TypeBoxValidatorCompiler)
  await app.register(views, { views: [Notes] })
  app.post('/plain', { schema: { body: Note } }, async (request) => ({ text: request.body.text }))
  await app.ready()
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/plain', payload: { text: 'ok' } })).json(), { text: 'ok' }, 'the app route, checked by typebox 1.x')
  t.equal((await app.inject({ method: 'POST', url: '/plain', payload: { text: 'x' } })).statusCode, 400)
  t.same((await app.inject({ method: 'POST', url: '/notes', payload: { text: 'ok' } })).json(), { text: 'ok' }, 'the view, checked by the library')
  const refused = problem(t, await app.inject({ method: 'POST', url: '/notes', payload: { text: 'x', extra: 1 } }), 400)
  t.same(refused.errors.map((e: { pointer: string }) => e.pointer).sort(), ['#/extra', '#/text'], 'with the library\'s problem entries and its closed body')
})
