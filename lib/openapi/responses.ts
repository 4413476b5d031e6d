// What one operation can answer (openapi layer): its success response and every error it documents,
// each where the route can really give it, merged with the route's own `responses`.
import { Type, type TSchema } from '@sinclair/typebox'
import { findRaises, getCatchSpecs, raisesPairs, type Raises } from '../views/decorators.js'
import { BadRequest, ContentTooLarge, statusTitle, UnprocessableContent, UnsupportedMediaType, URITooLong, type APIErrorClass } from '../http/errors.js'
import type { ErrorFormat } from '../http/error-format.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import { mergeResponses, mergeRouteOptions } from '../routes/route-meta.js'
import type { Dependency, ResolvedRouteOptions, ResponseDoc, ResponsesMap } from '../routes/types.js'
import type { RouteContribution, RouteDefinition, ViewClass } from '../views/view.js'
import { wireForm } from '../schema/wire.js'
import { readsNoContent } from '../http/media-type.js'
import { EVENT_STREAM } from '../http/event-stream.js'
import type { EventRoute } from '../routes/events.js'

// Any JSON: the empty JSON Schema, which has no TypeBox kind; documented and serialized, never compiled by TypeBox.
const ANY_JSON = {} as TSchema

export type DocumentedView = ViewClass & {
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
  /** What the view's mixins add to the operation: the responses and request headers it documents. */
  contribution: Pick<RouteContribution, 'responses' | 'requestHeaders' | 'deprecated' | 'security' | 'securitySchemes'>
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
export const takesBody = (
  route: RouteDefinition
): boolean => route.options.schema?.body !== undefined || route.anyJsonBody === true

/** Keywords that say nothing about which objects a schema accepts. */
const ANNOTATIONS = new Set(['type', 'properties', 'title', 'description', '$id', '$schema', 'examples', 'default'])

/** An object schema with nothing to check: it accepts every query or header object there is. */
const acceptsEveryObject = (schema: TSchema): boolean =>
  schema.type === 'object' && Object.keys(Object(schema.properties)).length === 0 && Object.keys(schema).every((key) => ANNOTATIONS.has(key))

/** Whether a route's URL has parameters (`:id`, a wildcard). */
export const hasPathParams = (url: string): boolean => /[:*]/.test(url)

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
export function servedBody (route: RouteDefinition): TSchema | undefined {
  if (route.emptyBody) return undefined
  // An undeclared body is any JSON (`{}`, serialized with JSON.stringify).
  return route.responseSchema === undefined ? ANY_JSON : wireForm(route.responseSchema, { byAlias: true }).schema
}

/** The documented responses, and the statuses only an explicit `responses` entry documents. */
export function collectResponses (
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
  const withMixins = mergeResponses(generated, context.contribution.responses)
  const merged = mergeResponses(withMixins, route.options.responses)
  // A caught exception's status is documented with the format's generic body unless a class already documents it.
  for (const status of caughtStatuses(view, context.implementation)) {
    merged[status] ??= { description: statusTitle(status), errors: [] }
  }
  const { errorFormat } = context
  const answered = remapStatuses(merged, errorFormat)
  const generatedAt = new Set(Object.keys(withMixins).map((status) => String(errorFormat.statusOf(Number(status)))))
  return { responses: answered, explicitOnly: Object.keys(answered).filter((status) => !generatedAt.has(status)) }
}

/**
 * The responses at the statuses the format answers them with (`statuses: { 409: 422 }`): an
 * error documented at a mapped status moves to the status it is sent with, its error classes
 * joining those already there, so the document lists what a client receives.
 */
function remapStatuses (responses: ResponsesMap, format: ErrorFormat): ResponsesMap {
  if (format.statuses.size === 0) return responses
  const out: ResponsesMap = {}
  const join = (first: ResponseDoc, second: ResponseDoc): ResponseDoc =>
    ({ ...second, ...first, errors: [...(first.errors ?? []), ...(second.errors ?? [])] })
  // A status that is not mapped keeps its own entry first; an entry moved there adds its classes.
  for (const [key, doc] of Object.entries(responses)) {
    const status = format.statusOf(Number(key))
    const there = out[status]
    if (String(status) === key) out[status] = there === undefined ? doc : join(doc, there)
    else out[status] = there === undefined ? { ...doc, description: statusTitle(status) } : join(there, doc)
  }
  return out
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
 * The success response of an event-stream route: `text/event-stream`, its events described by
 * `x-itemSchema`, one object per event (`event`, `data` by its schema, `id`, `retry`). OpenAPI 3.2
 * names this `itemSchema`; the document is 3.1, where a media type takes it as an extension
 * (docs/streaming.md, "In the document").
 */
function eventStreamResponse (events: EventRoute): ResponseDoc {
  const items = Object.entries(events.schemas).map(([name, data]) => Type.Object({
    event: Type.Literal(name),
    data,
    id: Type.Optional(Type.String({ description: 'Sent back as Last-Event-ID by a client that reconnects.' })),
    retry: Type.Optional(Type.Integer({ minimum: 0, description: 'How long the client waits before it reconnects (ms).' }))
  }, { additionalProperties: false }))
  return {
    description: 'A stream of server-sent events: each as x-itemSchema describes it, its data as JSON.',
    content: {
      [EVENT_STREAM]: {
        schema: Type.String({ description: 'Events in the text/event-stream format (HTML Living Standard §9.2).' }),
        'x-itemSchema': items.length === 1 ? items[0] : Type.Union(items)
      }
    }
  }
}

/** The header a reconnecting client sends: documented on every event stream, and read as text of any form. */
const LAST_EVENT_ID = Type.Optional(Type.String({
  description: 'The id of the last event received, sent by a client that reconnects; a stream that resumes refuses one it cannot read (400).'
}))

/**
 * The options of an event-stream route: its 200 the stream of its events, a 400 for a `Last-Event-ID`
 * the method refuses, and the header among those the route reads.
 */
export function eventStreamOptions (options: ResolvedRouteOptions, events: EventRoute): ResolvedRouteOptions {
  const own = options.schema?.headers
  // The route's own header schema keeps its members (its own `last-event-id` included), with the header beside them.
  // A header schema is an object's (routes' request parts are): its members are schemas.
  const withHeader = Type.Object({ 'last-event-id': LAST_EVENT_ID, ...own?.properties as Record<string, TSchema> | undefined })
  const responses = { 200: eventStreamResponse(events), 400: { errors: [BadRequest] } }
  const merged = mergeRouteOptions({ responses }, options)
  return { ...merged, schema: { ...merged.schema, headers: withHeader } }
}
