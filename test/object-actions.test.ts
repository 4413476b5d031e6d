import { test, type Test } from 'tap'
import Fastify, { type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { Action, Post, mix } from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import {
  AsyncGenericReadOnlyViewSet, GenericListAPIView, GenericReadOnlyViewSet, GenericViewSet, MemoryRepository,
  asyncRepository
} from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { Conflict, Forbidden } from '../lib/errors.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { build, problem } from './helpers.js'
import { openSqlite } from './sqlite-driver.js'

// Actions on one object (docs/generics.md, "Actions on one object"): a route of a generic view's
// own reads the object its path names with getObjectOr404 (parent, scope, object permission, 404)
// and answers in the view's envelope (`envelope: true`); the write seams are typed and receive the
// row a request read before its write.

const Article = Type.Object({
  id: Type.Integer(),
  slug: Type.String(),
  title: Type.String(),
  favorites_count: Type.Integer()
}, { $id: 'Article' })
type ArticleT = Static<typeof Article>
/** A stored article: its author is not in the answer. */
type ArticleRow = ArticleT & { author: string }
/** A row of the link table: who favourited which article, one row per pair (`key`). */
interface Favorite { key: string, article_id: number, user: string }
const SlugParams = Type.Object({ slug: Type.String() })

const ROWS: readonly ArticleRow[] = [
  { id: 1, slug: 'intro', title: 'Introduction', favorites_count: 0, author: 'ann' },
  { id: 2, slug: 'sequel', title: 'Sequel', favorites_count: 0, author: 'bob' }
]

interface Stores {
  articles: MemoryRepository<ArticleRow> | SqliteRepository<ArticleRow>
  favorites: MemoryRepository<Favorite> | SqliteRepository<Favorite>
}

const memoryStores = (): Stores => ({
  articles: new MemoryRepository<ArticleRow>({ rows: [...ROWS], unique: ['slug'] }),
  favorites: new MemoryRepository<Favorite>({ idField: 'key' })
})

function sqliteDatabase (t: Test): ReturnType<typeof openSqlite> {
  const db = openSqlite()
  t.teardown(() => { db.close() })
  db.exec('CREATE TABLE articles (id INTEGER PRIMARY KEY, slug TEXT NOT NULL UNIQUE, title TEXT NOT NULL, ' +
    'favorites_count INTEGER NOT NULL DEFAULT 0, author TEXT NOT NULL)')
  db.exec('CREATE TABLE favorites (key TEXT PRIMARY KEY, article_id INTEGER NOT NULL REFERENCES articles (id), user TEXT NOT NULL)')
  return db
}

function sqliteStores (t: Test): { articles: SqliteRepository<ArticleRow>, favorites: SqliteRepository<Favorite> } {
  const db = sqliteDatabase(t)
  const articles = new SqliteRepository<ArticleRow>(db, { table: 'articles', columns: ['id', 'slug', 'title', 'favorites_count', 'author'] })
  for (const row of ROWS) articles.create(row)
  return { articles, favorites: new SqliteRepository<Favorite>(db, { table: 'favorites', columns: ['key', 'article_id', 'user'], idColumn: 'key' }) }
}

/** Who asks: a dependency would have read it from a token. */
const userOf = (request: FastifyRequest): string => String(request.headers['x-user'])

/** Favourites as relation writes: a row of the link table made or deleted, and the article's count kept with it. */
const Articles = ({ articles, favorites }: Stores) => GenericReadOnlyViewSet.with({
  responseSchema: Article,
  detailParams: SlugParams,
  detailRoute: '/:slug',
  envelope: 'article',
  errorMessage: 'No {} has this slug.',
  repository: articles
}, {}, (route) => ({
  favorite: route.post('/:slug/favorite', { envelope: true, statusCode: 200 }, function (request) {
    const article = this.getObjectOr404()
    const user = userOf(request)
    favorites.create({ key: `${article.id}:${user}`, article_id: article.id, user }) // null: a favourite already
    return this.repository.update({ id: article.id }, { favorites_count: favorites.count({ article_id: article.id }) }) // the row as written
  }),
  unfavorite: route.delete('/:slug/favorite', { envelope: true, statusCode: 200 }, function (request) {
    const article = this.getObjectOr404()
    favorites.delete({ article_id: article.id, user: userOf(request) })
    return this.repository.update({ id: article.id }, { favorites_count: favorites.count({ article_id: article.id }) })
  })
}))

for (const [store, open] of [['memory', memoryStores], ['SQLite', sqliteStores]] as const) {
  test(`relation writes on one object: the object the path names, its 404, the answer in the view's envelope (${store})`, async (t) => {
    const stores = open(t)
    const app = await build({ views: [{ view: Articles(stores), prefix: '/articles' }] })
    t.teardown(() => app.close())
    const ann = { 'x-user': 'ann' }
    const first = await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: ann })
    t.equal(first.statusCode, 200)
    t.same(first.json(), { article: { id: 1, slug: 'intro', title: 'Introduction', favorites_count: 1 } }, 'in the envelope, without the stored author')
    t.same((await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: ann })).json().article.favorites_count, 1, 'a favourite made twice is one')
    t.same((await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: { 'x-user': 'bob' } })).json().article.favorites_count, 2)
    t.same(stores.favorites.list({ article_id: 1 }, { orderBy: [{ field: 'user', descending: false }] }).map((f) => f.user), ['ann', 'bob'])
    const undone = await app.inject({ method: 'DELETE', url: '/articles/intro/favorite', headers: ann })
    t.same([undone.statusCode, undone.json()], [200, { article: { id: 1, slug: 'intro', title: 'Introduction', favorites_count: 1 } }])
    t.same(stores.favorites.list({ article_id: 1 }).map((f) => f.user), ['bob'], 'the link row is gone')
    const missing = problem(t, await app.inject({ method: 'POST', url: '/articles/nope/favorite', headers: ann }), 404)
    t.equal(missing.detail, 'No Article has this slug.', 'worded as retrieve words it (errorMessage)')
    t.equal(problem(t, await app.inject({ method: 'DELETE', url: '/articles/nope/favorite', headers: ann }), 404).detail, 'No Article has this slug.')
    t.same(stores.favorites.list({}).length, 1, 'nothing written for an article that is not there')
    t.same((await app.inject('/articles/sequel')).json(), { article: { id: 2, slug: 'sequel', title: 'Sequel', favorites_count: 0 } }, 'retrieve as before')
  })
}

test('the same as routes of the class body, and on the async family', async (t) => {
  const stores = memoryStores()
  const { favorites } = stores
  class Decorated extends GenericReadOnlyViewSet.with({
    responseSchema: Article,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    envelope: 'article',
    repository: stores.articles
  }) {
    @Post('/:slug/favorite', { schema: { params: SlugParams }, envelope: true, statusCode: 200 })
    favorite (request: ViewRequest<{ params: typeof SlugParams }>) {
      const article = this.getObjectOr404()
      favorites.create({ key: `${article.id}:${userOf(request)}`, article_id: article.id, user: userOf(request) })
      const count = favorites.count({ article_id: article.id })
      return this.repository.update({ id: article.id }, { favorites_count: count })
    }

    // The detail route's own parameters, and the action named explicitly.
    @Action('peek', { detail: true, envelope: true })
    peek () {
      return this.getObjectOr404('retrieve')
    }
  }
  const app = await build({ views: [{ view: Decorated, prefix: '/articles' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: { 'x-user': 'ann' } })).json(), { article: { id: 1, slug: 'intro', title: 'Introduction', favorites_count: 1 } })
  t.same((await app.inject('/articles/sequel/peek')).json(), { article: { id: 2, slug: 'sequel', title: 'Sequel', favorites_count: 0 } })
  t.equal(problem(t, await app.inject('/articles/nope/peek'), 404).detail, 'Article does not exist')

  const store = new MemoryRepository<ArticleRow>({ rows: [...ROWS] })
  const Async = AsyncGenericReadOnlyViewSet.with({
    responseSchema: Article,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    envelope: 'article',
    repository: asyncRepository<ArticleRow, MemoryRepository<ArticleRow>>(store)
  }, {}, (route) => ({
    rename: route.put('/:slug/title', { schema: { body: Type.Object({ title: Type.String() }) }, envelope: true }, async function (request) {
      const article = await this.getObjectOr404()
      return await this.repository.update({ id: article.id }, { title: request.body.title })
    }),
    // A route that sends nothing may name the envelope too: there is nothing to wrap.
    forget: route.delete('/:slug/favorites', { envelope: true }, async function () {
      const article = await this.getObjectOr404()
      favorites.delete({ article_id: article.id })
    })
  }))
  const other = await build({ views: [{ view: Async, prefix: '/articles' }] })
  t.teardown(() => other.close())
  const renamed = await other.inject({ method: 'PUT', url: '/articles/intro/title', payload: { title: 'Preface' } })
  t.same([renamed.statusCode, renamed.json()], [200, { article: { id: 1, slug: 'intro', title: 'Preface', favorites_count: 0 } }],
    'the body as its schema says, the answer in the envelope')
  t.equal(problem(t, await other.inject({ method: 'PUT', url: '/articles/nope/title', payload: { title: 'x' } }), 404).detail, 'Article does not exist')
  const forgot = await other.inject({ method: 'DELETE', url: '/articles/intro/favorites' })
  t.same([forgot.statusCode, forgot.body, favorites.list({}).length], [204, '', 0])
})

test('getObjectOr404 reads as getObject does: the parent first, the scope, the object permission', async (t) => {
  const stores = memoryStores()
  const Comment = Type.Object({ id: Type.Integer(), article_id: Type.Integer(), body: Type.String(), likes: Type.Integer() }, { $id: 'Comment' })
  const comments = new MemoryRepository<Static<typeof Comment>>({
    rows: [{ id: 1, article_id: 1, body: 'First!', likes: 0 }, { id: 2, article_id: 2, body: 'Second.', likes: 0 }]
  })
  const Comments = GenericReadOnlyViewSet.with({
    responseSchema: Comment,
    detailParams: Type.Object({ id: Type.Integer() }),
    prefixParams: SlugParams,
    parent: { repository: stores.articles, lookup: { slug: 'slug' }, scope: { article_id: 'id' }, name: 'Article' },
    repository: comments
  }, {}, (route) => ({
    like: route.post('/:id/like', { schema: { params: Type.Object({ id: Type.Integer() }) }, statusCode: 200 }, function () {
      const comment = this.getObjectOr404()
      return this.repository.update({ id: comment.id }, { likes: comment.likes + 1 })
    })
  }))
  const judged: string[] = []
  // Drafts: a user's own articles only; publishing one is its author's (an object permission on the stored author).
  const Drafts = GenericReadOnlyViewSet.with({
    responseSchema: Article,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    repository: stores.articles
  }, {
    getKwargs () { return { author__in: ['ann', 'bob'] } },
    checkObjectPermissions (article, action) {
      judged.push(`${action} ${article.slug}`)
      if (article.author !== userOf(this.request)) throw new Forbidden('Only its author may do that.')
    }
  }, (route) => ({
    publish: route.post('/:slug/publish', { statusCode: 200 }, function () { return this.getObjectOr404() }),
    peek: route.get('/:slug/peek', { responseSchema: Type.Object({ found: Type.Boolean() }) }, function () { return { found: this.getObject() !== null } })
  }))
  const Scoped = Drafts.with({ objectPermissionActions: ['retrieve'] }, {
    getKwargs () { return { author: userOf(this.request) } }
  })
  const app = await build({
    views: [
      { view: Comments, prefix: '/articles/:slug/comments' },
      { view: Drafts, prefix: '/drafts' },
      { view: Scoped, prefix: '/mine' }
    ]
  })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/articles/intro/comments/1/like' })).json(), { id: 1, article_id: 1, body: 'First!', likes: 1 })
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/articles/nope/comments/1/like' }), 404).detail, 'Article does not exist', 'the parent, read first')
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/articles/intro/comments/2/like' }), 404).detail, 'Comment does not exist',
    'another article\'s comment is not there')
  t.equal(comments.get({ id: 2 })?.likes, 0)

  // Unset objectPermissionActions: every action on one object is judged, a route of the view's own included.
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/drafts/intro/publish', headers: { 'x-user': 'bob' } }), 403).detail, 'Only its author may do that.')
  t.equal((await app.inject({ method: 'POST', url: '/drafts/intro/publish', headers: { 'x-user': 'ann' } })).statusCode, 200)
  problem(t, await app.inject({ method: 'GET', url: '/drafts/intro/peek', headers: { 'x-user': 'bob' } }), 403)
  t.same(judged, ['publish intro', 'publish intro', 'peek intro'], 'judged under the route\'s action')
  t.same((await app.inject({ method: 'GET', url: '/drafts/nope/peek' })).json(), { found: false }, 'getObject still answers null')

  // Listed: only retrieve is judged; the scope (the caller's own) makes another's article a 404.
  judged.length = 0
  t.equal((await app.inject({ method: 'POST', url: '/mine/intro/publish', headers: { 'x-user': 'ann' } })).statusCode, 200)
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/mine/sequel/publish', headers: { 'x-user': 'ann' } }), 404).detail, 'Article does not exist')
  t.same(judged, [], 'a route the list does not name is not judged')
})

test('a view without detail actions answers the default 404 of its component', async (t) => {
  const { articles } = memoryStores()
  const Listed = GenericListAPIView.with({ responseSchema: Article, repository: articles }, {}, (route) => ({
    show: route.get('/:slug/show', {}, function () { return this.getObjectOr404() })
  }))
  const app = await build({ views: [{ view: Listed, prefix: '/articles' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/articles/intro/show')).json().title, 'Introduction')
  t.equal(problem(t, await app.inject('/articles/nope/show'), 404).detail, 'Article does not exist')
})

test('a route asking for an envelope its view does not have is refused', async (t) => {
  class Bare extends GenericReadOnlyViewSet.with({
    responseSchema: Article,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    repository: memoryStores().articles
  }) {
    @Post('/:slug/favorite', { envelope: true, statusCode: 200 })
    favorite () { return this.getObjectOr404() }
  }
  await t.rejects(build({ views: [{ view: Bare, prefix: '/articles' }] }), {
    code: 'FV_ERR_ENVELOPE',
    message: 'Cannot register Bare: Bare.favorite asks for envelope: true, but the view has no envelope to send its answer in. ' +
      'Name it on the view (envelope: \'article\'), or leave envelope out of the route\'s options'
  })
})

async function documentOf (entries: Parameters<typeof build>[0]['views']): Promise<Record<string, any>> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Articles', version: '1.0.0' } }))
  await app.register(views, { views: entries })
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  await app.close()
  return doc
}

test('what a route on one object documents: its answer in the envelope, 404, and 403 where its action is judged', async (t) => {
  const stores = memoryStores()
  const Judging = Articles(stores).with({}, {
    checkObjectPermissions (article) { if (article.author === 'nobody') throw new Forbidden() }
  }, (route) => ({
    feed: route.get('/feed', { responseSchema: Type.Array(Article) }, function () { return this.repository.list({}) })
  }))
  const Comments = GenericReadOnlyViewSet.with({
    responseSchema: Type.Object({ id: Type.Integer(), article_id: Type.Integer() }, { $id: 'Comment' }),
    detailParams: Type.Object({ id: Type.Integer() }),
    prefixParams: SlugParams,
    parent: { repository: stores.articles, lookup: { slug: 'slug' }, scope: { article_id: 'id' }, name: 'Article' },
    repository: new MemoryRepository<{ id: number, article_id: number }>()
  }, {}, (route) => ({
    count: route.get('/count', { responseSchema: Type.Integer() }, function () { return this.repository.count(this.getScopeKwargs()) })
  }))
  const doc = await documentOf([
    { view: Articles(stores), prefix: '/articles' },
    { view: Judging, prefix: '/judging' },
    { view: Judging.with({ objectPermissionActions: ['retrieve'] }), prefix: '/listed' },
    { view: Comments, prefix: '/articles/:slug/comments' }
  ])
  const favorite = doc.paths['/articles/{slug}/favorite'].post.responses
  t.same(favorite['200'].content['application/json'].schema.required, ['article'])
  t.same(favorite['200'].content['application/json'].schema.properties.article, { $ref: '#/components/schemas/Article' }, 'the answer in the envelope, the component its own')
  t.ok(favorite['404'], 'the object may not be there')
  t.notOk(favorite['403'], 'a view that judges nothing refuses nothing')
  t.ok(doc.paths['/articles/{slug}/favorite'].delete.responses['404'])
  t.ok(doc.paths['/judging/{slug}/favorite'].post.responses['403'], 'judged: every action on one object, unless the view names some')
  const feed = doc.paths['/judging/feed'].get.responses
  t.same([feed['404'], feed['403']], [undefined, undefined], 'a route on no object documents neither')
  t.notOk(doc.paths['/listed/{slug}/favorite'].post.responses['403'], 'objectPermissionActions leaves it out')
  t.ok(doc.paths['/listed/{slug}'].get.responses['403'])
  const count = doc.paths['/articles/{slug}/comments/count'].get.responses
  t.same([Boolean(count['404']), Boolean(count['403'])], [true, false], 'a nested view\'s route: the parent\'s 404')
})

test('a route in the envelope sends what retrieve sends: the same ETag, Last-Modified and 304', async (t) => {
  const Stamped = Type.Object({
    id: Type.Integer(), slug: Type.String(), version: Type.Integer(), updated_at: Type.String({ format: 'date-time' })
  }, { $id: 'Stamped' })
  type StampedT = Static<typeof Stamped>
  const rows = (): StampedT[] => [{ id: 1, slug: 'intro', version: 3, updated_at: '2026-01-02T03:04:05.000Z' }]
  const hashed = mix(ConditionalMixin, GenericReadOnlyViewSet).with({
    responseSchema: Stamped,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    envelope: 'article',
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository: new MemoryRepository<StampedT>({ rows: rows() })
  }, {}, (route) => ({
    preview: route.get('/:slug/preview', { envelope: true }, function () { return this.getObjectOr404() })
  }))
  const versioned = hashed.with({
    conditional: { etag: true, versionField: 'version' },
    repository: new MemoryRepository<StampedT>({ rows: rows(), versionField: 'version' })
  })
  const app = await build({ views: [{ view: hashed, prefix: '/hashed' }, { view: versioned, prefix: '/versioned' }] })
  t.teardown(() => app.close())
  for (const prefix of ['/hashed', '/versioned']) {
    const retrieved = await app.inject(`${prefix}/intro`)
    const previewed = await app.inject(`${prefix}/intro/preview`)
    t.same(previewed.json(), retrieved.json(), `${prefix}: the same representation`)
    t.equal(previewed.headers.etag, retrieved.headers.etag, `${prefix}: the same ETag`)
    t.equal(previewed.headers['last-modified'], retrieved.headers['last-modified'])
    const fresh = await app.inject({ url: `${prefix}/intro/preview`, headers: { 'if-none-match': String(retrieved.headers.etag) } })
    t.equal(fresh.statusCode, 304, `${prefix}: a copy that is current`)
  }
  t.equal((await app.inject('/hashed/intro/preview')).headers['last-modified'], 'Fri, 02 Jan 2026 03:04:05 GMT', 'read inside the envelope')
  t.match((await app.inject('/versioned/intro/preview')).headers.etag, /\.3"$/, 'the stored version names it')
})

test('the write seams receive the row the request read before the write, and none when it read none', async (t) => {
  const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() }, { $id: 'Item' })
  type ItemT = Static<typeof Item>
  const IdParams = Type.Object({ id: Type.Integer() })
  const repository = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', price: 3 }, { id: 2, name: 'desk', price: 9 }] })
  const seen: Array<[string, unknown]> = []
  const Items = mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Item,
    createSchema: Type.Object({ name: Type.String(), price: Type.Number() }),
    detailParams: IdParams,
    conditional: { etag: true },
    repository
  }, {
    performUpdate (criteria, values, options, current) {
      seen.push([`update ${JSON.stringify(values)}`, current])
      return this.repository.update(criteria, values, options)
    },
    performDestroy (criteria, options, current) {
      seen.push(['destroy', current])
      return this.repository.delete(criteria, options)
    }
  }, (route) => ({
    // A handler may read the validators itself: no precondition check made the view first.
    validators: route.get('/:id/validators', { schema: { params: IdParams }, responseSchema: Type.Object({ read: Type.Boolean() }) }, async function (request) {
      return { read: await this.getValidators(request) !== null }
    })
  }))
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const etag = async (): Promise<string> => String((await app.inject('/items/1')).headers.etag)
  const merge = { 'content-type': 'application/merge-patch+json' }

  t.equal((await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'lamp', price: 4 } })).statusCode, 200)
  t.same(seen.pop(), ['update {"name":"lamp","price":4}', undefined], 'a plain PUT reads nothing first')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', payload: { price: 5 } })).statusCode, 200)
  t.same(seen.pop(), ['update {"price":5}', undefined], 'nor does a plain PATCH')
  t.equal((await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': await etag() }, payload: { name: 'lamp', price: 6 } })).statusCode, 200)
  t.same(seen.pop(), ['update {"name":"lamp","price":6}', { id: 1, name: 'lamp', price: 5 }], 'If-Match: the row the precondition was checked on')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: merge, payload: { price: 7 } })).statusCode, 200)
  t.same(seen.pop(), ['update {"price":7}', { id: 1, name: 'lamp', price: 6 }], 'a merge patch: the row it was applied to')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: { ...merge, 'if-match': await etag() }, payload: { price: 8 } })).statusCode, 200)
  t.same(seen.pop(), ['update {"price":8}', { id: 1, name: 'lamp', price: 7 }], 'both: the row the patch was applied to')
  t.equal((await app.inject({ method: 'DELETE', url: '/items/1', headers: { 'if-match': await etag() } })).statusCode, 204)
  t.same(seen.pop(), ['destroy', { id: 1, name: 'lamp', price: 8 }])
  t.equal((await app.inject({ method: 'DELETE', url: '/items/2' })).statusCode, 204)
  t.same(seen.pop(), ['destroy', undefined])
  t.same(seen, [])
  t.same([(await app.inject('/items/2/validators')).json(), (await app.inject('/items/1/validators')).json()], [{ read: false }, { read: false }], 'both deleted')
  repository.create({ id: 3, name: 'chair', price: 2 })
  t.same((await app.inject('/items/3/validators')).json(), { read: true })
})

test('this.repository is the repository given: a SQL transaction around related writes', async (t) => {
  const { articles, favorites } = sqliteStores(t)
  const Favourites = GenericReadOnlyViewSet.with({
    responseSchema: Article,
    detailParams: SlugParams,
    detailRoute: '/:slug',
    envelope: 'article',
    repository: articles
  }, {}, (route) => ({
    favorite: route.post('/:slug/favorite', { envelope: true, statusCode: 200 }, function (request) {
      const article = this.getObjectOr404()
      // The link row and the count: both, or neither.
      return this.repository.transaction(() => {
        favorites.create({ key: `${article.id}:${userOf(request)}`, article_id: article.id, user: userOf(request) })
        const count = favorites.count({ article_id: article.id })
        const counted = this.repository.update({ id: article.id }, { favorites_count: count })
        if (request.headers['x-refuse'] !== undefined) throw new Conflict('Refused after both writes.')
        return counted
      })
    })
  }))
  const app = await build({ views: [{ view: Favourites, prefix: '/articles' }] })
  t.teardown(() => app.close())
  problem(t, await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: { 'x-user': 'ann', 'x-refuse': '1' } }), 409)
  t.same([favorites.count({}), articles.get({ id: 1 })?.favorites_count], [0, 0], 'rolled back, both')
  t.same((await app.inject({ method: 'POST', url: '/articles/intro/favorite', headers: { 'x-user': 'ann' } })).json().article.favorites_count, 1)
  t.same([favorites.count({}), articles.get({ id: 1 })?.favorites_count], [1, 1])
})
