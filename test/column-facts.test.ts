import { test } from 'tap'
import { openSqlite } from './sqlite-driver.js'
import { Type, type TSchema } from '@sinclair/typebox'
import { type ViewClass } from '../lib/index.js'
import { GenericListAPIView, GenericRetrieveAPIView, GenericViewSet } from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
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

test('a table made after its repository is not checked; a view that maps rows itself is not either', async (t) => {
  const app = await register(viewOver(notes(false), Type.Object({ id: Type.Integer(), note: Type.String() })))
  t.ok(app.hasRoute({ method: 'GET', url: '/notes/:id' }), 'registered: the table says nothing yet')
  await app.close()

  class Titles extends GenericRetrieveAPIView {
    static override repository = notes()
    static override responseSchema = Type.Object({ id: Type.Integer(), note: Type.String() })
    override retrieve () { return { id: 1, note: 'mapped' } }
  }
  const mapped = await build({ views: [{ view: Titles, prefix: '/titles' }] })
  t.same((await mapped.inject('/titles/1')).json(), { id: 1, note: 'mapped' }, 'an overridden retrieve sends what it maps')
  await mapped.close()

  class List extends GenericListAPIView.with(
    { repository: notes(), responseSchema: Type.Object({ id: Type.Integer(), note: Type.String() }) }
  ) {}
  await t.rejects(build({ views: [{ view: List, prefix: '/list' }] }), { code: 'FV_ERR_SCHEMA_COLUMNS' }, 'a list sends stored rows as they are')
})
