// Distinct values of one field (`DistinctRepository`, docs/repositories.md "Distinct values"): the same
// answers from the memory store, SQLite (sync and async) and PostgreSQL, over a table and over a query,
// and a view's own route that sends them.
import t0, { type Test } from 'tap'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import { Get } from '../lib/index.js'
import { AsyncGenericListAPIView, MemoryRepository, asyncRepository } from '../lib/generics.js'
import type { AsyncDistinctRepository, DistinctValue } from '../lib/types.js'
import {
  AsyncSqliteRepository, PostgresRepository, SqlBuilder, SqliteRepository, option, sql, type SqlTableOptions
} from '../lib/stores/sql/index.js'
import { distinctOf, type AsyncRepository, type Criteria, type DistinctQuery, type Repository } from '../lib/stores/repository.js'
import { build } from './helpers.js'
import { driver, openSqlite, scalar, type TestDatabase } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'

const Tag = Type.Object({
  id: Type.Integer(),
  article_id: Type.Integer(),
  tag: Type.Union([Type.String(), Type.Null()]),
  author_id: Type.Integer(),
  featured: Type.Boolean()
})
type TagRow = Static<typeof Tag>

/** Seven tags of four articles: 'sql' and 'db' twice, one tag null. */
const ROWS: TagRow[] = [
  { id: 1, article_id: 1, tag: 'sql', author_id: 1, featured: true },
  { id: 2, article_id: 1, tag: 'db', author_id: 1, featured: false },
  { id: 3, article_id: 2, tag: 'web', author_id: 2, featured: false },
  { id: 4, article_id: 3, tag: 'sql', author_id: 1, featured: true },
  { id: 5, article_id: 3, tag: null, author_id: 3, featured: false },
  { id: 6, article_id: 4, tag: 'db', author_id: 2, featured: false },
  { id: 7, article_id: 4, tag: 'api', author_id: 3, featured: true }
]

const COLUMNS = ['id', 'article_id', 'tag', 'author_id', 'featured'] as const
/** SQLite keeps booleans as 0 and 1: decoded as every read decodes them (PostgreSQL's are left as they are). */
const TABLE = { table: 'article_tags', columns: COLUMNS, decode: { featured: 'boolean' }, optionKeys: ['batch_size'] } satisfies SqlTableOptions<TagRow>

/** The tags as a query: who wrote each (a join), and whether its article is new (a computed field binding a value). */
const QUERY = {
  ...TABLE,
  joins: 'JOIN members m ON m.id = article_tags.author_id',
  computed: {
    author_name: 'm.name',
    era: sql`CASE WHEN article_tags.article_id > ${2} THEN 'new' ELSE 'old' END`,
    reader_owns: sql`CASE WHEN article_tags.author_id = ${option('reader')} THEN 'mine' ELSE 'theirs' END`
  }
} satisfies SqlTableOptions<TagRow & { author_name: string, era: string, reader_owns: string }>

const schema = (boolean: string): string[] => [
  'CREATE TABLE members (id INTEGER PRIMARY KEY, name TEXT NOT NULL)',
  `CREATE TABLE article_tags (id INTEGER PRIMARY KEY, article_id INTEGER NOT NULL, tag TEXT, author_id INTEGER NOT NULL, featured ${boolean} NOT NULL)`,
  "INSERT INTO members (id, name) VALUES (1, 'ada'), (2, 'bob'), (3, 'cy')"
]

/** The tables and rows above in a SQLite database, booleans as 0 and 1. */
function seedSqlite (db: TestDatabase): void {
  for (const statement of schema('INTEGER')) db.exec(statement)
  const insert = db.prepare('INSERT INTO article_tags (id, article_id, tag, author_id, featured) VALUES (?, ?, ?, ?, ?)')
  for (const row of ROWS) insert.run(row.id, row.article_id, row.tag, row.author_id, row.featured ? 1 : 0)
}

/** Any repository with `distinct`, sync or async: each call awaited, a throw seen as a rejection. */
interface Distinct {
  distinct (field: string, criteria?: Criteria, query?: DistinctQuery, options?: Record<string, unknown>): unknown
}
const reader = (repo: Distinct) =>
  async (field: string, criteria?: Criteria, query?: DistinctQuery): Promise<unknown> =>
    await repo.distinct(field, criteria, query)

/** What every store answers alike, over the seven rows above. */
async function commonCases (t: Test, repo: Distinct): Promise<void> {
  const distinct = reader(repo)
  t.same(await distinct('tag'), ['api', 'db', 'sql', 'web'], 'each tag once, smallest first, the null left out')
  t.same(await distinct('tag', {}), ['api', 'db', 'sql', 'web'], 'no criteria: every row')
  t.same(await distinct('tag', { article_id__in: [1, 3] }), ['db', 'sql'], 'criteria narrow the rows first')
  t.same(await distinct('tag', { author_id: 3 }), ['api'], 'a row with a null tag adds nothing')
  t.same(await distinct('tag', { tag__is_null: true }), [], 'only null tags: no value')
  t.same(await distinct('tag', { tag__like: '%b%', author_id__ne: 2 }), ['db'], 'operators, as list takes them')
  t.same(await distinct('tag', {}, { descending: true }), ['web', 'sql', 'db', 'api'], 'descending: largest first')
  t.same(await distinct('tag', {}, { limit: 2 }), ['api', 'db'], 'limit: the first values of the order')
  t.same(await distinct('tag', {}, { limit: 1, descending: true }), ['web'], 'limit of a descending read')
  t.same(await distinct('tag', {}, { limit: 0 }), [], 'limit 0')
  t.same(await distinct('tag', {}, { limit: 10 }), ['api', 'db', 'sql', 'web'], 'a limit beyond the values')
  t.same(await distinct('tag', {}, { search: { term: 'E', fields: ['tag'] } }), ['web'], 'a search narrows, case-insensitively')
  t.same(await distinct('article_id', { tag: 'sql' }), [1, 3], 'numbers stay numbers')
  t.same(await distinct('featured'), [false, true], 'booleans decoded as reads decode them, false first')
  t.same(await distinct('featured', { tag: 'db' }), [false])
  t.same(await distinct('id', { id__gt: 5 }, { descending: true }), [7, 6])
  await t.rejects(distinct('tag', {}, { limit: -1 }), { code: 'FV_ERR_SQL_ROW_COUNT' }, 'a negative limit is refused')
  await t.rejects(distinct('tag', {}, { limit: 1.5 }), { code: 'FV_ERR_SQL_ROW_COUNT' }, 'a fractional limit is refused')
  // What list and count select, distinct narrows the same way.
  const listed = await (repo as unknown as AsyncRepository<TagRow>).list({ author_id__ne: 1 }, { orderBy: [] })
  const expected = [...new Set(listed.map((row) => row.tag).filter((tag) => tag !== null))].sort()
  t.same(await distinct('tag', { author_id__ne: 1 }), expected, 'the values of the rows list selects')
}

/** What a SQL store answers besides: the fields it may read are its columns, nothing else reaches the SQL. */
async function sqlCases (t: Test, repo: Distinct, count: () => Promise<number>): Promise<void> {
  const distinct = reader(repo)
  await t.rejects(distinct('colour'), {
    code: 'FV_ERR_SQL_NAME',
    message: '"article_tags": no column "colour" to read distinct values of (its fields: id, article_id, tag, author_id, featured)'
  }, 'an unknown field, named with the fields there are')
  for (const field of ['tag; DROP TABLE article_tags', 'tag" FROM article_tags; --', 'TAG', ' tag', 'tag\n']) {
    await t.rejects(distinct(field), { code: 'FV_ERR_SQL_NAME', message: /no column .* to read distinct values of/ }, JSON.stringify(field))
  }
  t.equal(await count(), 7, 'the table is still there, every row in it')
  t.same(await distinct('tag', { batch_size: 10, author_id: 1 }), ['db', 'sql'], 'an option key is no criterion, as for list')
  await t.rejects(distinct('tag', { colour: 'red' }), { code: 'FV_ERR_SQL_NAME', message: /no column "colour"/ }, 'an unknown criterion, as list refuses it')
  t.same(await distinct('tag', {}, { args: [{ sql: 'article_id > ?', params: [2] }] }), ['api', 'db', 'sql'], 'positional SQL fragments narrow too')
}

/** A query repository: distinct values of a joined field and of computed ones, their bound values in order. */
async function queryCases (t: Test, repo: Distinct): Promise<void> {
  const distinct = reader(repo)
  t.same(await distinct('author_name'), ['ada', 'bob', 'cy'], 'a joined field')
  t.same(await distinct('author_name', { tag: 'sql' }), ['ada'])
  t.same(await distinct('id', { author_name: 'cy' }, { descending: true }), [7, 5], 'a column whose name a joined table has too: ordered by the selected one')
  t.same(await distinct('era', { author_name: 'bob' }), ['new', 'old'], 'a computed field binding a value, criteria on another')
  t.same(await distinct('era', { era: 'new', author_name__ne: 'cy' }), ['new'], 'criteria on the same computed field')
  t.same(await distinct('tag', { era: 'new' }), ['api', 'db', 'sql'], 'a column, criteria on a computed field')
  t.same(await distinct('tag', { era: 'old' }, { descending: true, limit: 2 }), ['web', 'sql'])
  t.same(await repo.distinct('reader_owns', {}, {}, { reader: 2 }), ['mine', 'theirs'], 'options bind what the query reads')
  t.same(await repo.distinct('tag', { reader_owns: 'mine' }, {}, { reader: 3 }), ['api'])
  await t.rejects(distinct('nope'), {
    code: 'FV_ERR_SQL_NAME',
    message: '"article_tags": no column "nope" to read distinct values of (its fields: id, article_id, tag, author_id, featured, author_name, era, reader_owns)'
  }, 'the fields named are the columns and the computed fields')
}

t0.test('MemoryRepository: distinct values, sync and through asyncRepository', async (t) => {
  const memory = new MemoryRepository<TagRow>({ rows: ROWS })
  await commonCases(t, memory)
  await commonCases(t, asyncRepository<TagRow, MemoryRepository<TagRow>>(memory))
  t.same(memory.distinct('colour' as never), [], 'no fixed set of fields: a field no row has reads as null, so no value')
  t.same(memory.distinct('tag; DROP TABLE x' as never), [], 'any name is a key of the rows, never code')
  const mixed = new MemoryRepository({ rows: [{ v: 2 }, { v: '2' }, { v: 1 }, { v: '10' }, { v: 1 }, { v: undefined }, {}] })
  t.same(mixed.distinct('v'), [1, 2, '10', '2'], 'kinds never mix: numbers, then strings (by type name), each in its own order')
  const dates = new MemoryRepository({ rows: [{ v: new Date(5) }, { v: new Date(1) }, { v: new Date(5) }] })
  t.same(dates.distinct('v'), [new Date(1), new Date(5)], 'dates equal by their time')
  const arrays = new MemoryRepository({ rows: [{ v: ['a'] }, { v: ['a'] }] })
  t.equal(arrays.distinct('v').length, 2, 'arrays are never equal, as no criterion finds them equal either')
  t.throws(() => memory.distinct('tag', {}, { limit: Number.NaN }), { code: 'FV_ERR_SQL_ROW_COUNT' })
})

t0.test(`SQLite (${driver}): distinct values, the sync and the async repository`, async (t) => {
  const db: TestDatabase = openSqlite(':memory:')
  t.teardown(() => db.close())
  seedSqlite(db)
  const count = async (): Promise<number> => Number(scalar(db, 'SELECT COUNT(*) FROM article_tags'))
  const sync = new SqliteRepository<TagRow>(db, TABLE)
  await commonCases(t, sync)
  await sqlCases(t, sync, count)
  const async = new AsyncSqliteRepository<TagRow>(db, TABLE)
  await commonCases(t, async)
  await sqlCases(t, async, count)
  await queryCases(t, new SqliteRepository(db, QUERY))
  await queryCases(t, new AsyncSqliteRepository(db, QUERY))
  t.ok(Array.isArray(sync.distinct('tag')), 'the sync repository answers with values, not promises')

  const b = new SqlBuilder('sqlite', TABLE)
  t.same(b.distinct('tag', { author_id: 1 }, { limit: 5, descending: true }), {
    sql: 'SELECT DISTINCT "tag" AS "tag" FROM "article_tags" WHERE "author_id" = ? AND "tag" IS NOT NULL ORDER BY "tag" DESC NULLS FIRST LIMIT 5',
    params: [1],
    returns: 'rows'
  }, 'one statement: the field selected under its name, its nulls left out, ordered by it, the limit a checked literal')
  const q = new SqlBuilder('postgres', QUERY)
  t.same(q.distinct('era', { author_name: 'bob' }, {}), {
    sql: 'SELECT DISTINCT (CASE WHEN article_tags.article_id > $1 THEN \'new\' ELSE \'old\' END) AS "era" FROM "article_tags" ' +
      'JOIN members m ON m.id = article_tags.author_id WHERE (m.name) = $2 AND (CASE WHEN article_tags.article_id > $3 THEN \'new\' ELSE \'old\' END) IS NOT NULL ' +
      'ORDER BY "era" ASC NULLS LAST',
    params: [2, 'bob', 2],
    returns: 'rows'
  }, 'over a query: the expression written out where it is used, each value bound where its placeholder is')
  t.throws(() => b.distinct('tag; DROP TABLE x', {}, {}), { code: 'FV_ERR_SQL_NAME' }, 'the builder alone refuses a name that is no field')
})

t0.test('PostgreSQL: distinct values', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  // An idle client reports the server's shutdown at the end of the run.
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  for (const statement of schema('BOOLEAN')) await pool.query(statement)
  for (const row of ROWS) {
    await pool.query('INSERT INTO article_tags (id, article_id, tag, author_id, featured) VALUES ($1, $2, $3, $4, $5)',
      [row.id, row.article_id, row.tag, row.author_id, row.featured])
  }
  const count = async (): Promise<number> => Number((await pool.query('SELECT COUNT(*) AS n FROM article_tags')).rows[0].n)
  const repo = new PostgresRepository<TagRow>(pool, TABLE)
  await commonCases(t, repo)
  await sqlCases(t, repo, count)
  await queryCases(t, new PostgresRepository(pool, QUERY))
  await viewCases(t, repo)
})

const TagList = Type.Object({ tags: Type.Array(Type.String()) })
const AuthorList = Type.Object({ authors: Type.Array(Type.Integer()) })

/** A list view with routes of its own sending distinct values, scoped as its list is (`getKwargs`). */
async function viewCases (t: Test, tags: AsyncRepository<TagRow> & AsyncDistinctRepository<TagRow>): Promise<void> {
  class Tags extends AsyncGenericListAPIView {
    static override responseSchema = Tag
    static override repository = tags

    // Typed by the store: `distinct` is the store's, beside the protocol's methods.
    override get repository (): AsyncRepository<TagRow> & AsyncDistinctRepository<TagRow> {
      return tags
    }

    // The scope of every call of the view: the tags of authors other than 3.
    override getKwargs (): Criteria {
      return { author_id__ne: 3 }
    }

    @Get('/tags', { responseSchema: TagList })
    async allTags (): Promise<Static<typeof TagList>> {
      return { tags: await this.repository.distinct('tag', this.getKwargs()) }
    }

    @Get('/authors', { responseSchema: AuthorList })
    async authors (): Promise<Static<typeof AuthorList>> {
      // `distinctOf` types the view's repository by its rows, refusing one without `distinct`.
      const authors: Array<DistinctValue<TagRow, 'author_id'>> = await distinctOf(this.repository).distinct('author_id', {}, { descending: true })
      return { authors }
    }
  }
  const app = await build({ views: [{ view: Tags, prefix: '/articles' }] })
  t.teardown(() => app.close())
  const res = await app.inject('/articles/tags')
  t.equal(res.statusCode, 200)
  t.same(res.json(), { tags: ['db', 'sql', 'web'] }, 'the distinct tags within the view\'s scope, the null left out')
  t.same((await app.inject('/articles/authors')).json(), { authors: [3, 2, 1] })
  t.same((await app.inject('/articles')).json().map((row: TagRow) => row.id), [1, 2, 3, 4, 6], 'the list of the same scope')
}

t0.test('a view\'s own route sends distinct values (memory and async SQLite)', async (t) => {
  await viewCases(t, asyncRepository<TagRow, MemoryRepository<TagRow>>(new MemoryRepository<TagRow>({ rows: ROWS })))
  const db: TestDatabase = openSqlite(':memory:')
  t.teardown(() => db.close())
  seedSqlite(db)
  await viewCases(t, new AsyncSqliteRepository<TagRow>(db, TABLE))
})

t0.test('distinctOf: a repository without distinct is refused when asked, naming its class', async (t) => {
  class OwnRepository {
    get (): null { return null }
  }
  const own = new OwnRepository() as unknown as Repository<TagRow>
  t.throws(() => distinctOf(own), { code: 'FV_ERR_NOT_IMPLEMENTED', message: /^The repository \(OwnRepository\) has no distinct method/ })
  const bare = Object.assign(Object.create(null) as object, { get: () => null }) as unknown as Repository<TagRow>
  t.throws(() => distinctOf(bare), { code: 'FV_ERR_NOT_IMPLEMENTED', message: /^The repository \(an object\) has no distinct method/ })
  const memory = new MemoryRepository<TagRow>({ rows: ROWS })
  t.equal(distinctOf(memory), memory, 'one with distinct is itself')
})
