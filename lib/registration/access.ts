// Access (registration layer, a route feature): a route's authentication, permissions and throttles as its first hooks, and their documentation.
import { Type } from '@sinclair/typebox'
import type { FastifyRequest, onRequestHookHandler } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import { Forbidden, Unauthorized } from '../http/errors.js'
import type { ResponsesMap, SecurityRequirement } from '../routes/types.js'
import type { RouteContribution, RouteDefinition, ViewClass } from '../views/view.js'
import { allOf, compileAccess, Denied, holdsRules, keepRule, type CompiledAccess, type Verdict } from '../access/access-rule.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import { appAuth, unauthorized, type AppAuth } from '../access/authenticator.js'
import type { Permission } from '../access/permission.js'
import { throttleHooks, type Throttle } from '../access/throttle.js'
import { recordPermissions } from '../access/registered-permissions.js'

/** The statics of a view the feature reads, where it has them (`APIView`'s). */
interface AccessStatics {
  getPermissions?: (action: string) => ReadonlyArray<Permission<never>>
  getThrottles?: (action: string) => readonly Throttle[]
}

/** Actions that make objects: an object rule holds of what they store (a 403 when it does not). */
const CREATES: ReadonlySet<string> = new Set(['create', 'bulkCreate'])

/**
 * A route's access: the application's authentication (every view route resolves its principal
 * once `auth` is configured), the permissions of every level (router, registration, route, view,
 * action: all must pass), and the throttles of every level, in that order (DRF's `initial()`).
 * Nothing when the application has none of them: such a route pays nothing.
 */
export function access (route: RouteDefinition, method: string, view: ViewClass): RouteContribution | undefined {
  const auth = appAuth(route.app)
  const statics = view as ViewClass & AccessStatics // any view class: APIView's have these statics
  const permissions = [...route.options.permissions ?? [], ...statics.getPermissions?.(route.name) ?? []]
  const throttles = [...route.options.throttles ?? [], ...statics.getThrottles?.(route.name) ?? []]
  if (route.app !== undefined) recordPermissions(route.app, view, route.name, permissions)
  if (auth === undefined && permissions.length === 0 && throttles.length === 0) return undefined
  const where = `${view.name}'s ${route.name} (${method} ${route.path})`
  let responses: ResponsesMap = auth === undefined ? {} : { 401: refusedCredentials(auth) }
  const node = allOf(permissions)
  const compiled = node === undefined ? undefined : compileAccess(node, method, permissions.map(String).join(', '))
  if (compiled !== undefined) {
    assertApplicable(compiled, route, view, where, auth, route.app !== undefined)
    if (compiled.objects !== 'none' && route.app !== undefined) holdsRules(route.app)
    responses = { ...responses, ...refusals(compiled, route.name, auth) }
  }
  // Authentication and the permissions are one hook: one turn of Fastify's hook runner, not two.
  const onRequest: onRequestHookHandler[] = compiled !== undefined
    ? [accessHook(compiled, auth)]
    : auth === undefined ? [] : [callbackHook(auth.authenticate)]
  if (throttles.length > 0) {
    const throttled = throttleHooks(throttles, route.app, auth?.principalId, where)
    onRequest.push(...throttled.hooks)
    responses = { ...responses, ...throttled.responses }
  }
  return {
    onRequest,
    responses,
    ...auth === undefined ? {} : { security: securityOf(auth, compiled), securitySchemes: schemesOf(auth) }
  }
}

/**
 * The judge of a route's permissions as its hook: refused, a 401 for an anonymous request (with
 * the challenges of RFC 9110 §11.6.1) and a 403 for a signed-in one; allowed the objects of a
 * rule, which the request keeps for the view's reads and writes.
 */
function accessHook (compiled: CompiledAccess, auth: AppAuth | undefined): onRequestHookHandler {
  const { judge } = compiled
  const nobodyPasses = compiled.signedIn === 'deny'
  const challenges = auth?.challenges
  const authenticate = auth?.authenticate
  const decide = (request: FastifyRequest, verdict: Verdict): void => {
    if (verdict === true) return
    if (verdict instanceof Denied) {
      // A 401 says that authenticating may help (RFC 9110 §15.5.2); where no principal passes, it would not.
      if (request.principal != null || nobodyPasses) throw new Forbidden(verdict.message)
      throw challenges === undefined ? new Unauthorized() : unauthorized(challenges)
    }
    keepRule(request, verdict)
  }
  const judged = (request: FastifyRequest): MaybePromise<void> => {
    const verdict = judge(request.principal ?? null, request)
    if (verdict instanceof Promise) return verdict.then((settled) => { decide(request, settled) })
    decide(request, verdict)
  }
  if (authenticate === undefined) return callbackHook(judged)
  return callbackHook((request) => {
    const authenticated = authenticate(request)
    return authenticated instanceof Promise ? authenticated.then(() => judged(request)) : judged(request)
  })
}

/**
 * `step` as a hook of Fastify's callback form: the request goes on as soon as the step does, with
 * no promise or turn of the event loop while it is synchronous (an API key, a scope).
 */
function callbackHook (step: (request: FastifyRequest) => MaybePromise<void>): onRequestHookHandler {
  return function access (request, _reply, done) {
    let outcome
    try {
      outcome = step(request)
    } catch (error) {
      done(error as Error) // what a step throws: the refusals above, or an authenticator's error
      return
    }
    if (outcome instanceof Promise) outcome.then(() => { done() }, done)
    else done()
  }
}

/** Refuses permissions a route cannot honour, each a mistake that would otherwise widen access silently. */
function assertApplicable (compiled: CompiledAccess, route: RouteDefinition, view: ViewClass, where: string,
  auth: AppAuth | undefined, registeredOnApp: boolean): void {
  const readsObjects = typeof Reflect.get(view.prototype, 'getScopeKwargs') === 'function' // a generic view's
  if (compiled.objects !== 'none' && !readsObjects) {
    throw new ConfigurationError('FV_ERR_PERMISSION', `Cannot register ${where}: ${compiled.name} judges objects, but ${view.name} ` +
      'is no generic view and reads none, so the rule would never run. Give the object rule to a generic view, or check the object in the action')
  }
  if (route.name === 'list' && !compiled.expressible) {
    throw new ConfigurationError('FV_ERR_PERMISSION', `Cannot register ${where}: ${compiled.name} judges objects by a check no criteria express ` +
      '(an `object` rule, `not()` of a rule on objects, or `or` of two), and a list cannot run it on rows it does not read: ' +
      'it would list and count rows the reader may not see. Give the rule a `scope` (its criteria), or move it to actionPermissions of the actions on one object')
  }
  // A rule that refuses everyone (ReadOnly on a write) needs no principal: only one that a principal could pass does.
  if (compiled.anonymous === 'deny' && compiled.signedIn !== 'deny' && auth === undefined && registeredOnApp) {
    throw new ConfigurationError('FV_ERR_PERMISSION', `Cannot register ${where}: ${compiled.name} refuses anonymous requests, ` +
      'and the application authenticates nobody, so every request would be a 401. Configure it first: configureApp(app, { auth }) or the plugin\'s auth')
  }
}

const WWW_AUTHENTICATE = {
  'www-authenticate': Type.String({ description: 'How to authenticate (RFC 9110 §11.6.1): a challenge per scheme the API accepts' })
}

/** The 401 of every route of an application with authentication: credentials sent and refused. */
const refusedCredentials = (_auth: AppAuth): ResponsesMap[number] => ({
  description: 'The credentials sent were refused (malformed, expired or unknown), or the route needs some and none were sent.',
  errors: [Unauthorized],
  headers: WWW_AUTHENTICATE
})

/** The refusals the permissions can answer on this route, as the rules imply them. */
function refusals (compiled: CompiledAccess, action: string, auth: AppAuth | undefined): ResponsesMap {
  const out: ResponsesMap = {}
  if (compiled.anonymous !== 'allow' && compiled.signedIn !== 'deny') {
    out[401] = { errors: [Unauthorized], ...auth === undefined ? {} : { headers: WWW_AUTHENTICATE } }
  }
  const judgedObject = compiled.objects === 'check' || (compiled.objects === 'scope' && CREATES.has(action))
  if (compiled.signedIn !== 'allow' || judgedObject) out[403] = { errors: [Forbidden] }
  return out
}

/** The operation's security: every scheme with each set of scopes the rules ask for, and `{}` where anonymous requests may pass. */
function securityOf (auth: AppAuth, compiled: CompiledAccess | undefined): SecurityRequirement[] {
  const sets = compiled?.scopeSets ?? [[]]
  const requirements = sets.flatMap((scopes) => auth.authenticators.map((one) => ({ [one.scheme]: [...scopes] })))
  return compiled?.anonymous === 'deny' ? requirements : [...requirements, {}]
}

const schemesOf = (auth: AppAuth): Record<string, unknown> =>
  Object.fromEntries(auth.authenticators.map((one) => [one.scheme, one.securityScheme]))
