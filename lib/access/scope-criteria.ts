// Scope criteria (access layer): two sets of criteria that must both hold, as one set the stores read.
import { splitCriterion, type Criteria } from '../stores/repository.js'
import { compareValues } from '../stores/value-order.js'

/**
 * Criteria that hold where both `base` and `scope` hold. A store reads criteria as a conjunction,
 * one per key, so a key both name is kept twice under its two spellings (`member_id` and
 * `member_id__eq`); equal values are kept once. A permission's scope narrows what a view's own
 * criteria select and never widens it: `{ member_id: 1 }` scoped by `{ member_id: 2 }` selects nothing.
 */
export function scopedBy (base: Criteria, scope: Criteria): Criteria {
  const keys = Object.keys(scope)
  if (keys.length === 0) return base
  // Nothing to narrow: the scope as it is, no copy (a view without kwargs of its own, the usual case).
  if (Object.keys(base).length === 0) return scope
  const out: Criteria = { ...base }
  for (const key of keys) {
    const value = scope[key]
    if (!(key in out)) {
      out[key] = value
      continue
    }
    if (sameValue(out[key], value)) continue
    const [field, op] = splitCriterion(key)
    const alias = op === 'eq' ? (key === field ? `${field}__eq` : field) : undefined
    if (alias !== undefined && !(alias in out)) {
      out[alias] = value
      continue
    }
    const narrowed = narrower(op, out[key], value)
    if (narrowed !== undefined) {
      out[key] = narrowed.value
      continue
    }
    // Both spellings taken by other values, or an operator that has one spelling: both cannot hold
    // as one criterion, so the scope selects nothing rather than less than it says.
    out[`${field}__in`] = []
  }
  return out
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a === b || (isScalar(a) && isScalar(b) && compareValues(a, b) === 0)

const isScalar = (value: unknown): boolean => value !== null && typeof value !== 'object'

/** Of two bounds (or lists) on one field by one operator, the one that implies the other; `undefined` when neither does. */
function narrower (op: string, a: unknown, b: unknown): { value: unknown } | undefined {
  if (op === 'in' && Array.isArray(a) && Array.isArray(b)) {
    return { value: a.filter((item) => b.some((other) => sameValue(item, other))) }
  }
  if (!isScalar(a) || !isScalar(b) || typeof a !== typeof b) return undefined
  const order = compareValues(a, b)
  if (op === 'gt' || op === 'ge') return { value: order >= 0 ? a : b }
  if (op === 'lt' || op === 'le') return { value: order <= 0 ? a : b }
  return undefined
}
