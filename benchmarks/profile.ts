/**
 * Splits a server CPU profile by run: which variant was being measured when each
 * sample was taken, from the run windows a `BENCH_JSON` file records (`startedUs`,
 * `endedUs`: the monotonic clock the profile's timestamps use too). Prints, per
 * variant (or batch way, per request it sends), the profiled busy time per request and the time per request spent in
 * some functions, counted once per sample whatever the recursion.
 *
 *   BENCH_PROFILE=/tmp/prof BENCH_PROFILE_INTERVAL=100 BENCH_JSON=/tmp/r.json BENCH_SCENARIOS=... node build/benchmarks/run.js
 *   node build/benchmarks/profile.js /tmp/prof/CPU.*.cpuprofile /tmp/r.json [functionName ...]
 *
 * "inclusive" is everything under the function; "before onSendEnd" leaves out what
 * runs inside Fastify's `onSendEnd`, which an onSend hook or a `reply.send` reaches
 * synchronously (writing the response): what the function itself costs before the write.
 */
import { readFileSync } from 'node:fs'
import { fixed, table } from './stats.js'

interface CallFrame { functionName: string, url: string }
interface ProfileNode { id: number, callFrame: CallFrame, children?: number[] }
interface Profile { nodes: ProfileNode[], startTime: number, samples: number[], timeDeltas: number[] }
interface Window { variant: string, requests: number, startedUs: number, endedUs: number }

const [profileFile, resultsFile, ...extra] = process.argv.slice(2)
if (profileFile === undefined || resultsFile === undefined) {
  console.error('usage: node build/benchmarks/profile.js <.cpuprofile> <BENCH_JSON file> [functionName ...]')
  process.exit(2)
}
const profile = JSON.parse(readFileSync(profileFile, 'utf8')) as Profile
const results = JSON.parse(readFileSync(resultsFile, 'utf8')) as {
  runs: Window[]
  warmups?: Window[]
  batchRuns?: Record<string, Array<{ way: string, amount: number, startedUs: number, endedUs: number }>>
}

/** What is looked for on each sample's stack. */
const MATCHERS: Record<string, (frame: CallFrame) => boolean> = {
  '(idle)': (f) => f.functionName === '(idle)',
  '(garbage collector)': (f) => f.functionName === '(garbage collector)',
  'viewRouteHandler (lib)': (f) => f.functionName === 'viewRouteHandler',
  'etagOnSend (lib)': (f) => f.functionName === 'etagOnSend',
  'etagOf (lib)': (f) => f.functionName === 'etagOf',
  'onSendHookRunner (fastify)': (f) => f.functionName === 'onSendHookRunner',
  '@fastify/etag onSend hook': (f) => f.url.includes('@fastify/etag/index.js'),
  'checkLastModified (lib)': (f) => f.functionName === 'checkLastModified',
  'notModified (lib)': (f) => f.functionName === 'notModified',
  'lib/http/errors.js (problem errors)': (f) => f.url.endsWith('/lib/http/errors.js'),
  'createMany (repository)': (f) => f.functionName === 'createMany',
  'create (repository)': (f) => f.functionName === 'create' && f.url.endsWith('/lib/stores/memory.js'),
  'writev / write* (socket)': (f) => f.functionName === 'writev' || /^write(Generic|Buffer|Utf8String|Latin1String)$/.test(f.functionName),
  'onSendEnd (fastify)': (f) => f.functionName === 'onSendEnd'
}
for (const name of extra) MATCHERS[name] = (f) => f.functionName === name
const names = Object.keys(MATCHERS)

/** Where a sample's own (top) frame is: self time by origin. */
function origin (f: CallFrame): string {
  if (f.functionName.startsWith('(')) return f.functionName
  if (/\/lib\/(memory|repository)\.js$/.test(f.url)) return 'lib: MemoryRepository, asyncRepository'
  if (f.url.includes('/build/lib/') || f.url.includes('/dist/')) return 'lib: everything else (views, checks)'
  if (f.url.includes('/node_modules/fastify/')) return 'fastify'
  if (f.url.includes('/node_modules/')) return f.url.replace(/^.*\/node_modules\/((@[^/]+\/)?[^/]+).*$/, 'node_modules: $1')
  if (f.url.startsWith('node:')) return 'node internals (JS)'
  // Code made with new Function has no URL either: fast-json-stringify's anonymousN, ajv's validateN, TypeBox's check.
  if (f.url === '') return /^(anonymous\d*|validate\d*|check|)$/.test(f.functionName) ? 'generated code (serializers, validators, TypeBox checks)' : `native: ${f.functionName}`
  if (f.url.includes('/build/benchmarks/')) return 'benchmark routes (hand-written handlers)'
  return 'other'
}
const CONTINUATION = 'onSendEnd (fastify)'

const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map<number, number>()
for (const n of profile.nodes) for (const child of n.children ?? []) parent.set(child, n.id)

/** For each node: the matchers on its stack, and those reached before (above) onSendEnd. */
const stacks = new Map<number, { all: Set<string>, before: Set<string> }>()
function stackOf (id: number): { all: Set<string>, before: Set<string> } {
  let known = stacks.get(id)
  if (known !== undefined) return known
  const up = parent.get(id)
  const above = up === undefined ? { all: new Set<string>(), before: new Set<string>() } : stackOf(up)
  const own = names.filter((name) => MATCHERS[name](nodes.get(id)!.callFrame))
  const all = new Set([...above.all, ...own])
  // From onSendEnd down, nothing counts as "before onSendEnd" any more.
  const before = all.has(CONTINUATION) ? new Set<string>() : new Set([...above.before, ...own])
  known = { all, before }
  stacks.set(id, known)
  return known
}

// Sample i was taken at startTime + sum(timeDeltas[0..i]) and stands for the time until the next one.
const at: number[] = []
let clock = profile.startTime
for (const delta of profile.timeDeltas) at.push(clock += delta)

interface Totals {
  requests: number,
  busy: number,
  inclusive: Record<string, number>,
  before: Record<string, number>,
  self: Record<string, number>
}
const byVariant = new Map<string, Totals>()
// Batch runs count per item created (one request or many): "requests" is the amount.
const batchWindows: Window[] = Object.values(results.batchRuns ?? {}).flat()
  .map((r) => ({ variant: r.way, requests: r.amount, startedUs: r.startedUs, endedUs: r.endedUs }))
const windows = [
  ...(results.warmups ?? []),
  ...results.runs,
  ...batchWindows
].filter((w) => w.startedUs !== undefined).sort((a, b) => a.startedUs - b.startedUs)
let i = 0
for (const w of windows) {
  const totals = byVariant.get(w.variant) ?? { requests: 0, busy: 0, inclusive: {}, before: {}, self: {} }
  totals.requests += w.requests
  while (i < at.length && at[i] < w.startedUs) i++
  for (; i < at.length && at[i] <= w.endedUs; i++) {
    const dt = (at[i + 1] ?? at[i]) - at[i]
    const { all, before } = stackOf(profile.samples[i])
    if (!all.has('(idle)')) totals.busy += dt
    const where = origin(nodes.get(profile.samples[i])!.callFrame)
    totals.self[where] = (totals.self[where] ?? 0) + dt
    for (const name of all) totals.inclusive[name] = (totals.inclusive[name] ?? 0) + dt
    for (const name of before) totals.before[name] = (totals.before[name] ?? 0) + dt
  }
  byVariant.set(w.variant, totals)
}

console.log(`${profile.samples.length} samples, one per ${fixed((at[at.length - 1] - profile.startTime) / profile.samples.length, 0)} µs on average; µs per request\n`)
for (const [variant, totals] of byVariant) {
  const per = (us: number | undefined): string => us === undefined ? '' : fixed(us / totals.requests, 3)
  const rows = names.filter((n) => totals.inclusive[n] !== undefined && n !== '(idle)').map((n) => [n, per(totals.inclusive[n]), n === CONTINUATION ? '' : per(totals.before[n])])
  console.log(`## ${variant}: ${totals.requests.toLocaleString('en-US')} requests, busy ${per(totals.busy)} µs/req, idle ${per(totals.inclusive['(idle)'])} µs/req\n`)
  console.log(table(['function', 'inclusive', 'before onSendEnd'], rows, [false, true, true]))
  const selfRows = Object.entries(totals.self).filter(([where]) => where !== '(idle)').sort((a, b) => b[1] - a[1]).map(([where, us]) => [where, per(us)])
  console.log()
  console.log(table(['self time in', 'µs/req'], selfRows, [false, true]))
  console.log()
}
