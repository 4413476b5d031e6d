import { test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import views from '../lib/index.js'
import type { FastifyViewsOptions, ViewClass } from '../lib/types.js'
import {
  AsyncGenericListAPIView, BaseFilter, CursorPage, CursorPaginationFilter, CursorPagination, GenericListAPIView,
  MemoryRepository, NumberedPage, OffsetLimitFilter,
  OffsetPage, OffsetPagination, OffsetPages, PageNumberPagination, PaginationFilter, asyncRepository, composeFilters,
  type CursorFacts, type NumberedFacts, type OffsetFacts
} from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { openSqlite } from './sqlite-driver.js'
import { build, problem } from './helpers.js'

// A user's own page shapes, as docs/filters.md#your-own-page shows them: the envelope of an API that
// answers `{ articles, articlesCount }`, a numbered page under `data` and `meta`, a cursor page of `data` and `next`.

const Article = Type.Object({ id: Type.Integer(), title: Type.String() }, { $id: 'Article' })
type ArticleT = Static<typeof Article>
const ROWS: ArticleT[] = Array.from({ length: 30 }, (_, i) => ({ id: i + 1, title: `Article ${String(i + 1).padStart(2, '0')}` }))

interface ArticleList<T> { articles: T[], articlesCount: number }

class ArticlePages extends OffsetPagination {
  declare readonly page: ArticleList<this['item']>
  override readonly suffix = 'List'
  envelope (items: unknown[], { total }: OffsetFacts) { return { articles: items, articlesCount: total } }
  envelopeSchema (item: TSchema) { return { articles: Type.Array(item), articlesCount: Type.Integer({ minimum: 0 }) } }
}

class ArticleFilter extends OffsetLimitFilter.with({ paginator: new ArticlePages(), maxPageSize: 1000, defaultPageSize: 20, orderingFields: ['id', 'title'] }) {}

interface DataPage<T> { data: T[], meta: { page: number, pages: number, total: number } }

class DataPages extends PageNumberPagination {
  declare readonly page: DataPage<this['item']>
  envelope (items: unknown[], { page, totalPages, total }: NumberedFacts) {
    return {
      data: items,
      meta: { page, pages: totalPages, total }
    }
  }

  envelopeSchema (item: TSchema) {
    return {
      data: Type.Array(item),
      meta: Type.Object({ page: Type.Integer(), pages: Type.Integer(), total: Type.Integer() })
    }
  }
}

interface Feed<T> { data: T[], next: string | null }

class FeedPages extends CursorPagination {
  declare readonly page: Feed<this['item']>
  envelope (items: unknown[], { next }: CursorFacts) { return { data: items, next } }
  envelopeSchema (item: TSchema) { return { data: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]) } }
}

/** A generic list of the articles over `repository`, paged by `filter`. */
function articles (filter: typeof BaseFilter, repository: unknown, List: ViewClass = GenericListAPIView): ViewClass {
  return class Articles extends (List as typeof GenericListAPIView) {
    static override responseSchema = Article
    static override filter = filter
    static override repository = repository as never
  }
}

/** A SQLite table of the articles, through a repository that says whether it read a page and its total in one snapshot. */
function sqliteArticles (): { repository: SqliteRepository<ArticleT>, snapshots: () => number } {
  const db = openSqlite(':memory:')
  db.exec('CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO articles (id, title) VALUES (?, ?)')
  for (const row of ROWS) insert.run(row.id, row.title)
  let snapshots = 0
  class Counted extends SqliteRepository<ArticleT> {
    override listAndCount (...args: Parameters<SqliteRepository<ArticleT>['listAndCount']>) {
      snapshots++
      return super.listAndCount(...args)
    }

    override count (): number { throw new Error('a counted page is read with listAndCount, in one snapshot') }
  }
  return { repository: new Counted(db, { table: 'articles', columns: ['id', 'title'] }), snapshots: () => snapshots }
}

const STORES = [
  { name: 'MemoryRepository (sync)', open: () => ({ repository: new MemoryRepository<ArticleT>({ rows: ROWS }), List: GenericListAPIView }) },
  { name: 'MemoryRepository (async)', open: () => ({ repository: asyncRepository<ArticleT, MemoryRepository<ArticleT>>(new MemoryRepository<ArticleT>({ rows: ROWS })), List: AsyncGenericListAPIView }) },
  { name: 'SqliteRepository', open: () => ({ repository: sqliteArticles().repository, List: GenericListAPIView }) }
] as const

const ids = (rows: ArticleT[]): number[] => rows.map((row) => row.id)
const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)

for (const store of STORES) {
  test(`${store.name}: a page of your own shape, with its own bounds and defaults`, async (t) => {
    const { repository, List } = store.open()
    const app = await build({ views: [{ view: articles(ArticleFilter, repository, List), prefix: '/articles' }] })
    t.teardown(() => app.close())
    const first = await app.inject('/articles')
    t.equal(first.statusCode, 200)
    t.same(Object.keys(first.json()), ['articles', 'articlesCount'], 'the envelope is the pagination\'s, nothing else')
    t.same(ids(first.json().articles), range(1, 20), 'defaultPageSize 20 applies, from offset 0')
    t.equal(first.json().articlesCount, 30, 'the total of every row')
    const last = (await app.inject('/articles?offset=25&limit=10')).json()
    t.same([ids(last.articles), last.articlesCount], [range(26, 30), 30], 'a window past the end holds what is left')
    t.same(ids((await app.inject('/articles?limit=1000')).json().articles), range(1, 30), 'limit up to maxPageSize, 1000')
    t.same(ids((await app.inject('/articles?sort=-id&limit=3')).json().articles), [30, 29, 28], 'ordering applies before the window')
    t.same((await app.inject('/articles?offset=10000')).json(), { articles: [], articlesCount: 30 }, 'the largest offset, maxOffset, is an empty page, not an error')
    const deep = problem(t, await app.inject('/articles?offset=10001'), 400)
    t.same(deep.errors.map((e: { parameter: string }) => e.parameter), ['offset'], 'one more row skipped is a 400 naming offset')
    const capped = problem(t, await app.inject('/articles?limit=1001'), 400)
    t.same(capped.errors.map((e: { parameter: string, in: string }) => [e.parameter, e.in]), [['limit', 'query']], 'a limit above the cap is a 400 naming limit')
    t.match(capped.errors[0].detail, /less or equal to 1000/)
  })

  test(`${store.name}: hostile page parameters are 400s naming the parameter`, async (t) => {
    const { repository, List } = store.open()
    const app = await build({ views: [{ view: articles(ArticleFilter, repository, List), prefix: '/articles' }] })
    t.teardown(() => app.close())
    const HOSTILE: Array<[string, string]> = [
      ['offset=-1', 'offset'], ['offset=9007199254740992', 'offset'], ['offset=99999999999999999999999', 'offset'], ['offset=abc', 'offset'],
      ['offset=1e3', 'offset'], ['offset=', 'offset'], ['limit=0', 'limit'], ['limit=-5', 'limit'], ['limit=10.5', 'limit'], ['limit=1e3', 'limit'],
      ['limit=ten', 'limit'], ['limit=0x10', 'limit'], ['limit=2&limit=3', 'limit']
    ]
    for (const [query, parameter] of HOSTILE) {
      const body = problem(t, await app.inject(`/articles?${query}`), 400)
      t.equal(body.errors[0].parameter, parameter, query)
    }
  })
}

test('over SQLite, a page and its total are read in one snapshot (listAndCount), never with a separate count', async (t) => {
  const { repository, snapshots } = sqliteArticles()
  const app = await build({ views: [{ view: articles(ArticleFilter, repository), prefix: '/articles' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/articles?offset=28')).json(), { articles: [{ id: 29, title: 'Article 29' }, { id: 30, title: 'Article 30' }], articlesCount: 30 })
  t.equal(snapshots(), 1)
})

test('the parameters are named as the API wants: the pagination\'s names, bounded the same', async (t) => {
  const Renamed = OffsetLimitFilter.with({ paginator: new ArticlePages({ offset: 'skip', limit: 'take' }), maxPageSize: 5 })
  const Standard = BaseFilter.with({ paginator: new OffsetPages({ limit: 'per_page' }) })
  const app = await build({
    views: [
      { view: articles(Renamed, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/renamed' },
      { view: articles(Standard, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/standard' }
    ]
  })
  t.teardown(() => app.close())
  t.same(ids((await app.inject('/renamed?skip=3&take=2')).json().articles), [4, 5])
  t.same(ids((await app.inject('/renamed?offset=3&limit=2')).json().articles), range(1, 5), 'offset and limit are no parameters of it: ignored like any undeclared one')
  t.equal(problem(t, await app.inject('/renamed?take=6'), 400).errors[0].parameter, 'take')
  t.equal(problem(t, await app.inject('/renamed?skip=-1'), 400).errors[0].parameter, 'skip')
  t.same(Object.keys(Renamed.querySchema().properties), ['skip', 'take'])
  t.same(new Renamed({ skip: 3, take: 2 }).asKwargs(), {}, 'the page parameters are no criteria')
  t.same(Object.keys(composeFilters(Renamed, BaseFilter.with({ orderingFields: ['title'] })).querySchema().properties),
    ['sort', 'skip', 'take'], 'composed, it pages by its own pagination, not by the built-in its kind names')
  t.same(new Renamed({ skip: 3 }).window, { kind: 'offset', offset: 3, limit: 5 })
  const standard = (await app.inject('/standard?offset=2&per_page=1')).json()
  t.same(standard, { items: [{ id: 3, title: 'Article 03' }], offset: 2, limit: 1, total_items: 30, has_more: true }, 'the standard envelope, another parameter name')
})

test('a numbered page and a cursor page of your own shape', async (t) => {
  const Numbered = PaginationFilter.with({ paginator: new DataPages({ page: 'p', pageSize: 'per_page' }), maxPageSize: 10, defaultPageSize: 4 })
  const Feed = BaseFilter.with({ paginator: new FeedPages({ cursor: 'after', pageSize: 'first' }), orderingFields: ['title'], maxPageSize: 12 })
  const app = await build({
    views: [
      { view: articles(Numbered, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/numbered' },
      { view: articles(Feed, asyncRepository<ArticleT, MemoryRepository<ArticleT>>(new MemoryRepository<ArticleT>({ rows: ROWS })), AsyncGenericListAPIView), prefix: '/feed' }
    ]
  })
  t.teardown(() => app.close())
  t.same((await app.inject('/numbered?p=3')).json(), { data: ROWS.slice(8, 12), meta: { page: 3, pages: 8, total: 30 } })
  t.same((await app.inject('/numbered?p=2&per_page=10')).json().meta, { page: 2, pages: 3, total: 30 })
  t.equal(problem(t, await app.inject('/numbered?p=0'), 400).errors[0].parameter, 'p')
  t.equal(problem(t, await app.inject('/numbered?per_page=11'), 400).errors[0].parameter, 'per_page')

  const seen: number[] = []
  let url = '/feed?first=12&sort=-title'
  for (let pages = 0; pages < 5; pages++) {
    const page = (await app.inject(url)).json()
    seen.push(...ids(page.data))
    if (page.next === null) break
    url = `/feed?first=12&sort=-title&after=${page.next as string}`
  }
  t.same(seen, range(1, 30).reverse(), 'the cursors walk every row once, in order')
  const next = (await app.inject('/feed?first=2')).json().next as string
  const foreign = problem(t, await app.inject(`/feed?first=2&sort=title&after=${next}`), 400)
  t.same(foreign.errors, [{ detail: 'Invalid cursor for this ordering', pointer: '#/after', in: 'query', parameter: 'after' }], 'a cursor of another ordering names the parameter')
  t.equal(problem(t, await app.inject('/feed?after=not*base64'), 400).errors[0].parameter, 'after')
  t.equal(Feed.querySchema().properties.after.description, 'An opaque cursor from a page of this list.')
})

async function documented (options: FastifyViewsOptions): Promise<{ app: FastifyInstance, doc: any }> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Blog', version: '1.0.0' } }))
  await app.register(views, options)
  await app.ready()
  return { app, doc: JSON.parse(JSON.stringify(app.swagger())) }
}

test('the OpenAPI document shows your page and your parameters', async (t) => {
  const { app, doc } = await documented({ views: [{ view: articles(ArticleFilter, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/articles' }] })
  t.teardown(() => app.close())
  const list = doc.paths['/articles'].get
  t.same(list.responses['200'].content['application/json'].schema, { $ref: '#/components/schemas/ArticleList' }, 'the page is a component named after its item')
  t.same(doc.components.schemas.ArticleList, {
    type: 'object',
    properties: { articles: { type: 'array', items: { $ref: '#/components/schemas/Article' } }, articlesCount: { type: 'integer', minimum: 0 } },
    required: ['articles', 'articlesCount']
  })
  const parameters = Object.fromEntries(
    list.parameters.map((p: { name: string, in: string, schema: unknown }) => [p.name, [p.in, p.schema]])
  )
  t.same(parameters.offset, ['query', { type: 'integer', minimum: 0, maximum: 10_000, default: 0 }], 'offset up to maxOffset')
  t.same(parameters.limit, ['query', { type: 'integer', minimum: 1, maximum: 1000, default: 20 }], 'the cap and the default the filter sets')
})

test('a page schema is built once per class and item schema; without an $id on the item it is documented inline', async (t) => {
  const pages = new ArticlePages()
  t.equal(pages.pageSchema(Article), new ArticlePages({ offset: 'skip' }).pageSchema(Article), 'one object per name, whatever the parameter names')
  t.equal(pages.pageSchema(Article).$id, 'ArticleList')
  const Plain = Type.Object({ id: Type.Integer() })
  t.equal(pages.pageSchema(Plain).$id, undefined)
  t.equal(pages.pageSchema(Plain), pages.pageSchema(Plain))
  t.equal(new DataPages().pageSchema(Article).$id, 'ArticleDataPages', 'the default suffix is the class name')
  const Anonymous = [class extends FeedPages {}][0]
  t.equal(new Anonymous().suffix, 'Page', 'or Page for a class without one')
})

test('the page builders are the schemas the built-in paginations answer; a list without a filter answers an array', async (t) => {
  t.equal(NumberedPage(Article), PaginationFilter.paginator.pageSchema(Article))
  t.equal(OffsetPage(Article), OffsetLimitFilter.paginator.pageSchema(Article))
  t.equal(CursorPage(Article), CursorPaginationFilter.paginator.pageSchema(Article))
  t.same([NumberedPage(Article).$id, OffsetPage(Article).$id, CursorPage(Article).$id], ['ArticleNumberedPage', 'ArticleOffsetPage', 'ArticleCursorPage'])
  const members = (page: TSchema) => JSON.parse(JSON.stringify(page.properties)) as Record<string, unknown>
  const items = { type: 'array', items: JSON.parse(JSON.stringify(Article)) }
  t.same(members(NumberedPage(Article)), {
    items,
    current_page: { type: 'integer', minimum: 1 },
    page_size: { type: 'integer', minimum: 1 },
    total_pages: { type: 'integer', minimum: 0 },
    total_items: { type: 'integer', minimum: 0 },
    has_more: { type: 'boolean' }
  }, 'a numbered page\'s counts are bounded')
  t.same(members(OffsetPage(Article)), {
    items, offset: { type: 'integer', minimum: 0 }, limit: { type: 'integer', minimum: 1 }, total_items: { type: 'integer', minimum: 0 }, has_more: { type: 'boolean' }
  }, 'and an offset page\'s')
  // The highest page is the one whose first row the store can still address exactly.
  const schema = PaginationFilter.with({ maxPageSize: 50 }).querySchema()
  const properties = schema.properties as Record<string, { maximum?: number }>
  const page = properties.page
  t.equal(page.maximum, 10_001, 'page is bounded by maxOffset at a page of one row')
  const unboundedFilter = PaginationFilter.with({ maxPageSize: 50, maxOffset: Number.MAX_SAFE_INTEGER })
  const unbounded = unboundedFilter.querySchema().properties as Record<string, { maximum?: number }>
  t.equal(unbounded.page.maximum, Math.floor(Number.MAX_SAFE_INTEGER / 50), 'without the bound, by the largest page size, so that its offset stays an exact integer')
  const { app, doc } = await documented({ views: [{ view: articles(null as never, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/all' }] })
  t.teardown(() => app.close())
  t.same(ids((await app.inject('/all?limit=1')).json()), range(1, 30), 'every row, limit being no parameter')
  t.same(doc.paths['/all'].get.responses['200'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Article' } })
})

test('a pagination is checked with its filter when the view is registered', async (t) => {
  const Clash = OffsetLimitFilter.with({ paginator: new ArticlePages({ offset: 'title' }), fields: { title: Type.String() } })
  t.throws(() => Clash.querySchema(), { code: 'FV_ERR_FILTER_FIELD', message: /parameter "title" is also a parameter of the filter/ })
  const Sorted = BaseFilter.with({ paginator: new ArticlePages({ limit: 'sort' }) })
  t.throws(() => Sorted.querySchema(), { code: 'FV_ERR_FILTER_FIELD', message: /parameter "sort"/ }, 'sort and q are the filter\'s, whether it orders or not')
  const TooLong = BaseFilter.with({ paginator: new ArticlePages(), maxPageSize: 10, defaultPageSize: 20 })
  t.throws(() => TooLong.querySchema(), { code: 'FV_ERR_PAGE_SIZE' })
  t.throws(() => composeFilters(ArticleFilter, BaseFilter.with({ paginator: new DataPages() })), { code: 'FV_ERR_FILTER_PAGINATION', message: /\(ArticlePages, DataPages\)/ })
  t.throws(() => composeFilters(PaginationFilter, BaseFilter.with({ paginator: new OffsetPages({ limit: 'take' }) })), { message: /\(NumberedPages, OffsetPages\)/ }, 'a built-in by its class')
  const composed = composeFilters(BaseFilter.with({ fields: { title: Type.String() } }), ArticleFilter)
  t.same(Object.keys(composed.querySchema().properties).sort(), ['limit', 'offset', 'sort', 'title'])
  t.equal(composed.pageSize(), 20, 'the pager\'s bounds come along')
  await t.rejects(build({ views: [{ view: articles(BaseFilter.with({ paginator: new FeedPages(), tieBreaker: 'uuid' }), new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/a' }] }),
    { code: 'FV_ERR_UNKNOWN_FIELD', message: /\.tieBreaker names "uuid"/ }, 'the fields a pagination reads by are the repository\'s')
})

test('the retired pagination kind is refused with its new spelling, never read as no pagination', async (t) => {
  // A class of its own: the type of `pagination` is gone, and a literal would page by nothing.
  class Legacy extends BaseFilter { static pagination = 'offset' }
  class Below extends Legacy { static override fields = { title: Type.String() } }
  const renamed = /^Legacy\.pagination is now paginator = new NumberedPages\(\) \(for 'page'\), new OffsetPages\(\) \('offset'\) or new CursorPages\(\) \('cursor'\), and the old name is no longer read/
  await t.rejects(build({ views: [{ view: articles(Legacy, new MemoryRepository<ArticleT>({ rows: ROWS })), prefix: '/legacy' }] }),
    { code: 'FV_ERR_RENAMED_STATIC', message: renamed }, 'at registration, naming the class that set it')
  t.throws(() => Below.querySchema(), { code: 'FV_ERR_RENAMED_STATIC', message: renamed }, 'set on a class above the user\'s own, too')
  t.throws(() => composeFilters(Legacy, PaginationFilter), { code: 'FV_ERR_RENAMED_STATIC' }, 'and when composed')
  // What a JavaScript caller (or a cast) can pass: the types refuse it, with the same sentence.
  const loose = BaseFilter.with as unknown as (statics: object) => unknown
  t.throws(() => loose.call(BaseFilter, { pagination: 'page' }), { code: 'FV_ERR_RENAMED_STATIC', message: /^BaseFilter\.with\(pagination\): "pagination" is now paginator = new NumberedPages\(\)/ }, 'and in .with()')
  const store = new MemoryRepository<ArticleT>({ rows: ROWS })
  class Unrelated extends GenericListAPIView.with({ responseSchema: Article, repository: store }) {
    static pagination = 'page'
  }
  const app = await build({ views: [{ view: Unrelated, prefix: '/unrelated' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/unrelated')).json().length, 30, 'a view, which has no paginator, may have a static of that name')

  // A filter that names nothing and does not page: the list takes no parameters, so it refuses no query.
  const { app: bare, doc } = await documented({ views: [{ view: articles(BaseFilter, store), prefix: '/bare' }] })
  t.teardown(() => bare.close())
  t.equal((await bare.inject('/bare?anything=1')).json().length, 30, 'the whole list, whatever the query')
  t.same(Object.keys(doc.paths['/bare'].get.responses), ['200'], 'and no 400 documented')
})

test('a getFilter that answers a filter of another class pages with that filter\'s bounds', async (t) => {
  const rows = new MemoryRepository<ArticleT>({ rows: ROWS })
  class Short extends PaginationFilter.with({ defaultPageSize: 1 }) {}
  class Switching extends (articles(PaginationFilter, rows) as typeof GenericListAPIView) {
    override getFilter (request: FastifyRequest) {
      const query = request.query as Record<string, unknown>
      return query.page === 2 ? new Short(query) : super.getFilter(request)
    }
  }
  // The route's query documents the view's own filter: its page size default (100) would be filled
  // into every request that leaves it out, and Short would read it as the client's.
  const app = await build({ views: [{ view: Switching, prefix: '/a', validation: { useDefaults: false } }] })
  t.teardown(() => app.close())
  t.same(ids((await app.inject('/a?page=2')).json().items), [2], 'Short pages by one')
  t.same(ids((await app.inject('/a?page=1')).json().items), range(1, 30), 'the view\'s own filter by 100')
})

test('a filter made by hand, from values no validator filled, pages by its defaults', (t) => {
  t.same(new OffsetLimitFilter({}).window, { kind: 'offset', offset: 0, limit: 100 })
  t.same(new CursorPaginationFilter({}).window, { kind: 'cursor', pageSize: 100 })
  t.same(new PaginationFilter({}).window, { kind: 'page', page: 1, pageSize: 100 })
  t.end()
})
