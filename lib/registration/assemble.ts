// The last pass of registration (registration layer): one operation of a view route assembled into
// the options `fastify.route` takes, its hooks ordered phase by phase as the phase table says.
import type { RouteOptions } from 'fastify'
import { dependencyHooks, type DependencyHooks } from '../routes/dependencies.js'
import { mediaTypeHooks, type RouteContent } from '../http/media-type.js'
import { PHASES, type ContributedPhase, type HookSource, type Phase } from '../routes/phases.js'
import { toList } from '../core/list.js'
import type { ResolvedRouteOptions } from '../routes/types.js'
import type { Operation } from './contributions.js'

/** Options Fastify takes as they are, copied from the merged route options by name (an `errorHandler` of the route's own wins over the format's). */
const PASS_THROUGH = ['bodyLimit', 'logLevel', 'logSerializers', 'constraints', 'exposeHeadRoute', 'prefixTrailingSlash',
  'onResponse', 'onTimeout', 'onError', 'onRequestAbort', 'errorHandler'] as const

/** What the assembly of one operation needs besides it: what the earlier passes made of its route. */
export interface Assembly {
  /** The route's options, every level merged. */
  readonly merged: ResolvedRouteOptions
  /** What the route takes as content (the media-type hooks before parsing). */
  readonly content: RouteContent
  /** Fastify's route options the earlier passes chose: url, schema, handler, compilers, error handler, config. */
  readonly route: Pick<RouteOptions, 'url' | 'schema' | 'handler' | 'validatorCompiler' | 'serializerCompiler' | 'errorHandler' | 'config'>
}

/** The hooks each source brings to each phase of one operation. */
type Sources = Record<HookSource, (phase: Phase) => readonly unknown[]>

/** The hooks each source brings to the phases the phase table asks it for (`PHASES`). */
function sourcesOf (operation: Operation, assembly: Assembly): Sources {
  const dependencies = dependencyHooks(operation.dependencies)
  const { contribution } = operation
  return {
    // Asked for onRequest, preValidation and preHandler, the phases dependencies have.
    dependencies: (phase) => dependencies[phase as keyof DependencyHooks],
    // Asked for preParsing.
    content: () => mediaTypeHooks(operation.method, assembly.content),
    options: (phase) => toList(assembly.merged[phase]),
    // Asked for preValidation.
    preconditions: () => contribution.preconditions ?? [],
    // Asked for the phases a contribution has hooks in.
    view: (phase) => contribution[phase as ContributedPhase] ?? []
  }
}

/** The Fastify route options of one operation. */
export function assembleRoute (operation: Operation, assembly: Assembly): RouteOptions {
  const options: Record<string, unknown> = { method: operation.method, ...assembly.route }
  for (const key of PASS_THROUGH) {
    if (assembly.merged[key] !== undefined) options[key] = assembly.merged[key]
  }
  const sources = sourcesOf(operation, assembly)
  for (const { phase, sources: order } of PHASES) {
    const hooks = order.flatMap((source) => sources[source](phase))
    if (hooks.length > 0) options[phase] = hooks
  }
  return options as unknown as RouteOptions // assembled key by key from Fastify's own option types above
}
