// What a write on one object is (views layer): the row it selects, what must hold of that row when it
// is written, and what a write that selects nothing answers. A generic view describes its detail
// writes with one method (`describeWrite`), which features extend: a conditional request, a patch.
import type { Criteria, Precondition } from '../stores/repository.js'
import type { Awaitable } from '../core/maybe-promise.js'

/**
 * A detail write (update, partial update, destroy) as the generic view performs it: the repository
 * changes the object `criteria` select, evaluating every precondition on the current row in the same
 * atomic step as the write, and a write that changes nothing answers what `miss` gives.
 */
export interface WriteDescription {
  /** The object the write selects: the path's parameters, within the view's scope. */
  readonly criteria: Criteria
  /**
   * Checks of the current row, passed to the repository as one `options.precondition` and run in
   * order: the object permission first (a 403 before a 412: RFC 9110 §13.2.1 evaluates
   * preconditions after every other check), then the request's preconditions (If-Match).
   */
  readonly preconditions: readonly Precondition[]
  /**
   * Checks of the current row that the request's content depends on (the row a patch was applied
   * to must not have changed meanwhile: a 409), run after every precondition.
   */
  readonly contentChecks: readonly Precondition[]
  /** What a write that changed nothing answers: `null`, the action's 404, unless a feature knows better (a version changed: 412). */
  miss: () => Awaitable<null>
  /**
   * The row as the request read it before the write, when a feature read it (the object a patch
   * document was applied to, the one a conditional request's preconditions were checked on): what
   * the write seams receive as `current`. The checks above run on the row as it is when written.
   */
  readonly current?: unknown
}

/** A write that changes nothing answers the action's 404. */
export const NOT_FOUND = (): null => null

/** Every check of a write, preconditions first, as the one `options.precondition` a repository takes; `undefined` for none. */
export function onePrecondition (write: WriteDescription): Precondition | undefined {
  const { preconditions, contentChecks } = write
  const checks = contentChecks.length === 0 ? preconditions : [...preconditions, ...contentChecks]
  if (checks.length === 0) return undefined
  if (checks.length === 1) return checks[0]
  return (current) => { for (const check of checks) check(current) }
}

/**
 * A description with one more precondition of the request, run after the ones it has; `read`: the
 * row the request read to check it first, if it did (`current`).
 */
export const withPrecondition = (write: WriteDescription, check: Precondition, read: unknown): WriteDescription =>
  ({ ...write, preconditions: [...write.preconditions, check], current: read })

/** A description with one more check of what the content was made from (`read`, `current`), run after every precondition. */
export const withContentCheck = (write: WriteDescription, check: Precondition, read: unknown): WriteDescription =>
  ({ ...write, contentChecks: [...write.contentChecks, check], current: read })
