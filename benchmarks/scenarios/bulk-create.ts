import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { mix, views } from '../../lib/index.js'
import { AsyncGenericCreateAPIView, MemoryRepository, asyncRepository } from '../../lib/generics.js'
import { AsyncGenericBulkCreateAPIView } from '../../lib/bulk.js'
import type { BatchScenario } from './types.js'

const PREFIX = '/bulk-create'
/** Items created per run, whichever way. */
export const BATCH = 1000

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
type Item = Static<typeof Item>
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })

/** A fresh, empty repository whose `name` is unique, as a catalogue's would be. */
function emptyRepository () {
  return asyncRepository<Item, MemoryRepository<Item>>(new MemoryRepository<Item>({ unique: ['name'] }))
}

/** The 1,000-item body of the bulk ways: distinct names, so no item clashes with another. */
const BULK_BODY = JSON.stringify(Array.from({ length: BATCH }, (_, i) => ({ name: `Item ${i + 1}`, price: Math.round((1 + i * 0.37) * 100) / 100 })))

/** Create 1,000 items: one bulk request, or 1,000 single POSTs. */
export const bulkCreate: BatchScenario = {
  kind: 'batch',
  name: 'bulk-create',
  description: `create ${BATCH.toLocaleString('en-US')} items in an empty in-memory repository (MemoryRepository, unique name, behind asyncRepository): ` +
    `one POST /bulk of a ${BATCH}-item array, or ${BATCH} single POSTs; the repository is replaced by an empty one before every run`,
  async register (app: FastifyInstance) {
    // Every route reads the current repository from here; POST /reset replaces it.
    const state = { repository: emptyRepository() }

    app.post(`${PREFIX}/reset`, async function reset (_request, reply) {
      state.repository = emptyRepository()
      return reply.code(204).send()
    })
    app.get(`${PREFIX}/count`, { schema: { response: { 200: Type.Object({ count: Type.Integer() }) } } }, async function count () {
      return { count: await state.repository.count({}, {}, {}) }
    })

    // Hand-written bulk create: the same body and response schemas, one createMany.
    app.post<{ Body: Array<Static<typeof ItemIn>> }>(`${PREFIX}/fastify/bulk`,
      { schema: { body: Type.Array(ItemIn), response: { 201: Type.Array(Item) } } },
      async function createItems (request, reply) {
        const created = await state.repository.createMany(request.body, {})
        reply.code(201)
        return created
      })

    // Hand-written single create: the same schemas, one create; null (a clash) is a 409.
    app.post<{ Body: Static<typeof ItemIn> }>(`${PREFIX}/fastify`,
      { schema: { body: ItemIn, response: { 201: Item } } },
      async function createItem (request, reply) {
        const created = await state.repository.create(request.body, {})
        if (created === null) return reply.code(409).send({ message: 'Conflict' })
        reply.code(201)
        return created
      })

    // One class serves both: POST /bulk-create/view (create) and POST /bulk-create/view/bulk (bulkCreate).
    class Items extends mix(AsyncGenericBulkCreateAPIView, AsyncGenericCreateAPIView)<{
      item: Item,
      create: Static<typeof ItemIn>
    }> {
      static override responseSchema = Item
      static override createSchema = ItemIn
      override get repository () { return state.repository }
    }
    // configureApp: false: server.ts configured the app; a second
    // unprefixed sibling context configuring it again would fail to start.
    await app.register(views, { configureApp: false, views: [{ view: Items, prefix: `${PREFIX}/view` }] })
  },
  items: BATCH,
  reset: { method: 'POST', path: `${PREFIX}/reset`, expectStatus: 204 },
  check: { request: { method: 'GET', path: `${PREFIX}/count` }, body: JSON.stringify({ count: BATCH }) },
  reference: 'view-bulk',
  repetitions: 6,
  ways: [
    {
      name: 'view-bulk',
      label: `1 POST /bulk of ${BATCH} items: AsyncGenericBulkCreateAPIView (one createMany), 201 with the created items`,
      request: { method: 'POST', path: `${PREFIX}/view/bulk`, headers: { 'content-type': 'application/json' }, body: BULK_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    },
    {
      name: 'fastify-bulk',
      label: `1 POST of ${BATCH} items to a hand-written route (one createMany, same schemas)`,
      request: { method: 'POST', path: `${PREFIX}/fastify/bulk`, headers: { 'content-type': 'application/json' }, body: BULK_BODY, expectStatus: 201 },
      amount: 1,
      connections: 1
    },
    {
      name: 'view-single-c1',
      label: `${BATCH} POSTs of one item each, one after the other on 1 keep-alive connection: AsyncGenericCreateAPIView`,
      request: { method: 'POST', path: `${PREFIX}/view`, headers: { 'content-type': 'application/json' }, body: '{"name":"Item [<id>]","price":9.99}', expectStatus: 201 },
      amount: BATCH,
      connections: 1,
      numbered: true
    },
    {
      name: 'fastify-single-c10',
      label: `${BATCH} POSTs of one item each on 10 keep-alive connections to a hand-written route (repository.create, same schemas)`,
      request: { method: 'POST', path: `${PREFIX}/fastify`, headers: { 'content-type': 'application/json' }, body: '{"name":"Item [<id>]","price":9.99}', expectStatus: 201 },
      amount: BATCH,
      connections: 10,
      numbered: true
    },
    {
      name: 'view-single-c10',
      label: `${BATCH} POSTs of one item each on 10 keep-alive connections in parallel: AsyncGenericCreateAPIView`,
      request: { method: 'POST', path: `${PREFIX}/view`, headers: { 'content-type': 'application/json' }, body: '{"name":"Item [<id>]","price":9.99}', expectStatus: 201 },
      amount: BATCH,
      connections: 10,
      numbered: true
    }
  ]
}
