import { test } from 'tap'
import Database from 'better-sqlite3'
import { Type } from '@sinclair/typebox'
import { AsyncRetrieveAPIView, Get, mix } from '../lib/index.js'
import { ConfigurationError, type ConfigurationErrorCode } from '../lib/errors.js'
import {
  AsyncGenericListAPIView, AsyncGenericRetrieveAPIView, AsyncGenericViewSet, BaseFilter, MemoryRepository,
  asyncRepository
} from '../lib/generics.js'
import { AsyncBulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { StampingRepository, build, caught } from './helpers.js'
import { Book, BookIn, BookParams, dune, type BookData } from './types/schemas.js'

// The mistakes of test/types/mistakes.tst.ts that the library refuses when the class is defined
// (a `.with()` the types would refuse, from JavaScript or forced with a cast) or when the plugin
// registers the view. Each case is made next to its fix, which must define and register cleanly.

// The store stamps updated_at on create, as a database default would: the response requires it, the body does not carry it.
const books = () => asyncRepository<BookData, MemoryRepository<BookData>>(
  new StampingRepository<BookData>({ rows: [dune] })
)
const statics = () => ({ responseSchema: Book, createSchema: BookIn, detailParams: BookParams, repository: books() })

/** The Book API's base: a generic viewset with ETag and Last-Modified. */
const BookViews = mix(ConditionalMixin, AsyncGenericViewSet).with({ conditional: { etag: true } })
const BASE = /mix\(ConditionalMixin, AsyncGenericViewSet\)\.with\(conditional\)/.source

function sqliteBooks () {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, year INTEGER NOT NULL, updated_at TEXT NOT NULL)')
  db.prepare('INSERT INTO books (id, title, year, updated_at) VALUES (?, ?, ?, ?)').run(dune.id, dune.title, dune.year, dune.updated_at)
  return asyncRepository(new SqliteRepository(db, { table: 'books', columns: ['id', 'title', 'year', 'updated_at'] }))
}

/** Defines the class and registers it, then closes the app. */
async function register (view: unknown): Promise<void> {
  const app = await build({ views: [{ view: view as never, prefix: '/books' }] })
  await app.close()
}

interface MistakeCase {
  code: ConfigurationErrorCode
  /** Its row in the table of test/types/mistakes.tst.ts. */
  row: number
  mistake: string
  when: 'definition' | 'registration'
  /** Makes the mistake; what it throws or rejects with is checked. */
  act: () => unknown
  /** The same code without the mistake: defines and registers. */
  fix: () => unknown
  /** The names the message must carry: the view, and the static, method, field or action. */
  message: RegExp
}

const cases: MistakeCase[] = [
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 6,
    mistake: 'a static the class does not have, forced through the types',
    when: 'definition',
    act: () => class Books extends BookViews.with({ ...statics(), nonsense: 1 } as never) {},
    fix: () => register(class Books extends BookViews.with(statics()) {}),
    message: new RegExp(`^${BASE}\\.with\\(responseSchema, createSchema, detailParams, repository, nonsense\\): "nonsense" is not a static of ${BASE}, so it would never be read$`)
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 6,
    mistake: 'a misspelt static (responseSchemas), as JavaScript would write it',
    when: 'definition',
    act: () => class Books extends BookViews.with({ responseSchemas: Book, repository: books() } as never) {},
    fix: () => register(class Books extends BookViews.with({ responseSchema: Book, repository: books() }) {}),
    message: new RegExp(`^${BASE}\\.with\\(responseSchemas, repository\\): "responseSchemas" is not a static of ${BASE}`)
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 19,
    mistake: 'lastModifiedField on a view without ConditionalMixin',
    when: 'definition',
    act: () => class Books extends AsyncGenericViewSet.with({ ...statics(), conditional: { lastModifiedField: 'updated_at' } } as never) {},
    fix: () => register(class Books extends BookViews.with({ ...statics(), conditional: { lastModifiedField: 'updated_at' } }) {}),
    message: /^AsyncGenericViewSet\.with\(.*conditional\): "conditional" is not a static of AsyncGenericViewSet, so it would never be read$/
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 9,
    mistake: 'a misspelt action (retreive) in the methods object, forced through the types',
    when: 'definition',
    act: () => class Books extends BookViews.with(statics(), { async retreive () { return null } } as never) {},
    fix: () => register(class Books extends BookViews.with(statics(), { async retrieve () { return null } }) {}),
    message: new RegExp(`^${BASE}\\.with\\(responseSchema, createSchema, detailParams, repository\\): "retreive" is not a method of ${BASE}, so it would never be called$`)
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 10,
    mistake: 'an action the view does not have (destroy on a read-only view) in the methods object',
    when: 'definition',
    act: () => class Books extends mix(AsyncGenericListAPIView, AsyncGenericRetrieveAPIView).with(
      { responseSchema: Book, repository: books() },
      { async destroy () { return true } } as never
    ) {},
    fix: () => register(class Books extends BookViews.with(statics(), { async destroy () { return true } }) {}),
    message: /^mix\(AsyncGenericListAPIView, AsyncGenericRetrieveAPIView\)\.with\(responseSchema, repository\): "destroy" is not a method of mix\(AsyncGenericListAPIView, AsyncGenericRetrieveAPIView\)/
  },
  {
    code: 'FV_ERR_UNKNOWN_STATIC',
    row: 11,
    mistake: 'a methods-object entry that is not a function',
    when: 'definition',
    act: () => class Books extends BookViews.with(statics(), { retrieve: dune } as never) {},
    fix: () => register(class Books extends BookViews.with(statics(), { async retrieve () { return dune } }) {}),
    message: new RegExp(`^${BASE}\\.with\\(responseSchema, createSchema, detailParams, repository\\): "retrieve" must be a function, not object$`)
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    row: 8,
    mistake: 'a misspelt lastModifiedField (updatedAt) with responseSchema set by static override',
    when: 'registration',
    act: () => register(class Books extends BookViews.with({ createSchema: BookIn, detailParams: BookParams, repository: books(), conditional: { etag: true, lastModifiedField: 'updatedAt' } }) {
      static override responseSchema = Book
    }),
    fix: () => register(class Books extends BookViews.with({ createSchema: BookIn, detailParams: BookParams, repository: books(), conditional: { etag: true, lastModifiedField: 'updated_at' } }) {
      static override responseSchema = Book
    }),
    message: /^Cannot register Books: conditional\.lastModifiedField "updatedAt" is not a property of its responseSchema \(its properties: id, title, year, updated_at\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    row: 37,
    mistake: 'lastModifiedField naming a field that holds no time (title)',
    when: 'registration',
    act: () => register(class Books extends BookViews.with({ ...statics(), conditional: { etag: true, lastModifiedField: 'title' } }) {}),
    fix: () => register(class Books extends BookViews.with({ ...statics(), conditional: { etag: true, lastModifiedField: 'updated_at' } }) {}),
    message: /^Cannot register Books: conditional\.lastModifiedField "title" is not a time in its responseSchema: name the field that says when the item last changed, a string with format 'date-time' \(or 'date'\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_ACTION',
    row: 18,
    mistake: 'a misspelt actionDependencies key (destory) beside a correct one',
    when: 'registration',
    act: () => register(
      class Books extends BookViews.with(
        { ...statics(), actionDependencies: { destroy: [() => {}], destory: [() => {}] } }
      ) {}
    ),
    fix: () => register(
      class Books extends BookViews.with({ ...statics(), actionDependencies: { destroy: [() => {}] } }) {}
    ),
    message: /^Cannot register Books: actionDependencies names "destory", which is not an action of this view; its actions are create, destroy, list, partialUpdate, retrieve, update/
  },
  {
    code: 'FV_ERR_ABSTRACT_VIEW',
    row: 25,
    mistake: 'a misspelt action (retreive) in the class body of an action view, without override',
    when: 'registration',
    act: () => register(class Books extends AsyncRetrieveAPIView.with(
      { responseSchema: Book, detailParams: BookParams }
    ) {
      async retreive () { return dune }
    }),
    fix: () => register(class Books extends AsyncRetrieveAPIView.with(
      { responseSchema: Book, detailParams: BookParams }
    ) {
      override async retrieve () { return dune }
    }),
    message: /^Cannot register Books: it is abstract, action method "retrieve" is not implemented$/
  },
  {
    code: 'FV_ERR_MISSPELT_MEMBER',
    row: 26,
    mistake: 'a misspelt action (retreive) in the class body of a generic view, without override',
    when: 'registration',
    act: () => register(class Books extends BookViews.with(statics()) {
      async retreive () { return dune }
    }),
    fix: () => register(class Books extends BookViews.with(statics()) {
      override async retrieve () { return dune }
    }),
    message: /^Cannot register Books: Books\.prototype\.retreive looks like a misspelling of retrieve, which it does not replace \(the inherited retrieve still applies\); rename it retrieve, or give it a name of its own$/
  },
  {
    code: 'FV_ERR_MISSPELT_MEMBER',
    row: 26,
    mistake: 'a misspelt static in the class body (reponseSchema), without override',
    when: 'registration',
    act: () => register(class Books extends BookViews.with(
      { createSchema: BookIn, detailParams: BookParams, repository: books() }
    ) {
      static reponseSchema = Book
    }),
    fix: () => register(class Books extends BookViews.with(
      { createSchema: BookIn, detailParams: BookParams, repository: books() }
    ) {
      static override responseSchema = Book
    }),
    message: /^Cannot register Books: Books\.reponseSchema looks like a misspelling of responseSchema/
  },
  {
    code: 'FV_ERR_NO_REPOSITORY',
    row: 27,
    mistake: 'a generic view without a repository',
    when: 'registration',
    act: () => register(
      class Books extends BookViews.with({ responseSchema: Book, createSchema: BookIn, detailParams: BookParams }) {}
    ),
    fix: () => register(
      class Books extends BookViews.with(
        { responseSchema: Book, createSchema: BookIn, detailParams: BookParams, repository: books() }
      ) {}
    ),
    message: /^Cannot register Books: set its static repository or override its repository getter$/
  },
  {
    code: 'FV_ERR_NO_RESPONSE_SCHEMA',
    row: 28,
    mistake: 'a generic view without a responseSchema',
    when: 'registration',
    act: () => register(
      class Books extends BookViews.with({ createSchema: BookIn, detailParams: BookParams, repository: books() }) {}
    ),
    fix: () => register(
      class Books extends BookViews.with(
        { responseSchema: Book, createSchema: BookIn, detailParams: BookParams, repository: books() }
      ) {}
    ),
    message: /^Cannot register Books: .*retrieve.* no response schema/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    row: 29,
    mistake: 'a misspelt orderingFields entry (yaer) over a SqliteRepository',
    when: 'registration',
    act: () => {
      class BookFilter extends BaseFilter { static override orderingFields = ['title', 'yaer'] }
      return register(
        class Books extends AsyncGenericListAPIView.with(
          { responseSchema: Book, filter: BookFilter, repository: sqliteBooks() }
        ) {}
      )
    },
    fix: () => {
      class BookFilter extends BaseFilter { static override orderingFields = ['title', 'year'] }
      return register(
        class Books extends AsyncGenericListAPIView.with(
          { responseSchema: Book, filter: BookFilter, repository: sqliteBooks() }
        ) {}
      )
    },
    message: /^Cannot register Books: BookFilter\.orderingFields names "yaer", which its repository does not have \(its fields: id, title, year, updated_at\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    row: 30,
    mistake: 'a misspelt orderingFields entry (yaer) over a MemoryRepository',
    when: 'registration',
    act: () => {
      class BookFilter extends BaseFilter { static override orderingFields = ['title', 'yaer'] }
      return register(
        class Books extends AsyncGenericListAPIView.with(
          { responseSchema: Book, filter: BookFilter, repository: books() }
        ) {}
      )
    },
    fix: () => {
      class BookFilter extends BaseFilter { static override orderingFields = ['title', 'year'] }
      return register(
        class Books extends AsyncGenericListAPIView.with(
          { responseSchema: Book, filter: BookFilter, repository: books() }
        ) {}
      )
    },
    message: /^Cannot register Books: BookFilter\.orderingFields names "yaer", which neither its responseSchema nor a row of its repository has \(their fields: id, title, year, updated_at\)$/
  },
  {
    code: 'FV_ERR_UNKNOWN_FIELD',
    row: 35,
    mistake: 'detailParams naming a parameter the detail path does not have (bookId, path /:id)',
    when: 'registration',
    act: () => register(
      class Books extends BookViews.with({ ...statics(), detailParams: Type.Object({ bookId: Type.Integer() }) }) {}
    ),
    fix: () => register(class Books extends BookViews.with({ ...statics(), detailParams: Type.Object({ bookId: Type.Integer() }), detailRoute: '/:bookId' }) {}),
    message: /^Cannot register Books: its detailParams requires "bookId", which the path of \w+ \(\/books\/:id\) does not have: set detailRoute to name it \(`\/:bookId`\), or name it in the prefix$/
  },
  {
    code: 'FV_ERR_BULK_CONFIG',
    row: 31,
    mistake: 'a bulkUpdateSchema that does not require the primary key',
    when: 'registration',
    act: () => register(
      class Books extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet).with(
        { ...statics(), updateSchema: BookIn, filter: null, bulkUpdateSchema: BookIn }
      ) {}
    ),
    fix: () => register(
      class Books extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet).with(
        { ...statics(), updateSchema: BookIn, filter: null, bulkUpdateSchema: Book }
      ) {}
    ),
    message: /^Cannot register Books: bulkUpdateSchema must require the primary key "id"/
  }
]

for (const { code, row, mistake, when, act, fix, message } of cases) {
  test(`${row}. ${mistake}: ${code} at ${when}`, async (t) => {
    const error = await caught(act)
    t.ok(error instanceof ConfigurationError, 'a ConfigurationError')
    t.ok(error instanceof TypeError, 'a TypeError')
    t.equal((error as ConfigurationError).code, code, 'its code')
    t.match((error as Error).message, message, 'the message names the view and what is wrong in it')
    t.equal(await caught(fix), undefined, 'the fixed view defines and registers')
  })
}

test('a .with() mistake throws where the class is defined, before any registration', async (t) => {
  let defined = false
  const error = await caught(() => {
    class Books extends BookViews.with({ ...statics(), detailParam: BookParams } as never) {}
    defined = true
    return Books
  })
  t.equal((error as ConfigurationError).code, 'FV_ERR_UNKNOWN_STATIC')
  t.match((error as Error).message, /"detailParam" is not a static/)
  t.equal(defined, false, 'the class is never defined')
})

test('the Book API without mistakes answers', async (t) => {
  class Books extends BookViews.with({ ...statics(), conditional: { etag: true, lastModifiedField: 'updated_at' } }, {
    // The body is { title, year }: the server stamps updated_at, which every Book has.
    async create (request) {
      return await this.repository.create({ ...request.body, updated_at: new Date().toISOString() }, this.getRepositoryOptions('create'))
    },
    getLocation (book) { return `/books/${book.id}` }
  }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }] })
  t.teardown(() => app.close())

  const read = await app.inject('/books/1')
  t.equal(read.statusCode, 200)
  t.same(read.json(), dune)
  t.equal(read.headers['last-modified'], new Date(dune.updated_at).toUTCString(), 'Last-Modified from updated_at')
  t.type(read.headers.etag, 'string', 'an ETag')

  const created = await app.inject({ method: 'POST', url: '/books', payload: { title: 'Emma', year: 1815 } })
  t.equal(created.statusCode, 201)
  t.match(created.json(), { id: 2, title: 'Emma', year: 1815, updated_at: String })
  t.equal(created.headers.location, '/books/2', 'Location from getLocation')

  const wrongId = await app.inject('/books/one')
  t.equal(wrongId.statusCode, 400, 'the integer detailParams refuse a non-integer id')
})

test('36. no detailParams over integer ids in a MemoryRepository: the path id finds the integer key, as in a SQL table', async (t) => {
  class Books extends BookViews.with({ responseSchema: Book, createSchema: BookIn, repository: books() }) {}
  const app = await build({ views: [{ view: Books, prefix: '/books' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/books/1')).json(), dune, 'GET /books/1 finds the row whose id is 1')
  t.equal((await app.inject({ method: 'PATCH', url: '/books/1', payload: { year: 1966 } })).json().year, 1966, 'and so do the writes')
  for (const id of ['01', '1.0', '+1', ' 1', '9007199254740993', 'x']) {
    t.equal((await app.inject(`/books/${encodeURIComponent(id)}`)).statusCode, 404, `${JSON.stringify(id)} spells no integer key`)
  }
})

test('30. over a MemoryRepository, a filter may name a field its rows hold beyond the response schema, or one the schema has and no row yet', async (t) => {
  class Hidden extends BaseFilter { static override fields = { owner: Type.String() }; static override orderingFields = ['year'] }
  const hidden = asyncRepository<BookData & { owner: string }, MemoryRepository<BookData & { owner: string }>>(new MemoryRepository({ rows: [{ ...dune, owner: 'ann' }] }))
  class Owned extends AsyncGenericListAPIView.with({ responseSchema: Book, filter: Hidden, repository: hidden }) {}
  const app = await build({ views: [{ view: Owned, prefix: '/books' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/books?owner=ann')).json(), [dune], 'a hidden field of the rows filters, and the response schema drops it')
  class Empty extends AsyncGenericListAPIView.with(
    {
      responseSchema: Book,
      filter: Hidden,
      repository: asyncRepository<BookData, MemoryRepository<BookData>>(new MemoryRepository<BookData>())
    }
  ) {}
  t.match(await caught(() => register(Empty)), { code: 'FV_ERR_UNKNOWN_FIELD', message: /Hidden\.fields names "owner"/ }, 'over an empty store, only the response schema says what exists')
})

test('26. a new member one edit from an inherited one is refused only when it is one: helpers, routes and distant names pass', async (t) => {
  class Books extends BookViews.with(statics()) {
    _list () { return [] } // a private helper by convention
    listAll () { return [] } // more than one edit from list
    @Get('/lists')
    lists () { return [] } // a route is a new member by intent
  }
  t.equal(await caught(() => register(Books)), undefined)
  class Child extends Books {
    override getKwargs () { return {} } // overrides, through a class of the user's own
    getKWargs () { return {} } // but this differs by case only
  }
  t.match(await caught(() => register(Child)), { code: 'FV_ERR_MISSPELT_MEMBER', message: /Child\.prototype\.getKWargs looks like a misspelling of getKwargs/ })
})

test('26. near names, not only one edit: another case or underscores, singular for plural, two edits in a long name', async (t) => {
  const requireAuth = (): void => {}
  const near: Array<[string, () => Promise<void>, RegExp]> = [
    ['unsafeDependency', async () => { await register(class Books extends BookViews.with(statics()) { static unsafeDependency = [requireAuth] }) }, /Books\.unsafeDependency looks like a misspelling of unsafeDependencies/],
    ['response_schema', async () => { await register(class Books extends BookViews.with(statics()) { static response_schema = Book }) }, /Books\.response_schema looks like a misspelling of responseSchema/],
    ['actionDependecies', async () => { await register(class Books extends BookViews.with(statics()) { static actionDependecies = {} }) }, /Books\.actionDependecies looks like a misspelling of actionDependencies/],
    ['reponseSchma', async () => { await register(class Books extends BookViews.with(statics()) { static reponseSchma = Book }) }, /Books\.reponseSchma looks like a misspelling of responseSchema/],
    ['get_kwargs', async () => { await register(class Books extends BookViews.with(statics()) { get_kwargs () { return {} } }) }, /Books\.prototype\.get_kwargs looks like a misspelling of getKwargs/]
  ]
  for (const [name, act, message] of near) t.match(await caught(act), { code: 'FV_ERR_MISSPELT_MEMBER', message }, name)
  // Near a static a group replaced: what was meant is the group's member.
  class Books extends BookViews.with(statics()) { static requirePrecondition = true }
  t.match(await caught(() => register(Books)),
    { code: 'FV_ERR_RENAMED_STATIC', message: /Books\.requirePrecondition looks like requirePreconditions, which is now conditional: \{ require \}/ }, 'requirePrecondition')
  class Helpers extends BookViews.with(statics()) {
    static pageTitle = 'Books' // far from every inherited name
    static tags = ['books'] // too short to compare
    loadAuthors () { return [] }
    responseFor () { return {} }
  }
  t.equal(await caught(() => register(Helpers)), undefined, 'names of your own pass')
  t.match(await caught(() => class Books extends BookViews.with({ ...statics(), responseSchemas: Book } as never) {}),
    { code: 'FV_ERR_UNKNOWN_STATIC', message: /"responseSchemas" is not a static of .*; did you mean "responseSchema"\?$/ }, '.with() says which static was meant')
  t.match(await caught(() => class Books extends BookViews.with({ ...statics(), zzz: 1 } as never) {}),
    { code: 'FV_ERR_UNKNOWN_STATIC', message: /"zzz" is not a static of .*, so it would never be read$/ }, 'and nothing when no static is near')
})
