import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'

const JSON_PATCH = 'application/json-patch+json'
const MERGE_PATCH = 'application/merge-patch+json'

/** One hostile patch: its media type, its body (built when sent), and the pointer its refusal names. */
export interface PatchAttack { name: string, type: string, body: () => string, pointer: RegExp }

const ops = (list: unknown[]): string => JSON.stringify(list)
const repeat = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i))
/** `[[[...]]]` nested `n` deep, written as text: building it as a value would be the attack. */
const nested = (n: number): string => '['.repeat(n) + ']'.repeat(n)
const MiB = 1024 * 1024

/**
 * Patches of a kilobyte or a few megabytes that, applied naively, build gigabytes, take seconds, or
 * overflow the stack. Each is refused with a 400 problem pointing into the patch.
 */
export const PATCH_ATTACKS: PatchAttack[] = [
  {
    name: 'a 998-byte copy chain: 24 copies of what the copy before made',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: [0] }, ...repeat(24, () => ({ op: 'copy', from: '/a', path: '/a/-' }))]),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'the same chain, 60 copies',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: [0] }, ...repeat(60, () => ({ op: 'copy', from: '/a', path: '/a/-' }))]),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'the whole document copied into itself, over and over',
    type: JSON_PATCH,
    body: () => ops(repeat(40, (i) => ({ op: 'copy', from: '', path: `/c${i}` }))),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'a 1 MiB string copied to 999 new members',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/s', value: 'x'.repeat(MiB) }, ...repeat(999, (i) => ({ op: 'copy', from: '/s', path: `/c${i}` }))]),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'more operations than allowed: 100,000 inserts at the front of an array',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: [] }, ...repeat(100_000, () => ({ op: 'add', path: '/a/0', value: 0 }))]),
    pointer: /^#$/
  },
  {
    name: '999 inserts at the front of an array of 200,000 elements',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: repeat(200_000, () => 0) }, ...repeat(999, () => ({ op: 'add', path: '/a/0', value: 0 }))]),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'a large array moved back and forth',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: repeat(100_000, () => [0]) }, ...repeat(999, (i) => i % 2 === 0 ? { op: 'move', from: '/a', path: '/b' } : { op: 'move', from: '/b', path: '/a' })]),
    pointer: /^#\/\d+\/path$/
  },
  {
    name: 'a large value tested again and again',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: repeat(50_000, () => [0]) }, ...repeat(999, () => ({ op: 'test', path: '/a', value: repeat(100, () => [0]) }))]),
    pointer: /^#\/\d+\/value$/
  },
  {
    name: 'a huge array index',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: [] }, { op: 'add', path: '/a/99999999999999999999999999', value: 1 }]),
    pointer: /^#\/1\/path$/
  },
  {
    name: 'a path of 200,000 tokens',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a'.repeat(200_000), value: 1 }]),
    pointer: /^#\/0\/path$/
  },
  {
    name: 'a value nested 10,000 deep',
    type: JSON_PATCH,
    body: () => `[{"op":"add","path":"/a","value":${nested(10_000)}}]`,
    pointer: /^#\/0\/value(\/0)+$/
  },
  {
    name: 'a test value nested 10,000 deep',
    type: JSON_PATCH,
    body: () => `[{"op":"test","path":"/name","value":${nested(10_000)}}]`,
    pointer: /^#\/0\/value(\/0)+$/
  },
  {
    name: 'a value within the depth moved where it nests too deep',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: JSON.parse(nested(124)) as unknown }, { op: 'add', path: '/b', value: { x: { x: { x: { x: {} } } } } },
      { op: 'move', from: '/a', path: '/b/x/x/x/x/a' }]),
    pointer: /^#\/2\/path$/
  },
  {
    name: 'a value within the depth copied where it nests too deep',
    type: JSON_PATCH,
    body: () => ops([{ op: 'add', path: '/a', value: JSON.parse(nested(124)) as unknown }, { op: 'add', path: '/b', value: { x: { x: { x: { x: {} } } } } },
      { op: 'copy', from: '/a', path: '/b/x/x/x/x/a' }]),
    pointer: /^#\/2\/path$/
  },
  {
    name: 'a merge patch nested 10,000 deep',
    type: MERGE_PATCH,
    body: () => `{"name":${nested(10_000)}}`,
    pointer: /^#\/name(\/0)+$/
  },
  {
    name: 'a merge patch of objects nested 100,000 deep',
    type: MERGE_PATCH,
    body: () => '{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000),
    pointer: /^#(\/a)+$/
  }
]

/** What the store holds for the item the attacks target. */
async function snapshot (app: FastifyInstance, url: string): Promise<string> {
  const res = await app.inject(url)
  return `${res.statusCode} ${res.body}`
}

/**
 * Sends every attack as a PATCH of `url`: each must answer a 400 problem whose error points into
 * the patch, change nothing, and leave the server answering `/health` at once. The time of each
 * is printed; the bound asserted is generous (what matters is that nothing takes seconds).
 */
export async function sendPatchAttacks (t: Test, app: FastifyInstance, url: string, health = '/health'): Promise<void> {
  const before = await snapshot(app, url)
  const times: string[] = []
  for (const attack of PATCH_ATTACKS) {
    const payload = attack.body()
    const started = performance.now()
    const res = await app.inject({ method: 'PATCH', url, headers: { 'content-type': attack.type }, payload })
    const took = performance.now() - started
    times.push(`${attack.name}: ${Math.round(took)} ms`)
    const body = res.json<{ errors?: Array<{ pointer?: string, detail?: string }>, detail?: string }>()
    t.equal(res.statusCode, 400, `${attack.name}: 400 (${body.errors?.[0]?.detail ?? body.detail})`)
    t.match(res.headers['content-type'], /^application\/problem\+json/, `${attack.name}: a problem`)
    t.match(body.errors?.[0]?.pointer, attack.pointer, `${attack.name}: its error points into the patch`)
    t.notMatch(res.body, /call stack|heap|RangeError/i, `${attack.name}: no internal message`)
    // Generous, for a busy machine: what matters is that no attack takes seconds (benchmarks/hostile.ts has the figures).
    t.ok(took < 3000, `${attack.name}: answered in ${Math.round(took)} ms`)
    const probe = performance.now()
    t.equal((await app.inject(health)).statusCode, 200, `${attack.name}: ${health} answers afterwards`)
    t.ok(performance.now() - probe < 500, `${attack.name}: at once`)
  }
  t.equal(await snapshot(app, url), before, 'nothing was written')
  t.comment(times.join('\n'))
}
