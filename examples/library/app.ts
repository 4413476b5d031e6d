// The lending library example: its store, its authentication, its views and its OpenAPI document, as one Fastify app.
import type { Server } from 'node:http'
import Fastify, { type FastifyHttpOptions, type FastifyInstance } from 'fastify'
import rateLimit from '@fastify/rate-limit'
import swagger from '@fastify/swagger'
import swaggerUi from '@fastify/swagger-ui'
import views, { configureApp } from 'fastify-views'
import { problemFrameworkErrors } from 'fastify-views/errors'
import { swaggerOptions } from 'fastify-views/swagger'
import { openStore, type StoreOptions } from './store.js'
import { memberAuth } from './auth.js'
import { libraryViews } from './views.js'

/** Where the write budgets are counted: this process (the default), or a Redis every instance shares. */
export interface ThrottleOptions { redisUrl?: string | undefined }

/**
 * Builds the library API on the store `databaseUrl` names (`sqlite:<path>`, default
 * `./data/library.db`, or `postgres://...`), its tables created and seeded when missing.
 * Swagger UI at `/docs`, the document at `/docs/json`.
 */
export async function buildApp (
  options: FastifyHttpOptions<Server> & StoreOptions & ThrottleOptions = {}
): Promise<FastifyInstance> {
  const { databaseUrl, redisUrl, ...fastifyOptions } = options
  const store = await openStore({ databaseUrl })
  const app = Fastify({ frameworkErrors: problemFrameworkErrors, ...fastifyOptions })
  // The member is the principal of every route; a member's writes share one budget, wherever they land.
  configureApp(app, { auth: { authenticators: [memberAuth(store.members)], principalId: (member) => member.id } })
  app.addHook('onClose', async () => { await store.close() })
  await app.register(rateLimit, { global: false, ...await throttleStore(app, redisUrl) })
  await app.register(swagger, swaggerOptions({
    info: { title: 'Lending library', version: '1.0.0', description: 'The second fastify-views example: members, books, reading lists and loans.', license: { name: 'MIT', identifier: 'MIT' } },
    servers: [{ url: '/', description: 'This server' }]
  }))
  await app.register(swaggerUi, { routePrefix: '/docs' })
  await app.register(views, { views: [libraryViews(store)] })
  return app
}

/**
 * The store of @fastify/rate-limit: its own, in this process, unless a Redis URL is given, which
 * every instance behind one address must share for a member's budget to be one. A Redis that does
 * not answer is not waited for: the throttle lets the request through uncounted and logs it.
 */
async function throttleStore (app: FastifyInstance, redisUrl: string | undefined): Promise<{ redis?: unknown }> {
  if (redisUrl === undefined) return {}
  const { Redis } = await import('ioredis')
  const redis = new Redis(redisUrl, { connectTimeout: 500, maxRetriesPerRequest: 1 })
  app.addHook('onClose', async () => { await redis.quit() })
  return { redis }
}
