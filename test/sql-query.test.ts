// Repositories over queries on SQLite (this run's driver; node-sqlite.test.ts runs this file over
// node:sqlite too) and on PostgreSQL (once, in the better-sqlite3 run): test/sql-query-cases.ts.
import t0 from 'tap'
import pg from 'pg'
import { Type } from '@sinclair/typebox'
import { AsyncGenericViewSet, GenericViewSet, asyncRepository } from '../lib/generics.js'
import { AsyncSqliteRepository, PostgresRepository, SqlBuilder, SqliteRepository, option, sql } from '../lib/stores/sql/index.js'
import { build } from './helpers.js'
import { driver, openSqlite, scalar, type TestDatabase } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'
import {
  Article, ArticleFilter, ArticleIn, DROP, POSTGRES, SQLITE, articleOptions, queryCases, schema, type ArticleT
} from './sql-query-cases.js'

t0.test(`SQLite (${driver}): repositories over queries`, async (t) => {
  let db: TestDatabase | undefined
  t.teardown(() => db?.close())
  const reset = async (): Promise<void> => {
    db?.close()
    db = openSqlite(':memory:')
    for (const statement of schema(SQLITE)) db.exec(statement)
  }
  await queryCases(t, reset, () => new AsyncSqliteRepository<ArticleT>(db!, articleOptions(SQLITE)),
    async (text) => {
      if (/^\s*SELECT/i.test(text)) return db!.prepare(text).all() as Array<Record<string, unknown>>
      db!.exec(text)
      return []
    })
})

t0.test('PostgreSQL: repositories over queries', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // An idle client reports the server's shutdown at the end of the run.
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  const reset = async (): Promise<void> => {
    for (const statement of [...DROP, ...schema(POSTGRES)]) await pool.query(statement)
  }
  await queryCases(t, reset, () => new PostgresRepository<ArticleT>(pool, articleOptions(POSTGRES)),
    async (text) => (await pool.query(text)).rows)

  // PostgreSQL's own SQL for patterns and for an offset without a limit, run by the server.
  await reset()
  const repo = new PostgresRepository<ArticleT>(pool, articleOptions(POSTGRES))
  const ids = async (criteria: Record<string, unknown>, offset?: number): Promise<number[]> =>
    (await repo.list(criteria, { orderBy: [{ field: 'id', descending: false }], offset }, {})).map((a) => a.id)
  t.same(await ids({ title__like: '%a' }), [1, 2, 3, 4], 'LIKE: the titles ending in a lower-case a')
  t.same(await ids({ title__like: 'a%' }), [], 'LIKE tells case apart')
  t.same(await ids({ title__ilike: 'a%' }), [1], 'ILIKE does not')
  t.same(await ids({ title__like: 'Alph%' }), [1])
  t.same(await ids({ title__like: 'Alph\\%' }), [], 'a backslash makes a wildcard a plain character (ESCAPE \'\\\')')
  t.same(await ids({ title__like: '%a' }, 2), [3, 4], 'an offset without a limit skips rows and keeps the rest')
})

t0.test(`SQLite (${driver}): the sync family over a query, and what a query repository refuses`, async (t) => {
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  for (const statement of schema(SQLITE)) db.exec(statement)
  const repo = new SqliteRepository<ArticleT>(db, articleOptions(SQLITE))
  t.same(repo.readOnlyFields, ['author_name', 'favorites_count', 'favorited', 'is_long', 'tag_list'], 'the computed fields are read-only')
  t.same(repo.fieldNames, ['id', 'title', 'body', 'author_id', 'updated_at', ...repo.readOnlyFields], 'and a filter may name them')
  t.same(asyncRepository(repo).readOnlyFields, repo.readOnlyFields, 'asyncRepository carries them over')
  t.notOk(repo.columnFacts?.has('favorited'), 'a computed field says nothing of its type')
  t.ok(repo.columnFacts?.has('title'))

  class Articles extends GenericViewSet.with(
    {
      responseSchema: Article,
      createSchema: ArticleIn,
      detailParams: Type.Object({ id: Type.Integer() }),
      filter: ArticleFilter,
      repository: repo
    }
  ) {
    override getRepositoryOptions () { return { reader: 1 } }
  }
  const app = await build({ views: [{ view: Articles, prefix: '/articles' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/articles?favorited=1&sort=-favorites_count')).json().map((a: ArticleT) => a.id), [1, 2], 'a sync view reads through the query')
  t.match((await app.inject({ method: 'POST', url: '/articles', payload: { title: 'Sync', author_id: 3 } })).json(), { author_name: 'cy', favorited: 0 })

  // A body written as it is that names a computed field would fail on the first request: refused at registration.
  const Writable = Type.Object(
    { title: Type.String(), author_id: Type.Integer(), favorites_count: Type.Integer(), tag_list: Type.String() }
  )
  class Counting extends GenericViewSet.with(
    { responseSchema: Article, createSchema: Writable, updateSchema: ArticleIn, repository: repo }
  ) {}
  await t.rejects(build({ views: [{ view: Counting, prefix: '/c' }] }), {
    code: 'FV_ERR_UNKNOWN_FIELD',
    message: 'Cannot register Counting: the body of create has "favorites_count", "tag_list", which its repository computes: read-only, never written. ' +
      'Leave them out of the body schema (Type.Omit(Schema, ["favorites_count", "tag_list"])), or, if create (or a write seam: performCreate, performUpdate) ' +
      'maps the body to the table\'s columns, say so: static override mappingActions = [\'create\']'
  })
  class Both extends AsyncGenericViewSet.with(
    {
      responseSchema: Article,
      createSchema: ArticleIn,
      updateSchema: Type.Object({ title: Type.String(), favorited: Type.Integer() }),
      repository: asyncRepository<ArticleT, typeof repo>(repo)
    }
  ) {}
  await t.rejects(build({ views: [{ view: Both, prefix: '/b' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /the body of partialUpdate, update has "favorited", .* say so: static override mappingActions = \['partialUpdate', 'update'\]/ })

  // An inner join that hides the written row: the write is refused and rolled back, not answered as nothing.
  db.exec('PRAGMA foreign_keys = OFF')
  t.throws(() => repo.create({ title: 'Orphan', author_id: 99 }), {
    code: 'FV_ERR_SQL_OPTION',
    message: new RegExp('^"articles": the row written with id \\d+ is not among the rows its reads see: a join of the repository drops it ' +
      '\\(an inner join to a row it does not have\\); join optional rows with LEFT JOIN$')
  })
  t.equal(scalar(db, "SELECT COUNT(*) FROM articles WHERE title = 'Orphan'"), 0, 'nothing written')
  t.throws(() => repo.update({ id: 1 }, { author_id: 99 }), { code: 'FV_ERR_SQL_OPTION' })
  t.equal(scalar(db, 'SELECT author_id FROM articles WHERE id = 1'), 1, 'the update rolled back')
  t.throws(() => repo.createMany([{ title: 'Orphan', author_id: 99 }]), { code: 'FV_ERR_SQL_OPTION' })
  t.same(repo.updateMany({ body: 'none' }, { favorited: 1 }), [], 'no reader: nothing favorited, nothing updated')
  t.equal(repo.count({ favorited: 1 }, {}, { reader: 2 }), 2, 'count binds the options too')
})

t0.test('SqlBuilder over a query: the statements, and every value in the order of its placeholder', async (t) => {
  const b = new SqlBuilder('postgres', {
    table: 'a',
    columns: ['id', 'n'],
    joins: ['JOIN b ON b.id = a.id', sql`LEFT JOIN m ON m.id = a.id AND m.k = ${option('k')}`],
    computed: { c: sql`a.n + ${option('x')}`, d: sql`${7} * ${sql`b.v - ${option('x')}`}` }
  })
  t.same(b.fieldNames, ['id', 'n', 'c', 'd'])
  t.same([...b.optionKeys], ['x', 'k'], 'the options the expressions bind are never criteria')
  const options = { x: 10, k: 'K' }
  t.strictSame(b.select({ c__gt: 1, n: 2 }, { orderBy: [{ field: 'c', descending: false }], after: [5], limit: 2 }, options), {
    sql: 'SELECT "a"."id" AS "id", "a"."n" AS "n", (a.n + $1) AS "c", ($2 * b.v - $3) AS "d" FROM "a" JOIN b ON b.id = a.id LEFT JOIN m ON m.id = a.id AND m.k = $4 ' +
      'WHERE (a.n + $5) > $6 AND "a"."n" = $7 AND ((((a.n + $8) > $9 OR (a.n + $10) IS NULL))) ORDER BY (a.n + $11) ASC NULLS LAST, "a"."id" ASC NULLS LAST LIMIT 2',
    params: [10, 7, 10, 'K', 10, 1, 2, 10, 5, 10, 10],
    returns: 'rows'
  }, 'select list, joins, WHERE, the seek and ORDER BY, each value where its placeholder is')
  t.strictSame(b.count({ d: 3, x: 99 }, { search: { term: 'Q', fields: ['c'] } }, { k: 'K' }), {
    sql: 'SELECT COUNT(*) AS n FROM "a" JOIN b ON b.id = a.id LEFT JOIN m ON m.id = a.id AND m.k = $1 WHERE ($2 * b.v - $3) = $4 AND (strpos(lower((a.n + $5)), $6) > 0)',
    params: ['K', 7, null, 3, null, 'q'],
    returns: 'rows'
  }, 'a count binds the joins\' values first; a missing option is NULL; an option is never a criterion')
  t.strictSame(b.selectOne({ id: 1 }, options), {
    sql: 'SELECT "a"."id" AS "id", "a"."n" AS "n", (a.n + $1) AS "c", ($2 * b.v - $3) AS "d" FROM "a" JOIN b ON b.id = a.id LEFT JOIN m ON m.id = a.id AND m.k = $4 WHERE "a"."id" = $5',
    params: [10, 7, 10, 'K', 1],
    returns: 'row'
  }, 'a detail read')
  t.same(b.selectOne({ id: 2 }, { x: 1 }).params, [1, 7, 1, null, 2], 'from the cache, with this call\'s values')
  t.equal(b.lockOne({ id: 1 }, options).sql.endsWith(' WHERE "a"."id" = $5 FOR NO KEY UPDATE OF "a"'), true, 'PostgreSQL locks the base table\'s row only')
  t.strictSame(b.insert({ n: 1 }), { sql: 'INSERT INTO "a" ("n") VALUES ($1) RETURNING "id"', params: [1], returns: 'row' }, 'a write returns the key; the row is read back')
  t.throws(() => b.insert({ c: 1 }), { code: 'FV_ERR_SQL_NAME', message: '"a": "c" is a computed field, read-only; a write sets the table\'s columns (id, n)' })
  t.throws(() => b.update({ id: 1 }, { d: 1 }, true), { code: 'FV_ERR_SQL_NAME', message: /"d" is a computed field/ })
  t.throws(() => b.insert({ ghost: 1 }), { code: 'FV_ERR_SQL_NAME', message: '"a": no column "ghost"' })
  t.strictSame(b.insert({ n: 2, id: 3 }), { sql: 'INSERT INTO "a" ("n", "id") VALUES ($1, $2) RETURNING "id"', params: [2, 3], returns: 'row' })
  t.equal(b.insert({ n: 4, id: 5 }).sql, b.insert({ n: 2, id: 3 }).sql, 'the text of one set of columns is built once')
  t.throws(() => b.insert({ 'n\nid': 1 }), { code: 'FV_ERR_SQL_NAME', message: '"a": no column "n\\nid"' }, 'a name that joins like two columns is not them')

  const lite = new SqlBuilder('sqlite', { table: 'a', columns: ['id', 'n'], computed: { flag: sql`a.n = ${true}` } })
  t.strictSame(lite.select({ flag__like: 'x%' }, { orderBy: [] }), {
    sql: 'SELECT "a"."id" AS "id", "a"."n" AS "n", (a.n = ?) AS "flag" FROM "a" WHERE ((a.n = ?) LIKE ? ESCAPE \'\\\' AND (a.n = ?) GLOB ?) ORDER BY "a"."id" ASC NULLS LAST',
    params: [1, 1, 'x%', 1, 'x*'],
    returns: 'rows'
  }, 'SQLite: an expression used twice binds its values twice; constants convert as SQLite takes them')
  t.equal(lite.lockOne({ id: 1 }).sql.endsWith('WHERE "a"."id" = ?'), true, 'SQLite\'s write transaction holds the file: no lock clause')
})

t0.test('sql, option and the table options of a query: mistakes are refused when the repository is made', async (t) => {
  const make = (options: object) => () => new SqlBuilder('sqlite', { table: 'a', columns: ['id', 'n'], ...options })
  t.throws(make({ computed: { n: 'a.n + 1' } }), { code: 'FV_ERR_SQL_NAME', message: '"a": "n" is both a column and a computed field; name the computed field otherwise' })
  t.throws(make({ computed: { 'bad name': '1' } }), { code: 'FV_ERR_SQL_NAME', message: 'Not a plain SQL identifier: "bad name"' })
  t.throws(make({ computed: { c: 42 } }), { code: 'FV_ERR_SQL_OPTION', message: '"a": computed.c must be SQL text or a sql`...` expression; got number' })
  t.throws(make({ joins: [null] }), { code: 'FV_ERR_SQL_OPTION', message: '"a": joins[0] must be SQL text or a sql`...` expression; got null' })
  t.throws(make({ computed: { c: "a.tags ? 'x'" } }), { code: 'FV_ERR_SQL_FRAGMENT', message: /"a": computed.c: the SQL text has a "\?", which would be read as a placeholder/ })
  t.throws(make({ computed: { c: sql`${option('n')}` } }), { code: 'FV_ERR_SQL_OPTION', message: '"a": option("n") has the name of a field; an option is never a criterion, so name it otherwise' })
  t.throws(() => sql`a ? ${1}`, { code: 'FV_ERR_SQL_FRAGMENT', message: /^sql`...`: the SQL text has a "\?"/ })
  t.throws(() => option(''), { code: 'FV_ERR_SQL_FRAGMENT', message: 'option(name) takes the name of a repository option; got ""' })
  t.throws(() => option(42 as unknown as string), { code: 'FV_ERR_SQL_FRAGMENT', message: 'option(name) takes the name of a repository option; got 42' }, 'a name is a string')
  t.throws(() => sql`a = ${1} ? b`, { code: 'FV_ERR_SQL_FRAGMENT', message: /^sql`...`: the SQL text has a "\?"/ }, 'after a value too')
  const expression = sql`a.n > ${1} AND a.k = ${option('k')}`
  t.same({ text: expression.text, values: expression.values.length, options: expression.optionNames }, { text: 'a.n > ? AND a.k = ?', values: 2, options: ['k'] })
  t.equal(make({})().isQuery, false, 'a table without joins or computed fields is no query: its SQL is as before')
  t.equal(make({ joins: 'JOIN b ON b.id = a.id' })().selectList, '"a"."id" AS "id", "a"."n" AS "n"', 'joins alone qualify the columns')
})
