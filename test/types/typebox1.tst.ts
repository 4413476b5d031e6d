import type { FastifyReply } from 'fastify'
import { Type, type Static } from 'typebox'
import { describe, expect, test } from 'tstyche'
import { APIView, AsyncListAPIView, AsyncRetrieveAPIView, Get, ResponseHeaders, mix } from '../../lib/index.js'
import type { RouteBuilder, StaticOf, ViewRequest } from '../../lib/types.js'
import { AsyncGenericViewSet, MemoryRepository, PaginationFilter, asyncRepository } from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'

// Views take schemas of `typebox` 1.x (the line of @fastify/type-provider-typebox 6) as they take
// those of `@sinclair/typebox` 0.34. The types of a 1.x schema are read from its shape
// (lib/schema/typebox-lines.ts), never from the `typebox` package: these tests hold the result to
// what `typebox` itself says, with its own `Static`.

const Genre = Type.Enum(['novel', 'essay'])
const Book = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  genre: Genre,
  year: Type.Union([Type.Integer(), Type.Null()]),
  tags: Type.Array(Type.String()),
  pair: Type.Tuple([Type.Literal(1), Type.Boolean()]),
  meta: Type.Record(Type.String(), Type.Number()),
  note: Type.Optional(Type.String()),
  code: Type.Readonly(Type.String()),
  both: Type.Optional(Type.Readonly(Type.Boolean())),
  nested: Type.Object({ a: Type.Intersect([Type.Object({ x: Type.Number() }), Type.Object({ y: Type.String() })]) }),
  anything: Type.Unknown()
})
const BookIn = Type.Object({ title: Type.String(), genre: Genre, note: Type.Optional(Type.String()) })
const IdParams = Type.Object({ id: Type.Integer() })
type Book = Static<typeof Book>
type BookIn = Static<typeof BookIn>

describe('StaticOf: the type of a typebox 1.x schema', () => {
  test('is what typebox 1.x itself infers', () => {
    expect<StaticOf<typeof Book>>().type.toBe<Book>()
    expect<StaticOf<typeof BookIn>>().type.toBe<BookIn>()
    expect<StaticOf<typeof Genre>>().type.toBe<'novel' | 'essay'>()
    expect<StaticOf<ReturnType<typeof Type.Partial<typeof BookIn>>>>()
      .type.toBe<Static<ReturnType<typeof Type.Partial<typeof BookIn>>>>()
  })

  test('an unsafe schema has the type it was given; anything else is unknown', () => {
    const Unsafe = Type.Unsafe<'a' | 'b'>({ type: 'string' })
    expect<StaticOf<typeof Unsafe>>().type.toBe<'a' | 'b'>()
    expect<StaticOf<{ type: 'string' }>>().type.toBe<unknown>()
  })

  test('a template literal is any string, wider than what typebox infers', () => {
    const Slug = Type.TemplateLiteral('id-${number}') // eslint-disable-line no-template-curly-in-string -- a TypeBox template, not a JavaScript one
    expect<StaticOf<typeof Slug>>().type.toBe<string>()
    expect<Static<typeof Slug>>().type.toBeAssignableTo<StaticOf<typeof Slug>>()
  })
})

describe('views typed from typebox 1.x schemas', () => {
  test('.with(): the item, the path parameters and the body come from the schemas', () => {
    const Books = mix(AsyncListAPIView, AsyncRetrieveAPIView).with({ responseSchema: Book, detailParams: IdParams }, {
      async list () { return [] },
      async retrieve (request) {
        expect(request.params).type.toBe<{ id: number }>()
        return null
      }
    })
    type Reading = InstanceType<typeof Books>
    expect<ReturnType<Reading['list']>>().type.toBe<Promise<Book[] | FastifyReply>>()
  })

  test('a generic viewset: create body, filter fields and lastModifiedField are checked against the 1.x schemas', () => {
    const repository = asyncRepository(new MemoryRepository<Book>({ rows: [] }))
    const Stamped = mix(ConditionalMixin, AsyncGenericViewSet)
    const Timed = Type.Object({ id: Type.Integer(), updated_at: Type.String({ format: 'date-time' }) })
    expect(Stamped.with).type.toBeCallableWith({ responseSchema: Timed, conditional: { lastModifiedField: 'updated_at' } })
    expect(Stamped.with).type.not.toBeCallableWith({ responseSchema: Timed, conditional: { lastModifiedField: 'updatedAt' } })

    expect(AsyncGenericViewSet.with).type.toBeCallableWith({ responseSchema: Book, repository, filter: PaginationFilter.with({ fields: { genre: Genre }, orderingFields: ['year'] }) })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Book, repository, filter: PaginationFilter.with({ orderingFields: ['yaer'] }) })

    AsyncGenericViewSet.with({ responseSchema: Book, createSchema: BookIn, repository }, {
      async create (request) {
        expect(request.body).type.toBe<BookIn>()
        return null
      }
    })
  })

  test('decorated routes are typed by ViewRequest and checked against their 1.x responseSchema', () => {
    const Query = Type.Object({ limit: Type.Integer(), q: Type.Optional(Type.String()) })
    class Search extends APIView {
      @Get('/', { schema: { querystring: Query }, responseSchema: Type.Array(Book) })
      search (request: ViewRequest<{ querystring: typeof Query }>) {
        expect(request.query).type.toBe<{ limit: number, q?: string }>()
        return [] as Book[]
      }
    }
    expect(Search).type.not.toBe<never>()
    class Wrong extends APIView {
      @(expect(Get('/', { responseSchema: Type.Object({ n: Type.Integer() }) })).type.not.toBeApplicable)
      count () { return { n: 'one' } }
    }
    expect(Wrong).type.not.toBe<never>()
  })

  test('the route builder of .with() types the request from 1.x schemas', () => {
    const Query = Type.Object({ q: Type.String() })
    const route = undefined as unknown as RouteBuilder<unknown>
    expect(route.get).type.toBeCallableWith('/count', { responseSchema: Type.Object({ n: Type.Integer() }) }, () => ({ n: 1 }))
    expect(route.get).type.not.toBeCallableWith('/count', { responseSchema: Type.Object({ n: Type.Integer() }) }, () => ({ n: 'one' }))
    AsyncListAPIView.with({ responseSchema: Book }, { async list () { return [] } }, (builder) => ({
      search: builder.get('/search', { schema: { querystring: Query } }, async function (request) {
        expect(request.query).type.toBe<{ q: string }>()
        return null
      })
    }))
  })

  test('response headers: apply takes the values their 1.x schemas describe', () => {
    const Paging = ResponseHeaders.define({ x_total_count: Type.Integer() })
    expect(Paging.apply).type.toBeCallableWith(undefined as unknown as FastifyReply, { x_total_count: 3 })
    expect(Paging.apply).type.not.toBeCallableWith(undefined as unknown as FastifyReply, { x_total_count: 'three' })
  })

  test('a plain object that is not a schema of either line is refused', () => {
    expect(AsyncListAPIView.with).type.toBeCallableWith({ responseSchema: Book })
    expect(AsyncListAPIView.with).type.not.toBeCallableWith({ responseSchema: { type: 'object' } })
  })
})
