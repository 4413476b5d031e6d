import type { FastifyInstance } from 'fastify'
import { views } from '../../lib/index.js'
import { AsyncGenericListAPIView } from '../../lib/generics.js'
import { Product, ProductList, productRepository } from './catalog.js'
import type { Scenario } from './types.js'

const PREFIX = '/list-1000'
/** Rows in the repository, all of them in every answer. */
const ROWS = 1000

/** GET the whole list of a 1,000-row in-memory repository: a page of 1,000 items. */
export const list1000: Scenario = {
  name: 'list-1000',
  description: `GET all ${ROWS.toLocaleString('en-US')} rows of an in-memory repository (MemoryRepository behind asyncRepository, no filter), ` +
    'response schema Type.Array(Product), 87 kB per answer',
  // Each request serializes 1,000 items (a few hundred µs): a run of 1 s is a thousand requests or
  // more. 3 rounds keep the default run short; BENCH_ROUNDS=12 BENCH_DURATION=1.5 for figures worth reporting.
  rounds: 3,
  duration: 1,
  warmup: 0.75,
  async register (app: FastifyInstance) {
    const repository = productRepository(ROWS)

    // Hand-written: the call the generic list makes, awaited, with the same response schema.
    app.get(`${PREFIX}/fastify`, { schema: { response: { 200: ProductList } } }, async function listProducts () {
      return await repository.list({}, { orderBy: [] }, {})
    })

    class Products extends AsyncGenericListAPIView<{ item: Product }> {
      static override responseSchema = Product
      static override repository = repository
    }
    // Without the response check, which the hand-written route does not do: on 1,000 items the
    // difference between the two views is what validateResponse costs.
    class ProductsUnchecked extends Products {
      static override validateResponse = false
    }
    // configureApp: false: server.ts configured the app.
    await app.register(views, {
      configureApp: false,
      views: [{ view: Products, prefix: `${PREFIX}/view` }, { view: ProductsUnchecked, prefix: `${PREFIX}/view-nocheck` }]
    })
  },
  baseline: {
    name: 'fastify',
    label: `hand-written Fastify route awaiting repository.list (${ROWS} rows), response schema`,
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
