// Dependencies (routes layer): functions that refuse a request, turned into route hooks of their phase.
import type { FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify'
import { Forbidden } from '../http/errors.js'
import type { Dependency, DependencyFn } from './types.js'

type HookPhase = 'onRequest' | 'preValidation' | 'preHandler'

/** Route hooks by phase, in the order their dependencies were listed. */
export type DependencyHooks = Record<HookPhase, onRequestHookHandler[]>

/**
 * Fastify runs a two-argument hook as async and waits on its promise; a dependency
 * may be a plain function that returns nothing or throws, so each is wrapped once,
 * at registration, into a hook that Fastify can always await. A dependency that returns
 * (or resolves to) `false` denies the request with 403, the way a guard denies: ignoring
 * it would let the request through that its author meant to refuse.
 */
function toHook (dependency: DependencyFn): onRequestHookHandler {
  return async function dependencyHook (this: unknown, request: FastifyRequest, reply: FastifyReply): Promise<void> {
    if (await dependency.call(this, request, reply) === false) throw new Forbidden()
  }
}

function phaseOf (dependency: Dependency): [HookPhase, DependencyFn] {
  if (typeof dependency === 'function') return ['onRequest', dependency]
  if ('preHandler' in dependency) return ['preHandler', dependency.preHandler]
  if ('preValidation' in dependency) return ['preValidation', dependency.preValidation]
  return ['onRequest', dependency.onRequest]
}

/** Turns a route's dependencies into route-level Fastify hooks. */
export function dependencyHooks (dependencies: readonly Dependency[]): DependencyHooks {
  const hooks: DependencyHooks = { onRequest: [], preValidation: [], preHandler: [] }
  for (const dependency of dependencies) {
    const [phase, fn] = phaseOf(dependency)
    hooks[phase].push(toHook(fn))
  }
  return hooks
}
