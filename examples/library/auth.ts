// Who is asking, for the lending library's views: the member whose id the `x-member-id` header
// carries, as four dependencies (docs/routing.md, "Dependencies") that document their 401 and 403.
import type { FastifyRequest } from 'fastify'
import type { Dependency } from 'fastify-views/types'
import { Forbidden, Unauthorized } from 'fastify-views/errors'
import type { Member } from './schemas.js'
import type { LibraryStore } from './store.js'

/** The largest key the tables hold (a 32-bit integer): a larger id names nobody. */
const MAX_ID = 2147483647

/**
 * Who is asking: the member whose id the `x-member-id` header carries. Trivial (a real library
 * would check a session or a token), but real: an unknown member is a 401, and the views read
 * the member from here.
 */
export class MemberAuth {
  readonly #known = new WeakMap<FastifyRequest, Member | null>()
  readonly #members: LibraryStore['members']

  constructor (members: LibraryStore['members']) { this.#members = members }

  /** Every route: learns the member of a request that names one; a header naming nobody is a 401. */
  readonly identify: Dependency = {
    onRequest: async (request) => { await this.#identify(request) },
    errors: [Unauthorized]
  }

  /** Routes for members only: a request without a member is a 401. */
  readonly required: Dependency = {
    onRequest: async (request) => {
      if (await this.#identify(request) === null) throw new Unauthorized('Sign in: send your member id in the x-member-id header.')
    },
    errors: [Unauthorized],
    security: [{ memberId: [] }]
  }

  /** Changes to the catalogue: librarians only (after `required`). */
  readonly librarian: Dependency = {
    onRequest: (request) => {
      if (this.#known.get(request)?.librarian !== true) throw new Forbidden('Only librarians may change the catalogue.')
    },
    errors: [Forbidden]
  }

  /** A loan is created by the member it is for (`/members/:memberId/loans`), after validation. */
  readonly borrower: Dependency = {
    preHandler: (request) => {
      const params: unknown = request.params
      const memberId = typeof params === 'object' && params !== null && 'memberId' in params ? params.memberId : undefined
      if (memberId !== this.member(request).id) throw new Forbidden('Members borrow books for themselves only.')
    },
    errors: [Forbidden]
  }

  async #identify (request: FastifyRequest): Promise<Member | null> {
    const known = this.#known.get(request)
    if (known !== undefined) return known
    const header = request.headers['x-member-id']
    let member: Member | null = null
    if (header !== undefined) {
      const id = typeof header === 'string' && /^[1-9][0-9]{0,9}$/.test(header) ? Number(header) : 0
      member = id >= 1 && id <= MAX_ID ? await this.#members.get({ id }) : null
      if (member === null) throw new Unauthorized('The x-member-id header names no member.')
    }
    this.#known.set(request, member)
    return member
  }

  /** The member asking, if any (on a route with `identify`). */
  reader (request: FastifyRequest): Member | undefined {
    return this.#known.get(request) ?? undefined
  }

  /** The member asking, on a route with `required`. */
  member (request: FastifyRequest): Member {
    const member = this.#known.get(request)
    if (member == null) throw new Unauthorized('Sign in: send your member id in the x-member-id header.')
    return member
  }
}
