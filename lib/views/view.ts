import type { TSchema } from '@sinclair/typebox'
import type { Schema } from '../core/typebox-lines.js'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { DEFAULT_MAX_BODY_DEPTH } from '../schema/validation.js'
import type { APIErrorClass } from '../http/errors.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import type { ResolvedRouteOptions, ResponsesMap, ViewRouteOptions } from '../routes/types.js'

/**
 * A standard action a view class contributes (list, create, retrieve, ...): the route it
 * gets when the class implements the method, whatever decorators it has. Plain data: what
 * depends on the class (schemas, the 404, an empty body) comes from `getActionRoute`.
 */
export interface StandardAction {
  /** The action and method name: `list`, `create`, `retrieve`, ... */
  readonly name: string
  readonly method: HTTPMethods
  /** Whether the route is the detail route (`/:id`) rather than the prefix itself. */
  readonly detail: boolean
  readonly status: number
  /** Whether the action reads a request body (create, the updates): without a body schema it takes any JSON. */
  readonly body?: boolean
  /** Errors documented on the action (404 on detail actions, 409 on create). */
  readonly throws?: readonly APIErrorClass[]
}

/** What a class makes of one of its standard actions: the parts that depend on its statics. */
export interface ActionRoute {
  /** Relative to the prefix: `/`, the detail route, or a path of its own (`bulkRoute`). */
  path: string
  /** The options the action generates (schemas, documented errors); the method's own decorators win. */
  options: ViewRouteOptions
  /** The success body schema (a list wraps `responseSchema` in an array). */
  responseSchema?: Schema | undefined
  /** Returning `null` or `undefined` throws the error this makes (detail actions with `raiseOnNone`). */
  onNone?: (() => Error) | undefined
  /** The success response has no body (`returnOnCreate = false`, a 204). */
  emptyBody: boolean
  /** Work on the reply once the action returned a value (the `Location` of a create), if the class needs any. */
  after?: AfterAction | undefined
  /** A body taken in several media types (a partial update's patch formats): media type -> its schemas. */
  bodyMediaTypes?: Record<string, BodyMediaType> | undefined
  /** Errors the class adds to the action's own (a nested view's 404, an object permission's 403), documented on the route. */
  throws?: readonly APIErrorClass[] | undefined
}

/** One media type a route's body may have: what the API description shows, and what is validated before the action. */
export interface BodyMediaType {
  /** The documented schema. */
  schema: TSchema
  /** The schema validated in Fastify's validation phase, as a plain body is; `undefined`: the action's hooks check it. */
  validation: TSchema | undefined
}

/** Runs after an action returned a non-empty value, before the response is built. */
export type AfterAction = (view: View, value: unknown, reply: FastifyReply) => void

/** The sentinel of a standard action method a class leaves to its subclasses. */
export const ABSTRACT = Symbol('fastify-views.abstract')

/** Marks a standard action's placeholder method as not implemented. */
export function abstractAction (name: string): (...args: unknown[]) => never {
  // A function, not an arrow: the error names the class of the view it was called on.
  const fn = function (this: unknown): never {
    const owner = (this as object).constructor.name // called as a method of a view
    throw new ConfigurationError('FV_ERR_NOT_IMPLEMENTED', `${owner}.${name} is not implemented: implement it, or call it only on a view that does`)
  }
  Object.defineProperty(fn, ABSTRACT, { value: true })
  return fn
}

/** One route of a view, resolved from its standard action or decorators. */
export interface RouteDefinition {
  name: string
  methods: HTTPMethods[]
  path: string
  status: number
  /** Its options, with every request schema and the success schema in the 0.34 form. */
  options: ResolvedRouteOptions
  throws: APIErrorClass[]
  responseSchema: TSchema | undefined
  onNone?: () => Error
  after?: AfterAction
  emptyBody: boolean
  standard: boolean
  /** The media types of a body taken in several (media type -> schemas); `undefined`: JSON only. */
  bodyMediaTypes?: Record<string, BodyMediaType>
  /** The name the route's answer and body are wrapped in on the wire (the view's `envelope`), if any. */
  envelope?: string
  /** The action reads a body it declares no schema for (a create without `createSchema`): any JSON, unvalidated. */
  anyJsonBody?: boolean
  /**
   * The application's serializer compiler, for what a mixin serializes at registration
   * (the representation ConditionalMixin hashes): shared schemas of the app resolve.
   */
  compileSerializer: (schema: TSchema) => (value: unknown) => string
  /** The largest body the route reads, in bytes: its `bodyLimit`, or the application's. */
  bodyLimit: number
}

/** A route as the class declares it, before registration gives it the application's compilers and limits. */
export type CollectedRoute = Omit<RouteDefinition, 'compileSerializer' | 'bodyLimit'>

/**
 * Work a mixin does on the request's view after every hook of the route and before the action
 * (a patch document applied to the current object, the parent read): run by the route's
 * handler, in order, on the view the action gets. It costs a route that has none nothing, and
 * one that has some no hook phase of Fastify's.
 */
export type BeforeAction = (view: View, request: FastifyRequest, reply: FastifyReply) => void | PromiseLike<void>

/** What a mixin adds to one operation of a route: Fastify hooks of the route, and work before its action. */
export interface RouteHooks extends Pick<ViewRouteOptions, 'onSend' | 'preValidation' | 'preHandler' | 'preSerialization'> {
  beforeAction?: readonly BeforeAction[]
}

/** Where a request keeps the view a hook made for it, so that the handler uses the same one. */
const REQUEST_VIEW = Symbol('fastify-views.view')
type Keeping = FastifyRequest & { [REQUEST_VIEW]?: View }

/**
 * The view instance of a request, made by a hook before the handler (the precondition
 * check of a conditional write). The handler uses it too: one instance per request.
 */
export function keepView<V extends View> (request: FastifyRequest, view: V): V {
  (request as Keeping)[REQUEST_VIEW] = view
  return view
}

/** The view a hook kept for this request, if any. */
export function keptView (request: FastifyRequest): View | undefined {
  return (request as Keeping)[REQUEST_VIEW]
}

/**
 * The low-level base class: routes come from the decorators (`Get`, `Post`, ...),
 * a new instance serves each request, and returned values are serialized by the
 * route's own response schema. No class-level response schema, no error conventions.
 */
export class View {
  /** Path suffix of detail routes and of `Action(..., { detail: true })`. */
  static detailRoute = '/:id'

  /**
   * How many levels of arrays and objects a JSON body may nest where its schema does not bound
   * it (`Type.Unknown`, `Type.Any`, records of those, recursive schemas); a deeper body is a 400
   * naming the first container too deep (docs/views.md, "Bodies nested too deep").
   */
  static maxBodyDepth = DEFAULT_MAX_BODY_DEPTH

  /** The detail path of an action; override to vary it per action. */
  static getDetailRoute (_action: string): string {
    return this.detailRoute
  }

  /**
   * The standard actions (list, create, ...) this class contributes. Action mixins
   * extend the list; a plain view has none.
   */
  static standardActions (): StandardAction[] {
    return []
  }

  /**
   * The route of one standard action of this class. Each mixin that owns an action (or a
   * static the action reads) overrides it for that action and calls `super` for the rest.
   */
  static getActionRoute (action: StandardAction): ActionRoute {
    return { path: action.detail ? this.getDetailRoute(action.name) : '/', options: {}, emptyBody: action.status === 204 }
  }

  /**
   * Route-level Fastify hooks a mixin adds to one operation (ConditionalMixin's `onSend`
   * and precondition check). Called once per operation at registration; a plain view adds none.
   * They run after the route's dependencies of the same phase.
   */
  static routeHooks (_route: RouteDefinition, _method: string): RouteHooks {
    return {}
  }

  /** Responses a mixin documents on one operation (a 304, a 412), merged before the route's explicit `responses`. */
  static extraResponses (_route: RouteDefinition, _method: string): ResponsesMap | undefined {
    return undefined
  }

  /**
   * Request headers a mixin documents on one operation without validating them (the
   * conditional request headers), as TypeBox properties; `undefined` for none.
   */
  static documentedHeaders (_route: RouteDefinition, _method: string): Record<string, TSchema> | undefined {
    return undefined
  }

  /** Throws a `TypeError` when the class cannot serve requests as configured; called at registration. */
  static assertRegistrable (): void {}

  /** The documented headers of an action's success response, or `undefined` (docs/openapi.md). */
  static getResponseHeaders (_action?: string): ResponseHeadersClass | undefined {
    return undefined
  }

  // Declared, not class fields: a field initializer on the base makes every construction
  // through a shared call site (the route handler, for every view class) several times slower.
  /** The request being served. */
  declare readonly request: FastifyRequest
  /** The reply of that request. */
  declare readonly reply: FastifyReply

  /**
   * Called once per request by the route handler. A subclass that needs more state
   * overrides it, calls `super(request, reply)`, and reads what it needs from
   * `request.server` (Fastify decorations) or the request itself.
   */
  constructor (request: FastifyRequest, reply: FastifyReply) {
    this.request = request
    this.reply = reply
  }

  /**
   * Whether an action's result is this request's reply (an action that answered by hand,
   * such as a 304 from `checkLastModified`) rather than a value to serialize: narrows
   * `super.list(request)` to the page or array it returned otherwise.
   */
  isReply<T> (value: T | FastifyReply): value is FastifyReply {
    return value === this.reply
  }

  /**
   * The Fastify instance the route belongs to: the typed way to reach databases,
   * services and configuration declared with `fastify.decorate` (and typed by
   * declaration merging on `FastifyInstance`).
   */
  get server (): FastifyInstance {
    return this.request.server
  }
}

/** A view class: the constructor the route handler instantiates per request. */
export type ViewClass<V extends View = View> = (abstract new (request: FastifyRequest,
  reply: FastifyReply) => V) & typeof View
