import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type LightMyRequestResponse } from 'fastify'
import fastifyJwt, { type FastifyJWTOptions } from '@fastify/jwt'
import { createHash, createHmac, generateKeyPairSync, sign, timingSafeEqual } from 'node:crypto'
import views, { APIView, Get } from '../lib/index.js'
// From their modules, whichever entry point exports them.
import { jwtAuth } from '../lib/access/jwt.js'
import { apiKeyAuth } from '../lib/access/api-key.js'
import { hasScope } from '../lib/access/permission.js'
import type { Authenticator } from '../lib/access/authenticator.js'
import type { Principal } from '../lib/access/principal.js'
import { problem } from './helpers.js'

/**
 * The authenticators through HTTP: `jwtAuth` over the application's @fastify/jwt (HS256 and RS256)
 * and `apiKeyAuth`. Good credentials name a principal, none leave the request anonymous, and every
 * hostile token or key is a 401 problem with its challenge and `error="invalid_token"`, never a 500.
 */

const SECRET = 'a-secret-of-thirty-two-bytes-or-more-0123'
const pair = () => generateKeyPairSync('rsa', {
  modulusLength: 2048,
  publicKeyEncoding: { type: 'spki', format: 'pem' },
  privateKeyEncoding: { type: 'pkcs8', format: 'pem' }
})
const RSA = pair()
const OTHER_RSA = pair()

/** The tests' principals are plain records, whatever principal an application of the program declares (examples/). */
const asPrincipal = (record: { id: number, name: string }): Principal => record as Principal
const MEMBERS = new Map([['ada', asPrincipal({ id: 1, name: 'ada' })], ['bob', asPrincipal({ id: 2, name: 'bob' })]])
const now = () => Math.floor(Date.now() / 1000)

// Tokens made by hand, so that none depends on the signer of the library under test.
const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url')
const hs256 = (secret: string, payload: unknown, header: object = { alg: 'HS256', typ: 'JWT' }): string => {
  const input = `${b64url(header)}.${b64url(payload)}`
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`
}
const rs256 = (privateKey: string, payload: unknown): string => {
  const input = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url(payload)}`
  return `${input}.${sign('sha256', Buffer.from(input), privateKey).toString('base64url')}`
}
const unsigned = (payload: unknown): string => `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(payload)}.`
/** A token whose payload is replaced and whose signature is kept. */
const tampered = (token: string, payload: unknown): string => {
  const [header, , signature] = token.split('.')
  return `${header}.${b64url(payload)}.${signature}`
}

/** Who the request is, and the scopes its authenticator granted: what the tests look at. */
const AUTHENTICATORS = new WeakMap<FastifyInstance, Authenticator[]>()
class Me extends APIView {
  @Get('/')
  me () {
    const scopes = AUTHENTICATORS.get(this.request.server)?.map((one) =>
      this.principal === null ? [] : one.scopesOf?.(this.principal, this.request) ?? [])
    return { principal: this.principal, scopes }
  }
}

class Reports extends APIView {
  static override permissions = [hasScope('reports:read')]
  @Get('/')
  list () { return [{ id: 1 }] }
}

/**
 * An application with @fastify/jwt registered as `jwt` says (none when undefined), and `authenticators`;
 * its error log lines go to `logs` when given.
 */
async function appWith (
  jwt: FastifyJWTOptions | undefined,
  authenticators: Authenticator[],
  logs?: string[]
): Promise<FastifyInstance> {
  const logger = logs === undefined ? false : { level: 'error', stream: { write: (line: string) => { logs.push(line) } } }
  const app = Fastify({ logger })
  if (jwt !== undefined) await app.register(fastifyJwt, jwt)
  await app.register(views, {
    views: [{ view: Me, prefix: '/me' }, { view: Reports, prefix: '/reports' }],
    auth: { authenticators }
  })
  AUTHENTICATORS.set(app, authenticators)
  await app.ready()
  return app
}

const member = (payload: { sub?: unknown }) => typeof payload.sub === 'string' ? MEMBERS.get(payload.sub) : undefined

const me = (app: FastifyInstance, headers: Record<string, string | string[]> = {}) => app.inject({ url: '/me', headers })

/** A 401 problem refusing credentials with `challenge` and RFC 6750's `invalid_token`. */
function refused (t: Test, res: LightMyRequestResponse, challenge: string, detail?: string): void {
  const body = problem(t, res, 401)
  t.equal(res.headers['www-authenticate'], `${challenge}, error="invalid_token"`)
  if (detail !== undefined) t.equal(body.detail, detail)
}

const BEARER = 'Bearer realm="api"'

/** Every token below is refused by both applications; `good` is one each accepts. */
function hostileBearers (good: string, key: string): Array<[string, string | string[]]> {
  const payload = { sub: 'ada', iat: now() }
  return [
    ['expired', `Bearer ${hs256(key, { sub: 'ada', exp: now() - 60 })}`],
    ['not yet valid', `Bearer ${hs256(key, { sub: 'ada', nbf: now() + 3600 })}`],
    ['payload swapped under its signature', `Bearer ${tampered(good, { sub: 'bob', iat: now() })}`],
    ['signature cut short', `Bearer ${good.slice(0, good.lastIndexOf('.') + 5)}`],
    ['alg none, unsigned', `Bearer ${unsigned(payload)}`],
    ['alg none, with a signature', `Bearer ${unsigned(payload)}c2lnbmF0dXJl`],
    ['signed with another secret', `Bearer ${hs256('another-secret-of-thirty-two-bytes-0123', payload)}`],
    ['no dots', 'Bearer abcdef'],
    ['three empty parts', 'Bearer ..'],
    ['a header that is no JSON', `Bearer ${Buffer.from('{not json').toString('base64url')}.${b64url(payload)}.c2ln`],
    ['an array for payload', `Bearer ${hs256(key, ['ada'])}`],
    ['an unknown critical header', `Bearer ${hs256(key, payload, { alg: 'HS256', crit: ['exp-ext'], 'exp-ext': 1 })}`],
    ['empty bearer', 'Bearer'],
    ['empty bearer, one space', 'Bearer '],
    ['two spaces', `Bearer  ${good}`],
    ['a tab for the space', `Bearer\t${good}`],
    ['a tab after the space', `Bearer \t${good}`],
    ['a 10 KB token', `Bearer ${hs256(key, { sub: 'ada', pad: 'x'.repeat(10_000) })}`],
    ['unicode', `Bearer ${good.slice(0, 20)}ťoken€${good.slice(20)}`],
    ['a space inside', `Bearer ${good.slice(0, 20)} ${good.slice(20)}`],
    ['sent twice', [`Bearer ${good}`, `Bearer ${good}`]],
    ['sent twice, the second another', [`Bearer ${good}`, 'Bearer other']]
  ]
}

test('jwtAuth, HS256: a good token names its principal, none is anonymous, a hostile one is a 401', async (t) => {
  const app = await appWith({ secret: SECRET }, [jwtAuth({ principal: member })])
  t.teardown(() => app.close())
  const good = hs256(SECRET, { sub: 'ada', iat: now() })

  const signedIn = await me(app, { authorization: `Bearer ${good}` })
  t.equal(signedIn.statusCode, 200)
  t.same(signedIn.json().principal, { id: 1, name: 'ada' })
  const signedBySelf = await me(app, { authorization: `Bearer ${app.jwt.sign({ sub: 'bob' })}` })
  t.same(signedBySelf.json().principal, { id: 2, name: 'bob' }, 'a token of @fastify/jwt\'s own signer')
  t.same((await me(app, { authorization: `bEaReR ${good}` })).json().principal, { id: 1, name: 'ada' },
    'the scheme is compared without case (RFC 9110 §11.1)')

  t.same((await me(app)).json().principal, null, 'no Authorization: anonymous')
  t.same((await me(app, { authorization: 'Basic YWRhOnNlY3JldA==' })).json().principal, null,
    'another scheme is not its kind: anonymous')
  t.same((await me(app, { authorization: 'Bearerish abc' })).json().principal, null, 'a scheme that starts like Bearer is another')

  for (const [name, authorization] of hostileBearers(good, SECRET)) {
    const res = await me(app, { authorization })
    t.test(name, async (t) => refused(t, res, BEARER))
  }
  refused(t, await me(app, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', exp: now() - 60 })}` }), BEARER,
    'The access token has expired.')
  refused(t, await me(app, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', nbf: now() + 60 })}` }), BEARER,
    'The access token is not valid yet.')
  const forged = await me(app, { authorization: `Bearer ${unsigned({ sub: 'ada' })}c2ln` })
  refused(t, forged, BEARER, 'The access token is invalid.')
  t.notMatch(forged.body, /algorithm|signature|fast|jwt/i, 'the detail names none of the checks')

  refused(t, await me(app, { authorization: `Bearer ${hs256(SECRET, { sub: 'carol' })}` }), BEARER, 'The access token names nobody.')
  const nobody = await me(app, { authorization: `Bearer ${hs256(SECRET, { iat: now() })}` })
  refused(t, nobody, BEARER, 'The access token names nobody.')
})

test('jwtAuth, RS256: the HS/RS confusion, a token of another key and alg none are 401s', async (t) => {
  const keys = { private: RSA.privateKey, public: RSA.publicKey }
  const app = await appWith({ secret: keys }, [jwtAuth({ principal: member })])
  t.teardown(() => app.close())
  const good = rs256(RSA.privateKey, { sub: 'ada', iat: now() })
  t.same((await me(app, { authorization: `Bearer ${good}` })).json().principal, { id: 1, name: 'ada' })
  t.same((await me(app, { authorization: `Bearer ${app.jwt.sign({ sub: 'bob' })}` })).json().principal, { id: 2, name: 'bob' })
  t.same((await me(app)).json().principal, null)

  // HS256 with the public key (which anyone may have) as the HMAC secret: fast-jwt accepts only the
  // algorithms of the key it has, RS and PS for an RSA public key.
  refused(t, await me(app, { authorization: `Bearer ${hs256(RSA.publicKey, { sub: 'ada', iat: now() })}` }), BEARER,
    'The access token is invalid.')
  refused(t, await me(app, { authorization: `Bearer ${rs256(OTHER_RSA.privateKey, { sub: 'ada', iat: now() })}` }), BEARER)
  refused(t, await me(app, { authorization: `Bearer ${rs256(RSA.privateKey, { sub: 'ada', exp: now() - 1 })}` }), BEARER,
    'The access token has expired.')
  for (const [name, authorization] of hostileBearers(good, RSA.publicKey)) {
    const res = await me(app, { authorization })
    t.test(name, async (t) => refused(t, res, BEARER))
  }
})

test('jwtAuth with algorithms pinned: mixing families keeps the confusion out, a required issuer and audience are checked', async (t) => {
  const app = await appWith({
    secret: { private: RSA.privateKey, public: RSA.publicKey },
    verify: { algorithms: ['HS256', 'RS256'], allowedIss: 'https://id.example', allowedAud: 'shop', requiredClaims: ['iss', 'aud'] }
  }, [jwtAuth({ principal: member, realm: 'shop' })])
  t.teardown(() => app.close())
  const challenge = 'Bearer realm="shop"'
  const claims = { sub: 'ada', iss: 'https://id.example', aud: 'shop' }
  t.same((await me(app, { authorization: `Bearer ${rs256(RSA.privateKey, claims)}` })).json().principal, { id: 1, name: 'ada' })
  // HS256 is allowed, but an HMAC over a public key object is no signature fast-jwt checks true.
  refused(t, await me(app, { authorization: `Bearer ${hs256(RSA.publicKey, claims)}` }), challenge)
  refused(t, await me(app, { authorization: `Bearer ${rs256(RSA.privateKey, { ...claims, iss: 'https://evil.example' })}` }), challenge,
    'The access token is invalid.')
  refused(t, await me(app, { authorization: `Bearer ${rs256(RSA.privateKey, { ...claims, aud: 'other' })}` }), challenge)
  refused(t, await me(app, { authorization: `Bearer ${rs256(RSA.privateKey, { sub: 'ada', aud: 'shop' })}` }), challenge,
    'The access token is invalid.')
})

test('what fast-jwt does by itself, which jwtAuth relies on and documents', async (t) => {
  // The raw failures of @fastify/jwt: some carry no status, and would be 500s without jwtAuth's mapping.
  const raw = Fastify({ logger: false })
  await raw.register(fastifyJwt, { secret: { private: RSA.privateKey, public: RSA.publicKey } })
  raw.get('/', async (request) => {
    try { return { payload: await request.jwtVerify() } } catch (error) {
      const { code, statusCode } = error as { code: string, statusCode?: number }
      return { code, statusCode: statusCode ?? null }
    }
  })
  t.teardown(() => raw.close())
  const verify = async (token: string) => (await raw.inject({ url: '/', headers: { authorization: `Bearer ${token}` } })).json()
  t.same(await verify(unsigned({ sub: 'ada' })), { code: 'FAST_JWT_MISSING_SIGNATURE', statusCode: 401 }, 'alg none, unsigned')
  t.same(await verify(`${unsigned({ sub: 'ada' })}c2ln`), { code: 'FAST_JWT_INVALID_ALGORITHM', statusCode: null },
    'alg none with a signature: refused, but with no status')
  t.same(await verify(hs256(RSA.publicKey, { sub: 'ada' })), { code: 'FAST_JWT_INVALID_ALGORITHM', statusCode: null },
    'HS256 over the RSA public key: refused, the algorithms are those of the key')

  // The one confusion fast-jwt cannot see: the application pins HS256 with a PEM key, which fast-jwt
  // then takes for an HMAC secret. jwtAuth's documentation warns of it; anyone with the public key signs.
  const pinned = await appWith({ secret: { public: RSA.publicKey }, verify: { algorithms: ['HS256'] } }, [jwtAuth({ principal: member })])
  t.teardown(() => pinned.close())
  const forged = await me(pinned, { authorization: `Bearer ${hs256(RSA.publicKey, { sub: 'ada' })}` })
  t.same(forged.json().principal, { id: 1, name: 'ada' }, 'a misconfiguration accepts a forged token: pin no HS algorithm with a PEM key')

  // allowedIss and allowedAud check the claims a token has: one without them passes, unless required.
  const unrequired = await appWith({ secret: { public: RSA.publicKey }, verify: { allowedIss: 'https://id.example' } },
    [jwtAuth({ principal: member })])
  t.teardown(() => unrequired.close())
  const noIssuer = await me(unrequired, { authorization: `Bearer ${rs256(RSA.privateKey, { sub: 'ada' })}` })
  t.same(noIssuer.json().principal, { id: 1, name: 'ada' }, 'a token without iss passes allowedIss: add requiredClaims')
})

test('jwtAuth: the granted scopes come from the scope claim, a string or an array', async (t) => {
  const authenticators = [jwtAuth({ principal: member })]
  const app = await appWith({ secret: SECRET }, authenticators)
  t.teardown(() => app.close())
  const scopesFor = async (claims: object) => (await me(app, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', ...claims })}` })).json().scopes
  t.same(await scopesFor({ scope: 'reports:read  items:write' }), [['reports:read', 'items:write']], 'space-separated (RFC 8693 §4.2)')
  t.same(await scopesFor({ scope: ['reports:read', 7, '', 'items:write'] }), [['reports:read', 'items:write']], 'an array: its strings')
  t.same(await scopesFor({}), [[]], 'no claim: no scopes')
  t.same(await scopesFor({ scope: { read: true } }), [[]], 'a claim of another shape: no scopes')

  const reports = async (claims: object) =>
    await app.inject({ url: '/reports', headers: { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', ...claims })}` } })
  t.equal((await reports({ scope: 'reports:read' })).statusCode, 200, 'hasScope passes with the scope')
  problem(t, await reports({ scope: 'items:read' }), 403)
  const anonymous = await app.inject('/reports')
  problem(t, anonymous, 401)
  t.equal(anonymous.headers['www-authenticate'], BEARER, 'an anonymous 401 carries the challenge, without an error')

  const scp = await appWith({ secret: SECRET }, [jwtAuth({ principal: member, scopeClaim: 'scp' })])
  t.teardown(() => scp.close())
  const res = await me(scp, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', scp: ['a', 'b'], scope: 'c' })}` })
  t.same(res.json().scopes, [['a', 'b']], 'scopeClaim names another claim')
})

test('jwtAuth: its options, its bound, and the applications it cannot work with', async (t) => {
  const auth = jwtAuth({ principal: member, scheme: 'memberToken', realm: 'shop' })
  t.equal(auth.scheme, 'memberToken')
  t.same(auth.securityScheme, { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' })
  t.equal(auth.challenge, 'Bearer realm="shop"')
  t.equal(jwtAuth({ principal: member }).scheme, 'bearerAuth')
  t.throws(() => jwtAuth({ principal: member, realm: 'a"b' }), { code: 'FV_ERR_AUTH' }, 'a realm the challenge cannot quote')
  t.throws(() => jwtAuth({ principal: member, scheme: 'bearer auth' }), { code: 'FV_ERR_AUTH' })
  t.throws(() => jwtAuth({} as never), { code: 'FV_ERR_AUTH' }, 'no principal')

  const large = await appWith({ secret: SECRET }, [jwtAuth({ principal: member, maxTokenLength: 16_384 })])
  t.teardown(() => large.close())
  const tenKB = hs256(SECRET, { sub: 'ada', pad: 'x'.repeat(10_000) })
  t.same((await me(large, { authorization: `Bearer ${tenKB}` })).json().principal, { id: 1, name: 'ada' },
    'the 10 KB token is refused for its length alone: a larger bound accepts it')

  const logs: string[] = []
  const withoutJwt = await appWith(undefined, [jwtAuth({ principal: member })], logs)
  t.teardown(() => withoutJwt.close())
  t.same((await me(withoutJwt)).json().principal, null, 'without @fastify/jwt, a request with no token still passes')
  problem(t, await me(withoutJwt, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada' })}` }), 500)
  t.match(logs.join(''), /has not registered.*"code":"FV_ERR_AUTH"/, 'the log says what to do')

  // A key that cannot be had (the key store is down) is the server's failure, not the client's: a 500, not a 401.
  const keyless = await appWith({ secret: async () => { throw new Error('the key store is down') } }, [jwtAuth({ principal: member })])
  t.teardown(() => keyless.close())
  problem(t, await me(keyless, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada' })}` }), 500)
  // So is a failure of the key store's own, with a code of its own.
  const failing = async () => { throw Object.assign(new Error('the vault is sealed'), { code: 'EVAULT' }) }
  const sealed = await appWith({ secret: failing }, [jwtAuth({ principal: member })])
  t.teardown(() => sealed.close())
  const refused = problem(t, await me(sealed, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada' })}` }), 500)
  t.notMatch(JSON.stringify(refused), /vault/, 'nothing of the failure is sent')

  logs.length = 0
  const cookieOnly = await appWith({ secret: SECRET, verify: { onlyCookie: true } }, [jwtAuth({ principal: member })],
    logs)
  t.teardown(() => cookieOnly.close())
  problem(t, await me(cookieOnly, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada' })}` }), 500)
  t.match(logs.join(''), /onlyCookie.*"code":"FV_ERR_AUTH"/, 'jwtAuth would read one token and @fastify/jwt verify another')
})

test('apiKeyAuth: a known key names its principal, none is anonymous, a hostile one is refused before lookup', async (t) => {
  // The keys stored hashed, and compared as digests: the lookup apiKeyAuth's documentation shows.
  const sha256 = (key: string) => createHash('sha256').update(key).digest('hex')
  const clients = new Map([[sha256('k-reporting-0123456789'), asPrincipal({ id: 10, name: 'reporting' })]])
  const looked: string[] = []
  const challenge = 'ApiKey realm="api", header="x-api-key"'
  const app = await appWith(undefined, [apiKeyAuth({
    lookup: (key) => {
      looked.push(key)
      return clients.get(sha256(key))
    }
  })])
  t.teardown(() => app.close())

  t.same((await me(app, { 'x-api-key': 'k-reporting-0123456789' })).json().principal, { id: 10, name: 'reporting' })
  t.same((await me(app)).json().principal, null, 'no key: anonymous')
  t.same((await me(app, { authorization: 'Bearer abc' })).json().principal, null, 'a bearer token is not its kind')
  refused(t, await me(app, { 'x-api-key': 'k-unknown' }), challenge, 'The API key is invalid.')
  t.same(looked, ['k-reporting-0123456789', 'k-unknown'])

  looked.length = 0
  const hostile: Array<[string, string | string[]]> = [
    ['empty', ''],
    ['257 characters', 'k'.repeat(257)],
    ['10 KB', 'k'.repeat(10_000)],
    ['a space inside', 'k-reporting 0123456789'],
    ['unicode', 'k-reportíng-0123456789'],
    ['a control character', 'k-reporting\u0001'],
    ['sent twice', ['k-reporting-0123456789', 'k-reporting-0123456789']],
    ['sent twice, the second another', ['k-reporting-0123456789', 'k-other']]
  ]
  for (const [name, key] of hostile) {
    const res = await me(app, { 'x-api-key': key })
    t.test(name, async (t) => refused(t, res, challenge))
  }
  t.same(looked, [], 'lookup never saw a hostile key')
})

test('apiKeyAuth: its options, a single key compared in constant time, and two authenticators together', async (t) => {
  const expected = createHash('sha256').update('the-one-key').digest()
  const service = asPrincipal({ id: 20, name: 'billing' })
  const keyAuth = apiKeyAuth({
    header: 'X-Service-Key',
    scheme: 'serviceKey',
    realm: 'billing',
    maxKeyLength: 32,
    lookup: (key) => timingSafeEqual(createHash('sha256').update(key).digest(), expected) ? service : null,
    scopesOf: () => ['billing:read']
  })
  t.equal(keyAuth.scheme, 'serviceKey')
  t.same(keyAuth.securityScheme, { type: 'apiKey', in: 'header', name: 'x-service-key' })
  t.equal(keyAuth.challenge, 'ApiKey realm="billing", header="x-service-key"')
  t.equal(apiKeyAuth({ lookup: () => null }).scheme, 'apiKeyAuth')
  t.throws(() => apiKeyAuth({ lookup: () => null, header: 'x key' }), { code: 'FV_ERR_AUTH' }, 'a header that is no field name')
  t.throws(() => apiKeyAuth({ lookup: () => null, realm: 'a\\b' }), { code: 'FV_ERR_AUTH' })
  t.throws(() => apiKeyAuth({} as never), { code: 'FV_ERR_AUTH' }, 'no lookup')

  const authenticators = [jwtAuth({ principal: member }), keyAuth]
  const app = await appWith({ secret: SECRET }, authenticators)
  t.teardown(() => app.close())
  const byKey = (await me(app, { 'x-service-key': 'the-one-key' })).json()
  t.same(byKey, { principal: service, scopes: [[], ['billing:read']] }, 'the key names its principal, scopesOf its scopes')
  const byToken = (await me(app, { authorization: `Bearer ${hs256(SECRET, { sub: 'ada', scope: 'x' })}` })).json()
  t.same(byToken, { principal: { id: 1, name: 'ada' }, scopes: [['x'], ['billing:read']] })
  refused(t, await me(app, { 'x-service-key': 'the-one-key-but-not' }), 'ApiKey realm="billing", header="x-service-key"')
  refused(t, await me(app, { 'x-service-key': 'k'.repeat(33) }), 'ApiKey realm="billing", header="x-service-key"')
  // The first authenticator that finds credentials of its kind decides: a bad token is not excused by a good key.
  refused(t, await me(app, { authorization: 'Bearer a.b.c', 'x-service-key': 'the-one-key' }), BEARER)
  const anonymous = await app.inject('/reports')
  t.equal(anonymous.headers['www-authenticate'], `${BEARER}, ApiKey realm="billing", header="x-service-key"`,
    'a 401 challenges with both')
})
