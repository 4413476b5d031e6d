import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import pg from 'pg'
import etag from '@fastify/etag'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { mix, views } from '../../lib/index.js'
import { AsyncGenericRetrieveAPIView, AsyncGenericUpdateAPIView, GenericUpdateAPIView, asyncRepository } from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'
import { PostgresRepository, SqliteRepository, type SqlTableOptions } from '../../lib/stores/sql/index.js'
import { startPostgres } from '../../test/pg-server.js'
import { versionTags } from '../../lib/views/conditional/versioned.js'
import type { Scenario } from './types.js'

// Conditional requests over a table with a version column (`versionColumn`, a view's `versionField`),
// each against the hand-written route doing the same work on the same SQLite file.

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), version: Type.Integer() })
type Item = Static<typeof Item>
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const TABLE = { table: 'items', columns: ['id', 'name', 'price', 'version'], versionColumn: 'version' } satisfies SqlTableOptions<Item>
const BODY = { name: 'Lamp', price: 9.5 }
/** The tag the view sends for version 1 of a row: what its GET would give. */
const VIEW_TAG = versionTags('version', Item, undefined, { byAlias: true }).tagOf({ version: 1 })!

/**
 * A WAL SQLite file in the temporary folder, removed when the server exits, with one row at
 * version 1. With `pinned`, a trigger puts the version back to 1 after every update, so that a
 * load of identical requests with one `If-Match` always matches and always writes; both ways
 * write the same table, so both pay for the trigger.
 */
function openDatabase (name: string, pinned: boolean): Database.Database {
  const file = path.join(tmpdir(), `fastify-views-bench-${name}-${process.pid}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, version INTEGER NOT NULL)')
  if (pinned) db.exec('CREATE TRIGGER pin AFTER UPDATE OF version ON items BEGIN UPDATE items SET version = 1 WHERE id = NEW.id AND version <> 1; END')
  db.prepare('INSERT INTO items (id, name, price, version) VALUES (1, ?, ?, 1)').run(BODY.name, BODY.price)
  process.once('exit', () => { db.close(); for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true }) })
  return db
}

const WRITE = '/versioned-write'

/** PUT with a matching If-Match: the view's one compare-and-set UPDATE against the same statement written by hand. */
export const versionedWrite: Scenario = {
  name: 'versioned-write',
  description: 'PUT /:id with a matching If-Match on a SQLite file (WAL) whose rows have a version column: ' +
    'mix(ConditionalMixin, GenericUpdateAPIView) with etag and versionField over SqliteRepository with versionColumn, ' +
    'against a hand-written route that reads the version from If-Match and runs the same UPDATE ... AND version = ? RETURNING',
  duration: 1.5,
  warmup: 1,
  ratioTarget: 0.15,
  async register (app: FastifyInstance) {
    const db = openDatabase('versioned-write', true)
    const update = db.prepare('UPDATE items SET name = ?, price = ?, version = version + 1 WHERE id = ? AND version = ? RETURNING id, name, price, version')
    const exists = db.prepare('SELECT 1 FROM items WHERE id = ?')
    // An optimistic-concurrency route as one writes it by hand: the tag is the version in quotes.
    app.put<{ Params: { id: number }, Body: Static<typeof ItemIn> }>(`${WRITE}/fastify/:id`,
      { schema: { params: IdParams, body: ItemIn, response: { 200: Item } } },
      async function putItem (request, reply) {
        const tag = /^"(\d+)"$/.exec(request.headers['if-match'] ?? '')
        if (tag === null) return await reply.code(428).send({ message: 'If-Match required' })
        const item = update.get(
          request.body.name,
          request.body.price,
          request.params.id,
          Number(tag[1])
        ) as Item | undefined
        if (item === undefined) return exists.get(request.params.id) === undefined ? reply.callNotFound() : await reply.code(412).send({ message: 'changed' })
        reply.header('etag', `"${item.version}"`)
        return item
      })
    class Items extends mix(ConditionalMixin, GenericUpdateAPIView).with({
      responseSchema: Item,
      updateSchema: ItemIn,
      detailParams: IdParams,
      conditional: { etag: true, versionField: 'version' },
      repository: new SqliteRepository<Item>(db, TABLE)
    }) {}
    await app.register(views, { configureApp: false, views: [{ view: Items, prefix: `${WRITE}/view` }] })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route: the version from If-Match, a prepared UPDATE ... AND version = ? RETURNING, the new ETag',
    request: { method: 'PUT', path: `${WRITE}/fastify/1`, headers: { 'content-type': 'application/json', 'if-match': '"1"' }, body: JSON.stringify(BODY) }
  },
  variants: [
    {
      name: 'view-if-match',
      label: 'the view with versionField, PUT with a matching If-Match: one UPDATE ... AND "version" = ? RETURNING, the ETag of the new version',
      request: { method: 'PUT', path: `${WRITE}/view/1`, headers: { 'content-type': 'application/json', 'if-match': VIEW_TAG }, body: JSON.stringify(BODY), expectStatus: 200 }
    }
  ]
}

const WRITE_PG = '/versioned-write-pg'

/** The same compare-and-set PUT on PostgreSQL (a throwaway server, Debian's binaries, as the tests start one). */
export const versionedWritePg: Scenario = {
  name: 'versioned-write-pg',
  description: 'PUT /:id with a matching If-Match on PostgreSQL (a local server started for the run, one pool of 10 shared by both ways): ' +
    'mix(ConditionalMixin, AsyncGenericUpdateAPIView) with etag and versionField over PostgresRepository with versionColumn, ' +
    'against a hand-written route running the same UPDATE ... AND version = $4 RETURNING through the pool',
  duration: 1.5,
  warmup: 1,
  ratioTarget: 0.15,
  async register (app: FastifyInstance) {
    const server = await startPostgres()
    process.once('exit', () => { server.stop() })
    const pool = new pg.Pool({ connectionString: server.url, max: 10 })
    pool.on('error', () => {})
    app.addHook('onClose', async () => { await pool.end() })
    await pool.query('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price DOUBLE PRECISION NOT NULL, version INTEGER NOT NULL)')
    // A load of identical requests with one If-Match: the version is put back to 1 by every update, for both ways.
    await pool.query('CREATE FUNCTION pin() RETURNS trigger AS $$ BEGIN NEW.version := 1; RETURN NEW; END $$ LANGUAGE plpgsql')
    await pool.query('CREATE TRIGGER pin BEFORE UPDATE ON items FOR EACH ROW EXECUTE FUNCTION pin()')
    await pool.query('INSERT INTO items (id, name, price, version) VALUES (1, $1, $2, 1)', [BODY.name, BODY.price])
    app.put<{ Params: { id: number }, Body: Static<typeof ItemIn> }>(`${WRITE_PG}/fastify/:id`,
      { schema: { params: IdParams, body: ItemIn, response: { 200: Item } } },
      async function putItem (request, reply) {
        const tag = /^"(\d+)"$/.exec(request.headers['if-match'] ?? '')
        if (tag === null) return await reply.code(428).send({ message: 'If-Match required' })
        const { rows } = await pool.query<Item>('UPDATE items SET name = $1, price = $2, version = version + 1 WHERE id = $3 AND version = $4 RETURNING id, name, price, version',
          [request.body.name, request.body.price, request.params.id, Number(tag[1])])
        if (rows.length === 0) return (await pool.query('SELECT 1 FROM items WHERE id = $1', [request.params.id])).rows.length === 0 ? reply.callNotFound() : await reply.code(412).send({ message: 'changed' })
        reply.header('etag', `"${rows[0].version}"`)
        return rows[0]
      })
    class Items extends mix(ConditionalMixin, AsyncGenericUpdateAPIView).with({
      responseSchema: Item,
      updateSchema: ItemIn,
      detailParams: IdParams,
      conditional: { etag: true, versionField: 'version' },
      repository: new PostgresRepository<Item>(pool, TABLE)
    }) {}
    await app.register(views, { configureApp: false, views: [{ view: Items, prefix: `${WRITE_PG}/view` }] })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route: the version from If-Match, UPDATE ... AND version = $4 RETURNING through the pool, the new ETag',
    request: { method: 'PUT', path: `${WRITE_PG}/fastify/1`, headers: { 'content-type': 'application/json', 'if-match': '"1"' }, body: JSON.stringify(BODY) }
  },
  variants: [
    {
      name: 'view-if-match',
      label: 'the view with versionField over PostgresRepository, PUT with a matching If-Match: one UPDATE ... AND "version" = $4 RETURNING',
      request: { method: 'PUT', path: `${WRITE_PG}/view/1`, headers: { 'content-type': 'application/json', 'if-match': VIEW_TAG }, body: JSON.stringify(BODY), expectStatus: 200 }
    }
  ]
}

const READ = '/versioned-retrieve'
/** A row with a description of about 2 KB (a product page's text): where a 304 saves the body it does not send. */
const Article = Type.Object({
  id: Type.Integer(), title: Type.String(), description: Type.String(), version: Type.Integer()
})
type Article = Static<typeof Article>
const ARTICLES = {
  table: 'articles',
  columns: ['id', 'title', 'description', 'version'],
  versionColumn: 'version'
} satisfies SqlTableOptions<Article>
const DESCRIPTION = 'A reading lamp with a weighted base and an arm that holds its place. '.repeat(30)
const ARTICLE_TAG = versionTags('version', Article, undefined, { byAlias: true }).tagOf({ version: 1 })!

/** GET of one row with an ETag: from the version, hashed, and by @fastify/etag on a hand-written route. */
export const versionedRetrieve: Scenario = {
  name: 'versioned-retrieve',
  description: 'GET /:id of one row of a SQLite file whose rows have a version column: mix(ConditionalMixin, AsyncGenericRetrieveAPIView) with etag, ' +
    'its tag from versionField or hashed from the body, against a hand-written route (prepared SELECT) under @fastify/etag (a SHA-1 of the body)',
  duration: 1.5,
  warmup: 1,
  ratioTarget: 0.05,
  async register (app: FastifyInstance) {
    const db = openDatabase('versioned-retrieve', false)
    const select = db.prepare('SELECT id, name, price, version FROM items WHERE id = ?')
    await app.register(async (scope) => {
      await scope.register(etag)
      scope.get<{ Params: { id: number } }>(`${READ}/fastify-etag/:id`, { schema: { params: IdParams, response: { 200: Item } } },
        async function getItem (request, reply) {
          const item = select.get(request.params.id)
          if (item === undefined) return reply.callNotFound()
          return item
        })
    })
    const repository = asyncRepository<Item, SqliteRepository<Item>>(new SqliteRepository<Item>(db, TABLE))
    const statics = { responseSchema: Item, detailParams: IdParams, conditional: { etag: true }, repository }
    class Versioned extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView).with({ ...statics, conditional: { etag: true, versionField: 'version' } }) {}
    class Hashed extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView).with(statics) {}
    db.exec('CREATE TABLE articles (id INTEGER PRIMARY KEY, title TEXT NOT NULL, description TEXT NOT NULL, version INTEGER NOT NULL)')
    db.prepare('INSERT INTO articles (id, title, description, version) VALUES (1, ?, ?, 1)').run('Reading lamp', DESCRIPTION)
    class Articles extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView).with({
      responseSchema: Article,
      detailParams: IdParams,
      conditional: { etag: true, versionField: 'version' },
      repository: asyncRepository<Article, SqliteRepository<Article>>(new SqliteRepository<Article>(db, ARTICLES))
    }) {}
    await app.register(views, {
      configureApp: false,
      views: [{ view: Versioned, prefix: `${READ}/version` }, { view: Hashed, prefix: `${READ}/hash` }, { view: Articles, prefix: `${READ}/articles` }]
    })
  },
  baseline: {
    name: 'fastify-etag',
    label: 'hand-written Fastify route running a prepared SELECT, under @fastify/etag (SHA-1 of the body): 200 with an ETag',
    request: { method: 'GET', path: `${READ}/fastify-etag/1` }
  },
  variants: [
    {
      name: 'view-version',
      label: 'the view with versionField: 200 with the ETag of the row\'s version, no hash',
      request: { method: 'GET', path: `${READ}/version/1` }
    },
    {
      name: 'view-hash',
      label: 'the same view without versionField: 200 with a SHA-1 ETag of the body',
      request: { method: 'GET', path: `${READ}/hash/1` }
    },
    {
      name: 'view-version-304',
      label: `the view with versionField, If-None-Match: ${VIEW_TAG}: 304, no body`,
      request: { method: 'GET', path: `${READ}/version/1`, headers: { 'if-none-match': VIEW_TAG }, expectStatus: 304 },
      sameBodyAsBaseline: false
    },
    {
      name: 'view-version-2k',
      label: `the view with versionField over a row with a ${DESCRIPTION.length}-character description: 200 with the ETag of its version`,
      request: { method: 'GET', path: `${READ}/articles/1` },
      sameBodyAsBaseline: false
    },
    {
      name: 'view-version-2k-304',
      label: `the same route, If-None-Match: ${ARTICLE_TAG}: 304, no body`,
      request: { method: 'GET', path: `${READ}/articles/1`, headers: { 'if-none-match': ARTICLE_TAG }, expectStatus: 304 },
      sameBodyAsBaseline: false
    }
  ],
  comparisons: [
    { subject: 'view-version-304', reference: 'view-version', label: 'the 304 costs less than the 200 it replaces', maxExtraUs: 0 },
    { subject: 'view-version-2k-304', reference: 'view-version-2k', label: 'on a row of 2 KB, the 304 costs less than the 200 it replaces', maxExtraUs: 0 },
    { subject: 'view-version', reference: 'view-hash', label: 'the tag from the version against the hashed tag', maxExtraUs: 0, informational: true }
  ]
}
