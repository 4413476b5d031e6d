import { test, type Test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { mix } from '../lib/index.js'
import { AsyncGenericViewSet, BaseFilter, GenericViewSet, ListEnvelope, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { build, problem } from './helpers.js'
import { openSqlite } from './sqlite-driver.js'

// Named envelopes: `{ "book": { ... } }` on the wire, the object itself in the actions.

const Book = Type.Object({ id: Type.Integer(), title: Type.String(), pages: Type.Integer() }, { $id: 'Book' })
const BookIn = Type.Object({ title: Type.String({ minLength: 1 }), pages: Type.Integer({ minimum: 1 }) })
type BookT = Static<typeof Book>

const shelf = (): MemoryRepository<BookT> => new MemoryRepository<BookT>({ rows: [{ id: 1, title: 'Emma', pages: 474 }] })

const Books = (repository: MemoryRepository<BookT>) => mix(ConditionalMixin, GenericViewSet).with({
  responseSchema: Book,
  createSchema: BookIn,
  detailParams: Type.Object({ id: Type.Integer() }),
  envelope: 'book',
  conditional: { etag: true, requests: true },
  repository
})

test('answers and bodies of one object travel in the envelope; lists do not', async (t) => {
  const repository = shelf()
  const app = await build({ views: [{ view: Books(repository), prefix: '/books' }] })
  const one = await app.inject({ method: 'GET', url: '/books/1' })
  t.same(one.json(), { book: { id: 1, title: 'Emma', pages: 474 } })
  t.same((await app.inject({ method: 'GET', url: '/books' })).json(), [{ id: 1, title: 'Emma', pages: 474 }])
  const created = await app.inject({ method: 'POST', url: '/books', payload: { book: { title: 'Persuasion', pages: 249 } } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { book: { id: 2, title: 'Persuasion', pages: 249 } })
  t.equal(repository.get({ id: 2 })?.title, 'Persuasion', 'the action stored the object, not its envelope')
  const bare = await app.inject({ method: 'POST', url: '/books', payload: { title: 'Persuasion', pages: 249 } })
  t.match(problem(t, bare, 400).errors, [{ pointer: '#/book' }], 'a body outside its envelope is refused, by pointer')
  const inner = await app.inject({ method: 'POST', url: '/books', payload: { book: { title: '', pages: 1 } } })
  t.match(problem(t, inner, 400).errors, [{ pointer: '#/book/title' }])
  const patched = await app.inject({ method: 'PATCH', url: '/books/1', payload: { book: { pages: 480 } } })
  t.same(patched.json(), { book: { id: 1, title: 'Emma', pages: 480 } })
  const merge = await app.inject({ method: 'PATCH', url: '/books/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: { book: { pages: 1 } } })
  t.equal(merge.statusCode, 415, 'an envelope takes plain JSON patches only by default')
})

test('an ETag of an enveloped object guards its writes', async (t) => {
  const app = await build({ views: [{ view: Books(shelf()), prefix: '/books' }] })
  const etag = String((await app.inject({ method: 'GET', url: '/books/1' })).headers.etag)
  t.equal((await app.inject({ method: 'GET', url: '/books/1', headers: { 'if-none-match': etag } })).statusCode, 304)
  const put = await app.inject({ method: 'PUT', url: '/books/1', headers: { 'if-match': etag }, payload: { book: { title: 'Emma', pages: 500 } } })
  t.equal(put.statusCode, 200, 'the tag a client holds is the one the write checks')
  problem(t, await app.inject({ method: 'PUT', url: '/books/1', headers: { 'if-match': etag }, payload: { book: { title: 'Emma', pages: 1 } } }), 412)
})

test('the document shows the envelope, and the component keeps the resource\'s name', async (t) => {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Library', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Books(shelf()), prefix: '/books' }] })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  const post = doc.paths['/books'].post
  t.same(post.requestBody.content['application/json'].schema.required, ['book'])
  t.same(post.responses['201'].content['application/json'].schema.properties.book, { $ref: '#/components/schemas/Book' })
  t.equal(post.operationId, 'createBook')
  t.same(doc.paths['/books'].get.responses['200'].content['application/json'].schema.items, { $ref: '#/components/schemas/Book' })
})

test('patch documents and an envelope cannot both apply to one representation', async (t) => {
  const View = GenericViewSet.with({ responseSchema: Book, createSchema: BookIn, detailParams: Type.Object({ id: Type.Integer() }), envelope: 'book', patch: { formats: ['json', 'merge-patch'] }, repository: shelf() })
  await t.rejects(build({ views: [{ view: View, prefix: '/books' }] }), { code: 'FV_ERR_ENVELOPE', message: /patch = \{ formats: \['json'\] \}/ })
})

test('Last-Modified is read from the object inside the envelope', async (t) => {
  const Stamped = Type.Object({ id: Type.Integer(), title: Type.String(), updated_at: Type.String({ format: 'date-time' }) }, { $id: 'Stamped' })
  const repository = new MemoryRepository<Static<typeof Stamped>>({ rows: [{ id: 1, title: 'Emma', updated_at: '2026-01-02T03:04:05.000Z' }] })
  const View = mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Stamped,
    createSchema: Type.Object({ title: Type.String(), updated_at: Type.String() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    envelope: 'book',
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository
  })
  const app = await build({ views: [{ view: View, prefix: '/books' }] })
  t.equal((await app.inject('/books/1')).headers['last-modified'], 'Fri, 02 Jan 2026 03:04:05 GMT')
  const changed = await app.inject({ method: 'PATCH', url: '/books/1', payload: { book: { updated_at: '2026-02-03T04:05:06.000Z' } } })
  t.equal(changed.headers['last-modified'], 'Tue, 03 Feb 2026 04:05:06 GMT', 'and on a write\'s answer')
})

// An envelope-only list: `{ "books": [...] }`, every matching row, no paging parameters.

const BooksListed = (repository: MemoryRepository<BookT> | SqliteRepository<BookT>) => GenericViewSet.with({
  responseSchema: Book,
  createSchema: BookIn,
  detailParams: Type.Object({ id: Type.Integer() }),
  envelope: 'book',
  filter: BaseFilter.with({ fields: { pages: Type.Integer() }, orderingFields: ['title'], defaultOrdering: ['-title'], paginator: new ListEnvelope('books') }),
  repository
})

const sqliteShelf = (t: Test): SqliteRepository<BookT> => {
  const db = openSqlite()
  t.teardown(() => { db.close() })
  db.exec('CREATE TABLE books (id INTEGER PRIMARY KEY, title TEXT NOT NULL, pages INTEGER NOT NULL)')
  db.exec("INSERT INTO books (title, pages) VALUES ('Emma', 474)")
  return new SqliteRepository<BookT>(db, { table: 'books', columns: ['id', 'title', 'pages'] })
}

for (const [store, open] of [['memory', () => shelf()], ['SQLite', sqliteShelf]] as const) {
  test(`a list in a named member, filtered and ordered, no paging parameters (${store})`, async (t) => {
    const app = await build({ views: [{ view: BooksListed(open(t)), prefix: '/books' }] })
    for (const title of ['Persuasion', 'Mansfield Park']) {
      t.equal((await app.inject({ method: 'POST', url: '/books', payload: { book: { title, pages: 249 } } })).statusCode, 201)
    }
    const all = await app.inject('/books')
    t.equal(all.statusCode, 200)
    t.same(all.json(), { books: [{ id: 2, title: 'Persuasion', pages: 249 }, { id: 3, title: 'Mansfield Park', pages: 249 }, { id: 1, title: 'Emma', pages: 474 }] },
      'every row, in the default ordering, inside the member')
    t.same((await app.inject('/books?pages=249&sort=title')).json().books.map((b: BookT) => b.title), ['Mansfield Park', 'Persuasion'])
    t.same((await app.inject('/books?pages=1')).json(), { books: [] }, 'an empty list is an empty member')
    t.same((await app.inject('/books?limit=1&page=2&offset=1&cursor=x')).json().books.length, 3, 'paging parameters are not parameters of it')
    problem(t, await app.inject('/books?pages=many'), 400)
    t.same((await app.inject('/books/1')).json(), { book: { id: 1, title: 'Emma', pages: 474 } }, 'one object keeps its own envelope')
  })
}

test('an envelope-only list documented as its member, named after its item', async (t) => {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Library', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: BooksListed(shelf()), prefix: '/books' }] })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  const get = doc.paths['/books'].get
  t.same(get.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/BookList' })
  t.same(doc.components.schemas.BookList, {
    type: 'object', required: ['books'], properties: { books: { type: 'array', items: { $ref: '#/components/schemas/Book' } } }
  })
  t.same(get.parameters.map((p: { name: string }) => p.name).sort(), ['pages', 'sort'], 'no paging parameters')
})

test('an envelope-only list over an async repository, and what it declares of itself', async (t) => {
  const app = await build({ views: [{ view: AsyncGenericViewSet.with({ responseSchema: Book, filter: BaseFilter.with({ paginator: new ListEnvelope('books') }), repository: asyncRepository<BookT, MemoryRepository<BookT>>(shelf()) }), prefix: '/books' }] })
  t.same((await app.inject('/books')).json(), { books: [{ id: 1, title: 'Emma', pages: 474 }] })
  const list = new ListEnvelope('books')
  t.same([list.window(), list.parameters(), list.namedFields()], [{ kind: 'all' }, {}, []], 'every row, no parameters, no fields of its own')
})

test('a list envelope\'s member must be a name', async (t) => {
  for (const member of ['', '1st', '__proto__', 'a b', 'x"y']) {
    t.throws(() => new ListEnvelope(member), { code: 'FV_ERR_ENVELOPE', message: /must be a name \(letters, digits, _, \$ and -, not starting with a digit\)/ }, JSON.stringify(member))
  }
  t.equal(new ListEnvelope('comments').member, 'comments')
  t.equal(new ListEnvelope('comment-list').member, 'comment-list')
})

test('two list envelopes of one item schema and one suffix are one schema per member', async (t) => {
  t.equal(new ListEnvelope('books').pageSchema(Book), new ListEnvelope('books').pageSchema(Book), 'the same member: one schema')
  t.not(new ListEnvelope('books').pageSchema(Book), new ListEnvelope('items').pageSchema(Book))
  t.equal(new ListEnvelope('books', 'Shelf').pageSchema(Book).$id, 'BookShelf')
})
