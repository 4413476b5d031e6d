import type { FastifyInstance } from 'fastify'
import { views } from '../../lib/index.js'
import { AsyncGenericRetrieveAPIView } from '../../lib/generics.js'
import { DETAIL_ID, IdParams, Product, productRepository } from './catalog.js'
import type { Scenario } from './types.js'

const PREFIX = '/generic-retrieve'

/** GET one row by its integer id from a 20-row in-memory repository. */
export const genericRetrieve: Scenario = {
  name: 'generic-retrieve',
  description: `GET /:id (integer id params schema) of one row of a 20-row in-memory repository (id ${DETAIL_ID}), response schema Product`,
  // 4 rounds of 1.5 s keep the default run near 4 minutes; BENCH_ROUNDS=20 for figures worth pooling.
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    const repository = productRepository()

    // Hand-written: the same params and response schemas, the same `get` call, a 404
    // when nothing matches (never taken here).
    app.get<{ Params: { id: number } }>(`${PREFIX}/fastify/:id`, { schema: { params: IdParams, response: { 200: Product } } },
      async function getProduct (request, reply) {
        const item = await repository.get({ id: request.params.id }, {})
        if (item === null) return reply.callNotFound()
        return item
      })

    class Products extends AsyncGenericRetrieveAPIView<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository
    }
    // configureApp: false: server.ts configured the app; a second
    // unprefixed sibling context configuring it again would fail to start.
    // The same view without the response check, which the hand-written route does not do:
    // the difference between the two views is what validateResponse costs.
    class ProductsUnchecked extends Products {
      static override validateResponse = false
    }
    await app.register(views, {
      configureApp: false,
      views: [{ view: Products, prefix: `${PREFIX}/view` }, { view: ProductsUnchecked, prefix: `${PREFIX}/view-nocheck` }]
    })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route awaiting repository.get, params and response schemas',
    request: { method: 'GET', path: `${PREFIX}/fastify/${DETAIL_ID}` }
  },
  variants: [
    {
      name: 'view',
      label: 'AsyncGenericRetrieveAPIView, detailParams { id: integer } (validateResponse = true)',
      request: { method: 'GET', path: `${PREFIX}/view/${DETAIL_ID}` }
    },
    {
      name: 'view-nocheck',
      label: 'the same view with validateResponse = false: the same work as the hand-written route',
      request: { method: 'GET', path: `${PREFIX}/view-nocheck/${DETAIL_ID}` }
    }
  ]
}
