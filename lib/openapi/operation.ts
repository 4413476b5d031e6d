import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifySchema } from 'fastify'
import { findRaises, getCatchSpecs, raisesPairs, type Raises } from '../views/decorators.js'
import { BadRequest, ContentTooLarge, statusTitle, UnprocessableContent, UnsupportedMediaType, URITooLong, type APIErrorClass } from '../http/errors.js'
import { descriptionOf, operationIdOf, summaryOf, tagOf } from '../views/naming.js'
import type { ErrorFormat } from '../http/error-format.js'
import { ProblemSchema, ValidationProblemSchema } from '../http/problem-schema.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import { mergeResponses } from '../routes/route-meta.js'
import { aliasedSchema } from '../schema/serialization.js'
import type { Dependency, ResponseDoc, ResponsesMap, SecurityRequirement } from '../routes/types.js'
import { type ViewClass, type RouteDefinition } from '../views/view.js'
import { wireForm } from '../schema/wire.js'
import { servedBy } from '../schema/serializer.js'
import { statusRecord } from '../core/status-record.js'
import { asTypeBox, isOptionalNode, type SchemaNode } from '../core/schema-node.js'
import { isRecord } from '../core/record.js'
import { lowerCaseKeys } from '../schema/validation.js'
import { readsNoContent } from '../http/media-type.js'

// Any JSON: the empty JSON Schema, which has no TypeBox kind; documented and serialized, never compiled by TypeBox.
const ANY_JSON = {} as TSchema

/** A 4xx or 5xx status code: an error response. */
const ERROR_STATUS = /^[45]/

/** The key @fastify/swagger reads a plain-form response's description from. */
const RESPONSE_DESCRIPTION = 'x-response-description'

type DocumentedView = ViewClass & {
  defaultErrors?: APIErrorClass[],
  errors?: APIErrorClass[],
  raises?: Raises,
  apiDescription?: string
}

/** What the registration knows about one operation beyond its route definition. */
export interface OperationContext {
  /** The one method of this operation (a multi-method route is one operation per method). */
  method: string
  /** Whether the route has more than one method, so its operationId names the method. */
  multiMethod: boolean
  /** Response header classes from the router, the registration, the route and the view. */
  headerClasses: ResponseHeadersClass[]
  /** The route's method implementation, whose `Catch` specs are documented. */
  implementation: object
  /** How the route answers errors: their status for a failed validation, their media type and schema. */
  errorFormat: ErrorFormat
  /** The route's whole URL (prefixes included), whose parameters are what a params schema can refuse. */
  url: string
}

/**
 * Documents `errors(...)` for a `responses` option: `responses: errors(NotFound, Conflict)`
 * gives `{ 404: { errors: [NotFound] }, 409: { errors: [Conflict] } }`.
 */
export function errors (...classes: APIErrorClass[]): ResponsesMap {
  const byStatus = new Map<number, APIErrorClass[]>()
  for (const cls of classes) byStatus.set(cls.status, [...byStatus.get(cls.status) ?? [], cls])
  return Object.fromEntries([...byStatus].map(([status, listed]) => [status, { errors: listed }]))
}

/**
 * A top-level schema with an `$id` is wrapped so that the OpenAPI generator emits a
 * `$ref` to its named component instead of inlining it (it only hoists nested ones).
 */
function referable (schema: TSchema): SchemaNode {
  // A plain JSON Schema wrapper, read by the generator, not by TypeBox (it has no Kind).
  return typeof schema.$id === 'string' ? { allOf: [schema] } : schema
}

function headerDocs (classes: ResponseHeadersClass[]): Record<string, unknown> | undefined {
  if (classes.length === 0) return undefined
  const headers: Record<string, unknown> = {}
  for (const cls of classes) Object.assign(headers, cls.headers())
  return headers
}

function caughtStatuses (klass: DocumentedView, implementation: object): number[] {
  const specs = getCatchSpecs(implementation)
  if (specs === undefined) return []
  if (specs === 'defined') return raisesPairs(klass).map(([, entry]) => typeof entry === 'string' ? 400 : entry.status)
  return specs.map((spec) => {
    if (spec.status !== undefined || spec.detail !== undefined) return spec.status ?? 400
    const entry = findRaises(klass, spec.type)
    return typeof entry === 'object' ? entry.status : 400
  })
}

/** Whether a route takes a body: a body schema, one per media type, or any JSON. */
const takesBody = (
  route: RouteDefinition
): boolean => route.options.schema?.body !== undefined || route.anyJsonBody === true

/** Keywords that say nothing about which objects a schema accepts. */
const ANNOTATIONS = new Set(['type', 'properties', 'title', 'description', '$id', '$schema', 'examples', 'default'])

/** An object schema with nothing to check: it accepts every query or header object there is. */
const acceptsEveryObject = (schema: TSchema): boolean =>
  schema.type === 'object' && Object.keys(Object(schema.properties)).length === 0 && Object.keys(schema).every((key) => ANNOTATIONS.has(key))

/** Whether a route's URL has parameters (`:id`, a wildcard). */
const hasPathParams = (url: string): boolean => /[:*]/.test(url)

/**
 * Whether a route can refuse a request for failing validation: its body schema, its params
 * schema where its URL has parameters (without, Fastify's params are always `{}`), and a query or
 * headers schema that checks something.
 */
function validates (route: RouteDefinition, url: string): boolean {
  const { params, querystring, headers, body } = route.options.schema ?? {}
  const checks = (schema: TSchema | undefined): boolean => schema !== undefined && !acceptsEveryObject(schema)
  return body !== undefined || (params !== undefined && hasPathParams(url)) || checks(querystring) || checks(headers)
}

const isBadRequest = (cls: APIErrorClass): boolean => cls === BadRequest || cls.prototype instanceof BadRequest

/**
 * The 400s of `defaultErrors` where they can be answered, and the validation status beside them.
 * A route answers 400 for a body that is not even well-formed JSON or a path parameter that is not
 * valid percent-encoding, and the format's validation
 * status for a request that fails its schemas: both are 400 by default; with a validation status
 * of 422, a route with a body documents both, one without only 422. A route that validates
 * nothing and reads no body answers neither (docs/openapi.md).
 */
function defaultErrorsOf (
  defaults: APIErrorClass[],
  route: RouteDefinition,
  context: OperationContext
): APIErrorClass[] {
  const { errorFormat: { validationStatus }, url } = context
  // A body that is not JSON, or a path parameter that is not valid percent-encoding (Fastify's router refuses it).
  const malformed = takesBody(route) || hasPathParams(url)
  const invalid = validates(route, url)
  if (validationStatus === 400) return defaults.filter((cls) => !isBadRequest(cls) || malformed || invalid)
  const kept = defaults.filter((cls) => !isBadRequest(cls) || malformed)
  return invalid && defaults.some(isBadRequest) ? [...kept, UnprocessableContent] : kept
}

/**
 * Everything an operation can answer (docs/openapi.md): the success response with its
 * headers, the documented errors by status, and the explicit `responses` merged in
 * (explicit wins key by key, an explicit body replaces the generated one, headers add up).
 */
export function documentedResponses (
  klass: ViewClass,
  route: RouteDefinition,
  context: OperationContext
): ResponsesMap {
  return collectResponses(klass, route, context, servedBody(route)).responses
}

/** The body the success response is served with: `undefined` for an empty response. */
function servedBody (route: RouteDefinition): TSchema | undefined {
  if (route.emptyBody) return undefined
  // An undeclared body is any JSON (`{}`, serialized with JSON.stringify).
  return route.responseSchema === undefined ? ANY_JSON : wireForm(route.responseSchema, { byAlias: true }).schema
}

/** The documented responses, and the statuses only an explicit `responses` entry documents. */
function collectResponses (
  klass: ViewClass,
  route: RouteDefinition,
  context: OperationContext,
  served: TSchema | undefined
): { responses: ResponsesMap, explicitOnly: string[] } {
  const view: DocumentedView = klass
  const generated: ResponsesMap = {}
  const success: ResponseDoc = { description: statusTitle(route.status) }
  if (served !== undefined) success.schema = served
  const headers = headerDocs(context.headerClasses)
  if (headers !== undefined) success.headers = headers
  generated[route.status] = success

  // Default errors are documented on every route, their 400s where they can be answered.
  const defaults = defaultErrorsOf(view.defaultErrors ?? [BadRequest], route, context)
  for (const cls of new Set(
    [
      ...defaults,
      ...requestErrors(route, context),
      ...(view.errors ?? []),
      ...route.throws,
      ...dependencyErrors(route.options.dependencies)
    ]
  )) {
    const entry = generated[cls.status]
    generated[cls.status] = { description: statusTitle(cls.status), ...entry, errors: [...(entry?.errors ?? []), cls] }
  }
  const withMixins = mergeResponses(generated, klass.extraResponses(route, context.method))
  const merged = mergeResponses(withMixins, route.options.responses)
  // A caught exception's status is documented with the format's generic body unless a class already documents it.
  for (const status of caughtStatuses(view, context.implementation)) {
    merged[status] ??= { description: statusTitle(status), errors: [] }
  }
  return { responses: merged, explicitOnly: Object.keys(merged).filter((status) => withMixins[status] === undefined) }
}

/**
 * What the handling of a request answers before any view code runs. A route that takes a body
 * answers 413 past `bodyLimit` and 415 for a media type its operation does not list. A route that
 * takes none ignores content (docs/routing.md#media-types): it reads it within `bodyLimit` (413
 * past it), except on GET and HEAD, whose content is never read; one that refuses content answers
 * 415 to any, before reading it (so never 413). A path parameter longer than Fastify's
 * `maxParamLength` is a 414 from its router.
 */
function requestErrors (route: RouteDefinition, context: OperationContext): APIErrorClass[] {
  const content = takesBody(route)
    ? [ContentTooLarge, UnsupportedMediaType]
    : route.options.unexpectedContent === 'refuse'
      ? [UnsupportedMediaType]
      : readsNoContent(context.method) ? [] : [ContentTooLarge]
  return hasPathParams(context.url) ? [URITooLong, ...content] : content
}

/** The errors the route's dependencies declare they answer. */
function dependencyErrors (dependencies: Dependency[] | undefined): APIErrorClass[] {
  return (dependencies ?? []).flatMap((d) => typeof d === 'function' ? [] : d.errors ?? [])
}

/**
 * The security requirement of a route from its dependencies. Each dependency must pass,
 * so their requirements combine: every alternative of one with every alternative of the
 * next, schemes of a combination all required (OpenAPI 3.1 §4.8.30).
 */
function dependencySecurity (dependencies: Dependency[]): SecurityRequirement[] | undefined {
  let combined: SecurityRequirement[] | undefined
  for (const dependency of dependencies) {
    const security = typeof dependency === 'function' ? undefined : dependency.security
    if (security === undefined) continue
    combined = combined === undefined
      ? security
      : combined.flatMap((left) => security.map((right) => ({ ...left, ...right })))
  }
  return combined
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
  // The view's own tag (with its description) goes to the document's top-level `tags`, in view order.
  if (options.tags === undefined) {
    const about = view.apiDescription
    schema[DOCUMENTED_TAG] = about === undefined ? { name: tagOf(klass) } : { name: tagOf(klass), description: about }
  }
  if (schema.security === undefined) {
    // A view route's options always carry its dependencies: buildViewRoutes merges every level into them.
    const security = dependencySecurity(options.dependencies!)
    if (security !== undefined) schema.security = security
  }
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
  const documentedHeaders = klass.documentedHeaders(route, context.method)
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
