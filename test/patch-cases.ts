import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'

const MERGE = { 'content-type': 'application/merge-patch+json' }
const JSON_PATCH = { 'content-type': 'application/json-patch+json' }
const ACCEPT_PATCH = 'application/json, application/merge-patch+json, application/json-patch+json'

interface Row { id: number, name: string, price: number, updated_at: string }

/**
 * The three PATCH formats through HTTP on the example API's items (`{ id, name, price,
 * updated_at }` over a real store): what each applies, what each refuses with a pointer into
 * the patch, that a refused patch writes nothing, and that concurrent `test` + `replace`
 * patches have exactly one winner, also across several instances over one database.
 */
export async function patchOverHttp (
  t: Test,
  apps: FastifyInstance[],
  { clients = 12, rounds = 3 } = {}
): Promise<void> {
  const app = apps[0]
  const create = async (name: string, price: number): Promise<Row> =>
    (await app.inject({ method: 'POST', url: '/items', payload: { name, price } })).json<Row>()
  const read = async (id: number): Promise<Row> => (await app.inject(`/items/${id}`)).json<Row>()
  const patch = async (id: number, headers: Record<string, string>, payload: string, on = app) =>
    await on.inject({ method: 'PATCH', url: `/items/${id}`, headers, payload })

  const item = await create('lamp', 5)
  let res = await patch(item.id, JSON_PATCH, JSON.stringify([{ op: 'test', path: '/price', value: 5 }, { op: 'replace', path: '/price', value: 8 }]))
  t.equal(res.statusCode, 200, 'JSON Patch: test then replace')
  t.equal(res.json().price, 8)
  t.equal(res.headers['accept-patch'], ACCEPT_PATCH, 'Accept-Patch on the answer')
  t.equal((await read(item.id)).price, 8, 'written')

  res = await patch(item.id, MERGE, JSON.stringify({ name: 'desk lamp' }))
  t.equal(res.statusCode, 200, 'merge patch')
  t.same([res.json().name, res.json().price], ['desk lamp', 8], 'only the member sent changes')

  // Every RFC 6902 operation, as the item's shape allows them.
  const operations: Array<[string, unknown[], Partial<Row>]> = [
    ['add (an existing member is replaced)', [{ op: 'add', path: '/name', value: 'lamp' }], { name: 'lamp' }],
    ['remove then add', [{ op: 'remove', path: '/price' }, { op: 'add', path: '/price', value: 7 }], { price: 7 }],
    ['copy', [{ op: 'copy', from: '/name', path: '/name' }, { op: 'test', path: '/name', value: 'lamp' }], { name: 'lamp' }],
    ['move onto itself', [{ op: 'move', from: '/price', path: '/price' }], { price: 7 }],
    ['replace and test', [{ op: 'replace', path: '/name', value: 'desk lamp' }, { op: 'test', path: '/name', value: 'desk lamp' }], { name: 'desk lamp' }]
  ]
  for (const [what, ops, expected] of operations) {
    res = await patch(item.id, JSON_PATCH, JSON.stringify(ops))
    t.equal(res.statusCode, 200, what)
    t.match(await read(item.id), expected, `${what}: stored`)
  }

  res = await patch(item.id, { 'content-type': 'application/json' }, JSON.stringify({ price: 9 }))
  t.equal(res.statusCode, 200, 'the plain JSON body as before')

  const before = await read(item.id)
  const refusals: Array<[string, Record<string, string>, unknown, string]> = [
    ['a removed required member', MERGE, { price: null }, '#/price'],
    ['a wrong type', MERGE, { price: 'cheap' }, '#/price'],
    ['a failed test', JSON_PATCH, [{ op: 'test', path: '/price', value: 1 }, { op: 'replace', path: '/price', value: 2 }], '#/0/value'],
    ['a path outside the update schema', JSON_PATCH, [{ op: 'replace', path: '/name', value: 'x' }, { op: 'replace', path: '/updated_at', value: '2020-01-01T00:00:00.000Z' }], '#/1/path'],
    ['the server\'s id', JSON_PATCH, [{ op: 'replace', path: '/id', value: 99 }], '#/0/path'],
    ['a value the schema refuses', JSON_PATCH, [{ op: 'replace', path: '/price', value: -1 }], '#/0/path'],
    ['a missing member', JSON_PATCH, [{ op: 'remove', path: '/nothing' }], '#/0/path'],
    ['a prototype path', JSON_PATCH, [{ op: 'add', path: '/__proto__/polluted', value: true }], '#/0/path'],
    ['a constructor path', JSON_PATCH, [{ op: 'add', path: '/constructor/prototype/polluted', value: true }], '#/0/path'],
    ['an unknown op', JSON_PATCH, [{ op: 'increment', path: '/price' }], '#/0/op'],
    ['not a list', JSON_PATCH, { op: 'replace', path: '/price', value: 1 }, '#'],
    ['not an object', MERGE, [1, 2], '#']
  ]
  for (const [what, headers, body, pointer] of refusals) {
    res = await patch(item.id, headers, JSON.stringify(body))
    t.equal(res.statusCode, 400, `${what}: 400`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${what}: a problem`)
    t.equal(res.json().errors?.[0]?.pointer, pointer, `${what}: points at ${pointer}`)
  }
  t.same(await read(item.id), before, 'no refused patch wrote anything')
  t.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype untouched')

  res = await patch(item.id, MERGE, '{"__proto__": {"polluted": true}}')
  t.equal(res.statusCode, 400, 'a merge patch with __proto__ is refused by the parser')
  res = await patch(item.id, { 'content-type': 'text/plain' }, 'price=1')
  t.equal(res.statusCode, 415, 'another media type: 415')
  t.equal(res.headers['accept-patch'], ACCEPT_PATCH, 'naming the formats taken')
  t.equal((await patch(404404, JSON_PATCH, JSON.stringify([{ op: 'replace', path: '/price', value: 1 }]))).statusCode, 404, 'no such item: 404')

  // Concurrent test-and-set: every client tests the price it read and sets its own; every
  // other one also sends the ETag it read, as If-Match.
  let exactlyOne = 0
  const failures: string[] = []
  for (let round = 0; round < rounds; round++) {
    const row = await create(`race ${round}`, 100)
    const etag = (await app.inject(`/items/${row.id}`)).headers.etag as string
    const answers = await Promise.all(Array.from({ length: clients }, async (_, i) =>
      await patch(row.id, i % 2 === 0 ? JSON_PATCH : { ...JSON_PATCH, 'if-match': etag },
        JSON.stringify([{ op: 'test', path: '/price', value: 100 }, { op: 'replace', path: '/price', value: i }]), apps[i % apps.length])))
    const winners = answers.flatMap((r, i) => r.statusCode === 200 ? [i] : [])
    if (winners.length === 1) exactlyOne++
    else failures.push(`round ${round}: ${winners.length} successes`)
    for (const r of answers) {
      // A loser's test fails (400), its If-Match no longer matches (412), or the row changed between its read and its write (409).
      if (![200, 400, 409, 412].includes(r.statusCode)) failures.push(`round ${round}: ${r.statusCode} ${r.body}`)
    }
    const after = await read(row.id)
    if (winners.length === 1 && after.price !== winners[0]) failures.push(`round ${round}: price ${after.price}, the winner set ${winners[0]}`)
  }
  t.same(failures, [], 'no lost update, no 5xx')
  t.equal(exactlyOne, rounds, `exactly one winner in each of ${rounds} rounds of ${clients} clients`)

  // With If-Match: the stale ETag is a 412 whatever the patch says.
  const tagged = await app.inject(`/items/${item.id}`)
  await patch(item.id, MERGE, JSON.stringify({ price: 11 }))
  res = await patch(item.id, { ...JSON_PATCH, 'if-match': tagged.headers.etag as string }, JSON.stringify([{ op: 'replace', path: '/price', value: 12 }]))
  t.equal(res.statusCode, 412, 'a stale If-Match: 412')
  t.equal((await read(item.id)).price, 11, 'and nothing written')
}
