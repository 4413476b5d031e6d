// The publishing API's HTTP views: users, profiles, articles, the feed, comments and tags. Every
// read and write goes through a repository (store.ts), who asks through auth.ts; no SQL here.
import { Type, type TSchema } from '@sinclair/typebox'
import { APIView, Get, ViewRouter, mix } from 'fastify-views'
import { Conflict, Forbidden, UnprocessableContent } from 'fastify-views/errors'
import {
  AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView, AsyncGenericListAPIView, AsyncGenericPartialUpdateAPIView,
  AsyncGenericRetrieveAPIView, BaseFilter, ListEnvelope, OffsetLimitFilter, OffsetPagination, type Criteria,
  type OffsetFacts
} from 'fastify-views/generics'
import { issueToken, type UserAuth } from './auth.js'
import {
  Article, ArticleChange, ArticleIn, ArticleSummary, Comment, CommentIn, Profile, Slug, Tag, TagList, User, UserChange,
  UserIn, Username
} from './schemas.js'
import type { PublishingStore } from './store.js'

const SlugParams = Type.Object({ slug: Slug })
const UsernameParams = Type.Object({ username: Username })

/** The routes that favourite an article and follow a user: they answer the object, in the view's envelope, with 200. */
const onArticle = { schema: { params: SlugParams }, responseSchema: Article, envelope: true, statusCode: 200 }
const onProfile = { schema: { params: UsernameParams }, responseSchema: Profile, envelope: true, statusCode: 200 }

/** An article's slug: the letters and digits of its title, lower-cased, accents dropped, joined by hyphens. */
export const slugOf = (title: string): string =>
  title.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '')

/** The time a row is written, as the repositories' `touchColumn` stamps `updatedAt` just after. */
const now = (): string => new Date().toISOString()

/** The API's own page of articles: `{ "articles": [...], "articlesCount": 12 }`, by `offset` and `limit`. */
interface ArticleList<T> { articles: T[], articlesCount: number }

class ArticlePages extends OffsetPagination {
  declare readonly page: ArticleList<this['item']>
  override readonly suffix = 'List'
  envelope (items: unknown[], { total }: OffsetFacts) { return { articles: items, articlesCount: total } }
  envelopeSchema (item: TSchema) { return { articles: Type.Array(item), articlesCount: Type.Integer({ minimum: 0 }) } }
}

/** `GET /articles?tag=dragons&author=jake&favorited=ann&offset=0&limit=20`, newest first. */
class ArticleFilter extends OffsetLimitFilter.with({
  paginator: new ArticlePages(),
  fields: { tag: Tag, author: Username, favorited: Username },
  operators: { tag: ['in'] },
  // Relation filters (docs/filters.md): a tag of the article; a user who favourited it, by username.
  fieldOf: { tag: 'tags.tag', favorited: 'favoritedBy.username' },
  orderingFields: ['createdAt', 'favoritesCount'],
  defaultOrdering: ['-createdAt'],
  maxPageSize: 100,
  defaultPageSize: 20
}) {}

/** The API's views over its store, `users` telling who asks. Registered under one router (`/`). */
export function publishingViews (store: PublishingStore, users: UserAuth): ViewRouter {
  /** `POST /users`: signing up. The answer carries the user's token, once. */
  class SignUp extends AsyncGenericCreateAPIView.with({
    responseSchema: User,
    createSchema: UserIn,
    envelope: 'user',
    repository: store.users,
    // The create writes a token's hash the body does not carry, and answers the token it does not store.
    mappingActions: ['create']
  }, {
    async performCreate (values, options) {
      const { token, hash } = issueToken()
      const user = await this.repository.create({ ...values, token_hash: hash }, options)
      return user === null ? null : { ...user, token }
    },
    getLocation (user) { return `/profiles/${encodeURIComponent(user.username)}` }
  }) {
    static override apiDescription = 'Signing up. A username or an email taken is a 422.'
  }

  /** `/user`: the signed-in user's own record, read and changed without an id in the URL. */
  class CurrentUser extends mix(AsyncGenericRetrieveAPIView, AsyncGenericPartialUpdateAPIView).with({
    responseSchema: User,
    partialUpdateSchema: UserChange,
    detailParams: Type.Object({}),
    raiseOnNone: false,
    envelope: 'user',
    repository: store.users
  }, {
    getKwargs () { return { id: users.user(this.request).id } }
  }) {
    static override detailRoute = ''
    static override apiDescription = 'The user the token names.'
  }

  /** `/profiles/:username`: anyone's public face; `following` is the reader's. */
  class Profiles extends AsyncGenericRetrieveAPIView.with({
    responseSchema: Profile,
    detailParams: UsernameParams,
    envelope: 'profile',
    repository: store.profiles
  }, {
    getRepositoryOptions () { return { reader: users.reader(this.request)?.id } }
  }, (route) => ({
    // The profile the URL names (a 404 without one), sent in its envelope with the change made.
    follow: route.post('/:username/follow', { ...onProfile, summary: 'Follow a user' }, async function () {
      const profile = await this.getObjectOr404()
      const me = users.user(this.request)
      if (profile.username === me.username) throw new UnprocessableContent('Users follow others, not themselves.')
      await store.follows.create({ follower_id: me.id, followee_id: profile.id }) // null: followed already
      return { ...profile, following: true }
    }),
    unfollow: route.delete('/:username/follow', { ...onProfile, summary: 'Stop following a user' }, async function () {
      const profile = await this.getObjectOr404()
      await store.follows.delete({ follower_id: users.user(this.request).id, followee_id: profile.id })
      return { ...profile, following: false }
    })
  })) {
    static override detailRoute = '/:username'
    static override apiDescription = 'Users as anyone sees them.'
  }

  /** `/articles`: the articles, as the user asking sees them; only its author changes one. */
  class Articles extends mix(
    AsyncGenericListAPIView,
    AsyncGenericCreateAPIView,
    AsyncGenericRetrieveAPIView,
    AsyncGenericPartialUpdateAPIView,
    AsyncGenericDestroyAPIView
  ).with({
    responseSchema: Article,
    listItemSchema: ArticleSummary,
    createSchema: ArticleIn,
    partialUpdateSchema: ArticleChange,
    detailParams: SlugParams,
    filter: ArticleFilter,
    envelope: 'article',
    repository: store.articles,
    objectPermissionActions: ['partialUpdate', 'destroy'],
    // The create writes the tags beside the article, and the slug and author the body does not carry.
    mappingActions: ['create'],
    unsafeDependencies: [users.required]
  }, {
    // Bound to option('reader') in every call: `favorited` is the reader's.
    getRepositoryOptions () { return { reader: users.reader(this.request)?.id } },
    checkObjectPermissions (article) {
      if (article.author_id !== users.user(this.request).id) throw new Forbidden('Only its author may change or delete an article.')
    },
    // The article and its tags, in one transaction: both, or neither.
    performCreate ({ tagList = [], ...values }, options) {
      const slug = slugOf(values.title)
      return store.transaction(async () => {
        const author = users.user(this.request).id
        // GAP: `this.repository` is typed as the protocol over Article first, so its create answers an
        // Article without the row's id; the same repository through the store answers the ArticleRow.
        const article = await store.articles.create({ ...values, slug, author_id: author, createdAt: now() }, options)
        if (article === null) throw new Conflict(`The slug ${slug} is taken: give the article another title.`)
        await store.tags.createMany(tagList.map((tag) => ({ article_id: article.id, tag })))
        // The row was read back before its tags were written: they are the ones just given.
        return { ...article, tagList }
      })
    },
    getLocation (article) { return this.getDetailUrl(article) }
  }, (route) => ({
    // The article the URL names (a 404 without one), read again after the write: `favorited` and
    // `favoritesCount` are the store's to compute (docs/generics.md, "Relation writes").
    favorite: route.post('/:slug/favorite', { ...onArticle, summary: 'Favourite an article' }, async function () {
      const article = await this.getObjectOr404()
      await store.favorites.create({ article_id: article.id, user_id: users.user(this.request).id }) // null: one already
      return await this.getObjectOr404()
    }),
    unfavorite: route.delete('/:slug/favorite', { ...onArticle, summary: 'Take a favourite back' }, async function () {
      const article = await this.getObjectOr404()
      await store.favorites.delete({ article_id: article.id, user_id: users.user(this.request).id })
      return await this.getObjectOr404()
    })
  })) {
    static override detailRoute = '/:slug'
    static override apiDescription = 'Articles, newest first. Lists send summaries (no body); one article has its body.'
  }

  /** `GET /feed`: the articles of the authors the reader follows. */
  class Feed extends AsyncGenericListAPIView.with({
    responseSchema: ArticleSummary,
    filter: ArticleFilter,
    repository: store.articles
  }, {
    // A criterion of the view, never of the client: a follows row from the reader to the author.
    getKwargs (): Criteria { return { 'followedBy.follower_id': users.user(this.request).id } },
    getRepositoryOptions () { return { reader: users.user(this.request).id } }
  }) {
    static override apiDescription = 'The articles of the users the reader follows, newest first.'
  }

  /** `/articles/:slug/comments`: an article's comments; only its author deletes one. */
  class Comments extends mix(
    AsyncGenericListAPIView,
    AsyncGenericCreateAPIView,
    AsyncGenericRetrieveAPIView,
    AsyncGenericDestroyAPIView
  ).with({
    responseSchema: Comment,
    createSchema: CommentIn,
    detailParams: Type.Object({ id: Type.Integer({ minimum: 1, maximum: 2147483647 }) }),
    prefixParams: SlugParams,
    parent: { repository: store.articleKeys, lookup: { slug: 'slug' }, scope: { article_id: 'id' }, name: 'Article' },
    filter: BaseFilter.with({ defaultOrdering: ['id'], paginator: new ListEnvelope('comments') }),
    envelope: 'comment',
    repository: store.comments,
    objectPermissionActions: ['destroy'],
    unsafeDependencies: [users.required]
  }, {
    checkObjectPermissions (comment) {
      if (comment.author_id !== users.user(this.request).id) throw new Forbidden('Only its author may delete a comment.')
    },
    performCreate (values, options) {
      return this.repository.create({ ...values, author_id: users.user(this.request).id, createdAt: now() }, options)
    },
    getLocation (comment) { return this.getDetailUrl(comment) }
  }) {
    static override apiDescription = 'The comments of an article, oldest first.'
  }

  /** `GET /tags`: every tag some article has, once. */
  class Tags extends APIView {
    static override apiDescription = 'The tags of the articles.'

    @Get('', { responseSchema: TagList, summary: 'Every tag some article has, once' })
    async allTags () {
      return { tags: await store.tags.distinct('tag') }
    }
  }

  return new ViewRouter({ dependencies: [users.identify] })
    .registerView(SignUp, { prefix: '/users' })
    .registerView(CurrentUser, { prefix: '/user', dependencies: [users.required] })
    .registerView(Profiles, { prefix: '/profiles' })
    .registerView(Articles, { prefix: '/articles' })
    .registerView(Feed, { prefix: '/feed', dependencies: [users.required] })
    .registerView(Comments, { prefix: '/articles/:slug/comments' })
    .registerView(Tags, { prefix: '/tags' })
}
