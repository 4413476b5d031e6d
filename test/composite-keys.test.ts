// Composite primary keys (docs/repositories.md, "Composite keys"): a link table keyed by
// (article_id, user_id), with no surrogate id, on the memory store, SQLite (sync and async) and
// PostgreSQL, through repository calls and HTTP; the SQL of its point reads and writes; what assumes
// one key field and is refused; and concurrent creates of one link.
import t0, { type Test } from 'tap'
import pg from 'pg'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  AsyncGenericViewSet, CursorPaginationFilter, GenericViewSet, MemoryRepository, asyncRepository,
  type AsyncBulkRepository, type AsyncRepository, type Criteria
} from '../lib/generics.js'
import { AsyncBulkAPIViewSet, AsyncGenericBulkCreateAPIView, BulkAPIViewSet } from '../lib/bulk.js'
import {
  AsyncSqliteRepository, PostgresRepository, SqlBuilder, SqliteRepository, type SqlTableOptions
} from '../lib/stores/sql/index.js'
import { keyFieldsOf } from '../lib/stores/repository.js'
import type { ViewClass } from '../lib/types.js'
import { build, problem } from './helpers.js'
import { driver, openSqlite, scalar, type TestDatabase } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'

const Note = Type.Union([Type.String(), Type.Null()])
const Favorite = Type.Object({ article_id: Type.Integer(), user_id: Type.Integer(), note: Note }, { $id: 'Favorite' })
type FavoriteT = Static<typeof Favorite>
const FavoriteIn = Type.Object({ article_id: Type.Integer(), user_id: Type.Integer(), note: Note })
const KeyParams = Type.Object({ article_id: Type.Integer({ minimum: 1 }), user_id: Type.Integer({ minimum: 1 }) })

const KEY = ['article_id', 'user_id'] as const
const TABLE = { table: 'favorites', columns: ['article_id', 'user_id', 'note'], idColumn: ['article_id', 'user_id'] } satisfies SqlTableOptions<FavoriteT>
/** The favourites as a query, each with its user's name (a join): every write reads its row back by key. */
const QUERY = { ...TABLE, joins: 'JOIN users u ON u.id = favorites.user_id', computed: { username: 'u.username' } } satisfies SqlTableOptions<FavoriteT & { username: string }>

const SCHEMA = [
  'CREATE TABLE users (id INTEGER PRIMARY KEY, username TEXT NOT NULL)',
  'CREATE TABLE favorites (article_id INTEGER NOT NULL, user_id INTEGER NOT NULL, note TEXT, PRIMARY KEY (article_id, user_id))',
  "INSERT INTO users (id, username) VALUES (1, 'ann'), (2, 'bob'), (3, 'cy')"
]
/** Four favourites, in key order (a store's first row by criteria is then the first by key everywhere). */
const SEED: FavoriteT[] = [
  { article_id: 1, user_id: 1, note: 'a' },
  { article_id: 1, user_id: 2, note: null },
  { article_id: 2, user_id: 1, note: 'b' },
  { article_id: 3, user_id: 3, note: null }
]

type Store = AsyncRepository<FavoriteT> & AsyncBulkRepository<FavoriteT>
const asyncMemory = (memory: MemoryRepository<FavoriteT>): Store =>
  asyncRepository<FavoriteT, MemoryRepository<FavoriteT>>(memory)
/** What a call rejected with (an `APIError`'s `status` and `detail`, a driver's error), to match. */
async function failure (call: Promise<unknown>): Promise<Record<string, unknown>> {
  try {
    await call
  } catch (error) {
    return error as Record<string, unknown>
  }
  throw new Error('the call did not fail')
}
const keyOf = (row: FavoriteT | null): [number, number] | null => row === null ? null : [row.article_id, row.user_id]

function seedSqlite (db: TestDatabase): void {
  for (const statement of SCHEMA) db.exec(statement)
  const insert = db.prepare('INSERT INTO favorites (article_id, user_id, note) VALUES (?, ?, ?)')
  for (const row of SEED) insert.run(row.article_id, row.user_id, row.note)
}

async function seedPostgres (pool: pg.Pool): Promise<void> {
  await pool.query('DROP TABLE IF EXISTS favorites, users')
  for (const statement of SCHEMA) await pool.query(statement)
  for (const row of SEED) await pool.query('INSERT INTO favorites (article_id, user_id, note) VALUES ($1, $2, $3)', [row.article_id, row.user_id, row.note])
}

/** What every store answers alike over the four favourites: reads, writes and bulk calls by the whole key. */
async function repositoryCases (t: Test, repo: Store): Promise<void> {
  t.same(await repo.list({}), SEED, 'a list without ordering is in key order')
  t.same((await repo.list({}, { orderBy: [{ field: 'note', descending: true }] })).map(keyOf), [[1, 2], [3, 3], [2, 1], [1, 1]],
    'ties (two null notes) are ordered by every key column')
  t.same((await repo.list({}, { orderBy: [{ field: 'user_id', descending: true }] })).map(keyOf), [[3, 3], [1, 2], [1, 1], [2, 1]],
    'an ordering naming one key column ends with the other')
  t.same(await repo.get({ article_id: 1, user_id: 2 }), SEED[1], 'a row by its whole key')
  t.equal(await repo.get({ article_id: 1, user_id: 3 }), null, 'no row has this pair, though each value has rows')
  t.same(await repo.get({ article_id: '2', user_id: '1' }), SEED[2], 'the key as path parameters spell it')
  t.same(await repo.get({ user_id: 1 }), SEED[0], 'part of the key: the first row by key')
  t.same(await repo.get({ article_id: 1, user_id: 1, note: 'a' }), SEED[0], 'the key and another criterion')
  t.equal(await repo.get({ article_id: 1, user_id: 1, note: 'z' }), null, 'the key, and a criterion its row fails')
  t.same(await repo.count({ article_id: 1 }), 2)

  t.same(await repo.create({ article_id: 3, user_id: 1, note: 'c' }), { article_id: 3, user_id: 1, note: 'c' }, 'a new link')
  t.equal(await repo.create({ article_id: 3, user_id: 1, note: 'again' }), null, 'a taken key: null, the view\'s 409')
  t.same(await repo.create({ article_id: 1, user_id: 3, note: null }), { article_id: 1, user_id: 3, note: null }, 'each value taken, the pair free')
  t.same(await repo.update({ article_id: 3, user_id: 1 }, { note: 'changed' }), { article_id: 3, user_id: 1, note: 'changed' })
  t.equal(await repo.update({ article_id: 9, user_id: 1 }, { note: 'x' }), null, 'no row by this key')
  t.match(await failure(repo.update({ article_id: 3, user_id: 1 }, { user_id: 3 })), { status: 409 }, 'moving a row onto a taken key is a conflict')
  t.same(await repo.update({ article_id: 3, user_id: 1 }, { user_id: 2 }), { article_id: 3, user_id: 2, note: 'changed' }, 'a row moved to a free key')
  t.equal(await repo.get({ article_id: 3, user_id: 1 }), null, 'its old key names nothing')
  t.same(await repo.update({ article_id: 3, user_id: 2 }, {}), { article_id: 3, user_id: 2, note: 'changed' }, 'nothing to change: the row as it is')
  t.same(await repo.update({ user_id: 2 }, { note: 'first' }), { article_id: 1, user_id: 2, note: 'first' }, 'part of the key: the first row by key is changed')
  t.same((await repo.list({ note: 'first' })).map(keyOf), [[1, 2]], 'and no other')

  const judged: unknown[] = []
  const precondition = (row: unknown): void => { judged.push(row) }
  t.same(await repo.update({ article_id: 1, user_id: 3 }, { note: 'checked' }, { precondition }), { article_id: 1, user_id: 3, note: 'checked' })
  t.equal(await repo.delete({ article_id: 1, user_id: 3 }, { precondition }), true, 'a conditional delete by the whole key')
  t.same(judged, [{ article_id: 1, user_id: 3, note: null }, { article_id: 1, user_id: 3, note: 'checked' }], 'each judged the row its key names')
  t.equal(await repo.delete({ article_id: 3, user_id: 2 }), true)
  t.equal(await repo.delete({ article_id: 3, user_id: 2 }), false, 'deleted once')
  t.equal(await repo.delete({ user_id: 3 }), true, 'part of the key: the first row by key')
  t.same((await repo.list({})).map(keyOf), [[1, 1], [1, 2], [2, 1]], 'the first row by key, (3, 3), and no other, is gone')

  const twice = [{ article_id: 4, user_id: 1, note: null }, { article_id: 4, user_id: 1, note: null }]
  t.match(await failure(repo.createMany(twice)), { status: 409 }, 'two items of one key')
  t.equal(await repo.count({ article_id: 4 }), 0, 'and nothing written')
  t.same(await repo.createMany([{ article_id: 4, user_id: 2, note: null }, { article_id: 4, user_id: 1, note: null }]),
    [{ article_id: 4, user_id: 2, note: null }, { article_id: 4, user_id: 1, note: null }], 'every item, in the order given')
  await repo.bulkUpdate([{ article_id: 4, user_id: 2, note: 'y' }, { article_id: 4, user_id: 1, note: 'x' }])
  t.same((await repo.list({ article_id: 4 })).map((row) => row.note), ['x', 'y'], 'each item found its row by the whole key')
  await repo.bulkUpdate([{ article_id: 4, user_id: 1, note: 'p' }, { article_id: 4, user_id: 1, note: 'x' }])
  t.equal((await repo.get({ article_id: 4, user_id: 1 }))?.note, 'x', 'two items of one key (no view sends them) are written in the order given')
  t.match(await failure(repo.bulkUpdate([{ article_id: 4, user_id: 1, note: 'lost' }, { article_id: 4, user_id: 9, note: 'z' }])),
    { status: 404, detail: 'Item 1: no row has article_id 4, user_id 9.' }, 'an item whose key names no row, said by its key')
  t.same((await repo.list({ article_id: 4 })).map((row) => row.note), ['x', 'y'], 'and nothing written')
  t.same((await repo.updateMany({ note: 'many' }, { article_id: 4 })).map((row) => row.user_id).sort(), [1, 2], 'every row of article 4, by its key')
  await repo.deleteMany({ article_id: 4 })
  t.equal(await repo.count({}), 3, 'the rows of article 4 deleted, the others kept')
}

t0.test('MemoryRepository: rows kept under the whole key', async (t) => {
  const memory = new MemoryRepository<FavoriteT>({ idField: KEY, rows: SEED })
  t.same(memory.keyFields, KEY)
  t.same(memory.idField, KEY, 'idField as it was given')
  await repositoryCases(t, asyncMemory(memory))
  t.same(keyFieldsOf(asyncRepository(memory)), KEY, 'asyncRepository carries the key of several fields over')
  t.equal(keyFieldsOf(asyncRepository(new MemoryRepository())), undefined, 'and declares none for a key of one, which every store is taken to have')

  t.throws(() => memory.create({ article_id: 5, note: null }), {
    code: 'FV_ERR_SCHEMA_COLUMNS',
    message: 'MemoryRepository: a row is kept under its key (article_id, user_id), which a create must give whole; this one lacks user_id. ' +
      'Require it in the create\'s body schema, or give it in getKwargs'
  }, 'no key of several fields is generated: a create lacking one is refused, naming it')
  t.throws(() => memory.create({ note: null }), { code: 'FV_ERR_SCHEMA_COLUMNS', message: /lacks article_id, user_id\. Require them/ })
  t.throws(() => memory.create({ article_id: 5, user_id: null, note: null }), { message: /lacks user_id/ }, 'a null is no key')
  t.throws(() => memory.createMany([{ article_id: 5, user_id: 1, note: null }, { article_id: 5, note: null }]), { code: 'FV_ERR_SCHEMA_COLUMNS' })
  t.equal(memory.count({ article_id: 5 }), 0, 'a refused bulk create writes nothing')
  t.throws(() => new MemoryRepository<Record<string, unknown>>({ idField: ['a', 'b'], rows: [{ a: 1 }] }), { message: /lacks b/ }, 'rows given lacking part of the key')
  t.throws(() => new MemoryRepository({ idField: [] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: 'MemoryRepository: idField is an empty list; name the key\'s field, or its fields' })
  t.same(memory.filledOnCreate, [], 'a create fills no key of several fields')
  t.same(new MemoryRepository<FavoriteT & { at: string }>({ idField: KEY, touchField: 'at' }).filledOnCreate, ['at'])

  const one = new MemoryRepository<{ id: number, name: string }>({ idField: ['id'] })
  t.same(one.create({ name: 'x' }), { id: 1, name: 'x' }, 'a list of one field is a key of one: its integers are generated')
  t.same(one.create({ name: 'y' }), { id: 2, name: 'y' })
  t.same(one.get({ id: '2' }), { id: 2, name: 'y' })
  t.same(one.list({}).map((row) => row.id), [1, 2])
  t.same(one.list({}, { orderBy: [{ field: 'id', descending: true }] }).map((row) => row.id), [2, 1])
  t.same(one.keyFields, ['id'])
  t.same(one.filledOnCreate, ['id'])

  // A key of text and integers, named by path parameters: every string that spells an integer is tried as both.
  const mixed = new MemoryRepository<{ slug: string, user_id: number }>({ idField: ['slug', 'user_id'], rows: [{ slug: '42', user_id: 2 }, { slug: 'intro', user_id: 2 }] })
  t.same(mixed.get({ slug: '42', user_id: '2' }), { slug: '42', user_id: 2 }, 'a text key that spells a number, beside an integer one')
  t.same(mixed.get({ slug: 'intro', user_id: 2 }), { slug: 'intro', user_id: 2 })
  t.equal(mixed.get({ slug: 'intro', user_id: '3' }), null)
  t.equal(mixed.get({ slug: 'intro', user_id: '99999999999999999999' }), null, 'a string past the safe integers is no integer')
  t.equal(mixed.get({ slug: 42, user_id: 2 }), null, 'a number is no text key')
  t.same(mixed.get({ slug__in: ['intro'], user_id: 2 }), { slug: 'intro', user_id: 2 }, 'a key named by an operator: the rows scanned')
  t.equal(mixed.get({ slug: 'intro', user_id: Number.NaN }), null, 'NaN names no key')
  t.same(mixed.update({ slug: 'intro', user_id: 2 }, { user_id: 3 }), { slug: 'intro', user_id: 3 })
  t.same(mixed.list({}).map((row) => row.slug), ['42', 'intro'])

  const dated = new MemoryRepository<{ day: Date, room: number }>({ idField: ['day', 'room'], rows: [{ day: new Date('2026-01-02T00:00:00.000Z'), room: 1 }] })
  t.same(dated.get({ day: '2026-01-02T00:00:00.000Z', room: 1 })?.room, 1, 'a date in a key is kept as its ISO text, which finds it')
})

t0.test('the SQL of a composite key: point reads and writes by the whole key, the first row by a row value', async (t) => {
  const b = new SqlBuilder('sqlite', TABLE)
  t.same(b.key.columns, KEY)
  const list = '"article_id", "user_id", "note"'
  t.same(b.selectOne({ article_id: 1, user_id: 2 }), {
    sql: `SELECT ${list} FROM "favorites" WHERE "article_id" = ? AND "user_id" = ?`, params: [1, 2], returns: 'row'
  }, 'every key column named: one row, no ORDER BY or LIMIT to plan')
  t.same(b.selectOne({ user_id: 2, article_id: 1 }).sql, `SELECT ${list} FROM "favorites" WHERE "user_id" = ? AND "article_id" = ?`, 'in any order')
  t.same(b.selectOne({ article_id: 1 }), {
    sql: `SELECT ${list} FROM "favorites" WHERE "article_id" = ? ORDER BY "article_id" ASC NULLS LAST, "user_id" ASC NULLS LAST LIMIT 1`, params: [1], returns: 'row'
  }, 'part of the key: the first row by the whole key')
  t.same(b.update({ article_id: 1, user_id: 2 }, { note: 'x' }, true), {
    sql: `UPDATE "favorites" SET "note" = ? WHERE "article_id" = ? AND "user_id" = ? RETURNING ${list}`, params: ['x', 1, 2], returns: 'row'
  }, 'a point write by the whole key')
  t.same(b.update({ article_id: 1, user_id: 2 }, { note: 'y' }, true).sql, `UPDATE "favorites" SET "note" = ? WHERE "article_id" = ? AND "user_id" = ? RETURNING ${list}`,
    'again, from the cache of point writes')
  t.same(b.update({ user_id: 2 }, { note: 'x' }, true), {
    sql: 'UPDATE "favorites" SET "note" = ? WHERE ("article_id", "user_id") = (SELECT "article_id", "user_id" FROM "favorites" WHERE "user_id" = ? ' +
      `ORDER BY "article_id", "user_id" LIMIT 1) RETURNING ${list}`,
    params: ['x', 2],
    returns: 'row'
  }, 'the first row of several by a row value')
  t.same(b.delete({ article_id: 1, user_id: 2 }, true), { sql: 'DELETE FROM "favorites" WHERE "article_id" = ? AND "user_id" = ?', params: [1, 2], returns: 'count' })
  t.same(b.select({}, { orderBy: [{ field: 'note', descending: false }], limit: 5 }).sql,
    `SELECT ${list} FROM "favorites" ORDER BY "note" ASC NULLS LAST, "article_id" ASC NULLS LAST, "user_id" ASC NULLS LAST LIMIT 5`, 'a list ends with every key column')
  t.same(b.itemCriteria({ article_id: 1, user_id: 2, note: 'x' }), { article_id: 1, user_id: 2 }, 'a bulk PUT item names its row by the whole key')
  t.same(b.keysIn([{ article_id: 1, user_id: 2 }, { article_id: 3, user_id: 4 }]), {
    criteria: {}, args: [{ sql: '("article_id" = ? AND "user_id" = ?) OR ("article_id" = ? AND "user_id" = ?)', params: [1, 2, 3, 4] }]
  }, 'rows named by their keys: an OR of each key\'s equalities')

  const p = new SqlBuilder('postgres', TABLE)
  t.same(p.selectOne({ article_id: 1, user_id: 2 }).sql, `SELECT ${list} FROM "favorites" WHERE "article_id" = $1 AND "user_id" = $2`)
  t.same(p.lockOne({ article_id: 1, user_id: 2 }).sql, `SELECT ${list} FROM "favorites" WHERE "article_id" = $1 AND "user_id" = $2 FOR NO KEY UPDATE OF "favorites"`,
    'a conditional write locks the one row its key names')
  t.same(p.delete({ user_id: 2 }, true).sql,
    'DELETE FROM "favorites" WHERE ("article_id", "user_id") = (SELECT "article_id", "user_id" FROM "favorites" WHERE "user_id" = $1 ORDER BY "article_id", "user_id" LIMIT 1)')

  const q = new SqlBuilder('postgres', QUERY)
  t.equal(q.returning, '"article_id", "user_id"', 'a query\'s write returns the whole key, to read its row back by')
  t.same(q.keysIn([{ article_id: 1, user_id: 2 }]).args, [{ sql: '("favorites"."article_id" = ? AND "favorites"."user_id" = ?)', params: [1, 2] }],
    'a query names its key columns by their table')

  const single = new SqlBuilder('sqlite', { table: 'items', columns: ['id', 'name'], idColumn: ['id'] })
  t.same(single.update({ name: 'a' }, { name: 'b' }, true).sql,
    'UPDATE "items" SET "name" = ? WHERE "id" = (SELECT "id" FROM "items" WHERE "name" = ? ORDER BY "id" LIMIT 1) RETURNING "id", "name"', 'a list of one column is a key of one')
  t.same(single.keysIn([{ id: 1 }, { id: 2 }]), { criteria: { id__in: [1, 2] }, args: [] })
  t.equal(single.select({}, { orderBy: [] }).sql, 'SELECT "id", "name" FROM "items" ORDER BY "id" ASC NULLS LAST')
  t.equal(single.select({}, { orderBy: [{ field: 'id', descending: true }] }).sql, 'SELECT "id", "name" FROM "items" ORDER BY "id" DESC NULLS FIRST', 'a key already ordered by is not repeated')
  t.same(single.itemCriteria({ id: 1, name: 'x' }), { id: 1 })
  t.throws(() => new SqlBuilder('sqlite', { table: 'items', columns: ['id'], idColumn: [] }), {
    code: 'FV_ERR_SQL_NAME', message: '"items": idColumn is an empty list; name the key\'s column, or its columns'
  })
  t.throws(() => new SqlBuilder('sqlite', { table: 'items', columns: ['id'], idColumn: ['id', 'a b'] }), { code: 'FV_ERR_SQL_NAME', message: /Not a plain SQL identifier: "a b"/ },
    'each key column is an identifier')
})

/** The query over the favourites: every write reads its row back by the whole key, through the join. */
type Named = FavoriteT & { username: string }
async function queryCases (t: Test, repo: AsyncRepository<Named> & AsyncBulkRepository<Named>): Promise<void> {
  t.same(await repo.create({ article_id: 7, user_id: 2, note: 'q' }), { article_id: 7, user_id: 2, note: 'q', username: 'bob' }, 'created and read back by key')
  t.equal(await repo.create({ article_id: 7, user_id: 2, note: 'q' }), null)
  t.same(await repo.update({ article_id: 7, user_id: 2 }, { note: 'r' }), { article_id: 7, user_id: 2, note: 'r', username: 'bob' })
  t.same(await repo.createMany([{ article_id: 8, user_id: 3, note: null }, { article_id: 8, user_id: 1, note: null }]),
    [{ article_id: 8, user_id: 3, note: null, username: 'cy' }, { article_id: 8, user_id: 1, note: null, username: 'ann' }], 'each read back by its key, in the order given')
  t.same((await repo.updateMany({ note: 'm' }, { article_id: 8 })).map((row) => row.username).sort(), ['ann', 'cy'], 'written by key, read back by key')
  await repo.deleteMany({ article_id: 8, username: 'cy' })
  t.same((await repo.list({ article_id: 8 })).map((row) => row.user_id), [1], 'deleted by the keys the query selected')
  t.equal(await repo.delete({ article_id: 7, user_id: 2 }), true)
  t.equal(await repo.delete({ article_id: 8, user_id: 1 }), true)
  await t.rejects(repo.create({ article_id: 9, user_id: 99, note: null }), {
    code: 'FV_ERR_SQL_OPTION', message: /^"favorites": the row written with article_id 9, user_id 99 is not among the rows its reads see/
  }, 'a row the join hides, named by its whole key')
  t.equal(await repo.count({ article_id: 9 }), 0, 'and rolled back')
}

t0.test(`SQLite (${driver}): the sync and the async repository over a link table`, async (t) => {
  for (const make of [
    (db: TestDatabase) => asyncRepository<FavoriteT, SqliteRepository<FavoriteT>>(new SqliteRepository(db, TABLE)),
    (db: TestDatabase) => new AsyncSqliteRepository<FavoriteT>(db, TABLE)
  ]) {
    const db = openSqlite(':memory:')
    t.teardown(() => db.close())
    seedSqlite(db)
    const repo = make(db)
    t.same(keyFieldsOf(repo), KEY, 'the repository declares its key')
    await repositoryCases(t, repo)
    t.match(await failure(repo.create({ article_id: 5, note: null })), { status: 409 }, 'a create lacking a key column: the table\'s NOT NULL, a 409')
    await queryCases(t, new AsyncSqliteRepository(db, QUERY))
  }
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  seedSqlite(db)
  // A key of one column over a query: rows read back by it, as before keys of several existed.
  const users = new SqliteRepository<{ id: number, username: string, upper: string }>(db, { table: 'users', columns: ['id', 'username'], computed: { upper: 'upper(username)' } })
  t.same(users.createMany([{ id: 12, username: 'eve' }, { id: 11, username: 'dee' }]).map((row) => row.upper), ['EVE', 'DEE'])
  t.same(users.update({ id: 12 }, { username: 'eva' }), { id: 12, username: 'eva', upper: 'EVA' })
  const sync = new SqliteRepository<FavoriteT>(db, TABLE)
  t.same(sync.get({ article_id: 1, user_id: 2 }), SEED[1], 'the sync repository answers with values')
  t.same(sync.update({ article_id: 1, user_id: 2 }, { note: 'n' }), { article_id: 1, user_id: 2, note: 'n' }, 'its one-statement update by the whole key')
  t.equal(Number(scalar(db, 'SELECT COUNT(*) FROM favorites WHERE note = ?', 'n')), 1)
})

t0.test('PostgreSQL: the repository over a link table, and 20 concurrent creates of one link', { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }, async (t) => {
  const server = await startPostgres()
  const pools = [0, 1].map(() => new pg.Pool({ connectionString: server.url, max: 10 }))
  // An idle client reports the server's shutdown at the end of the run.
  for (const pool of pools) pool.on('error', () => {})
  t.teardown(async () => { for (const pool of pools) await pool.end(); server.stop() })
  await seedPostgres(pools[0])
  const repo = new PostgresRepository<FavoriteT>(pools[0], TABLE)
  await repositoryCases(t, repo)
  t.match(await failure(repo.create({ article_id: 5, note: null })), { status: 409 }, 'a create lacking a key column: NOT NULL, a 409')
  await queryCases(t, new PostgresRepository(pools[0], QUERY))

  await seedPostgres(pools[0])
  await httpCases(t, favoritesOf(new PostgresRepository<FavoriteT>(pools[0], TABLE)))

  // Two instances, each with its own pool, as two processes would be: the database's key decides.
  await pools[0].query('DELETE FROM favorites')
  const apps = await Promise.all(pools.map(async (pool) => await build({ views: [{ view: favoritesOf(new PostgresRepository<FavoriteT>(pool, TABLE)), prefix: '/favorites' }] })))
  t.teardown(async () => { for (const app of apps) await app.close() })
  const answers = await Promise.all(Array.from({ length: 20 }, async (_, i) =>
    await apps[i % 2].inject({ method: 'POST', url: '/favorites', payload: { article_id: 1, user_id: 2, note: `try ${i}` } })))
  const statuses = answers.map((res) => res.statusCode)
  t.equal(statuses.filter((status) => status === 201).length, 1, 'one create wins')
  t.equal(statuses.filter((status) => status === 409).length, 19, 'every other one is a 409')
  t.equal(Number((await pools[0].query('SELECT COUNT(*) AS n FROM favorites')).rows[0].n), 1, 'one row')
})

const ByKey = CursorPaginationFilter.with({ tieBreaker: KEY, defaultPageSize: 2 })

/** Favourites over an async repository: one link by both path parameters, a cursor list by the whole key. */
function favoritesOf (repository: Store) {
  return class Favorites extends AsyncGenericViewSet.with({
    responseSchema: Favorite,
    createSchema: FavoriteIn,
    detailRoute: '/:article_id/:user_id',
    detailParams: KeyParams,
    filter: ByKey,
    repository
  }, {
    getLocation (item) { return this.getDetailUrl(item) }
  }) {}
}

/** A link table's view through HTTP: one row by both path parameters, a duplicate link a 409, cursor pages by the whole key. */
async function httpCases (t: Test, view: ViewClass): Promise<void> {
  const app: FastifyInstance = await build({ views: [{ view, prefix: '/favorites' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/favorites', payload: { article_id: 5, user_id: 1, note: 'new' } })
  t.equal(created.statusCode, 201)
  t.same(created.json(), { article_id: 5, user_id: 1, note: 'new' })
  t.equal(created.headers.location, '/favorites/5/1', 'its detail URL names the whole key')
  problem(t, await app.inject({ method: 'POST', url: '/favorites', payload: { article_id: 5, user_id: 1, note: 'twice' } }), 409)
  const read = await app.inject('/favorites/5/1')
  t.equal(read.statusCode, 200)
  t.same(read.json(), { article_id: 5, user_id: 1, note: 'new' }, 'one link by both path parameters')
  problem(t, await app.inject('/favorites/5/2'), 404)
  problem(t, await app.inject('/favorites/5/x'), 400)
  const patched = await app.inject({ method: 'PATCH', url: '/favorites/5/1', payload: { note: 'patched' } })
  t.same(patched.json(), { article_id: 5, user_id: 1, note: 'patched' })
  const seen: Array<[number, number]> = []
  for (let url: string | null = '/favorites'; url !== null;) {
    const page: { items: FavoriteT[], next_page: string | null } = (await app.inject(url)).json()
    seen.push(...page.items.map((row) => [row.article_id, row.user_id] as [number, number]))
    url = page.next_page === null ? null : `/favorites?cursor=${page.next_page}`
  }
  t.same(seen, [[1, 1], [1, 2], [2, 1], [3, 3], [5, 1]], 'cursor pages of two, by the whole key: every link once, none skipped where article_id ties')
  const first = (await app.inject('/favorites')).json<{ next_page: string }>()
  const second = (await app.inject(`/favorites?cursor=${first.next_page}`)).json<{ previous_page: string }>()
  const back = (await app.inject(`/favorites?cursor=${second.previous_page}`)).json<{ items: FavoriteT[] }>()
  t.same(back.items.map((row) => [row.article_id, row.user_id]), [[1, 1], [1, 2]], 'and back to the first page')
  t.equal((await app.inject({ method: 'DELETE', url: '/favorites/5/1' })).statusCode, 204)
  problem(t, await app.inject('/favorites/5/1'), 404)
  problem(t, await app.inject({ method: 'DELETE', url: '/favorites/5/1' }), 404)
}

/** The same over a sync repository. */
function syncFavorites (repository: MemoryRepository<FavoriteT> | SqliteRepository<FavoriteT>) {
  return class SyncFavorites extends GenericViewSet.with({
    responseSchema: Favorite,
    createSchema: FavoriteIn,
    detailRoute: '/:article_id/:user_id',
    detailParams: KeyParams,
    filter: ByKey,
    repository
  }, {
    getLocation (item) { return this.getDetailUrl(item) }
  }) {}
}

t0.test('a view over a link table, through HTTP: memory and SQLite, sync and async', async (t) => {
  await httpCases(t, favoritesOf(asyncMemory(new MemoryRepository<FavoriteT>({ idField: KEY, rows: SEED }))))
  await httpCases(t, syncFavorites(new MemoryRepository<FavoriteT>({ idField: KEY, rows: SEED })))
  const sqlite = (): TestDatabase => {
    const db = openSqlite(':memory:')
    t.teardown(() => db.close())
    seedSqlite(db)
    return db
  }
  await httpCases(t, favoritesOf(new AsyncSqliteRepository<FavoriteT>(sqlite(), TABLE)))
  await httpCases(t, syncFavorites(new SqliteRepository<FavoriteT>(sqlite(), TABLE)))
})

t0.test('what finds a row by one field is refused over a key of several, naming the fix', async (t) => {
  const memory = new MemoryRepository<FavoriteT>({ idField: KEY, rows: SEED })
  const register = async (view: ViewClass): Promise<FastifyInstance> => await build({ views: [{ view, prefix: '/f' }] })
  const cursorBy = (tieBreaker: string | readonly string[]) =>
    GenericViewSet.with({ responseSchema: Favorite, detailRoute: '/:article_id/:user_id', detailParams: KeyParams, filter: CursorPaginationFilter.with({ tieBreaker }), repository: memory })
  await t.rejects(register(cursorBy('article_id')), {
    code: 'FV_ERR_UNKNOWN_FIELD',
    message: /^Cannot register GenericViewSet.*: CursorPaginationFilter.*\.tieBreaker is 'article_id', part of its repository's key \(article_id, user_id\): rows that differ only in user_id tie, and a cursor would skip or repeat them\. Name the whole key: tieBreaker: \['article_id', 'user_id'\]$/
  }, 'a cursor breaking ties by part of the key')
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  seedSqlite(db)
  const overSqlite = AsyncGenericViewSet.with({
    responseSchema: Favorite, filter: CursorPaginationFilter.with({ tieBreaker: ['user_id', 'note'] }), repository: new AsyncSqliteRepository<FavoriteT>(db, TABLE)
  })
  await t.rejects(register(overSqlite),
    { code: 'FV_ERR_UNKNOWN_FIELD', message: /tieBreaker is 'user_id', 'note', part of .*Name the whole key: tieBreaker: \['user_id', 'note', 'article_id'\]$/ })
  const scoped = await register(cursorBy(['user_id', 'article_id']))
  await scoped.close()
  t.pass('the whole key, in any order, registers')
  const numbered = await register(GenericViewSet.with({
    responseSchema: Favorite, detailRoute: '/:article_id/:user_id', detailParams: KeyParams, filter: CursorPaginationFilter.with({ tieBreaker: 'note', paginator: null }), repository: memory
  }))
  await numbered.close()
  t.pass('a tieBreaker no pagination reads is not judged')
  const unique = await register(cursorBy('note'))
  await unique.close()
  t.pass('a tieBreaker naming none of the key is taken for a field unique by itself')

  const Notes = Type.Object({ note: Note })
  class Links extends BulkAPIViewSet.with({
    responseSchema: Favorite, createSchema: FavoriteIn, updateSchema: Notes, bulkUpdateSchema: FavoriteIn, primaryKey: 'article_id', filter: null, repository: memory
  }) {}
  await t.rejects(register(Links), {
    code: 'FV_ERR_BULK_CONFIG',
    message: 'Cannot register Links: its repository\'s key is several fields (article_id, user_id), but a bulk PUT tells its items apart by one, ' +
      'primaryKey "article_id". Leave bulkUpdate out of the view (bulk create, PATCH and DELETE work over it), or write the PUT as an action of your own'
  }, 'a bulk PUT: its duplicate check and its schema check name one field')
  const asyncLinks = AsyncBulkAPIViewSet.with({
    responseSchema: Favorite,
    createSchema: FavoriteIn,
    updateSchema: Notes,
    bulkUpdateSchema: FavoriteIn,
    filter: null,
    repository: asyncMemory(memory)
  })
  await t.rejects(register(asyncLinks), { code: 'FV_ERR_BULK_CONFIG', message: /key is several fields/ }, 'through asyncRepository too')
  const items = await register(AsyncBulkAPIViewSet.with({
    responseSchema: Favorite,
    createSchema: FavoriteIn,
    updateSchema: Notes,
    bulkUpdateSchema: Type.Object({ id: Type.Integer() }),
    filter: null,
    repository: asyncRepository(new MemoryRepository<FavoriteT>())
  }))
  await items.close()
  t.pass('a repository that declares no key has one field, and a bulk PUT')
  // Without the PUT, the bulk views work over the link table: a duplicate link in a bulk create is a 409.
  const bulkCreates = AsyncGenericBulkCreateAPIView.with({
    responseSchema: Favorite, createSchema: FavoriteIn, repository: asyncMemory(memory)
  })
  const creates = await register(bulkCreates)
  t.teardown(() => creates.close())
  const twice = await creates.inject({ method: 'POST', url: '/f/bulk', payload: [{ article_id: 6, user_id: 1, note: null }, { article_id: 6, user_id: 1, note: null }] })
  problem(t, twice, 409)
  const bulk = await creates.inject({ method: 'POST', url: '/f/bulk', payload: [{ article_id: 6, user_id: 1, note: null }, { article_id: 6, user_id: 2, note: null }] })
  t.equal(bulk.statusCode, 201)
  t.equal(memory.count({ article_id: 6 }), 2, 'a bulk create of links')

  // A create body without part of the key, over a store that keeps only what it is given.
  const WithoutUser = Type.Object({ article_id: Type.Integer(), note: Type.Union([Type.String(), Type.Null()]) })
  const userless = GenericViewSet.with({ responseSchema: Favorite, createSchema: WithoutUser, repository: memory })
  await t.rejects(register(userless),
    { code: 'FV_ERR_SCHEMA_COLUMNS', message: /requires "user_id", which the body of create may leave out/ }, 'refused at registration: the key is not filled')
  const mine = GenericViewSet.with({ responseSchema: Favorite, createSchema: WithoutUser, detailRoute: '/:article_id/:user_id', detailParams: KeyParams, repository: memory }, {
    getKwargs (action?: string): Criteria { return action === 'create' ? { user_id: 3 } : {} }
  })
  const app = await register(mine)
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'POST', url: '/f', payload: { article_id: 2, note: null } })
  t.equal(res.statusCode, 201)
  t.same(res.json(), { article_id: 2, user_id: 3, note: null }, 'getKwargs gives the rest of the key')
})
