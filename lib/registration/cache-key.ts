// What a cached answer is keyed by (registration layer): the route, its validated parameters and query in
// one canonical form, who asks and the headers the answer varies on, hashed to a key of fixed length.
import { createHash } from 'node:crypto'
import type { FastifyRequest } from 'fastify'
import { GRANTED_SCOPES } from '../access/permission.js'
import { ruleOf } from '../access/access-rule.js'

/**
 * JSON with every object's keys sorted: `?b=2&a=1` and `?a=1&b=2` are one request. Strings are kept
 * as sent (`é` composed and decomposed are two requests, as the database compares them).
 */
export function canonical (value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (typeof value === 'object' && value !== null && !(value instanceof Date)) {
    const record = value as Record<string, unknown> // a plain object: the parsed query, params or body
    const keys = Object.keys(record).filter((key) => record[key] !== undefined).sort()
    return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(record[key])}`).join(',')}}`
  }
  return JSON.stringify(value) ?? 'null'
}

/**
 * Who asks, as a key's part: nobody, or the principal's id and the scopes its credentials grant;
 * `undefined` when the request's answer is its own and is not cached at all.
 */
export type Asker = (request: FastifyRequest) => string | undefined

/** Who asks, where every request's answer may be kept: never `undefined`. */
export type PrincipalAsker = (request: FastifyRequest) => string

/** Everyone is one asker: an application without authentication. */
export const ANYONE: PrincipalAsker = () => ''

/**
 * Everyone is one asker, for a view whose answers are `shared`, except a request its permissions
 * narrow to the principal's objects (a scope, an object rule): its answer is not anyone else's.
 */
export const SHARED: Asker = (request) => ruleOf(request) === undefined ? '' : undefined

/**
 * Each principal is its own asker (by `auth.principalId`), with the scopes its credentials grant (a
 * token with fewer scopes may see less), and an anonymous request another.
 */
export function askerOf (principalId: (principal: unknown) => string | number): PrincipalAsker {
  return (request) => {
    const principal = request.principal
    if (principal == null) return '-'
    const scopes = GRANTED_SCOPES.get(request)
    const id = JSON.stringify(String(principalId(principal)))
    return scopes === undefined || scopes.length === 0 ? id : `${id}${canonical([...scopes].sort())}`
  }
}

/** A hash of the request's parts, of fixed length: what the store keys the answer by. */
export function hashKey (...parts: readonly string[]): string {
  const hash = createHash('sha256')
  for (const part of parts) hash.update(part).update('\n')
  return hash.digest('base64url')
}

/** The values of the headers an answer varies on, as a key's part (a header sent twice is its list). */
export function varyPart (request: FastifyRequest, names: readonly string[]): string {
  if (names.length === 0) return ''
  return canonical(names.map((name) => request.headers[name] ?? null))
}
