// Authentication (access layer): the authenticator protocol, the application's authentication, and the hook that resolves the principal.
import type { FastifyInstance, FastifyRequest, onRequestHookHandler } from 'fastify'
import { Forbidden, Unauthorized } from '../http/errors.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import type { Principal } from './principal.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { GRANTED_SCOPES } from './permission.js'

/**
 * One way a client proves who it is (a bearer token, an API key): an extension point, one file per
 * kind (`jwtAuth`, `apiKeyAuth`). `authenticate` answers `undefined` when the request carries no
 * credentials of its kind, the principal when they are good, and throws `Unauthorized` (through
 * `invalidCredentials`) when they are not: a bad token is never taken for no token.
 */
export interface Authenticator {
  /** The security scheme's name in the API description (`bearerAuth`). */
  readonly scheme: string
  /** Its OpenAPI Security Scheme Object (`{ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }`). */
  readonly securityScheme: Readonly<Record<string, unknown>>
  /** Its challenge in `WWW-Authenticate` (RFC 9110 §11.6.1): `Bearer realm="api"`. */
  readonly challenge: string
  authenticate (request: FastifyRequest): MaybePromise<Principal | undefined>
  /** The scopes a principal it resolved was granted (OAuth2 `scope`), for `hasScope`; none when absent. */
  scopesOf? (principal: Principal, request: FastifyRequest): readonly string[]
}

/** How an application authenticates: `configureApp(app, { auth })` or the plugin's `auth`. */
export interface AuthOptions {
  /** Tried in order; the first that finds credentials of its kind decides. */
  authenticators: readonly Authenticator[]
  /**
   * What identifies a principal for a throttle's budget (`member.id`); without it a throttle
   * counts by the client's address.
   */
  principalId?: (principal: Principal) => string | number
}

/** The authentication of an application once configured: its options and what every 401 carries. */
export interface AppAuth extends AuthOptions {
  /** Every authenticator's challenge, for the `WWW-Authenticate` of a 401. */
  readonly challenges: string
  /** The hook that resolves `request.principal`, first of every view route. */
  readonly hook: onRequestHookHandler
  /** The options it was configured with. */
  readonly options: AuthOptions
}

const APP_AUTH = Symbol('fastify-views.auth')
type WithAuth = FastifyInstance & { [APP_AUTH]?: AppAuth }

/** The authentication of a context (or of the one around it), if the application configured one. */
export const appAuth = (app: FastifyInstance | undefined): AppAuth | undefined =>
  app === undefined ? undefined : (app as WithAuth)[APP_AUTH]

/**
 * Records a context's authentication: every view route registered after it resolves its principal.
 * Once per context: a second, other one would leave the routes in between authenticated by the first.
 */
export function configureAuth (app: FastifyInstance, options: AuthOptions): AppAuth {
  const own = Object.hasOwn(app, APP_AUTH) ? (app as WithAuth)[APP_AUTH] : undefined
  if (own !== undefined) {
    if (own.options === options) return own
    throw new ConfigurationError('FV_ERR_AUTH', 'fastify-views: the application was configured with one auth and is now given another; ' +
      'declare it once, in the first configureApp(app, { auth }) or the plugin\'s auth')
  }
  if (options.authenticators.length === 0) {
    throw new ConfigurationError('FV_ERR_AUTH', 'fastify-views: auth lists no authenticators, so every request would be anonymous; ' +
      'give it one (jwtAuth, apiKeyAuth, or an object with authenticate) or leave auth out')
  }
  const challenges = options.authenticators.map((one) => one.challenge).join(', ')
  const auth: AppAuth = { ...options, options, challenges, hook: principalHook(options.authenticators, challenges) }
  // Not enumerable, not writable: a context inside may define its own, which shadows it.
  Object.defineProperty(app, APP_AUTH, { value: auth })
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null)
  return auth
}

/**
 * A 401 as RFC 9110 §15.5.2 requires it: with a `WWW-Authenticate` challenge of every scheme the
 * application accepts, so the client learns how to authenticate.
 */
export const unauthorized = (challenges: string, detail?: string): Unauthorized =>
  new Unauthorized(detail, { headers: { 'www-authenticate': challenges } })

/**
 * A 401 for credentials that are present and wrong (RFC 6750 §3.1 `invalid_token` for a bearer
 * token): what an authenticator throws, with its own challenge and error code.
 */
export const invalidCredentials = (challenge: string, detail: string, error = 'invalid_token'): Unauthorized =>
  new Unauthorized(detail, { headers: { 'www-authenticate': `${challenge}, error="${error}"` } })

/**
 * The answer to a request its permissions refuse: a 401 with the application's challenges when
 * it is anonymous (signing in may help), a 403 when its principal may not (RFC 9110 §15.5.4).
 */
export function refusal (request: FastifyRequest, message?: string): Unauthorized | Forbidden {
  if ((request.principal ?? null) !== null) return new Forbidden(message)
  const challenges = appAuth(request.server)?.challenges
  return challenges === undefined ? new Unauthorized() : unauthorized(challenges)
}

/** The hook that sets `request.principal`: the first authenticator that finds credentials decides; none, anonymous. */
function principalHook (authenticators: readonly Authenticator[], challenges: string): onRequestHookHandler {
  const resolve = async (request: FastifyRequest): Promise<void> => {
    for (const authenticator of authenticators) {
      const principal = await authenticator.authenticate(request)
      if (principal === undefined) continue
      // An authenticator that resolved credentials to nobody refuses them rather than letting the request through anonymous.
      if (principal === null) throw unauthorized(challenges, 'The credentials name nobody.')
      request.principal = principal
      if (authenticator.scopesOf !== undefined) GRANTED_SCOPES.set(request, authenticator.scopesOf(principal, request))
      return
    }
    request.principal = null
  }
  return async function authenticate (request) { await resolve(request) }
}
