import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'

/** mulberry32: the same hostile requests (and long texts) on every run and every store. */
export function random (seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const KEYS = [
  'name', 'name__ne', 'name__in', 'name__like', 'price', 'price__gt', 'sort', 'q', 'page', 'page_size', 'offset', 'limit', 'cursor',
  'constructor', 'toString', 'valueOf', '__proto__', 'hasOwnProperty', 'isPrototypeOf', 'name__constructor', 'price__toString', 'unknown', ''
]
const VALUES = [
  '1', '0', '-1', '9007199254740991', '9007199254740993', '1e308', 'NaN', 'Infinity', '0x10', '1.5', '', ' ', 'lamp', '%', '%25', '_',
  "' OR 1=1 --", '"; DROP TABLE items; --', '\\', '\u0000', '🙂', 'a'.repeat(300), 'name', '-name', 'price', 'constructor', 'null', 'true',
  '[]', '{}', 'eyJkIjoibiJ9', '__proto__'
]

/**
 * Seeded hostile query strings against the example API's list and bulk routes: none may
 * answer 5xx, and every 4xx is a problem document.
 */
export async function hostileQueries (t: Test, app: FastifyInstance, count: number, seed = 7): Promise<void> {
  const next = random(seed)
  const pick = <T>(list: T[]): T => list[Math.floor(next() * list.length)]
  const statuses = new Map<number, number>()
  const failures: string[] = []
  for (let i = 0; i < count; i++) {
    const parts: string[] = []
    const n = 1 + Math.floor(next() * 3)
    for (let j = 0; j < n; j++) parts.push(`${encodeURIComponent(pick(KEYS))}=${encodeURIComponent(pick(VALUES))}`)
    const query = parts.join('&')
    // Bulk writes select by the same filter: PATCH with a valid body, DELETE with none; reads mostly.
    const kind = next()
    const request = kind < 0.8
      ? { method: 'GET' as const, url: `/items?${query}` }
      : kind < 0.9
        ? { method: 'PATCH' as const, url: `/items/bulk?${query}`, payload: { price: 1 } }
        : { method: 'DELETE' as const, url: `/items/bulk?${query}&name=__no_such_item__` }
    const res = await app.inject(request)
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
    if (res.statusCode >= 500) failures.push(`${request.method} ${request.url}: ${res.statusCode} ${res.body}`)
    else if (res.statusCode >= 400 && !String(res.headers['content-type']).startsWith('application/problem+json')) failures.push(`${request.method} ${request.url}: ${res.statusCode} not a problem`)
  }
  t.same(failures, [], `${count} hostile queries: no 5xx, every 4xx a problem (${[...statuses].map(([s, c]) => `${s}×${c}`).join(', ')})`)
}
