/**
 * Pools the raw results of several runs (`BENCH_JSON` files) into per-round paired
 * estimates, mean ± one standard error over every round of every file:
 *
 *   node build/benchmarks/pool.js results-1.json results-2.json ...
 *
 * - Each variant against the mean of the same round's two hand-written measurements
 *   (the baseline and its A/A control; the baseline alone without a control), raw
 *   server CPU per request and client-normalized; the A/A row is control − baseline.
 * - Each target between two variants of a scenario: subject − reference in the same
 *   round, in µs and in %, raw and client-normalized, with the A/A difference beside it.
 * - Each way of a batch scenario against the reference way of the same repetition.
 *
 * "quiet" rounds are those in which no run saw other processes use more than 10 % of a core.
 */
import { readFileSync } from 'node:fs'
import type { AnyScenarioManifest, BatchScenarioManifest, ScenarioManifest } from './protocol.js'
import { fixed, meanSe, median, table } from './stats.js'

interface Run { variant: string, round: number, serverCpuUsPerReq: number, normalized: number, otherCpuShare: number }
interface BatchRun { way: string, repetition: number, wallMs: number, serverCpuMs: number }
interface Results {
  scenarios: AnyScenarioManifest[]
  runs: Run[]
  batchRuns?: Record<string, BatchRun[]>
  hashes?: Record<string, { hashUs: number }>
}

const OTHER_LOAD = 0.1

const pct = (values: number[]): string => meanSe(values.map((v) => v * 100))

const files = process.argv.slice(2)
if (files.length === 0) {
  console.error('usage: node build/benchmarks/pool.js <BENCH_JSON file> ...')
  process.exit(2)
}
const results = files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Results)

/** Every round of every file as a map variant id -> run, with whether it was quiet. */
const rounds: Array<{ byId: Map<string, Run>, quiet: boolean }> = []
for (const result of results) {
  const numbers = [...new Set(result.runs.map((r) => r.round))]
  for (const n of numbers) {
    const own = result.runs.filter((r) => r.round === n)
    rounds.push({
      byId: new Map(own.map((r) => [r.variant, r])),
      quiet: own.every((r) => !(r.otherCpuShare > OTHER_LOAD))
    })
  }
}

const loadScenarios = new Map<string, ScenarioManifest>()
const batchScenarios = new Map<string, BatchScenarioManifest>()
for (const result of results) {
  for (const s of result.scenarios) {
    if (s.kind === 'load') loadScenarios.set(s.name, s)
    else batchScenarios.set(s.name, s)
  }
}

console.log(`# Pooled: ${files.length} file(s), ${rounds.length} rounds, ${rounds.filter((r) => r.quiet).length} of them quiet\n`)

const ratioRows: string[][] = []
const deltaRows: string[][] = []
for (const scenario of loadScenarios.values()) {
  const base = scenario.variants.find((v) => v.baseline)!.id
  const control = `${base} (A/A)`
  for (const subset of ['all', 'quiet'] as const) {
    const used = rounds.filter((r) => r.byId.has(base) && (subset === 'all' || r.quiet))
    // Every round quiet: the second subset would repeat the first.
    if (subset === 'quiet' && used.length === rounds.filter((r) => r.byId.has(base)).length) continue
    const reference = (r: (typeof used)[number], key: 'serverCpuUsPerReq' | 'normalized'): number => {
      const c = r.byId.get(control)
      return c === undefined ? r.byId.get(base)![key] : (r.byId.get(base)![key] + c[key]) / 2
    }
    for (const v of scenario.variants.filter((x) => !x.baseline)) {
      const own = used.filter((r) => r.byId.has(v.id))
      ratioRows.push([v.id, subset, String(own.length),
        pct(own.map((r) => r.byId.get(v.id)!.serverCpuUsPerReq / reference(r, 'serverCpuUsPerReq') - 1)),
        pct(own.map((r) => r.byId.get(v.id)!.normalized / reference(r, 'normalized') - 1))])
    }
    const withControl = used.filter((r) => r.byId.has(control))
    if (withControl.length > 0) {
      ratioRows.push([`${control} − baseline`, subset, String(withControl.length),
        pct(withControl.map((r) => r.byId.get(control)!.serverCpuUsPerReq / r.byId.get(base)!.serverCpuUsPerReq - 1)),
        pct(withControl.map((r) => r.byId.get(control)!.normalized / r.byId.get(base)!.normalized - 1))])
    }
    for (const c of [...scenario.comparisons, { subject: control, reference: base, label: 'A/A', maxExtraUs: 0, maxRatio: null, plusBodyHash: false, informational: true }]) {
      const own = used.filter((r) => r.byId.has(c.subject) && r.byId.has(c.reference))
      if (own.length === 0) continue
      const hash = c.plusBodyHash
        ? median(results.map((x) => x.hashes?.[c.subject]?.hashUs ?? Number.NaN).filter((h) => !Number.isNaN(h)))
        : 0
      // Files written before ratio targets existed have no maxRatio.
      const maxRatio = c.maxRatio ?? null
      const target = c.informational ? '' : maxRatio !== null ? `≤ ${fixed(maxRatio, 2)}×` : c.plusBodyHash ? `≤ ${fixed(c.maxExtraUs + hash, 2)} µs` : c.maxExtraUs === 0 ? '< 0 µs' : `≤ ${fixed(c.maxExtraUs, 2)} µs`
      deltaRows.push([`${c.subject} − ${c.reference}`, subset, String(own.length),
        meanSe(own.map((r) => r.byId.get(c.subject)!.serverCpuUsPerReq - r.byId.get(c.reference)!.serverCpuUsPerReq)),
        meanSe(own.map((r) => (r.byId.get(c.subject)!.normalized / r.byId.get(c.reference)!.normalized - 1) *
          r.byId.get(c.reference)!.serverCpuUsPerReq)),
        pct(own.map((r) => r.byId.get(c.subject)!.serverCpuUsPerReq / r.byId.get(c.reference)!.serverCpuUsPerReq - 1)),
        pct(own.map((r) => r.byId.get(c.subject)!.normalized / r.byId.get(c.reference)!.normalized - 1)),
        target])
    }
  }
}
if (ratioRows.length > 0) {
  console.log('## Server CPU per request against the mean of the same round\'s hand-written measurements, % (mean ± SE)\n')
  console.log(table(['variant', 'rounds', 'n', 'raw', 'client-normalized'], ratioRows, [false, false, true, true, true]))
}
if (deltaRows.length > 0) {
  console.log('\n## Targets between two variants: subject − reference in the same round, µs per request, and subject / reference − 1, % (mean ± SE)\n')
  console.log(table(['comparison', 'rounds', 'n', 'raw µs', 'client-normalized µs', 'raw %', 'client-normalized %', 'target'], deltaRows, [false, false, true, true, true, true, true, false]))
}

for (const scenario of batchScenarios.values()) {
  // Repetition numbers repeat across files: pair within a file.
  const pairs: Array<Map<string, BatchRun>> = []
  for (const result of results) {
    const own = result.batchRuns?.[scenario.name] ?? []
    for (const n of [...new Set(own.map((r) => r.repetition))]) {
      pairs.push(new Map(own.filter((r) => r.repetition === n).map((r) => [r.way, r])))
    }
  }
  // The A/A control (the reference run twice per repetition), when the runs have it.
  const control = `${scenario.reference} (A/A)`
  const ways = [...scenario.ways.map((w) => w.id), ...(pairs.some((p) => p.has(control)) ? [control] : [])]
  const rows = ways.map((id) => {
    const own = pairs.filter((p) => p.has(id) && p.has(scenario.reference))
    return [id, String(own.length),
      fixed(median(own.map((p) => p.get(id)!.wallMs)), 1),
      fixed(median(own.map((p) => p.get(id)!.serverCpuMs)), 1),
      id === scenario.reference ? '1' : `${fixed(median(own.map((p) => p.get(id)!.wallMs / p.get(scenario.reference)!.wallMs)), 2)}×`,
      id === scenario.reference ? '1' : `${fixed(median(own.map((p) => p.get(id)!.serverCpuMs / p.get(scenario.reference)!.serverCpuMs)), 2)}×`]
  })
  console.log(`\n## ${scenario.name}: medians over repetitions, ratios paired by repetition (×ref = against ${scenario.reference})\n`)
  console.log(table(['way', 'n', 'wall ms', 'server CPU ms', 'wall ×ref', 'server CPU ×ref'], rows, [false, true, true, true, true, true]))
}
