import { test } from 'tap'
import { spawn } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { Type } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { AsyncGenericViewSet, asyncRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { applyJsonPatch } from '../lib/http/json-patch.js'
import { applyMergePatch } from '../lib/http/merge-patch.js'
import { DEFAULT_PATCH_LIMITS, PatchBudget, jsonSize, type PatchLimits } from '../lib/http/patch-budget.js'
import { buildApp, Health, Item, ItemIn } from '../examples/app.js'
import { StampingRepository, build, patchError, problem } from './helpers.js'
import { PATCH_ATTACKS, sendPatchAttacks } from './patch-attacks.js'

const limits = (over: Partial<PatchLimits>): PatchLimits => ({ ...DEFAULT_PATCH_LIMITS, ...over })
const nested = (n: number): unknown => JSON.parse('['.repeat(n) + ']'.repeat(n))

test('the number of operations: at most maxOperations, counted before anything applies', async (t) => {
  const three = [{ op: 'add', path: '/a', value: 1 }, { op: 'add', path: '/b', value: 2 }, { op: 'remove', path: '/a' }]
  t.same(applyJsonPatch({}, three, { limits: limits({ maxOperations: 3 }) }), { b: 2 }, 'exactly the maximum applies')
  t.same(patchError(() => applyJsonPatch({}, [...three, { op: 'nope' }], { limits: limits({ maxOperations: 3 }) })),
    { pointer: '#', message: 'A JSON Patch may hold at most 3 operations; this one holds 4' }, 'one more is refused, before the malformed one is read')
  t.equal(DEFAULT_PATCH_LIMITS.maxOperations, 1000)
})

test('depth: a value, a merge patch and the patched document nest at most maxDepth levels', async (t) => {
  const four = limits({ maxDepth: 4 })
  t.same(applyJsonPatch({}, [{ op: 'add', path: '/a', value: [[[1]]] }], { limits: four }), { a: [[[1]]] }, 'a value three deep under a member: four levels')
  t.same(patchError(() => applyJsonPatch({}, [{ op: 'add', path: '/a', value: [[[[1]]]] }], { limits: four })),
    { pointer: '#/0/path', message: 'The value at /a would make the document nest more than 4 levels deep' }, 'four deep under a member: five')
  t.same(patchError(() => applyJsonPatch({}, [{ op: 'add', path: '/a', value: { x: [{ y: [[1]] }] } }], { limits: four })),
    { pointer: '#/0/value/x/0/y/0', message: 'Values may nest at most 4 levels deep' }, 'a value deeper than any document may be: the first container too deep')
  t.same(patchError(() => applyJsonPatch({}, [{ op: 'replace', path: '', value: { a: 1 } }, { op: 'test', path: '/a', value: { 'b/c': [[[[1]]]] } }], { limits: four })),
    { pointer: '#/1/value/b~1c/0/0/0', message: 'Values may nest at most 4 levels deep' }, 'a test value too, before anything applies; names are escaped')
  t.same(patchError(() => applyJsonPatch({ a: 1 }, [{ op: 'replace', path: '/a', value: { x: [[1]], y: [] } }, { op: 'replace', path: '/a', value: { x: [[1]], y: [[[1]]] } }], { limits: four })),
    { pointer: '#/1/path', message: 'The value at /a would make the document nest more than 4 levels deep' }, 'a replacement too; the first fits')
  t.same(patchError(() => applyJsonPatch({}, [{ op: 'add', path: '/a', value: [{ x: [1], y: [] }, [2], [[[[3]]]]] }], { limits: four })),
    { pointer: '#/0/value/2/0/0/0', message: 'Values may nest at most 4 levels deep' }, 'the pointer names the first container too deep, past shallower siblings')
  t.same(applyJsonPatch({ a: [[1]] }, [{ op: 'copy', from: '/a', path: '/b' }, { op: 'move', from: '/b', path: '/c' }], { limits: four }), { a: [[1]], c: [[1]] })
  t.same(patchError(() => applyJsonPatch({ a: [[1]], b: { x: {} } }, [{ op: 'copy', from: '/a', path: '/b/x/a' }], { limits: four })),
    { pointer: '#/0/path', message: 'Values may nest at most 4 levels deep' }, 'a copy where it would nest too deep')
  t.same(patchError(() => applyJsonPatch({ a: [[1]], b: { x: {} } }, [{ op: 'move', from: '/a', path: '/b/x/a' }], { limits: four })),
    { pointer: '#/0/path', message: 'Values may nest at most 4 levels deep' }, 'a move too')
  t.same(patchError(() => applyJsonPatch({}, [{ op: 'add', path: '/a', value: nested(100_000) }])),
    { pointer: `#/0/value${'/0'.repeat(128)}`, message: 'Values may nest at most 128 levels deep' }, '100,000 deep: refused at the 129th level, without recursion')

  t.same(applyMergePatch({ a: 1 }, { b: { c: [[1]] } }, { limits: four }), { a: 1, b: { c: [[1]] } })
  t.same(patchError(() => applyMergePatch({ a: 1 }, { b: { c: [[[1]]] } }, { limits: four })),
    { pointer: '#/b/c/0/0', message: 'Values may nest at most 4 levels deep' }, 'a merge patch five deep')
  const deep = JSON.parse('{"a":'.repeat(100_000) + '1' + '}'.repeat(100_000)) as unknown
  t.same(patchError(() => applyMergePatch({}, deep)), { pointer: '#' + '/a'.repeat(128), message: 'Values may nest at most 128 levels deep' }, 'a merge patch 100,000 deep')
})

test('size: the patched document may not grow past maxSize characters, checked before anything is built', async (t) => {
  const document = { a: 'xxxx' }
  const size = jsonSize(document)
  t.equal(size, JSON.stringify(document).length + 1, 'a separator per member, one more than JSON writes')
  const scalars = { a: false, b: true, c: null, d: -1.5e-7, e: '', f: [] }
  t.equal(jsonSize(scalars), JSON.stringify(scalars).length + 1, 'every kind of value counted as JSON writes it')
  const small = limits({ maxSize: size + 9 })
  t.same(applyJsonPatch(document, [{ op: 'add', path: '/b', value: 'yy' }], { limits: small }), { a: 'xxxx', b: 'yy' }, 'growing to exactly the maximum')
  t.same(patchError(() => applyJsonPatch(document, [{ op: 'add', path: '/b', value: 'yyy' }], { limits: small })),
    { pointer: '#/0/path', message: `The patched document would be larger than ${size + 9} characters` }, 'one character more')
  t.same(applyJsonPatch(document, [{ op: 'add', path: '/b', value: 'y'.repeat(20) }, { op: 'remove', path: '/a' }, { op: 'remove', path: '/b' }],
    { limits: limits({ maxSize: size + 28 }) }), {}, 'removals make room again')
  for (const [what, start, removed] of [['a member', { ab: 'xxxx' }, '/ab'], ['an element', { a: ['xxxx'] }, '/a/0']] as const) {
    t.same(applyJsonPatch(start, [{ op: 'remove', path: removed }, { op: 'add', path: removed, value: 'xxxx' }], { limits: limits({ maxSize: jsonSize(start) }) }), start,
      `a removed ${what} frees all its size: put back, the document is exactly as large as before`)
    const max = jsonSize(start) + 9
    t.same(patchError(() => applyJsonPatch(start, [{ op: 'remove', path: removed }, { op: 'add', path: '/b', value: 'y'.repeat(20) }], { limits: limits({ maxSize: max }) })),
      { pointer: '#/1/path', message: `The patched document would be larger than ${max} characters` }, `a removed ${what} frees its own size, no more`)
  }
  t.same(patchError(() => applyJsonPatch({ a: 'x'.repeat(100) }, [{ op: 'copy', from: '/a', path: '/b' }], { limits: limits({ maxSize: 150 }) })),
    { pointer: '#/0/path', message: 'The patched document would be larger than 150 characters' }, 'a copy is measured before it is made')
  t.same(patchError(() => applyJsonPatch({ a: [] }, [{ op: 'replace', path: '', value: 'x'.repeat(200) }], { limits: limits({ maxSize: 150 }) })),
    { pointer: '#/0/path', message: 'The patched document would be larger than 150 characters' }, 'the whole document replaced')
  t.same(applyJsonPatch({ a: 'x'.repeat(100) }, [{ op: 'replace', path: '/a', value: 'y'.repeat(100) }, { op: 'move', from: '/a', path: '/b' }],
    { limits: limits({ maxSize: 110 }) }), { b: 'y'.repeat(100) }, 'a replacement of the same size and a move fit')
  t.same(patchError(() => applyMergePatch({ a: 'x' }, { b: 'y'.repeat(200) }, { limits: limits({ maxSize: 150 }) })),
    { pointer: '#', message: 'The patched document would be larger than 150 characters' }, 'a merge patch\'s result, as a whole')
  t.same(applyJsonPatch(document, [{ op: 'add', path: '/b', value: 1 }], { text: JSON.stringify(document) }), { a: 'xxxx', b: 1 },
    'the document parsed from its text')
})

test('work: at most 4 steps per character of the patch and the document', async (t) => {
  const budget = new PatchBudget(DEFAULT_PATCH_LIMITS, 10, 15)
  budget.spend(100, '#')
  t.same(patchError(() => { budget.spend(1, '#/3/path') }), { pointer: '#/3/path', message: 'Applying the patch takes more than 100 steps, 4 per character of the patch and the document' })
  const shifts = new PatchBudget(DEFAULT_PATCH_LIMITS, 16, 0)
  shifts.shift(64 * 64, '#')
  t.same(patchError(() => { shifts.shift(1, '#') }).pointer, '#', '64 array elements moved are one step')
  // Measuring a value costs a step per container and one per member: 3 + 3 + 1 of the 8 steps of 2 characters.
  const measured = new PatchBudget(DEFAULT_PATCH_LIMITS, 2, 0)
  measured.measure({ a: [1, 2], b: {} }, '#')
  measured.spend(1, '#')
  t.ok(patchError(() => { measured.spend(1, '#') }), 'a value measured costs its containers and members')

  // Copying a part of the document again and again costs what the copies are.
  const document = { a: Array.from({ length: 1000 }, (_, i) => i) }
  const copies = (n: number): unknown[] => Array.from({ length: n }, (_, i) => ({ op: 'copy', from: '/a', path: `/c${i % 2}` }))
  t.ok(applyJsonPatch(document, copies(2)), 'two copies of a large part')
  const refused = patchError(() => applyJsonPatch(document, copies(40)))
  t.match(refused, { pointer: /^#\/\d+\/path$/, message: /^Applying the patch takes more than \d+ steps/ }, 'forty are too many')
  // Inserting at the front of a long array moves every element each time.
  const long = { a: Array.from({ length: 100_000 }, () => 0) }
  const inserts = (n: number): unknown[] => Array.from({ length: n }, () => ({ op: 'add', path: '/a/0', value: 1 }))
  t.equal((applyJsonPatch(long, inserts(100)) as { a: number[] }).a.length, 100_100, 'a hundred inserts at the front of 100,000 elements')
  t.match(patchError(() => applyJsonPatch(long, inserts(1000))), { pointer: /^#\/\d+\/path$/, message: /^Applying the patch takes more than/ }, 'a thousand cost the square')
})

/** The example's items on a MemoryRepository, with the example's body limit and /health. */
async function memoryApp (): Promise<Awaited<ReturnType<typeof build>>> {
  const rows = new StampingRepository({ rows: [{ id: 1, name: 'lamp', price: 3, updated_at: '2026-01-01T10:00:00.000Z' }] })
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true }
    static override repository = asyncRepository(rows) as never
  }
  return await build({ views: [{ view: Items, prefix: '/items' }, { view: Health, prefix: '/health' }] }, { bodyLimit: 4 * 1024 * 1024 })
}

test('the attacks, on the memory store: 400 problems with pointers, nothing written, the server answers at once', async (t) => {
  const app = await memoryApp()
  t.teardown(() => app.close())
  await sendPatchAttacks(t, app, '/items/1')
})

test('the attacks, on SQLite (the example API)', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 3 } })
  await sendPatchAttacks(t, app, '/items/1')
})

test('a view sets its own bounds; patch.maxSize defaults to the route\'s body limit', async (t) => {
  const rows = new StampingRepository({ rows: [{ id: 1, name: 'lamp', price: 3, updated_at: '2026-01-01T10:00:00.000Z' }] })
  class Items extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override repository = asyncRepository(rows) as never
  }
  class Strict extends Items {
    static override patch = { maxOperations: 2, maxDepth: 3, maxSize: 200 }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items', bodyLimit: 300 }, { view: Strict, prefix: '/strict' }] })
  t.teardown(() => app.close())
  const send = async (url: string, patch: unknown): Promise<ReturnType<typeof problem>> =>
    problem(t, await app.inject({ method: 'PATCH', url, headers: { 'content-type': 'application/json-patch+json' }, payload: JSON.stringify(patch) }), 400)
  t.match((await send('/items/1', [{ op: 'add', path: '/a', value: 'x'.repeat(150) }, { op: 'copy', from: '/a', path: '/b' }])).errors[0],
    { pointer: '#/1/path', detail: 'The patched document would be larger than 300 characters' }, 'the registration\'s bodyLimit')
  t.match((await send('/strict/1', [{ op: 'test', path: '/name', value: 'lamp' }, { op: 'test', path: '/price', value: 3 }, { op: 'test', path: '/id', value: 1 }])).errors[0],
    { pointer: '#', detail: 'A JSON Patch may hold at most 2 operations; this one holds 3' })
  t.match((await send('/strict/1', [{ op: 'add', path: '/a', value: [[[1]]] }])).errors[0], { pointer: '#/0/path' })
  t.match((await send('/strict/1', [{ op: 'add', path: '/a', value: 'x'.repeat(150) }])).errors[0], { detail: 'The patched document would be larger than 200 characters' })
  const merge = await app.inject({ method: 'PATCH', url: '/strict/1', headers: { 'content-type': 'application/merge-patch+json' }, payload: '{"name":[[[[1]]]]}' })
  t.match(problem(t, merge, 400).errors[0], { pointer: '#/name/0/0', detail: 'Values may nest at most 3 levels deep' })
  const fine = await app.inject({ method: 'PATCH', url: '/strict/1', headers: { 'content-type': 'application/json-patch+json' }, payload: JSON.stringify([{ op: 'replace', path: '/price', value: 4 }]) })
  t.equal(fine.statusCode, 200, 'a patch within the bounds applies')
  t.equal(fine.json().price, 4)
})

test('a server with a 96 MiB heap survives every attack, two copies of each at once, over real sockets', async (t) => {
  const root = fileURLToPath(new URL('..', import.meta.url))
  // The TypeScript loader the suite runs with (and the condition that resolves `fastify-views` to the
  // source), without its coverage collection and process tracking, which would count against the child's heap.
  const loader = process.execArgv.filter((arg) => arg.includes('@tapjs/typescript') || arg.startsWith('--conditions'))
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('_TAPJS_PROCESSINFO') && key !== 'NODE_OPTIONS'))
  const child = spawn(process.execPath, ['--max-old-space-size=96', ...loader, 'examples/server.ts'], {
    cwd: root,
    env: { ...env, HOST: '127.0.0.1', PORT: '0', DATABASE_URL: 'sqlite::memory:', LOG_LEVEL: 'error' },
    stdio: ['ignore', 'pipe', 'pipe']
  })
  let output = ''
  const exited = new Promise<string>((resolve) => child.once('exit', (code, signal) => { resolve(`${code ?? signal}`) }))
  t.teardown(async () => { child.kill('SIGTERM'); await exited })
  const base = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`no address within 60 s:\n${output}`)) }, 60_000)
    const read = (chunk: Buffer): void => {
      output += chunk.toString()
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (match !== null) { clearTimeout(timer); resolve(match[1]) }
    }
    child.stdout.on('data', read)
    child.stderr.on('data', read)
    child.once('exit', (code, signal) => { clearTimeout(timer); reject(new Error(`exited (${code ?? signal}):\n${output}`)) })
  })
  const created = await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lamp', price: 3 }) })
  const id = (await created.json() as { id: number }).id
  const statuses: number[] = []
  for (const attack of PATCH_ATTACKS) {
    // Two copies of each at once, as a client that retries would send them.
    const sent = await Promise.all([0, 1].map(async () => await fetch(`${base}/items/${id}`, { method: 'PATCH', headers: { 'content-type': attack.type }, body: attack.body() })))
    for (const res of sent) {
      statuses.push(res.status)
      await res.arrayBuffer()
    }
  }
  t.same([...new Set(statuses)], [400], `${statuses.length} attacks, every one a 400`)
  t.equal((await fetch(`${base}/health`)).status, 200, 'the server is alive and answers')
  t.equal(child.exitCode, null, 'it never exited')
  const peak = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${child.pid!}/status`, 'utf8'))
  t.comment(`peak resident memory of the server: ${peak === null ? 'unknown' : `${Math.round(Number(peak[1]) / 1024)} MiB`}`)
})
