// A generic view's scope (views layer): what its calls are limited to by the view itself (a parent,
// `getKwargs`), and the request's own values with it.
import type { FastifyRequest } from 'fastify'
import type { Criteria } from '../../stores/repository.js'
import { parentScope, type ParentState } from './parent.js'

/** A generic view, as its scope is read from it. */
interface Scoped {
  readonly request: FastifyRequest
  parentState?: ParentState | undefined
  getKwargs: (action?: string) => Criteria
}

/** The view's own scope of an action: its parent's, with `getKwargs(action)` over it. */
export function ownScope (view: Scoped, action: string | undefined): Criteria {
  const scope = parentScope(view)
  return scope === undefined ? view.getKwargs(action) : { ...scope, ...view.getKwargs(action) }
}

/**
 * The request's own values (its path, its body) with the view's kwargs over them, which win.
 * Without kwargs, the default, they are passed as they are: no copy per request.
 */
export function withKwargs (values: Record<string, unknown>, kwargs: Criteria): Record<string, unknown> {
  return Object.keys(kwargs).length === 0 ? values : { ...values, ...kwargs }
}
