/**
 * JSON Patch (RFC 6902) and JSON Merge Patch (RFC 7396) on parsed JSON values, with errors
 * that point into the patch document, ready for a problem's `errors` entries.
 *
 * Pointer conventions of a `PatchError` (URI fragment form, as in `ProblemErrorEntry`):
 * - `#`               the JSON Patch is not an array;
 * - `#/<i>`           operation `i` is not an object;
 * - `#/<i>/op`        missing or unknown `op`;
 * - `#/<i>/path`      `path` missing, not a string, not a pointer, naming a reserved member, or
 *                     pointing where the operation cannot apply (missing target or parent, bad
 *                     or out-of-range index, `-` where it names no element, a parent that is no
 *                     container, the whole document for `remove`, a `move` into its own child);
 * - `#/<i>/from`      the same for `from` of `move` and `copy`;
 * - `#/<i>/value`     `value` missing, or the `test` operation failed;
 * - `#/a/b`           merge patch member `b` of member `a` is a reserved name.
 */

/** A patch that cannot be applied: `pointer` says where in the patch document, the message says why. */
export class PatchError extends Error {
  /** JSON Pointer into the patch document, in URI fragment form: `#/2/path`. */
  readonly pointer: string

  constructor (message: string, pointer: string) {
    super(message)
    this.name = 'PatchError'
    this.pointer = pointer
  }
}

/** Member names that would reach an object's prototype if a consumer ever assigned them. */
const RESERVED = new Set(['__proto__', 'constructor', 'prototype'])
const OPERATIONS = new Set(['add', 'remove', 'replace', 'move', 'copy', 'test'])
const NEEDS_VALUE = new Set(['add', 'replace', 'test'])
/** RFC 6901 §4: an array index is `0` or digits without a leading zero. */
const ARRAY_INDEX = /^(?:0|[1-9][0-9]*)$/
/** RFC 6901 §3: `~` is only ever followed by `0` or `1`. */
const BAD_ESCAPE = /~(?![01])/

type JsonObject = Record<string, unknown>

/** A parsed `path` or `from`: its text for messages, its tokens, and the patch pointer to blame. */
interface Location { text: string, tokens: string[], at: string }

interface Operation { op: string, path: Location, from: Location, value: unknown, index: number }

/** A JSON object: not `null`, not an array (what a resource's representation and a merge patch of it are). */
export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A member read only from the object itself: a patch never takes `op` or `value` from a prototype. */
const own = (object: JsonObject, key: string): unknown => Object.hasOwn(object, key) ? object[key] : undefined

/** Inserted values are copies: the patch and the result never share a node. */
const copy = (value: unknown): unknown => typeof value === 'object' && value !== null ? structuredClone(value) : value

const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1')

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

/**
 * Whether two JSON values are equal as RFC 6902 §4.6 defines it: numbers by value, strings
 * and literals exactly, arrays element by element, objects by the same own members in any order.
 */
export function jsonEqual (a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false
    return true
  }
  if (Array.isArray(b)) return false
  const keys = Object.keys(a)
  if (keys.length !== Object.keys(b).length) return false
  for (const key of keys) {
    if (!Object.hasOwn(b, key) || !jsonEqual((a as JsonObject)[key], (b as JsonObject)[key])) return false
  }
  return true
}

/**
 * Applies an RFC 6902 JSON Patch and returns the patched copy; `document` and `operations` are
 * never modified. The operation list is checked whole before anything is applied, then the
 * operations run in order (RFC 6902 §3) and the first failure throws a `PatchError`, so the
 * patch applies entirely or not at all (§5). Pointer conventions: see the top of this module.
 */
export function applyJsonPatch (document: unknown, operations: unknown): unknown {
  const list = compile(operations)
  let result = structuredClone(document)
  for (const operation of list) result = applyOperation(result, operation)
  return result
}

/**
 * Applies an RFC 7396 JSON Merge Patch (the §2 algorithm) and returns the merged copy: a
 * patch that is not an object replaces the target, `null` members remove, objects merge
 * member by member, anything else (arrays included) replaces. Inputs are never modified.
 * A member named `__proto__`, `constructor` or `prototype` in the patch's objects, at any
 * depth, throws a `PatchError` pointing at it (`#/a/__proto__`); array contents are values
 * and are not inspected, as with the `value` of a JSON Patch operation.
 */
export function applyMergePatch (target: unknown, patch: unknown): unknown {
  // Only an object patch keeps anything of the target; the copy lets the merge work in place.
  return merge(isObject(patch) ? structuredClone(target) : undefined, patch, '#')
}

function merge (target: unknown, patch: unknown, at: string): unknown {
  if (!isObject(patch)) return copy(patch)
  const result = isObject(target) ? target : {}
  for (const name of Object.keys(patch)) {
    const here = `${at}/${escapeToken(name)}`
    if (RESERVED.has(name)) throw new PatchError(`Member name ${name} is not allowed`, here)
    const value = patch[name]
    if (value === null) delete result[name]
    else result[name] = merge(Object.hasOwn(result, name) ? result[name] : undefined, value, here)
  }
  return result
}

/** Checks the operation list (RFC 6902 §4: members each operation requires) before any is applied. */
function compile (operations: unknown): Operation[] {
  if (!Array.isArray(operations)) throw new PatchError('A JSON Patch must be an array of operations', '#')
  return operations.map((raw: unknown, index): Operation => {
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
    return { op, path, from, value, index }
  })
}

function location (raw: JsonObject, member: 'path' | 'from', at: string): Location {
  const text = own(raw, member)
  const here = `${at}/${member}`
  if (typeof text !== 'string') throw new PatchError(text === undefined ? `Missing "${member}"` : `"${member}" must be a string`, here)
  const tokens = parsePointer(text, here)
  // Refused anywhere in the pointer, whatever the operation: no patch ever names a prototype.
  for (const token of tokens) if (RESERVED.has(token)) throw new PatchError(`Member name ${token} is not allowed`, here)
  return { text, tokens, at: here }
}

function applyOperation (document: unknown, operation: Operation): unknown {
  const { path, from } = operation
  switch (operation.op) {
    case 'add':
      return add(document, path, copy(operation.value))
    case 'remove':
      remove(document, path)
      return document
    case 'replace':
      return replace(document, path, copy(operation.value))
    case 'move': {
      // RFC 6902 §4.4: a remove at `from` then an add at `path`; onto itself it changes nothing.
      const value = resolve(document, from, from.tokens.length)
      if (from.text === path.text) return document
      remove(document, from)
      return add(document, path, value)
    }
    case 'copy':
      return add(document, path, structuredClone(resolve(document, from, from.tokens.length)))
    default: {
      // 'test' (RFC 6902 §4.6): the target must exist and equal the value.
      if (!jsonEqual(resolve(document, path, path.tokens.length), operation.value)) {
        throw new PatchError(`Test failed: ${path.text || 'the document'} is not ${preview(operation.value)}`, `#/${operation.index}/value`)
      }
      return document
    }
  }
}

/** RFC 6902 §4.1: the root is replaced, an object member set (replaced if present), an element inserted. */
function add (document: unknown, path: Location, value: unknown): unknown {
  if (path.tokens.length === 0) return value
  const slot = locate(document, path, true)
  if (slot.array !== undefined) slot.array.splice(slot.index, 0, value)
  else slot.object[slot.key] = value
  return document
}

/** RFC 6902 §4.2: the target must exist. Removing the root would leave no JSON document: refused. */
function remove (document: unknown, path: Location): void {
  if (path.tokens.length === 0) throw new PatchError('Cannot remove the whole document', path.at)
  const slot = locate(document, path, false)
  if (slot.array !== undefined) slot.array.splice(slot.index, 1)
  else delete slot.object[slot.key]
}

/** RFC 6902 §4.3: the target must exist; the root may be replaced. */
function replace (document: unknown, path: Location, value: unknown): unknown {
  if (path.tokens.length === 0) return value
  const slot = locate(document, path, false)
  if (slot.array !== undefined) slot.array[slot.index] = value
  else slot.object[slot.key] = value
  return document
}

type Slot = { array: unknown[], index: number, object?: undefined, key?: undefined }
  | { array?: undefined, index?: undefined, object: JsonObject, key: string }

/**
 * The container and key of a non-root target. Its parent must exist (RFC 6902 §4.1); the target
 * itself must exist too, unless `adding`, where an array index may also be its length or `-`.
 */
function locate (document: unknown, path: Location, adding: boolean): Slot {
  const depth = path.tokens.length - 1
  const parent = resolve(document, path, depth)
  const token = path.tokens[depth]
  if (Array.isArray(parent)) return { array: parent, index: arrayIndex(parent, token, path, depth, adding) }
  if (!isObject(parent)) throw new PatchError(`${depth === 0 ? 'The document' : `Path ${prefix(path, depth)}`} is neither an object nor an array`, path.at)
  if (!adding && !Object.hasOwn(parent, token)) throw missing(path, depth + 1)
  return { object: parent, key: token }
}

/** The value at the first `depth` tokens of `path`; each step must be an own member or an index in range. */
function resolve (document: unknown, path: Location, depth: number): unknown {
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
