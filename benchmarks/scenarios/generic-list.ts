import type { FastifyInstance } from 'fastify'
import { views } from '../../lib/index.js'
import { AsyncGenericListAPIView } from '../../lib/generics.js'
import { Product, ProductList, productRepository } from './catalog.js'
import type { Scenario } from './types.js'

const PREFIX = '/generic-list'

/** GET the whole (unfiltered, unpaginated) list of a 20-row in-memory repository. */
export const genericList: Scenario = {
  name: 'generic-list',
  description: 'GET all 20 rows of an in-memory repository (MemoryRepository behind asyncRepository, no filter), response schema Type.Array(Product)',
  // 4 rounds of 1.5 s keep the default run near 4 minutes; BENCH_ROUNDS=20 for figures worth pooling.
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    // One repository for both routes: the same rows, the same `list` call.
    const repository = productRepository()

    // Hand-written: the call the generic list makes (no criteria, no ordering, no
    // options), awaited, with the same response schema.
    app.get(`${PREFIX}/fastify`, { schema: { response: { 200: ProductList } } }, async function listProducts () {
      return await repository.list({}, { orderBy: [] }, {})
    })

    class Products extends AsyncGenericListAPIView<{ item: Product }> {
      static override responseSchema = Product
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
    label: 'hand-written Fastify route awaiting repository.list, response schema',
    request: { method: 'GET', path: `${PREFIX}/fastify` }
  },
  variants: [
    {
      name: 'view',
      label: 'AsyncGenericListAPIView over the same repository (validateResponse = true)',
      request: { method: 'GET', path: `${PREFIX}/view` }
    },
    {
      name: 'view-nocheck',
      label: 'the same view with validateResponse = false: the same work as the hand-written route',
      request: { method: 'GET', path: `${PREFIX}/view-nocheck` }
    }
  ]
}
