// The API of docs/error-formats.md: errors in the RealWorld (Conduit) convention,
// `{"errors": {"body": ["..."]}}`, and 422 for a request that fails validation.
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { AsyncCreateAPIView, AsyncListAPIView, AsyncRetrieveAPIView, configureApp, mix } from 'fastify-views'
import { ErrorFormat, type ProblemErrorEntry } from 'fastify-views/errors'
import { swaggerOptions } from 'fastify-views/swagger'

/** Every error body: RealWorld's `GenericErrorModel`. */
export const GenericErrorModel = Type.Object({
  errors: Type.Object({ body: Type.Array(Type.String()) })
}, { $id: 'GenericErrorModel' })

/** `title: Expected string`: the parameter or body member an entry points at, then what is wrong with it. */
const message = (entry: ProblemErrorEntry): string => `${entry.parameter ?? (entry.pointer.slice(2) || 'request body')}: ${entry.detail}`

export const conduitErrors = new ErrorFormat({
  validationStatus: 422,
  // A title taken twice is a 422 in this convention, not a 409: on the wire and in the document.
  statuses: { 409: 422 },
  schema: GenericErrorModel,
  // One message per invalid value, or the problem's detail.
  body: (problem) => ({ errors: { body: problem.errors?.map(message) ?? [problem.detail] } })
})

const Article = Type.Object({
  slug: Type.String(),
  title: Type.String({ minLength: 1 }),
  body: Type.String()
}, { $id: 'Article' })
type Article = Static<typeof Article>
const NewArticle = Type.Object({ title: Type.String({ minLength: 1 }), body: Type.String() }, { $id: 'NewArticle' })

const articles = new Map<string, Article>()
const slugOf = (title: string): string => title.toLowerCase().replace(/[^a-z0-9]+/g, '-')

export class Articles extends mix(AsyncListAPIView, AsyncCreateAPIView, AsyncRetrieveAPIView).with({
  responseSchema: Article,
  createSchema: NewArticle,
  detailRoute: '/:slug',
  detailParams: Type.Object({ slug: Type.String({ pattern: '^[a-z0-9-]+$' }) })
}, {
  async list () { return [...articles.values()] },
  async create (request) {
    const slug = slugOf(request.body.title)
    if (articles.has(slug)) return null                   // a conflict: 422 in this format
    const article = { slug, ...request.body }
    articles.set(slug, article)
    return article
  },
  async retrieve (request) { return articles.get(request.params.slug) ?? null }   // null: 404
}) {}

export async function buildApp (): Promise<FastifyInstance> {
  // A URL the router cannot decode (`GET /articles/%`) is answered before any plugin runs: an option of the server.
  const app = Fastify({ frameworkErrors: conduitErrors.frameworkErrors })
  // First: the app's own routes, its 404s and the views registered below answer in this format.
  configureApp(app, { errorFormat: conduitErrors })
  await app.register(swagger, swaggerOptions({ info: { title: 'Conduit', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Articles, prefix: '/articles' }] })
  return app
}
