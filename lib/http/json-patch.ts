/**
 * JSON Patch (RFC 6902) on parsed JSON values, bounded by a `PatchBudget`, with errors that
 * point into the patch document, ready for a problem's `errors` entries.
 *
 * Pointer conventions of a `PatchError` (URI fragment form, as in `ProblemErrorEntry`):
 * - `#`               the JSON Patch is not an array, or holds more operations than allowed;
 * - `#/<i>`           operation `i` is not an object;
 * - `#/<i>/op`        missing or unknown `op`;
 * - `#/<i>/path`      `path` missing, not a string, not a pointer, naming a reserved member, or
 *                     pointing where the operation cannot apply (missing target or parent, bad
 *                     or out-of-range index, `-` where it names no element, a parent that is no
 *                     container, the whole document for `remove`, a `move` into its own child),
 *                     or where the operation would make the document too large, too deep or too
 *                     costly to build;
 * - `#/<i>/from`      the same for `from` of `move` and `copy`;
 * - `#/<i>/value`     `value` missing, the `test` operation failed, or (`#/<i>/value/a/0`) a
 *                     container in the value nested deeper than allowed.
 */
import { DEFAULT_PATCH_LIMITS, jsonSize, PatchBudget, type PatchLimits } from './patch-budget.js'
import { escapeToken } from '../core/json-depth.js'
import { isObject, PatchError, type JsonObject } from './patch-error.js'

/** Member names that would reach an object's prototype if a consumer ever assigned them. */
export const RESERVED_MEMBERS: ReadonlySet<string> = new Set(['__proto__', 'constructor', 'prototype'])
const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])
const NEEDS_VALUE = new Set(['add', 'replace', 'test'])
/** RFC 6901 §4: an array index is `0` or digits without a leading zero. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/
/** RFC 6901 §3: `~` is only ever followed by `0` or `1`. */
const BAD_ESCAPE = /~(?![01])/

/** A parsed `path` or `from`: its text for messages, its tokens, and the patch pointer to blame. */
interface Location { text: string, tokens: string[], at: string }

/** A checked operation; `size` and `depth` are the JSON text length and the nesting of its `value`, measured once. */
interface Operation {
  op: string,
  path: Location,
  from: Location,
  value: unknown,
  size: number,
  depth: number,
  index: number
}

/** A member read only from the object itself: a patch never takes `op` or `value` from a prototype. */
const own = (object: JsonObject, key: string): unknown => Object.hasOwn(object, key) ? object[key] : undefined

/**
 * Splits an RFC 6901 JSON Pointer into its reference tokens: `''` is the whole document, any
 * other pointer starts with `/`; `~1` is `/` and `~0` is `~` (in that order, RFC 6901 §4).
 * A syntax error throws a `PatchError` blaming `at` (the pointer of this string in the patch).
 */
export function parsePointer (pointer: string, at = '#'): string[] {
  if (pointer === '') return []
  if (pointer[0] !== '/') throw new PatchError(`Pointer ${JSON.stringify(pointer)} must be empty or start with "/"`, at)
  const tokens = pointer.slice(1).split('/')
  for (let i = 0; i < tokens.length; i++) {
    const token = tokens[i]
    if (!token.includes('~')) continue
    if (BAD_ESCAPE.test(token)) throw new PatchError(`Pointer ${pointer} has a "~" not followed by 0 or 1`, at)
    tokens[i] = token.replace(/~1/g, '/').replace(/~0/g, '~')
  }
  return tokens
}

/** How a patch applies: its limits, and the JSON text of the document when the caller has it. */
export interface PatchOptions {
  /** The bounds of this patch (default `DEFAULT_PATCH_LIMITS`). */
  limits?: PatchLimits
  /**
   * The JSON text `document` was parsed from: the working copy is parsed from it again, which
   * is faster than a deep copy and safe at any depth, and its length is the document's size.
   */
  text?: string
}

/**
 * Applies an RFC 6902 JSON Patch and returns the patched copy; `document` and `operations` are
 * never modified. The operation list is checked whole before anything is applied, then the
 * operations run in order (RFC 6902 §3) and the first failure throws a `PatchError`, so the
 * patch applies entirely or not at all (§5). Each operation is charged to a `PatchBudget` as it
 * applies: no document larger or deeper than the limits allow is ever built, and the work is
 * bounded by the size of the patch and of the document. Pointer conventions: see the top of
 * this module.
 */
export function applyJsonPatch (
  document: unknown,
  operations: unknown,
  { limits = DEFAULT_PATCH_LIMITS, text }: PatchOptions = {}
): unknown {
  if (!Array.isArray(operations)) throw new PatchError('A JSON Patch must be an array of operations', '#')
  if (operations.length > limits.maxOperations) {
    throw new PatchError(`A JSON Patch may hold at most ${limits.maxOperations} operations; this one holds ${operations.length}`, '#')
  }
  const budget = new PatchBudget(limits, text?.length ?? jsonSize(document), jsonSize(operations))
  const list = operations.map((raw: unknown, index) => compile(raw, index, budget))
  let result: unknown = text === undefined ? structuredClone(document) : JSON.parse(text)
  for (const operation of list) result = applyOperation(result, operation, budget)
  return result
}

/** Checks one operation (RFC 6902 §4: the members each operation requires) before any is applied. */
function compile (raw: unknown, index: number, budget: PatchBudget): Operation {
  const at = `#/${index}`
  if (!isObject(raw)) throw new PatchError('An operation must be an object', at)
  const op = own(raw, 'op')
  if (typeof op !== 'string' || !OPERATIONS.has(op)) {
    throw new PatchError(op === undefined ? 'Missing "op"' : `Unknown op ${JSON.stringify(op)}`, `${at}/op`)
  }
  const path = location(raw, 'path', at)
  // Other operations ignore `from` (RFC 6902 §4: members an operation does not define are ignored).
  const from = op === 'move' || op === 'copy' ? location(raw, 'from', at) : path
  const value = own(raw, 'value')
  if (value === undefined && NEEDS_VALUE.has(op)) throw new PatchError('Missing "value"', `${at}/value`)
  // RFC 6902 §4.4: a location cannot move into one of its children. Pointer text and tokens
  // map one to one (escapes are canonical), so a text prefix is a token prefix.
  if (op === 'move' && path.text.startsWith(from.text + '/')) {
    throw new PatchError(`Cannot move ${from.text || 'the document'} into its own child ${path.text}`, path.at)
  }
  // A value no document may hold is refused here, before any operation applies.
  const size = NEEDS_VALUE.has(op) ? budget.measure(value, `${at}/value`, budget.limits.maxDepth) : 0
  return { op, path, from, value, size, depth: size === 0 ? 0 : budget.depth, index }
}

function location (raw: JsonObject, member: 'path' | 'from', at: string): Location {
  const text = own(raw, member)
  const here = `${at}/${member}`
  if (typeof text !== 'string') throw new PatchError(text === undefined ? `Missing "${member}"` : `"${member}" must be a string`, here)
  const tokens = parsePointer(text, here)
  // Refused anywhere in the pointer, whatever the operation: no patch ever names a prototype.
  for (const token of tokens) if (RESERVED_MEMBERS.has(token)) throw new PatchError(`Member name ${token} is not allowed`, here)
  return { text, tokens, at: here }
}

function applyOperation (document: unknown, operation: Operation, budget: PatchBudget): unknown {
  const { path, from, value } = operation
  // How many levels a value put at `path` may nest.
  const room = budget.limits.maxDepth - path.tokens.length
  switch (operation.op) {
    case 'add':
      if (operation.depth > room) throw tooDeep(path, budget)
      return insert(document, path, budget.copy(value, path.at), operation.size, budget)
    case 'remove':
      removeAt(document, path, budget)
      return document
    case 'replace':
      if (operation.depth > room) throw tooDeep(path, budget)
      return replaceAt(document, path, budget.copy(value, path.at), operation.size, budget)
    case 'move': {
      // RFC 6902 §4.4: a remove at `from` then an add at `path`; onto itself it changes nothing.
      const moved = resolve(document, from, from.tokens.length, budget)
      if (from.text === path.text) return document
      // The value leaves one place and takes another: only the member names change the size. It
      // is walked only to move it deeper, where it may not have room (a move up always has).
      if (path.tokens.length > from.tokens.length) budget.measure(moved, path.at, room, false)
      removeAt(document, from, budget, 0)
      return insert(document, path, moved, 0, budget)
    }
    case 'copy': {
      // Measured first, so that a copy the document cannot hold is refused before it is made.
      const source = resolve(document, from, from.tokens.length, budget)
      const size = budget.measure(source, path.at, room, false)
      budget.ensureRoom(size, path.at)
      return insert(document, path, budget.copy(source, path.at), size, budget)
    }
    default: {
      // 'test' (RFC 6902 §4.6): the target must exist and equal the value.
      const at = `#/${operation.index}/value`
      if (!budget.equal(resolve(document, path, path.tokens.length, budget), value, at)) {
        throw new PatchError(`Test failed: ${path.text || 'the document'} is not ${preview(value)}`, at)
      }
      return document
    }
  }
}

function tooDeep (path: Location, budget: PatchBudget): PatchError {
  return new PatchError(`The value at ${path.text} would make the document nest more than ${budget.limits.maxDepth} levels deep`, path.at)
}

/**
 * RFC 6902 §4.1: the root is replaced, an object member set (replaced if present), an element
 * inserted. `size` is the JSON text length of `value`, which the document grows by, with the
 * separators and the member's name (`PatchBudget.measure` counts them the same way).
 */
function insert (document: unknown, path: Location, value: unknown, size: number, budget: PatchBudget): unknown {
  if (path.tokens.length === 0) return newRoot(value, size, path, budget)
  const slot = locate(document, path, true, budget)
  if (slot.array !== undefined) {
    budget.resize(size + 1, path.at)
    // Every element after the index moves up one place.
    budget.shift(slot.array.length - slot.index, path.at)
    slot.array.splice(slot.index, 0, value)
  } else {
    budget.resize(
      Object.hasOwn(
        slot.object,
        slot.key
      )
        ? size - budget.measure(slot.object[slot.key], path.at)
        : size + slot.key.length + 4,
      path.at
    )
    slot.object[slot.key] = value
  }
  return document
}

/** A value that takes the place of the whole document: the document is its size from now on. */
function newRoot (value: unknown, size: number, path: Location, budget: PatchBudget): unknown {
  budget.resize(size - budget.size, path.at)
  return value
}

/** RFC 6902 §4.3: the target must exist; the root may be replaced. */
function replaceAt (document: unknown, path: Location, value: unknown, size: number, budget: PatchBudget): unknown {
  if (path.tokens.length === 0) return newRoot(value, size, path, budget)
  const slot = locate(document, path, false, budget)
  if (slot.array !== undefined) {
    budget.resize(size - budget.measure(slot.array[slot.index], path.at), path.at)
    slot.array[slot.index] = value
  } else {
    budget.resize(size - budget.measure(slot.object[slot.key], path.at), path.at)
    slot.object[slot.key] = value
  }
  return document
}

/**
 * RFC 6902 §4.2: the target must exist. Removing the root would leave no JSON document: refused.
 * `size` is the target's JSON text length when the caller measured it already.
 */
function removeAt (document: unknown, path: Location, budget: PatchBudget, size?: number): void {
  if (path.tokens.length === 0) throw new PatchError('Cannot remove the whole document', path.at)
  const slot = locate(document, path, false, budget)
  if (slot.array !== undefined) {
    budget.resize(-(size ?? budget.measure(slot.array[slot.index], path.at)) - 1, path.at)
    // Every element after the index moves down one place.
    budget.shift(slot.array.length - slot.index, path.at)
    slot.array.splice(slot.index, 1)
  } else {
    budget.resize(-(size ?? budget.measure(slot.object[slot.key], path.at)) - slot.key.length - 4, path.at)
    delete slot.object[slot.key]
  }
}

type Slot = { array: unknown[], index: number, object?: undefined, key?: undefined }
  | { array?: undefined, index?: undefined, object: JsonObject, key: string }

/**
 * The container and key of a non-root target. Its parent must exist (RFC 6902 §4.1); the target
 * itself must exist too, unless `adding`, where an array index may also be its length or `-`.
 */
function locate (document: unknown, path: Location, adding: boolean, budget: PatchBudget): Slot {
  const depth = path.tokens.length - 1
  const parent = resolve(document, path, depth, budget)
  const token = path.tokens[depth]
  if (Array.isArray(parent)) return { array: parent, index: arrayIndex(parent, token, path, depth, adding) }
  if (!isObject(parent)) throw new PatchError(`${depth === 0 ? 'The document' : `Path ${prefix(path, depth)}`} is neither an object nor an array`, path.at)
  if (!adding && !Object.hasOwn(parent, token)) throw missing(path, depth + 1)
  return { object: parent, key: token }
}

/** The value at the first `depth` tokens of `path`; each step must be an own member or an index in range. */
function resolve (document: unknown, path: Location, depth: number, budget: PatchBudget): unknown {
  budget.spend(depth, path.at)
  let node = document
  for (let n = 0; n < depth; n++) {
    const token = path.tokens[n]
    if (Array.isArray(node)) node = node[arrayIndex(node, token, path, n, false)]
    else if (isObject(node) && Object.hasOwn(node, token)) node = node[token]
    else throw missing(path, n + 1)
  }
  return node
}

/**
 * RFC 6902 §4.1: an index may be the array's length, or `-` (after the last element), only
 * where an element is being added; elsewhere it must name an existing element (§4.2–§4.6).
 */
function arrayIndex (array: unknown[], token: string, path: Location, depth: number, adding: boolean): number {
  if (token === '-') {
    if (adding) return array.length
    throw new PatchError(`Path ${prefix(path, depth + 1)} names no element: "-" is past the end of the array`, path.at)
  }
  if (!ARRAY_INDEX.test(token)) throw new PatchError(`Path ${prefix(path, depth + 1)} has an invalid array index ${JSON.stringify(token)}`, path.at)
  const index = Number(token)
  if (index < array.length || (adding && index === array.length)) return index
  if (adding) throw new PatchError(`Path ${prefix(path, depth + 1)} is past the end of the array (length ${array.length})`, path.at)
  throw missing(path, depth + 1)
}

function missing (path: Location, depth: number): PatchError {
  return new PatchError(`Path ${prefix(path, depth)} does not exist`, path.at)
}

/** The pointer text of the first `depth` tokens (escapes are canonical, so this is a prefix of the text). */
function prefix (path: Location, depth: number): string {
  return path.tokens.slice(0, depth).map((token) => '/' + escapeToken(token)).join('')
}

/** A failed test's expected value, shortened so a large value keeps the message one line. */
function preview (value: unknown): string {
  const text = JSON.stringify(value)
  return text.length > 60 ? text.slice(0, 57) + '...' : text
}
