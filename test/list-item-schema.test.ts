import { test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { AsyncListAPIView, mix } from '../lib/index.js'
import { GenericViewSet, MemoryRepository, PaginationFilter } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { build } from './helpers.js'
import { openSqlite } from './sqlite-driver.js'

// One view, two representations: a list of summaries (`listItemSchema`) beside the full object.

const Article = Type.Object({ id: Type.Integer(), title: Type.String(), body: Type.String() }, { $id: 'Article' })
const ArticleSummary = Type.Object({ id: Type.Integer(), title: Type.String() }, { $id: 'ArticleSummary' })
const ArticleIn = Type.Object({ title: Type.String({ minLength: 1 }), body: Type.String() })
type ArticleT = Static<typeof Article>

const rows: ArticleT[] = [{ id: 1, title: 'Emma', body: 'Emma Woodhouse, handsome, clever, and rich' }, { id: 2, title: 'Persuasion', body: 'Sir Walter Elliot' }]

type Store = MemoryRepository<ArticleT> | SqliteRepository<ArticleT>
const Articles = (repository: Store, paged = false) => mix(ConditionalMixin, GenericViewSet).with({
  responseSchema: Article,
  listItemSchema: ArticleSummary,
  createSchema: ArticleIn,
  detailParams: Type.Object({ id: Type.Integer() }),
  conditional: { etag: true },
  filter: paged ? PaginationFilter.with({ orderingFields: ['title'] }) : null,
  repository
})

function sqliteArticles (nullable = false): SqliteRepository<ArticleT> {
  const db = openSqlite()
  db.exec(`CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT ${nullable ? '' : 'NOT NULL'}, body TEXT NOT NULL)`)
  for (const row of rows) db.prepare('INSERT INTO articles (id, title, body) VALUES (?, ?, ?)').run(row.id, row.title, row.body)
  return new SqliteRepository<ArticleT>(db, { table: 'articles', columns: ['id', 'title', 'body'] })
}

for (const [store, open] of [['memory', () => new MemoryRepository<ArticleT>({ rows })], ['SQLite', () => sqliteArticles()]] as const) {
  test(`a list of summaries beside the full object (${store})`, async (t) => {
    const app = await build({ views: [{ view: Articles(open()), prefix: '/articles' }, { view: Articles(open(), true), prefix: '/paged' }] })
    t.same((await app.inject('/articles')).json(), [{ id: 1, title: 'Emma' }, { id: 2, title: 'Persuasion' }], 'the list sends the summary\'s fields only')
    t.same((await app.inject('/articles/1')).json(), rows[0], 'one object sends every field')
    const created = await app.inject({ method: 'POST', url: '/articles', payload: { title: 'Sanditon', body: 'A gentleman and lady' } })
    t.same(created.json(), { id: 3, title: 'Sanditon', body: 'A gentleman and lady' }, 'a create answers the full object')
    const page = (await app.inject('/paged?sort=title&page_size=2')).json()
    t.same(page.items, [{ id: 1, title: 'Emma' }, { id: 2, title: 'Persuasion' }], 'a page of summaries')
    t.equal(page.total_items, 2)
    const list = await app.inject('/articles')
    t.equal((await app.inject({ url: '/articles', headers: { 'if-none-match': String(list.headers.etag) } })).statusCode, 304, 'the list\'s tag is its own representation\'s')
    t.not(list.headers.etag, (await app.inject('/articles/1')).headers.etag)
  })
}

test('the document: the list and its page of the summary component, the detail of the full one', async (t) => {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Blog', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Articles(new MemoryRepository({ rows })), prefix: '/articles' }, { view: Articles(new MemoryRepository({ rows }), true), prefix: '/paged' }] })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  const ok = (path: string, method: string) => doc.paths[path][method].responses[method === 'post' ? '201' : '200'].content['application/json'].schema
  t.same(ok('/articles', 'get'), { type: 'array', items: { $ref: '#/components/schemas/ArticleSummary' } })
  t.same(ok('/paged', 'get'), { $ref: '#/components/schemas/ArticleSummaryNumberedPage' })
  t.same(ok('/articles/{id}', 'get'), { $ref: '#/components/schemas/Article' })
  t.same(ok('/articles', 'post'), { $ref: '#/components/schemas/Article' })
  t.same(Object.keys(doc.components.schemas.ArticleSummary.properties), ['id', 'title'])
})

test('a list of your own sends the summary\'s fields of what it returns', async (t) => {
  const Listed = AsyncListAPIView.with({ responseSchema: Article, listItemSchema: ArticleSummary }, {
    async list () { return [{ id: 1, title: 'Emma' }] }
  })
  const Wide = AsyncListAPIView.with({ responseSchema: Article, listItemSchema: ArticleSummary }, {
    // The extra member is what a wider row would carry: the summary's serializer leaves it out.
    async list () { return rows.map((row) => ({ ...row })) }
  })
  const app = await build({ views: [{ view: Listed, prefix: '/listed' }, { view: Wide, prefix: '/wide' }] })
  t.same((await app.inject('/listed')).json(), [{ id: 1, title: 'Emma' }])
  t.same((await app.inject('/wide')).json(), [{ id: 1, title: 'Emma' }, { id: 2, title: 'Persuasion' }], 'the body stays out of the list')
})

test('the summary is held to the table\'s columns as the full schema is, naming listItemSchema and the list', async (t) => {
  const maybeTitle = Type.Union([Type.String(), Type.Null()])
  const Loose = GenericViewSet.with({
    responseSchema: Type.Object({ id: Type.Integer(), title: maybeTitle, body: Type.String() }),
    listItemSchema: ArticleSummary,
    repository: sqliteArticles(true)
  })
  await t.rejects(build({ views: [{ view: Loose, prefix: '/a' }] }), { code: 'FV_ERR_SCHEMA_COLUMNS', message: /its listItemSchema does not describe every row of its table: "title" may be NULL.*every answer of list,/ })
  const Strict = GenericViewSet.with({
    responseSchema: ArticleSummary,
    listItemSchema: Type.Object({ id: Type.Integer(), title: maybeTitle }),
    repository: sqliteArticles(true)
  })
  await t.rejects(build({ views: [{ view: Strict, prefix: '/a' }] }), { code: 'FV_ERR_SCHEMA_COLUMNS', message: /its responseSchema does not describe.*every answer of partialUpdate, update, retrieve, create,/ })
  t.throws(() => mix(GenericViewSet).with({ responseSchema: Article, listItemSchemas: ArticleSummary } as never), { code: 'FV_ERR_UNKNOWN_STATIC', message: /did you mean "listItemSchema"/ })
})
