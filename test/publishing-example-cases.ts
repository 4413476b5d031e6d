// The publishing example (examples/publishing) through HTTP, as its clients use it: the same cases
// on every database (test/publishing-example.test.ts runs them on SQLite and PostgreSQL).
import type { Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'

/** Reads the database behind the app directly: `SELECT` only, to see what the API wrote. */
export type Query = (sql: string) => Promise<Array<Record<string, unknown>>>

/**
 * A publishing app on a freshly seeded database, a way to read that database, and a way to make
 * it refuse one tag (a trigger), so that an article's second write fails after its first.
 */
export type OpenSite = () => Promise<{ app: FastifyInstance, query: Query, forbidTag: (tag: string) => Promise<void> }>

type Headers = Record<string, string>
const JAKE = { authorization: 'Token jake-token-0123456789' }
const ANN = { authorization: 'Token ann-token-0123456789' }
const BO = { authorization: 'Token bo-token-0123456789' }

interface Summary { slug: string, tagList: string[], author: string, favorited: boolean, favoritesCount: number }
interface ArticleList { articles: Summary[], articlesCount: number }

/** Asserts an error of the API's format, `{ "errors": { "body": [...] } }`, and returns its messages. */
function errors (t: Test, res: LightMyRequestResponse, status: number): string[] {
  t.equal(res.statusCode, status, `status ${status}`)
  t.match(res.headers['content-type'], /^application\/json/)
  const body = res.json()
  t.same(Object.keys(body), ['errors'])
  t.same(Object.keys(body.errors), ['body'])
  t.ok(body.errors.body.every((m: unknown) => typeof m === 'string'), 'messages')
  return body.errors.body
}

const slugs = (res: LightMyRequestResponse): string[] => res.json<ArticleList>().articles.map((a) => a.slug)
const count = async (query: Query, sql: string): Promise<number> => Number((await query(sql))[0].n)

async function signUp (app: FastifyInstance, username: string): Promise<Headers> {
  const res = await app.inject({ method: 'POST', url: '/users', payload: { user: { username, email: `${username}@example.org` } } })
  return { authorization: `Token ${res.json().user.token}` }
}

/** `POST /articles` of an article with these members, and a description and body unless they are given. */
function write (app: FastifyInstance, headers: Headers, article: object): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url: '/articles', headers, payload: { article: { description: 'd', body: 'b', ...article } } })
}

/** Every case, each on a fresh site. */
export async function publishingCases (t: Test, open: OpenSite): Promise<void> {
  await t.test('users: sign up, a token once, the signed-in user\'s own record, 401s', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const signed = await app.inject({ method: 'POST', url: '/users', payload: { user: { username: 'zed', email: 'zed@example.org' } } })
    t.equal(signed.statusCode, 201)
    t.same(Object.keys(signed.json()), ['user'], 'the answer is the envelope')
    const { token, ...user } = signed.json().user
    t.same(user, { username: 'zed', email: 'zed@example.org', bio: '', image: null })
    t.match(token, /^[A-Za-z0-9_-]{32}$/)
    t.equal(signed.headers.location, '/profiles/zed')
    const [row] = await query('SELECT token_hash FROM users WHERE username = \'zed\'')
    t.not(row.token_hash, token, 'the token is kept as its hash only')
    const headers = { authorization: `Token ${token}` }
    const me = await app.inject({ url: '/user', headers })
    t.same(me.json(), { user }, 'the record, without the token or its hash')
    const changed = await app.inject({ method: 'PATCH', url: '/user', headers, payload: { user: { bio: 'Zebras.', image: 'https://example.org/z.png' } } })
    t.same(changed.json(), { user: { ...user, bio: 'Zebras.', image: 'https://example.org/z.png' } })
    t.match(errors(t, await app.inject({ method: 'PATCH', url: '/user', headers, payload: { user: { email: 'jake@example.org' } } }), 422),
      [/conflicts|unique/i], 'an email taken: a conflict, sent as 422')
    t.match(errors(t, await app.inject({ method: 'POST', url: '/users', payload: { user: { username: 'jake', email: 'j2@example.org' } } }), 422), [/conflicts/])
    t.match(errors(t, await app.inject({ method: 'POST', url: '/users', payload: { user: { username: 'jo', email: 'not an email' } } }), 422), [/^user\/email: /])
    errors(t, await app.inject({ method: 'POST', url: '/users', payload: { user: { username: 'jo', email: 'jo@example.org', token_hash: 'x' } } }), 422)
    errors(t, await app.inject({ method: 'POST', url: '/users', payload: { username: 'jo', email: 'jo@example.org' } }), 422)
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM users'), 4, 'none of the refused sign-ups was written')
    const anonymous = await app.inject('/user')
    t.match(errors(t, anonymous, 401), [/Sign in/])
    t.equal(anonymous.headers['www-authenticate'], 'Token')
    for (const header of ['Token nobody-0123456789', 'Bearer jake-token-0123456789', 'Token short', 'jake-token-0123456789', `Token ${'x'.repeat(65)}`, '']) {
      const res = await app.inject({ url: '/articles', headers: { authorization: header } })
      t.match(errors(t, res, 401), [/not Token <token> of a user/], `Authorization: ${JSON.stringify(header)}`)
    }
  })

  await t.test('profiles: following is the reader\'s; follow and unfollow answer the profile', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    t.same((await app.inject('/profiles/jake')).json(), { profile: { username: 'jake', bio: 'I work at a zoo.', image: null, following: false } })
    t.equal((await app.inject({ url: '/profiles/jake', headers: ANN })).json().profile.following, true, 'ann follows jake')
    t.equal((await app.inject({ url: '/profiles/jake', headers: BO })).json().profile.following, false)
    const followed = await app.inject({ method: 'POST', url: '/profiles/jake/follow', headers: BO })
    t.equal(followed.statusCode, 200)
    t.same(followed.json(), { profile: { username: 'jake', bio: 'I work at a zoo.', image: null, following: true } })
    t.equal((await app.inject({ method: 'POST', url: '/profiles/jake/follow', headers: BO })).json().profile.following, true, 'following twice: still once')
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM follows WHERE followee_id = 1'), 2)
    t.equal((await app.inject({ url: '/profiles/jake', headers: BO })).json().profile.following, true)
    t.match(errors(t, await app.inject({ method: 'POST', url: '/profiles/bo/follow', headers: BO }), 422), [/not themselves/])
    errors(t, await app.inject({ method: 'POST', url: '/profiles/jake/follow' }), 401)
    t.same(errors(t, await app.inject({ method: 'POST', url: '/profiles/nobody/follow', headers: BO }), 404), ['Profile does not exist'])
    t.same(errors(t, await app.inject('/profiles/nobody'), 404), ['Profile does not exist'])
    const unfollowed = await app.inject({ method: 'DELETE', url: '/profiles/jake/follow', headers: BO })
    t.same([unfollowed.statusCode, unfollowed.json().profile.following], [200, false])
    t.equal((await app.inject({ method: 'DELETE', url: '/profiles/jake/follow', headers: BO })).statusCode, 200, 'unfollowing twice')
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM follows WHERE followee_id = 1'), 1)
    errors(t, await app.inject('/profiles/not%20a%20name'), 422)
  })

  await t.test('articles: created with their tags in one transaction, the slug from the title', async (t) => {
    const { app, query, forbidTag } = await open()
    t.teardown(() => app.close())
    const created = await write(app, JAKE, { title: 'Fire breathing, à la carte!', body: 'Carefully.', tagList: ['fire', 'dragons', 'training'] })
    t.equal(created.statusCode, 201)
    t.same(Object.keys(created.json()), ['article'])
    t.match(created.json().article, {
      slug: 'fire-breathing-a-la-carte',
      title: 'Fire breathing, à la carte!',
      body: 'Carefully.',
      tagList: ['fire', 'dragons', 'training'],
      author: 'jake',
      favorited: false,
      favoritesCount: 0,
      createdAt: /^\d{4}-\d\d-\d\dT/
    })
    t.ok(created.json().article.createdAt <= created.json().article.updatedAt)
    t.equal(created.headers.location, '/articles/fire-breathing-a-la-carte')
    t.same((await app.inject('/articles/fire-breathing-a-la-carte')).json(), created.json(), 'read back as created, tags in their order')
    t.same((await query('SELECT tag FROM article_tags t JOIN articles a ON a.id = t.article_id WHERE a.slug = \'fire-breathing-a-la-carte\' ORDER BY t.id')).map((r) => r.tag),
      ['fire', 'dragons', 'training'])
    const articles = await count(query, 'SELECT COUNT(*) AS n FROM articles')
    const tags = await count(query, 'SELECT COUNT(*) AS n FROM article_tags')
    t.same(errors(t, await write(app, ANN, { title: 'Fire  breathing: à la carte', tagList: ['x'] }), 422),
      ['The slug fire-breathing-a-la-carte is taken: give the article another title.'], 'a slug taken: 422')
    await forbidTag('forbidden')
    errors(t, await write(app, ANN, { title: 'Rolled back', tagList: ['fine', 'forbidden'] }), 422)
    t.same([await count(query, 'SELECT COUNT(*) AS n FROM articles'), await count(query, 'SELECT COUNT(*) AS n FROM article_tags')], [articles, tags],
      'neither the article nor its first tag: the tag the database refused rolled both back')
    errors(t, await app.inject('/articles/rolled-back'), 404)
    t.equal((await write(app, ANN, { title: 'No tags' })).json().article.tagList.length, 0)
    t.match(errors(t, await write(app, ANN, { title: 'Twice', tagList: ['a', 'a'] }), 422), [/tagList/])
    t.match(errors(t, await write(app, ANN, { title: '!!!' }), 422), [/^article\/title: /], 'a title with no letter or digit has no slug')
    errors(t, await write(app, ANN, { title: 'Extra', slug: 'my-slug' }), 422)
    errors(t, await write(app, ANN, { title: 'Counted', favoritesCount: 5 }), 422)
    errors(t, await write(app, {}, { title: 'Anonymous' }), 401)
    const sly = await write(app, BO, { title: "Robert'); DROP TABLE articles;--", body: "1' OR '1'='1" })
    t.match(sly.json().article, { slug: 'robert-drop-table-articles', title: "Robert'); DROP TABLE articles;--", body: "1' OR '1'='1" }, 'stored as sent')
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM articles'), articles + 2)
  })

  await t.test('articles: filters by tag, author and favourite, pages with their count, summaries', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    await write(app, JAKE, { title: 'Fire breathing', tagList: ['dragons', 'fire', 'training'] })
    const all = await app.inject('/articles')
    t.same(Object.keys(all.json()), ['articles', 'articlesCount'])
    t.same(slugs(all), ['fire-breathing', 'welcome-to-the-zoo', 'dragon-diets', 'how-to-train-your-dragon'], 'newest first')
    t.equal(all.json().articlesCount, 4)
    t.notOk('body' in all.json().articles[0], 'a list sends summaries, without the body')
    t.same(all.json().articles[3], {
      slug: 'how-to-train-your-dragon',
      title: 'How to train your dragon',
      description: 'Ever wonder how?',
      tagList: ['dragons', 'training'],
      author: 'jake',
      favorited: false,
      favoritesCount: 2,
      createdAt: '2026-01-05T09:00:00.000Z',
      updatedAt: '2026-01-05T09:00:00.000Z'
    }, 'a count, a boolean and a list of tags, whatever the database')
    const dragons = await app.inject('/articles?tag=dragons')
    t.same([slugs(dragons), dragons.json().articlesCount], [['fire-breathing', 'dragon-diets', 'how-to-train-your-dragon'], 3])
    const anyOf = await app.inject('/articles?tag__in=dragons&tag__in=fire&tag__in=training')
    t.same([slugs(anyOf), anyOf.json().articlesCount], [['fire-breathing', 'dragon-diets', 'how-to-train-your-dragon'], 3],
      'an article with three of the tags is listed and counted once')
    t.same(slugs(await app.inject('/articles?tag=nothing')), [])
    t.same(slugs(await app.inject('/articles?author=jake')), ['fire-breathing', 'how-to-train-your-dragon'])
    t.same(slugs(await app.inject('/articles?favorited=ann')), ['how-to-train-your-dragon'])
    t.same(slugs(await app.inject('/articles?favorited=jake')), [])
    t.same(slugs(await app.inject('/articles?tag=dragons&author=ann')), ['dragon-diets'], 'filters together')
    t.same(slugs(await app.inject('/articles?sort=-favoritesCount&limit=1')), ['how-to-train-your-dragon'])
    const page = await app.inject('/articles?limit=2&offset=1')
    t.same([slugs(page), page.json().articlesCount], [['welcome-to-the-zoo', 'dragon-diets'], 4], 'a window and the count of every row')
    const tagged = await app.inject('/articles?tag=dragons&limit=1&offset=2')
    t.same([slugs(tagged), tagged.json().articlesCount], [['how-to-train-your-dragon'], 3])
    t.same((await app.inject('/articles?offset=10')).json(), { articles: [], articlesCount: 4 }, 'past the end')
    t.match(errors(t, await app.inject('/articles?limit=101'), 422), [/^limit: .*100/])
    t.match(errors(t, await app.inject('/articles?tag=Not%20a%20tag'), 422), [/^tag: /])
    t.match(errors(t, await app.inject('/articles?sort=title'), 422), [/^sort: /])
    const many = Array.from({ length: 10_000 }, (_, i) => `tag__in=t${i}`).join('&')
    t.match(errors(t, await app.inject(`/articles?${many}`), 422), [/^tag__in: .*100/], '10,000 values: refused before any SQL')
    t.equal((await app.inject(`/articles?${Array.from({ length: 100 }, (_, i) => `tag__in=t${i}`).join('&')}`)).statusCode, 200, '100 are fine')
    for (const injected of ["x' OR '1'='1", 'jake--', 'jake; DROP TABLE users']) {
      errors(t, await app.inject(`/articles?author=${encodeURIComponent(injected)}`), 422)
      errors(t, await app.inject(`/articles?favorited=${encodeURIComponent(injected)}`), 422)
    }
    errors(t, await app.inject(`/articles/${encodeURIComponent("x' OR '1'='1")}`), 422)
    t.equal((await app.inject('/articles')).json().articlesCount, 4, 'every table as it was')
    t.same(errors(t, await app.inject('/articles/no-such-article'), 404), ['Article does not exist'])
  })

  await t.test('feed: the articles of the users the reader follows', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const ann = await app.inject({ url: '/feed', headers: ANN })
    t.same([slugs(ann), ann.json().articlesCount], [['how-to-train-your-dragon'], 1], 'ann follows jake')
    t.equal(ann.json().articles[0].favorited, true, 'as ann sees it: she favourited it')
    const zed = await signUp(app, 'zed')
    t.same((await app.inject({ url: '/feed', headers: zed })).json(), { articles: [], articlesCount: 0 }, 'nobody followed: nothing')
    await app.inject({ method: 'POST', url: '/profiles/jake/follow', headers: zed })
    await app.inject({ method: 'POST', url: '/profiles/ann/follow', headers: zed })
    await write(app, JAKE, { title: 'Newer', tagList: ['news'] })
    const feed = await app.inject({ url: '/feed', headers: zed })
    t.same([slugs(feed), feed.json().articlesCount], [['newer', 'dragon-diets', 'how-to-train-your-dragon'], 3])
    t.same(feed.json().articles.map((a: Summary) => a.favorited), [false, false, false], 'zed favourited none')
    t.same(slugs(await app.inject({ url: '/feed?tag=dragons&limit=1', headers: zed })), ['dragon-diets'], 'filtered and paged like /articles')
    t.same(slugs(await app.inject({ url: '/feed?limit=1&offset=1', headers: zed })), ['dragon-diets'])
    t.equal((await app.inject({ url: '/feed?limit=1', headers: zed })).json().articlesCount, 3)
    t.same(slugs(await app.inject({ url: '/feed', headers: JAKE })), [], 'jake follows nobody')
    errors(t, await app.inject('/feed'), 401)
  })

  await t.test('favourites: the reader\'s flag and the count, added and taken back', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const favorite = (method: 'POST' | 'DELETE', headers: Headers, slug = 'dragon-diets') =>
      app.inject({ method, url: `/articles/${slug}/favorite`, headers })
    const added = await favorite('POST', JAKE)
    t.equal(added.statusCode, 200)
    t.match(added.json(), { article: { slug: 'dragon-diets', favorited: true, favoritesCount: 1, body: 'Mostly sheep.' } })
    t.match((await favorite('POST', JAKE)).json().article, { favorited: true, favoritesCount: 1 }, 'twice: once')
    t.match((await favorite('POST', BO)).json().article, { favorited: true, favoritesCount: 2 })
    t.match((await app.inject({ url: '/articles/dragon-diets', headers: JAKE })).json().article, { favorited: true, favoritesCount: 2 })
    t.match((await app.inject({ url: '/articles/dragon-diets', headers: ANN })).json().article, { favorited: false, favoritesCount: 2 }, 'ann did not')
    t.same(slugs(await app.inject('/articles?favorited=jake')), ['dragon-diets'])
    t.same(slugs(await app.inject('/articles?favorited=bo')), ['dragon-diets', 'how-to-train-your-dragon'])
    const removed = await favorite('DELETE', JAKE)
    t.match([removed.statusCode, removed.json().article], [200, { favorited: false, favoritesCount: 1 }])
    t.match((await favorite('DELETE', JAKE)).json().article, { favorited: false, favoritesCount: 1 }, 'taken back twice')
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM favorites'), 3)
    t.same(errors(t, await favorite('POST', JAKE, 'no-such-article'), 404), ['Article does not exist'])
    errors(t, await favorite('POST', {}), 401)
    errors(t, await favorite('DELETE', {}), 401)
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM favorites'), 3, 'nothing written by the refused ones')
  })

  await t.test('articles: only their author changes or deletes them (403), the slug stays', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const change = { article: { title: 'How to tame your dragon', body: 'Patience.' } }
    t.match(errors(t, await app.inject({ method: 'PATCH', url: '/articles/how-to-train-your-dragon', headers: ANN, payload: change }), 403), [/Only its author/])
    errors(t, await app.inject({ method: 'DELETE', url: '/articles/how-to-train-your-dragon', headers: ANN }), 403)
    errors(t, await app.inject({ method: 'PATCH', url: '/articles/how-to-train-your-dragon', payload: change }), 401)
    t.same(await query('SELECT title, body FROM articles WHERE id = 1'), [{ title: 'How to train your dragon', body: 'You have to believe.' }], 'nothing written')
    const patched = await app.inject({ method: 'PATCH', url: '/articles/how-to-train-your-dragon', headers: JAKE, payload: change })
    t.equal(patched.statusCode, 200)
    t.match(patched.json().article, { slug: 'how-to-train-your-dragon', title: 'How to tame your dragon', body: 'Patience.', tagList: ['dragons', 'training'], favoritesCount: 2 })
    t.not(patched.json().article.updatedAt, '2026-01-05T09:00:00.000Z', 'stamped')
    errors(t, await app.inject({ method: 'PATCH', url: '/articles/how-to-train-your-dragon', headers: JAKE, payload: { article: { slug: 'other' } } }), 422)
    errors(t, await app.inject({ method: 'PATCH', url: '/articles/no-such-article', headers: JAKE, payload: change }), 404)
    t.equal((await app.inject({ method: 'DELETE', url: '/articles/how-to-train-your-dragon', headers: JAKE })).statusCode, 204)
    errors(t, await app.inject('/articles/how-to-train-your-dragon'), 404)
    t.same([await count(query, 'SELECT COUNT(*) AS n FROM comments'), await count(query, 'SELECT COUNT(*) AS n FROM article_tags WHERE article_id = 1'),
      await count(query, 'SELECT COUNT(*) AS n FROM favorites')], [0, 0, 0], 'its comments, tags and favourites went with it')
    t.same((await app.inject('/tags')).json(), { tags: ['dragons', 'food'] }, 'and its tags from /tags')
  })

  await t.test('comments: nested under their article, 404 without one, deleted by their author', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const url = '/articles/how-to-train-your-dragon/comments'
    const listed = await app.inject(url)
    t.same(listed.json(), { comments: [{ id: 1, body: 'Thank you so much!', author: 'ann', createdAt: '2026-01-08T09:00:00.000Z', updatedAt: '2026-01-08T09:00:00.000Z' }] })
    t.same((await app.inject('/articles/dragon-diets/comments')).json(), { comments: [] })
    const posted = await app.inject({ method: 'POST', url, headers: BO, payload: { comment: { body: 'Me too.' } } })
    t.equal(posted.statusCode, 201)
    const comment = posted.json().comment
    t.match(comment, { id: 2, body: 'Me too.', author: 'bo' })
    t.equal(posted.headers.location, `${url}/2`)
    t.same((await app.inject(`${url}/2`)).json(), { comment })
    t.same((await app.inject(url)).json().comments.map((c: { id: number }) => c.id), [1, 2], 'oldest first')
    t.same(errors(t, await app.inject('/articles/no-such-article/comments'), 404), ['Article does not exist'])
    t.same(errors(t, await app.inject({ method: 'POST', url: '/articles/no-such-article/comments', headers: BO, payload: { comment: { body: 'x' } } }), 404),
      ['Article does not exist'])
    errors(t, await app.inject({ method: 'DELETE', url: '/articles/no-such-article/comments/2', headers: BO }), 404)
    errors(t, await app.inject('/articles/dragon-diets/comments/1'), 404)
    errors(t, await app.inject({ method: 'POST', url, payload: { comment: { body: 'x' } } }), 401)
    errors(t, await app.inject({ method: 'POST', url, headers: BO, payload: { comment: { body: '' } } }), 422)
    errors(t, await app.inject({ method: 'POST', url, headers: BO, payload: { comment: { body: 'x', author_id: 1 } } }), 422)
    t.match(errors(t, await app.inject({ method: 'DELETE', url: `${url}/1`, headers: BO }), 403), [/Only its author/])
    t.equal(await count(query, 'SELECT COUNT(*) AS n FROM comments'), 2, 'nothing deleted')
    t.equal((await app.inject({ method: 'DELETE', url: `${url}/1`, headers: ANN })).statusCode, 204)
    errors(t, await app.inject({ method: 'DELETE', url: `${url}/1`, headers: ANN }), 404)
    t.same((await app.inject(url)).json().comments.map((c: { id: number }) => c.id), [2])
  })

  await t.test('tags: every tag once, from one SELECT DISTINCT', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    t.same((await app.inject('/tags')).json(), { tags: ['dragons', 'food', 'training'] })
    await write(app, BO, { title: 'Zoo food', tagList: ['zoo', 'food'] })
    t.same((await app.inject('/tags')).json(), { tags: ['dragons', 'food', 'training', 'zoo'] })
  })
}
