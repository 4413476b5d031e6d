/**
 * The peer endpoints with fastify-decorators 3: a controller class on the benchmark's
 * own Fastify instance, with the same JSON schemas as the hand-written routes (it is
 * Fastify underneath: Fastify validates and serializes). Compiled with legacy
 * decorators (its own tsconfig.json).
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { Controller, GET, POST, bootstrap } from 'fastify-decorators'
import type { PeerItem, PeerItemInput, PeerStore } from '../scenarios/peer-store.js'

/** The JSON schemas of the routes, the same objects the hand-written routes use. */
export interface PeerSchemas { item: object, list: object, input: object, params: object }

/** Registers the controller under `prefix` on `app`. */
export async function registerFastifyDecorators (
  app: FastifyInstance,
  store: PeerStore,
  schemas: PeerSchemas,
  prefix: string
): Promise<void> {
  @Controller({ route: `${prefix}/items` })
  class ItemsController {
    @GET({ url: '/', options: { schema: { response: { 200: schemas.list } } } })
    async list (): Promise<PeerItem[]> {
      return await store.list()
    }

    @GET({ url: '/:id', options: { schema: { params: schemas.params, response: { 200: schemas.item } } } })
    async retrieve (
      request: FastifyRequest<{ Params: { id: number } }>,
      reply: FastifyReply
    ): Promise<PeerItem | undefined> {
      const item = await store.get(request.params.id)
      if (item !== null) return item
      reply.callNotFound()
    }

    @POST({ url: '/', options: { schema: { body: schemas.input, response: { 201: schemas.item } } } })
    async create (request: FastifyRequest<{ Body: PeerItemInput }>, reply: FastifyReply): Promise<PeerItem> {
      reply.code(201)
      return await store.create(request.body)
    }
  }
  await app.register(bootstrap, { controllers: [ItemsController] })
}
