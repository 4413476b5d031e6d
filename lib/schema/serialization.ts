import type { TSchema } from '@sinclair/typebox'

type AnySchema = TSchema & Record<string | symbol, unknown>
type Transform = (value: unknown) => unknown

/**
 * Rebuilds a schema bottom-up: `visit` receives each object schema after its
 * properties, items and members were rebuilt. Untouched parts are shared, not copied.
 */
function rebuild (schema: AnySchema, visit: (s: AnySchema) => AnySchema): AnySchema {
  let out = schema
  const edit = (key: string, value: unknown): void => {
    if (out === schema) out = { ...schema }
    out[key] = value
  }
  if (typeof schema.properties === 'object' && schema.properties !== null) {
    const props = schema.properties as Record<string, AnySchema>
    const next: Record<string, AnySchema> = {}
    let changed = false
    for (const key of Object.keys(props)) {
      next[key] = rebuild(props[key], visit)
      changed ||= next[key] !== props[key]
    }
    if (changed) edit('properties', next)
  }
  if (typeof schema.items === 'object' && schema.items !== null && !Array.isArray(schema.items)) {
    const items = rebuild(schema.items as AnySchema, visit)
    if (items !== schema.items) edit('items', items)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const members = schema[key]
    if (!Array.isArray(members)) continue
    const next = members.map((m: AnySchema) => rebuild(m, visit))
    if (next.some((m, i) => m !== members[i])) edit(key, next)
  }
  return visit(out)
}

function someSchema (schema: AnySchema, test: (s: AnySchema) => boolean): boolean {
  let found = false
  rebuild(schema, (s) => { found ||= test(s); return s })
  return found
}

function aliasOf (schema: AnySchema): string | undefined {
  return typeof schema.alias === 'string' ? schema.alias : undefined
}

/** Whether any property of the schema declares an `alias` (its wire name). */
export function hasAliases (schema: TSchema): boolean {
  return someSchema(schema as AnySchema, (s) => {
    const props = s.properties as Record<string, AnySchema> | undefined
    return props !== undefined && Object.values(props).some((p) => aliasOf(p) !== undefined)
  })
}

/** The schema as it is on the wire when `byAlias` is on: property keys replaced by their aliases. */
export function aliasedSchema<T extends TSchema> (schema: T): T {
  return rebuild(schema as AnySchema, (s) => {
    const props = s.properties as Record<string, AnySchema> | undefined
    if (props === undefined) return s
    const renamed: Record<string, AnySchema> = {}
    const names: Record<string, string> = {}
    for (const key of Object.keys(props)) {
      const { alias, ...rest } = props[key]
      const wire = typeof alias === 'string' ? alias : key
      names[key] = wire
      renamed[wire] = (typeof alias === 'string' ? rest : props[key]) as AnySchema
    }
    const required = Array.isArray(s.required) ? (s.required as string[]).map((k) => names[k]) : undefined
    return { ...s, properties: renamed, ...(required === undefined ? {} : { required }) }
  }) as T
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
  return rebuild(schema as AnySchema, (s) => {
    if (!VALUE_CONSTRAINTS.some((key) => key in s)) return s
    const out = { ...s }
    // A tuple's length is part of its shape (and TypeBox requires both bounds on a tuple).
    const tuple = Array.isArray(s.items)
    for (const key of VALUE_CONSTRAINTS) if (!tuple || (key !== 'minItems' && key !== 'maxItems')) delete out[key]
    return out
  }) as T
}

/** The schema with every `required` list dropped: what `excludeNone` output is serialized with. */
export function optionalSchema<T extends TSchema> (schema: T): T {
  return rebuild(schema as AnySchema, (s) => {
    if (s.required === undefined) return s
    const { required: _dropped, ...rest } = s
    return rest as AnySchema
  }) as T
}

/**
 * Compiles a renaming of object keys along the schema: field names -> aliases
 * (`toWire`), or aliases -> field names. `undefined` when the schema has no alias.
 */
export function compileRenamer (schema: TSchema, toWire: boolean): Transform | undefined {
  // renamerFor walks what hasAliases walks, so an alias always yields a renamer.
  if (!hasAliases(schema)) return undefined
  return renamerFor(schema as AnySchema, toWire)!
}

function renamerFor (schema: AnySchema, toWire: boolean): Transform | null {
  const props = schema.properties as Record<string, AnySchema> | undefined
  if (props !== undefined) {
    const fields: Array<{ from: string, to: string, inner: Transform | null }> = []
    for (const key of Object.keys(props)) {
      const wire = aliasOf(props[key]) ?? key
      fields.push({ from: toWire ? key : wire, to: toWire ? wire : key, inner: renamerFor(props[key], toWire) })
    }
    if (fields.every((f) => f.from === f.to && f.inner === null)) return null
    return (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
      const source = value as Record<string, unknown>
      const out: Record<string, unknown> = { ...source }
      for (const { from, to, inner } of fields) {
        if (!(from in source)) continue
        const v = source[from]
        if (from !== to) delete out[from]
        out[to] = inner === null ? v : inner(v)
      }
      return out
    }
  }
  if (typeof schema.items === 'object' && schema.items !== null && !Array.isArray(schema.items)) {
    const inner = renamerFor(schema.items as AnySchema, toWire)
    if (inner === null) return null
    return (value) => Array.isArray(value) ? value.map(inner) : value
  }
  const members = (schema.anyOf ?? schema.oneOf ?? schema.allOf) as AnySchema[] | undefined
  if (Array.isArray(members)) {
    const inners = members.map((m) => renamerFor(m, toWire)).filter((r): r is Transform => r !== null)
    if (inners.length === 0) return null
    return (value) => inners.reduce((v, rename) => rename(v), value)
  }
  return null
}

/** Drops `null` and `undefined` properties at any depth. */
export function excludeNone (value: unknown): unknown {
  if (Array.isArray(value)) return value.map(excludeNone)
  if (typeof value !== 'object' || value === null || value instanceof Date || Buffer.isBuffer(value)) return value
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[key]
    if (v !== null && v !== undefined) out[key] = excludeNone(v)
  }
  return out
}

/**
 * Compiles the `fromAttributes` read: each declared property is read off the object
 * (so getters and inherited attributes count) into a plain object.
 */
export function compileProjection (schema: TSchema): Transform {
  return projectionFor(schema as AnySchema) ?? ((value) => value)
}

function projectionFor (schema: AnySchema): Transform | null {
  const props = schema.properties as Record<string, AnySchema> | undefined
  if (props !== undefined) {
    const fields = Object.keys(props).map((key) => ({ key, inner: projectionFor(props[key]) }))
    return (value) => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) return value
      const source = value as Record<string, unknown>
      const out: Record<string, unknown> = {}
      for (const { key, inner } of fields) {
        const v = source[key]
        if (v !== undefined) out[key] = inner === null ? v : inner(v)
      }
      return out
    }
  }
  if (typeof schema.items === 'object' && schema.items !== null && !Array.isArray(schema.items)) {
    const inner = projectionFor(schema.items as AnySchema)
    return inner === null ? null : (value) => Array.isArray(value) ? value.map(inner) : value
  }
  return null
}

/** Whether a value is plain data: not a class instance (what `fromAttributes: false` requires). */
export function isPlainData (value: unknown): boolean {
  if (Array.isArray(value)) return value.every(isPlainData)
  if (typeof value !== 'object' || value === null) return true
  const proto = Object.getPrototypeOf(value)
  if (proto !== Object.prototype && proto !== null) return false
  for (const key of Object.keys(value)) {
    if (!isPlainData((value as Record<string, unknown>)[key])) return false
  }
  return true
}
