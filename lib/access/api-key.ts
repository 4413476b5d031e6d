// API key authentication (access layer): `apiKeyAuth`, an authenticator of a key sent in a header of its own.
import type { FastifyRequest } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import { checkNames, fieldLines, invalidCredentials, type Authenticator } from './authenticator.js'
import type { Principal } from './principal.js'

/** The options of `apiKeyAuth`. */
export interface ApiKeyAuthOptions {
  /**
   * The principal a key names, `null` or `undefined` (what `Map.get` answers) for none: a 401.
   * It gets a key of visible ASCII, at most `maxKeyLength` long, and nothing else. Store keys
   * hashed and look up the hash, so neither a leaked table nor the time a comparison takes gives a
   * key away:
   *
   * ```ts
   * const sha256 = (key: string) => createHash('sha256').update(key).digest('hex')
   * const clients = new Map([[sha256(process.env.REPORTING_KEY), reportingService]]) // or a column of hashes
   * apiKeyAuth({ lookup: (key) => clients.get(sha256(key)) })
   * // One key: compare the digests, which have one length, with timingSafeEqual.
   * const expected = createHash('sha256').update(process.env.API_KEY).digest()
   * apiKeyAuth({ lookup: (key) => timingSafeEqual(createHash('sha256').update(key).digest(), expected) ? service : null })
   * ```
   */
  lookup: (key: string, request: FastifyRequest) => MaybePromise<Principal | null | undefined>
  /** The header that carries the key: `x-api-key` unless told. */
  header?: string
  /** The security scheme's name in the API description: `apiKeyAuth` unless told. */
  scheme?: string
  /** The protection space of the challenge (RFC 9110 §11.5): `api` unless told. */
  realm?: string
  /** The longest key looked up, in characters: 256 unless told. A longer one is refused unread. */
  maxKeyLength?: number
  /** The scopes a principal it resolved was granted, for `hasScope`; none unless told. */
  scopesOf?: (principal: Principal, request: FastifyRequest) => readonly string[]
}

/** RFC 9110 §5.6.2 `token`: what a field name is made of. */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/
/** A key is visible ASCII (RFC 5234 `VCHAR`): no space, so two keys Node joined with ", " are no key. */
const VCHARS = /^[\x21-\x7E]+$/

/**
 * An authenticator of API keys sent in a header of their own (`X-API-Key: <key>`), documented as an
 * OpenAPI `apiKey` scheme. No such header is no credentials of its kind: the next authenticator, or
 * anonymity. A key that is empty, longer than `maxKeyLength`, not visible ASCII, sent twice, or that
 * `lookup` knows nothing of is a 401, refused before `lookup` for all but the last.
 *
 * The challenge: no authentication scheme is registered for API keys (RFC 9110 §16.4.1 lists none),
 * and a 401 must still carry one (RFC 9110 §15.5.2). It is `ApiKey realm="api", header="x-api-key"`,
 * an `auth-scheme` with its parameters (RFC 9110 §11.6.1) that tells the client where to send the
 * key, and a refused key adds `error="invalid_token"`, RFC 6750 §3.1's code, a key being a token
 * the client holds.
 */
export function apiKeyAuth (options: ApiKeyAuthOptions): Authenticator {
  const { lookup, scheme = 'apiKeyAuth', realm = 'api', maxKeyLength = 256, scopesOf } = options
  const header = (options.header ?? 'x-api-key').toLowerCase()
  if (typeof lookup !== 'function') {
    throw new ConfigurationError('FV_ERR_AUTH', 'fastify-views: apiKeyAuth needs lookup, the function that finds the principal a key names')
  }
  if (!TOKEN.test(header)) {
    throw new ConfigurationError('FV_ERR_AUTH', `fastify-views: apiKeyAuth's header ${JSON.stringify(options.header)} is not a header name`)
  }
  checkNames('apiKeyAuth', scheme, realm)
  const challenge = `ApiKey realm="${realm}", header="${header}"`
  const refuse = (detail: string) => invalidCredentials(challenge, detail)

  return {
    scheme,
    securityScheme: { type: 'apiKey', in: 'header', name: header },
    challenge,
    async authenticate (request) {
      const value = request.headers[header]
      if (value === undefined) return undefined
      // Node joins repeated lines of most headers with ", " and drops those of some: count them in the raw ones.
      if (typeof value !== 'string' || fieldLines(request, header) > 1) throw refuse(`The ${header} header is sent more than once.`)
      if (value.length > maxKeyLength || !VCHARS.test(value)) throw refuse('The API key is invalid.')
      const principal = await lookup(value, request)
      if (principal === null || principal === undefined) throw refuse('The API key is invalid.')
      return principal
    },
    ...scopesOf === undefined ? {} : { scopesOf }
  }
}
