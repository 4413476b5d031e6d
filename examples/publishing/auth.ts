// Who is asking, for the publishing API's views: the user whose token the `Authorization: Token
// <token>` header carries, as two dependencies (docs/routing.md, "Dependencies") that document their 401.
import { createHash, randomBytes } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import type { Dependency } from 'fastify-views/types'
import { Unauthorized } from 'fastify-views/errors'
import type { UserRow } from './schemas.js'
import type { PublishingStore } from './store.js'

/** What the header holds: the word `Token`, a space, and the token a sign-up answered. */
const TOKEN_HEADER = /^Token ([A-Za-z0-9_-]{16,64})$/

/** The hash a token is kept as: the database never holds a token a client could send. */
export const tokenHash = (token: string): string => createHash('sha256').update(token).digest('hex')

/** A new user's token (sent once, in the sign-up's answer) and the hash the users table keeps. */
export function issueToken (): { token: string, hash: string } {
  const token = randomBytes(24).toString('base64url')
  return { token, hash: tokenHash(token) }
}

/** A 401, with the scheme the client should use (RFC 9110 §11.6.1). */
const unauthorized = (detail: string): Unauthorized => new Unauthorized(detail, { headers: { 'www-authenticate': 'Token' } })

/**
 * Who is asking: the user whose token `Authorization: Token <token>` carries, read once per
 * request. A header naming nobody is a 401 on every route; routes for users only refuse a request
 * without one.
 */
export class UserAuth {
  readonly #known = new WeakMap<FastifyRequest, UserRow | null>()
  readonly #users: PublishingStore['users']

  constructor (users: PublishingStore['users']) { this.#users = users }

  /** Every route: learns the user of a request that sends a token; a token of nobody is a 401. */
  readonly identify: Dependency = {
    onRequest: async (request) => { await this.#identify(request) },
    errors: [Unauthorized]
  }

  /** Routes for users only: a request without a token is a 401. */
  readonly required: Dependency = {
    onRequest: async (request) => {
      if (await this.#identify(request) === null) throw unauthorized('Sign in: send Authorization: Token <token>.')
    },
    errors: [Unauthorized],
    security: [{ token: [] }]
  }

  async #identify (request: FastifyRequest): Promise<UserRow | null> {
    const known = this.#known.get(request)
    if (known !== undefined) return known
    const header = request.headers.authorization
    let user: UserRow | null = null
    if (header !== undefined) {
      const token = TOKEN_HEADER.exec(header)?.[1]
      user = token === undefined ? null : await this.#users.get({ token_hash: tokenHash(token) })
      if (user === null) throw unauthorized('The Authorization header is not Token <token> of a user.')
    }
    this.#known.set(request, user)
    return user
  }

  /** The user asking, if any (every route has `identify`). */
  reader (request: FastifyRequest): UserRow | undefined {
    return this.#known.get(request) ?? undefined
  }

  /** The user asking, on a route with `required`. */
  user (request: FastifyRequest): UserRow {
    const user = this.#known.get(request)
    if (user == null) throw unauthorized('Sign in: send Authorization: Token <token>.')
    return user
  }
}
