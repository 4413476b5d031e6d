import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type, type Static } from '@sinclair/typebox'
import views, {
  AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView,
  APIView, Get, mix, type ViewRequest
} from '../lib/index.js'
import { swaggerOptions } from '../lib/swagger.js'

export const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  price: Type.Number({ minimum: 0 }),
  updated_at: Type.String({ format: 'date-time' })
}, { $id: 'Item' })
export const ItemIn = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  price: Type.Number({ minimum: 0 })
}, { $id: 'ItemIn' })
const IdParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })

type ItemT = Static<typeof Item>
type ItemInT = Static<typeof ItemIn>

/** A small in-process store, enough for the example until a real repository is wired in. */
export class ItemStore {
  private readonly rows = new Map<number, ItemT>()
  private next = 1

  list (): ItemT[] { return [...this.rows.values()] }
  get (id: number): ItemT | null { return this.rows.get(id) ?? null }
  create (data: ItemInT): ItemT {
    const item = { id: this.next++, ...data, updated_at: new Date().toISOString() }
    this.rows.set(item.id, item)
    return item
  }

  update (id: number, data: Partial<ItemInT>): ItemT | null {
    const row = this.rows.get(id)
    if (row === undefined) return null
    Object.assign(row, data, { updated_at: new Date().toISOString() })
    return row
  }

  delete (id: number): boolean { return this.rows.delete(id) }
}

declare module 'fastify' {
  interface FastifyInstance { items: ItemStore }
}

type Models = { item: ItemT, create: ItemInT, update: ItemInT, partialUpdate: Partial<ItemInT>, params: Static<typeof IdParams> }

/** `/items`: every CRUD verb, typed from the schemas above. */
export class Items extends mix(AsyncListAPIView, AsyncCreateAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView, AsyncPartialUpdateAPIView, AsyncDestroyAPIView)<Models> {
  static override responseSchema = Item
  static override createSchema = ItemIn
  static override detailParams = IdParams

  override async list () { return this.server.items.list() }
  override async create (request: ViewRequest<{ body: typeof ItemIn }>) { return this.server.items.create(request.body) }
  override getLocation (item: ItemT) { return `/items/${item.id}` }
  override async retrieve (request: ViewRequest<{ params: typeof IdParams }>) { return this.server.items.get(request.params.id) }
  override async update (request: ViewRequest<{ params: typeof IdParams, body: typeof ItemIn }>) {
    return this.server.items.update(request.params.id, request.body)
  }

  override async partialUpdate (request: FastifyRequestPartial) {
    return this.server.items.update(request.params.id, request.body)
  }

  override async destroy (request: ViewRequest<{ params: typeof IdParams }>) { return this.server.items.delete(request.params.id) || null }
}

type FastifyRequestPartial = ViewRequest<{ params: typeof IdParams }> & { body: Partial<ItemInT> }

/** `/health`: a plain APIView with one custom route. */
export class Health extends APIView {
  @Get('/', { responseSchema: Type.Object({ status: Type.Literal('ok') }), summary: 'Liveness probe' })
  health () { return { status: 'ok' as const } }
}

/** Builds the example API: views under `/items` and `/health`, Swagger UI at `/docs`. */
export async function buildApp (options: FastifyServerOptions = {}): Promise<FastifyInstance> {
  const app = Fastify(options)
  app.decorate('items', new ItemStore())
  await app.register(swagger, swaggerOptions({
    info: { title: 'Shop', version: '1.0.0', description: 'The fastify-views example API.' }
  }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(views, { views: [{ view: Items, prefix: '/items' }, { view: Health, prefix: '/health' }] })
  return app
}
