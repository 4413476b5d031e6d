import t0, { type Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import {
  AsyncGenericListAPIView, BaseFilter, CursorPaginationFilter, MemoryRepository, OffsetLimitFilter, asyncRepository,
  type AsyncBulkRepository, type AsyncRepository, type Criteria, type Repository
} from '../lib/generics.js'
import { AsyncGenericBulkDestroyAPIView } from '../lib/bulk.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { build, problem } from './helpers.js'
import { driver, openSqlite } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'

// Relation filters: "a related row exists" (tags through article_tags, favourites through
// favorites and users, a reader's feed through follows), on every store, answering alike.

const Article = Type.Object({ id: Type.Integer(), title: Type.String(), author_id: Type.Integer() }, { $id: 'Article' })
type ArticleT = Static<typeof Article>

const USERS = [[1, 'jake'], [2, 'ann'], [3, 'bob']] as const
const ARTICLES = [[1, 'a1', 1], [2, 'a2', 2], [3, 'a3', 3], [4, 'a4', 1], [5, 'a5', 2]] as const
// Article 1 has two tags and article 4 the same tag twice: each is still listed once.
const TAGS = [[1, 1, 'dragons'], [2, 1, 'training'], [3, 2, 'dragons'], [4, 3, 'cooking'], [5, 4, 'dragons'], [6, 4, 'dragons']] as const
const FAVORITES = [[1, 1, 2], [2, 1, 3], [3, 2, 2], [4, 3, 1]] as const // id, article_id, user_id
const FOLLOWS = [[1, 2, 1], [2, 2, 3], [3, 3, 1]] as const // id, follower_id, followee_id

const SCHEMA = [
  'CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT NOT NULL UNIQUE)',
  'CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL, author_id INTEGER NOT NULL)',
  'CREATE TABLE article_tags (id INTEGER PRIMARY KEY, article_id INTEGER NOT NULL, tag TEXT NOT NULL)',
  'CREATE INDEX article_tags_article ON article_tags (article_id, tag)',
  'CREATE TABLE favorites (id INTEGER PRIMARY KEY, article_id INTEGER NOT NULL, user_id INTEGER NOT NULL)',
  'CREATE INDEX favorites_article ON favorites (article_id)',
  'CREATE TABLE follows (id INTEGER PRIMARY KEY, follower_id INTEGER NOT NULL, followee_id INTEGER NOT NULL)',
  'CREATE INDEX follows_followee ON follows (followee_id, follower_id)'
]

const INSERTS: Array<[string, ReadonlyArray<readonly unknown[]>]> = [
  ['INSERT INTO users (id, username) VALUES (?, ?)', USERS],
  ['INSERT INTO articles (id, title, author_id) VALUES (?, ?, ?)', ARTICLES],
  ['INSERT INTO article_tags (id, article_id, tag) VALUES (?, ?, ?)', TAGS],
  ['INSERT INTO favorites (id, article_id, user_id) VALUES (?, ?, ?)', FAVORITES],
  ['INSERT INTO follows (id, follower_id, followee_id) VALUES (?, ?, ?)', FOLLOWS]
]

/** The articles table with its three relations: declared once, on the repository. */
const ARTICLE_TABLE = {
  table: 'articles',
  columns: ['id', 'title', 'author_id'],
  relations: {
    tags: { table: 'article_tags', on: { article_id: 'id' }, fields: ['tag'] },
    favoritedBy: { table: 'favorites', on: { article_id: 'id' }, fields: ['user_id'], join: { table: 'users', on: { id: 'user_id' }, fields: ['username'] } },
    followedBy: { table: 'follows', on: { followee_id: 'author_id' }, fields: ['follower_id'] }
  }
} satisfies SqlTableOptions<ArticleT>

function memoryArticles (): MemoryRepository<ArticleT> {
  const table = <R extends object>(names: string[], rows: ReadonlyArray<readonly unknown[]>): MemoryRepository<R> =>
    new MemoryRepository<R>({
      rows: rows.map((row) => Object.fromEntries(names.map((name, i) => [name, row[i]])) as R)
    })
  const users = table(['id', 'username'], USERS)
  return new MemoryRepository<ArticleT>({
    rows: ARTICLES.map(([id, title, author]) => ({ id, title, author_id: author })),
    relations: {
      tags: { repository: table(['id', 'article_id', 'tag'], TAGS), on: { article_id: 'id' }, fields: ['tag'] },
      favoritedBy: { repository: table(['id', 'article_id', 'user_id'], FAVORITES), on: { article_id: 'id' }, fields: ['user_id'], join: { repository: users, on: { id: 'user_id' }, fields: ['username'] } },
      followedBy: { repository: table(['id', 'follower_id', 'followee_id'], FOLLOWS), on: { followee_id: 'author_id' }, fields: ['follower_id'] }
    }
  })
}

const PARAMETERS = {
  fields: { tag: Type.String(), favorited: Type.String(), author: Type.Integer() },
  operators: { tag: ['in'], favorited: ['in'] },
  fieldOf: { tag: 'tags.tag', favorited: 'favoritedBy.username', author: 'author_id' }
} as const
const ArticleFilter = OffsetLimitFilter.with({ ...PARAMETERS, orderingFields: ['id', 'title'], defaultOrdering: ['id'], maxListLength: 100 })
const ArticleCursor = CursorPaginationFilter.with({ ...PARAMETERS, orderingFields: ['title'] })

type Store = AsyncRepository<ArticleT> & AsyncBulkRepository<ArticleT>

/** The reader a request names (a stand-in for authentication). */
const readerOf = (headers: Record<string, unknown>): number => Number(headers['x-reader'])

function views (repository: Store): Parameters<typeof build>[0]['views'] {
  const Articles = mix(AsyncGenericBulkDestroyAPIView, AsyncGenericListAPIView)
    .with({ responseSchema: Article, filter: ArticleFilter, repository })
  const Cursor = AsyncGenericListAPIView.with({ responseSchema: Article, filter: ArticleCursor, repository })
  // The reader's feed: articles by the authors the reader follows, scoped by the view, never by the client.
  const Feed = AsyncGenericListAPIView.with({ responseSchema: Article, filter: ArticleFilter, repository }, {
    getKwargs (): Criteria { return { 'followedBy.follower_id': readerOf(this.request.headers) } }
  })
  return [{ view: Articles, prefix: '/articles' }, { view: Cursor, prefix: '/cursor' }, { view: Feed, prefix: '/feed' }]
}

const ids = (body: { items: ArticleT[] }): number[] => body.items.map((a) => a.id)

async function relationCases (t: Test, repository: Store): Promise<void> {
  const app: FastifyInstance = await build({ views: views(repository) })
  t.teardown(() => app.close())
  const get = async (url: string, headers: Record<string, string> = {}): Promise<any> => {
    const res = await app.inject({ url, headers })
    t.equal(res.statusCode, 200, url)
    return res.json()
  }
  const cases: Array<[string, number[]]> = [
    ['tag=dragons', [1, 2, 4]],
    ['tag__in=dragons&tag__in=cooking', [1, 2, 3, 4]],
    ['tag=training', [1]],
    ['tag=nothing', []],
    ['favorited=ann', [1, 2]],
    ['favorited__in=jake&favorited__in=bob', [1, 3]],
    ['tag=dragons&favorited=ann', [1, 2]],
    ['tag=dragons&author=1', [1, 4]],
    ['favorited=nobody', []]
  ]
  for (const [query, expected] of cases) {
    const page = await get(`/articles?${query}`)
    t.same(ids(page), expected, `${query}: each matching article once`)
    t.equal(page.total_items, expected.length, `${query}: counted once each`)
  }
  const window = await get('/articles?tag=dragons&sort=-id&offset=1&limit=1')
  t.same([ids(window), window.total_items, window.has_more], [[2], 3, true], 'a window of the matching rows, sorted')
  // Cursor pages over a relation filter: every matching row once, in order.
  const seen: number[] = []
  for (let url: string | null = '/cursor?tag=dragons&page_size=1&sort=-title'; url !== null;) {
    const page: { items: ArticleT[], next_page: string | null } = await get(url)
    seen.push(...page.items.map((a) => a.id))
    url = page.next_page === null ? null : `/cursor?tag=dragons&page_size=1&sort=-title&cursor=${page.next_page}`
    if (seen.length > 5) break
  }
  t.same(seen, [4, 2, 1], 'cursor pages: each matching row once')
  // A cursor made under one relation filter replayed under another seeks; never a 5xx.
  const first = await get('/cursor?tag=dragons&page_size=1&sort=-title')
  const across = await app.inject(`/cursor?favorited=ann&page_size=1&sort=-title&cursor=${first.next_page as string}`)
  t.equal(across.statusCode, 200, 'a cursor across relation filters seeks in the other list')
  t.same(ids(await get('/feed', { 'x-reader': '2' })), [1, 3, 4], 'the feed of reader 2: articles by authors 1 and 3')
  t.same(ids(await get('/feed?tag=dragons', { 'x-reader': '2' })), [1, 4], 'a feed filtered further')
  t.same(ids(await get('/feed', { 'x-reader': '1' })), [], 'a reader following no one has an empty feed')
  // Hostile values: bound, never SQL; a list past its bound is a 400 naming the parameter.
  for (const value of ["' OR 1=1 --", 'dragons%', '%', '\\', 'x"); DROP TABLE article_tags; --']) {
    t.same(ids(await get(`/articles?tag=${encodeURIComponent(value)}`)), [], `tag=${JSON.stringify(value)} matches literally`)
  }
  // PostgreSQL's text holds no NUL: a 400 there (as for any field), no match elsewhere; never a 5xx.
  const nul = await app.inject('/articles?tag=%00')
  if (nul.statusCode === 400) t.match(problem(t, nul, 400).detail, /does not fit/)
  else t.same(ids(nul.json()), [], 'a NUL matches nothing')
  const tooMany = Array.from({ length: 101 }, (_, i) => `tag__in=t${i}`).join('&')
  t.match(problem(t, await app.inject(`/articles?${tooMany}`), 400).errors, [{ parameter: 'tag__in' }])
  const most = Array.from({ length: 100 }, (_, i) => `tag__in=${i === 99 ? 'cooking' : `t${i}`}`).join('&')
  t.same(ids(await get(`/articles?${most}`)), [3], 'the longest list allowed')
  problem(t, await app.inject('/articles?author=abc'), 400)
  t.same(ids(await get('/articles?tags.tag=dragons&favoritedBy.username=ann')), [1, 2, 3, 4, 5], 'a relation path is no parameter: ignored like any undeclared one')
  // Bulk selections take the filter's criteria: the relation selects the rows written.
  t.equal((await app.inject({ method: 'DELETE', url: '/articles/bulk?tag=cooking' })).statusCode, 204)
  t.same(ids(await get('/articles')), [1, 2, 4, 5], 'a bulk delete over a relation filter deletes only its rows')
}

async function repositoryCases (t: Test, repository: Repository<ArticleT> | AsyncRepository<ArticleT>): Promise<void> {
  t.equal(await repository.count({ 'tags.tag': 'dragons' }), 3)
  t.same((await repository.list({ 'favoritedBy.user_id__in': [2, 3] }, { orderBy: [] })).map((a) => a.id), [1, 2])
  t.same((await repository.list({ 'tags.tag__ne': 'dragons' }, { orderBy: [] })).map((a) => a.id), [1, 3], 'ne: some related row differs (article 1 has training)')
  t.same((await repository.get({ id: 2, 'tags.tag': 'dragons' }))?.title, 'a2', 'a detail read with a relation criterion')
  t.equal(await repository.get({ id: 3, 'tags.tag': 'dragons' }), null)
  const refused = async (criteria: Criteria, message: RegExp): Promise<void> => {
    await t.rejects(async () => { await repository.list(criteria, { orderBy: [] }) }, { code: 'FV_ERR_RELATION', message })
  }
  await refused({ 'tagz.tag': 'x' }, /no relation "tagz" \(criterion "tagz.tag"\); its relations: tags, favoritedBy, followedBy/)
  await refused({ 'tags.colour': 'x' }, /relations.tags has no field "colour" a criterion may compare \(tag\)/)
  await refused({ 'favoritedBy.colour': 'x' }, /relations.favoritedBy has no field "colour" a criterion may compare \(user_id, username\)/)
  await refused({ 'tags.tag; DROP TABLE articles': 'x' }, /has no field/)
  t.same([...(repository as unknown as { relationFields: string[] }).relationFields],
    ['tags.tag', 'favoritedBy.user_id', 'favoritedBy.username', 'followedBy.follower_id'])
}

function sqliteDatabase (t: Test): ReturnType<typeof openSqlite> {
  const db = openSqlite()
  t.teardown(() => { db.close() })
  for (const statement of SCHEMA) db.exec(statement)
  for (const [insert, rows] of INSERTS) for (const row of rows) db.prepare(insert).run(...row)
  return db
}

t0.test('memory', async (t) => {
  await repositoryCases(t, memoryArticles())
  await relationCases(t, asyncRepository<ArticleT, MemoryRepository<ArticleT>>(memoryArticles()))
})

t0.test('SQLite', async (t) => {
  await repositoryCases(t, new SqliteRepository<ArticleT>(sqliteDatabase(t), ARTICLE_TABLE))
  await relationCases(t, new AsyncSqliteRepository<ArticleT>(sqliteDatabase(t), ARTICLE_TABLE))
  const db = sqliteDatabase(t)
  const repository = new SqliteRepository<ArticleT>(db, ARTICLE_TABLE)
  const { sql, params } = repository.builder.select({ 'tags.tag': 'dragons', 'favoritedBy.username__in': ['ann'] }, { orderBy: [] })
  t.equal(sql, 'SELECT "id", "title", "author_id" FROM "articles" WHERE EXISTS (SELECT 1 FROM "article_tags" AS "fv_related" WHERE ' +
    '"fv_related"."article_id" = "articles"."id" AND "fv_related"."tag" = ?) AND EXISTS (SELECT 1 FROM "favorites" AS "fv_related" ' +
    'JOIN "users" AS "fv_joined" ON "fv_joined"."id" = "fv_related"."user_id" WHERE "fv_related"."article_id" = "articles"."id" AND ' +
    '"fv_joined"."username" IN (?)) ORDER BY "id" ASC NULLS LAST', 'one EXISTS per relation criterion, the values bound')
  t.same(params, ['dragons', 'ann'])
  const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...params) as Array<{ detail: string }>).map((row) => row.detail).join('\n')
  t.match(plan, /SEARCH fv_related (EXISTS )?USING (COVERING )?INDEX article_tags_article \(article_id=\? AND tag=\?\)/, 'the join table\'s index is used')
})

t0.test('PostgreSQL', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // An idle client the server drops at its stop (57P01) is an error of the pool's, not of the test.
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  for (const statement of SCHEMA) await pool.query(statement)
  for (const [insert, rows] of INSERTS) {
    let n = 0
    for (const row of rows) await pool.query(insert.replace(/\?/g, () => `$${++n}`), [...row]).finally(() => { n = 0 })
  }
  const repository = new PostgresRepository<ArticleT>(pool, ARTICLE_TABLE)
  await repositoryCases(t, repository)
  await relationCases(t, repository)
  const { sql, params } = repository.builder.select({ 'tags.tag': 'dragons' }, { orderBy: [] })
  await pool.query('SET enable_seqscan = off')
  const plan = (await pool.query(`EXPLAIN ${repository.builder.dialect.placeholders(sql)}`, params)).rows.map((row: { 'QUERY PLAN': string }) => row['QUERY PLAN']).join('\n')
  t.match(plan, /(Bitmap Index|Index Only|Index) Scan (on|using) article_tags_article/, 'the join table\'s index is used')
})

t0.test('a filter naming a relation the repository does not have, or sorting by one, is refused at registration', async (t) => {
  const repository = asyncRepository<ArticleT, MemoryRepository<ArticleT>>(memoryArticles())
  const register = (filter: typeof BaseFilter) => build({ views: [{ view: AsyncGenericListAPIView.with({ responseSchema: Article, filter, repository }), prefix: '/a' }] })
  const misnamed: typeof BaseFilter = BaseFilter.with({ fields: { tag: Type.String() }, fieldOf: { tag: 'tagz.tag' } })
  await t.rejects(register(misnamed), { code: 'FV_ERR_RELATION', message: /fields names "tagz.tag", which is not a field of its repository's relations \(tags.tag, favoritedBy.user_id/ })
  const sorted: typeof BaseFilter = BaseFilter.with({ orderingFields: ['tags.tag'] })
  await t.rejects(register(sorted), { code: 'FV_ERR_RELATION', message: /orderingFields names "tags.tag", a field of related rows/ })
  const searched: typeof BaseFilter = BaseFilter.with({ searchFields: ['tags.tag'] })
  await t.rejects(register(searched), { code: 'FV_ERR_RELATION', message: /searchFields names "tags.tag"/ })
  const none = asyncRepository<ArticleT, MemoryRepository<ArticleT>>(new MemoryRepository<ArticleT>({ rows: [] }))
  await t.rejects(build({ views: [{ view: AsyncGenericListAPIView.with({ responseSchema: Article, filter: misnamed, repository: none }), prefix: '/a' }] }),
    { code: 'FV_ERR_RELATION', message: /\(it declares none\)/ })
})

t0.test('relations are checked when the repository is made', async (t) => {
  const db = openSqlite()
  t.teardown(() => { db.close() })
  db.exec('CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT, author_id INTEGER)')
  const made = (relations: unknown) => () => new SqliteRepository(db, { table: 'articles', columns: ['id', 'title', 'author_id'], relations: relations as never })
  const refused: Array<[unknown, RegExp]> = [
    [{ tags: { table: 'article tags', on: { article_id: 'id' }, fields: ['tag'] } }, /relations.tags: not a plain SQL identifier: "article tags"/],
    [{ tags: { table: 'article_tags', on: { article_id: 'uid' }, fields: ['tag'] } }, /on points at "uid", which is not a field of "articles" \(id, title, author_id\)/],
    [{ tags: { table: 'article_tags', on: {}, fields: ['tag'] } }, /"on" names no column of article_tags/],
    [{ tags: { table: 'article_tags', on: { article_id: 'id' } } }, /name the columns a criterion may compare/],
    [{ tags: { table: 'article_tags', on: { article_id: 'id' }, fields: ['tag"; --'] } }, /not a plain SQL identifier/],
    [{ fav: { table: 'favorites', on: { article_id: 'id' }, fields: ['id'], join: { table: 'users', on: { id: 'user_id' }, fields: ['id'] } } }, /"id" is a field of favorites and of users/]
  ]
  refused.push([{ fav: { table: 'favorites', on: { article_id: 'id' }, join: { table: 'users x', on: { id: 'user_id' }, fields: ['name'] } } }, /not a plain SQL identifier: "users x"/])
  for (const [relations, message] of refused) t.throws(made(relations), { code: 'FV_ERR_RELATION', message }, String(message))
  await t.rejects(async () => made({})().list({ 'tags.tag': 'x' }), { code: 'FV_ERR_RELATION', message: /its relations: none$/ })
  // A join on two columns: both compared, joined by AND.
  const pair = made({ ed: { table: 'editions', on: { article_id: 'id' }, join: { table: 'printings', on: { article_id: 'article_id', edition: 'edition' }, fields: ['year'] } } })()
  t.match(pair.builder.select({ 'ed.year': 1999 }, { orderBy: [] }).sql,
    'JOIN "printings" AS "fv_joined" ON "fv_joined"."article_id" = "fv_related"."article_id" AND "fv_joined"."edition" = "fv_related"."edition" WHERE')
  t.throws(() => new MemoryRepository({ relations: { x: { repository: new MemoryRepository(), on: {}, fields: ['a'] } } }), { code: 'FV_ERR_RELATION', message: /"on" names no field/ })
  t.throws(() => new MemoryRepository({ relations: { x: { repository: new MemoryRepository(), on: { a: 'id' }, fields: ['a'], join: { repository: new MemoryRepository(), on: { id: 'a' }, fields: ['a'] } } } }),
    { code: 'FV_ERR_RELATION', message: /"a" is a field of the related rows and of the joined ones/ })
})

t0.test('memory: related rows with a null key match nothing, as NULL = NULL is not true in SQL', async (t) => {
  const users = new MemoryRepository({ rows: [{ id: 1, username: 'ann' }, { id: 2, username: null }] })
  const favorites = new MemoryRepository({
    rows: [
      { id: 1, article_id: 1, user_id: 1 },
      { id: 2, article_id: null, user_id: 1 },
      { id: 3, article_id: 2, user_id: null }
    ]
  })
  const articles = new MemoryRepository({
    rows: [{ id: 1 }, { id: 2 }, { id: 3 }],
    // Only the joined rows' fields are compared: a relation may name none of its own.
    relations: { favoritedBy: { repository: favorites, on: { article_id: 'id' }, join: { repository: users, on: { id: 'user_id' }, fields: ['username'] } } }
  })
  t.same(articles.list({ 'favoritedBy.username': 'ann' }).map((a) => a.id), [1])
  t.same(articles.list({ 'favoritedBy.username__is_null': true }).map((a) => a.id), [], 'a favourite without a user joins no user')
  t.same(articles.relationFields, ['favoritedBy.username'])
  t.throws(() => new MemoryRepository({ rows: [{ id: 1 }] }).list({ 'tags.tag': 'x' }), { code: 'FV_ERR_RELATION', message: /no relation "tags" \(criterion "tags.tag"\); its relations: none/ })
})
