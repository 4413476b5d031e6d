// Authentication (access layer): the authenticator protocol, the application's authentication, and the hook that resolves the principal.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { Forbidden, Unauthorized } from '../http/errors.js'
import { isThenable, type MaybePromise } from '../core/maybe-promise.js'
import type { Principal } from './principal.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { GRANTED_SCOPES } from './permission.js'

/**
 * One way a client proves who it is (a bearer token, an API key): an extension point, one file per
 * kind (`jwtAuth`, `apiKeyAuth`). `authenticate` answers `undefined` when the request carries no
 * credentials of its kind, the principal when they are good, and throws `Unauthorized` (through
 * `invalidCredentials`) when they are not: a bad token is never taken for no token.
 */
export interface Authenticator<P = Principal> {
  /** The security scheme's name in the API description (`bearerAuth`). */
  readonly scheme: string
  /** Its OpenAPI Security Scheme Object (`{ type: 'http', scheme: 'bearer', bearerFormat: 'JWT' }`). */
  readonly securityScheme: Readonly<Record<string, unknown>>
  /** Its challenge in `WWW-Authenticate` (RFC 9110 §11.6.1): `Bearer realm="api"`. */
  readonly challenge: string
  authenticate (request: FastifyRequest): MaybePromise<P | null | undefined>
  /** The scopes a principal it resolved was granted (OAuth2 `scope`), for `hasScope`; none when absent. */
  scopesOf? (principal: P, request: FastifyRequest): readonly string[]
}

/**
 * How an application authenticates: `configureApp(app, { auth })` or the plugin's `auth`. `P` is
 * what its authenticators resolve: the application's `Principal` unless they say otherwise.
 */
export interface AuthOptions<P = Principal> {
  /** Tried in order; the first that finds credentials of its kind decides. */
  authenticators: ReadonlyArray<Authenticator<P>>
  /**
   * What identifies a principal for a throttle's budget (`member.id`); without it a throttle
   * counts by the client's address.
   */
  principalId?: (principal: P) => string | number
}

/**
 * The authentication of an application once configured: its options and what every 401 carries.
 * Its principals are the request's (`request.principal`), whatever type the options gave them.
 */
export interface AppAuth extends AuthOptions<unknown> {
  /** Every authenticator's challenge, for the `WWW-Authenticate` of a 401. */
  readonly challenges: string
  /**
   * Resolves `request.principal`: what the first hook of every view route does. Synchronous while
   * the authenticators are, a promise once one of them answers with one.
   */
  readonly authenticate: (request: FastifyRequest) => MaybePromise<void>
  /** The options it was configured with. */
  readonly options: object
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
export function configureAuth<P> (app: FastifyInstance, options: AuthOptions<P>): AppAuth {
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
  // Stored as the request holds principals: each function is only ever called with what its own authenticators resolved.
  const stored = options as unknown as AuthOptions<unknown>
  const auth: AppAuth = { ...stored, options, challenges, authenticate: principalOf(stored.authenticators, challenges) }
  // Not enumerable, not writable: a context inside may define its own, which shadows it.
  Object.defineProperty(app, APP_AUTH, { value: auth })
  if (!app.hasRequestDecorator('principal')) app.decorateRequest('principal', null)
  // Every 401 of the application carries the challenges (RFC 9110 §15.5.2: a 401 MUST send one),
  // a dependency's or a route's of its own too: a status test per answer, a header only on a 401.
  // A callback hook: an async one would cost every response of the application a promise.
  app.addHook('onSend', function challenge (_request, reply, payload, done) {
    if (reply.statusCode === 401 && !reply.hasHeader('www-authenticate')) reply.header('www-authenticate', challenges)
    done(null, payload)
  })
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

/**
 * What sets `request.principal`: the first authenticator that finds credentials decides; none,
 * anonymous. No promise is made while the authenticators answer synchronously (an API key's map).
 */
function principalOf (authenticators: ReadonlyArray<Authenticator<unknown>>, challenges: string): AppAuth['authenticate'] {
  /** Whether `principal`, found by `authenticator`, decides the request's (`undefined`: no credentials of its kind). */
  const decides = (request: FastifyRequest, authenticator: Authenticator<unknown>, principal: unknown): boolean => {
    if (principal === undefined) return false
    // An authenticator that resolved credentials to nobody refuses them rather than letting the request through anonymous.
    if (principal === null) throw unauthorized(challenges, 'The credentials name nobody.')
    request.principal = principal as Principal // what the application's authenticators resolve is its principal
    if (authenticator.scopesOf !== undefined) GRANTED_SCOPES.set(request, authenticator.scopesOf(principal, request))
    return true
  }
  const from = (request: FastifyRequest, first: number): MaybePromise<void> => {
    for (let index = first; index < authenticators.length; index++) {
      const authenticator = authenticators[index]
      const found = authenticator.authenticate(request)
      if (isThenable(found)) {
        const next = index + 1
        return Promise.resolve(found).then((principal) => {
          if (!decides(request, authenticator, principal)) return from(request, next)
        })
      }
      if (decides(request, authenticator, found)) return
    }
    request.principal = null
  }
  return (request) => from(request, 0)
}

/** How many field lines of `name` (lower case) the request has: Node joins or drops repeated ones in `headers`. */
export function fieldLines (request: FastifyRequest, name: string): number {
  const raw = request.raw.rawHeaders
  let count = 0
  for (let i = 0; i < raw.length; i += 2) {
    if (raw[i].length === name.length && raw[i].toLowerCase() === name) count++
  }
  return count
}

/**
 * A scheme name the API description can hold (OpenAPI's component names) and a realm the
 * challenge can quote as it is (RFC 9110 §5.6.4 `qdtext`, no quote or backslash to escape).
 */
export function checkNames (what: string, scheme: string, realm: string): void {
  if (!/^[A-Za-z0-9._-]+$/.test(scheme)) {
    throw new ConfigurationError('FV_ERR_AUTH', `fastify-views: ${what}'s scheme ${JSON.stringify(scheme)} is not a name an API description can hold (letters, digits, ., _, -)`)
  }
  if (!/^[\x20\x21\x23-\x5B\x5D-\x7E]*$/.test(realm)) {
    throw new ConfigurationError('FV_ERR_AUTH', `fastify-views: ${what}'s realm ${JSON.stringify(realm)} holds a quote, a backslash or a character outside visible ASCII`)
  }
}
