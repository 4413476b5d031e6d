import type { FastifyInstance } from 'fastify'
import type { RequestSpec, ScenarioSettings } from '../protocol.js'

/** One endpoint of a scenario: the request autocannon sends to it. */
export interface VariantDefinition {
  /** Short name, unique within the scenario (`fastify`, `view`, ...). */
  name: string
  /** One line saying what the variant is. */
  label: string
  request: RequestSpec
  /** The name of one of the scenario's own `servers` that answers this variant; the shared server when absent. */
  server?: string
  /** Whether the sanity check requires the same body as the baseline (default true). */
  sameBodyAsBaseline?: boolean
}

/**
 * A target stated in µs per request between two variants: the subject may cost at
 * most `maxExtraUs` more server CPU per request than the reference (0: it must cost
 * less), plus, with `plusBodyHash`, the measured cost of one SHA-1 of the subject's
 * response body. Or, with `maxRatio`, a target stated as a ratio: the subject may cost
 * at most `maxRatio` times the reference. Both are measured in the same round, so the
 * difference (or the ratio) is paired.
 */
export interface ComparisonDefinition {
  /** Variant name. */
  subject: string
  /**
   * Variant name in this scenario, or `scenario/variant` in another one (reported
   * only when that scenario runs too, with the same number of rounds).
   */
  reference: string
  /** The target in words, as the report prints it. */
  label: string
  /** The µs target (0 when absent: the subject must cost less), unless `maxRatio` is given. */
  maxExtraUs?: number
  /** A target as a ratio of the subject's server CPU per request to the reference's (1.03: at most 3 % more); replaces `maxExtraUs`. */
  maxRatio?: number
  plusBodyHash?: boolean
  /** Only reported, not judged (no target). */
  informational?: boolean
}

/**
 * A load scenario: one endpoint written as a hand-written Fastify route (the
 * baseline) and as one or more view routes of this library, all registered on the
 * same server by `register`, each on its own path, each driven by autocannon for a
 * fixed time per round.
 */
export interface Scenario extends ScenarioSettings {
  kind?: 'load'
  /** Short name, unique among scenarios (`items`, ...). Selected with `BENCH_SCENARIOS`. */
  name: string
  description: string
  /** Registers every route of the scenario. Runs in its own encapsulated Fastify context. */
  register: (app: FastifyInstance) => void | Promise<void>
  /**
   * Starts servers of the scenario's own in the same process, for frameworks that
   * bring their own Fastify instance (NestJS): their ports by name, for `server`.
   */
  servers?: () => Promise<Record<string, number>>
  /** The hand-written Fastify route (or, when the scenario says so in its label, the reference every target is stated against). */
  baseline: VariantDefinition
  /** The same endpoint written with this library. */
  variants: VariantDefinition[]
  /**
   * The largest acceptable server CPU ratio of a variant to the baseline, minus 1
   * (default 0.03, the 3 % target); `null`: the scenario has no ratio target, only
   * its `comparisons`.
   */
  ratioTarget?: number | null
  /** Targets in µs per request between two variants, judged on per-round paired differences. */
  comparisons?: ComparisonDefinition[]
}

/** One way of doing a batch scenario's work: `amount` requests over `connections` keep-alive connections. */
export interface WayDefinition {
  name: string
  label: string
  request: RequestSpec
  /** How many requests make up the work (1 for a single bulk request). */
  amount: number
  connections: number
  /** Replace every `[<id>]` of the body with the request's index (0, 1, ...), unique within a run. */
  numbered?: boolean
}

/** The target of a batch scenario, as the report judges it (median of the per-repetition ratios). */
export interface BatchTarget {
  way: string
  maxRatio: number
  /** The target in words. */
  label: string
}

/**
 * A batch scenario: the same work (creating 1,000 items, say) done several ways.
 * Each way runs to completion; the runner measures its wall time and the server's
 * CPU time, `repetitions` times, and compares every way with `reference`. Before each
 * run it sends `reset` (not measured), and after it `check.request`, whose body must
 * equal `check.body` (the work was really done).
 */
export interface BatchScenario {
  kind: 'batch'
  name: string
  description: string
  register: (app: FastifyInstance) => void | Promise<void>
  /** Units of work each run does, whichever way (items created), for the per-item figures. */
  items: number
  reset: RequestSpec
  check?: { request: RequestSpec, body: string }
  /** The way the others are compared with (measured twice per repetition with the A/A control on). */
  reference: string
  /** A target: `way` may take at most `maxRatio` times the reference's server CPU. */
  target?: BatchTarget
  ways: WayDefinition[]
  /** Measured repetitions of every way (default 10; `BENCH_BATCH_REPS` overrides both). */
  repetitions?: number
  /** Unmeasured repetitions first (default 2). */
  warmupRepetitions?: number
}

export type AnyScenario = Scenario | BatchScenario
