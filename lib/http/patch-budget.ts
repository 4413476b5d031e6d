// The cost of a patch (http layer): the bounds a merge patch or JSON Patch is charged against as it applies (operations, depth, size, steps).
import { firstTooDeep } from '../core/json-depth.js'
import { isObject, PatchError, type JsonObject } from './patch-error.js'

/**
 * What applying one patch document may cost, decided when the route is registered and
 * enforced while the patch applies (docs/patch.md, "Limits"), so that a small patch can never
 * build a large document or take long: a JSON Patch `copy` doubles what it copies, and a
 * chain of them grows a document exponentially in the number of operations.
 */
export interface PatchLimits {
  /** The operations a JSON Patch may hold. */
  readonly maxOperations: number
  /** How many levels arrays and objects may nest, in a patch's values and in the patched document. */
  readonly maxDepth: number
  /** The largest patched document, in characters of its JSON text. */
  readonly maxSize: number
}

/**
 * The work a patch may take, in steps, per character of the patch and of the document it
 * applies to: a step is a value measured, copied or compared, a pointer token followed, or
 * `SHIFTS_PER_STEP` array elements moved. Four is enough to read the patch, read the document,
 * and copy or move every part of the document twice.
 */
export const WORK_PER_CHARACTER = 4

/** Array elements an insertion or removal may move for one step (a move is a memory copy, a step a walk in JavaScript). */
export const SHIFTS_PER_STEP = 64

/** The limits of a route that sets none: 1,000 operations, 128 levels, Fastify's default body limit of 1 MiB. */
export const DEFAULT_PATCH_LIMITS: PatchLimits = { maxOperations: 1000, maxDepth: 128, maxSize: 1024 * 1024 }

/** The JSON text length of a value that is not a container. */
function scalarSize (value: unknown): number {
  if (typeof value === 'string') return value.length + 2
  if (typeof value === 'number') return String(value).length
  return value === false ? 5 : 4 // true, null
}

/**
 * The running cost of applying one patch: the size of the document as patched so far, and the
 * work left. Every walk over a value goes through it and is charged as it goes, so an
 * operation that would exceed a limit is refused before anything large is built.
 */
export class PatchBudget {
  readonly limits: PatchLimits
  /** Characters of the JSON text of the document as patched so far. */
  size: number
  /** How many levels the value `measure` last walked nests (0 for a number, 1 for `[1]`). */
  depth = 0
  #work: number

  readonly #allowed: number

  /** A budget for patching a document of `size` characters with a patch of `patchSize` characters. */
  constructor (limits: PatchLimits, size: number, patchSize = 0) {
    this.limits = limits
    this.size = size
    this.#allowed = WORK_PER_CHARACTER * (size + patchSize)
    this.#work = this.#allowed
  }

  /** Spends `units` steps of work; the patch is refused, at `at`, when the budget runs out. */
  spend (units: number, at: string): void {
    this.#work -= units
    if (this.#work < 0) throw new PatchError(`Applying the patch takes more than ${this.#allowed} steps, ${WORK_PER_CHARACTER} per character of the patch and the document`, at)
  }

  /** Spends the work of moving `count` array elements by one place. */
  shift (count: number, at: string): void {
    this.spend(Math.ceil(count / SHIFTS_PER_STEP), at)
  }

  /** Grows (or shrinks) the document by `delta` characters; the operation at `at` is refused past `maxSize`. */
  resize (delta: number, at: string): void {
    this.ensureRoom(delta, at)
    this.size += delta
  }

  /** Refuses, at `at`, an operation that would grow the document by `delta` past `maxSize`. */
  ensureRoom (delta: number, at: string): void {
    if (this.size + delta > this.limits.maxSize) throw new PatchError(`The patched document would be larger than ${this.limits.maxSize} characters`, at)
  }

  /**
   * The JSON text length of `value`, walked without recursion, one step of work per value:
   * brackets, and per member a separator (and, in an object, the quoted name and a colon).
   * A container nested more than `room` levels deep inside `value` is refused before any
   * deeper level is read, with a pointer to it: `at`, followed by its place inside `value`
   * when `inside` (a patch's own value), `at` alone otherwise (a part of the document).
   * `depth` then holds how deeply `value` nests.
   */
  measure (value: unknown, at: string, room = Number.POSITIVE_INFINITY, inside = true): number {
    if (typeof value !== 'object' || value === null) {
      this.spend(1, at)
      this.depth = 0
      return scalarSize(value)
    }
    // Containers still to read, each with how deep it is; scalars are counted where they stand.
    const pending: Array<{ node: object, level: number }> = [{ node: value, level: 1 }]
    let size = 0
    let deepest = 0
    for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
      const { node, level } = next
      if (level > room) {
        // measure found one, so firstTooDeep finds it too
        throw new PatchError(`Values may nest at most ${this.limits.maxDepth} levels deep`, inside ? at + String(firstTooDeep(value, room)) : at)
      }
      if (level > deepest) deepest = level
      const keys = Array.isArray(node) ? undefined : Object.keys(node)
      const members: unknown[] = Array.isArray(node) ? node : Object.values(node)
      this.spend(members.length + 1, at)
      // Brackets, a separator per member, and each member's quoted name and colon.
      size += 2 + members.length
      if (keys !== undefined) for (const key of keys) size += key.length + 3
      for (const member of members) {
        if (typeof member === 'object' && member !== null) {
          pending.push({ node: member, level: level + 1 })
        } else {
          size += scalarSize(member)
        }
      }
    }
    this.depth = deepest
    return size
  }

  /**
   * A deep copy of a value already measured (so its depth is bounded and recursion is safe),
   * one step per value. Strings are shared: JavaScript strings are immutable.
   */
  copy (value: unknown, at: string): unknown {
    this.spend(1, at)
    if (typeof value !== 'object' || value === null) return value
    if (Array.isArray(value)) return value.map((item) => this.copy(item, at))
    const out: JsonObject = {}
    for (const [key, member] of Object.entries(value)) out[key] = this.copy(member, at)
    return out
  }

  /**
   * Whether two JSON values are equal as RFC 6902 §4.6 defines it: numbers by value, strings
   * and literals exactly, arrays element by element, objects by the same own members in any
   * order. One step per pair compared, and per member listed; it recurses only as deep as both
   * values go, and one of them is always a measured patch value.
   */
  equal (a: unknown, b: unknown, at: string): boolean {
    this.spend(1, at)
    if (a === b) return true
    if (Array.isArray(a)) {
      if (!Array.isArray(b) || a.length !== b.length) return false
      for (let i = 0; i < a.length; i++) if (!this.equal(a[i], b[i], at)) return false
      return true
    }
    if (!isObject(a) || !isObject(b)) return false
    const keys = Object.keys(a)
    const other = Object.keys(b)
    this.spend(keys.length + other.length, at)
    if (keys.length !== other.length) return false
    for (const key of keys) {
      if (!Object.hasOwn(b, key) || !this.equal(a[key], b[key], at)) return false
    }
    return true
  }
}

/** No limit: for measuring and comparing outside a patch. */
const UNBOUNDED = new PatchBudget(
  { maxOperations: Number.POSITIVE_INFINITY, maxDepth: Number.POSITIVE_INFINITY, maxSize: Number.POSITIVE_INFINITY },
  Number.POSITIVE_INFINITY
)

/** The JSON text length of a value as `PatchBudget.measure` counts it, with no limit. */
export const jsonSize = (value: unknown): number => UNBOUNDED.measure(value, '#')

/**
 * Whether two JSON values are equal as RFC 6902 §4.6 defines it (`PatchBudget.equal`), with no
 * limit: for values whose depth is already bounded.
 */
export const jsonEqual = (a: unknown, b: unknown): boolean => UNBOUNDED.equal(a, b, '#')
