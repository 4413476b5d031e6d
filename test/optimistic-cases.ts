import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'

type Method = 'PUT' | 'PATCH' | 'DELETE'

/**
 * K clients send the same conditional write with one ETag at once, round after round: exactly
 * one may succeed (RFC 9110 §13.1.1), the others get 412 (or, once a DELETE has won, the 404 of
 * a resource that is gone), nothing answers 5xx, and the row is the winner's. With several
 * apps (instances over one database) the clients are spread over them.
 */
export async function raceConditionalWrites (
  t: Test,
  apps: FastifyInstance[],
  { clients = 16, rounds = 4 } = {}
): Promise<void> {
  const app = apps[0]
  for (const method of ['PUT', 'PATCH', 'DELETE'] as Method[]) {
    let exactlyOne = 0
    const failures: string[] = []
    for (let round = 0; round < rounds; round++) {
      const created = await app.inject({ method: 'POST', url: '/items', payload: { name: `item ${method} ${round}`, price: 1 } })
      const id = created.json<{ id: number }>().id
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
const nextSecond = async (): Promise<void> => {
  await new Promise(
    (resolve) => setTimeout(resolve, 1000 - (Date.now() % 1000) + 5)
  )
}

/**
 * K clients each read the item's `Last-Modified` and send the same write with it as
 * `If-Unmodified-Since` at once, round after round, over the example API (a touch column stamps
 * every write). A date cannot tell two changes within one second apart, so at most one client may
 * win a round: the others get 412 (or, once a DELETE has won, 404), nothing answers 5xx, and the
 * row is the winner's. Half the rounds write within the second the item was created (no client may
 * win: its last change is too recent to compare), half wait for the next second (exactly one wins).
 */
export async function raceUnmodifiedSince (
  t: Test,
  apps: FastifyInstance[],
  { clients = 16, rounds = 4 } = {}
): Promise<void> {
  const app = apps[0]
  for (const method of ['PUT', 'PATCH', 'DELETE'] as Method[]) {
    const failures: string[] = []
    const winners: number[] = []
    for (let round = 0; round < rounds; round++) {
      const waited = round % 2 === 1
      const created = await app.inject({ method: 'POST', url: '/items', payload: { name: `item ${method} ${round}`, price: 1 } })
      const id = created.json<{ id: number }>().id
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

/** A route hook for the instance that writes: awaits `between` once, after the precondition check (preValidation) and before the write. */
export interface CheckWriteGap {
  hook: (
    request: unknown,
    reply: unknown
  ) => Promise<void>,
  between: (() => Promise<unknown>) | undefined
}

export function checkWriteGap (): CheckWriteGap {
  const gap: CheckWriteGap = {
    between: undefined,
    hook: async () => {
      const between = gap.between
      gap.between = undefined
      if (between !== undefined) await between()
    }
  }
  return gap
}

/**
 * The precondition of a write is evaluated again in the repository, in the same atomic step as
 * the write: a change another instance makes between `one`'s check and `one`'s write still fails
 * it. `If-None-Match: *` asks to write only a resource that does not exist (RFC 9110 §13.1.2):
 * `one` checks it (no row yet, so the precondition is ignored), then instance `two` creates that
 * row, and `one`'s write must answer 412. `If-Unmodified-Since` with the date of a row last
 * changed long ago (`insertOld` stores one): `one` checks it, `two` changes the row, and `one`'s
 * write must answer 412. Either way the row stays as `two` left it. Both instances serve `/items`
 * with `{ id, name, price }` creates over one database, with a touch column; `one` has `gap.hook`
 * as a `preHandler`.
 */
export async function changeBetweenCheckAndWrite (t: Test, one: FastifyInstance, two: FastifyInstance,
  gap: CheckWriteGap,
  insertOld: (id: number, name: string) => Promise<void>, firstId = 7001): Promise<void> {
  const failures: string[] = []
  for (const [i, method] of (['PUT', 'PATCH', 'DELETE'] as Method[]).entries()) {
    // Names are unique in the table: each write names its row.
    const payload = (id: number) => method === 'PUT' ? { name: `one's ${id}`, price: 2 } : method === 'PATCH' ? { name: `one's ${id}` } : undefined
    const write = (id: number, headers: Record<string, string>) => one.inject({ method, url: `/items/${id}`, headers, ...(method === 'DELETE' ? {} : { payload: payload(id) }) })
    const expectTwos = async (id: number, name: string, what: string) => {
      const after = await two.inject(`/items/${id}`)
      if (after.statusCode !== 200 || after.json().name !== name) failures.push(`${what}: the row is now ${after.statusCode} ${after.body}, expected the other instance's`)
    }

    const created = firstId + 2 * i
    const none = { 'if-none-match': '*' }
    const missing = await write(created, none)
    if (missing.statusCode !== 404) failures.push(`${method} If-None-Match: * with no row and no race answered ${missing.statusCode}, expected the action's 404`)
    let status = 0
    gap.between = async () => { status = (await two.inject({ method: 'POST', url: '/items', payload: { id: created, name: `two's ${created}`, price: 1 } })).statusCode }
    const raced = await write(created, none)
    if (status !== 201) failures.push(`${method}: the other instance's create answered ${status}`)
    if (raced.statusCode !== 412) failures.push(`${method} If-None-Match: * of a row created after its check answered ${raced.statusCode} ${raced.body}, expected 412`)
    await expectTwos(created, `two's ${created}`, `${method} If-None-Match: *`)

    const old = created + 1
    await insertOld(old, `old ${old}`)
    const date = (await one.inject(`/items/${old}`)).headers['last-modified'] as string
    gap.between = async () => { status = (await two.inject({ method: 'PATCH', url: `/items/${old}`, payload: { name: `two's ${old}` } })).statusCode }
    const stale = await write(old, { 'if-unmodified-since': date })
    if (status !== 200) failures.push(`${method}: the other instance's change answered ${status}`)
    if (stale.statusCode !== 412) failures.push(`${method} If-Unmodified-Since of a row changed after its check answered ${stale.statusCode} ${stale.body}, expected 412`)
    await expectTwos(old, `two's ${old}`, `${method} If-Unmodified-Since`)
  }
  t.same(failures, [], 'a write whose precondition held at the check but not at the write changes nothing')
}
