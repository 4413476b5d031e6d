// JWT bearer authentication (access layer): `jwtAuth`, an authenticator over the application's @fastify/jwt.
import type { FastifyInstance, FastifyRequest } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import { checkNames, fieldLines, invalidCredentials, type Authenticator } from './authenticator.js'
import type { Principal } from './principal.js'

/** The options of `jwtAuth`. `Payload` is what the application's tokens carry, once verified. */
export interface JwtAuthOptions<Payload = Record<string, unknown>> {
  /**
   * The application's principal for a verified token's payload (the member its `sub` names, read
   * from the store). `null` or `undefined` (what `Map.get` and `Array.find` answer) when it names
   * nobody, a deleted member: the request is refused, a 401, never let through anonymous.
   */
  principal: (payload: Payload, request: FastifyRequest) => MaybePromise<Principal | null | undefined>
  /** The security scheme's name in the API description: `bearerAuth` unless told. */
  scheme?: string
  /** The protection space of the challenge (RFC 9110 §11.5): `api` unless told. */
  realm?: string
  /**
   * The claim that holds the granted scopes: `scope` unless told, a space-separated string (RFC
   * 8693 §4.2, RFC 9068 §2.2.3) or an array of strings (as some issuers send `scp`).
   */
  scopeClaim?: string
  /** The longest token looked at, in characters: 8192 unless told. A longer one is refused unread. */
  maxTokenLength?: number
}

/** What @fastify/jwt adds to a request: the verification of its `Authorization: Bearer` token. */
interface JwtRequest extends FastifyRequest { jwtVerify: () => Promise<unknown> }

const hasJwtVerify = (request: FastifyRequest): request is JwtRequest =>
  typeof (request as { jwtVerify?: unknown }).jwtVerify === 'function'

/** The `Bearer` scheme, compared without case (RFC 9110 §11.1), and not the start of a longer name. */
const BEARER = /^bearer(?![!#$%&'*+\-.^_`|~0-9a-z])/i

/**
 * RFC 6750 §2.1's `b64token`, after `Bearer` and one space: RFC 6750 allows more, but clients send
 * one and @fastify/jwt reads one (it answers more with a 400 of its own), so more are refused here.
 */
const B64TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/

/**
 * Who may see @fastify/jwt's failure: its codes (`FST_JWT_*`, fast-jwt's `FAST_JWT_*`) say what is
 * wrong with a token, except these, which say what is wrong with the server (its options or keys);
 * those stay 500s rather than become the client's fault.
 */
const SERVER_FAILURES: ReadonlySet<string> = new Set([
  'FAST_JWT_INVALID_OPTION', 'FAST_JWT_MISSING_KEY', 'FAST_JWT_KEY_FETCHING_ERROR', 'FAST_JWT_SIGN_ERROR'
])

const tokenFailure = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code
  if (typeof code !== 'string' || SERVER_FAILURES.has(code)) return undefined
  return code.startsWith('FST_JWT_') || code.startsWith('FAST_JWT_') ? code : undefined
}

/**
 * The detail of a refused token: which of the three things a client can do something about (renew,
 * wait, sign in again), and never fast-jwt's own message, which names the check that failed.
 */
const detailOf = (code: string): string =>
  code === 'FST_JWT_AUTHORIZATION_TOKEN_EXPIRED' || code === 'FAST_JWT_EXPIRED'
    ? 'The access token has expired.'
    : code === 'FAST_JWT_INACTIVE' ? 'The access token is not valid yet.' : 'The access token is invalid.'

/**
 * An authenticator of JWT bearer tokens (RFC 6750, RFC 7519), verified by the application's own
 * @fastify/jwt: the application registers it with its secret or keys and its verification rules
 * (`verify: { algorithms, allowedIss, allowedAud, requiredClaims: ['iss', 'aud'] }`: fast-jwt checks
 * an issuer or an audience only when the token has one), `jwtAuth` reads the `Authorization: Bearer`
 * header, calls `request.jwtVerify()` and maps the payload to the principal.
 *
 * No `Authorization` header, or another scheme than `Bearer` (RFC 9110 §11.1: compared without
 * case), is no credentials of its kind: the next authenticator, or anonymity. A bearer token that is
 * empty, longer than `maxTokenLength`, sent twice, not a `b64token`, malformed, unsigned, expired or
 * not yet valid, of the wrong algorithm or signature, issuer or audience, or naming nobody is a 401
 * with `error="invalid_token"` (RFC 6750 §3.1) and a detail that names none of the checks.
 *
 * Algorithms: fast-jwt (under @fastify/jwt) infers the accepted algorithms from the key when none are
 * pinned (an HMAC secret: HS256/384/512; an RSA public key: RS and PS; an EC key: its ES curve), and
 * refuses `alg: none` whenever it has a key, so neither `none` nor a token signed with HMAC over
 * a public key (the HS/RS confusion) passes. Pin `verify: { algorithms }` to the ones the issuer uses,
 * never an HS algorithm with a PEM key: fast-jwt then takes the PEM text for the HMAC secret, and
 * anyone who has the public key can sign tokens (test/auth-backends.test.ts shows both).
 *
 * ```ts
 * await app.register(fastifyJwt, {
 *   secret: { public: issuerKey },
 *   verify: { algorithms: ['RS256'], allowedIss: 'https://id.example', requiredClaims: ['iss'] }
 * })
 * configureApp(app, { auth: { authenticators: [jwtAuth({ principal: (payload) => members.find(payload.sub) })] } })
 * ```
 */
export function jwtAuth<Payload = Record<string, unknown>> (options: JwtAuthOptions<Payload>): Authenticator {
  const { principal, scheme = 'bearerAuth', realm = 'api', scopeClaim = 'scope', maxTokenLength = 8192 } = options
  if (typeof principal !== 'function') {
    throw new ConfigurationError('FV_ERR_AUTH', 'fastify-views: jwtAuth needs principal, the function that maps a token\'s payload to the principal')
  }
  checkNames('jwtAuth', scheme, realm)
  const challenge = `Bearer realm="${realm}"`
  const refuse = (detail: string) => invalidCredentials(challenge, detail)
  // The scopes of the token that authenticated a request, for scopesOf, which sees only the principal.
  const scopes = new WeakMap<FastifyRequest, readonly string[]>()
  const checked = new WeakSet<FastifyInstance>()

  return {
    scheme,
    securityScheme: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
    challenge,
    async authenticate (request) {
      const header = request.headers.authorization
      if (header === undefined || !BEARER.test(header)) return undefined
      // Node keeps the first of two Authorization lines and drops the other: a proxy may have read the other one.
      if (fieldLines(request, 'authorization') > 1) throw refuse('The Authorization header is sent more than once.')
      const token = header.slice(7)
      if (header[6] !== ' ' || token.length > maxTokenLength || !B64TOKEN.test(token)) throw refuse('The access token is invalid.')
      if (!hasJwtVerify(request)) throw missingJwt()
      if (!checked.has(request.server)) {
        checkJwt(request.server)
        checked.add(request.server)
      }
      let payload: Payload
      try {
        // What @fastify/jwt verified is what the application's tokens carry: its issuer signed it.
        payload = await request.jwtVerify() as Payload
      } catch (error) {
        const code = tokenFailure(error)
        if (code === undefined) throw error
        throw refuse(detailOf(code))
      }
      const resolved = await principal(payload, request)
      if (resolved === null || resolved === undefined) throw refuse('The access token names nobody.')
      scopes.set(request, scopesIn(payload, scopeClaim))
      return resolved
    },
    // Asked right after authenticate resolved the request's principal, which kept its token's scopes.
    scopesOf: (_principal, request) => scopes.get(request) as readonly string[]
  }
}

/** The scopes a payload grants: the claim split on spaces (RFC 6749 §3.3), or its strings; none otherwise. */
function scopesIn (payload: unknown, claim: string): readonly string[] {
  const value = (payload as Record<string, unknown>)[claim] // what @fastify/jwt verified: a JSON object (RFC 7519 §7.2)
  if (typeof value === 'string') return value.split(' ').filter((scope) => scope !== '')
  if (Array.isArray(value)) return value.filter((scope): scope is string => typeof scope === 'string' && scope !== '')
  return []
}

const missingJwt = (): ConfigurationError => new ConfigurationError('FV_ERR_AUTH',
  'fastify-views: jwtAuth verifies tokens with @fastify/jwt, which this application has not registered; ' +
  'register it (its secret or keys, its verify options) before the routes')

/**
 * Once per application, at its first bearer token: @fastify/jwt reads the token `jwtAuth` read.
 * Its `extractToken` or `onlyCookie` would have it verify another one.
 */
function checkJwt (app: FastifyInstance): void {
  // @fastify/jwt is registered (jwtVerify is there) and keeps its verify options, a default object when given none.
  const verify = (app as unknown as { jwt: { options: { verify: Record<string, unknown> } } }).jwt.options.verify
  if (verify.extractToken !== undefined || verify.onlyCookie === true) {
    throw new ConfigurationError('FV_ERR_AUTH', 'fastify-views: jwtAuth reads the token of the Authorization header, and @fastify/jwt is ' +
      'told to read another (verify.extractToken or verify.onlyCookie); remove that option, or authenticate with an authenticator of your own')
  }
}
