import { test, type Test } from 'tap'
import Fastify, { type InjectOptions } from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import Database from 'better-sqlite3'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import views, { mix, AsyncRetrieveAPIView } from '../lib/index.js'
import { Forbidden } from '../lib/errors.js'
import { permission } from '../lib/access.js'
import {
  AsyncGenericViewSet, CursorPaginationFilter, GenericListAPIView, GenericRetrieveAPIView, GenericViewSet,
  MemoryRepository, PaginationFilter, SoftDeleteMixin, asyncRepository, type Criteria
} from '../lib/generics.js'
import { GenericBulkDestroyAPIView, GenericBulkUpdateAPIView, GenericUpdateManyAPIView } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { build, caught, headerAuth, problem } from './helpers.js'
import { postgres, type PgServer } from './pg-server.js'

// Soft delete (docs/soft-delete.md): a DELETE stamps deleted_at; every read, count, page, bulk
// selection and conditional check skips stamped rows; POST /{id}/restore clears the stamp (404
// without the row, 409 when it is not deleted, object permissions and If-Match apply, a unique
// clash is a 409); ?deleted=include|only for the principals a permission allows. On the memory
// store (both families), SQLite (better-sqlite3 sync, node:sqlite async) and PostgreSQL.

interface User { name: string, admin: boolean }
const USERS: Record<string, User> = { ann: { name: 'ann', admin: false }, root: { name: 'root', admin: true } }
const byHeader = headerAuth(USERS)
const IsAdmin = permission<unknown, User>({ name: 'IsAdmin', request: (user) => user.admin, message: 'Admins only.' })
const ROOT = { 'x-user': 'root' }
const ANN = { 'x-user': 'ann' }

const Note = Type.Object({ id: Type.Integer(), title: Type.String(), email: Type.String() }, { $id: 'SoftNote' })
const NoteIn = Type.Object({ title: Type.String(), email: Type.String() })
type NoteT = Static<typeof Note>
type NoteRow = NoteT & { deleted_at: string | null }
const IdParams = Type.Object({ id: Type.Integer() })
const NOTES = { responseSchema: Note, createSchema: NoteIn, detailParams: IdParams }

const STAMP = '2026-01-01T00:00:00.000Z'
const ROWS: NoteRow[] = [
  { id: 1, title: 'one', email: 'a@x', deleted_at: null },
  { id: 2, title: 'two', email: 'b@x', deleted_at: null },
  { id: 3, title: 'three', email: 'c@x', deleted_at: STAMP },
  { id: 4, title: 'four', email: 'd@x', deleted_at: null }
]

/** A fresh repository, a read of a row as stored, and its closing. */
interface Opened {
  repository: unknown
  read: (id: number) => Promise<NoteRow | undefined>
  close: () => Promise<void>
}

/** One store the cases run on: a fresh repository over the rows above, and whether it is of the async family. */
interface Store {
  name: string
  async: boolean
  /** Whether a unique email is held only among rows that are not deleted (a partial index), so that a restore can clash. */
  partialUnique: boolean
  open: () => Promise<Opened>
}

const SQL_TABLE = { table: 'notes', columns: ['id', 'title', 'email', 'deleted_at'] } satisfies SqlTableOptions<NoteRow>
const DDL = (key: string) => [
  `CREATE TABLE notes (id ${key}, title TEXT NOT NULL, email TEXT NOT NULL, deleted_at TEXT)`,
  'CREATE UNIQUE INDEX notes_email ON notes (email) WHERE deleted_at IS NULL'
]
const INSERTS = ROWS.map((row) => [row.id, row.title, row.email, row.deleted_at])

function memoryStore (async: boolean): Store {
  return {
    name: async ? 'memory (async)' : 'memory',
    async,
    partialUnique: false,
    open: async () => {
      const memory = new MemoryRepository<NoteRow>({ rows: ROWS.map((row) => ({ ...row })) })
      const read = async (id: number) => memory.get({ id }) ?? undefined
      return { repository: async ? asyncRepository(memory) : memory, read, close: async () => {} }
    }
  }
}

const betterSqlite: Store = {
  name: 'SQLite (better-sqlite3, sync)',
  async: false,
  partialUnique: true,
  open: async () => {
    const db = new Database(':memory:')
    for (const statement of DDL('INTEGER PRIMARY KEY')) db.exec(statement)
    const insert = db.prepare('INSERT INTO notes (id, title, email, deleted_at) VALUES (?, ?, ?, ?)')
    for (const row of INSERTS) insert.run(...row)
    const read = db.prepare('SELECT * FROM notes WHERE id = ?')
    const repository = new SqliteRepository<NoteRow>(db, SQL_TABLE)
    return { repository, read: async (id) => read.get(id) as NoteRow | undefined, close: async () => { db.close() } }
  }
}

const nodeSqlite: Store = {
  name: 'SQLite (node:sqlite, async)',
  async: true,
  partialUnique: true,
  open: async () => {
    const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
    const db = new DatabaseSync(':memory:')
    for (const statement of DDL('INTEGER PRIMARY KEY')) db.exec(statement)
    const insert = db.prepare('INSERT INTO notes (id, title, email, deleted_at) VALUES (?, ?, ?, ?)')
    for (const row of INSERTS) insert.run(...row)
    const read = db.prepare('SELECT * FROM notes WHERE id = ?')
    const repository = new AsyncSqliteRepository<NoteRow>(db, SQL_TABLE)
    return { repository, read: async (id) => read.get(id) as NoteRow | undefined, close: async () => { db.close() } }
  }
}

function postgresStore (server: PgServer): Store {
  let n = 0
  return {
    name: 'PostgreSQL',
    async: true,
    partialUnique: true,
    open: async () => {
      const admin = new pg.Pool({ connectionString: server.url, max: 1 })
      const database = `soft_${++n}`
      await admin.query(`CREATE DATABASE ${database}`)
      await admin.end()
      const pool = new pg.Pool({ connectionString: server.url.replace(/\/postgres$/, `/${database}`), max: 4 })
      pool.on('error', () => {})
      for (const statement of DDL('INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY')) await pool.query(statement)
      for (const row of INSERTS) await pool.query('INSERT INTO notes (id, title, email, deleted_at) VALUES ($1, $2, $3, $4)', row)
      await pool.query("SELECT setval(pg_get_serial_sequence('notes', 'id'), 100)")
      const repository = new PostgresRepository<NoteRow>(pool, SQL_TABLE)
      return {
        repository,
        read: async (id) => (await pool.query('SELECT * FROM notes WHERE id = $1', [id])).rows[0] as NoteRow | undefined,
        close: async () => { await pool.end() }
      }
    }
  }
}

class Pages extends PaginationFilter.with({ defaultPageSize: 2, maxPageSize: 10 }) {}

/** The view of the cases: conditional, soft-deleting, with pages; the family of the store. */
function notesView (store: Store, repository: unknown) {
  const statics = {
    responseSchema: Note,
    createSchema: NoteIn,
    detailParams: IdParams,
    filter: Pages,
    conditional: { etag: true },
    softDelete: { field: 'deleted_at', deleted: IsAdmin },
    repository: repository as never
  }
  return store.async
    ? class Notes extends mix(ConditionalMixin, SoftDeleteMixin, AsyncGenericViewSet).with(statics) {}
    : class Notes extends mix(ConditionalMixin, SoftDeleteMixin, GenericViewSet).with(statics) {}
}

const ids = (page: { items: NoteT[] }): number[] => page.items.map((note) => note.id)

async function storeCases (t: Test, store: Store): Promise<void> {
  const opened = async () => {
    const { repository, read, close } = await store.open()
    const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: notesView(store, repository), prefix: '/notes' }] })
    t.teardown(async () => { await app.close(); await close() })
    return { app, read, inject: (options: InjectOptions) => app.inject(options) }
  }

  await t.test(`${store.name}: reads, counts and writes skip deleted rows`, async (t) => {
    const { inject } = await opened()
    const page = (await inject({ url: '/notes?page_size=10' })).json()
    t.same(ids(page), [1, 2, 4], 'the list leaves the deleted row out')
    t.equal(page.total_items, 3, 'and so does its count')
    t.equal((await inject({ url: '/notes?page=2' })).json().total_items, 3)
    t.same(ids((await inject({ url: '/notes?page=2' })).json()), [4], 'the second page of two')
    problem(t, await inject({ url: '/notes/3' }), 404)
    problem(t, await inject({ method: 'PUT', url: '/notes/3', payload: { title: 'x', email: 'z@x' } }), 404)
    problem(t, await inject({ method: 'PATCH', url: '/notes/3', payload: { title: 'x' } }), 404)
    problem(t, await inject({ method: 'DELETE', url: '/notes/3' }), 404)
    // Conditional requests on a deleted row: no representation, so the action's 404 (not a 304, not a 412).
    problem(t, await inject({ url: '/notes/3', headers: { 'if-none-match': '*' } }), 404)
    problem(t, await inject({ method: 'PUT', url: '/notes/3', headers: { 'if-match': '"stale"' }, payload: { title: 'x', email: 'z@x' } }), 404)
    problem(t, await inject({ method: 'DELETE', url: '/notes/3', headers: { 'if-match': '"stale"' } }), 404)
  })

  await t.test(`${store.name}: DELETE stamps, restore clears`, async (t) => {
    const { inject, read } = await opened()
    const etag = String((await inject({ url: '/notes/1' })).headers.etag)
    problem(t, await inject({ method: 'DELETE', url: '/notes/1', headers: { 'if-match': '"other"' } }), 412)
    t.equal((await read(1))?.deleted_at, null, 'a failed If-Match stamps nothing')
    t.equal((await inject({ method: 'DELETE', url: '/notes/1', headers: { 'if-match': etag } })).statusCode, 204)
    const stamped = (await read(1))?.deleted_at
    t.type(stamped, 'string', 'kept, stamped')
    t.ok(!Number.isNaN(Date.parse(String(stamped))), 'with an ISO date-time')
    problem(t, await inject({ url: '/notes/1' }), 404)
    problem(t, await inject({ method: 'DELETE', url: '/notes/1' }), 404)
    t.same(ids((await inject({ url: '/notes?page_size=10' })).json()), [2, 4])

    const restored = await inject({ method: 'POST', url: '/notes/1/restore' })
    t.equal(restored.statusCode, 200)
    t.same(restored.json(), { id: 1, title: 'one', email: 'a@x' }, 'the restored row, as the view sends it')
    t.equal((await read(1))?.deleted_at, null)
    t.equal((await inject({ url: '/notes/1' })).statusCode, 200)
    t.match(problem(t, await inject({ method: 'POST', url: '/notes/1/restore' }), 409).detail, /not deleted/)
    problem(t, await inject({ method: 'POST', url: '/notes/99/restore' }), 404)
    problem(t, await inject({ method: 'POST', url: '/notes/x/restore' }), 400)
    problem(t, await inject({ method: 'GET', url: '/notes/3/restore' }), 405)
  })

  await t.test(`${store.name}: If-Match on a restore compares the deleted row`, async (t) => {
    const { inject, read } = await opened()
    const seen = await inject({ url: '/notes/3?deleted=include', headers: ROOT })
    t.equal(seen.statusCode, 200)
    const etag = String(seen.headers.etag)
    problem(t, await inject({ method: 'POST', url: '/notes/3/restore', headers: { 'if-match': '"other"' } }), 412)
    t.equal((await read(3))?.deleted_at, STAMP, 'nothing restored')
    const restored = await inject({ method: 'POST', url: '/notes/3/restore', headers: { 'if-match': etag } })
    t.equal(restored.statusCode, 200)
    t.equal(restored.headers.etag, (await inject({ url: '/notes/3' })).headers.etag, 'the restored row carries the ETag a GET sends')
    // Not deleted (any more): no deleted representation, so the action's answer.
    problem(t, await inject({ method: 'POST', url: '/notes/3/restore', headers: { 'if-match': etag } }), 409)
  })

  await t.test(`${store.name}: ?deleted=include|only for the principals the permission allows`, async (t) => {
    const { inject } = await opened()
    t.same(ids((await inject({ url: '/notes?page_size=10&deleted=include', headers: ROOT })).json()), [1, 2, 3, 4])
    const only = (await inject({ url: '/notes?deleted=only', headers: ROOT })).json()
    t.same([ids(only), only.total_items], [[3], 1])
    t.equal((await inject({ url: '/notes/3?deleted=only', headers: ROOT })).json().id, 3)
    problem(t, await inject({ url: '/notes/1?deleted=only', headers: ROOT }), 404)
    t.equal((await inject({ url: '/notes/1?deleted=include', headers: ROOT })).statusCode, 200)
    t.equal(problem(t, await inject({ url: '/notes?deleted=include', headers: ANN }), 403).detail, 'Admins only.')
    problem(t, await inject({ url: '/notes/3?deleted=include', headers: ANN }), 403)
    const anonymous = problem(t, await inject({ url: '/notes?deleted=include' }), 401)
    t.ok(anonymous, 'an anonymous request is asked to authenticate')
    t.same(ids((await inject({ url: '/notes?page_size=10', headers: ANN })).json()), [1, 2, 4], 'without the parameter, anyone reads as before')
    // Hostile values: the route's query schema answers them, whoever asks.
    for (const url of ['/notes?deleted=all', '/notes?deleted=', '/notes?deleted=include&deleted=only', '/notes?deleted=include&deleted=include',
      `/notes?deleted=${'x'.repeat(10_000)}`, '/notes/3?deleted=ONLY', '/notes/3?deleted=only&deleted=only']) {
      problem(t, await inject({ url, headers: ROOT }), 400)
      problem(t, await inject({ url, headers: ANN }), 400)
    }
  })

  await t.test(`${store.name}: 20 concurrent DELETEs of one row: one 204, the rest 404`, async (t) => {
    const { inject, read } = await opened()
    const statuses = await Promise.all(Array.from({ length: 20 }, () => inject({ method: 'DELETE', url: '/notes/2' })))
    t.same(statuses.map((res) => res.statusCode).sort(), [204, ...Array.from({ length: 19 }, () => 404)])
    t.type((await read(2))?.deleted_at, 'string')
  })

  await t.test(`${store.name}: concurrent restores and deletes leave a state their answers agree with`, async (t) => {
    const { inject, read } = await opened()
    for (let round = 0; round < 5; round++) {
      const [restore, destroy] = await Promise.all([
        inject({ method: 'POST', url: '/notes/3/restore' }),
        inject({ method: 'DELETE', url: '/notes/3' })
      ])
      const deleted = (await read(3))?.deleted_at !== null
      // Either the restore came first (200) and the delete stamped it again (204), or the delete
      // found nothing to delete (404) and the row stays restored.
      if (destroy.statusCode === 204) t.same([restore.statusCode, deleted], [200, true], `round ${round}: restored, then deleted`)
      else t.same([restore.statusCode, destroy.statusCode, deleted], [200, 404, false], `round ${round}: deleted nothing, restored`)
      if (!deleted) t.equal((await inject({ method: 'DELETE', url: '/notes/3' })).statusCode, 204)
    }
  })

  if (store.partialUnique) {
    await t.test(`${store.name}: a restore that would clash with a unique key is a 409`, async (t) => {
      const { inject, read } = await opened()
      t.equal((await inject({ method: 'POST', url: '/notes', payload: { title: 'again', email: 'c@x' } })).statusCode, 201, 'the deleted row\'s email is free')
      t.match(problem(t, await inject({ method: 'POST', url: '/notes/3/restore' }), 409).detail, /unique/)
      t.equal((await read(3))?.deleted_at, STAMP, 'still deleted')
    })
  }
}

for (const store of [memoryStore(false), memoryStore(true), betterSqlite, nodeSqlite]) {
  test(store.name, async (t) => { await storeCases(t, store) })
}

const started = await postgres()
test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  t.teardown(() => { server.stop() })
  await storeCases(t, postgresStore(server))
})

const memory = () => new MemoryRepository<NoteRow>({ rows: ROWS.map((row) => ({ ...row })) })

test('a cursor page and a bulk PATCH selection skip deleted rows; a stamp of the view\'s own', async (t) => {
  const repository = memory()
  class Cursor extends CursorPaginationFilter.with({ defaultPageSize: 2, maxPageSize: 10, orderingFields: ['id'], defaultOrdering: ['id'] }) {}
  const Paged = mix(SoftDeleteMixin, GenericListAPIView, GenericRetrieveAPIView)
    .with({ responseSchema: Note, detailParams: IdParams, filter: Cursor, repository })
  const Bulk = mix(SoftDeleteMixin, GenericUpdateManyAPIView).with({
    responseSchema: Note,
    updateSchema: Type.Object({ title: Type.String() }),
    filter: PaginationFilter.with({ fields: { title: Type.String() }, operators: { title: ['ne'] } }),
    repository
  })
  const Stamped = mix(SoftDeleteMixin, GenericViewSet).with({ ...NOTES, repository }, {
    deletedStamp () { return 'by hand' }
  })
  const app = await build({ views: [{ view: Paged, prefix: '/paged' }, { view: Bulk, prefix: '/bulk' }, { view: Stamped, prefix: '/stamped' }] })
  t.teardown(() => app.close())
  const first = (await app.inject('/paged')).json()
  t.same(ids(first), [1, 2])
  t.same(ids((await app.inject(`/paged?cursor=${encodeURIComponent(first.next_page)}`)).json()), [4], 'the next page skips the deleted row')
  const patched = await app.inject({ method: 'PATCH', url: '/bulk/bulk?title__ne=none', payload: { title: 'same' } })
  t.equal(patched.statusCode, 200)
  t.same(patched.json().map((note: NoteT) => note.id), [1, 2, 4], 'the selection leaves the deleted row out')
  t.equal(repository.get({ id: 3 })?.title, 'three', 'and does not write it')
  t.equal((await app.inject({ method: 'DELETE', url: '/stamped/4' })).statusCode, 204)
  t.equal(repository.get({ id: 4 })?.deleted_at, 'by hand', 'deletedStamp gives the value')
})

test('object permissions and the permissions\' scope judge a restore', async (t) => {
  const repository = memory()
  const Notes = mix(SoftDeleteMixin, GenericViewSet).with({ ...NOTES, repository }, {
    checkObjectPermissions (note, action) {
      if (action === 'restore' && note.email === 'c@x') throw new Forbidden('Not that one.')
    },
    getKwargs () { return { id__ne: 4 } }
  })
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/notes/3/restore' }), 403).detail, 'Not that one.')
  t.equal(repository.get({ id: 3 })?.deleted_at, STAMP)
  t.equal((await app.inject({ method: 'DELETE', url: '/notes/1' })).statusCode, 204)
  t.equal((await app.inject({ method: 'POST', url: '/notes/1/restore' })).statusCode, 200)
  t.equal((await app.inject({ method: 'POST', url: '/notes/2/restore' })).statusCode, 409)
  repository.update({ id: 4 }, { deleted_at: STAMP })
  problem(t, await app.inject({ method: 'POST', url: '/notes/4/restore' }), 404) // the view's own scope: not there for it
  t.equal((await app.inject({ method: 'DELETE', url: '/notes/2' })).statusCode, 204)
  // A row the view's object check refuses is a 403 before the 409 tells anything of it.
  const Judged = mix(SoftDeleteMixin, GenericViewSet).with({ ...NOTES, repository }, {
    checkObjectPermissions (note, action) {
      if (action === 'restore' && note.id === 1) throw new Forbidden('Not that one.')
    }
  })
  const judged = await build({ views: [{ view: Judged, prefix: '/notes' }] })
  t.teardown(() => judged.close())
  problem(t, await judged.inject({ method: 'POST', url: '/notes/1/restore' }), 403)
})

test('the document: the restore route with its answers, ?deleted= where it is offered', async (t) => {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'notes', version: '1' } }))
  const Notes = mix(ConditionalMixin, SoftDeleteMixin, GenericViewSet).with({
    responseSchema: Note, createSchema: NoteIn, detailParams: IdParams, conditional: { etag: true }, softDelete: { deleted: IsAdmin }, repository: memory(), envelope: 'note'
  })
  const Plain = mix(SoftDeleteMixin, GenericViewSet).with({ ...NOTES, repository: memory() })
  await app.register(views, { auth: { authenticators: [byHeader] }, views: [{ view: Notes, prefix: '/notes' }, { view: Plain, prefix: '/plain' }] })
  await app.ready()
  t.teardown(() => app.close())
  const document = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(document), { valid: true })
  const restore = document.paths['/notes/{id}/restore'].post
  for (const status of ['200', '404', '409', '412']) t.ok(restore.responses[status], `restore documents ${status}`)
  t.same(Object.keys(restore.responses['200'].content['application/json'].schema.properties ?? {}), ['note'], 'in the view\'s envelope')
  t.ok(restore.parameters.some((p: { name: string, in: string }) => p.name === 'if-match' && p.in === 'header'), 'If-Match documented')
  const deleted = (operation: { parameters?: Array<{ name: string, schema: unknown }> }) => operation.parameters?.find((p) => p.name === 'deleted')
  t.ok(deleted(document.paths['/notes'].get), 'the list offers ?deleted=')
  t.ok(deleted(document.paths['/notes/{id}'].get), 'so does the detail read')
  t.ok(document.paths['/notes'].get.responses['403'], 'and documents its 403')
  t.notOk(deleted(document.paths['/notes/{id}'].put), 'not a write')
  t.notOk(deleted(document.paths['/plain'].get), 'not offered without softDelete.deleted')
  t.notOk(document.paths['/plain/{id}/restore'].post.responses['412'], 'no 412 without ConditionalMixin')
  const answer = await app.inject({ method: 'POST', url: '/notes/3/restore' })
  t.same(answer.json(), { note: { id: 3, title: 'three', email: 'c@x' } }, 'the restored row in its envelope')
})

test('a soft delete that would not hold is refused at registration', async (t) => {
  const base = { responseSchema: Note, createSchema: NoteIn, detailParams: IdParams }
  const memoryRows = memory() as never
  const refused = async (view: unknown, message: RegExp, name: string) => {
    t.match(await caught(() => build({ views: [{ view: view as never, prefix: '/notes' }] })), { code: 'FV_ERR_SOFT_DELETE', message }, name)
  }
  const db = new Database(':memory:')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT, email TEXT)')
  const sqlite = new SqliteRepository<NoteT>(db, { table: 'notes', columns: ['id', 'title', 'email'] })
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, repository: sqlite }), /softDelete\.field "deleted_at" is not a field of its repository \(its fields: id, title, email\)/, 'a table without the column')
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, repository: new MemoryRepository({ rows: [{ id: 1, title: 'a', email: 'b' }] }) }),
    /"deleted_at" is in no row of its repository .*give every row deleted_at: null/, 'rows without the field')
  const Writing = Type.Object({ title: Type.String(), deleted_at: Type.String() })
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, createSchema: Writing, repository: memory() }),
    /its createSchema takes "deleted_at"/, 'a body that writes the stamp')
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, softDelete: { field: '' as never }, repository: memory() }),
    /softDelete\.field must name/, 'an empty field')
  const unset = { field: undefined as never }
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, softDelete: unset, repository: memory() }),
    /softDelete\.field must name the field that holds when a row was deleted, not undefined/, 'no field')
  const BulkPut = mix(SoftDeleteMixin, GenericBulkUpdateAPIView)
  await refused(BulkPut.with({ responseSchema: Note, bulkUpdateSchema: Note, repository: memoryRows }),
    /bulkUpdate would find rows by key alone/, 'a bulk PUT')
  const Retrieve = mix(SoftDeleteMixin, AsyncRetrieveAPIView)
  await refused(Retrieve.with({ responseSchema: Note, detailParams: IdParams, repository: memoryRows }, {
    async retrieve () { return null }
  }), /its retrieve is an action you write/, 'an action view whose action the scope never reaches')
  await refused(mix(SoftDeleteMixin, GenericBulkDestroyAPIView).with({ responseSchema: Note, filter: null, repository: memory() as never }), /bulkDelete would remove the rows/, 'a bulk DELETE')
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, softDelete: { deleted: 'admins' as never }, repository: memory() }), /softDelete\.deleted must be a permission/, 'not a permission')
  const Owner = permission<NoteRow, User>({ name: 'Owner', scope: (user) => ({ email: user.name }) })
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, softDelete: { deleted: Owner }, repository: memory() }), /softDelete\.deleted \(Owner\) judges objects/, 'a permission on objects')
  const flagged = new MemoryRepository({ rows: ROWS.map((row) => ({ ...row, deleted: 'no' })) }) as never
  const Flags = PaginationFilter.with({ fields: { deleted: Type.String() } }) as never
  const softDelete = { deleted: IsAdmin }
  await refused(mix(SoftDeleteMixin, GenericViewSet).with({ ...base, filter: Flags, softDelete, repository: flagged }),
    /its filter has a parameter "deleted"/, 'a filter parameter of the same name')
  t.match(await caught(() => build({ views: [{ view: mix(SoftDeleteMixin, GenericViewSet).with({ ...base, softDelete: { feild: 'x' } as never, repository: memory() }), prefix: '/n' }] })),
    { code: 'FV_ERR_UNKNOWN_STATIC', message: /"feild" is not one of its options \(field, deleted\).*did you mean "field"/ }, 'a misspelt option')
  // A store that cannot say what its rows hold, or holds none yet, is not judged.
  const Empty = mix(SoftDeleteMixin, GenericViewSet).with({ ...base, repository: new MemoryRepository() as never })
  const empty = await build({ views: [{ view: Empty, prefix: '/notes' }] })
  t.teardown(() => empty.close())
  t.equal((await empty.inject({ method: 'POST', url: '/notes', payload: { title: 'a', email: 'b' } })).statusCode, 201)
  t.equal((await empty.inject({ method: 'DELETE', url: '/notes/1' })).statusCode, 204, 'a row without the field is not deleted, and is stamped')
  problem(t, await empty.inject({ url: '/notes/1' }), 404)
})

test('without ConditionalMixin or a deleted permission the same scope holds; an async permission is waited for', async (t) => {
  const Later = permission<unknown, User>({ name: 'Later', request: async (user) => user.admin })
  const Notes = mix(SoftDeleteMixin, AsyncGenericViewSet).with({
    ...NOTES, softDelete: { deleted: Later }, repository: asyncRepository(memory())
  })
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/notes?deleted=only', headers: ROOT })).json().map((note: NoteT) => note.id), [3])
  problem(t, await app.inject({ url: '/notes?deleted=only', headers: ANN }), 403)
  t.equal((await app.inject({ url: '/notes/3?deleted=include', headers: ROOT })).statusCode, 200)
  const criteria: Criteria[] = []
  const Spy = mix(SoftDeleteMixin, GenericViewSet).with({ ...NOTES, repository: memory() }, {
    getKwargs (action) { criteria.push({ action }); return {} }
  })
  const spy = await build({ views: [{ view: Spy, prefix: '/spy' }] })
  t.teardown(() => spy.close())
  t.equal((await spy.inject('/spy')).json().length, 3)
  t.ok(criteria.length > 0, 'the view\'s own getKwargs still runs beneath the soft delete')
})
