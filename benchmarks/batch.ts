/**
 * Batch scenarios: the same work done several ways (one bulk request, 1,000 single
 * requests), each way run to completion and timed, with the server's CPU time read
 * over IPC around it, as for the load scenarios.
 *
 * The client is node:http with a keep-alive agent, not autocannon: autocannon ends a
 * fixed-amount run on its one-second tick (a single request "takes" about 1 s), and
 * its `[<id>]` replacement sends a wrong Content-Length for short bodies.
 */
import http from 'node:http'
import { setTimeout as sleep } from 'node:timers/promises'
import type { BatchScenarioManifest, RequestSpec, WayManifest } from './protocol.js'
import { cpuMicros, machineBusyMicros, type Server } from './sampling.js'
import { roundOrder } from './order.js'
import { fixed, integer, max, median, min, ratio, table } from './stats.js'

/** Pause before each run, so the previous run's connection teardown is not billed to it. */
const PAUSE_MS = 250

export interface BatchRun {
  way: string
  /** 1, 2, ...; 0 and below: warm-up. */
  repetition: number
  /** Requests answered with the expected status. */
  ok: number
  amount: number
  errors: number
  /** Wall time from the first request to the last response, ms. */
  wallMs: number
  /** Server user + system CPU time of the run, ms. */
  serverCpuMs: number
  /** The client's (this process's) CPU time, ms. */
  clientCpuMs: number
  /** CPU time of every other process of the machine, ms (/proc/stat: 10 ms ticks, coarse for short runs). */
  otherCpuMs: number
  /** Whether the check request afterwards found the work done. */
  checked: boolean
  /** Start and end of the run, µs of the monotonic clock (that of `--cpu-prof` timestamps). */
  startedUs: number
  endedUs: number
}

/** One request on a keep-alive agent; resolves with the status once the whole response was read. */
function request (agent: http.Agent, port: number, spec: RequestSpec, body: string | undefined): Promise<number> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string | number> = { ...spec.headers }
    if (body !== undefined) headers['content-length'] = Buffer.byteLength(body)
    const req = http.request({ agent, host: '127.0.0.1', port, path: spec.path, method: spec.method, headers }, (res) => {
      res.on('error', reject)
      res.on('end', () => resolve(res.statusCode ?? 0))
      res.resume()
    })
    req.setTimeout(30_000, () => req.destroy(new Error('timed out')))
    req.on('error', reject)
    req.end(body)
  })
}

interface Outcome { statuses: Map<number, number>, errors: number }

/**
 * Sends `amount` requests over `connections` keep-alive connections, each connection
 * sending its next request when the previous answer has been read. A `numbered` body
 * has every `[<id>]` replaced by the request's index, so each is unique within a run.
 */
async function drive (port: number, way: WayManifest): Promise<Outcome> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: way.connections })
  const statuses = new Map<number, number>()
  let errors = 0
  let next = 0
  const body = way.request.body
  const worker = async (): Promise<void> => {
    while (next < way.amount) {
      const index = next++
      try {
        const status = await request(agent, port, way.request, body === undefined || !way.numbered ? body : body.replaceAll('[<id>]', String(index)))
        statuses.set(status, (statuses.get(status) ?? 0) + 1)
      } catch {
        errors++
      }
    }
  }
  await Promise.all(Array.from({ length: way.connections }, worker))
  agent.destroy()
  return { statuses, errors }
}

async function send (port: number, request: RequestSpec): Promise<{ status: number, body: string }> {
  const response = await fetch(`http://127.0.0.1:${port}${request.path}`, {
    method: request.method,
    ...(request.headers === undefined ? {} : { headers: request.headers }),
    ...(request.body === undefined ? {} : { body: request.body })
  })
  return { status: response.status, body: await response.text() }
}

async function runWay (
  srv: Server,
  scenario: BatchScenarioManifest,
  way: WayManifest,
  repetition: number
): Promise<BatchRun> {
  await sleep(PAUSE_MS)
  const reset = await send(srv.port, scenario.reset)
  if (reset.status !== (scenario.reset.expectStatus ?? 200) &&
    (scenario.reset.expectStatus !== undefined || reset.status >= 300)) {
    throw new Error(`${scenario.name}: reset ${scenario.reset.method} ${scenario.reset.path} answered ${reset.status}: ${reset.body.slice(0, 300)}`)
  }
  const { request } = way
  const before = await srv.cpu(true)
  const clientBefore = process.cpuUsage()
  const machineBefore = machineBusyMicros()
  const started = process.hrtime.bigint()
  const result = await drive(srv.port, way)
  const ended = process.hrtime.bigint()
  const wallMs = Number(ended - started) / 1e6
  const after = await srv.cpu(false)
  const machineAfter = machineBusyMicros()
  const clientCpu = cpuMicros(clientBefore, process.cpuUsage())
  const serverCpu = cpuMicros(before.usage, after.usage)
  const expected = request.expectStatus
  const ok = [...result.statuses]
    .filter(([status]) => expected === undefined ? status >= 200 && status < 300 : status === expected)
    .reduce((sum, [, count]) => sum + count, 0)
  let checked = true
  if (scenario.check !== undefined) {
    const answer = await send(srv.port, scenario.check.request)
    checked = answer.body === scenario.check.body
    if (!checked) console.log(`  !! ${way.id}: after the run ${scenario.check.request.path} answered ${answer.status} ${answer.body.slice(0, 200)}, expected ${scenario.check.body}`)
  }
  return {
    way: way.id,
    repetition,
    ok,
    amount: way.amount,
    errors: result.errors,
    wallMs,
    serverCpuMs: serverCpu / 1000,
    clientCpuMs: clientCpu / 1000,
    otherCpuMs: machineBefore === undefined || machineAfter === undefined
      ? Number.NaN
      : Math.max(0, machineAfter - machineBefore - serverCpu - clientCpu) / 1000,
    checked,
    startedUs: Number(started / 1000n),
    endedUs: Number(ended / 1000n)
  }
}

function formatBatchRun (run: BatchRun, width: number): string {
  const failed = run.ok !== run.amount || run.errors > 0 || !run.checked
  return `${run.way.padEnd(width)}  ${fixed(run.wallMs, 1).padStart(7)} ms  server CPU ${fixed(run.serverCpuMs, 1).padStart(7)} ms` +
    `  client CPU ${fixed(run.clientCpuMs, 1).padStart(7)} ms  other CPU ${Number.isNaN(run.otherCpuMs) ? '?' : fixed(run.otherCpuMs, 0)} ms` +
    `  ${run.ok}/${run.amount} as expected${failed ? `  !! ${run.errors} errors/timeouts${run.checked ? '' : ', check failed'}` : ''}`
}

/** The id of the A/A control of a batch scenario: its reference way run a second time. */
export const controlId = (scenario: BatchScenarioManifest): string => `${scenario.reference} (A/A)`

/** The ways a batch scenario runs: its own, and, with `control`, its reference a second time (the A/A control). */
export function batchWays (scenario: BatchScenarioManifest, control: boolean): WayManifest[] {
  const reference = scenario.ways.find((w) => w.id === scenario.reference)
  if (!control || reference === undefined) return scenario.ways
  return [...scenario.ways, { ...reference, id: controlId(scenario), name: `${reference.name} (A/A)`, label: 'the reference run again: A/A control, its difference is noise' }]
}

/**
 * Runs every way of a batch scenario `repetitions` times (after its warm-up ones), in a rotating
 * order; with `control`, the reference way twice per repetition (the A/A control).
 */
export async function runBatch (
  srv: Server,
  scenario: BatchScenarioManifest,
  repetitions: number,
  control: boolean
): Promise<BatchRun[]> {
  const ways = batchWays(scenario, control)
  const width = Math.max(...ways.map((w) => w.id.length))
  const runs: BatchRun[] = []
  for (let repetition = 1 - scenario.warmupRepetitions; repetition <= repetitions; repetition++) {
    console.log(repetition <= 0 ? `\n### ${scenario.name}: warm-up ${repetition + scenario.warmupRepetitions}/${scenario.warmupRepetitions}\n` : `\n### ${scenario.name}: repetition ${repetition}/${repetitions}\n`)
    for (const way of roundOrder(ways, repetition - 1)) {
      const run = await runWay(srv, scenario, way, repetition)
      console.log(formatBatchRun(run, width))
      if (repetition > 0) runs.push(run)
    }
  }
  return runs
}

export function batchFailed (run: BatchRun): boolean {
  return run.ok !== run.amount || run.errors > 0 || !run.checked
}

/** The report of one batch scenario: medians over repetitions, ratios to the reference way. */
export function reportBatch (
  scenario: BatchScenarioManifest,
  runs: BatchRun[],
  repetitions: number,
  control: boolean
): void {
  const rows: string[][] = []
  const of = (id: string): BatchRun[] => runs.filter((r) => r.way === id)
  const reference = of(scenario.reference)
  const refWall = median(reference.map((r) => r.wallMs))
  const refCpu = median(reference.map((r) => r.serverCpuMs))
  const lines: string[] = []
  const pairedCpu = (id: string): number[] => of(id).map((r) =>
    r.serverCpuMs / reference.find((b) => b.repetition === r.repetition)!.serverCpuMs)
  for (const way of batchWays(scenario, control)) {
    const own = of(way.id)
    const wall = median(own.map((r) => r.wallMs))
    const cpu = median(own.map((r) => r.serverCpuMs))
    const isRef = way.id === scenario.reference
    // Against the same repetition's reference run: cancels drift slower than a repetition.
    const paired = pairedCpu(way.id)
    rows.push([
      way.id,
      `${way.amount} × ${way.connections} conn`,
      fixed(wall, 1),
      `${fixed(min(own.map((r) => r.wallMs)), 1)}–${fixed(max(own.map((r) => r.wallMs)), 1)}`,
      isRef ? '1' : `${fixed(wall / refWall, 2)}×`,
      fixed(cpu, 1),
      `${fixed(min(own.map((r) => r.serverCpuMs)), 1)}–${fixed(max(own.map((r) => r.serverCpuMs)), 1)}`,
      isRef ? '1' : `${fixed(cpu / refCpu, 2)}× (${fixed(min(paired), 2)}–${fixed(max(paired), 2)})`,
      fixed(cpu * 1000 / scenario.items, 2),
      fixed(median(own.map((r) => r.clientCpuMs)), 1),
      integer(median(own.map((r) => r.otherCpuMs)))
    ])
    const failed = own.filter(batchFailed).length
    if (failed > 0) lines.push(`${way.id}: ${failed} run(s) with errors, unexpected statuses or a failed check: its figures are not valid`)
    else if (!isRef) lines.push(`${way.id}: ${ratio(wall / refWall)} wall time, ${ratio(cpu / refCpu)} server CPU vs ${scenario.reference}${way.id === controlId(scenario) ? ' — the same request run twice: differences of this size are noise' : ''}`)
  }
  const target = scenario.target
  if (target !== undefined) {
    const paired = median(pairedCpu(target.way))
    const noise = control ? ` (A/A control: ${fixed(median(pairedCpu(controlId(scenario))), 2)}×)` : ''
    lines.push(`target: ${target.label}: ${fixed(paired, 2)}× server CPU, median of the per-repetition ratios${noise}: ${paired <= target.maxRatio ? 'met' : 'NOT met'}`)
  }
  console.log(`\n## ${scenario.name}: medians over ${repetitions} repetitions, ×ref = ratio to ${scenario.reference}\n`)
  console.log(table(
    ['way', 'requests', 'wall ms', 'wall range', 'wall ×ref', 'server CPU ms', 'CPU range', 'CPU ×ref (per repetition range)', 'server CPU µs/item', 'client CPU ms', 'other CPU ms'],
    rows,
    [false, false, true, true, true, true, true, true, true, true, true]
  ))
  console.log('\n' + lines.join('\n'))
}
