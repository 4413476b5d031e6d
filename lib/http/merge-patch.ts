/**
 * JSON Merge Patch (RFC 7396) on parsed JSON values, bounded by a `PatchBudget`. A merge patch
 * costs what its size says (it never copies a part of the document), so its bounds are its
 * depth, checked before anything recurses, and the size of what it makes.
 */
import { DEFAULT_PATCH_LIMITS, jsonSize, PatchBudget } from './patch-budget.js'
import { RESERVED_MEMBERS, type PatchOptions } from './json-patch.js'
import { escapeToken } from '../core/json-depth.js'
import { isObject, PatchError } from './patch-error.js'

/**
 * Applies an RFC 7396 JSON Merge Patch (the §2 algorithm) and returns the merged copy: a
 * patch that is not an object replaces the target, `null` members remove, objects merge
 * member by member, anything else (arrays included) replaces. Inputs are never modified.
 * A member named `__proto__`, `constructor` or `prototype` in the patch's objects, at any
 * depth, throws a `PatchError` pointing at it (`#/a/__proto__`); array contents are values
 * and are not inspected, as with the `value` of a JSON Patch operation. A patch nested deeper
 * than `limits.maxDepth` is refused with a pointer to the first container too deep, and a
 * result larger than `limits.maxSize` is refused as a whole (`#`).
 */
export function applyMergePatch (
  target: unknown,
  patch: unknown,
  { limits = DEFAULT_PATCH_LIMITS, text }: PatchOptions = {}
): unknown {
  // Walked without recursion first: the merge below recurses only as deep as this allows.
  const patchSize = jsonSize(patch)
  const budget = new PatchBudget(limits, 0, patchSize)
  budget.measure(patch, '#', limits.maxDepth)
  // Only an object patch keeps anything of the target; the copy lets the merge work in place.
  const copy = (): unknown => text === undefined ? structuredClone(target) : JSON.parse(text)
  const result = merge(isObject(patch) ? copy() : undefined, patch, '#', budget)
  budget.resize(jsonSize(result), '#')
  return result
}

function merge (target: unknown, patch: unknown, at: string, budget: PatchBudget): unknown {
  if (!isObject(patch)) return budget.copy(patch, at)
  const result = isObject(target) ? target : {}
  for (const name of Object.keys(patch)) {
    const here = `${at}/${escapeToken(name)}`
    if (RESERVED_MEMBERS.has(name)) throw new PatchError(`Member name ${name} is not allowed`, here)
    const value = patch[name]
    if (value === null) delete result[name]
    else result[name] = merge(Object.hasOwn(result, name) ? result[name] : undefined, value, here, budget)
  }
  return result
}
