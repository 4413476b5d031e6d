import { test } from 'tap'
import pg from 'pg'
import { driver, openSqlite } from './sqlite-driver.js'
import { startPostgres } from './pg-server.js'
import { Type, type TSchema } from '@sinclair/typebox'
import type { ViewClass } from '../lib/types.js'
import { GenericListAPIView, GenericRetrieveAPIView, GenericViewSet } from '../lib/generics.js'
import { PostgresRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { build } from './helpers.js'

// A response schema is checked against what its SQL table says of each column (FV_ERR_SCHEMA_COLUMNS):
// every form a property schema takes is read for the JSON types it accepts.

const TABLE = 'CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, note TEXT, score REAL NOT NULL, year INTEGER NOT NULL, blob BLOB)'

function notes (create = true): SqliteRepository {
  const db = openSqlite(':memory:')
  if (create) db.exec(TABLE)
  db.exec(create ? "INSERT INTO notes (id, title, note, score, year) VALUES (1, 'a', NULL, 1.5, 2020)" : 'SELECT 1')
  return new SqliteRepository(db, { table: 'notes', columns: ['id', 'title', 'note', 'score', 'year', 'blob'] })
}

function viewOver (repository: SqliteRepository, responseSchema: TSchema): ViewClass {
  return class Notes extends GenericViewSet.with({ repository, responseSchema }) {}
}

const register = async (view: ViewClass) => build({ views: [{ view, prefix: '/notes' }] })

test('every form of property schema that describes the table registers, and its rows are served', async (t) => {
  const fitting: Array<[string, Record<string, TSchema>]> = [
    ['a union with null for a nullable column', { note: Type.Union([Type.String(), Type.Null()]) }],
    ['a union with a member of any type', { note: Type.Union([Type.String(), Type.Unknown()]) }],
    ['a property of any type', { note: Type.Unknown() }],
    ['a number for an integer column, an integer for a REAL one', { year: Type.Number(), score: Type.Number() }],
    ['literals: a string constant for a text column', { title: Type.Union([Type.Literal('a'), Type.Literal('b')]) }],
    ['a member the table does not have (the view computes it)', { computed: Type.Optional(Type.String()) }],
    ['a column of any affinity (BLOB)', { blob: Type.Optional(Type.Union([Type.String(), Type.Null()])) }]
  ]
  for (const [what, members] of fitting) {
    const app = await register(viewOver(notes(), Type.Object({ id: Type.Integer(), ...members })))
    const res = await app.inject('/notes/1')
    t.equal(res.statusCode, 200, what)
    await app.close()
  }
})

test('a schema that cannot describe some row names each column and what it holds', async (t) => {
  const failing: Array<[string, Record<string, TSchema>, RegExp]> = [
    ['a string for a nullable column', { note: Type.String() }, /"note" may be NULL in the table, and the schema does not accept null/],
    ['a literal for a nullable column', { note: Type.Literal('x') }, /"note" may be NULL/],
    ['a string for an integer column', { year: Type.String() }, /"year" holds integer values, and the schema wants string/],
    ['an integer or a boolean for a text column', { title: Type.Union([Type.Integer(), Type.Boolean()]) }, /"title" holds string values, and the schema wants integer or boolean/],
    ['null for a text column', { title: Type.Null() }, /"title" holds string values, and the schema wants null/]
  ]
  for (const [what, members, message] of failing) {
    await t.rejects(register(viewOver(notes(), Type.Object({ id: Type.Integer(), ...members }))), { code: 'FV_ERR_SCHEMA_COLUMNS', message }, what)
  }
})

test('a table made after its repository is not checked; a view that maps rows itself, and says so, is not either', async (t) => {
  const app = await register(viewOver(notes(false), Type.Object({ id: Type.Integer(), note: Type.String() })))
  t.ok(app.hasRoute({ method: 'GET', url: '/notes/:id' }), 'registered: the table says nothing yet')
  await app.close()

  class Silent extends GenericRetrieveAPIView {
    static override repository = notes()
    static override responseSchema = Type.Object({ id: Type.Integer(), note: Type.String() })
    override retrieve () { return { id: 1, note: 'mapped' } }
  }
  await t.rejects(build({ views: [{ view: Silent, prefix: '/titles' }] }), { code: 'FV_ERR_SCHEMA_COLUMNS', message: /static override mappingActions = \['retrieve'\]/ },
    'an override that says nothing of what it sends is held to the table')
  class Titles extends Silent {
    static override mappingActions = ['retrieve']
  }
  const mapped = await build({ views: [{ view: Titles, prefix: '/titles' }] })
  t.same((await mapped.inject('/titles/1')).json(), { id: 1, note: 'mapped' }, 'an overridden retrieve sends what it maps')
  await mapped.close()

  class List extends GenericListAPIView.with(
    { repository: notes(), responseSchema: Type.Object({ id: Type.Integer(), note: Type.String() }) }
  ) {}
  await t.rejects(build({ views: [{ view: List, prefix: '/list' }] }), { code: 'FV_ERR_SCHEMA_COLUMNS' }, 'a list sends stored rows as they are')
})

test('a computed field says nothing of the table\'s column of the same name', async (t) => {
  const db = openSqlite(':memory:')
  t.teardown(() => db.close())
  db.exec(TABLE)
  // `score` is a REAL NOT NULL column, and the repository reads a text that may be NULL in its place.
  const repository = new SqliteRepository(db, { table: 'notes', columns: ['id', 'title'], computed: { score: 'CASE WHEN notes.score > 1 THEN notes.title END' } })
  t.same([...repository.columnFacts?.keys() ?? []], ['id', 'title', 'note', 'year', 'blob'], 'the column the computed field stands for is left out')
  const Score = Type.Object({ id: Type.Integer(), score: Type.Union([Type.String(), Type.Null()]) })
  const app = await register(viewOver(repository, Score))
  t.teardown(() => app.close())
  t.equal((await app.inject('/notes')).statusCode, 200, 'so a schema for the computed value registers')
})

const once = { skip: driver === 'node:sqlite' ? 'run once, with the better-sqlite3 run' : false }

test('PostgreSQL: what each column type is said to hold, for the tables of the search path', once, async (t) => {
  const server = await startPostgres()
  const pool = new pg.Pool({ connectionString: server.url, max: 2 })
  // An idle client reports the server's shutdown at the end of the run.
  pool.on('error', () => {})
  t.teardown(async () => { await pool.end(); server.stop() })
  await pool.query(`CREATE TABLE notes (id integer PRIMARY KEY, small smallint NOT NULL, r real, d double precision NOT NULL,
    t text NOT NULL, v varchar(10), c char(2), u uuid, b boolean NOT NULL, big bigint, n numeric, at timestamptz, score real NOT NULL)`)
  // A table of the same name outside the search path is not the one the repository reads.
  await pool.query('CREATE SCHEMA hidden; CREATE TABLE hidden.notes (id integer PRIMARY KEY, ghost text NOT NULL)')
  const repository = new PostgresRepository(pool, { table: 'notes', columns: ['id', 't'], computed: { score: "'computed'" } })
  await repository.describeColumns()
  t.same(Object.fromEntries(repository.columnFacts ?? []), {
    id: { nullable: false, kind: 'integer' },
    small: { nullable: false, kind: 'integer' },
    r: { nullable: true, kind: 'number' },
    d: { nullable: false, kind: 'number' },
    t: { nullable: false, kind: 'string' },
    v: { nullable: true, kind: 'string' },
    c: { nullable: true, kind: 'string' },
    u: { nullable: true, kind: 'string' },
    b: { nullable: false, kind: 'boolean' },
    // pg gives these as strings or Dates: their type is not said.
    big: { nullable: true, kind: undefined },
    n: { nullable: true, kind: undefined },
    at: { nullable: true, kind: undefined }
  }, 'nullability and the JSON type of each column; the computed field\'s column left out')
  const later = new PostgresRepository(pool, { table: 'made_later', columns: ['id'] })
  await later.describeColumns()
  t.equal(later.columnFacts, undefined, 'a table that does not exist yet says nothing')
})
