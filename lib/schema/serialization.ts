// Aliases, nulls and attributes (schema layer): the schema rewritten as it is on the wire, and the compiled
// renaming, projection and pruning of the values serialized with it.
import type { TSchema } from '@sinclair/typebox'
import { asTypeBox, isArrayNode, isObjectNode, type SchemaNode } from '../core/schema-node.js'
import { isRecord } from '../core/record.js'

type Transform = (value: unknown) => unknown

/**
 * Rebuilds a schema bottom-up: `visit` receives each object schema after its
 * properties, items and members were rebuilt. Untouched parts are shared, not copied.
 */
function rebuild (schema: SchemaNode, visit: (s: SchemaNode) => SchemaNode): SchemaNode {
  let out = schema
  const edit = (key: string, value: unknown): void => {
    if (out === schema) out = { ...schema }
    out[key] = value
  }
  if (isObjectNode(schema)) {
    const props = schema.properties
    const next: Record<string, SchemaNode> = {}
    let changed = false
    for (const key of Object.keys(props)) {
      next[key] = rebuild(props[key], visit)
      changed ||= next[key] !== props[key]
    }
    if (changed) edit('properties', next)
  }
  if (isArrayNode(schema)) {
    const items = rebuild(schema.items, visit)
    if (items !== schema.items) edit('items', items)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const members = schema[key]
    if (!Array.isArray(members)) continue
    const next = members.map((m) => rebuild(m, visit))
    if (next.some((m, i) => m !== members[i])) edit(key, next)
  }
  return visit(out)
}

function someSchema (schema: SchemaNode, test: (s: SchemaNode) => boolean): boolean {
  let found = false
  rebuild(schema, (s) => { found ||= test(s); return s })
  return found
}

function aliasOf (schema: SchemaNode): string | undefined {
  return typeof schema.alias === 'string' ? schema.alias : undefined
}

/** Whether any property of the schema declares an `alias` (its wire name). */
export function hasAliases (schema: TSchema): boolean {
  return someSchema(
    schema,
    (s) => s.properties !== undefined && Object.values(s.properties).some((p) => aliasOf(p) !== undefined)
  )
}

/** The schema as it is on the wire when `byAlias` is on: property keys replaced by their aliases. */
export function aliasedSchema<T extends TSchema> (schema: T): T {
  return asTypeBox<T>(rebuild(schema, (s) => {
    const props = s.properties
    if (props === undefined) return s
    const renamed: Record<string, SchemaNode> = {}
    const names: Record<string, string> = {}
    for (const key of Object.keys(props)) {
      const { alias, ...rest } = props[key]
      const wire = typeof alias === 'string' ? alias : key
      names[key] = wire
      renamed[wire] = typeof alias === 'string' ? rest : props[key]
    }
    const required = Array.isArray(s.required) ? s.required.map((k) => names[k]) : undefined
    return { ...s, properties: renamed, ...(required === undefined ? {} : { required }) }
  }))
}

/**
 * Keywords that bound a value without changing how it is written: a string's format,
 * pattern and length, a number's range, an array's or object's size.
 */
const VALUE_CONSTRAINTS = ['format', 'pattern', 'minLength', 'maxLength', 'minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum',
  'multipleOf', 'minItems', 'maxItems', 'uniqueItems', 'minContains', 'maxContains', 'minProperties', 'maxProperties']

/**
 * The schema without its value constraints: what decides how the serializer writes a value
 * (types, required properties, nullability, unions, literals and enums, nesting) and nothing
 * that only bounds it. The default response check compiles this (docs/views.md).
 */
export function shapeSchema<T extends TSchema> (schema: T): T {
  return asTypeBox<T>(rebuild(schema, (s) => {
    if (!VALUE_CONSTRAINTS.some((key) => key in s)) return s
    const out = { ...s }
    // A tuple's length is part of its shape (and TypeBox requires both bounds on a tuple).
    const tuple = Array.isArray(s.items)
    for (const key of VALUE_CONSTRAINTS) if (!tuple || (key !== 'minItems' && key !== 'maxItems')) delete out[key]
    return out
  }))
}

/** The schema with every `required` list dropped: what `excludeNone` output is serialized with. */
export function optionalSchema<T extends TSchema> (schema: T): T {
  return asTypeBox<T>(rebuild(schema, (s) => {
    if (s.required === undefined) return s
    const { required: _dropped, ...rest } = s
    return rest
  }))
}

/**
 * Compiles a renaming of object keys along the schema: field names -> aliases
 * (`toWire`), or aliases -> field names. `undefined` when the schema has no alias.
 */
export function compileRenamer (schema: TSchema, toWire: boolean): Transform | undefined {
  // renamerFor walks what hasAliases walks, so an alias always yields a renamer.
  return hasAliases(schema) ? renamerFor(schema, toWire) : undefined
}

function renamerFor (schema: SchemaNode, toWire: boolean): Transform | undefined {
  const props = schema.properties
  if (props !== undefined) {
    const fields: Array<{ from: string, to: string, inner: Transform | undefined }> = []
    for (const key of Object.keys(props)) {
      const wire = aliasOf(props[key]) ?? key
      fields.push({ from: toWire ? key : wire, to: toWire ? wire : key, inner: renamerFor(props[key], toWire) })
    }
    if (fields.every((f) => f.from === f.to && f.inner === undefined)) return undefined
    return (value) => {
      if (!isRecord(value)) return value
      const out: Record<string, unknown> = { ...value }
      for (const { from, to, inner } of fields) {
        if (!(from in value)) continue
        const v = value[from]
        if (from !== to) delete out[from]
        out[to] = inner === undefined ? v : inner(v)
      }
      return out
    }
  }
  if (isArrayNode(schema)) {
    const inner = renamerFor(schema.items, toWire)
    if (inner === undefined) return undefined
    return (value) => Array.isArray(value) ? value.map(inner) : value
  }
  const members = schema.anyOf ?? schema.oneOf ?? schema.allOf
  if (Array.isArray(members)) {
    const inners = members.map((m) => renamerFor(m, toWire)).filter((r) => r !== undefined)
    if (inners.length === 0) return undefined
    return (value) => inners.reduce((v, rename) => rename(v), value)
  }
  return undefined
}

/** Drops `null` and `undefined` properties at any depth. */
export function excludeNone (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(excludeNone)
  if (typeof value !== 'object' || value === null || value instanceof Date || Buffer.isBuffer(value)) return value
  const out: Record<string, unknown> = {}
  for (const [key, v] of Object.entries(value)) {
    if (v !== null && v !== undefined) out[key] = excludeNone(v)
  }
  return out
}

/**
 * Compiles the `fromAttributes` read: each declared property is read off the object
 * (so getters and inherited attributes count) into a plain object.
 */
export function compileProjection (schema: TSchema): Transform {
  return projectionFor(schema) ?? ((value) => value)
}

function projectionFor (schema: SchemaNode): Transform | undefined {
  const props = schema.properties
  if (props !== undefined) {
    const fields = Object.keys(props).map((key) => ({ key, inner: projectionFor(props[key]) }))
    return (value) => {
      if (!isRecord(value)) return value
      const out: Record<string, unknown> = {}
      for (const { key, inner } of fields) {
        const v = value[key]
        if (v !== undefined) out[key] = inner === undefined ? v : inner(v)
      }
      return out
    }
  }
  if (isArrayNode(schema)) {
    const inner = projectionFor(schema.items)
    return inner === undefined ? undefined : (value) => Array.isArray(value) ? value.map(inner) : value
  }
  return undefined
}

/** Whether a value is plain data: not a class instance (what `fromAttributes: false` requires). */
export function isPlainData (value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isPlainData)
  if (typeof value !== 'object' || value === null) return true
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  for (const member of Object.values(value)) {
    if (!isPlainData(member)) return false
  }
  return true
}
