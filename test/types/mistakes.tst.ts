// The table of mistakes a new user makes, over a small Book API written with `.with()`.
//
// Every mistake below was tried; each names where it is caught. "Compile time" mistakes are
// asserted in this file, each next to the correct code; "registration" ones (thrown when the
// class is defined or when the plugin registers it) in test/mistakes.test.ts; "request time" and
// "never" ones are listed only, since the library does not catch them before a client does.
//
//  #  Mistake                                                            Caught at
//  1  a returned item with a misspelt field (`titel`)                    compile time
//  2  a returned item with a Date where the schema has a date-time string compile time (a 500 at request time if forced)
//  3  a path parameter that does not exist (`request.params.bookId`)     compile time
//  4  the integer id treated as a string (`Map<string, Book>.get(id)`)    compile time
//  5  a create body field that does not exist (`request.body.name`)      compile time
//  6  a misspelt static: `responseSchemas`, `detailParam`, `createSchem`  compile time; FV_ERR_UNKNOWN_STATIC when the class is defined (JavaScript, or forced)
//  7  a misspelt lastModifiedField (`updatedAt`) beside responseSchema   compile time
//  8  the same, with responseSchema set by `static override` instead     registration (FV_ERR_UNKNOWN_FIELD)
//  9  a misspelt action in the methods object (`retreive`)               compile time; FV_ERR_UNKNOWN_STATIC when the class is defined (if forced)
// 10  an action the view does not have in the methods object (`destroy` on a read-only view)
//                                                                        compile time; FV_ERR_UNKNOWN_STATIC when the class is defined (if forced)
// 11  a methods-object entry that is not a function (`retrieve: book`)   compile time; FV_ERR_UNKNOWN_STATIC when the class is defined (if forced)
// 12  a Promise returned by an action of the sync family                 compile time
// 13  a plain value returned by a non-async action of the async family   compile time
// 14  a type argument on a typed class (`BookViews.with(...)<{ item: X }>`) compile time
// 15  getLocation reading a field the item does not have (`book.isbn`)   compile time
// 16  getLocation returning a number                                     compile time
// 17  a misspelt actionDependencies key (`destory`) alone                compile time
// 18  the same beside a correct key (`{ destroy, destory }`)             registration (FV_ERR_UNKNOWN_ACTION); the types let it through
// 19  a static of a mixin the view is not made of (lastModifiedField without ConditionalMixin, createSchema on a read-only view)
//                                                                        compile time; FV_ERR_UNKNOWN_STATIC when the class is defined (if forced)
// 20  a static of the wrong type (`raiseOnNone: 'no'`, a JSON Schema object for detailParams)
//                                                                        compile time
// 21  a sync repository (a bare MemoryRepository) on an async view       compile time (it would work at run time: async views await)
// 22  an arrow function in the methods object that reads `this`          compile time (noImplicitThis)
// 23  an action in the class body with an unannotated request            compile time (noImplicitAny); the methods object types it
// 24  `override` on a misspelt action in the class body                  compile time
// 25  the same without `override`, on an action view                     registration (FV_ERR_ABSTRACT_VIEW: the real action is unimplemented)
// 26  the same without `override`, on a generic view (or a misspelt static) registration (FV_ERR_MISSPELT_MEMBER: one edit from an inherited member)
// 27  a generic view without a repository                                registration (FV_ERR_NO_REPOSITORY)
// 28  a generic view without a responseSchema                            registration (FV_ERR_NO_RESPONSE_SCHEMA)
// 29  a misspelt orderingFields entry (`yaer`) over a SqliteRepository  registration (FV_ERR_UNKNOWN_FIELD)
// 30  the same over a MemoryRepository                                   registration (FV_ERR_UNKNOWN_FIELD: in neither responseSchema nor a stored row)
// 31  a bulkUpdateSchema that does not require the primary key          registration (FV_ERR_BULK_CONFIG)
// 32  a repository of other items than responseSchema's                  compile time: "the repository holds other items than responseSchema describes"
// 33  a list returning an array over PaginationFilter                    compile time: the named filters declare the type of their `paginator`
// 34  responseSchemaAsList: false with responseSchema an envelope        compile time: `list` returns the envelope, not an array of them
// 35  detailParams naming a parameter the route does not have (`bookId`, route `/:id`)
//                                                                        registration (FV_ERR_UNKNOWN_FIELD); the types still type `request.params.bookId`
// 36  no detailParams over integer ids in a MemoryRepository             not a mistake any more: the string id '1' finds the integer key, as in SQL
// 37  lastModifiedField naming a field that is not a time (`title`)      registration (FV_ERR_UNKNOWN_FIELD: not a date-time or date string)
// 38  an item returned with a field the schema does not have (`isbn`)   never, by design: the schema says what clients see, so the serializer
//                                                                        drops it (a hidden column); `additionalProperties: false` makes it a 500
// 39  a generic create whose body lacks a field every item has (`updated_at`, no one stamps it)
//                                                                        request time: the POST is a 500 but the row is stored, and from then
//                                                                        on its GET and every list are 500s (the Book API stamps it in `create`)
// 40  a misspelt column in a SQL repository's options (`titel`)       compile time, when the repository is typed with its rows (`SqliteRepository<Book>`)

import { Type, type Static } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { AsyncListAPIView, AsyncRetrieveAPIView, mix } from '../../lib/index.js'
import type { Dependency, ViewRequest } from '../../lib/types.js'
import { Unauthorized } from '../../lib/errors.js'
import {
  AsyncGenericListAPIView, AsyncGenericRetrieveAPIView, AsyncGenericViewSet, GenericViewSet, MemoryRepository,
  PaginationFilter, asyncRepository, type AsyncRepository
} from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'
import { SqliteRepository, type SqliteDatabase } from '../../lib/stores/sql/index.js'
import { Book, BookIn, BookParams, dune, type BookData } from './schemas.js'

// The Book API (schemas.ts).
declare const db: SqliteDatabase

const memory = new MemoryRepository<BookData>({ rows: [dune] })
const books = asyncRepository<BookData, MemoryRepository<BookData>>(memory)
const authenticate: Dependency = { onRequest: () => {}, errors: [Unauthorized] }

/** The views the Book API is built from: a generic viewset with ETag and Last-Modified. */
const BookViews = mix(ConditionalMixin, AsyncGenericViewSet)
const statics = { responseSchema: Book, createSchema: BookIn, detailParams: BookParams, repository: books } as const

class Books extends BookViews.with({ ...statics, conditional: { etag: true, lastModifiedField: 'updated_at' } }, {
  // The body is { title, year }: the server stamps updated_at, which every Book has.
  async create (request) {
    return await this.repository.create({ ...request.body, updated_at: new Date().toISOString() }, this.getRepositoryOptions('create'))
  },
  getLocation (book) { return `/books/${book.id}` }
}) {}

describe('the Book API compiles', () => {
  test('as written', () => {
    expect(Books).type.not.toRaiseError()
    expect<InstanceType<typeof Books>['repository']>().type.toBe<AsyncRepository<BookData> & typeof books>()
  })
})

describe('mistakes in what an action returns', () => {
  test('1: a returned item with a misspelt field', () => {
    expect(BookViews.with).type.toBeCallableWith(statics, { async retrieve () { return { id: 1, title: 'Dune', year: 1965, updated_at: '2024-01-01T00:00:00Z' } } })
    expect(BookViews.with).type.not.toBeCallableWith(statics, { async retrieve () { return { id: 1, titel: 'Dune', year: 1965, updated_at: '2024-01-01T00:00:00Z' } } })
  })

  test('2: a Date where the schema has a date-time string', () => {
    expect(BookViews.with).type.toBeCallableWith(
      statics,
      { async retrieve () { return { ...dune, updated_at: new Date().toISOString() } } }
    )
    expect(BookViews.with).type.not.toBeCallableWith(
      statics,
      { async retrieve () { return { ...dune, updated_at: new Date() } } }
    )
  })

  test('12: a Promise returned by an action of the sync family', () => {
    const syncStatics = { ...statics, repository: memory }
    expect(GenericViewSet.with).type.toBeCallableWith(syncStatics, { retrieve () { return dune } })
    expect(GenericViewSet.with).type.not.toBeCallableWith(syncStatics, { async retrieve () { return dune } })
    expect(GenericViewSet.with).type.not.toBeCallableWith(syncStatics, { retrieve () { return Promise.resolve(dune) } })
  })

  test('13: a plain value returned by a non-async action of the async family', () => {
    expect(BookViews.with).type.toBeCallableWith(statics, { async retrieve () { return dune } })
    expect(BookViews.with).type.not.toBeCallableWith(statics, { retrieve () { return dune } })
  })
})

describe('mistakes in what an action reads', () => {
  // The type of `request` comes from the action the method implements; each mistake is a
  // member the compiler does not find on it (or finds with another type).
  const byId = new Map<number, BookData>([[1, dune]])
  const byTitle = new Map<string, BookData>([['Dune', dune]])

  test('3: a path parameter that does not exist, and 4: the integer id treated as a string', () => {
    const Found = BookViews.with(statics, {
      async retrieve (request) {
        // 3: `request.params.bookId` does not compile.
        expect(request.params).type.toHaveProperty('id')
        expect(request.params).type.not.toHaveProperty('bookId')
        // 4: the id is a number: `byTitle.get(request.params.id)` and `request.params.id.padStart(4, '0')` do not compile.
        expect(request.params.id).type.toBe<number>()
        expect(request.params.id).type.not.toBeAssignableTo<string>()
        expect(byId.get).type.toBeCallableWith(request.params.id)
        expect(byTitle.get).type.not.toBeCallableWith(request.params.id)
        return byId.get(request.params.id) ?? null
      }
    })
    expect(Found).type.not.toRaiseError()
  })

  test('5: a create body field that does not exist', () => {
    const Created = BookViews.with(statics, {
      async create (request) {
        // `request.body.name` does not compile; the body is { title, year }.
        expect(request.body).type.toHaveProperty('title')
        expect(request.body).type.not.toHaveProperty('name')
        expect(request.body.year).type.toBe<number>()
        expect(request.body.year).type.not.toBeAssignableTo<string>()
        return await this.repository.create({ ...request.body, updated_at: new Date().toISOString() }, {})
      }
    })
    expect(Created).type.not.toRaiseError()
  })

  test('15: getLocation reading a field the item does not have, and 16: returning a number', () => {
    const Located = BookViews.with(statics, {
      getLocation (book) {
        // `book.isbn` does not compile.
        expect(book).type.toHaveProperty('id')
        expect(book).type.not.toHaveProperty('isbn')
        return `/books/${book.id}`
      }
    })
    expect(Located).type.not.toRaiseError()

    expect(BookViews.with).type.toBeCallableWith(statics, { getLocation () { return '/books/1' } })
    expect(BookViews.with).type.not.toBeCallableWith(statics, { getLocation () { return 1 } })
  })
})

describe('misspelt names', () => {
  test('6: a misspelt static', () => {
    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book })
    expect(BookViews.with).type.not.toBeCallableWith({ responseSchemas: Book })

    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book, detailParams: BookParams })
    expect(BookViews.with).type.not.toBeCallableWith({ responseSchema: Book, detailParam: BookParams })

    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book, createSchema: BookIn })
    expect(BookViews.with).type.not.toBeCallableWith({ responseSchema: Book, createSchem: BookIn })
  })

  test('7: a misspelt lastModifiedField', () => {
    expect(BookViews.with).type.toBeCallableWith({ ...statics, conditional: { lastModifiedField: 'updated_at' } })
    expect(BookViews.with).type.not.toBeCallableWith({ ...statics, conditional: { lastModifiedField: 'updatedAt' } })
  })

  test('8: the same, with responseSchema set outside .with(), is not checked', () => {
    // Without responseSchema among the statics there is no field list to check against:
    // registration refuses it (FV_ERR_UNKNOWN_FIELD, test/mistakes.test.ts).
    expect(BookViews.with).type.toBeCallableWith({ conditional: { lastModifiedField: 'updatedAt' } })
  })

  test('9: a misspelt action in the methods object', () => {
    expect(BookViews.with).type.toBeCallableWith(statics, { async retrieve () { return null } })
    expect(BookViews.with).type.not.toBeCallableWith(statics, { async retreive () { return null } })
    expect(BookViews.with).type.not.toBeCallableWith(
      statics,
      { async retrieve () { return null }, async retreive () { return null } }
    )
  })

  test('17: a misspelt actionDependencies key', () => {
    expect(BookViews.with).type.toBeCallableWith({ ...statics, actionDependencies: { destroy: [authenticate] } })
    expect(BookViews.with).type.not.toBeCallableWith({ ...statics, actionDependencies: { destory: [authenticate] } })
  })

  test('18: a misspelt actionDependencies key beside a correct one gets through', () => {
    // The statics satisfy their constraint (the object shares `destroy` with ActionDependencies),
    // so no excess property check reaches the nested object. Registration refuses it.
    expect.fail(BookViews.with).type.not.toBeCallableWith(
      { ...statics, actionDependencies: { destroy: [authenticate], destory: [authenticate] } }
    )
  })

  test('24: `override` on a misspelt action in the class body', () => {
    // `override async retreive ()` fails to compile because the base class has no such member.
    expect<InstanceType<typeof Books>>().type.toHaveProperty('retrieve')
    expect<InstanceType<typeof Books>>().type.not.toHaveProperty('retreive')
  })
})

describe('what the view is made of', () => {
  const ReadOnlyBooks = mix(AsyncGenericListAPIView, AsyncGenericRetrieveAPIView)

  test('10: an action the view does not have in the methods object', () => {
    expect(BookViews.with).type.toBeCallableWith(statics, { async destroy () { return true } })
    expect(ReadOnlyBooks.with).type.not.toBeCallableWith({ responseSchema: Book }, { async destroy () { return true } })
  })

  test('11: a methods-object entry that is not a function', () => {
    expect(BookViews.with).type.toBeCallableWith(statics, { async retrieve () { return dune } })
    expect(BookViews.with).type.not.toBeCallableWith(statics, { retrieve: dune })
  })

  test('19: a static of a mixin the view is not made of', () => {
    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book, conditional: { lastModifiedField: 'updated_at' } })
    expect(AsyncGenericViewSet.with).type.not.toBeCallableWith({ responseSchema: Book, conditional: { lastModifiedField: 'updated_at' } })

    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book, createSchema: BookIn })
    expect(ReadOnlyBooks.with).type.not.toBeCallableWith({ responseSchema: Book, createSchema: BookIn })
  })

  test('20: a static of the wrong type', () => {
    expect(BookViews.with).type.toBeCallableWith({ ...statics, raiseOnNone: false })
    expect(BookViews.with).type.not.toBeCallableWith({ ...statics, raiseOnNone: 'no' })

    expect(BookViews.with).type.toBeCallableWith({ detailParams: Type.Object({ id: Type.Integer() }) })
    expect(BookViews.with).type.not.toBeCallableWith({ detailParams: { type: 'object', properties: { id: { type: 'integer' } } } })
  })

  test('21: a sync repository on an async view', () => {
    expect(BookViews.with).type.toBeCallableWith({ responseSchema: Book, repository: books })
    expect(BookViews.with).type.not.toBeCallableWith({ responseSchema: Book, repository: memory })
  })
})

describe('where the types come from', () => {
  test('14: a type argument on a typed class', () => {
    expect(class extends Books {}).type.not.toRaiseError()
    // Bare toRaiseError(): a type argument given to a class that takes none (TS2508); no matcher takes type arguments.
    expect(class extends BookViews.with(statics)<{ item: { isbn: string } }> {}).type.toRaiseError()
  })

  test('22: an arrow function in the methods object that reads `this`', () => {
    expect(BookViews.with(statics, {
      async retrieve (request) { return await this.repository.get({ id: request.params.id }, {}) }
    })).type.not.toRaiseError()
    // Bare toRaiseError(): an arrow function's `this` is the module's, not the view's (a
    // noImplicitThis error); no matcher can say it.
    expect(BookViews.with(statics, {
      retrieve: async (request) => await this.repository.get({ id: request.params.id }, {})
    })).type.toRaiseError()
  })

  test('23: an action in the class body with an unannotated request', () => {
    expect(class extends BookViews.with(statics) {
      override async retrieve (request: ViewRequest<{ params: typeof BookParams }>) {
        return await this.repository.get(
          { id: request.params.id },
          {}
        )
      }
    }).type.not.toRaiseError()
    // Bare toRaiseError(): a class body method gets no parameter type from the method it
    // overrides (a noImplicitAny error); no matcher can say it. The methods object types it.
    expect(class extends BookViews.with(statics) {
      override async retrieve (request) { return await this.repository.get({ id: request.params.id }, {}) }
    }).type.toRaiseError()
  })
})

describe('the repository and the list', () => {
  test('32: a repository of other items than responseSchema\'s', () => {
    const others = asyncRepository(new MemoryRepository<{ id: number, isbn: string }>({ rows: [] }))
    expect(BookViews.with).type.toBeCallableWith({ ...statics, repository: books })
    expect(BookViews.with).type.not.toBeCallableWith({ ...statics, repository: others })
  })

  test('33: a list returning an array over PaginationFilter', () => {
    const Paged = AsyncGenericListAPIView.with
    expect(Paged).type.not.toBeCallableWith({ responseSchema: Book, filter: PaginationFilter }, { async list () { return [{ isbn: '1' }] } })
    expect(Paged).type.not.toBeCallableWith(
      { responseSchema: Book, filter: PaginationFilter },
      { async list () { return [dune] } }
    )
  })

  test('34: responseSchemaAsList: false with an envelope', () => {
    const Envelope = Type.Object({ items: Type.Array(Book), total: Type.Integer() })
    const Listed = AsyncListAPIView.with
    expect(Listed).type.toBeCallableWith(
      { responseSchema: Envelope, responseSchemaAsList: false },
      { async list () { return { items: [dune], total: 1 } } }
    )
    expect(Listed).type.not.toBeCallableWith(
      { responseSchema: Envelope, responseSchemaAsList: false },
      { async list () { return [{ items: [dune], total: 1 }] } }
    )
  })

  test('35: detailParams naming a parameter the route does not have', () => {
    // The route is `/:id` (detailRoute is a string, not a literal the types could read), so
    // `request.params.bookId` is typed; registration refuses the view (test/mistakes.test.ts).
    const ByBookId = AsyncRetrieveAPIView.with({
      responseSchema: Book,
      detailParams: Type.Object({ bookId: Type.Integer() })
    }, {
      async retrieve (request) {
        expect.fail(request.params).type.not.toHaveProperty('bookId')
        return request.params.bookId === 1 ? dune : null
      }
    })
    expect(ByBookId).type.not.toRaiseError()
  })
})

describe('the SQL table', () => {
  test('40: a misspelt column in the options of a SQL repository of books', () => {
    expect(SqliteRepository<BookData>).type.toBeConstructableWith(db, { table: 'books', columns: ['id', 'title', 'year', 'updated_at'], touchColumn: 'updated_at' })
    expect(SqliteRepository<BookData>).type.not.toBeConstructableWith(db, { table: 'books', columns: ['id', 'titel'] })
    expect(SqliteRepository<BookData>).type.not.toBeConstructableWith(db, { table: 'books', columns: ['id', 'title'], touchColumn: 'updatedAt' })
    // Rows typed as any record (the default) take any column.
    expect(SqliteRepository).type.toBeConstructableWith(db, { table: 'books', columns: ['id', 'titel'] })
  })
})
