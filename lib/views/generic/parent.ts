// Nested resources (views layer): a view's parent, read once per request, and the scope it puts on the child.
import type { FastifyRequest } from 'fastify'
import { then, type Awaitable } from '../../core/maybe-promise.js'
import { NotFound } from '../../http/errors.js'
import { namedOf, type SchemaNode } from '../../core/schema-node.js'
import type { Criteria, RepositoryOptions } from '../../stores/repository.js'

// Nested resources (docs/generics.md, "Nested resources"): `/members/:memberId/loans/:id` reads
// its parent first, answers 404 when there is none, and limits every repository call of the
// child to the rows that belong to that parent. Declared once on the view, so that no action
// can forget the scope and serve another parent's children.

/** The repository a parent is read from: any store with a `get`, sync or async. */
export interface ParentRepository<P = unknown> {
  get (criteria: Criteria, options?: RepositoryOptions): Awaitable<P | null>
}

/**
 * How a nested view finds its parent and what the parent scopes:
 *
 * ```ts
 * static override parent = {
 *   repository: members,          // where the parent lives
 *   lookup: { id: 'memberId' },   // parent field <- path parameter of the prefix
 *   scope: { member_id: 'id' },   // child field <- parent field, on every call of the child
 *   name: 'Member'                // in the 404: "Member does not exist"
 * }
 * ```
 */
export interface ParentLookup<P = unknown> {
  /** The parent's repository. */
  readonly repository: ParentRepository<P>
  /** Parent field -> the path parameter holding its value (a parameter of the view's prefix). */
  readonly lookup: Readonly<Record<string, string>>
  /** Child field -> the parent field whose value it must hold: merged into every criteria and create of the child. */
  readonly scope: Readonly<Record<string, string>>
  /** The parent's name in the 404 (default `Parent`). */
  readonly name?: string
}

/** What a view keeps of its request's parent once it was read: the parent, and the criteria it puts on the child's calls. */
export interface ParentState { readonly object: unknown, readonly scope: Criteria }

/** A view as the parent's reads see it: its request, its class's `parent`, and what it read (a generic view declares `parentState`). */
interface Nested {
  readonly request: FastifyRequest
  parentState?: ParentState | undefined
}

/**
 * Reads the parent of this request once per view instance (every hook and the action share
 * it), as the view's class declares it (`parent`): nothing when it declares none; a 404 naming
 * the parent when it is missing.
 */
export function loadParent (nested: Nested): Awaitable<void> {
  const parent = (nested.constructor as { parent?: ParentLookup }).parent // a view's class, whose `parent` declares it nested
  if (parent === undefined || nested.parentState !== undefined) return undefined
  const params = nested.request.params as Record<string, unknown>
  const criteria: Criteria = {}
  for (const [field, param] of Object.entries(parent.lookup)) criteria[field] = params[param]
  return then(parent.repository.get(criteria), (object) => {
    if (object === null || object === undefined) throw new NotFound(`${parent.name ?? 'Parent'} does not exist`)
    const scope: Criteria = {}
    for (const [child, field] of Object.entries(parent.scope)) scope[child] = (object as Record<string, unknown>)[field]
    nested.parentState = { object, scope }
  })
}

/** The criteria the loaded parent puts on every call of the child; none without a parent. */
export function parentScope (view: Nested): Criteria | undefined {
  return view.parentState?.scope
}

/** The parent object this request's view loaded, or `undefined`. */
export function parentObject (view: Nested): unknown {
  return view.parentState?.object
}

const prefixNames = new WeakMap<object, readonly string[]>()

/**
 * The path parameters that select the object itself: the request's, without those of the
 * prefix (`memberId` of `/members/:memberId/loans/:id` names the parent, not a field of a loan).
 */
export function objectParams (view: object, params: Record<string, unknown>): Record<string, unknown> {
  // A view instance's class; registration made sure its prefixParams is an object schema.
  const schema = (view.constructor as { prefixParams?: SchemaNode }).prefixParams
  if (schema === undefined) return params
  let names = prefixNames.get(schema)
  if (names === undefined) prefixNames.set(schema, names = Object.keys(namedOf(schema.properties)))
  const own: Record<string, unknown> = {}
  for (const key of Object.keys(params)) if (!names.includes(key)) own[key] = params[key]
  return own
}
