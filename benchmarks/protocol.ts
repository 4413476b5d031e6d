/**
 * What the benchmark runner (parent) and the benchmark server (child) tell each
 * other over the `child_process.fork` IPC channel.
 */

/** The HTTP request autocannon repeats for one variant. */
export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'
  /** Absolute path on the benchmark server, query included. */
  path: string
  headers?: Record<string, string>
  body?: string
  /** The status every response must have; any 2xx when absent. */
  expectStatus?: number
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

export interface ScenarioManifest {
  name: string
  description: string
  variants: VariantManifest[]
}

/** Parent -> child. */
export type ParentMessage =
  /** Collect garbage (when exposed), then answer with the CPU used so far. */
  | { type: 'cpu', id: number, gc: boolean }
  /** Close the server and exit (so `--cpu-prof` can write its profile). */
  | { type: 'exit' }

/** Child -> parent. */
export type ServerMessage =
  | { type: 'ready', port: number, scenarios: ScenarioManifest[] }
  /** `usage` is read first, so the rest of the answer is not billed to a run. */
  | { type: 'cpu', id: number, usage: NodeJS.CpuUsage, heapUsed: number }
