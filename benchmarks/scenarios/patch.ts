import { rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { views } from '../../lib/index.js'
import { AsyncGenericPartialUpdateAPIView, GenericPartialUpdateAPIView } from '../../lib/generics.js'
import { SqliteRepository } from '../../lib/stores/sql/index.js'
import { DETAIL_ID, IdParams, Product, productRepository } from './catalog.js'
import type { Scenario } from './types.js'

/** What a product's update may change; PATCH takes any part of it. */
const ProductIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
type ProductIn = Static<typeof ProductIn>
const ProductPatch = Type.Partial(ProductIn)
type ProductPatch = Static<typeof ProductPatch>

/**
 * The same change, one member, in each format: every request writes the same value, so the
 * row, and every answer, stay the same from one request to the next.
 */
const PRICE = 9.5
const PLAIN = JSON.stringify({ price: PRICE })
const MERGE = JSON.stringify({ price: PRICE })
const JSON_PATCH = JSON.stringify([{ op: 'replace', path: '/price', value: PRICE }])

/** The four requests of a PATCH scenario, to `<prefix>/<route>/<id>`. */
function patchVariants (prefix: string, id: number, store: string) {
  const to = (route: string): string => `${prefix}/${route}/${id}`
  return {
    baseline: {
      name: 'fastify',
      label: `hand-written Fastify PATCH route, params, Type.Partial body and response schemas: ${store}`,
      request: { method: 'PATCH' as const, path: to('fastify'), headers: { 'content-type': 'application/json' }, body: PLAIN }
    },
    variants: [
      {
        name: 'view-json-only',
        label: 'generic partial update view with patchFormats = [\'json\']: a plain application/json partial body (no patch formats)',
        request: { method: 'PATCH' as const, path: to('json-only'), headers: { 'content-type': 'application/json' }, body: PLAIN }
      },
      {
        name: 'view-json',
        label: 'the same view with its default patchFormats (json, merge-patch, json-patch): the same plain application/json body',
        request: { method: 'PATCH' as const, path: to('formats'), headers: { 'content-type': 'application/json' }, body: PLAIN }
      },
      {
        name: 'view-merge-patch',
        label: `the view with patch formats, the same change as an application/merge-patch+json document ${MERGE}`,
        request: { method: 'PATCH' as const, path: to('formats'), headers: { 'content-type': 'application/merge-patch+json' }, body: MERGE }
      },
      {
        name: 'view-json-patch',
        label: `the view with patch formats, the same change as an application/json-patch+json document ${JSON_PATCH}`,
        request: { method: 'PATCH' as const, path: to('formats'), headers: { 'content-type': 'application/json-patch+json' }, body: JSON_PATCH }
      }
    ],
    // The target is between two views: the patch formats may cost a plain JSON body 3 % at most.
    // The patch documents do more than the hand-written route (a read, the patch, a conditional
    // write): they are reported against it, with no target.
    ratioTarget: null,
    comparisons: [
      { subject: 'view-json', reference: 'view-json-only', label: 'a plain JSON PATCH costs at most 1.03× the same view without patch formats', maxRatio: 1.03 },
      { subject: 'view-json-only', reference: 'fastify', label: 'the view without patch formats against the hand-written route', informational: true },
      { subject: 'view-merge-patch', reference: 'fastify', label: 'a merge patch against the hand-written plain partial update', informational: true },
      { subject: 'view-json-patch', reference: 'fastify', label: 'a JSON Patch against the hand-written plain partial update', informational: true }
    ]
  }
}

const PREFIX = '/patch'

/**
 * PATCH one product of an in-memory repository: a plain JSON body through a view with and
 * without patch formats, a merge patch and a JSON Patch, against a hand-written route.
 */
export const patchScenario: Scenario = {
  name: 'patch',
  description: `PATCH /:id of one row (id ${DETAIL_ID}) of a 20-row in-memory repository (MemoryRepository behind asyncRepository), the change { price: ${PRICE} }: ` +
    'AsyncGenericPartialUpdateAPIView without patch formats and with them (plain JSON, merge patch, JSON Patch), vs a hand-written route awaiting repository.update',
  // 3 rounds of 1 s keep the default run short; BENCH_ROUNDS=12 BENCH_DURATION=1.5 for figures worth reporting.
  rounds: 3,
  duration: 1,
  warmup: 0.75,
  async register (app: FastifyInstance) {
    const repository = productRepository()

    // Hand-written: the same schemas, the call the generic partial update makes, a 404 when
    // nothing matches (never taken here).
    app.patch<{ Params: { id: number }, Body: ProductPatch }>(`${PREFIX}/fastify/:id`,
      { schema: { params: IdParams, body: ProductPatch, response: { 200: Product } } },
      async function patchProduct (request, reply) {
        const item = await repository.update({ id: request.params.id }, request.body, {})
        if (item === null) return reply.callNotFound()
        return item
      })

    // MemoryRepository writes atomically, so a generic view over it takes every format by default.
    class Products extends AsyncGenericPartialUpdateAPIView<{
      item: Product,
      update: ProductIn,
      params: { id: number }
    }> {
      static override responseSchema = Product
      static override updateSchema = ProductIn
      static override detailParams = IdParams
      static override repository = repository
    }
    class ProductsJsonOnly extends Products {
      static override patch = { formats: ['json'] as const }
    }
    // configureApp: false: server.ts configured the app.
    await app.register(views, {
      configureApp: false,
      views: [{ view: Products, prefix: `${PREFIX}/formats` }, { view: ProductsJsonOnly, prefix: `${PREFIX}/json-only` }]
    })
  },
  ...patchVariants(PREFIX, DETAIL_ID, 'awaiting repository.update')
}

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
type Item = Static<typeof Item>
const ItemIdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const SQLITE_PREFIX = '/sqlite-patch'
const ROW_ID = 1

/** A WAL SQLite file in the temporary folder, removed when the server exits. */
function openDatabase (): Database.Database {
  const file = path.join(tmpdir(), `fastify-views-bench-patch-${process.pid}.db`)
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.pragma('synchronous = NORMAL')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL)')
  db.prepare('INSERT INTO items (id, name, price) VALUES (?, ?, ?)').run(ROW_ID, 'Lamp', PRICE)
  process.once('exit', () => { db.close(); for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true }) })
  return db
}

/** The same PATCH requests on one row of a SQLite file. */
export const sqlitePatch: Scenario = {
  name: 'sqlite-patch',
  description: `PATCH /:id of one row of a SQLite file (WAL), the change { price: ${PRICE} }: GenericPartialUpdateAPIView over SqliteRepository ` +
    'without patch formats and with them (plain JSON, merge patch, JSON Patch), vs a hand-written route running a prepared UPDATE ... RETURNING of the members sent',
  // 3 rounds of 1 s keep the default run short; BENCH_ROUNDS=12 BENCH_DURATION=1.5 for figures worth reporting.
  rounds: 3,
  duration: 1,
  warmup: 0.75,
  async register (app: FastifyInstance) {
    const db = openDatabase()
    // Hand-written partial update: an UPDATE of the members the body holds, its statement
    // prepared once per set of members (the body schema names them; nothing else reaches SQL).
    const columns = Object.keys(ProductIn.properties)
    const statements = new Map<string, Database.Statement>()
    const updateOf = (members: string[]): Database.Statement => {
      const key = members.join(',')
      let statement = statements.get(key)
      if (statement === undefined) {
        statement = db.prepare(`UPDATE items SET ${members.map((m) => `"${m}" = ?`).join(', ')} WHERE id = ? RETURNING id, name, price`)
        statements.set(key, statement)
      }
      return statement
    }
    const select = db.prepare('SELECT id, name, price FROM items WHERE id = ?')
    app.patch<{ Params: { id: number }, Body: ProductPatch }>(`${SQLITE_PREFIX}/fastify/:id`,
      { schema: { params: ItemIdParams, body: ProductPatch, response: { 200: Item } } },
      async function patchItem (request, reply) {
        const body = request.body as Record<string, unknown>
        const members = columns.filter((c) => body[c] !== undefined)
        const item = members.length === 0
          ? select.get(request.params.id)
          : updateOf(members).get(...members.map((m) => body[m]), request.params.id)
        if (item === undefined) return reply.callNotFound()
        return item
      })

    // SqliteRepository writes atomically (atomicPreconditions), so the view takes every format by default.
    class Items extends GenericPartialUpdateAPIView<{ item: Item, update: ProductIn, params: { id: number } }> {
      static override responseSchema = Item
      static override updateSchema = ProductIn
      static override detailParams = ItemIdParams
      static override repository = new SqliteRepository<Item>(db, { table: 'items', columns: ['id', 'name', 'price'] })
    }
    class ItemsJsonOnly extends Items {
      static override patch = { formats: ['json'] as const }
    }
    await app.register(views, {
      configureApp: false,
      views: [{ view: Items, prefix: `${SQLITE_PREFIX}/formats` }, { view: ItemsJsonOnly, prefix: `${SQLITE_PREFIX}/json-only` }]
    })
  },
  ...patchVariants(SQLITE_PREFIX, ROW_ID, 'a prepared UPDATE ... RETURNING of the members sent')
}
