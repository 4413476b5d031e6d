// The schema of one view operation (openapi layer): what Fastify validates and serializes with, and what
// the document shows of it, its responses from responses.ts.
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifySchema } from 'fastify'
import { statusTitle } from '../http/errors.js'
import { descriptionOf, operationIdOf, summaryOf, tagOf } from '../views/naming.js'
import type { ErrorFormat } from '../http/error-format.js'
import { ProblemSchema, ValidationProblemSchema } from '../http/problem-schema.js'
import { aliasedSchema } from '../schema/serialization.js'
import type { Dependency, ResponseDoc, SecurityRequirement } from '../routes/types.js'
import type { RouteDefinition, ViewClass } from '../views/view.js'
import { servedBy } from '../schema/serializer.js'
import { statusRecord } from '../core/status-record.js'
import { asTypeBox, isOptionalNode, type SchemaNode } from '../core/schema-node.js'
import { isRecord } from '../core/record.js'
import { lowerCaseKeys } from '../schema/validation.js'
import { collectResponses, servedBody, type DocumentedView, type OperationContext } from './responses.js'

export { documentedResponses, errors, type OperationContext } from './responses.js'

/** A 4xx or 5xx status code: an error response. */
const ERROR_STATUS = /^[45]/

/** The key @fastify/swagger reads a plain-form response's description from. */
const RESPONSE_DESCRIPTION = 'x-response-description'

/**
 * A top-level schema with an `$id` is wrapped so that the OpenAPI generator emits a
 * `$ref` to its named component instead of inlining it (it only hoists nested ones).
 */
function referable (schema: TSchema): SchemaNode {
  // A plain JSON Schema wrapper, read by the generator, not by TypeBox (it has no Kind).
  return typeof schema.$id === 'string' ? { allOf: [schema] } : schema
}

/**
 * The security requirement of a route from its dependencies. Each dependency must pass,
 * so their requirements combine: every alternative of one with every alternative of the
 * next, schemes of a combination all required (OpenAPI 3.1 §4.8.30).
 */
function dependencySecurity (dependencies: Dependency[]): SecurityRequirement[] | undefined {
  let combined: SecurityRequirement[] | undefined
  for (const dependency of dependencies) {
    combined = combineSecurity(combined, typeof dependency === 'function' ? undefined : dependency.security)
  }
  return combined
}

/** Two sets of alternatives that must both be met: every alternative of one with every alternative of the other. */
function combineSecurity (
  left: readonly SecurityRequirement[] | undefined,
  right: readonly SecurityRequirement[] | undefined
): SecurityRequirement[] | undefined {
  if (left === undefined || right === undefined) return left === undefined ? right && [...right] : [...left]
  return left.flatMap((one) => right.map((other) => ({ ...one, ...other })))
}

/**
 * One documented response in the forms Fastify (serializers) and @fastify/swagger
 * (documents) both read. Success bodies use the plain form, which the generator
 * resolves (nested `$id` schemas become named components); error bodies use
 * `content` with the error format's media type and keep their named schemas, which
 * `swaggerOptions` turns into components of the document.
 */
function toFastifyResponse (status: string, doc: ResponseDoc, format: ErrorFormat): Record<string, unknown> {
  const description = doc.description ?? statusTitle(Number(status))
  const head: Record<string, unknown> = doc.headers === undefined
    ? { description }
    : {
        description,
        headers: doc.headers
      }
  if (doc.content !== undefined) return { ...head, content: doc.content }
  // Every error is answered with a body in the format: one documented by hand with a description alone gets the format's generic one.
  if (Number(status) >= 400) {
    return {
      ...head,
      content: { [format.contentType]: { schema: doc.schema ?? format.schemaFor(doc.errors ?? [], Number(status)) } }
    }
  }
  if (doc.schema !== undefined) {
    // In the plain form the description would become part of the body schema;
    // @fastify/swagger reads this key instead and removes it. A top-level `$id` is
    // only hoisted when nested, so it is wrapped.
    const plain = doc.headers === undefined
      ? { [RESPONSE_DESCRIPTION]: description }
      : {
          [RESPONSE_DESCRIPTION]: description,
          headers: doc.headers
        }
    const response = '$id' in doc.schema && typeof doc.schema.$id === 'string' ? { ...plain, allOf: [doc.schema] } : { ...doc.schema, ...plain }
    return servedBy(response, doc.schema)
  }
  // No body: @fastify/swagger leaves `content` out for a `null` type.
  return { ...head, type: 'null' }
}

const DOC_FIELDS = ['summary', 'description', 'deprecated', 'security', 'hide'] as const

/**
 * The Fastify `schema` of one operation: what is validated and serialized, and what
 * `@fastify/swagger` documents. Built once, at registration.
 */
export function buildRouteSchema (klass: ViewClass, route: RouteDefinition, context: OperationContext): FastifySchema {
  const { options } = route
  const view: DocumentedView = klass
  const schema: Record<string | symbol, unknown> = {}
  const parts = options.schema ?? {}
  if (parts.params !== undefined) schema.params = parts.params
  if (parts.querystring !== undefined) schema.querystring = parts.querystring
  // Header parameters under their lower-case names: header names are case-insensitive, and Node.js and Fastify's validation see them lower-cased.
  const headers = parts.headers === undefined ? undefined : asTypeBox(lowerCaseKeys(parts.headers))
  if (headers !== undefined) schema.headers = headers
  if (route.bodyMediaTypes !== undefined) {
    // A body taken in several media types: one schema per type, for Fastify's validation and the document.
    const content: Record<string, { schema: SchemaNode }> = {}
    for (const [type, { schema: typed }] of Object.entries(route.bodyMediaTypes)) {
      content[type] = {
        schema: referable(aliasedSchema(typed))
      }
    }
    schema.body = { content }
  } else if (parts.body !== undefined) {
    schema.body = referable(aliasedSchema(parts.body))
    if (isOptionalNode(parts.body)) schema[OPTIONAL_BODY] = true
  } else if (route.anyJsonBody === true) schema.body = {} // any JSON: Fastify validates it with the route's compiler, which accepts it
  schema.operationId = options.operationId ?? operationIdOf(klass, route.name, {
    detail: route.path.includes(':'), standard: route.standard, method: context.multiMethod ? context.method : undefined
  })
  schema.summary = summaryOf(klass, route.name, route.standard)
  if (route.standard) {
    const description = descriptionOf(klass, route.name)
    if (description !== undefined) schema.description = description
  }
  schema.tags = options.tags ?? [tagOf(klass)]
  for (const key of DOC_FIELDS) {
    if (options[key] !== undefined) schema[key] = options[key]
  }
  if (context.contribution.deprecated === true) schema.deprecated = true
  // The view's own tag (with its description) goes to the document's top-level `tags`, in view order.
  if (options.tags === undefined) {
    const about = view.apiDescription
    schema[DOCUMENTED_TAG] = about === undefined ? { name: tagOf(klass) } : { name: tagOf(klass), description: about }
  }
  if (schema.security === undefined) {
    // A view route's options always carry its dependencies: buildViewRoutes merges every level into them.
    const security = combineSecurity(dependencySecurity(options.dependencies!), context.contribution.security)
    if (security !== undefined) schema.security = security
  }
  const schemes = context.contribution.securitySchemes
  if (schemes !== undefined) schema[SECURITY_SCHEMES] = schemes
  // Fastify serializes with `response`; `responses` entries are documentation (docs/openapi.md), so
  // what they alone declare is kept aside for the document: the body of the success status
  // (served with the route's own schema) and any status outside the error range that neither
  // the action nor a mixin produces (served as if undocumented). Error bodies are kept aside
  // too: the error format's handler serializes them, so Fastify has nothing to compile or keep
  // for them.
  const served = servedBody(route)
  const { responses: documented, explicitOnly } = collectResponses(klass, route, context, served)
  const response = statusRecord<unknown>()
  const aside = statusRecord<unknown>()
  for (const [status, doc] of Object.entries(documented)) {
    const target = explicitOnly.includes(status) || ERROR_STATUS.test(status) ? aside : response
    target[status] = toFastifyResponse(status, doc, context.errorFormat)
  }
  const key = String(route.status)
  const success = documented[key]
  if (success.content !== undefined || success.schema !== served) {
    aside[key] = response[key]
    response[key] = toFastifyResponse(key, { ...success, schema: served, content: undefined }, context.errorFormat)
  }
  if (Object.keys(aside).length > 0) schema[DOCUMENTED_RESPONSES] = aside
  // Headers a mixin documents are not validated: they are kept aside for the document too.
  const documentedHeaders = context.contribution.requestHeaders
  if (documentedHeaders !== undefined) {
    const own = headers?.properties
    schema[DOCUMENTED_HEADERS] = Type.Object({ ...documentedHeaders, ...own })
  }
  schema.response = response
  return schema
}

/**
 * Where a view route's schema keeps the documented form of the responses Fastify must not
 * serialize with: an explicit body on the success status, a status only `responses`
 * documents. A symbol, so Fastify never sees it.
 */
export const DOCUMENTED_RESPONSES: unique symbol = Symbol.for('fastify-views.documentedResponses')

/** Where a view route's schema keeps its view's tag and description, for the document's top-level `tags`. */
export const DOCUMENTED_TAG: unique symbol = Symbol.for('fastify-views.documentedTag')

/** Where a view route's schema keeps the security schemes its `security` names, for the document's `components.securitySchemes`. */
export const SECURITY_SCHEMES: unique symbol = Symbol.for('fastify-views.securitySchemes')

/** Marks the schema of a view route whose body may be left out (`Type.Optional`): its `requestBody` is not `required`. */
export const OPTIONAL_BODY: unique symbol = Symbol.for('fastify-views.optionalBody')

/** Where a view route's schema keeps the request headers it documents without validating them. */
export const DOCUMENTED_HEADERS: unique symbol = Symbol.for('fastify-views.documentedHeaders')

type WithDocumented = {
  [DOCUMENTED_RESPONSES]?: Record<string, unknown>,
  [DOCUMENTED_HEADERS]?: TSchema,
  response?: Record<string, unknown>,
  headers?: unknown
}

/** Whether a schema is a view route's, with documented forms kept aside (only `buildRouteSchema` sets these symbols, with these types). */
const keepsDocumented = (schema: unknown): schema is WithDocumented =>
  isRecord(schema) && (DOCUMENTED_RESPONSES in schema || DOCUMENTED_HEADERS in schema)

/**
 * The schema a document shows for a route: its Fastify schema with the documented form of
 * each response kept aside from it. `swaggerOptions()` applies it to every route;
 * call it yourself from a route's own `config.swaggerTransform`.
 */
export function documentedSchema<S> (schema: S): S {
  if (!keepsDocumented(schema)) return schema
  const documented = schema[DOCUMENTED_RESPONSES]
  const headers = schema[DOCUMENTED_HEADERS]
  const shown = { ...schema }
  if (documented !== undefined) shown.response = { ...schema.response, ...documented }
  if (headers !== undefined) shown.headers = headers
  return shown
}

/** The shared problem schemas, for apps that reference them in their own routes. */
export { ProblemSchema, ValidationProblemSchema }
