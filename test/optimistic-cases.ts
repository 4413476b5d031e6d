import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'

type Method = 'PUT' | 'PATCH' | 'DELETE'

/**
 * K clients send the same conditional write with one ETag at once, round after round: exactly
 * one may succeed (RFC 9110 §13.1.1), the others get 412 (or, once a DELETE has won, the 404 of
 * a resource that is gone), nothing answers 5xx, and the row is the winner's. With several
 * apps (instances over one database) the clients are spread over them.
 */
export async function raceConditionalWrites (t: Test, apps: FastifyInstance[], { clients = 16, rounds = 4 } = {}): Promise<void> {
  const app = apps[0]
  for (const method of ['PUT', 'PATCH', 'DELETE'] as Method[]) {
    let exactlyOne = 0
    const failures: string[] = []
    for (let round = 0; round < rounds; round++) {
      const created = await app.inject({ method: 'POST', url: '/items', payload: { name: `item ${method} ${round}`, price: 1 } })
      const id = (created.json() as { id: number }).id
      const read = await app.inject(`/items/${id}`)
      const etag = read.headers.etag as string
      const answers = await Promise.all(Array.from({ length: clients }, async (_, i) => {
        const payload = method === 'PUT' ? { name: `put ${round} ${i}`, price: i } : method === 'PATCH' ? { name: `patch ${round} ${i}` } : undefined
        const res = await apps[i % apps.length].inject({ method, url: `/items/${id}`, headers: { 'if-match': etag }, ...(payload === undefined ? {} : { payload }) })
        return { i, res, payload }
      }))
      const winners = answers.filter((a) => a.res.statusCode < 300)
      const losers = answers.filter((a) => a.res.statusCode >= 300)
      if (winners.length === 1) exactlyOne++
      else failures.push(`round ${round}: ${winners.length} successes`)
      for (const { res } of losers) {
        const allowed = method === 'DELETE' ? [412, 404] : [412]
        if (!allowed.includes(res.statusCode)) failures.push(`round ${round}: a loser answered ${res.statusCode} ${res.body}`)
      }
      const after = await app.inject(`/items/${id}`)
      if (method === 'DELETE') {
        if (after.statusCode !== 404) failures.push(`round ${round}: the row survived its delete`)
      } else if (winners.length === 1) {
        const expected = winners[0].payload as { name: string }
        if (after.json().name !== expected.name) failures.push(`round ${round}: the row is ${after.json().name}, the winner sent ${expected.name}`)
        if (winners[0].res.headers.etag !== after.headers.etag) failures.push(`round ${round}: the winner's ETag differs from the next GET's`)
      }
    }
    t.same(failures, [], `${method}: ${exactlyOne} of ${rounds} rounds had exactly one of ${clients} concurrent conditional writes succeed`)
  }
}

/** Resolves at the start of the next wall-clock second. */
const nextSecond = async (): Promise<void> => { await new Promise((resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5)) }

/**
 * K clients each read the item's `Last-Modified` and send the same write with it as
 * `If-Unmodified-Since` at once, round after round, over the example API (a touch column stamps
 * every write). A date cannot tell two changes within one second apart, so at most one client may
 * win a round: the others get 412 (or, once a DELETE has won, 404), nothing answers 5xx, and the
 * row is the winner's. Half the rounds write within the second the item was created (no client may
 * win: its last change is too recent to compare), half wait for the next second (exactly one wins).
 */
export async function raceUnmodifiedSince (t: Test, apps: FastifyInstance[], { clients = 16, rounds = 4 } = {}): Promise<void> {
  const app = apps[0]
  for (const method of ['PUT', 'PATCH', 'DELETE'] as Method[]) {
    const failures: string[] = []
    const winners: number[] = []
    for (let round = 0; round < rounds; round++) {
      const waited = round % 2 === 1
      const created = await app.inject({ method: 'POST', url: '/items', payload: { name: `item ${method} ${round}`, price: 1 } })
      const id = (created.json() as { id: number }).id
      if (waited) await nextSecond()
      const dates = await Promise.all(Array.from({ length: clients }, async (_, i) => (await apps[i % apps.length].inject(`/items/${id}`)).headers['last-modified'] as string))
      const answers = await Promise.all(dates.map(async (date, i) => {
        const payload = method === 'PUT' ? { name: `put ${round} ${i}`, price: i } : method === 'PATCH' ? { name: `patch ${round} ${i}` } : undefined
        const res = await apps[i % apps.length].inject({ method, url: `/items/${id}`, headers: { 'if-unmodified-since': date }, ...(payload === undefined ? {} : { payload }) })
        return { res, payload }
      }))
      const won = answers.filter((a) => a.res.statusCode < 300)
      winners.push(won.length)
      if (won.length > 1) failures.push(`round ${round}: ${won.length} successes`)
      if (waited && won.length !== 1) failures.push(`round ${round}, a second after the last change: ${won.length} successes, expected one`)
      for (const { res } of answers.filter((a) => a.res.statusCode >= 300)) {
        if (!(method === 'DELETE' ? [412, 404] : [412]).includes(res.statusCode)) failures.push(`round ${round}: a loser answered ${res.statusCode} ${res.body}`)
      }
      const after = await app.inject(`/items/${id}`)
      if (method === 'DELETE') {
        if ((after.statusCode === 404) !== (won.length === 1)) failures.push(`round ${round}: ${won.length} deletes won and the row answers ${after.statusCode}`)
      } else {
        const expected = won.length === 1 ? (won[0].payload as { name: string }).name : `item ${method} ${round}`
        if (after.json().name !== expected) failures.push(`round ${round}: the row is ${after.json().name}, expected ${expected}`)
      }
    }
    t.same(failures, [], `${method}: successes per round of ${clients} concurrent writes with one If-Unmodified-Since: ${winners.join(', ')}`)
  }
}
