/**
 * What the benchmark runner (parent) and the benchmark server (child) tell each
 * other over the `child_process.fork` IPC channel.
 */

/** The HTTP request autocannon repeats for one variant. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Absolute path on the benchmark server, query included. */
  path: string
  /** The port of a server of its own in the benchmark process (a peer framework's); the main server's when absent. */
  port?: number
  headers?: Record<string, string>
  body?: string
  /** The status every response must have; any 2xx when absent. */
  expectStatus?: number
}

/**
 * A scenario's own defaults. `BENCH_ROUNDS`, `BENCH_DURATION` and `BENCH_WARMUP`,
 * when set, override them for every scenario.
 */
export interface ScenarioSettings {
  rounds?: number
  /** Seconds per measured run. */
  duration?: number
  /** Seconds of unmeasured warm-up per variant. */
  warmup?: number
}

/** One measured endpoint of a scenario, as plain data. */
export interface VariantManifest {
  /** `scenario/variant`: unique, used by filters and in the output. */
  id: string
  scenario: string
  name: string
  /** One line saying what the variant is. */
  label: string
  /** The hand-written Fastify route the other variants of the scenario are compared with. */
  baseline: boolean
  request: RequestSpec
  /** Whether the sanity check requires the same body as the baseline (default true). */
  sameBodyAsBaseline: boolean
}

/** A µs-per-request target between two variants (ids), as plain data. */
export interface ComparisonManifest {
  subject: string
  reference: string
  label: string
  maxExtraUs: number
  /** A ratio target (subject / reference), replacing `maxExtraUs`; `null` for a µs target. */
  maxRatio: number | null
  plusBodyHash: boolean
  informational: boolean
}

export interface ScenarioManifest {
  kind: 'load'
  name: string
  description: string
  variants: VariantManifest[]
  settings: ScenarioSettings
  ratioTarget: number | null
  comparisons: ComparisonManifest[]
}

/** One way of a batch scenario, as plain data. */
export interface WayManifest {
  /** `scenario/way`. */
  id: string
  name: string
  label: string
  request: RequestSpec
  amount: number
  connections: number
  numbered: boolean
}

export interface BatchScenarioManifest {
  kind: 'batch'
  name: string
  description: string
  items: number
  reset: RequestSpec
  check: { request: RequestSpec, body: string } | undefined
  /** Way id. */
  reference: string
  /** A server CPU ratio target of one way (id) to the reference, if any. */
  target: { way: string, maxRatio: number, label: string } | undefined
  ways: WayManifest[]
  repetitions: number | undefined
  warmupRepetitions: number
}

export type AnyScenarioManifest = ScenarioManifest | BatchScenarioManifest

/** Parent -> child. */
export type ParentMessage =
  /** Collect garbage (when exposed), then answer with the CPU used so far. */
  | { type: 'cpu', id: number, gc: boolean }
  /** Close the server and exit (so `--cpu-prof` can write its profile). */
  | { type: 'exit' }

/** Child -> parent. */
export type ServerMessage =
  | { type: 'ready', port: number, scenarios: AnyScenarioManifest[] }
  /** `usage` is read first, so the rest of the answer is not billed to a run. */
  | { type: 'cpu', id: number, usage: NodeJS.CpuUsage, heapUsed: number }
