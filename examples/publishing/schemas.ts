// The publishing API's models: what clients send and receive (TypeBox schemas), and the rows the
// repositories hold behind them. Shared by the views (views.ts), the store (store.ts) and auth.ts.
import { Type, type Static } from '@sinclair/typebox'

const Key = Type.Integer({ minimum: 1, maximum: 2147483647 })
const Time = (description: string) => Type.String({ format: 'date-time', description })

/** A username: what profiles, authors and the `?author=` and `?favorited=` filters name. */
export const Username = Type.String({ pattern: '^[A-Za-z0-9_]{1,40}$', description: 'Letters, digits and underscores.' })
/** A tag: lower-case words joined by hyphens. */
export const Tag = Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 40 })
/** An article's key in its URL, made from its title when it is written. */
export const Slug = Type.String({ pattern: '^[a-z0-9]+(-[a-z0-9]+)*$', maxLength: 120 })
const Image = Type.Union([Type.String({ format: 'uri', maxLength: 500 }), Type.Null()], { description: 'The URL of a picture, or null.' })
const Bio = Type.String({ maxLength: 1000 })

export const User = Type.Object({
  username: Username,
  email: Type.String({ format: 'email', maxLength: 200 }),
  bio: Bio,
  image: Image,
  token: Type.Optional(Type.String({ description: 'Sent once, when the user signs up: what `Authorization: Token <token>` carries. Only its hash is kept.' }))
}, { $id: 'User', examples: [{ username: 'jake', email: 'jake@example.org', bio: 'I work at a zoo.', image: null }] })
export type User = Static<typeof User>
/** A user as stored: their key and the hash of their token, which no answer sends. */
export type UserRow = Omit<User, 'token'> & { id: number, token_hash: string }

export const UserIn = Type.Object({
  username: Username,
  email: Type.String({ format: 'email', maxLength: 200 }),
  bio: Type.Optional(Bio),
  image: Type.Optional(Image)
}, { $id: 'UserIn', examples: [{ username: 'jake', email: 'jake@example.org' }] })

export const UserChange = Type.Object({
  email: Type.Optional(Type.String({ format: 'email', maxLength: 200 })),
  bio: Type.Optional(Bio),
  image: Type.Optional(Image)
}, { $id: 'UserChange', examples: [{ bio: 'I like to skateboard.' }] })

export const Profile = Type.Object({
  username: Username,
  bio: Bio,
  image: Image,
  following: Type.Boolean({ description: 'Whether the user asking follows them; false without one.' })
}, { $id: 'Profile', examples: [{ username: 'jake', bio: 'I work at a zoo.', image: null, following: false }] })
export type Profile = Static<typeof Profile>
export type ProfileRow = Profile & { id: number }

const articleMembers = {
  slug: Slug,
  title: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.String({ maxLength: 300 }),
  tagList: Type.Array(Tag, { description: 'Its tags, in the order they were given.' }),
  author: Type.String({ description: 'The username of its author.' }),
  favorited: Type.Boolean({ description: 'Whether the user asking favourited it; false without one.' }),
  favoritesCount: Type.Integer({ minimum: 0 }),
  createdAt: Time('When it was written.'),
  updatedAt: Time('Set by the server on every change.')
}
const summaryExample = {
  slug: 'how-to-train-your-dragon',
  title: 'How to train your dragon',
  description: 'Ever wonder how?',
  tagList: ['dragons', 'training'],
  author: 'jake',
  favorited: false,
  favoritesCount: 2,
  createdAt: '2026-01-05T09:00:00.000Z',
  updatedAt: '2026-01-05T09:00:00.000Z'
}

/** One article, with its body: what `GET /articles/{slug}`, create and update answer. */
export const Article = Type.Object({ ...articleMembers, body: Type.String({ maxLength: 20000 }) },
  { $id: 'Article', examples: [{ ...summaryExample, body: 'You have to believe.' }] })
export type Article = Static<typeof Article>
/** An article as stored: its key and its author's, which the answers do not send. */
export type ArticleRow = Article & { id: number, author_id: number }

/** An article in a list: everything but its body. */
export const ArticleSummary = Type.Object(articleMembers, { $id: 'ArticleSummary', examples: [summaryExample] })

export const ArticleIn = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 100, pattern: '[A-Za-z0-9]', description: 'Its slug is made of its letters and digits.' }),
  description: Type.String({ maxLength: 300 }),
  body: Type.String({ maxLength: 20000 }),
  tagList: Type.Optional(Type.Array(Tag, { maxItems: 10, uniqueItems: true }))
}, { $id: 'ArticleIn', examples: [{ title: 'How to train your dragon', description: 'Ever wonder how?', body: 'You have to believe.', tagList: ['dragons', 'training'] }] })

export const ArticleChange = Type.Object({
  title: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The slug stays: links to the article keep working.' })),
  description: Type.Optional(Type.String({ maxLength: 300 })),
  body: Type.Optional(Type.String({ maxLength: 20000 }))
}, { $id: 'ArticleChange', examples: [{ body: 'With two hands.' }] })

/** The article a nested comment URL names: its key, for the comments' scope. */
export interface ArticleKey { id: number, slug: string }

export const Comment = Type.Object({
  id: Key,
  body: Type.String({ minLength: 1, maxLength: 5000 }),
  author: Type.String({ description: 'The username of its author.' }),
  createdAt: Time('When it was written.'),
  updatedAt: Time('Set by the server on every change.')
}, { $id: 'Comment', examples: [{ id: 1, body: 'Thank you so much!', author: 'ann', createdAt: '2026-01-05T10:00:00.000Z', updatedAt: '2026-01-05T10:00:00.000Z' }] })
export type Comment = Static<typeof Comment>
export type CommentRow = Comment & { article_id: number, author_id: number }

export const CommentIn = Type.Object({ body: Type.String({ minLength: 1, maxLength: 5000 }) }, { $id: 'CommentIn', examples: [{ body: 'Thank you so much!' }] })

export const TagList = Type.Object({ tags: Type.Array(Tag) }, { $id: 'TagList', examples: [{ tags: ['dragons', 'food', 'training'] }] })

/** The link tables: who follows whom, who favourited what, which article has which tag. */
export interface Follow { id: number, follower_id: number, followee_id: number }
export interface Favorite { id: number, article_id: number, user_id: number }
export interface ArticleTag { id: number, article_id: number, tag: string }
