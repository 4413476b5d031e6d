import etag from '@fastify/etag'
import type { FastifyInstance } from 'fastify'
import { mix, views } from '../../lib/index.js'
import type { ViewRequest } from '../../lib/types.js'
import { AsyncGenericRetrieveAPIView, GenericRetrieveAPIView, MemoryRepository } from '../../lib/generics.js'
import { ConditionalMixin } from '../../lib/conditional.js'
import { DETAIL_ID, IdParams, Product, productRepository, products } from './catalog.js'
import type { Scenario } from './types.js'

const PREFIX = '/etag'

/** `Last-Modified` of the requested row, as the 200 of `view-lm` sends it: the 304 requests send it back. */
const LAST_MODIFIED = new Date(products().find((p) => p.id === DETAIL_ID)!.updated_at).toUTCString()

/**
 * Conditional GETs of one row. The plain retrieve (view and hand-written) these are
 * compared with is `generic-retrieve`'s, measured in the same rounds: its variants
 * are the references of this scenario's µs targets.
 */
export const etagScenario: Scenario = {
  name: 'etag',
  description: `conditional GET /:id of one row (id ${DETAIL_ID}): strong ETags from the view (etag = true) and from @fastify/etag, ` +
    'and checkLastModified answering 200 + Last-Modified or, to If-Modified-Since, 304; compared with generic-retrieve\'s plain routes',
  // 4 rounds of 1.5 s keep the default run near 4 minutes; BENCH_ROUNDS=20 for figures worth pooling.
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  // Every target of this scenario is stated in µs against another variant.
  ratioTarget: null,
  async register (app: FastifyInstance) {
    const repository = productRepository()
    // The same rows for the sync family, whose handler returns the 304 reply itself.
    const syncRepository = new MemoryRepository<Product>({ rows: products() })

    // @fastify/etag hooks every route of the context it is registered in: its own context.
    await app.register(async (scope) => {
      await scope.register(etag)
      scope.get<{ Params: { id: number } }>(`${PREFIX}/fastify-etag/:id`, { schema: { params: IdParams, response: { 200: Product } } },
        async function getProduct (request, reply) {
          const item = await repository.get({ id: request.params.id }, {})
          if (item === null) return reply.callNotFound()
          return item
        })
    })

    class Tagged extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView)<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository
      static override conditional = { etag: true }
    }

    // No `etag`: the only validator is the one the handler sets (conditionalRequests, the
    // switch for hand-rolled validators). Sync, so the handler returns the 304 reply itself
    // (see AsyncDated).
    class Dated extends mix(ConditionalMixin, GenericRetrieveAPIView)<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = syncRepository
      static override conditional = { requests: true }

      override retrieve (request: ViewRequest<{ params: typeof IdParams }>) {
        const item = this.repository.get({ ...request.params, ...this.getKwargs('retrieve') }, this.getRepositoryOptions('retrieve'))
        if (item === null) return null
        return this.checkLastModified(item.updated_at) ?? item
      }
    }

    // The same handler in the async family, as docs/conditional.md writes it. An async
    // function that returns the reply resolves to what the reply's own `then` gives
    // (undefined, once the response is finished), not to the reply.
    class AsyncDated extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView)<{
      item: Product,
      params: { id: number }
    }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository
      static override conditional = { requests: true }

      override async retrieve (request: ViewRequest<{ params: typeof IdParams }>) {
        const item = await this.repository.get({ ...request.params, ...this.getKwargs('retrieve') }, this.getRepositoryOptions('retrieve'))
        if (item === null) return null
        return this.checkLastModified(item.updated_at) ?? item
      }
    }

    // configureApp: false: server.ts configured the app; a second
    // unprefixed sibling context configuring it again would fail to start.
    await app.register(views, {
      configureApp: false,
      views: [
        { view: Tagged, prefix: `${PREFIX}/view-etag` },
        { view: Dated, prefix: `${PREFIX}/view-lm` },
        { view: AsyncDated, prefix: `${PREFIX}/view-lm-async` }
      ]
    })
  },
  baseline: {
    name: 'fastify-etag',
    label: 'hand-written Fastify route awaiting repository.get, under @fastify/etag (SHA-1, its default): 200 with an ETag',
    request: { method: 'GET', path: `${PREFIX}/fastify-etag/${DETAIL_ID}` }
  },
  variants: [
    {
      name: 'view-etag',
      label: 'mix(ConditionalMixin, AsyncGenericRetrieveAPIView), static etag = true: 200 with a SHA-1 ETag',
      request: { method: 'GET', path: `${PREFIX}/view-etag/${DETAIL_ID}` }
    },
    {
      name: 'view-lm',
      label: 'mix(ConditionalMixin, GenericRetrieveAPIView) (sync), retrieve returns this.checkLastModified(item.updated_at) ?? item: 200 + Last-Modified',
      request: { method: 'GET', path: `${PREFIX}/view-lm/${DETAIL_ID}` }
    },
    {
      name: 'view-304',
      label: `the view-lm route with If-Modified-Since: ${LAST_MODIFIED}: 304, no body`,
      request: { method: 'GET', path: `${PREFIX}/view-lm/${DETAIL_ID}`, headers: { 'if-modified-since': LAST_MODIFIED }, expectStatus: 304 },
      sameBodyAsBaseline: false
    },
    {
      name: 'view-304-async',
      label: 'the same handler, async, over the async repository (AsyncGenericRetrieveAPIView), with If-Modified-Since: 304, no body',
      request: { method: 'GET', path: `${PREFIX}/view-lm-async/${DETAIL_ID}`, headers: { 'if-modified-since': LAST_MODIFIED }, expectStatus: 304 },
      sameBodyAsBaseline: false
    }
  ],
  comparisons: [
    {
      subject: 'view-etag',
      reference: 'generic-retrieve/view',
      label: 'the ETag\'d 200 costs at most the SHA-1 of its body + 0.3 µs more than the plain view',
      maxExtraUs: 0.3,
      plusBodyHash: true
    },
    { subject: 'view-304', reference: 'view-lm', label: 'the 304 costs less than the 200 of the same route', maxExtraUs: 0 },
    { subject: 'view-304-async', reference: 'generic-retrieve/view', label: 'the async 304 costs less than the async plain view\'s 200', maxExtraUs: 0 },
    { subject: 'fastify-etag', reference: 'generic-retrieve/fastify', label: 'what @fastify/etag adds to the hand-written route', maxExtraUs: 0, informational: true },
    { subject: 'view-etag', reference: 'fastify-etag', label: 'the view with etag = true against the hand-written route with @fastify/etag', maxExtraUs: 0, informational: true },
    { subject: 'view-304-async', reference: 'view-304', label: 'the async 304 against the sync one', maxExtraUs: 0, informational: true }
  ]
}
