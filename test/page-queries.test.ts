// Page queries (lib/stores/sql/page-query.ts): a window of a list over a query that skips rows (an
// OFFSET, a group's rows past its limit) reads the page's keys first and computes the fields for
// those rows only. Every kind of list answers the same rows, in
// the same order, as the one statement it replaced (written by a copy of the dialect that does not
// take the page query), on SQLite through both drivers and on PostgreSQL; the statements have the
// keys-first form exactly where it saves work; and the lending example's deep and sorted pages of
// 20,000 books answer in time (issue 53).
import t0, { test, type Test } from 'tap'
import { tracingChannel } from 'node:diagnostics_channel'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import type { FastifyInstance } from 'fastify'
import type { Criteria, ListQuery, OrderKey, RepositoryOptions } from '../lib/stores/repository.js'
import {
  AsyncSqlRepository, PostgresRepository, SqlBuilder, SqliteRepository, option, postgresDialect, sql, sqliteDialect,
  type Dialect, type SqlTableOptions, type Statement
} from '../lib/stores/sql/index.js'
import { buildApp } from '../examples/library/app.js'
import { openStore } from '../examples/library/store.js'
import { openSqlite, type TestDatabase } from './sqlite-driver.js'
import { freshDatabase, postgres, type PgServer } from './pg-server.js'

type Row = Record<string, unknown>
/** Runs a statement of the builder on one database: its rows. */
type Run = (statement: Statement) => Promise<Row[]>

const DDL = [
  'CREATE TABLE authors (id INTEGER PRIMARY KEY, name TEXT NOT NULL)',
  'CREATE TABLE posts (id INTEGER PRIMARY KEY, author_id INTEGER NOT NULL, title TEXT NOT NULL, score INTEGER, deleted_at TEXT)',
  'CREATE TABLE likes (post_id INTEGER NOT NULL, member_id INTEGER NOT NULL, PRIMARY KEY (post_id, member_id))',
  'CREATE TABLE tags (post_id INTEGER NOT NULL, tag TEXT NOT NULL, PRIMARY KEY (post_id, tag))',
  'CREATE TABLE comments (post_id INTEGER NOT NULL, n INTEGER NOT NULL, body TEXT NOT NULL, PRIMARY KEY (post_id, n))'
]

/**
 * Forty posts by four authors (the fourth has no row: the LEFT JOIN's null), scores with ties and
 * nulls, likes by up to three members, tags on some, every sixth post deleted, and comments with
 * a key of two columns. Titles are a permutation, so that no order is the key's.
 */
function seedRows (): string[] {
  const posts: string[] = []
  const likes: string[] = []
  const tags: string[] = []
  const comments: string[] = []
  for (let i = 1; i <= 40; i++) {
    const score = i % 5 === 0 ? 'NULL' : String(i % 7)
    posts.push(`(${i}, ${1 + i % 4}, 'Post ${String((i * 7) % 40).padStart(2, '0')}', ${score}, ${i % 6 === 0 ? "'2026-01-01'" : 'NULL'})`)
    for (let member = 1; member <= i % 4; member++) likes.push(`(${i}, ${member})`)
    if (i % 3 === 0) tags.push(`(${i}, 'red')`)
    if (i % 4 === 0) tags.push(`(${i}, 'blue')`)
    if (i <= 10) for (let n = 1; n <= i % 4 + 1; n++) comments.push(`(${i}, ${n}, '${'x'.repeat((i * n) % 9 + 1)}')`)
  }
  return [
    "INSERT INTO authors (id, name) VALUES (1, 'Ann'), (2, 'Bo'), (3, 'Cy')",
    `INSERT INTO posts (id, author_id, title, score, deleted_at) VALUES ${posts.join(', ')}`,
    `INSERT INTO likes (post_id, member_id) VALUES ${likes.join(', ')}`,
    `INSERT INTO tags (post_id, tag) VALUES ${tags.join(', ')}`,
    `INSERT INTO comments (post_id, n, body) VALUES ${comments.join(', ')}`
  ]
}

/** A query over posts: a join binding a value, computed fields (one per reader), and a relation. */
const POSTS = {
  table: 'posts',
  columns: ['id', 'author_id', 'title', 'score', 'deleted_at'],
  joins: sql`LEFT JOIN authors a ON a.id = posts.author_id AND a.id > ${0}`,
  computed: {
    author: 'a.name',
    likes: 'SELECT CAST(COUNT(*) AS INTEGER) FROM likes l WHERE l.post_id = posts.id',
    liked: sql`CASE WHEN EXISTS (SELECT 1 FROM likes l WHERE l.post_id = posts.id AND l.member_id = ${option('reader')}) THEN 1 ELSE 0 END`,
    top_tag: 'SELECT MIN(t.tag) FROM tags t WHERE t.post_id = posts.id'
  },
  relations: { tags: { table: 'tags', on: { post_id: 'id' }, fields: ['tag'] } }
} satisfies SqlTableOptions

/** A key of two columns, with computed fields. */
const COMMENTS = {
  table: 'comments',
  columns: ['post_id', 'n', 'body'],
  idColumn: ['post_id', 'n'],
  computed: { post_title: 'SELECT p.title FROM posts p WHERE p.id = comments.post_id', size: 'length(comments.body)' }
} satisfies SqlTableOptions

const AUTHORS = { table: 'authors', columns: ['id', 'name'] } satisfies SqlTableOptions
/** Joins and no computed field: nothing is computed, so nothing to save. */
const JOINED = { table: 'posts', columns: ['id', 'title'], joins: 'JOIN authors a ON a.id = posts.author_id' } satisfies SqlTableOptions
const TABLES = { posts: POSTS, comments: COMMENTS, authors: AUTHORS, joined: JOINED }

const by = (field: string, descending = false): OrderKey => ({ field, descending })

interface Case {
  name: string
  table: keyof typeof TABLES
  criteria?: Criteria
  query: ListQuery
  options?: RepositoryOptions
  /** Whether the statement is the page query. */
  keysFirst: boolean
  /** Whether the window is past the rows (no row expected). */
  empty?: boolean
}

const READER = { reader: 1 }

/** Every kind of list, with the form its statement takes. */
const CASES: Case[] = [
  { name: 'an offset page in key order', table: 'posts', query: { orderBy: [], limit: 5, offset: 10 }, keysFirst: true },
  { name: 'a first page in key order reads along the key: one statement', table: 'posts', query: { orderBy: [], limit: 5 }, keysFirst: false },
  { name: 'a first page in descending key order: one statement', table: 'posts', query: { orderBy: [by('id', true)], limit: 5 }, keysFirst: false },
  { name: 'no window: one statement', table: 'posts', query: { orderBy: [by('likes', true)] }, keysFirst: false },
  { name: 'a first page sorted by a computed field: one statement', table: 'posts', query: { orderBy: [by('likes', true)], limit: 7 }, options: READER, keysFirst: false },
  { name: 'a first page sorted by a column: one statement', table: 'posts', query: { orderBy: [by('title')], limit: 7 }, keysFirst: false },
  { name: 'a nullable column ascending (nulls last)', table: 'posts', query: { orderBy: [by('score')], limit: 10, offset: 25 }, keysFirst: true },
  { name: 'a nullable column descending (nulls first)', table: 'posts', query: { orderBy: [by('score', true)], limit: 10, offset: 3 }, keysFirst: true },
  { name: 'a nullable computed field ascending', table: 'posts', query: { orderBy: [by('top_tag')], limit: 10, offset: 15 }, keysFirst: true },
  { name: 'a nullable computed field descending, then a column', table: 'posts', query: { orderBy: [by('top_tag', true), by('title', true)], limit: 6, offset: 4 }, keysFirst: true },
  { name: 'a filter on a computed field', table: 'posts', criteria: { likes__gt: 1 }, query: { orderBy: [by('title')], limit: 5, offset: 2 }, keysFirst: true },
  { name: 'a filter on the reader\'s computed field', table: 'posts', criteria: { liked: 1 }, query: { orderBy: [by('score', true)], limit: 4, offset: 1 }, options: { reader: 2 }, keysFirst: true },
  { name: 'a filter on a joined computed field (null: no author)', table: 'posts', criteria: { author: null }, query: { orderBy: [by('title')], limit: 3, offset: 1 }, keysFirst: true },
  { name: 'search, over a column and a computed field', table: 'posts', query: { orderBy: [by('title')], limit: 5, offset: 1, search: { term: 'B', fields: ['title', 'author'] } }, keysFirst: true },
  { name: 'a relation filter (EXISTS)', table: 'posts', criteria: { 'tags.tag': 'red' }, query: { orderBy: [by('likes', true)], limit: 4, offset: 2 }, keysFirst: true },
  { name: 'scope criteria and a soft delete\'s', table: 'posts', criteria: { author_id__in: [1, 2, 4], deleted_at: null }, query: { orderBy: [by('title', true)], limit: 5, offset: 5 }, options: READER, keysFirst: true },
  { name: 'positional fragments', table: 'posts', query: { orderBy: [by('score')], limit: 5, offset: 2, args: [{ sql: 'posts.score > ?', params: [2] }] }, keysFirst: true },
  { name: 'a sparse field set with a computed field', table: 'posts', query: { orderBy: [by('score', true)], limit: 5, offset: 2, fields: ['title', 'likes'] }, keysFirst: true },
  { name: 'a sparse field set sorted by a computed field it leaves out (the sort key is selected)', table: 'posts', query: { orderBy: [by('likes')], limit: 5, offset: 2, fields: ['title'] }, keysFirst: true },
  { name: 'a sparse field set with no computed field: one statement', table: 'posts', query: { orderBy: [by('score')], limit: 5, offset: 2, fields: ['title'] }, keysFirst: false },
  { name: 'an offset without a limit', table: 'posts', query: { orderBy: [by('title')], offset: 35 }, keysFirst: true },
  { name: 'past the end', table: 'posts', query: { orderBy: [by('likes')], limit: 5, offset: 1000 }, keysFirst: true, empty: true },
  { name: 'a window of no row', table: 'posts', query: { orderBy: [by('likes')], limit: 0, offset: 2 }, keysFirst: true, empty: true },
  { name: 'a cursor\'s seek after a computed value: one statement', table: 'posts', query: { orderBy: [by('likes', true), by('id')], after: [2, 10], limit: 4 }, keysFirst: false },
  { name: 'a seek and an offset: the seek in the keys\' subquery', table: 'posts', query: { orderBy: [by('likes', true), by('id')], after: [2, 10], limit: 4, offset: 2 }, keysFirst: true },
  { name: 'a seek and an offset, with criteria', table: 'posts', criteria: { deleted_at: null }, query: { orderBy: [by('likes', true), by('id')], after: [1, 5], limit: 3, offset: 1 }, keysFirst: true },
  { name: 'a seek after a null, descending, and an offset', table: 'posts', query: { orderBy: [by('score', true), by('id')], after: [null, 20], limit: 4, offset: 1 }, keysFirst: true },
  { name: 'per group, with computed fields', table: 'posts', criteria: { author_id__in: [1, 2, 4] }, query: { orderBy: [by('score', true)], perGroup: { field: 'author_id', limit: 2 } }, options: READER, keysFirst: true },
  { name: 'per group, with a window too', table: 'posts', query: { orderBy: [by('title')], perGroup: { field: 'author_id', limit: 3 }, limit: 5, offset: 2 }, keysFirst: true },
  { name: 'per group, a sparse field set with no computed field: one statement', table: 'posts', query: { orderBy: [by('score')], perGroup: { field: 'author_id', limit: 2 }, fields: ['title'] }, keysFirst: false },
  { name: 'a key of two columns: a row value', table: 'comments', query: { orderBy: [by('size', true)], limit: 4, offset: 2 }, keysFirst: true },
  { name: 'a key of two columns, per group', table: 'comments', query: { orderBy: [by('body')], perGroup: { field: 'post_id', limit: 2 } }, keysFirst: true },
  { name: 'a plain table: one statement', table: 'authors', query: { orderBy: [by('name', true)], limit: 2, offset: 1 }, keysFirst: false },
  { name: 'a plain table per group: one statement', table: 'authors', query: { orderBy: [by('name')], perGroup: { field: 'id', limit: 1 } }, keysFirst: false },
  { name: 'joins without a computed field: one statement', table: 'joined', query: { orderBy: [by('title')], limit: 5, offset: 5 }, keysFirst: false }
]

/** The page query's mark: the rows of the window's keys, `<key> IN (SELECT <key> ...)`. */
const PAGE_QUERY = /^SELECT .* WHERE (\("\w+"\."\w+", "\w+"\."\w+"\)|"\w+"\."\w+") IN \(SELECT /

/** The dialect without the page query: what it wrote before, one statement. */
const oneStatement = (dialect: Dialect): Dialect => ({ ...dialect, keysFirstPages: false })

/** Each case on one database: the page query's rows are the one statement's, in its order. */
async function sameRows (t: Test, dialect: Dialect, run: Run): Promise<void> {
  for (const c of CASES) {
    const options = TABLES[c.table]
    const page = new SqlBuilder(dialect, options).select(c.criteria ?? {}, c.query, c.options)
    const before = new SqlBuilder(oneStatement(dialect), options).select(c.criteria ?? {}, c.query, c.options)
    t.equal(PAGE_QUERY.test(page.sql), c.keysFirst, `${c.name}: ${c.keysFirst ? 'the page query' : 'one statement'}`)
    t.notOk(before.sql.includes(' IN (SELECT '), `${c.name}: the one statement it replaced`)
    if (!c.keysFirst) t.equal(page.sql, before.sql, `${c.name}: the statement of before`)
    const rows = await run(page)
    t.same(rows, await run(before), `${c.name}: the same rows, in the same order`)
    t.equal(rows.length === 0, c.empty === true, `${c.name}: ${rows.length} rows`)
  }
  // Walks through every row, four a page: by offset (the page query from the second page on), and by a cursor's seek (one statement).
  for (const orderBy of [[by('score', true), by('id')], [by('top_tag'), by('id')], [by('likes', true), by('title'), by('id')]]) {
    const along = orderBy.map((key) => (key.descending ? '-' : '') + key.field).join(',')
    const all = await run(new SqlBuilder(oneStatement(dialect), POSTS).select({}, { orderBy }, READER))
    const paged: Row[] = []
    const builder = new SqlBuilder(dialect, POSTS)
    for (let offset = 0; offset < 44; offset += 4) {
      paged.push(...await run(builder.select({}, { orderBy, limit: 4, offset }, READER)))
    }
    t.same(paged, all, `offset pages along ${along} hold every row once, in order`)
    const walked: Row[] = []
    let last: Row | undefined
    do {
      const boundary = last
      const after = boundary === undefined ? {} : { after: orderBy.map((key) => boundary[key.field]) }
      const rows = await run(new SqlBuilder(dialect, POSTS).select({}, { orderBy, limit: 4, ...after }, READER))
      walked.push(...rows)
      last = rows.length === 4 ? rows[3] : undefined
    } while (last !== undefined)
    t.same(walked, all, `a cursor's pages along ${along} too`)
  }
  const count = new SqlBuilder(dialect, POSTS).count({ likes__gt: 0 }, { search: { term: 'post', fields: ['title'] } }, READER)
  t.notOk(count.sql.includes(' IN (SELECT '), 'a count is one statement')
  t.same(Number((await run(count))[0].n), 30, 'and counts the rows the lists page through')
}

/** The rows a statement answers on a SQLite connection. */
const sqliteRun = (db: TestDatabase): Run => async ({ sql: text, params }) => sqliteRows(db, text, params)

/** The rows of a statement on a SQLite connection. */
function sqliteRows (db: TestDatabase, text: string, params: unknown[]): Row[] {
  return db.prepare(text).all(...params) as Row[] // the driver's rows: records by column name
}

/** Subscribes to the library's SQL statements for a test: the SELECT texts heard, in order. */
function heardStatements (t: Test): string[] {
  const heard: string[] = []
  const channel = tracingChannel<object, { sql: string }>('fastify-views:sql')
  const subscriber = {
    start: (message: { sql: string }) => { if (message.sql.startsWith('SELECT')) heard.push(message.sql) },
    end () {},
    asyncStart () {},
    asyncEnd () {},
    error () {}
  }
  channel.subscribe(subscriber)
  t.teardown(() => { channel.unsubscribe(subscriber) })
  return heard
}

for (const driver of ['better-sqlite3', 'node:sqlite'] as const) {
  test(`SQLite (${driver}): every kind of list answers the rows it answered in one statement`, async (t) => {
    const db = openSqlite(':memory:', { driver })
    t.teardown(() => db.close())
    for (const statement of [...DDL, ...seedRows()]) db.exec(statement)
    await sameRows(t, sqliteDialect, sqliteRun(db))

    // Through a repository: the statement heard on the library's channel is the page query.
    const heard = heardStatements(t)
    const repo = new SqliteRepository(db, POSTS)
    const query = { orderBy: [by('likes', true)], limit: 5, offset: 3 }
    const before = await sqliteRun(db)(new SqlBuilder(oneStatement(sqliteDialect), POSTS).select({}, query, READER))
    t.same(repo.list({}, query, READER), before, 'the repository\'s list')
    t.same(repo.listAndCount({}, query, {}, READER), { items: before, total: 40 }, 'and its page with the total')
    t.match(heard[0], PAGE_QUERY, 'the page query, heard on fastify-views:sql')
    t.notOk(heard.at(-1)?.includes(' IN (SELECT '), 'the count is one statement')
  })
}

test('SQLite: the statement of a page query, each value where its placeholder is', async (t) => {
  const b = new SqlBuilder('sqlite', POSTS)
  const likes = '(SELECT CAST(COUNT(*) AS INTEGER) FROM likes l WHERE l.post_id = posts.id)'
  const from = '"posts" LEFT JOIN authors a ON a.id = posts.author_id AND a.id > ?'
  const order = `ORDER BY ${likes} DESC NULLS FIRST, "posts"."id" ASC NULLS LAST`
  t.strictSame(b.select({ liked: 1 }, { orderBy: [by('likes', true)], limit: 2, offset: 1, fields: ['title', 'likes'] }, { reader: 7 }), {
    sql: `SELECT "posts"."id" AS "id", "posts"."title" AS "title", ${likes} AS "likes" FROM ${from} ` +
      `WHERE "posts"."id" IN (SELECT "posts"."id" FROM ${from} WHERE (CASE WHEN EXISTS (SELECT 1 FROM likes l WHERE l.post_id = posts.id AND l.member_id = ?) THEN 1 ELSE 0 END) = ? ` +
      `${order} LIMIT 2 OFFSET 1) ${order}`,
    params: [0, 0, 7, 1],
    returns: 'rows'
  }, 'the fields asked for around the keys\' subquery, which computes only what it filters and orders by; the joins\' values bound twice')
  const grouped = new SqlBuilder('sqlite', COMMENTS).select({}, { orderBy: [by('body')], perGroup: { field: 'post_id', limit: 2 }, fields: ['size'] })
  t.equal(grouped.sql, 'SELECT "comments"."post_id" AS "post_id", "comments"."n" AS "n", "comments"."body" AS "body", (length(comments.body)) AS "size" FROM "comments" ' +
    'WHERE ("comments"."post_id", "comments"."n") IN (SELECT "post_id", "n" FROM (' +
    'SELECT "comments"."post_id" AS "post_id", "comments"."n" AS "n", ROW_NUMBER() OVER (PARTITION BY "comments"."post_id" ORDER BY "comments"."body" ASC NULLS LAST, ' +
    '"comments"."post_id" ASC NULLS LAST, "comments"."n" ASC NULLS LAST) AS "fv_rank" FROM "comments") AS "fv_grouped" WHERE "fv_rank" <= 2) ' +
    'ORDER BY "comments"."body" ASC NULLS LAST, "comments"."post_id" ASC NULLS LAST, "comments"."n" ASC NULLS LAST', 'per group: the ranked keys, a key of two columns as a row value')
})

test('a third dialect keeps the one statement, unless it declares the page query', async (t) => {
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  for (const statement of [...DDL, ...seedRows()]) db.exec(statement)
  const query = { orderBy: [by('top_tag', true)], limit: 5, offset: 5 }
  const third: Dialect = { ...sqliteDialect, name: 'third', keysFirstPages: undefined }
  const declared: Dialect = { ...sqliteDialect, name: 'third', keysFirstPages: true }
  const one = new SqlBuilder(third, POSTS).select({}, query, READER)
  const page = new SqlBuilder(declared, POSTS).select({}, query, READER)
  t.notOk(one.sql.includes(' IN (SELECT '), 'one statement: a database may refuse LIMIT inside IN (MySQL)')
  t.match(page.sql, PAGE_QUERY, 'the page query, declared')
  t.same(await sqliteRun(db)(page), await sqliteRun(db)(one), 'the same rows')
  const declines: Dialect = { ...sqliteDialect, name: 'third', keysFirstPages: false }
  t.notOk(new SqlBuilder(declines, POSTS).select({}, query).sql.includes(' IN (SELECT '), 'declared false: one statement')
})

const started = await postgres()
const skip = 'skip' in started ? started.skip : false
if ('server' in started) t0.teardown(() => { started.server.stop() })

test('PostgreSQL: every kind of list answers the rows it answered in one statement', { skip }, async (t) => {
  if (!('server' in started)) return
  const { pool } = await freshDatabase(started.server, 'page_queries')
  t.teardown(() => pool.end())
  for (const statement of [...DDL, ...seedRows()]) await pool.query(statement)
  const run: Run = async ({ sql: text, params }) => (await pool.query(text, params)).rows
  await sameRows(t, postgresDialect, run)

  const heard = heardStatements(t)
  const repo = new PostgresRepository(pool, POSTS)
  const query = { orderBy: [by('score', true)], limit: 5, offset: 30 }
  const one = new SqlBuilder(oneStatement(postgresDialect), POSTS)
  const before = await run(one.select({ deleted_at: null }, query, READER))
  t.same(await repo.list({ deleted_at: null }, query, READER), before, 'the repository\'s list')
  t.match(heard.find((text) => text.includes('FROM "posts"')), PAGE_QUERY, 'the page query, heard on fastify-views:sql')
})

// ---------------------------------------------------------------------------------------------
// The lending example with 20,000 books and 6,666 returned loans: the pages of issue 53.

/**
 * The requests of issue 53, with the order and window each reads, and whether it is the page query:
 * a first page is one statement, which both databases answered as fast (page-query.ts, `keysFirst`).
 */
const REQUESTS = [
  { url: '/books?offset=10000', orderBy: [by('title')], limit: 10, offset: 10000, keysFirst: true },
  { url: '/books?sort=-loans_count&limit=50', orderBy: [by('loans_count', true)], limit: 50, offset: 0, keysFirst: false },
  { url: '/books?sort=-loans_count&offset=9990', orderBy: [by('loans_count', true)], limit: 10, offset: 9990, keysFirst: true }
]

/**
 * The bound each request must answer in. The issue's target is 100 ms; these pages answered in 10 to
 * 75 ms on two cores at a load of ten (docs/repositories.md, "Page queries"), where the one statement
 * the page query replaced took up to 0.3 s. The suite runs beside other test files on such machines,
 * so the bound gives ten times room over the target.
 */
const BOUND_MS = 1000
const RUNS = 7

/** The rows a fresh library gets to have issue 53's size: books 9 to 20,000, each in a genre, and 6,666 returned loans. */
const GROWTH = {
  sqlite: [
    `WITH RECURSIVE n(i) AS (SELECT 9 UNION ALL SELECT i + 1 FROM n WHERE i < 20000)
     INSERT INTO books (id, title, author, year, available, updated_at)
     SELECT i, 'Volume ' || printf('%05d', (i * 7919) % 20000), 'Author ' || (i % 500), 1800 + i % 220, 1, '2026-01-05T09:00:00.000Z' FROM n`,
    'INSERT INTO book_genres (book_id, genre_id) SELECT id, 1 + id % 5 FROM books WHERE id > 8',
    `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6666)
     INSERT INTO loans (member_id, book_id, borrowed_at, due_at, returned_at, updated_at)
     SELECT 1 + i % 3, 1 + (i * i) % 20000, '2025-06-01T09:00:00.000Z', '2025-06-22T09:00:00.000Z', '2025-06-20T09:00:00.000Z', '2025-06-20T09:00:00.000Z' FROM n`
  ],
  postgres: [
    `INSERT INTO books (id, title, author, year, available, updated_at)
     SELECT i, 'Volume ' || lpad(((i * 7919) % 20000)::text, 5, '0'), 'Author ' || (i % 500), 1800 + i % 220, TRUE, '2026-01-05T09:00:00.000Z'
     FROM generate_series(9, 20000) AS i`,
    'INSERT INTO book_genres (book_id, genre_id) SELECT id, 1 + id % 5 FROM books WHERE id > 8',
    `INSERT INTO loans (member_id, book_id, borrowed_at, due_at, returned_at, updated_at)
     SELECT 1 + i % 3, 1 + (i * i) % 20000, '2025-06-01T09:00:00.000Z', '2025-06-22T09:00:00.000Z', '2025-06-20T09:00:00.000Z', '2025-06-20T09:00:00.000Z'
     FROM generate_series(1, 6666) AS i`,
    // What autovacuum would have done by the time such a library is read.
    'ANALYZE'
  ]
}

/** The ids of a page, read by SQL of this test's own: the loans counted by a grouped join, not the example's subquery. */
function expectedIds (orderBy: OrderKey[], limit: number, offset: number): string {
  const order = orderBy[0].field === 'title' ? 'b.title, b.id' : 'COALESCE(c.n, 0) DESC, b.id'
  return `SELECT b.id FROM books b LEFT JOIN (SELECT book_id, COUNT(*) AS n FROM loans GROUP BY book_id) c ON c.book_id = b.id ORDER BY ${order} LIMIT ${limit} OFFSET ${offset}`
}

const median = (times: number[]): number => [...times].sort((a, b) => a - b)[Math.floor(times.length / 2)]
const ms = (time: number): string => `${time.toFixed(1)} ms`

/**
 * Issue 53's requests on one database: each page right (its books, in order, against SQL of this
 * test's own), read by the page query, and answered within `BOUND_MS` (the median of `RUNS`). The
 * medians of the page query and of the one statement it replaced, run on the database directly,
 * are reported.
 */
async function lendingPages (
  t: Test, app: FastifyInstance, databaseUrl: string, query: (text: string, params?: unknown[]) => Promise<Row[]>
): Promise<void> {
  const heard = heardStatements(t)
  const store = await openStore({ databaseUrl })
  t.teardown(() => store.close())
  const books = store.books
  if (!(books instanceof AsyncSqlRepository)) throw new Error('the example\'s books are a SQL repository')
  for (const { url, orderBy, limit, offset, keysFirst } of REQUESTS) {
    const times: number[] = []
    let body: { books: Array<{ id: number, loans_count: number }>, booksCount: number } | undefined
    for (let run = 0; run <= RUNS; run++) {
      heard.length = 0
      const start = performance.now()
      const res = await app.inject({ url, headers: { 'x-member-id': '1' } })
      // The first request warms the statement caches and the database's pages: not counted.
      if (run > 0) times.push(performance.now() - start)
      t.equal(res.statusCode, 200)
      body = res.json()
    }
    t.same(body!.books.map((book) => book.id), (await query(expectedIds(orderBy, limit, offset))).map((row) => Number(row.id)), `${url}: the books of the page, in order`)
    t.equal(body!.booksCount, 20000)
    const read = heard.find((text) => text.includes('FROM "books"') && !text.includes('COUNT(*) AS n'))
    t.equal(PAGE_QUERY.test(read ?? ''), keysFirst, `${url}: read by ${keysFirst ? 'the page query' : 'one statement'}`)
    const answered = median(times)
    t.ok(answered < BOUND_MS, `${url}: answered in ${ms(answered)} (median of ${RUNS}), under ${BOUND_MS} ms`)

    // The statement alone, as the page query and as the one statement of before (the same list, its window appended).
    const page = books.builder.select({}, { orderBy, limit, offset }, { reader: 1 })
    const whole = books.builder.select({}, { orderBy }, { reader: 1 })
    const before = { ...whole, sql: `${whole.sql} LIMIT ${limit}${offset > 0 ? ` OFFSET ${offset}` : ''}` }
    const timed = async (statement: Statement): Promise<[number, Row[]]> => {
      const times: number[] = []
      let rows: Row[] = []
      for (let run = 0; run <= RUNS; run++) {
        const start = performance.now()
        rows = await query(statement.sql, statement.params)
        if (run > 0) times.push(performance.now() - start)
      }
      return [median(times), rows]
    }
    const [after, pageRows] = await timed(page)
    const [replaced, beforeRows] = await timed(before)
    t.same(pageRows, beforeRows, `${url}: the same rows as the one statement`)
    t.comment(keysFirst
      ? `${url}: ${ms(answered)} through HTTP; the page query ${ms(after)}, the one statement it replaced ${ms(replaced)} (medians of ${RUNS})`
      : `${url}: ${ms(answered)} through HTTP; its one statement, as before, ${ms(after)} and ${ms(replaced)} (medians of ${RUNS})`)
  }
}

test('the lending example on SQLite: issue 53\'s pages of 20,000 books', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-pages-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'library.db')
  const app = await buildApp({ databaseUrl: `sqlite:${file}`, logger: false })
  t.teardown(() => app.close())
  // The example's driver: one SQLite per process sees the other connections' locks.
  const db = openSqlite(file, { driver: 'node:sqlite' })
  t.teardown(() => db.close())
  for (const statement of GROWTH.sqlite) db.exec(statement)
  await lendingPages(t, app, `sqlite:${file}`, async (text, params = []) => sqliteRows(db, text, params))
})

test('the lending example on PostgreSQL: issue 53\'s pages of 20,000 books', { skip }, async (t) => {
  if (!('server' in started)) return
  const server: PgServer = started.server
  const { pool } = await freshDatabase(server, 'library_pages')
  t.teardown(() => pool.end())
  const url = server.url.replace(/\/postgres$/, '/library_pages')
  const app = await buildApp({ databaseUrl: url, logger: false })
  t.teardown(() => app.close())
  for (const statement of GROWTH.postgres) await pool.query(statement)
  await lendingPages(t, app, url, async (text, params) => (await pool.query(text, params)).rows)
})
