// The publishing API's store: one database (SQLite or PostgreSQL), its tables (schema.ts), and a
// repository per resource. A repository reads a query (its table, a join, computed read-only
// fields) and writes its table. The views (views.ts) write no SQL; what is here, and why:
//
// - `JOIN users u ON u.id = <table>.author_id` and `author: 'u.username'` (articles, comments): an
//   article or a comment shows its author's username, a column of another table (many-to-one).
// - `tagList` (one expression per database): an article's tags as a JSON array in the order they
//   were given, aggregated from article_tags (`json_group_array` on SQLite, `json_agg` on PostgreSQL).
// - `favoritesCount`: how many users favourited the article, counted in favorites.
// - `favorited` (articles) and `following` (profiles): whether the user asking favourited the
//   article, follows the profile; `option('reader')` binds them per call to the id the view passes
//   (NULL, so false, for nobody).
// - The relations (`tags`, `favoritedBy`, `followedBy`) are declarations, not SQL: the filters
//   `?tag=`, `?favorited=` and the feed compare their fields, and the store writes the `EXISTS`.
// Besides these, opening the database and asking whether it is seeded (`openPostgres`, `openSqlite`).
import { mkdirSync } from 'node:fs'
import path from 'node:path'
import pg from 'pg'
import { AsyncSqlRepository, AsyncSqliteRepository, PostgresRepository, option, sql, type SqlTableOptions } from 'fastify-views/sql'
import { POSTGRES_SCHEMA, SQLITE_SCHEMA, setUpSchema } from './schema.js'
import type { ArticleKey, ArticleRow, ArticleTag, CommentRow, Favorite, Follow, ProfileRow, UserRow } from './schemas.js'

/** `sqlite:<path>` (or nothing: `./data/publishing.db`), or a `postgres://` URL. */
export interface StoreOptions { databaseUrl?: string | undefined }

/** The publishing API's repositories over one database. */
export interface PublishingStore {
  /** Users as the API shows them to themselves, and as auth.ts finds them by their token's hash. */
  users: AsyncSqlRepository<UserRow>
  /** Users as anyone sees them: no email, no token hash; `following` is the reader's. */
  profiles: AsyncSqlRepository<ProfileRow>
  follows: AsyncSqlRepository<Follow>
  articles: AsyncSqlRepository<ArticleRow>
  /** The articles table alone, its key and slug: the parent the comments' URL names. */
  articleKeys: AsyncSqlRepository<ArticleKey>
  tags: AsyncSqlRepository<ArticleTag>
  favorites: AsyncSqlRepository<Favorite>
  comments: AsyncSqlRepository<CommentRow>
  /** Runs `work` in one transaction: every repository call it makes commits with it, or none. */
  transaction: <R>(work: () => Promise<R>) => Promise<R>
  close: () => Promise<void> | void
}

/** An article's tags as a JSON array, in the order they were given: what the two databases spell differently. */
const SQLITE_TAG_LIST = 'SELECT json_group_array(tag) FROM (SELECT t.tag FROM article_tags t WHERE t.article_id = articles.id ORDER BY t.id)'
const POSTGRES_TAG_LIST = "SELECT COALESCE(json_agg(t.tag ORDER BY t.id), '[]'::json) FROM article_tags t WHERE t.article_id = articles.id"

const USERS = { table: 'users', columns: ['id', 'username', 'email', 'bio', 'image', 'token_hash'] } satisfies SqlTableOptions<UserRow>

const PROFILES = {
  table: 'users',
  columns: ['id', 'username', 'bio', 'image'],
  decode: { following: 'boolean' },
  computed: { following: sql`EXISTS (SELECT 1 FROM follows f WHERE f.followee_id = users.id AND f.follower_id = ${option('reader')})` }
} satisfies SqlTableOptions<ProfileRow>

/** Articles as a reader sees them. `decode`: SQLite has no boolean and no JSON type (1, and text). */
const articles = (tagList: string) => ({
  table: 'articles',
  columns: ['id', 'slug', 'title', 'description', 'body', 'author_id', 'createdAt', 'updatedAt'],
  touchColumn: 'updatedAt',
  joins: 'JOIN users u ON u.id = articles.author_id',
  decode: { favorited: 'boolean', tagList: 'json' },
  computed: {
    author: 'u.username',
    tagList,
    favorited: sql`EXISTS (SELECT 1 FROM favorites f WHERE f.article_id = articles.id AND f.user_id = ${option('reader')})`,
    favoritesCount: 'SELECT CAST(COUNT(*) AS INTEGER) FROM favorites f WHERE f.article_id = articles.id'
  },
  relations: {
    // ?tag=dragons: an article_tags row of the article has that tag.
    tags: { table: 'article_tags', on: { article_id: 'id' }, fields: ['tag'] },
    // ?favorited=ann: a favorites row of the article whose user's username is ann.
    favoritedBy: { table: 'favorites', on: { article_id: 'id' }, fields: ['user_id'], join: { table: 'users', on: { id: 'user_id' }, fields: ['username'] } },
    // The feed: a follows row whose followee is the article's author, and whose follower is the reader.
    followedBy: { table: 'follows', on: { followee_id: 'author_id' }, fields: ['follower_id'] }
  }
}) satisfies SqlTableOptions<ArticleRow>

const ARTICLE_KEYS = { table: 'articles', columns: ['id', 'slug'] } satisfies SqlTableOptions<ArticleKey>
const FOLLOWS = { table: 'follows', columns: ['id', 'follower_id', 'followee_id'] } satisfies SqlTableOptions<Follow>
const TAGS = { table: 'article_tags', columns: ['id', 'article_id', 'tag'] } satisfies SqlTableOptions<ArticleTag>
const FAVORITES = { table: 'favorites', columns: ['id', 'article_id', 'user_id'] } satisfies SqlTableOptions<Favorite>

const COMMENTS = {
  table: 'comments',
  columns: ['id', 'article_id', 'author_id', 'body', 'createdAt', 'updatedAt'],
  touchColumn: 'updatedAt',
  joins: 'JOIN users u ON u.id = comments.author_id',
  computed: { author: 'u.username' }
} satisfies SqlTableOptions<CommentRow>

/** `DATABASE_URL`: PostgreSQL for `postgres://`, SQLite otherwise. */
export async function openStore ({ databaseUrl }: StoreOptions = {}): Promise<PublishingStore> {
  if (databaseUrl !== undefined && /^postgres(ql)?:\/\//.test(databaseUrl)) return openPostgres(databaseUrl)
  if (databaseUrl !== undefined && !databaseUrl.startsWith('sqlite:')) throw new Error('DATABASE_URL must be sqlite:<path> or postgres://...')
  return openSqlite(databaseUrl === undefined ? './data/publishing.db' : databaseUrl.slice('sqlite:'.length))
}

async function openPostgres (url: string): Promise<PublishingStore> {
  const pool = new pg.Pool({ connectionString: url })
  pool.on('error', () => {})
  await setUpSchema(POSTGRES_SCHEMA, (text) => pool.query(text), async () => Number((await pool.query('SELECT COUNT(*) AS n FROM users')).rows[0].n))
  const users = new PostgresRepository<UserRow>(pool, USERS)
  return {
    users,
    profiles: new PostgresRepository<ProfileRow>(pool, PROFILES),
    follows: new PostgresRepository<Follow>(pool, FOLLOWS),
    articles: new PostgresRepository<ArticleRow>(pool, articles(POSTGRES_TAG_LIST)),
    articleKeys: new PostgresRepository<ArticleKey>(pool, ARTICLE_KEYS),
    tags: new PostgresRepository<ArticleTag>(pool, TAGS),
    favorites: new PostgresRepository<Favorite>(pool, FAVORITES),
    comments: new PostgresRepository<CommentRow>(pool, COMMENTS),
    // Any repository over the pool opens it; the calls inside, on any of them, run in it.
    transaction: (work) => users.transaction(work),
    close: () => pool.end()
  }
}

async function openSqlite (file: string): Promise<PublishingStore> {
  if (file !== ':memory:') mkdirSync(path.dirname(path.resolve(file)), { recursive: true })
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  const db = new DatabaseSync(file, { timeout: 5000 })
  db.exec('PRAGMA journal_mode = WAL')
  db.exec('PRAGMA foreign_keys = ON')
  await setUpSchema(SQLITE_SCHEMA, (text) => db.exec(text), () => Number(db.prepare('SELECT COUNT(*) AS n FROM users').get()?.n))
  const users = new AsyncSqliteRepository<UserRow>(db, USERS)
  return {
    users,
    profiles: new AsyncSqliteRepository<ProfileRow>(db, PROFILES),
    follows: new AsyncSqliteRepository<Follow>(db, FOLLOWS),
    articles: new AsyncSqliteRepository<ArticleRow>(db, articles(SQLITE_TAG_LIST)),
    articleKeys: new AsyncSqliteRepository<ArticleKey>(db, ARTICLE_KEYS),
    tags: new AsyncSqliteRepository<ArticleTag>(db, TAGS),
    favorites: new AsyncSqliteRepository<Favorite>(db, FAVORITES),
    comments: new AsyncSqliteRepository<CommentRow>(db, COMMENTS),
    transaction: (work) => users.transaction(work),
    close: () => { db.close() }
  }
}
