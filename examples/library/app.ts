// The lending library example: its store, its views and its OpenAPI document, as one Fastify app.
import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import views, { configureApp } from 'fastify-views'
import { problemFrameworkErrors } from 'fastify-views/errors'
import { swaggerOptions } from 'fastify-views/swagger'
import { openStore, type StoreOptions } from './store.js'
import { MemberAuth } from './auth.js'
import { libraryViews } from './views.js'

/**
 * Builds the library API on the store `databaseUrl` names (`sqlite:<path>`, default
 * `./data/library.db`, or `postgres://...`), its tables created and seeded when missing.
 * Swagger UI at `/docs`, the document at `/docs/json`.
 */
export async function buildApp (options: FastifyHttpOptions<Server> & StoreOptions = {}): Promise<FastifyInstance> {
  const { databaseUrl, ...fastifyOptions } = options
  const store = await openStore({ databaseUrl })
  const app = Fastify({ frameworkErrors: problemFrameworkErrors, ...fastifyOptions })
  configureApp(app)
  app.addHook('onClose', async () => { await store.close() })
  await app.register(swagger, swaggerOptions({
    info: { title: 'Lending library', version: '1.0.0', description: 'The second fastify-views example: members, books, reading lists and loans.', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'This server' }],
    components: { securitySchemes: { memberId: { type: 'apiKey', in: 'header', name: 'x-member-id', description: 'The id of the member asking.' } } },
    // Reads need no member, and show more with one (on_my_list); writes document their own requirement.
    security: [{}, { memberId: [] }]
  }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(views, { views: [libraryViews(store, new MemberAuth(store.members))] })
  return app
}
