/**
 * How deeply a value a schema accepts may nest, read once at registration: a body schema that
 * lets values nest without bound (`Type.Unknown`, `Type.Any`, records of those, recursive
 * schemas) gets a depth check before it is validated, and every other schema pays nothing.
 */
import type { SchemaNode } from '../core/schema-node.js'

const SCALARS = new Set(['string', 'number', 'integer', 'boolean', 'null'])

/** How many levels of arrays and objects nest in `value`, a `const` or `enum` member (small, written by the schema's author). */
function valueDepth (value: unknown): number {
  if (typeof value !== 'object' || value === null) return 0
  let deepest = 0
  for (const member of Object.values(value)) deepest = Math.max(deepest, valueDepth(member))
  return 1 + deepest
}

/** The deepest of several schemas; none at all allows no value, so no depth. */
const deepestOf = (schemas: SchemaNode | SchemaNode[] | undefined, closed = false): number =>
  Array.isArray(schemas) ? Math.max(0, ...schemas.map((s) => schemaDepth(s, closed))) : 0

/** TypeBox's `Record(Type.String(), ...)` pattern: it matches every member name, so no member is an "other" one. */
const EVERY_NAME = '^(.*)$'

/**
 * The most levels of arrays and objects a value valid for `schema` can nest, counting a
 * top-level array or object as one; `Infinity` when nothing bounds it: a schema that accepts
 * anything, an object open to other members, an array of anything, or a reference (which
 * may recurse). Conservative: a schema it cannot read is unbounded. `closed`: an enclosing
 * intersection evaluates the members of this object (`unevaluatedProperties: false`).
 */
export function schemaDepth (node: SchemaNode, closed = false): number {
  if (node.$ref !== undefined || node.not !== undefined) return Number.POSITIVE_INFINITY
  if (node.const !== undefined) return valueDepth(node.const)
  if (Array.isArray(node.enum)) return Math.max(0, ...node.enum.map(valueDepth))
  // Members of an intersection that closes the whole are closed by it.
  const closesMembers = node.unevaluatedProperties === false
  const combined = [deepestOf(node.anyOf), deepestOf(node.oneOf), deepestOf(node.allOf, closesMembers)]
  const hasCombined = [node.anyOf, node.oneOf, node.allOf].some(Array.isArray)
  const types = Array.isArray(node.type) ? node.type : node.type === undefined ? [] : [node.type]
  if (types.length === 0) return hasCombined ? Math.max(...combined) : Number.POSITIVE_INFINITY
  let deepest = Math.max(...combined)
  for (const type of types) {
    if (SCALARS.has(type)) continue
    if (type === 'array') {
      const items = node.items
      const prefix = node.prefixItems
      const inner = Array.isArray(items)
        ? deepestOf(items)
        : items === undefined
          ? (Array.isArray(prefix) &&
          node.maxItems !== undefined
              ? deepestOf(prefix)
              : Number.POSITIVE_INFINITY)
          : schemaDepth(items)
      deepest = Math.max(deepest, 1 + (Array.isArray(prefix) ? Math.max(inner, deepestOf(prefix)) : inner))
    } else if (type === 'object') {
      const properties = node.properties === undefined ? [] : Object.values(node.properties)
      const patterns = node.patternProperties ?? {}
      const extra = node.additionalProperties
      const shut = closed || extra === false || closesMembers || Object.hasOwn(patterns, EVERY_NAME)
      const open = shut ? 0 : typeof extra === 'object' && extra !== null ? schemaDepth(extra) : Number.POSITIVE_INFINITY
      deepest = Math.max(deepest, 1 + Math.max(deepestOf(properties), deepestOf(Object.values(patterns)), open))
    } else {
      return Number.POSITIVE_INFINITY
    }
  }
  return deepest
}
