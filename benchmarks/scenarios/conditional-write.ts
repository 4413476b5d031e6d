import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { mix, views } from '../../lib/index.js'
import { GenericUpdateAPIView } from '../../lib/generics.js'
import { ConditionalMixin, etagOf } from '../../lib/conditional.js'
import { SqliteRepository } from '../../lib/stores/sql/index.js'
import type { Scenario } from './types.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
type Item = Static<typeof Item>
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const PREFIX = '/conditional-write'
const BODY = { name: 'Lamp', price: 9.5 }
// Every PUT writes the same values, so the representation, and its tag, stay the same:
// the If-Match variant always matches and always writes.
const ETAG = etagOf(JSON.stringify({ id: 1, ...BODY }))

/** A WAL SQLite file in the temporary folder, removed when the server exits. */
function openDatabase (): Database.Database {
  const file = path.join(tmpdir(), `fastify-views-bench-write-${process.pid}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)')
  db.prepare('INSERT INTO items (id, name, price) VALUES (1, ?, ?)').run(BODY.name, BODY.price)
  process.once('exit', () => { db.close(); for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true }) })
  return db
}

/** PUT one row of a SQLite file: unconditional and with If-Match, through a conditional generic view, against a hand-written route. */
export const conditionalWrite: Scenario = {
  name: 'conditional-write',
  description: 'PUT /:id of one row of a SQLite file (WAL): mix(ConditionalMixin, GenericUpdateAPIView) with etag over SqliteRepository, ' +
    'beside a plain generic update view; unconditional and with a matching If-Match (checked in preValidation, then again with the write in one transaction), ' +
    'against a hand-written route running a prepared UPDATE ... RETURNING',
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    const db = openDatabase()
    const update = db.prepare('UPDATE items SET name = ?, price = ? WHERE id = ? RETURNING id, name, price')
    app.put<{ Params: { id: number }, Body: Static<typeof ItemIn> }>(`${PREFIX}/fastify/:id`,
      { schema: { params: IdParams, body: ItemIn, response: { 200: Item } } },
      async function putItem (request, reply) {
        const item = update.get(request.body.name, request.body.price, request.params.id)
        if (item === undefined) return reply.callNotFound()
        return item
      })
    class Plain extends mix(
      GenericUpdateAPIView
    )<{ item: Item, update: Static<typeof ItemIn>, params: { id: number } }> {
      static override responseSchema = Item
      static override updateSchema = ItemIn
      static override detailParams = IdParams
      static override repository = new SqliteRepository<Item>(db, { table: 'items', columns: ['id', 'name', 'price'] })
    }
    class Items extends mix(ConditionalMixin, GenericUpdateAPIView)<{
      item: Item,
      update: Static<typeof ItemIn>,
      params: { id: number }
    }> {
      static override responseSchema = Item
      static override updateSchema = ItemIn
      static override detailParams = IdParams
      static override conditional = { etag: true }
      static override repository = new SqliteRepository<Item>(db, { table: 'items', columns: ['id', 'name', 'price'] })
    }
    await app.register(views, { configureApp: false, views: [{ view: Plain, prefix: `${PREFIX}/plain` }, { view: Items, prefix: `${PREFIX}/view` }] })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route running a prepared UPDATE ... RETURNING, params, body and response schemas',
    request: { method: 'PUT', path: `${PREFIX}/fastify/1`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY) }
  },
  variants: [
    {
      name: 'plain',
      label: 'a generic update view without conditional requests (one UPDATE statement)',
      request: { method: 'PUT', path: `${PREFIX}/plain/1`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY) }
    },
    {
      name: 'view',
      label: 'the conditional view, PUT without If-Match (the unconditional path: one UPDATE statement, and the ETag of the new representation)',
      request: { method: 'PUT', path: `${PREFIX}/view/1`, headers: { 'content-type': 'application/json' }, body: JSON.stringify(BODY) }
    },
    {
      name: 'view-if-match',
      label: 'the same view, PUT with a matching If-Match (precondition read, then BEGIN IMMEDIATE, SELECT, UPDATE, COMMIT)',
      request: { method: 'PUT', path: `${PREFIX}/view/1`, headers: { 'content-type': 'application/json', 'if-match': ETAG }, body: JSON.stringify(BODY), expectStatus: 200 }
    }
  ]
}
