import { Type, type Static } from '@sinclair/typebox'
import type { FastifyInstance } from 'fastify'
import { APIView, Get, views } from '../../lib/index.js'
import type { Scenario } from './types.js'

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number()
})
type Item = Static<typeof Item>

const ItemList = Type.Array(Item)

/** The body of every variant: 20 items, the same array on every request. */
const ITEMS: Item[] = Array.from({ length: 20 }, (_, i) => ({
  id: i + 1,
  name: `Item ${i + 1}`,
  price: Math.round((4.99 + i * 1.25) * 100) / 100
}))

/** The view, as the library's users write it: the returned value is validated (default). */
class Items extends APIView {
  static override responseSchema = Item

  @Get('/', { responseSchema: ItemList })
  list () {
    return ITEMS
  }
}

/** The same view without the response check: only Fastify's compiled serializer runs. */
class ItemsUnchecked extends APIView {
  static override responseSchema = Item
  static override validateResponse = false

  @Get('/', { responseSchema: ItemList })
  list () {
    return ITEMS
  }
}

const PREFIX = '/items'

/** GET a list of 20 small objects, serialized by a TypeBox `Type.Array(Item)` schema. */
export const items: Scenario = {
  name: 'items',
  description: 'GET a 20-item array of { id: integer, name: string, price: number }, response schema Type.Array(Item)',
  async register (app: FastifyInstance) {
    // Hand-written: same schema, so Fastify serializes with the same compiled
    // serializer; a sync handler, like the view's `list`.
    app.get(`${PREFIX}/fastify`, { schema: { response: { 200: ItemList } } }, function listItems () {
      return ITEMS
    })
    await app.register(views, {
      views: [
        { view: Items, prefix: `${PREFIX}/view` },
        { view: ItemsUnchecked, prefix: `${PREFIX}/view-nocheck` }
      ]
    })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route, response schema',
    request: { method: 'GET', path: `${PREFIX}/fastify` }
  },
  variants: [
    {
      name: 'view',
      label: 'APIView, validateResponse = true (default)',
      request: { method: 'GET', path: `${PREFIX}/view` }
    },
    {
      name: 'view-nocheck',
      label: 'APIView, validateResponse = false',
      request: { method: 'GET', path: `${PREFIX}/view-nocheck` }
    }
  ]
}
