import type { FastifyInstance } from 'fastify'
import type { RequestSpec } from '../protocol.js'

/** One endpoint of a scenario: the request autocannon sends to it. */
export interface VariantDefinition {
  /** Short name, unique within the scenario (`fastify`, `view`, ...). */
  name: string
  /** One line saying what the variant is. */
  label: string
  request: RequestSpec
  /** Whether the sanity check requires the same body as the baseline (default true). */
  sameBodyAsBaseline?: boolean
}

/**
 * A benchmark scenario: one endpoint written as a hand-written Fastify route (the
 * baseline) and as one or more view routes of this library, all registered on the
 * same server by `register`, each on its own path.
 */
export interface Scenario {
  /** Short name, unique among scenarios (`items`, ...). Selected with `BENCH_SCENARIOS`. */
  name: string
  description: string
  /** Registers every route of the scenario. Runs in its own encapsulated Fastify context. */
  register: (app: FastifyInstance) => void | Promise<void>
  /** The hand-written Fastify route. */
  baseline: VariantDefinition
  /** The same endpoint written with this library. */
  variants: VariantDefinition[]
}
