// The route types (routes layer): what a route is as users write it: its schemas, its typed request, its options, its dependencies and responses.
import type { TOptional, TSchema } from '@sinclair/typebox'
import type { Schema, StaticOf } from '../core/typebox-lines.js'
import type { FastifyReply, FastifyRequest, RouteShorthandOptions } from 'fastify'
import type { APIErrorClass } from '../http/errors.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import type { UnexpectedContent } from '../http/media-type.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import type { Permission } from '../access/permission.js'
import type { Throttle } from '../access/throttle.js'

// A value or a promise of it: sync views return values, async views promises.
export type { MaybePromise }

/** The request parts a route validates, as TypeBox schemas. */
export interface RouteSchemas {
  params?: Schema
  querystring?: Schema
  body?: Schema
  headers?: Schema
}

/**
 * The body a route's schema describes: `Type.Optional(Body)` (of either TypeBox line) is the body
 * or nothing, `undefined` when the client sent none (docs/routing.md#optional-bodies).
 */
export type BodyOf<B> = B extends TOptional<TSchema> | { readonly '~optional': true } ? StaticOf<B> | undefined : StaticOf<B>

/** The Fastify request of a route, typed from its TypeBox schemas (params, query, body, headers). */
export type ViewRequest<S extends RouteSchemas = RouteSchemas> = FastifyRequest<{
  Params: StaticOf<S['params']>
  Querystring: StaticOf<S['querystring']>
  Body: BodyOf<S['body']>
  Headers: StaticOf<S['headers']>
}>

/** What a handler may return: the typed body, a reply it sent itself, text, or nothing. */
export type HandlerResult<R> = StaticOf<R> | FastifyReply | string | Buffer | null | undefined

/**
 * A dependency function: a Fastify hook that refuses the request by throwing an `APIError`
 * (its problem is the answer) or by returning `false` (403 Forbidden); anything else lets it through.
 */
export type DependencyFn = (request: FastifyRequest, reply: FastifyReply) => unknown

/**
 * A dependency of a route: a function runs as an `onRequest` hook (before the body is
 * read, so a refused client costs no parsing); the object forms choose a later phase.
 */
export type Dependency =
  | DependencyFn
  | ({ onRequest: DependencyFn } & DependencyDocs)
  | ({ preValidation: DependencyFn } & DependencyDocs)
  | ({ preHandler: DependencyFn } & DependencyDocs)

/** An OpenAPI security requirement: scheme name (registered with `@fastify/swagger`) -> scopes. */
export type SecurityRequirement = Record<string, string[]>

/**
 * What a dependency tells the API description of every route it guards, so that guarding a
 * route documents it too: the errors it answers (401, 403) and the security it enforces.
 */
export interface DependencyDocs {
  /** Error classes the dependency throws; each route it guards documents them as problems. */
  errors?: APIErrorClass[]
  /** Alternatives the client may satisfy (OpenAPI `security`): one requirement object each. */
  security?: SecurityRequirement[]
}

/** One documented response of a `responses` map entry (docs/openapi.md). */
export interface ResponseDoc {
  description?: string
  /** The body schema; replaces the generated one for that status. */
  schema?: Schema
  /** Full `content` map (media type -> `{ schema }`, with `x-` extensions); replaces the generated body. */
  content?: Record<string, MediaTypeDoc>
  /** Response headers: header name -> schema (or `{ schema, description }`). */
  headers?: Record<string, unknown>
  /** Error classes documented for this status (what `errors(...)` produces). */
  errors?: APIErrorClass[]
}

/** One media type of a documented response: its schema, and OpenAPI extensions (`x-itemSchema` of an event stream). */
export interface MediaTypeDoc {
  schema: Schema
  [extension: `x-${string}`]: unknown
}

/** Documented responses by status code, merged with what the action generates. */
export type ResponsesMap = Record<number | string, ResponseDoc>

/** Fastify route options a view route passes through to `fastify.route` untouched. */
export type FastifyPassThroughOptions = Pick<RouteShorthandOptions,
  'config' | 'bodyLimit' | 'logLevel' | 'logSerializers' | 'constraints' | 'exposeHeadRoute' | 'prefixTrailingSlash' |
  'onRequest' | 'preParsing' | 'preValidation' | 'preHandler' | 'preSerialization' | 'onSend' | 'onResponse' |
  'onTimeout' | 'onError' | 'onRequestAbort' | 'errorHandler'>

/** Documentation options of a route (OpenAPI operation fields). */
export interface RouteDocOptions {
  tags?: string[]
  summary?: string
  description?: string
  operationId?: string
  deprecated?: boolean
  security?: Array<Record<string, string[]>>
  /** Leave the route out of the OpenAPI description. */
  hide?: boolean
}

/** Options shared by route decorators, `Override`, registration entries and routers. */
export interface SharedRouteOptions extends FastifyPassThroughOptions, RouteDocOptions {
  /** Extra documented responses, merged with the generated ones (docs/openapi.md). */
  responses?: ResponsesMap
  /** Headers documented on the success response (docs/openapi.md). */
  responseHeaders?: ResponseHeadersClass
  /** Route-level dependencies; they run before the view's `actionDependencies`. */
  dependencies?: Dependency[]
  /**
   * Permissions every route here must pass, with the view's own (docs/permissions.md): a router's,
   * a registration's and a route's add up, and none replaces another.
   */
  permissions?: Array<Permission<never>>
  /** Throttles every route here counts against, with the view's own (docs/throttles.md); they add up. */
  throttles?: Throttle[]
  /**
   * What a route without a body does with content a client sends anyway: `'ignore'` it (the
   * default: read within `bodyLimit` and dropped, as Fastify does) or `'refuse'` it with a 415
   * before reading it (the default of a bulk DELETE, whose criteria belong in the query).
   */
  unexpectedContent?: UnexpectedContent
}

/** Options of one route: Fastify's, the request schemas, the success status and body schema. */
export interface ViewRouteOptions<S extends RouteSchemas = RouteSchemas,
  R extends Schema | undefined = Schema | undefined> extends SharedRouteOptions {
  /** The validated request parts. */
  schema?: S & { [K in Exclude<keyof S, keyof RouteSchemas>]: never }
  /** The success status code (defaults: POST 201, DELETE 204, others 200). */
  statusCode?: number
  /** The success body schema; defaults to the view's `responseSchema`. */
  responseSchema?: R
}

/** Options of a route of the view's own (a route decorator, the route builder of `.with()`): a route's options, and its envelope. */
export interface CustomRouteOptions<S extends RouteSchemas = RouteSchemas,
  R extends Schema | undefined = Schema | undefined> extends ViewRouteOptions<S, R> {
  /**
   * Send the answer in the view's `envelope` (`{ "article": {...} }`), as its actions on one object
   * are sent: the handler returns the object, documented and validated wrapped (docs/actions.md,
   * "Envelopes"). The body is taken as `schema.body` says.
   */
  envelope?: boolean
}

/** The request parts of a route in the `@sinclair/typebox` 0.34 form the library validates with. */
export interface ResolvedRouteSchemas {
  params?: TSchema
  querystring?: TSchema
  body?: TSchema
  headers?: TSchema
}

/** Route options once registration has turned their schemas into the 0.34 form (`toTypeBox`). */
export type ResolvedRouteOptions = ViewRouteOptions<ResolvedRouteSchemas, TSchema | undefined>

/** A route handler method of a view, typed from its route's schemas. */
export type RouteMethod<This, S extends RouteSchemas, R> = (
  this: This,
  request: ViewRequest<S>
) => MaybePromise<HandlerResult<R>>
