// View (views layer): the low-level base class, the route model the rest reads (standard actions, action routes, route definitions), and what a mixin contributes to a route.
import type { TSchema } from '@sinclair/typebox'
import type { Schema } from '../core/typebox-lines.js'
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods, onRequestHookHandler, onSendHookHandler, preHandlerHookHandler, preSerializationHookHandler, preValidationHookHandler } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { DEFAULT_MAX_BODY_DEPTH } from '../schema/validation.js'
import type { APIErrorClass } from '../http/errors.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import type { ResolvedRouteOptions, ResponsesMap, SecurityRequirement, ViewRouteOptions } from '../routes/types.js'
import { mergeResponses } from '../routes/route-meta.js'
import type { EventRoute } from '../routes/events.js'

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
  /**
   * What the library's own action does with its repository (the generic views): writes its body
   * as it is, sends the stored rows as they are. Registration holds the action's schemas to the
   * store's fields for these, whoever implements the action, unless the view names the action in
   * `mappingActions` (docs/generics.md, "Write seams").
   */
  readonly store?: { readonly writesBody?: boolean, readonly sendsRows?: boolean }
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
  /**
   * The name the route's answer is wrapped in on the wire (the view's `envelope`), if any; a standard
   * action's body too, while a route of the view's own (`envelope: true`) takes its body as its schema says.
   */
  envelope?: string
  /** The action reads a body it declares no schema for (a create without `createSchema`): any JSON, unvalidated. */
  anyJsonBody?: boolean
  /** What the library's own action does with its repository (`StandardAction.store`), for the registration's checks. */
  store?: StandardAction['store']
  /**
   * The application's serializer compiler, for what a mixin serializes at registration
   * (the representation ConditionalMixin hashes): shared schemas of the app resolve.
   */
  compileSerializer: (schema: TSchema) => (value: unknown) => string
  /** The largest body the route reads, in bytes: its `bodyLimit`, or the application's. */
  bodyLimit: number
  /** The application the route is registered on, when registration is given one (its authentication, its throttles' store). */
  app?: FastifyInstance
  /** The route answers a stream of server-sent events (`Events`): their schemas and its connection's settings. */
  events?: EventRoute
}

/** A route as the class declares it, before registration gives it the application's compilers and limits. */
export type CollectedRoute = Omit<RouteDefinition, 'compileSerializer' | 'bodyLimit' | 'app'>

/**
 * Work a mixin does on the request's view after every hook of the route and before the action
 * (a patch document applied to the current object, the parent read): run by the route's
 * handler, in order, on the view the action gets. It costs a route that has none nothing, and
 * one that has some no hook phase of Fastify's.
 */
export type BeforeAction = (view: View, request: FastifyRequest, reply: FastifyReply) =>
  void | typeof ANSWERED | PromiseLike<void | typeof ANSWERED>

/** What a step before the action returns when it answered the request itself (a cached answer): the action is not run. */
export const ANSWERED = Symbol('fastify-views.answered')

/**
 * What a view's mixins add to one operation of a route (one method of it), each feature in one
 * place, its `contribute`: Fastify hooks of the phases `PHASES` orders (routes/phases.ts), steps
 * before the action, the responses it documents, and the request headers it documents without
 * validating them (the conditional request headers).
 */
export interface RouteContribution {
  /** `onRequest` hooks: the route's access checks (authentication, permissions, throttles), first of all its hooks. */
  readonly onRequest?: readonly onRequestHookHandler[]
  /**
   * `preValidation` hooks that evaluate the request's preconditions (If-Match, RFC 9110 §13.2.1:
   * after every other check of the request, before its content is looked at): they run before the
   * view's other `preValidation` hooks, wherever their mixin stands in the mix.
   */
  readonly preconditions?: readonly preValidationHookHandler[]
  readonly preValidation?: readonly preValidationHookHandler[]
  readonly preHandler?: readonly preHandlerHookHandler[]
  readonly preSerialization?: ReadonlyArray<preSerializationHookHandler<unknown>>
  readonly onSend?: readonly onSendHookHandler[]
  readonly beforeAction?: readonly BeforeAction[]
  /** Merged with the responses the route generates, before the route's own `responses`. */
  readonly responses?: ResponsesMap
  readonly requestHeaders?: Readonly<Record<string, TSchema>>
  /** The operation is deprecated (OpenAPI `deprecated: true`), whatever the route's own `deprecated` says. */
  readonly deprecated?: boolean
  /** The operation's security requirements (OpenAPI `security`), with what its dependencies require. */
  readonly security?: readonly SecurityRequirement[]
  /** The security schemes the requirements name, for the document's `components.securitySchemes`. */
  readonly securitySchemes?: Readonly<Record<string, unknown>>
}

/** Nothing added: what a plain view contributes, and what a mixin returns for a route it leaves alone. */
const NOTHING: RouteContribution = {}

/**
 * A mixin's contribution added to what the mixins below it contribute (`inherited`). Its hooks
 * run before theirs, since a mixin mixed first wins (ConditionalMixin's 304 and precondition
 * come before everything else); its steps before the action run after theirs, on what they made
 * ready (a patch applies to the parent's child the step below read); documentation adds up.
 */
export function extendContribution (inherited: RouteContribution, own: RouteContribution): RouteContribution {
  if (inherited === NOTHING) return own
  const out: Record<string, unknown> = { ...inherited }
  for (const phase of ['onRequest', 'preconditions', 'preValidation', 'preHandler', 'preSerialization', 'onSend'] as const) {
    if (own[phase] !== undefined) out[phase] = [...own[phase], ...inherited[phase] ?? []]
  }
  if (own.beforeAction !== undefined) out.beforeAction = [...inherited.beforeAction ?? [], ...own.beforeAction]
  if (own.responses !== undefined) out.responses = mergeResponses(inherited.responses, own.responses)
  if (own.requestHeaders !== undefined) out.requestHeaders = { ...inherited.requestHeaders, ...own.requestHeaders }
  if (own.deprecated === true) out.deprecated = true
  if (own.security !== undefined) out.security = own.security
  if (own.securitySchemes !== undefined) out.securitySchemes = { ...inherited.securitySchemes, ...own.securitySchemes }
  return out
}

/**
 * The view a hook made for a request (the precondition check of a conditional write), so that the
 * handler serves the request with the same instance: one view per request. Kept beside the request,
 * not on it, and gone with it.
 */
const requestViews = new WeakMap<FastifyRequest, View>()

/** Keeps the view a hook made for this request, for the handler. */
export function keepView<V extends View> (request: FastifyRequest, view: V): V {
  requestViews.set(request, view)
  return view
}

/** The view a hook kept for this request, if any. */
export function keptView (request: FastifyRequest): View | undefined {
  return requestViews.get(request)
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
   * What the view's mixins add to one operation of a route: hooks, steps before the action,
   * documentation (`RouteContribution`). Called once per operation at registration. A mixin
   * overrides it and adds its own with `extendContribution(super.contribute(route, method), own)`;
   * a plain view adds nothing.
   */
  static contribute (_route: RouteDefinition, _method: string): RouteContribution {
    return NOTHING
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
