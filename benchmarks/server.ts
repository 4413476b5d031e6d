/**
 * The benchmark server: every scenario's routes on one Fastify instance, bound to
 * 127.0.0.1 on an ephemeral port. Started by `run.js` with `child_process.fork`, so
 * its CPU time is its own; it answers the runner's `cpu` messages with
 * `process.cpuUsage()` and exits on `exit` (or when the runner goes away).
 */
import type { AddressInfo } from 'node:net'
import Fastify from 'fastify'
import { configureApp } from '../lib/index.js'
import type { AnyScenarioManifest, ParentMessage, ServerMessage, VariantManifest } from './protocol.js'
import { scenarios } from './scenarios/index.js'
import type { AnyScenario, VariantDefinition } from './scenarios/types.js'

if (process.send === undefined) {
  console.error('benchmarks/server.js is started by benchmarks/run.js (npm run bench), not on its own')
  process.exit(1)
}

function send (message: ServerMessage): void {
  process.send!(message)
}

function manifest (scenario: AnyScenario, ports: Record<string, number>): AnyScenarioManifest {
  if (scenario.kind === 'batch') {
    return {
      kind: 'batch',
      name: scenario.name,
      description: scenario.description,
      items: scenario.items,
      reset: scenario.reset,
      check: scenario.check,
      reference: `${scenario.name}/${scenario.reference}`,
      target: scenario.target === undefined ? undefined : { ...scenario.target, way: `${scenario.name}/${scenario.target.way}` },
      ways: scenario.ways.map((w) => ({
        id: `${scenario.name}/${w.name}`,
        name: w.name,
        label: w.label,
        request: w.request,
        amount: w.amount,
        connections: w.connections,
        numbered: w.numbered ?? false
      })),
      repetitions: scenario.repetitions,
      warmupRepetitions: scenario.warmupRepetitions ?? 2
    }
  }
  const id = (name: string): string => `${scenario.name}/${name}`
  const portOf = (server: string): number => {
    const port = ports[server]
    if (port === undefined) throw new Error(`scenario ${scenario.name}: no server ${server}`)
    return port
  }
  const variant = (definition: VariantDefinition, baseline: boolean): VariantManifest => ({
    id: id(definition.name),
    scenario: scenario.name,
    name: definition.name,
    label: definition.label,
    baseline,
    request: definition.server === undefined
      ? definition.request
      : {
          ...definition.request,
          port: portOf(definition.server)
        },
    sameBodyAsBaseline: definition.sameBodyAsBaseline ?? true
  })
  const variants = [variant(scenario.baseline, true), ...scenario.variants.map((v) => variant(v, false))]
  // A name with a slash is another scenario's variant, checked by the runner.
  const resolve = (name: string): string => name.includes('/') ? name : id(name)
  const comparisons = (scenario.comparisons ?? []).map((c) => {
    for (const name of [c.subject, c.reference]) {
      if (!name.includes('/') && !variants.some((v) => v.name === name)) throw new Error(`scenario ${scenario.name}: comparison names an unknown variant ${name}`)
    }
    return {
      subject: resolve(c.subject),
      reference: resolve(c.reference),
      label: c.label,
      maxExtraUs: c.maxExtraUs ?? 0,
      maxRatio: c.maxRatio ?? null,
      plusBodyHash: c.plusBodyHash ?? false,
      informational: c.informational ?? false
    }
  })
  return {
    kind: 'load',
    name: scenario.name,
    description: scenario.description,
    variants,
    settings: { rounds: scenario.rounds, duration: scenario.duration, warmup: scenario.warmup },
    ratioTarget: scenario.ratioTarget === undefined ? 0.03 : scenario.ratioTarget,
    comparisons
  }
}

// Configured first, as the README asks of an application: every scenario's context inherits
// the problem+json handlers, so the views it registers with configureApp: false start, and the
// hand-written route the items scenario adds before its views is no FV_ERR_CONFIGURE_FIRST.
const app = configureApp(Fastify({ logger: false }))
for (const scenario of scenarios) {
  await app.register(async (scope) => { await scenario.register(scope) })
}
await app.listen({ host: '127.0.0.1', port: 0 })
const ports = new Map<AnyScenario, Record<string, number>>()
for (const scenario of scenarios) {
  if (scenario.kind !== 'batch' && scenario.servers !== undefined) ports.set(scenario, await scenario.servers())
}

const gc = (globalThis as { gc?: () => void }).gc

process.on('message', (message: ParentMessage) => {
  if (message.type === 'cpu') {
    if (message.gc && gc !== undefined) gc()
    const usage = process.cpuUsage()
    send({ type: 'cpu', id: message.id, usage, heapUsed: process.memoryUsage().heapUsed })
  } else if (message.type === 'exit') {
    app.close().finally(() => process.exit(0))
  }
})
// The runner died without saying goodbye: do not outlive it.
process.on('disconnect', () => process.exit(0))

send({ type: 'ready', port: (app.server.address() as AddressInfo).port, scenarios: scenarios.map((s) => manifest(s, ports.get(s) ?? {})) })
