// The publishing example: its store, its views, its error format and its OpenAPI document, as one Fastify app.
import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import { Type } from '@sinclair/typebox'
import views, { configureApp } from 'fastify-views'
import { ErrorFormat, type ProblemErrorEntry } from 'fastify-views/errors'
import { swaggerOptions } from 'fastify-views/swagger'
import { openStore, type StoreOptions } from './store.js'
import { UserAuth } from './auth.js'
import { publishingViews } from './views.js'

/** Every error body: `{ "errors": { "body": ["title: Expected string length ..."] } }`. */
export const ErrorBody = Type.Object({ errors: Type.Object({ body: Type.Array(Type.String()) }) }, {
  $id: 'ErrorBody',
  examples: [{ errors: { body: ['The slug how-to-train-your-dragon is taken: give the article another title.'] } }]
})

/** An invalid value's parameter or body member, then what is wrong with it. */
const message = (entry: ProblemErrorEntry): string => `${entry.parameter ?? (entry.pointer.slice(2) || 'request body')}: ${entry.detail}`

/**
 * The API's error format (docs/error-formats.md): one message per invalid value, or the error's
 * detail; invalid input is a 422, and so is a conflict (a username, an email or a slug taken).
 */
export const publishingErrors = new ErrorFormat({
  validationStatus: 422,
  statuses: { 409: 422 },
  schema: ErrorBody,
  body: (problem) => ({ errors: { body: problem.errors?.map(message) ?? [problem.detail] } })
})

/**
 * Builds the publishing API on the store `databaseUrl` names (`sqlite:<path>`, default
 * `./data/publishing.db`, or `postgres://...`), its tables created and seeded when missing.
 * Swagger UI at `/docs`, the document at `/docs/json`.
 */
export async function buildApp (options: FastifyHttpOptions<Server> & StoreOptions = {}): Promise<FastifyInstance> {
  const { databaseUrl, ...fastifyOptions } = options
  const store = await openStore({ databaseUrl })
  const app = Fastify({ frameworkErrors: publishingErrors.frameworkErrors, ...fastifyOptions })
  configureApp(app, { errorFormat: publishingErrors })
  app.addHook('onClose', async () => { await store.close() })
  await app.register(swagger, swaggerOptions({
    info: { title: 'Publishing', version: '1.0.0', description: 'The third fastify-views example: users who follow users, articles with tags and favourites, comments, a feed.', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'This server' }],
    components: { securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'Token <token>: the token a sign-up answered.' } } },
    // Reads need no user, and show more with one (favorited, following); writes document their own requirement.
    security: [{}, { token: [] }]
  }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(views, { views: [publishingViews(store, new UserAuth(store.users))] })
  return app
}
