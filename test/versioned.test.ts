import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { Type } from '@sinclair/typebox'
import Fastify from 'fastify'
import { Get, Put, mix, views } from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import { Forbidden } from '../lib/errors.js'
import { AsyncGenericViewSet, GenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { AsyncSqliteRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { build, caught, problem } from './helpers.js'
import { raceConditionalWrites } from './optimistic-cases.js'
import { VersionedItem, VersionedTableOptions, versionedApp, versionedOverHttp, versionedTable, type VersionedItemT } from './versioned-cases.js'

const memory = (): MemoryRepository<VersionedItemT> => new MemoryRepository<VersionedItemT>({ versionField: 'version' })

test('MemoryRepository: version tags, compare-and-set writes, 412 and 404', async (t) => {
  const app = await versionedApp(asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(memory()))
  t.teardown(() => app.close())
  await versionedOverHttp(t, app)
})

test('SQLite: version tags, compare-and-set writes, 412 and 404', async (t) => {
  const db = new Database(':memory:')
  db.exec(versionedTable('INTEGER PRIMARY KEY'))
  const app = await versionedApp(asyncRepository<VersionedItemT, SqliteRepository<VersionedItemT>>(
    new SqliteRepository<VersionedItemT>(db, VersionedTableOptions)
  ))
  t.teardown(() => app.close())
  await versionedOverHttp(t, app)
})

test('SQLite: a conditional write whose If-Match names the current version is one statement', async (t) => {
  const statements: string[] = []
  const db = new Database(':memory:', { verbose: (sql) => { statements.push(String(sql)) } })
  db.exec(versionedTable('INTEGER PRIMARY KEY'))
  const app = await versionedApp(asyncRepository<VersionedItemT, SqliteRepository<VersionedItemT>>(
    new SqliteRepository<VersionedItemT>(db, VersionedTableOptions)
  ))
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 10 } })
  const etag = (await app.inject('/items/1')).headers.etag as string

  statements.length = 0
  const put = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'desk lamp', price: 12 } })
  t.equal(put.statusCode, 200)
  t.same(statements, ['UPDATE "items" SET "name" = \'desk lamp\', "price" = 12.0, "version" = "version" + 1 WHERE "id" = 1.0 AND "version" = 1.0 RETURNING "id", "name", "price", "version"'],
    'one UPDATE compares the version and adds one to it')

  statements.length = 0
  const deleted = await app.inject({ method: 'DELETE', url: '/items/1', headers: { 'if-match': put.headers.etag as string } })
  t.equal(deleted.statusCode, 204)
  t.equal(statements.length, 1, 'a conditional DELETE is one statement too')
  t.equal(statements[0], 'DELETE FROM "items" WHERE "id" = 1.0 AND "version" = 2.0')

  const chair = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'chair', price: 30 } })).json<VersionedItemT>()
  const tag = (await app.inject(`/items/${chair.id}`)).headers.etag as string
  statements.length = 0
  await app.inject({ method: 'PUT', url: `/items/${chair.id}`, headers: { 'if-unmodified-since': 'Thu, 01 Jan 2099 00:00:00 GMT' }, payload: { name: 'stool', price: 20 } })
  t.ok(statements.length > 1, 'If-Unmodified-Since is judged on the row read (no version in it)')
  statements.length = 0
  const stale = await app.inject({ method: 'PUT', url: `/items/${chair.id}`, headers: { 'if-match': tag }, payload: { name: 'bench', price: 20 } })
  problem(t, stale, 412)
  t.equal(statements.length, 2, 'a stale version: the UPDATE that found nothing, then the read that tells 412 from 404')

  // Versions of two digits and more are versions too; a malformed one is judged by the early read.
  db.prepare('UPDATE items SET version = 12 WHERE id = ?').run(chair.id)
  const twelve = (await app.inject(`/items/${chair.id}`)).headers.etag as string
  t.match(twelve, /\.12"$/)
  statements.length = 0
  const put12 = await app.inject({ method: 'PUT', url: `/items/${chair.id}`, headers: { 'if-match': twelve }, payload: { name: 'bench', price: 21 } })
  t.same([put12.statusCode, statements.length], [200, 1], 'version 12: one UPDATE')
  for (const malformed of ['.13x"', '.x13"', '.013"', '.1e1"']) {
    statements.length = 0
    const res = await app.inject({ method: 'PUT', url: `/items/${chair.id}`, headers: { 'if-match': twelve.replace('.12"', malformed) }, payload: { name: 'no', price: 1 } })
    t.same([res.statusCode, statements], [412, [`SELECT "id", "name", "price", "version" FROM "items" WHERE "id" = ${chair.id}.0`]],
      `${malformed.slice(1, -1)} names no version: the early read, 412, nothing written`)
  }
  // A plain JSON PATCH on a route that also takes patch documents: its validator is the JSON one, and the write compares.
  const current = (await app.inject(`/items/${chair.id}`)).headers.etag as string
  statements.length = 0
  const patch = await app.inject({ method: 'PATCH', url: `/items/${chair.id}`, headers: { 'if-match': current }, payload: { price: 22 } })
  t.same([patch.statusCode, statements.length], [200, 1], 'a JSON PATCH with the current tag: one UPDATE')
  statements.length = 0
  const jsonPatch = await app.inject({
    method: 'PATCH',
    url: `/items/${chair.id}`,
    headers: { 'if-match': patch.headers.etag as string, 'content-type': 'application/json-patch+json' },
    payload: [{ op: 'replace', path: '/price', value: 23 }]
  })
  t.equal(jsonPatch.statusCode, 200)
  t.ok(statements.some((sql) => /^UPDATE .* AND "version" = 14\.0/.test(sql)), 'a JSON Patch reads its target, then writes only at the version the client named')
})

test('a list of version tags matches any of them; versions that are not non-negative integers are hashed', async (t) => {
  const rows = memory()
  const app = await versionedApp(asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(rows))
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).json().id as number
  const one = (await app.inject(`/items/${id}`)).headers.etag as string
  await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': one }, payload: { name: 'lamp', price: 2 } })
  const two = (await app.inject(`/items/${id}`)).headers.etag as string
  const listed = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': `${one}, ${two}` }, payload: { name: 'lamp', price: 3 } })
  t.equal(listed.statusCode, 200, 'the stale tag first, the current one second: the list matches')
  const three = (await app.inject(`/items/${id}`)).headers.etag as string
  const unclosed = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': `${three.slice(0, -1)}1` }, payload: { name: 'lamp', price: 4 } })
  problem(t, unclosed, 412)
  const both = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': three, 'if-none-match': '*' }, payload: { name: 'both', price: 4 } })
  problem(t, both, 412)
  t.equal(rows.get({ id })!.name, 'lamp', 'a current If-Match with If-None-Match: * on an existing item: 412, not written (RFC 9110 §13.2.2)')
  const dated = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': three, 'if-unmodified-since': 'Thu, 01 Jan 1970 00:00:00 GMT' }, payload: { name: 'dated', price: 4 } })
  t.same([dated.statusCode, dated.json().version], [200, 4], 'beside If-Match, If-Unmodified-Since is not evaluated (RFC 9110 §13.2.2)')
  t.pass('the current tag with a digit for its closing quote is no tag: it names no version, not even the one it starts with')
  const prefix = one.slice(0, one.indexOf('.'))
  for (const [version, tagged] of [[0, true], [-1, false], [1.5, false], [null, false], [2 ** 53, false]] as const) {
    // A row written before the column existed, or by hand: what the store holds is served as it is.
    const raw = new MemoryRepository<VersionedItemT>({ versionField: 'version', rows: [{ id: 1, name: 'n', price: 1, version: version as number }] })
    const view = await versionedApp(asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(raw))
    const res = await view.inject('/items/1')
    await view.close()
    if (res.statusCode !== 200) {
      t.equal(version === null || !Number.isInteger(version) || version > Number.MAX_SAFE_INTEGER, true, `version ${String(version)} fails the response schema (${res.statusCode})`)
      continue
    }
    if (tagged) t.equal(res.headers.etag, `${prefix}.${String(version)}"`, `version ${String(version)}: a version tag`)
    else t.match(res.headers.etag, /^"[A-Za-z0-9_-]{27}"$/, `version ${String(version)}: hashed`)
  }
})

test('only the library\'s own writes compare the version: a custom route and an overridden update are checked by the early read', async (t) => {
  const rows = memory()
  const Params = Type.Object({ id: Type.Integer() })
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: VersionedItem,
    createSchema: Type.Object({ name: Type.String(), price: Type.Number() }),
    detailParams: Params,
    conditional: { etag: true, versionField: 'version' },
    repository: asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(rows)
  }, {
    // An update of the application's own: it does not put the version in its write.
    async update (request: ViewRequest<{ params: typeof Params }>) {
      return rows.update({ id: request.params.id }, { name: 'overridden' })
    }
  }) {
    @Put('/:id/rename', { schema: { params: Params }, responseSchema: VersionedItem })
    rename (request: ViewRequest<{ params: typeof Params }>) {
      return rows.update({ id: request.params.id }, { name: 'renamed' })
    }

    @Get('/:id/moved', { schema: { params: Params }, responseSchema: VersionedItem })
    moved (request: ViewRequest<{ params: typeof Params }>) {
      this.reply.code(300)
      return rows.get({ id: request.params.id })
    }

    // Another representation, with a version member of its own: no tag of the item's representation.
    @Get('/:id/summary', { schema: { params: Params }, responseSchema: Type.Object({ id: Type.Integer(), version: Type.Integer() }) })
    summary (request: ViewRequest<{ params: typeof Params }>) {
      const { id, version } = rows.get({ id: request.params.id })!
      return { id, version }
    }

    @Get('/:id/own-tag', { schema: { params: Params }, responseSchema: VersionedItem })
    ownTag (request: ViewRequest<{ params: typeof Params }>) {
      return this.checkEtag('"mine"') ?? rows.get({ id: request.params.id })
    }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  rows.create({ name: 'lamp', price: 1 })
  const stale = (await app.inject('/items/1')).headers.etag as string
  rows.update({ id: 1 }, { price: 2 })
  problem(t, await app.inject({ method: 'PUT', url: '/items/1/rename', headers: { 'if-match': stale } }), 412)
  problem(t, await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': stale }, payload: { name: 'x', price: 1 } }), 412)
  t.same([rows.get({ id: 1 })!.name, rows.get({ id: 1 })!.version], ['lamp', 2], 'nothing written with a stale tag')
  const current = (await app.inject('/items/1')).headers.etag as string
  const renamed = await app.inject({ method: 'PUT', url: '/items/1/rename', headers: { 'if-match': current } })
  t.same([renamed.statusCode, renamed.json().name], [200, 'renamed'])
  t.equal((await app.inject('/items/1/own-tag')).headers.etag, '"mine"', 'a handler\'s own ETag is kept')
  const summary = await app.inject('/items/1/summary')
  t.match([summary.json().version, summary.headers.etag], [3, /^"[A-Za-z0-9_-]{27}"$/], 'a body of another schema is hashed, its version member notwithstanding')
  const moved = await app.inject('/items/1/moved')
  t.same([moved.statusCode, moved.json().name, moved.headers.etag], [300, 'renamed', undefined], 'only a 2xx is a representation with a version tag')
})

test('SQLite, two instances over one file: concurrent writes with one version tag, one winner', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-versioned-'))
  const file = path.join(dir, 'items.db')
  const setup = new Database(file)
  setup.pragma('journal_mode = WAL')
  setup.exec(versionedTable('INTEGER PRIMARY KEY'))
  setup.close()
  const connections = [new Database(file), new Database(file)]
  const apps = await Promise.all(connections.map(async (db) =>
    await versionedApp(new AsyncSqliteRepository<VersionedItemT>(db, VersionedTableOptions))))
  t.teardown(async () => {
    for (const app of apps) await app.close()
    for (const db of connections) db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  await raceConditionalWrites(t, apps, { clients: 24, rounds: 4 })
})

test('MemoryRepository: concurrent writes with one version tag, one winner', async (t) => {
  const app = await versionedApp(asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(memory()))
  t.teardown(() => app.close())
  await raceConditionalWrites(t, [app])
})

test('stores keep the version: 1 on create, one more on every update, whatever the values say', async (t) => {
  const db = new Database(':memory:')
  db.exec(versionedTable('INTEGER PRIMARY KEY'))
  const stores = { memory: memory(), sqlite: new SqliteRepository<VersionedItemT>(db, VersionedTableOptions) }
  for (const [name, store] of Object.entries(stores)) {
    const created = store.create({ name: 'a', price: 1, version: 40 })!
    t.equal(created.version, 1, `${name}: create sets 1`)
    t.equal(store.update({ id: created.id }, { name: 'b', version: 99 })!.version, 2, `${name}: update adds one, the value given is ignored`)
    t.equal(store.update({ id: created.id }, {})!.version, 2, `${name}: an update that changes nothing keeps the version`)
    t.equal(store.updateMany({ price: 5 }, { id: created.id }).at(0)!.version, 3, `${name}: updateMany adds one`)
    store.bulkUpdate([{ id: created.id, name: 'c', price: 6 }])
    t.equal(store.get({ id: created.id })!.version, 4, `${name}: bulkUpdate adds one`)
    t.same(store.createMany([{ name: 'd', price: 1 }, { name: 'e', price: 2 }]).map((row) => row.version), [1, 1], `${name}: createMany sets 1`)
    t.equal(store.update({ id: created.id, version: 3 }, { name: 'stale' }), null, `${name}: a version criterion that no longer holds writes nothing`)
    t.equal(store.get({ id: created.id })!.name, 'c')
  }
  t.equal(stores.memory.versionField, 'version')
  t.equal(stores.sqlite.versionField, 'version')
  t.equal(asyncRepository(stores.sqlite).versionField, 'version', 'asyncRepository carries the declaration')
  t.match(await caught(() => new SqliteRepository(db, { ...VersionedTableOptions, versionColumn: 'revision' })),
    { code: 'FV_ERR_SQL_NAME', message: /versionColumn "revision" is not one of its columns/ })
})

test('an envelope: the tag is the member\'s version; representations of one row have different tags', async (t) => {
  const rows = memory()
  const base = {
    responseSchema: VersionedItem,
    createSchema: Type.Object({ name: Type.String(), price: Type.Number() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true, versionField: 'version' },
    repository: rows
  }
  class Wrapped extends mix(ConditionalMixin, GenericViewSet).with({ ...base, envelope: 'item' }) {}
  class Plain extends mix(ConditionalMixin, GenericViewSet).with(base) {}
  const app = await build({ views: [{ view: Wrapped, prefix: '/wrapped' }, { view: Plain, prefix: '/plain' }] })
  t.teardown(() => app.close())
  rows.create({ name: 'lamp', price: 1 })
  const wrapped = await app.inject('/wrapped/1')
  const plain = await app.inject('/plain/1')
  t.match(wrapped.headers.etag, /^"[A-Za-z0-9_-]{8}\.1"$/)
  t.match(plain.headers.etag, /^"[A-Za-z0-9_-]{8}\.1"$/)
  t.not(wrapped.headers.etag, plain.headers.etag, 'two representations, two tags')
  const crossed = await app.inject({ method: 'PUT', url: '/wrapped/1', headers: { 'if-match': plain.headers.etag as string }, payload: { item: { name: 'x', price: 2 } } })
  problem(t, crossed, 412)
  const put = await app.inject({ method: 'PUT', url: '/wrapped/1', headers: { 'if-match': wrapped.headers.etag as string }, payload: { item: { name: 'x', price: 2 } } })
  t.equal(put.statusCode, 200)
  t.equal(put.headers.etag, (await app.inject('/wrapped/1')).headers.etag)
})

test('object permissions come before the version: 403, never a 412 that tells the version of what the client may not write', async (t) => {
  const rows = memory()
  class Items extends mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: VersionedItem,
    createSchema: Type.Object({ name: Type.String(), price: Type.Number() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true, versionField: 'version' },
    repository: rows,
    objectPermissionActions: ['update', 'partialUpdate', 'destroy']
  }, {
    checkObjectPermissions (item: VersionedItemT) {
      if (item.name === 'locked') throw new Forbidden('Locked.')
    }
  }) {}
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  rows.create({ name: 'locked', price: 1 })
  const etag = (await app.inject('/items/1')).headers.etag as string
  problem(t, await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'x', price: 1 } }), 403)
  problem(t, await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': etag.replace('.1"', '.9"') }, payload: { name: 'x', price: 1 } }), 403)
  problem(t, await app.inject({ method: 'DELETE', url: '/items/1', headers: { 'if-match': etag } }), 403)
  t.equal(rows.get({ id: 1 })!.version, 1, 'nothing written')
})

test('versionField mistakes are refused at registration, naming the view and the fix', async (t) => {
  const Schema = { responseSchema: VersionedItem, detailParams: Type.Object({ id: Type.Integer() }) }
  const cases = [
    { name: 'etag off', statics: { conditional: { requests: true, versionField: 'version' }, repository: memory() }, message: /Cannot register Items: conditional\.versionField "version" makes the ETags of etag: true.*Set conditional = \{ etag: true, versionField \}/ },
    { name: 'a store that keeps no version', statics: { conditional: { etag: true, versionField: 'version' }, repository: new MemoryRepository<VersionedItemT>() }, message: /conditional\.versionField is "version", but its repository keeps no version.*versionColumn of a SQL table/ },
    { name: 'another field', statics: { conditional: { etag: true, versionField: 'revision' }, repository: memory() }, message: /conditional\.versionField is "revision", but its repository keeps its version in "version"/ }
  ]
  for (const { name, statics, message } of cases) {
    class Items extends mix(ConditionalMixin, GenericViewSet) {
      static override responseSchema = Schema.responseSchema
      static override detailParams = Schema.detailParams
      static override createSchema = Type.Object({ name: Type.String(), price: Type.Number() })
    }
    Object.assign(Items, statics)
    t.match(await caught(() => build({ views: [{ view: Items, prefix: '/items' }] })), { code: 'FV_ERR_VERSION_FIELD', message }, name)
  }
})

test('AsyncGenericViewSet over a store that is not versioned keeps hashing', async (t) => {
  const rows = new MemoryRepository<VersionedItemT>()
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: VersionedItem,
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true },
    repository: asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(rows)
  }) {}
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  rows.create({ name: 'lamp', price: 1, version: 3 })
  t.match((await app.inject('/items/1')).headers.etag, /^"[A-Za-z0-9_-]{27}"$/, 'without versionField, the body is hashed')
})

test('a 304 from a version tag is decided before the body is serialized: what the application\'s onSend hooks see, on GET and HEAD', async (t) => {
  const Stamped = Type.Object({ ...VersionedItem.properties, changed: Type.String({ format: 'date-time' }) })
  const rows = new MemoryRepository<VersionedItemT & { changed: string }>({ versionField: 'version', rows: [{ id: 1, name: 'lamp', price: 1, version: 4, changed: '2026-01-02T03:04:05Z' }] })
  class Items extends mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Stamped,
    updateSchema: Type.Object({ name: Type.String(), price: Type.Number() }),
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true, versionField: 'version', lastModifiedField: 'changed' },
    repository: rows
  }) {}
  const app = Fastify({ logger: false })
  // An application hook runs before the route's own onSend hooks: it sees what the serializer made.
  const seen: Array<[number, unknown]> = []
  app.addHook('onSend', async (_request, reply, payload) => { seen.push([reply.statusCode, payload]) })
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const ok = await app.inject('/items/1')
  const { etag, 'last-modified': lastModified } = ok.headers
  t.match(etag, /^"[A-Za-z0-9_-]{8}\.4"$/)
  t.equal(lastModified, 'Fri, 02 Jan 2026 03:04:05 GMT')
  t.same(seen.pop(), [200, ok.body], 'a 200 is serialized')
  const cases: Array<[string, Record<string, string>, string]> = [
    ['GET', { 'if-none-match': etag as string }, 'If-None-Match with the tag'],
    ['GET', { 'if-none-match': `"other", W/${etag as string}` }, 'a list holding a weak copy of it (weak comparison, RFC 9110 §13.1.2)'],
    ['HEAD', { 'if-none-match': etag as string }, 'HEAD'],
    ['GET', { 'if-modified-since': lastModified as string }, 'If-Modified-Since alone, at the stamped Last-Modified']
  ]
  for (const [method, headers, what] of cases) {
    const res = await app.inject({ method: method as 'GET' | 'HEAD', url: '/items/1', headers })
    t.equal(res.statusCode, 304, `${what}: 304`)
    t.same([res.body, res.headers['content-type'], res.headers['content-length']], ['', undefined, undefined], `${what}: no body, no Content-Type or Content-Length`)
    t.same([res.headers.etag, res.headers['last-modified']], [etag, lastModified], `${what}: the validators the 200 would carry`)
    t.same(seen.pop(), [304, ''], `${what}: decided before serialization`)
  }
  const other = await app.inject({ url: '/items/1', headers: { 'if-none-match': '"other"', 'if-modified-since': lastModified as string } })
  t.equal(other.statusCode, 200, 'If-None-Match that does not match wins over If-Modified-Since (RFC 9110 §13.1.3)')
  t.same(seen.pop(), [200, other.body])
  const put = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-none-match': etag as string }, payload: { name: 'lamp', price: 2 } })
  t.equal(put.statusCode, 412, 'a write never answers 304: If-None-Match matching the current tag is a 412')
  const written = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'lamp', price: 2 } })
  t.equal(written.headers.etag, String(etag).replace('.4"', '.5"'), 'a write answers with the new version\'s tag')
  t.same(seen.pop(), [200, written.body], 'and is serialized')
  const guessed = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-none-match': String(etag).replace('.4"', '.6"') }, payload: { name: 'lamp', price: 3 } })
  t.same([guessed.statusCode, guessed.headers.etag], [200, String(etag).replace('.4"', '.6"')], 'an If-None-Match naming the version a write makes is no 304: only GET and HEAD answer one')
})

test('a write of a row whose version is no tag (written before the column existed) sends the ETag a GET sends next', async (t) => {
  const rows = new MemoryRepository<VersionedItemT>({ versionField: 'version', rows: [{ id: 1, name: 'n', price: 1, version: -3 }] })
  const app = await versionedApp(asyncRepository<VersionedItemT, MemoryRepository<VersionedItemT>>(rows))
  t.teardown(() => app.close())
  const put = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'm', price: 2 } })
  t.same([put.statusCode, put.json().version], [200, -2])
  t.match(put.headers.etag, /^"[A-Za-z0-9_-]{27}"$/, 'hashed from what GET sends')
  t.equal(put.headers.etag, (await app.inject('/items/1')).headers.etag, 'the tag GET sends')
  const next = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': put.headers.etag as string }, payload: { name: 'o', price: 3 } })
  t.same([next.statusCode, next.json().version], [200, -1], 'a client chains conditional writes with it')
})
