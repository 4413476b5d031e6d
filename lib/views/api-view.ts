// APIView (views layer): View with a response schema, documented errors, exception mapping, per-action dependencies and per-request serializer options.
import type { Schema } from '../core/typebox-lines.js'
import type { Raises } from './decorators.js'
import { BadRequest, type APIErrorClass } from '../http/errors.js'
import type { Dependency } from '../routes/types.js'
import { View, type ActionRoute, type StandardAction } from './view.js'
import type { SerializerOptions } from '../schema/wire.js'
import { detailUrl } from './links.js'
import { NOT_FOUND, type WriteDescription } from './write.js'
import type { Permission } from '../access/permission.js'
import type { Throttle } from '../access/throttle.js'
import type { CacheOptions } from '../stores/cache/cache-options.js'
import type { Principal } from '../access/principal.js'
import { refusal } from '../access/authenticator.js'

export type { SerializerOptions }

/** Methods that only read (RFC 9110 §9.2.1); every other one is a write. */
const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS', 'TRACE'])

/** Where an instance keeps its own serializer options once a handler touched them. */
export const OWN_SERIALIZER_OPTIONS = Symbol('fastify-views.serializer-options')

/**
 * `View` plus the conventions of an API: a class-level response schema validated and
 * serialized for every route, documented errors, exception mapping (`raises`,
 * `Catch`), per-action dependencies, and per-request serializer options.
 */
export class APIView extends View {
  /** Human-readable name of the resource in messages and the API description (default: from `responseSchema`, else the class name). */
  static apiComponentName: string | undefined = undefined
  /** What the resource is, for API readers: the description of the view's tag in the OpenAPI document. */
  static apiDescription: string | undefined = undefined
  /** The resource name in the plural, for collection operationIds, summaries and the tag (default: `plural(apiComponentName)`). */
  static apiPluralName: string | undefined = undefined
  /**
   * The path parameters of the prefix the view is registered under (`/members/:memberId/loans`):
   * validated on every route of the view, typed in its actions, and checked at registration
   * against the prefix (docs/generics.md, "Nested resources").
   */
  static prefixParams: Schema | undefined = undefined
  /**
   * A name to wrap single objects in on the wire (`'loan'`: `{ "loan": { ... } }`): the answers
   * and bodies of create, retrieve, update and partial update (docs/actions.md, "Envelopes").
   * Actions return and receive the object itself; list pages are their pagination's.
   */
  static envelope: string | undefined = undefined
  /** Schema of the success body of standard actions, and the fallback of custom routes. */
  static responseSchema: Schema | undefined = undefined
  /**
   * Check the shape of returned values before serializing (types, required properties,
   * nesting): a mismatch is a 500 and nothing wrong is sent (docs/views.md).
   */
  static validateResponse = true
  /** With `validateResponse`, also check every value constraint: string formats, patterns, lengths, bounds. */
  static strictResponse = false
  /**
   * `true`: returned objects are read attribute by attribute (getters and inherited
   * properties included) into plain data first, as for ORM entities. `false`: only
   * plain objects are accepted. `null`: values are taken as they are.
   */
  static fromAttributes: boolean | null = null
  /** Dump options, copied onto `this.serializerOptions` when a handler reads them. */
  static defaultSerializerOptions: SerializerOptions = { byAlias: true }
  /** Errors documented on every route. */
  static defaultErrors: APIErrorClass[] = [BadRequest]
  /** Errors documented on every route of this view, besides `defaultErrors`. */
  static errors: APIErrorClass[] = []
  /** Exception type -> error detail (status 400) or `{ status, detail }`, applied by `Catch`. */
  static raises: Raises = []
  /** Action name -> route-level dependencies of that action's route only. A key that names no action is refused at registration. */
  static actionDependencies: Record<string, Dependency[]> = {}
  /**
   * Dependencies of every route whose method is unsafe (POST, PUT, PATCH, DELETE; RFC 9110
   * §9.2.1): the standard writes, the four bulk actions and decorated routes alike, so that
   * guarding writes needs one line and no write is left open by omission. They run before
   * the action's own `actionDependencies`.
   */
  static unsafeDependencies: Dependency[] = []
  /**
   * Permissions every route of the view must pass (DRF's `permission_classes`; docs/permissions.md),
   * with those of its router and registration: request-level checks before the body is read, and
   * object rules that scope what its actions read and write.
   */
  static permissions: readonly Permission<never>[] = []
  /** Action name -> permissions of that action only, with the view's `permissions`. A key that names no action is refused at registration. */
  static actionPermissions: Readonly<Record<string, readonly Permission<never>[]>> = {}
  /** Throttles every route of the view counts against (docs/throttles.md): views naming one scope share its budget. */
  static throttles: readonly Throttle[] = []
  /** Action name -> throttles of that action only, with the view's `throttles`. */
  static actionThrottles: Readonly<Record<string, readonly Throttle[]>> = {}
  /** What of the view the application's cache keeps and invalidates (docs/cache.md); nothing by default. */
  static cache: CacheOptions | undefined = undefined

  /** A standard action with a body answers `responseSchema`; the mixin that owns the action refines it. */
  static override getActionRoute (action: StandardAction): ActionRoute {
    const route = super.getActionRoute(action)
    return route.emptyBody ? route : { ...route, responseSchema: this.responseSchema }
  }

  /** The dependencies of one action served with one method; override for dynamic behaviour. */
  static getDependencies (action: string, method?: string): Dependency[] {
    const own = this.actionDependencies[action] ?? []
    return method !== undefined && this.unsafeDependencies.length > 0 && !SAFE_METHODS.has(method)
      ? [
          ...this.unsafeDependencies,
          ...own
        ]
      : own
  }

  /** The permissions of one action: the view's, then the action's own; override for dynamic behaviour. */
  static getPermissions (action: string): readonly Permission<never>[] {
    const own = this.actionPermissions[action]
    return own === undefined ? this.permissions : [...this.permissions, ...own]
  }

  /** The throttles of one action: the view's, then the action's own. */
  static getThrottles (action: string): readonly Throttle[] {
    const own = this.actionThrottles[action]
    return own === undefined ? this.throttles : [...this.throttles, ...own]
  }

  /**
   * Who is asking, as the application's authentication resolved it (`configureApp(app, { auth })`):
   * `null` for an anonymous request. Typed by the application's `PrincipalTypes` (docs/permissions.md).
   */
  get principal (): Principal | null {
    return this.request.principal ?? null
  }

  /**
   * The principal of a request that must have one (a route behind `IsAuthenticated`): an anonymous
   * request is refused with the 401 the permissions answer, challenges included.
   */
  requirePrincipal (): Principal {
    const principal = this.request.principal ?? null
    if (principal === null) throw refusal(this.request)
    return principal
  }

  declare [OWN_SERIALIZER_OPTIONS]: SerializerOptions | undefined
  declare private ownValidationContext: Record<string, unknown> | undefined

  /**
   * This request's dump options. Created from `defaultSerializerOptions` on first
   * access, so a request whose handler never touches them allocates nothing.
   */
  get serializerOptions (): SerializerOptions {
    return (this[OWN_SERIALIZER_OPTIONS] ??= { ...(this.constructor as typeof APIView).defaultSerializerOptions })
  }

  set serializerOptions (options: SerializerOptions) {
    this[OWN_SERIALIZER_OPTIONS] = options
  }

  /**
   * The URL of an object's detail route where this view is served, the application's and the
   * parent's prefix included: `getLocation (obj) { return this.getDetailUrl(obj) }` (docs/actions.md).
   */
  getDetailUrl (object: object, action = 'retrieve'): string {
    return detailUrl(this.request, (this.constructor as typeof APIView).getDetailRoute(action), object) // a view instance's class
  }

  /**
   * What the write of `action` on one object selects, what must hold of the current row when it
   * is written, and what a write that changes nothing answers (views/write.ts). Here, nothing: the
   * generic views describe their detail writes, and features (object permissions, ConditionalMixin,
   * patch documents) extend the description with `super`, wherever they stand in the mix.
   */
  describeWrite (_action: string): WriteDescription {
    return { criteria: {}, preconditions: [], contentChecks: [], miss: NOT_FOUND }
  }

  /**
   * Per-request data for the view's own checks.
   * TypeBox validation has no context, so the built-in response check does not read it.
   */
  get validationContext (): Record<string, unknown> {
    return (this.ownValidationContext ??= {})
  }

  set validationContext (context: Record<string, unknown>) {
    this.ownValidationContext = context
  }
}
