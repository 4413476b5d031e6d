/**
 * The benchmark runner (`npm run bench`): starts `server.js` in a child process,
 * drives every variant of every scenario with autocannon, interleaved over several
 * rounds, and reports per variant the median req/s and the median server CPU time
 * per request, compared with the scenario's hand-written Fastify route.
 *
 * Batch scenarios (bulk-create) run after the load rounds: every way of doing the
 * same work runs to completion, timed, with the server's CPU time read the same way.
 *
 * Settings (environment):
 *   BENCH_ROUNDS       rounds (5); every variant runs once per round, in an order
 *                      rotated each round and reversed every other round
 *   BENCH_DURATION     seconds per run (3, or the scenario's own default)
 *   BENCH_WARMUP       seconds of warm-up per variant, not measured (2, or the scenario's)
 *                      (set, each of these three applies to every scenario)
 *   BENCH_BATCH_REPS   measured repetitions of every way of a batch scenario (10, or
 *                      the scenario's own: bulk-create 6, sqlite-bulk-create 6,
 *                      sqlite-bulk-create-10k 8)
 *   BENCH_CONNECTIONS  autocannon connections (50)
 *   BENCH_PIPELINING   autocannon pipelining (1)
 *   BENCH_RETRIES      a run during which other processes used more than 10% of a
 *                      core is repeated up to this many times (1; 0 = never)
 *   BENCH_CONTROL      1: the baseline runs a second time each round (a batch scenario's
 *                      reference way, each repetition), an A/A control whose difference
 *                      from the baseline is noise (1; 0 = off)
 *   BENCH_SCENARIOS    comma-separated scenario names (default: all); `registration`
 *                      is the registration time and heap of BENCH_REGISTRATION resources
 *   BENCH_REGISTRATION comma-separated numbers of resources the registration measurement
 *                      registers, each in fresh processes (10,200,1000)
 *   BENCH_REGISTRATION_REPS  fresh processes per way and size (3)
 *   BENCH_PROFILE      1 or a directory: the server runs with --cpu-prof and writes
 *                      its profile there (1 = build/benchmarks/profiles)
 *   BENCH_PROFILE_INTERVAL  sampling interval of that profile, µs (node's default 1000)
 *   BENCH_JSON         a file to write the raw measurements to
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { readFileSync, writeFileSync } from 'node:fs'
import os from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { batchFailed, batchWays, reportBatch, runBatch, type BatchRun } from './batch.js'
import { measureHashes, reportHashes, type HashMicro } from './micro.js'
import { registrationSizes, reportRegistrationGrowth } from './registration.js'
import type {
  AnyScenarioManifest, BatchScenarioManifest, ParentMessage, ScenarioManifest, ServerMessage, VariantManifest
} from './protocol.js'
import { cannon, cpuMicros, machineBusyMicros, type CpuAnswer } from './sampling.js'
import { roundOrder } from './order.js'
import { fixed, integer, max, median, min, percent, ratio, table } from './stats.js'

const here = dirname(fileURLToPath(import.meta.url))
const REGISTRATION = 'registration'
const root = resolve(here, '..', '..')

/** Defaults of the load settings, for scenarios that set none of their own. */
const DEFAULTS = { rounds: 5, duration: 3, warmup: 2 }
/** Pause between runs, so one run's connection teardown is not billed to the next. */
const PAUSE_MS = 250
/** Other processes using more than this share of a core during a run are worth a warning. */
const OTHER_LOAD_WARNING = 0.1

// ---------------------------------------------------------------------------
// Settings

function numberSetting (name: string, fallback: number, integerOnly: boolean): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isFinite(value) || value <= 0 || (integerOnly && !Number.isInteger(value))) {
    throw new Error(`${name} must be a positive ${integerOnly ? 'integer' : 'number'}, got ${JSON.stringify(raw)}`)
  }
  return value
}

/** A setting given in the environment, or `undefined`: the scenario's own default (or the global one) applies. */
function explicitSetting (name: string, integerOnly: boolean): number | undefined {
  const raw = process.env[name]
  return raw === undefined || raw === '' ? undefined : numberSetting(name, 0, integerOnly)
}

const settings = {
  /** Explicit values override every scenario's own defaults. */
  rounds: explicitSetting('BENCH_ROUNDS', true),
  duration: explicitSetting('BENCH_DURATION', false),
  warmup: explicitSetting('BENCH_WARMUP', false),
  batchRepetitions: explicitSetting('BENCH_BATCH_REPS', true),
  connections: numberSetting('BENCH_CONNECTIONS', 50, true),
  pipelining: numberSetting('BENCH_PIPELINING', 1, true),
  /** Times a run is repeated when other processes used more than 10% of a core during it. */
  retries: process.env.BENCH_RETRIES === '0' ? 0 : numberSetting('BENCH_RETRIES', 1, true),
  /** Measure each scenario's baseline twice per round, the second time as an A/A control. */
  control: process.env.BENCH_CONTROL !== '0',
  scenarios: (process.env.BENCH_SCENARIOS ?? '').split(',').map((s) => s.trim()).filter((s) => s !== ''),
  profile: process.env.BENCH_PROFILE ?? '',
  profileInterval: process.env.BENCH_PROFILE_INTERVAL === undefined ? undefined : numberSetting('BENCH_PROFILE_INTERVAL', 1000, true),
  json: process.env.BENCH_JSON ?? '',
  /** Resources per registration measurement, each size measured on its own. */
  registrationSizes: registrationSizes(process.env.BENCH_REGISTRATION === undefined || process.env.BENCH_REGISTRATION === '' ? '10,200,1000' : process.env.BENCH_REGISTRATION),
  /** Fresh processes per way and size of the registration measurement. */
  registrationRepetitions: numberSetting('BENCH_REGISTRATION_REPS', 3, true)
}

/** The version of a package installed in the root's node_modules or, with `benchmarks`, in benchmarks/node_modules (the peers'). */
function packageVersion (name: string, benchmarks = false): string {
  try {
    const dir = benchmarks ? join(root, 'benchmarks') : root
    const pkg = JSON.parse(readFileSync(join(dir, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }
    return pkg.version
  } catch {
    return '?'
  }
}

/** The commit the library was built from, and whether lib/ had uncommitted changes. */
function libraryRevision (): string {
  try {
    const git = (...args: string[]): string => execFileSync('git', args, { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim()
    const dirty = git('status', '--porcelain', '--', 'lib') !== ''
    return `${git('rev-parse', '--short', 'HEAD')}${dirty ? ' + uncommitted changes in lib/' : ''}`
  } catch {
    return 'unknown (not a git checkout)'
  }
}

// ---------------------------------------------------------------------------
// The server process

class ServerProcess {
  readonly child: ChildProcess
  readonly port: number
  readonly scenarios: AnyScenarioManifest[]
  private nextId = 0
  private readonly pending = new Map<number, (answer: CpuAnswer) => void>()

  private constructor (child: ChildProcess, port: number, scenarios: AnyScenarioManifest[]) {
    this.child = child
    this.port = port
    this.scenarios = scenarios
    child.on('message', (message: ServerMessage) => {
      if (message.type !== 'cpu') return
      this.pending.get(message.id)?.(message)
      this.pending.delete(message.id)
    })
  }

  static start (execArgv: string[]): Promise<ServerProcess> {
    const child = fork(join(here, 'server.js'), [], { execArgv, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => { child.kill('SIGKILL'); reject(new Error('the server did not start within 30 s')) }, 30_000)
      child.once('exit', (code, signal) => {
        clearTimeout(timer)
        reject(new Error(`the server exited before it was ready (code ${code}, signal ${signal})`))
      })
      child.on('message', function onReady (message: ServerMessage) {
        if (message.type !== 'ready') return
        clearTimeout(timer)
        child.off('message', onReady)
        child.removeAllListeners('exit')
        child.once('exit', (code, signal) => {
          if (!stopping) {
            console.error(`\nthe server exited unexpectedly (code ${code}, signal ${signal})`)
            process.exit(1)
          }
        })
        resolve(new ServerProcess(child, message.port, message.scenarios))
      })
    })
  }

  /** The server's CPU time so far and its heap; with `gc`, after a full garbage collection. */
  cpu (gc: boolean): Promise<CpuAnswer> {
    const id = this.nextId++
    return new Promise((resolve) => {
      this.pending.set(id, resolve)
      this.send({ type: 'cpu', id, gc })
    })
  }

  private send (message: ParentMessage): void {
    this.child.send(message)
  }

  /** Asks the server to exit (writing its CPU profile if any); kills it after 10 s. */
  async stop (): Promise<void> {
    stopping = true
    if (this.child.exitCode !== null || this.child.signalCode !== null) return
    const exited = new Promise<void>((resolve) => this.child.once('exit', () => resolve()))
    this.send({ type: 'exit' })
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 10_000)
    await exited
    clearTimeout(timer)
  }
}

let stopping = false
let server: ServerProcess | undefined

function killServer (): void {
  stopping = true
  if (server !== undefined && server.child.exitCode === null && server.child.signalCode === null) server.child.kill('SIGKILL')
}

process.on('exit', killServer)
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.on(signal, () => { killServer(); process.exit(130) })
}

// ---------------------------------------------------------------------------
// Measuring

interface Measurement {
  variant: string
  round: number
  /** Requests completed (responses received). */
  requests: number
  /** Seconds, as autocannon measured the run. */
  seconds: number
  reqPerSec: number
  /** Server user + system CPU time of the run, µs. */
  serverCpuUs: number
  serverCpuUsPerReq: number
  /** Server CPU time / wall time of the run (1 = one core busy). */
  serverCpuShare: number
  /** The same for this process, i.e. autocannon. */
  clientCpuShare: number
  /** autocannon's CPU time per request, µs: the same work whatever the variant (same response). */
  clientCpuUsPerReq: number
  /**
   * Server CPU per request / client CPU per request. Both processes slow down together
   * when the machine does (other tenants of the host), so this ratio is far steadier
   * than either figure; it assumes the client's work per response is the same.
   */
  normalized: number
  /** CPU time of every other process of the machine / wall time (Linux only; NaN elsewhere). */
  otherCpuShare: number
  errors: number
  unexpected: number
  /** How many times the run was repeated because of other load on the machine. */
  retries: number
  latencyP50: number
  latencyP99: number
  /**
   * When autocannon started and ended, µs of the monotonic clock (the clock of the
   * server's `--cpu-prof` timestamps too): which profile samples belong to this run.
   */
  startedUs: number
  endedUs: number
}

async function measure (
  srv: ServerProcess,
  variant: VariantManifest,
  seconds: number,
  round: number
): Promise<Measurement> {
  const { request } = variant
  await sleep(PAUSE_MS)
  // No forced GC before a run: after one, the server ran every route ≈30 % slower for the next
  // seconds, and code that allocates more, slower still; the heap is read after GC around the rounds instead.
  const before = await srv.cpu(false)
  const clientBefore = process.cpuUsage()
  const machineBefore = machineBusyMicros()
  const started = process.hrtime.bigint()
  const result = await cannon({
    url: `http://127.0.0.1:${request.port ?? srv.port}${request.path}`,
    method: request.method,
    ...(request.headers === undefined ? {} : { headers: request.headers }),
    ...(request.body === undefined ? {} : { body: request.body }),
    connections: settings.connections,
    pipelining: settings.pipelining,
    duration: seconds,
    timeout: 10
  })
  const after = await srv.cpu(false)
  const ended = process.hrtime.bigint()
  const wall = Number(ended - started) / 1e9
  const machineAfter = machineBusyMicros()
  const clientCpu = cpuMicros(clientBefore, process.cpuUsage())
  const requests = result.requests.total
  const serverCpuUs = cpuMicros(before.usage, after.usage)
  const expected = request.expectStatus
  const unexpected = expected === undefined
    ? result.non2xx
    : requests - (result.statusCodeStats[String(expected)]?.count ?? 0)
  return {
    variant: variant.id,
    round,
    requests,
    seconds: result.duration,
    reqPerSec: requests / result.duration,
    serverCpuUs,
    serverCpuUsPerReq: serverCpuUs / requests,
    serverCpuShare: serverCpuUs / 1e6 / wall,
    clientCpuShare: clientCpu / 1e6 / wall,
    clientCpuUsPerReq: clientCpu / requests,
    normalized: serverCpuUs / clientCpu,
    otherCpuShare: machineBefore === undefined || machineAfter === undefined
      ? Number.NaN
      : Math.max(0, machineAfter - machineBefore - serverCpuUs - clientCpu) / 1e6 / wall,
    errors: result.errors + result.timeouts,
    unexpected,
    retries: 0,
    latencyP50: result.latency.p50,
    latencyP99: result.latency.p99,
    startedUs: Number(started / 1000n),
    endedUs: Number(ended / 1000n)
  }
}

/**
 * Requests every variant once: the status must be right and the body the baseline's.
 * Returns every variant's body, by id (the hash cost is measured on them).
 */
async function sanityCheck (srv: ServerProcess, scenarios: ScenarioManifest[]): Promise<Map<string, string>> {
  const bodies = new Map<string, string>()
  for (const scenario of scenarios) {
    let baselineBody: string | undefined
    for (const variant of scenario.variants) {
      const { request } = variant
      const response = await fetch(`http://127.0.0.1:${request.port ?? srv.port}${request.path}`, {
        method: request.method,
        ...(request.headers === undefined ? {} : { headers: request.headers }),
        ...(request.body === undefined ? {} : { body: request.body })
      })
      const body = await response.text()
      const statusOk = request.expectStatus === undefined
        ? response.status >= 200 &&
        response.status < 300
        : response.status === request.expectStatus
      if (!statusOk) throw new Error(`${variant.id}: ${request.method} ${request.path} answered ${response.status}: ${body.slice(0, 500)}`)
      if (variant.baseline) baselineBody = body
      else if (variant.sameBodyAsBaseline && body !== baselineBody) {
        throw new Error(`${variant.id}: the body differs from the baseline's\n  baseline: ${baselineBody?.slice(0, 300)}\n  variant:  ${body.slice(0, 300)}`)
      }
      bodies.set(variant.id, body)
      const extra = ['etag', 'last-modified'].filter((h) => response.headers.has(h)).map((h) => `, ${h}: ${response.headers.get(h)}`).join('')
      console.log(`  ${variant.id.padEnd(width)}  ${request.method} ${request.path}  -> ${response.status}, ${body.length} bytes, ${response.headers.get('content-type')}${extra}`)
    }
  }
  return bodies
}

function formatRun (m: Measurement): string {
  const flags = m.errors + m.unexpected > 0 ? `  !! ${m.errors} errors/timeouts, ${m.unexpected} unexpected statuses` : ''
  const pct = (share: number): string => `${fixed(share * 100, 0)}%`.padStart(4)
  return `${m.variant.padEnd(width)}  ${integer(m.reqPerSec).padStart(6)} req/s` +
    `  server ${fixed(m.serverCpuUsPerReq, 2).padStart(6)} µs/req (CPU ${pct(m.serverCpuShare)})` +
    `  client ${fixed(m.clientCpuUsPerReq, 2).padStart(6)} µs/req (CPU ${pct(m.clientCpuShare)})` +
    `  server/client ${fixed(m.normalized, 3)}  other CPU ${pct(m.otherCpuShare)}  p99 ${m.latencyP99} ms${flags}`
}

let width = 0

// ---------------------------------------------------------------------------
// Main

/** A scenario's effective load settings: the environment's, else its own, else the defaults. */
function effective (scenario: ScenarioManifest): Required<ScenarioManifest['settings']> {
  return {
    rounds: settings.rounds ?? scenario.settings.rounds ?? DEFAULTS.rounds,
    duration: settings.duration ?? scenario.settings.duration ?? DEFAULTS.duration,
    warmup: settings.warmup ?? scenario.settings.warmup ?? DEFAULTS.warmup
  }
}

/** A variant as the runner schedules it: the control is the baseline measured a second time. */
interface Entry extends VariantManifest {
  /** The A/A control: same route as the baseline, so its difference from it is noise. */
  control: boolean
  rounds: number
  duration: number
  warmup: number
}

function entriesOf (scenario: ScenarioManifest): Entry[] {
  const own = effective(scenario)
  const entries: Entry[] = scenario.variants.map((v) => ({ ...v, ...own, control: false }))
  const baseline = scenario.variants.find((v) => v.baseline)
  if (settings.control && baseline !== undefined) {
    entries.push({ ...baseline, ...own, id: `${baseline.id} (A/A)`, label: 'the baseline measured again: A/A control, its difference is noise', baseline: false, control: true })
  }
  return entries
}

function batchRepetitions (scenario: BatchScenarioManifest): number {
  return settings.batchRepetitions ?? scenario.repetitions ?? 10
}

async function main (): Promise<void> {
  // The server resolves its peers (NestJS, fastify-decorators, @fastify/etag) as this process does: resolve-peers.ts.
  const hook = new URL('./resolve-peers.js', import.meta.url).href
  const execArgv = ['--expose-gc', '--import', hook]
  let profileDir: string | undefined
  if (settings.profile !== '' && settings.profile !== '0') {
    profileDir = settings.profile === '1' ? join(root, 'build', 'benchmarks', 'profiles') : resolve(settings.profile)
    execArgv.push('--cpu-prof', `--cpu-prof-dir=${profileDir}`)
    if (settings.profileInterval !== undefined) execArgv.push(`--cpu-prof-interval=${settings.profileInterval}`)
  }

  // Only what was set: a scenario's own defaults apply to whatever is left out.
  const envLine = [
    ...(settings.rounds === undefined ? [] : [`BENCH_ROUNDS=${settings.rounds}`]),
    ...(settings.duration === undefined ? [] : [`BENCH_DURATION=${settings.duration}`]),
    ...(settings.warmup === undefined ? [] : [`BENCH_WARMUP=${settings.warmup}`]),
    ...(settings.batchRepetitions === undefined ? [] : [`BENCH_BATCH_REPS=${settings.batchRepetitions}`]),
    ...(process.env.BENCH_REGISTRATION === undefined || process.env.BENCH_REGISTRATION === '' ? [] : [`BENCH_REGISTRATION=${settings.registrationSizes.join(',')}`]),
    ...(process.env.BENCH_REGISTRATION_REPS === undefined ? [] : [`BENCH_REGISTRATION_REPS=${settings.registrationRepetitions}`]),
    `BENCH_CONNECTIONS=${settings.connections}`, `BENCH_PIPELINING=${settings.pipelining}`,
    `BENCH_RETRIES=${settings.retries}`, `BENCH_CONTROL=${settings.control ? 1 : 0}`,
    ...(settings.scenarios.length > 0 ? [`BENCH_SCENARIOS=${settings.scenarios.join(',')}`] : []),
    ...(profileDir !== undefined ? [`BENCH_PROFILE=${settings.profile}`] : []),
    ...(profileDir !== undefined && settings.profileInterval !== undefined ? [`BENCH_PROFILE_INTERVAL=${settings.profileInterval}`] : [])
  ].join(' ')
  const cpus = os.cpus()
  console.log('# fastify-views benchmark\n')
  console.log(`command:   ${envLine} npm run bench`)
  const shown = execArgv.map((arg) => arg === hook ? 'build/benchmarks/resolve-peers.js' : arg).join(' ')
  console.log('           (= npm ci --prefix benchmarks when needed, tsc -p benchmarks, benchmarks/nest, benchmarks/fastify-decorators && ' +
    `node --import build/benchmarks/resolve-peers.js build/benchmarks/run.js; the server is node ${shown} build/benchmarks/server.js, forked)`)
  console.log(`load:      autocannon in this process, ${settings.connections} connections, pipelining ${settings.pipelining}, ` +
    'rounds × seconds per run and warm-up per scenario below, order rotated and reversed every other round')
  console.log(`machine:   ${cpus[0]?.model ?? '?'}, ${cpus.length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ` +
    `${os.platform()} ${os.release()} ${os.arch()}, load average ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`)
  console.log(`software:  node ${process.version}, fastify ${packageVersion('fastify')}, ` +
    `@sinclair/typebox ${packageVersion('@sinclair/typebox')}, autocannon ${packageVersion('autocannon', true)}, @fastify/etag ${packageVersion('@fastify/etag', true)}`)
  console.log(`library:   fastify-views ${libraryRevision()}`)
  console.log('metric:    server CPU µs/request = (user + system CPU delta of the server process) / requests completed\n')

  const startedAt = Date.now()
  server = await ServerProcess.start(execArgv)
  const srv = server
  // `registration` is not a load scenario: it runs in processes of its own, after the rest.
  const withRegistration = settings.scenarios.length === 0 || settings.scenarios.includes(REGISTRATION)
  const named = settings.scenarios.filter((name) => name !== REGISTRATION)
  const selected: AnyScenarioManifest[] = settings.scenarios.length === 0
    ? srv.scenarios
    : named.map((name) => {
      const found = srv.scenarios.find((s) => s.name === name)
      if (found === undefined) throw new Error(`unknown scenario ${name} (known: ${srv.scenarios.map((s) => s.name).join(', ')})`)
      return found
    })
  const scenarios = selected.filter((s): s is ScenarioManifest => s.kind === 'load')
  const batches = selected.filter((s): s is BatchScenarioManifest => s.kind === 'batch')
  const entries = scenarios.flatMap(entriesOf)
  width = Math.max(0, ...entries.map((v) => v.id.length))
  console.log(`server:    pid ${srv.child.pid}, http://127.0.0.1:${srv.port}\n`)

  console.log('## Scenarios\n')
  for (const scenario of scenarios) {
    const own = effective(scenario)
    console.log(`${scenario.name}: ${scenario.description}`)
    console.log(`  (${own.rounds} rounds × ${own.duration} s, ${own.warmup} s warm-up per variant` +
      `${scenario.ratioTarget === null ? '; no ratio target, µs targets below' : `; target: at most +${fixed(scenario.ratioTarget * 100, 0)}% server CPU per request`})`)
    for (const v of entriesOf(scenario)) console.log(`  ${v.id.padEnd(width)}  ${v.label}`)
    for (const c of scenario.comparisons) console.log(`  target: ${c.subject} vs ${c.reference}: ${c.label}${c.informational ? ' (informational)' : ''}`)
  }
  for (const batch of batches) {
    console.log(`${batch.name} (batch): ${batch.description}`)
    console.log(`  (${batchRepetitions(batch)} repetitions of every way after ${batch.warmupRepetitions} unmeasured ones; ×ref = ratio to ${batch.reference})`)
    for (const way of batchWays(batch, settings.control)) console.log(`  ${way.id}  ${way.label}`)
    if (batch.target !== undefined) console.log(`  target: ${batch.target.label}`)
  }
  const estimate = entries.reduce((sum,
    e) => sum + e.rounds * (e.duration + PAUSE_MS / 1000 + 0.1) + (e.control ? 0 : e.warmup + PAUSE_MS / 1000 + 0.1), 0)
  console.log(`\nload runs: about ${fixed(estimate, 0)} s on an idle machine (more when runs are repeated because of other load)`)

  console.log('\n## Sanity check\n')
  const bodies = await sanityCheck(srv, scenarios)

  const runs: Measurement[] = []
  const warmups: Measurement[] = []
  // The server's heap after a full GC before the warm-ups and after the last round: a leak shows as growth.
  const heapMB: { first?: number, last?: number } = {}
  if (entries.length > 0) {
    heapMB.first = (await srv.cpu(true)).heapUsed / 2 ** 20
    console.log('\n## Warm-up\n')
    for (const variant of entries.filter((e) => !e.control)) {
      const m = await measure(srv, variant, variant.warmup, 0)
      warmups.push(m)
      console.log(formatRun(m))
    }

    const rounds = Math.max(...entries.map((e) => e.rounds))
    for (let round = 1; round <= rounds; round++) {
      console.log(`\n## Round ${round}/${rounds}\n`)
      const due = entries.filter((e) => e.rounds >= round)
      for (const variant of roundOrder(due, round - 1)) {
        let m = await measure(srv, variant, variant.duration, round)
        // Another process took CPU during the run: its figures are skewed, run it again.
        for (let retry = 1; retry <= settings.retries && m.otherCpuShare > OTHER_LOAD_WARNING; retry++) {
          console.log(`${formatRun(m)}  (other load, run again)`)
          m = await measure(srv, variant, variant.duration, round)
          m.retries = retry
        }
        runs.push(m)
        console.log(formatRun(m))
      }
    }
    heapMB.last = (await srv.cpu(true)).heapUsed / 2 ** 20
  }

  const batchRuns = new Map<string, BatchRun[]>()
  for (const batch of batches) {
    console.log(`\n## Batch: ${batch.name}`)
    batchRuns.set(batch.name, await runBatch(srv, batch, batchRepetitions(batch), settings.control))
  }

  await srv.stop()
  if (profileDir !== undefined) console.log(`\nserver CPU profile written to ${profileDir}`)

  // The hash cost of each body a µs target allows for, measured once the server is gone.
  const hashes = new Map<string, HashMicro>()
  for (const scenario of scenarios) {
    for (const c of scenario.comparisons) {
      if (!c.plusBodyHash || hashes.has(c.subject)) continue
      hashes.set(c.subject, await measureHashes(bodies.get(c.subject)!))
    }
  }

  report(scenarios, runs, hashes, heapMB)
  for (const batch of batches) reportBatch(batch, batchRuns.get(batch.name)!, batchRepetitions(batch), settings.control)
  if (withRegistration) reportRegistrationGrowth(settings.registrationSizes, settings.registrationRepetitions)
  console.log(`\ntotal time ${fixed((Date.now() - startedAt) / 1000, 0)} s`)

  if (settings.json !== '') {
    writeFileSync(settings.json, JSON.stringify({
      settings,
      scenarios: selected,
      runs,
      warmups,
      heapMB,
      batchRuns: Object.fromEntries(batchRuns),
      hashes: Object.fromEntries(hashes)
    }, null, 2))
    console.log(`raw results written to ${settings.json}`)
  }
  const failed = runs.filter(
    (m) => m.errors + m.unexpected > 0
  ).length + [...batchRuns.values()].flat().filter(batchFailed).length
  if (failed > 0) {
    console.error(`\n${failed} run(s) had errors or unexpected statuses: the figures above are not valid`)
    process.exitCode = 1
  }
}

function range (values: number[], digits: number): string {
  return `${fixed(min(values), digits)}–${fixed(max(values), digits)}`
}

/** `+1.23` / `−0.45`. */
function signed (value: number, digits: number): string {
  return `${value >= 0 ? '+' : '−'}${fixed(Math.abs(value), digits)}`
}

function report (
  scenarios: ScenarioManifest[],
  runs: Measurement[],
  hashes: Map<string, HashMicro>,
  heapMB: { first?: number, last?: number }
): void {
  if (scenarios.length === 0) return
  const results: string[][] = []
  const variation: string[][] = []
  const verdicts: string[] = []
  const targets: string[][] = []
  const targetNotes: string[] = []
  const ofVariant = (id: string): Measurement[] => runs.filter((m) => m.variant === id)
  for (const scenario of scenarios) {
    const baseline = scenario.variants.find((v) => v.baseline)!
    const base = ofVariant(baseline.id)
    const baseRps = median(base.map((m) => m.reqPerSec))
    const baseCpu = median(base.map((m) => m.serverCpuUsPerReq))
    const baseNorm = median(base.map((m) => m.normalized))
    for (const entry of entriesOf(scenario)) {
      const own = ofVariant(entry.id)
      const rps = median(own.map((m) => m.reqPerSec))
      const cpu = median(own.map((m) => m.serverCpuUsPerReq))
      const norm = median(own.map((m) => m.normalized))
      // Against the same round's baseline run: cancels drift slower than a round.
      const paired = own.map((m) => m.serverCpuUsPerReq / base.find((b) => b.round === m.round)!.serverCpuUsPerReq)
      const isBase = entry.baseline
      results.push([
        entry.id,
        integer(rps),
        isBase ? '1' : ratio(rps / baseRps),
        fixed(cpu, 2),
        isBase ? '1' : ratio(cpu / baseCpu)
      ])
      variation.push([
        entry.id,
        range(own.map((m) => m.reqPerSec / 1000), 1),
        range(own.map((m) => m.serverCpuUsPerReq), 1),
        isBase ? '' : `${fixed(median(paired), 3)} (${range(paired, 3)})`,
        fixed(norm, 3),
        isBase ? '1' : ratio(norm / baseNorm),
        `${fixed(median(own.map((m) => m.serverCpuShare)) * 100, 0)}% / ${fixed(median(own.map((m) => m.clientCpuShare)) * 100, 0)}%`
      ])
      if (entry.baseline) continue
      const line = `server CPU per request ${percent(cpu / baseCpu)} (client-normalized ${percent(norm / baseNorm)}), ` +
        `req/s ${percent(rps / baseRps)} vs ${baseline.id}`
      if (entry.control) {
        verdicts.push(`${entry.id}: ${line} — the same route measured twice: differences of this size are noise`)
      } else if (scenario.ratioTarget === null) {
        verdicts.push(`${entry.id}: ${line}`)
      } else {
        verdicts.push(`${entry.id}: ${line} — ${cpu / baseCpu <= 1 + scenario.ratioTarget ? 'within' : 'OVER'} the ${fixed(scenario.ratioTarget * 100, 0)}% target`)
      }
    }

    if (scenario.comparisons.length === 0) continue
    // Per-round paired differences in µs (and ratios); the A/A control's is the noise yardstick.
    const deltas = (
      subject: string,
      reference: string
    ): { raw: number[], normalized: number[], ratio: number[], normalizedRatio: number[] } => {
      const ref = ofVariant(reference)
      const pairs = ofVariant(subject).map((m) => [m, ref.find((r) => r.round === m.round)] as const).filter(
        ([, r]) => r !== undefined
      )
      return {
        raw: pairs.map(([m, r]) => m.serverCpuUsPerReq - r!.serverCpuUsPerReq),
        normalized: pairs.map(([m, r]) => (m.normalized / r!.normalized - 1) * r!.serverCpuUsPerReq),
        ratio: pairs.map(([m, r]) => m.serverCpuUsPerReq / r!.serverCpuUsPerReq),
        normalizedRatio: pairs.map(([m, r]) => m.normalized / r!.normalized)
      }
    }
    const control = entriesOf(scenario).find((e) => e.control)
    const noise = control === undefined ? undefined : deltas(control.id, baseline.id)
    if (noise !== undefined) {
      targetNotes.push(`${scenario.name}: the A/A control (${baseline.id} measured twice) differs from itself by ${signed(median(noise.raw), 2)} µs/req ` +
        `(rounds ${range(noise.raw, 2)}; client-normalized ${signed(median(noise.normalized), 2)}), a ratio of ${fixed(median(noise.ratio), 3)} ` +
        `(rounds ${range(noise.ratio, 3)}): a target tighter than that cannot be confirmed by this run`)
    }
    for (const c of scenario.comparisons) {
      const d = deltas(c.subject, c.reference)
      if (d.raw.length === 0) {
        targets.push([`${c.subject} − ${c.reference}`, 'not measured', '', '', '', `(${c.reference.split('/')[0]} did not run: add it to BENCH_SCENARIOS)`])
        continue
      }
      const hash = c.plusBodyHash ? hashes.get(c.subject)?.hashUs ?? Number.NaN : 0
      const allowance = c.maxExtraUs + hash
      const med = median(d.raw)
      const medNorm = median(d.normalized)
      const medRatio = median(d.ratio)
      const medNormRatio = median(d.normalizedRatio)
      const within = (delta: number, r: number): boolean => c.maxRatio === null ? delta <= allowance : r <= c.maxRatio
      const verdict = c.informational
        ? '(informational)'
        : `${within(med, medRatio) ? 'met' : 'NOT met'} (normalized: ${within(medNorm, medNormRatio) ? 'met' : 'not met'})`
      const target = c.informational
        ? ''
        : c.maxRatio !== null
          ? `≤ ${fixed(c.maxRatio, 2)}×`
          : c.plusBodyHash ? `≤ ${fixed(allowance, 2)} µs (${fixed(c.maxExtraUs, 2)} + hash ${fixed(hash, 2)})` : c.maxExtraUs === 0 ? '< 0 µs' : `≤ ${fixed(allowance, 2)} µs`
      targets.push([
        `${c.subject} − ${c.reference}`,
        `${signed(med, 2)} (${range(d.raw, 2)})`,
        signed(medNorm, 2),
        `${fixed(medRatio, 3)} (${range(d.ratio, 3)}) / ${fixed(medNormRatio, 3)}`,
        target,
        verdict
      ])
    }
  }
  console.log('\n## Results: medians over each scenario\'s rounds, ×base = ratio to the scenario\'s baseline (the hand-written route)\n')
  console.log(table(['variant', 'req/s', 'req/s ×base', 'server CPU µs/req', 'CPU µs/req ×base'], results, [false, true, true, true, true]))
  console.log('\n' + verdicts.join('\n'))
  console.log('\n## Variation\n')
  console.log(table(
    ['variant', 'k req/s range', 'CPU µs/req range', 'CPU ×base per round: median (range)', 'server/client CPU', 'server/client ×base', 'server / client CPU'],
    variation,
    [false, true, true, true, true, true, true]
  ))
  console.log('\nserver/client CPU: server CPU per request over autocannon\'s CPU per request, median; it cancels the')
  console.log('machine-wide speed changes that move both together (other tenants of a shared host)')
  if (targets.length > 0) {
    for (const micro of new Set(hashes.values())) reportHashes(micro)
    console.log('\n## Targets between two variants: subject − reference in µs per request, and subject / reference, paired by round (median, range over rounds)\n')
    console.log(table(['comparison', 'Δ server CPU µs/req', 'Δ client-normalized µs/req', 'ratio raw (range) / normalized', 'target', 'verdict'], targets, [false, true, true, true, false, false]))
    console.log('\nclient-normalized Δ: the server/client CPU ratio turned into µs; it assumes the client does the same work for')
    console.log('both responses, so it is biased where they differ (a 304 against a 200: the client reads less for the 304)')
    console.log('\n' + targetNotes.join('\n'))
  }
  const other = runs.map((m) => m.otherCpuShare).filter((x) => !Number.isNaN(x))
  if (other.length > 0) {
    console.log(`\nother processes of the machine used ${fixed(median(other) * 100, 0)}% of a core during the median run ` +
      `(max ${fixed(max(other) * 100, 0)}%)` + (max(other) > OTHER_LOAD_WARNING ? ': the machine was not idle, expect noise' : ''))
  }
  const repeated = runs.filter((m) => m.retries > 0).length
  if (repeated > 0) console.log(`${repeated} run(s) were repeated because of other load on the machine`)
  if (heapMB.first !== undefined && heapMB.last !== undefined) {
    console.log(`server heap after GC: ${fixed(heapMB.first, 1)} MB before the warm-up, ${fixed(heapMB.last, 1)} MB after the last round`)
  }
}

try {
  await main()
} catch (error) {
  console.error(error)
  process.exitCode = 1
}
killServer()
// autocannon or a stray socket must not keep the process alive.
process.exit()
