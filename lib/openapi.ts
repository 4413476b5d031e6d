import type { TSchema } from '@sinclair/typebox'
import type { FastifySchema } from 'fastify'
import type { RouteDefinition } from './register.js'
import { aliasedSchema } from './serialization.js'
import { strictBodySchema } from './validation.js'
import type { ViewClass } from './view.js'

const DOC_FIELDS = ['tags', 'summary', 'description', 'operationId', 'deprecated', 'security', 'hide'] as const

/**
 * The Fastify `schema` of one view route: what is validated and serialized, and what
 * `@fastify/swagger` documents. Built once, at registration.
 */
export function buildRouteSchema (_klass: ViewClass, route: RouteDefinition): FastifySchema {
  const { options } = route
  const schema: Record<string, unknown> = {}
  const parts = options.schema ?? {}
  if (parts.params !== undefined) schema.params = parts.params
  if (parts.querystring !== undefined) schema.querystring = parts.querystring
  if (parts.headers !== undefined) schema.headers = parts.headers
  if (parts.body !== undefined) schema.body = strictBodySchema(aliasedSchema(parts.body))
  for (const key of DOC_FIELDS) {
    if (options[key] !== undefined) schema[key] = options[key]
  }
  const response: Record<string, TSchema> = {}
  if (route.responseSchema !== undefined && !route.emptyBody) response[route.status] = aliasedSchema(route.responseSchema)
  if (Object.keys(response).length > 0) schema.response = response
  return schema as FastifySchema
}
