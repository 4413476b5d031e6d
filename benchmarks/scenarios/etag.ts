import etag from '@fastify/etag'
import type { FastifyInstance } from 'fastify'
import { AsyncGenericRetrieveAPIView, ConditionalMixin, mix, views, type ViewRequest } from '../../lib/index.js'
import { DETAIL_ID, IdParams, Product, productRepository, products } from './catalog.js'
import type { Scenario } from './types.js'

const PREFIX = '/etag'

/** `Last-Modified` of the requested row, as the 200 of `view-lm` sends it: the 304 request sends it back. */
const LAST_MODIFIED = new Date(products().find((p) => p.id === DETAIL_ID)!.updated_at).toUTCString()

/** GET one row, plain and with conditional-request support: strong ETags, and a 304 from `checkLastModified`. */
export const etagScenario: Scenario = {
  name: 'etag',
  description: `the generic retrieve of generic-retrieve (GET /:id, id ${DETAIL_ID}) with and without ETags, against @fastify/etag ` +
    'on the hand-written route, and a 304 answered by checkLastModified (If-Modified-Since)',
  duration: 2,
  warmup: 1,
  // Every target of this scenario is stated in µs against another variant.
  ratioTarget: null,
  async register (app: FastifyInstance) {
    const repository = productRepository()

    const handWritten = (scope: FastifyInstance, path: string): void => {
      scope.get<{ Params: { id: number } }>(path, { schema: { params: IdParams, response: { 200: Product } } },
        async function getProduct (request, reply) {
          const item = await repository.get({ id: request.params.id }, {})
          if (item === null) return reply.callNotFound()
          return item
        })
    }
    handWritten(app, `${PREFIX}/fastify/:id`)
    // @fastify/etag hooks every route of the context it is registered in: its own context.
    await app.register(async (scope) => {
      await scope.register(etag)
      handWritten(scope, `${PREFIX}/fastify-etag/:id`)
    })

    class Plain extends AsyncGenericRetrieveAPIView<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository
    }

    class Tagged extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView)<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository
      static override etag = true
    }

    // No `etag`: the only validator is the one the handler sets.
    class Dated extends mix(ConditionalMixin, AsyncGenericRetrieveAPIView)<{ item: Product, params: { id: number } }> {
      static override responseSchema = Product
      static override detailParams = IdParams
      static override repository = repository

      override async retrieve (request: ViewRequest<{ params: typeof IdParams }>) {
        const item = await this.repository.get({ ...request.params, ...this.getKwargs('retrieve') }, this.getRepositoryOptions('retrieve'))
        if (item === null) return null
        return this.checkLastModified(item.updated_at) ?? item
      }
    }

    // configureApp: false: the items scenario already configured the app; a second
    // unprefixed sibling context configuring it again would fail to start.
    await app.register(views, {
      configureApp: false,
      views: [
        { view: Plain, prefix: `${PREFIX}/view` },
        { view: Tagged, prefix: `${PREFIX}/view-etag` },
        { view: Dated, prefix: `${PREFIX}/view-lm` }
      ]
    })
  },
  baseline: {
    name: 'fastify',
    label: 'hand-written Fastify route awaiting repository.get (no ETag)',
    request: { method: 'GET', path: `${PREFIX}/fastify/${DETAIL_ID}` }
  },
  variants: [
    {
      name: 'view',
      label: 'AsyncGenericRetrieveAPIView (no ETag): the reference of the view targets',
      request: { method: 'GET', path: `${PREFIX}/view/${DETAIL_ID}` }
    },
    {
      name: 'view-etag',
      label: 'mix(ConditionalMixin, AsyncGenericRetrieveAPIView), static etag = true: 200 with a SHA-1 ETag',
      request: { method: 'GET', path: `${PREFIX}/view-etag/${DETAIL_ID}` }
    },
    {
      name: 'fastify-etag',
      label: 'the hand-written route under @fastify/etag (SHA-1, its default): 200 with an ETag',
      request: { method: 'GET', path: `${PREFIX}/fastify-etag/${DETAIL_ID}` }
    },
    {
      name: 'view-lm',
      label: 'mix(ConditionalMixin, AsyncGenericRetrieveAPIView), retrieve returns this.checkLastModified(item.updated_at) ?? item: 200 + Last-Modified',
      request: { method: 'GET', path: `${PREFIX}/view-lm/${DETAIL_ID}` }
    },
    {
      name: 'view-304',
      label: `the view-lm route with If-Modified-Since: ${LAST_MODIFIED}: 304, no body`,
      request: { method: 'GET', path: `${PREFIX}/view-lm/${DETAIL_ID}`, headers: { 'if-modified-since': LAST_MODIFIED }, expectStatus: 304 },
      sameBodyAsBaseline: false
    }
  ],
  comparisons: [
    { subject: 'view-etag', reference: 'view', label: 'the ETag\'d 200 costs at most the SHA-1 of the body + 0.3 µs more than the plain view', maxExtraUs: 0.3, plusBodyHash: true },
    { subject: 'view-304', reference: 'view-lm', label: 'the 304 costs less than the 200 of the same route', maxExtraUs: 0 },
    { subject: 'view-304', reference: 'view', label: 'the 304 costs less than the plain view\'s 200', maxExtraUs: 0 },
    { subject: 'fastify-etag', reference: 'fastify', label: 'what @fastify/etag adds to the hand-written route', maxExtraUs: 0, informational: true },
    { subject: 'view-etag', reference: 'fastify-etag', label: 'the view with ETags against the hand-written route with @fastify/etag', maxExtraUs: 0, informational: true },
    { subject: 'view-lm', reference: 'view', label: 'what checkLastModified adds to a 200', maxExtraUs: 0, informational: true }
  ]
}
