import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { mix, views } from '../../lib/index.js'
import { AsyncGenericCreateAPIView, AsyncGenericListAPIView, AsyncGenericRetrieveAPIView, type AsyncRepository, type Criteria } from '../../lib/generics.js'
import type { PeerItem, PeerItemInput, PeerStore } from './peer-store.js'
import type { Scenario, VariantDefinition } from './types.js'

/** The item: `{ id, name, price, tags, updated_at (date-time) }`, as a user's API row looks. */
export const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String({ format: 'date-time' })
})
const ItemList = Type.Array(Item)
const ItemIn = Type.Object(
  { name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }), tags: Type.Array(Type.String()) }
)
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
const LIST_SIZE = 20
const DETAIL_ID = 7
const CREATE_BODY = JSON.stringify({ name: 'Desk lamp', price: 24.5, tags: ['light', 'office'] })

/** 20 items, kept in memory; a create answers a new item and keeps nothing. */
class MemoryStore implements PeerStore {
  readonly #items: PeerItem[] = Array.from({ length: LIST_SIZE }, (_, i) => ({
    id: i + 1,
    name: `Item ${i + 1}`,
    price: Math.round((4.99 + i * 1.25) * 100) / 100,
    tags: ['catalog', `shelf-${i % 4}`],
    updated_at: new Date(Date.UTC(2026, 0, 1 + i, 10, 0, 0, 500)).toISOString()
  }))

  #next = LIST_SIZE
  async list (): Promise<PeerItem[]> { return this.#items }
  async get (id: number): Promise<PeerItem | null> { return this.#items[id - 1] ?? null }
  async create (values: PeerItemInput): Promise<PeerItem> {
    return {
      id: ++this.#next,
      name: values.name,
      price: values.price,
      tags: values.tags,
      updated_at: new Date().toISOString()
    }
  }
}

const store = new MemoryStore()

const unused = async (): Promise<never> => { throw new Error('not used by the peer scenarios') }
/** The store through the repository protocol, for the views: the same three calls. */
const repository: AsyncRepository<PeerItem> = {
  // The store's own promises, passed on: no extra turn that the other implementations do not take.
  list: () => store.list(),
  get: (criteria: Criteria) => store.get(criteria.id as number),
  create: (values) => store.create(values as unknown as PeerItemInput), // the view validated the body against ItemIn
  count: unused,
  update: unused,
  delete: unused
}

/** The peers, compiled by their own tsconfig (legacy decorators), loaded by URL so this project's compile does not pull them in. */
interface NestPeer { startNest: (store: PeerStore) => Promise<number> }
interface FastifyDecoratorsPeer {
  registerFastifyDecorators: (app: FastifyInstance, store: PeerStore, schemas: Record<'item' | 'list' | 'input' | 'params', object>, prefix: string) => Promise<void>
}
// The modules' own types are checked by their own tsconfig; these interfaces name what is used.
const load = async <T>(path: string): Promise<T> => await import(new URL(path, import.meta.url).href) as T

let nestPort: Promise<number> | undefined
/** One Nest application serves the three scenarios. */
async function nestServer (): Promise<Record<string, number>> {
  nestPort ??= load<NestPeer>('../nest/app.js').then(async (nest) => await nest.startNest(store))
  return { nest: await nestPort }
}

let registered = false
/** Every implementation's routes, once, whichever of the three scenarios runs. */
async function registerAll (app: FastifyInstance): Promise<void> {
  if (registered) return
  registered = true
  // Hand-written: the same schemas, the same store calls, as a Fastify user writes them.
  app.get('/peers/fastify/items', { schema: { response: { 200: ItemList } } }, async function listItems () {
    return await store.list()
  })
  app.get<{ Params: Static<typeof IdParams> }>('/peers/fastify/items/:id', { schema: { params: IdParams, response: { 200: Item } } },
    async function getItem (request, reply) {
      const item = await store.get(request.params.id)
      if (item === null) return reply.callNotFound()
      return item
    })
  app.post<{ Body: Static<typeof ItemIn> }>('/peers/fastify/items', { schema: { body: ItemIn, response: { 201: Item } } },
    async function createItem (request, reply) {
      reply.code(201)
      return await store.create(request.body)
    })

  // fastify-views with its defaults, and tuned (validateResponse = false: no check of
  // the returned value, the same work as the hand-written route).
  class Items extends mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericRetrieveAPIView)<{
    item: PeerItem,
    create: Static<typeof ItemIn>,
    params: Static<typeof IdParams>
  }> {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = IdParams
    static override repository = repository
  }
  class TunedItems extends Items {
    static override validateResponse = false
  }
  // configureApp: false: server.ts configures the shared app once.
  await app.register(views, { configureApp: false, views: [{ view: Items, prefix: '/peers/view/items' }, { view: TunedItems, prefix: '/peers/view-tuned/items' }] })

  const fd = await load<FastifyDecoratorsPeer>('../fastify-decorators/app.js')
  await fd.registerFastifyDecorators(app, store, { item: Item, list: ItemList, input: ItemIn, params: IdParams }, '/peers/fastify-decorators')
}

type Endpoint = 'list' | 'retrieve' | 'create'
const REQUESTS: Record<Endpoint, (root: string) => VariantDefinition['request']> = {
  list: (root) => ({ method: 'GET', path: `${root}/items` }),
  retrieve: (root) => ({ method: 'GET', path: `${root}/items/${DETAIL_ID}` }),
  create: (root) => ({ method: 'POST', path: `${root}/items`, headers: { 'content-type': 'application/json' }, body: CREATE_BODY, expectStatus: 201 })
}
const DESCRIPTIONS: Record<Endpoint, string> = {
  list: `GET all ${LIST_SIZE} items`,
  retrieve: `GET /items/:id (integer id) of item ${DETAIL_ID}`,
  create: 'POST /items with a JSON body checked against { name (minLength 1), price (minimum 0), tags: string[] }, 201'
}

/** One endpoint written by hand, with fastify-views (defaults and tuned), NestJS and fastify-decorators. */
function peerScenario (endpoint: Endpoint): Scenario {
  const request = REQUESTS[endpoint]
  // A create's body differs by its id and time.
  const same = endpoint !== 'create'
  return {
    name: `peers-${endpoint}`,
    description: `${DESCRIPTIONS[endpoint]}; item { id, name, price, tags: string[], updated_at: date-time }; every implementation calls the same in-memory store`,
    rounds: 4,
    duration: 1.5,
    warmup: 1,
    register: registerAll,
    servers: nestServer,
    baseline: { name: 'fastify', label: 'hand-written Fastify route, TypeBox schemas (request and response)', request: request('/peers/fastify') },
    variants: [
      { name: 'views', label: 'fastify-views generic view, defaults (validateResponse = true)', request: request('/peers/view'), sameBodyAsBaseline: same },
      { name: 'views-tuned', label: 'the same view with validateResponse = false', request: request('/peers/view-tuned'), sameBodyAsBaseline: same },
      { name: 'nest', label: 'NestJS 12, FastifyAdapter, ValidationPipe + class-validator DTO, ParseIntPipe', request: request('/peers/nest'), server: 'nest', sameBodyAsBaseline: same },
      { name: 'fastify-decorators', label: 'fastify-decorators 3 controller, the same schemas', request: request('/peers/fastify-decorators'), sameBodyAsBaseline: same }
    ]
  }
}

export const peersList = peerScenario('list')
export const peersRetrieve = peerScenario('retrieve')
export const peersCreate = peerScenario('create')
