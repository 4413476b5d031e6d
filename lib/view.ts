import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { RouteDefinition, StandardAction } from './register.js'
import type { ResponseHeadersClass } from './response-headers.js'
import type { ResponsesMap, ViewRouteOptions } from './types.js'

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
   * Route-level Fastify hooks a mixin adds to one operation (ConditionalMixin's `onSend`
   * and precondition check). Called once per operation at registration; a plain view adds none.
   * They run after the route's dependencies of the same phase.
   */
  static routeHooks (_route: RouteDefinition, _method: string): Pick<ViewRouteOptions, 'onSend' | 'preValidation' | 'preHandler' | 'preSerialization'> {
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

  /** The request being served. */
  readonly request: FastifyRequest
  /** The reply of that request. */
  readonly reply: FastifyReply

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
export type ViewClass<V extends View = View> = (abstract new (request: FastifyRequest, reply: FastifyReply) => V) & typeof View
