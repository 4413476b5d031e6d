// Who is asking, for the lending library: the member the `x-member-id` header names, resolved by an
// authenticator (docs/permissions.md), and the rules the views list, one line each.
import { invalidCredentials, permission, type Authenticator } from 'fastify-views/access'
import type { LoanRow, Member } from './schemas.js'
import type { LibraryStore } from './store.js'

declare module 'fastify-views/access' {
  interface PrincipalTypes { principal: Member }
}

/** The largest key the tables hold (a 32-bit integer): a larger id names nobody. */
const MAX_ID = 2147483647

// No scheme is registered for a key in a header of its own; the challenge says where to send it, as apiKeyAuth's does.
const CHALLENGE = 'ApiKey realm="library", header="x-member-id"'

/**
 * The member whose id the `x-member-id` header carries. Trivial (a real library would check a
 * session or a token), but real: no header is an anonymous request, and a header that is no id,
 * or names nobody, is a 401 rather than anonymity.
 */
export function memberAuth (members: LibraryStore['members']): Authenticator {
  return {
    scheme: 'memberId',
    securityScheme: { type: 'apiKey', in: 'header', name: 'x-member-id', description: 'The id of the member asking.' },
    challenge: CHALLENGE,
    async authenticate (request) {
      const header = request.headers['x-member-id']
      if (header === undefined) return undefined
      const id = typeof header === 'string' && /^[1-9][0-9]{0,9}$/.test(header) ? Number(header) : 0
      // A deleted member names nobody any more.
      const member = id >= 1 && id <= MAX_ID ? await members.get({ id, deleted_at: null }) : null
      if (member === null) throw invalidCredentials(CHALLENGE, 'The x-member-id header names no member.')
      return member
    }
  }
}

/** Librarians keep the catalogue, and see every member's record and loans. */
export const IsLibrarian = permission({ name: 'IsLibrarian', request: (member) => member.librarian, message: 'Only librarians may change the catalogue.' })

/** A member's own record. */
export const IsSelf = permission<Member>({ name: 'IsSelf', scope: (member) => ({ id: member.id }) })

/** A member's own loans: listed, read, renewed, returned and made for themselves only. */
export const IsBorrower = permission<LoanRow>({ name: 'IsBorrower', scope: (member) => ({ member_id: member.id }), message: 'Members borrow books for themselves only.' })
