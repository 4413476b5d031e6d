/**
 * Coercion of request values that arrive as strings (query, path, headers): to the number,
 * integer or boolean the schema asks for, from their plain decimal or literal form only
 * (docs/views.md#request-validation). Built once per route; a body is never coerced.
 */
import type { SchemaNode } from '../core/schema-node.js'

type Converter = (raw: string) => unknown

const INTEGER = /^-?\d+$/
const DECIMAL = /^-?\d+(?:\.\d+)?$/

function toInteger (raw: string): unknown {
  if (!INTEGER.test(raw)) return raw
  const n = Number(raw)
  return Number.isSafeInteger(n) ? n : raw
}

function toNumber (raw: string): unknown {
  return DECIMAL.test(raw) ? Number(raw) : raw
}

function toBoolean (raw: string): unknown {
  return raw === 'true' ? true : raw === 'false' ? false : raw
}

/**
 * The JSON types a schema accepts, through unions too; empty when it says nothing.
 * TypeBox writes a union as `anyOf` and a literal as `const` beside its `type`.
 */
function acceptedTypes (schema: SchemaNode): Set<string> {
  const types = new Set<string>()
  const visit = (s: SchemaNode): void => {
    // A string literal only ever matches itself, so it never keeps other strings from converting.
    if (s.const !== undefined) {
      if (typeof s.const !== 'string') types.add(typeof s.const)
    } else if (typeof s.type === 'string') {
      types.add(s.type)
    }
    if (Array.isArray(s.anyOf)) for (const m of s.anyOf) visit(m)
  }
  visit(schema)
  return types
}

function converterFor (schema: SchemaNode): Converter | undefined {
  const types = acceptedTypes(schema)
  // A value that may be a string stays one; anything else converts only from its
  // plain decimal or literal form, so `1e3`, `10.5` or `0x10` never pass as integers.
  if (types.has('string')) return undefined
  if (types.has('integer')) return types.has('number') ? toNumber : toInteger
  if (types.has('number')) return toNumber
  if (types.has('boolean')) return toBoolean
  return undefined
}

type FieldConversion = { key: string, convert: Converter | undefined, array: true } | {
  key: string,
  convert: Converter,
  array: false
}

/**
 * Builds, once per route, the in-place conversion of a query, path or header object:
 * strings become the numbers and booleans the schema asks for, and a parameter given
 * once where an array is expected becomes a one-element array.
 */
export function buildCoercion (schema: SchemaNode): ((data: Record<string, unknown>) => void) | undefined {
  const props = schema.properties
  if (props === undefined) return undefined
  const fields: FieldConversion[] = []
  for (const key of Object.keys(props)) {
    const prop = props[key]
    if (prop.type === 'array') {
      // An array property of a query, path or headers schema has one schema for its items (a tuple is not coerced).
      fields.push({ key, convert: converterFor(prop.items as SchemaNode), array: true })
    } else {
      const convert = converterFor(prop)
      if (convert !== undefined) fields.push({ key, convert, array: false })
    }
  }
  if (fields.length === 0) return undefined
  return (data) => {
    for (const { key, convert, array } of fields) {
      const raw = data[key]
      if (raw === undefined) continue
      if (array) {
        const list = Array.isArray(raw) ? raw : [raw]
        // Query and header values are strings, one or many.
        data[key] = convert === undefined ? list : list.map((v) => convert(v as string))
      } else if (typeof raw === 'string') {
        data[key] = convert(raw)
      }
    }
  }
}
