// Object permissions (views layer): which actions a view's `checkObjectPermissions` judges, and the check as a precondition of a write.
import type { FastifyRequest } from 'fastify'
import type { Precondition } from '../../stores/repository.js'
import { ruleOf } from '../../access/access-rule.js'
import { refusal } from '../../access/authenticator.js'

// Object permissions (docs/generics.md, "Object permissions"): a view's `checkObjectPermissions`
// judges one object. The library calls it only when the view has its own, so a view without
// one pays nothing, and documents the 403 only where it can happen.

/** The library's `checkObjectPermissions`, which allows everything. */
export const LIBRARY_OBJECT_PERMISSIONS = new WeakSet<object>()

/** Whether a view class checks object permissions: its `checkObjectPermissions` is not the library's. */
export function checksObjectPermissions (klass: { prototype: object }): boolean {
  const check: unknown = Reflect.get(klass.prototype, 'checkObjectPermissions')
  return typeof check === 'function' && !LIBRARY_OBJECT_PERMISSIONS.has(check)
}

/** The actions that act on objects the client names: where a 403 of an object permission can happen. */
export const OBJECT_ACTIONS = ['retrieve', 'update', 'partialUpdate', 'destroy', 'restore', 'bulkUpdate', 'updateMany', 'bulkDelete'] as const

/** An action whose objects `checkObjectPermissions` can judge. */
export type ObjectAction = typeof OBJECT_ACTIONS[number]

/** The actions that name no object: a collection's. */
const COLLECTION_ACTIONS: ReadonlySet<string> = new Set(['list', 'create', 'bulkCreate'])

/**
 * Whether a view's `checkObjectPermissions` judges the objects of an action: it has its own, and
 * its `objectPermissionActions` names the action; unset, every action but a collection's, a route
 * of the view's own on one object included (DRF's `get_object()` judges them all). Only there is
 * it called, and only there is its 403 documented.
 */
export function judges (klass: object, action: string): boolean {
  if (!checksObjectPermissions(klass as { prototype: object })) return false // a view class
  const only: readonly string[] | undefined = (klass as {
    objectPermissionActions?: readonly ObjectAction[]
  }).objectPermissionActions
  return only === undefined ? !COLLECTION_ACTIONS.has(action) : only.includes(action)
}

/** A view that may judge objects. */
interface Judging { request: FastifyRequest, checkObjectPermissions: (object: unknown, action: string) => void }

/**
 * The actions whose objects no criteria select: creates (the rule holds of what they store) and a
 * bulk PUT, whose rows the repository finds by key alone.
 */
const UNSELECTED: ReadonlySet<string> = new Set(['create', 'bulkCreate', 'bulkUpdate'])

/**
 * Whether the request's permissions must check objects of `action` one by one: their criteria do
 * not say the whole rule, or no criteria select the action's objects. Criteria scope every read
 * and write besides (`getScopeKwargs`): a row outside them is never read.
 */
function rulesObjects (request: FastifyRequest, action: string): boolean {
  const rule = ruleOf(request)
  return rule !== undefined && (!rule.exact || UNSELECTED.has(action))
}

/**
 * Judges one object of `action`: the object rule of the request's permissions (a 403, or a 401 for
 * an anonymous request), then the view's own `checkObjectPermissions` where it judges the action.
 */
export function judgeObject (view: object, object: unknown, action: string): void {
  const judging = view as Judging // a generic view
  const rule = rulesObjects(judging.request, action) ? ruleOf(judging.request) : undefined
  if (rule !== undefined && !rule.test(object)) throw refusal(judging.request, rule.why(object))
  if (judges(view.constructor, action)) judging.checkObjectPermissions(object, action)
}

/**
 * The object permission of an action as a precondition of its write: the repository calls it
 * with the current row inside the write's atomic step, so the row judged is the row changed.
 * `undefined` when nothing judges the objects of the action.
 */
export function objectPermission (view: object, action: string, change?: Change): Precondition | undefined {
  const { request } = view as Judging // a generic view
  const rule = ruleOf(request)
  const keeps = change !== undefined && rule !== undefined
  if (!judges(view.constructor, action) && !rulesObjects(request, action) && !keeps) return undefined
  return (current) => {
    judgeObject(view, current, action)
    if (!keeps) return
    // A write may not move a row out of what its writer may see (giving a loan to another member):
    // the row as written must pass the rule too, as what a create stores must.
    const after = { ...current as Record<string, unknown>, ...change(current) } // a stored row
    if (!rule.test(after)) throw refusal(request, rule.why(after))
  }
}

/** What a write sets on the current row it changes: the values of an update, the item of a bulk PUT. */
export type Change = (current: unknown) => Record<string, unknown> | undefined
