// Both TypeBox lines (core layer): schemas of `@sinclair/typebox` 0.34 and `typebox` 1.x, and the 0.34 form every other layer works with.
import { Kind, OptionalKind, ReadonlyKind, TypeRegistry, type Static, type TSchema } from '@sinclair/typebox'
import { ConfigurationError } from './configuration-error.js'
import { isSchemaNode, type SchemaNode } from './schema-node.js'

/**
 * A schema of the `typebox` 1.x line (the one `@fastify/type-provider-typebox` 6 uses), told
 * apart by the `~kind` member its types declare (`~unsafe` for `Type.Unsafe`). Its values are
 * plain JSON Schema; the markers are non-enumerable.
 */
export type TypeBox1Schema = { readonly '~kind': string } | { readonly '~unsafe': unknown }

/** A schema a view takes: from `@sinclair/typebox` 0.34 or from `typebox` 1.x. */
export type Schema = TSchema | TypeBox1Schema

/** The type of the values a schema of either TypeBox line describes (`unknown` for anything else). */
export type StaticOf<S> = S extends TSchema ? Static<S> : S extends TypeBox1Schema ? Static1<S> : unknown

// The 1.x types are read by their shape, so the declarations of this package never import
// `typebox`: a project without it still compiles them (`skipLibCheck: false`).
type Static1<S> =
  S extends { readonly '~kind': infer K }
    ? K extends 'Object' ? (S extends { readonly properties: infer P } ? Object1<P> : object)
      : K extends 'Array' ? (S extends { readonly items: infer I } ? Array<Static1<I>> : unknown[])
        : K extends 'String' | 'TemplateLiteral' ? string // a template literal's pattern is not decoded: any string
          : K extends 'Number' | 'Integer' ? number
            : K extends 'Boolean' ? boolean
              : K extends 'Null' ? null
                : K extends 'Literal' ? (S extends { readonly const: infer C } ? C : never)
                  : K extends 'Union' ? (S extends { readonly anyOf: ReadonlyArray<infer M> } ? Static1<M> : unknown)
                    : K extends 'Intersect' ? (S extends { readonly allOf: infer M extends readonly unknown[] } ? Intersection1<M> : unknown)
                      : K extends 'Enum' ? (S extends { readonly enum: ReadonlyArray<infer E> } ? E : unknown)
                        : K extends 'Record' ? (S extends { readonly patternProperties: infer P } ? Record<string, Static1<P[keyof P]>> : unknown)
                          : K extends 'Tuple' ? (S extends { readonly items: infer T extends readonly unknown[] } ? { -readonly [I in keyof T]: Static1<T[I]> } : unknown[])
                            : K extends 'Any' ? any // `Type.Any()` means any, as in TypeBox
                              : K extends 'Never' ? never
                                : unknown
    : S extends { readonly '~unsafe': infer T } ? T : unknown

type Intersection1<M extends readonly unknown[]> = M extends readonly [infer First,
  ...infer Rest] ? Static1<First> & Intersection1<Rest> : unknown

type Marked<P,
  Marker extends string> = { [K in keyof P]: P[K] extends { readonly [M in Marker]: true } ? K : never }[keyof P]
// Read through `infer`, so that a hover and a message show one object type rather than the intersection.
type Flat<T> = T extends infer O ? { [K in keyof O]: O[K] } : never
type Object1<P, O extends keyof P = Marked<P, '~optional'>, R extends keyof P = Marked<P, '~readonly'>> = Flat<
  { -readonly [K in Exclude<keyof P, O | R>]: Static1<P[K]> } &
  { -readonly [K in Exclude<O, R>]?: Static1<P[K]> } &
  { readonly [K in Exclude<R, O>]: Static1<P[K]> } &
  { readonly [K in O & R]?: Static1<P[K]> }
>

// The kinds whose 1.x form is the 0.34 form under the same name: the marker is all that differs.
const SAME_KINDS = new Set(['Any', 'Array', 'Boolean', 'Integer', 'Intersect', 'Literal', 'Never', 'Null', 'Number', 'Object', 'Record', 'Ref', 'String', 'TemplateLiteral', 'Tuple', 'Union', 'Unknown'])

// The kinds @sinclair/typebox 0.34's compiler checks by itself; any other needs a TypeRegistry entry.
const COMPILED_KINDS = new Set(['Any', 'Argument', 'Array', 'AsyncIterator', 'BigInt', 'Boolean', 'Constructor', 'Date', 'Function', 'Import', 'Integer', 'Intersect',
  'Iterator', 'Literal', 'Never', 'Not', 'Null', 'Number', 'Object', 'Promise', 'Record', 'Ref', 'RegExp', 'String', 'Symbol', 'TemplateLiteral', 'This', 'Tuple',
  'Uint8Array', 'Undefined', 'Union', 'Unknown', 'Void'])

/** TypeBox kinds of JavaScript values with no JSON form. */
const NOT_JSON = new Set(['Date', 'Uint8Array', 'Function', 'Constructor', 'Promise', 'AsyncIterator', 'Iterator', 'Symbol', 'BigInt'])

const converted = new WeakMap<object, unknown>()

/**
 * The `@sinclair/typebox` 0.34 form of a schema, which is what the library validates and
 * composes with: a 0.34 schema is returned as it is; a 1.x one is copied with the 0.34 markers
 * (`Kind`, `OptionalKind`, `ReadonlyKind`) beside the same JSON Schema keywords, so the API
 * description and Fastify's serializer see exactly what the user wrote. `Type.Enum` becomes the
 * union of literals 0.34's `Type.Enum` makes. Done once per schema object.
 *
 * Throws `FV_ERR_UNSUPPORTED_SCHEMA`, naming `where`, for what the library cannot check: a value
 * that is no TypeBox schema (a plain JSON Schema object), a 0.34 kind without a `TypeRegistry`
 * entry, and the 1.x features JSON Schema cannot say: `Type.Refine` or `Type.Codec` (its
 * function would never run), `Type.Unsafe`, `Type.Cyclic`.
 */
export function toTypeBox (schema: Schema, where: string): TSchema
export function toTypeBox (schema: Schema | undefined, where: string): TSchema | undefined
export function toTypeBox (schema: Schema | undefined, where: string): TSchema | undefined {
  if (schema !== undefined && !isMarked(schema)) {
    throw new ConfigurationError('FV_ERR_UNSUPPORTED_SCHEMA', `${where} is not a TypeBox schema (of @sinclair/typebox 0.34 or typebox 1.x): build it with Type.* rather than as a plain JSON Schema object`)
  }
  return convert(schema, where, new Set()) as TSchema | undefined // a schema converts to a schema
}

/** Whether a value carries the marker of a schema of either line. */
function isMarked (value: unknown): boolean {
  return isSchemaNode(value) && (typeof value[Kind] === 'string' || Object.hasOwn(value, '~kind') || Object.hasOwn(value, '~unsafe'))
}

/** `toTypeBox` over each schema of a record (filter fields, response headers). */
export function toTypeBoxRecord (schemas: Record<string, Schema>, where: string): Record<string, TSchema> {
  const out: Record<string, TSchema> = {}
  for (const [name, schema] of Object.entries(schemas)) out[name] = toTypeBox(schema, `${where}.${name}`)
  return out
}

function convert (value: unknown, where: string, open: Set<object>): unknown {
  // An object is a schema node or a list of them.
  if (!isSchemaNode(value) && !Array.isArray(value)) return value
  const done = converted.get(value)
  if (done !== undefined) return done
  // A cycle of objects is not JSON Schema TypeBox makes; leave it to the validator to refuse.
  if (open.has(value)) return value
  open.add(value)
  const out = Array.isArray(value) ? convertArray(value, where, open) : convertNode(value, where, open)
  open.delete(value)
  converted.set(value, out)
  return out
}

function convertArray (list: unknown[], where: string, open: Set<object>): unknown[] {
  const out = list.map((item) => convert(item, where, open))
  return out.some((item, i) => item !== list[i]) ? out : list
}

function convertNode (node: SchemaNode, where: string, open: Set<object>): SchemaNode {
  const marker = node['~kind']
  const kind = Object.hasOwn(node, '~kind') && typeof marker === 'string' ? marker : undefined // typebox 1.x names every kind with a string
  const refused = kind === undefined ? (Object.hasOwn(node, '~unsafe') ? 'Type.Unsafe' : undefined) : refusedFeature(node, kind)
  if (refused !== undefined) {
    throw new ConfigurationError('FV_ERR_UNSUPPORTED_SCHEMA', `${where}: ${refused} (typebox 1.x) is not supported: views check their schemas as JSON Schema, which cannot say what it means`)
  }
  // Kinds of JavaScript values JSON has no form for: a body never holds one, and an answer cannot be written with one.
  const jsKind = [kind, node[Kind]].find((k) => k !== undefined && NOT_JSON.has(k))
  if (jsKind !== undefined) {
    throw new ConfigurationError('FV_ERR_UNSUPPORTED_SCHEMA', `${where}: Type.${jsKind}() describes a JavaScript value that JSON cannot hold, so no request can carry one and ` +
      `no answer can be written with it. ${jsKind === 'Date' ? 'Use Type.String({ format: \'date-time\' }) and send dates as ISO strings' : 'Describe the JSON form of the value instead'}`)
  }
  // A 0.34 kind the compiler does not know (a `Type.Unsafe`) is checked by its TypeRegistry entry, or not at all.
  const old = node[Kind]
  if (typeof old === 'string' && !COMPILED_KINDS.has(old) && !TypeRegistry.Has(old)) {
    throw new ConfigurationError('FV_ERR_UNSUPPORTED_SCHEMA', `${where}: a schema of kind "${old}" (Type.Unsafe of @sinclair/typebox) has no TypeRegistry entry, so it cannot be checked: ` +
      `register one (TypeRegistry.Set('${old}', check)), or build the schema from TypeBox's types`)
  }
  let copy: SchemaNode | undefined = kind === undefined ? undefined : {}
  // Enumerable keys only, symbols included: the 1.x markers are not copied, 0.34's are.
  for (const key of Reflect.ownKeys(node)) {
    if (!Object.prototype.propertyIsEnumerable.call(node, key)) continue
    const value: unknown = Reflect.get(node, key)
    const next = convert(value, where, open)
    if (next !== value && copy === undefined) copy = { ...node }
    if (copy !== undefined) Reflect.set(copy, key, next)
  }
  if (copy === undefined || kind === undefined) return copy ?? node
  if (kind === 'Enum') {
    const values = copy.enum as unknown[] // `Type.Enum` of 1.x always lists its values
    delete copy.enum
    copy.anyOf = values.map((v) => ({ [Kind]: 'Literal', const: v, type: typeof v }))
    copy[Kind] = 'Union'
  } else {
    copy[Kind] = kind
    // 1.x bounds a tuple by `additionalItems: false`; 0.34 wants the length it implies said as `maxItems` too.
    if (kind === 'Tuple' && Array.isArray(copy.items) && copy.maxItems === undefined) copy.maxItems = copy.items.length
  }
  if (node['~optional'] === true) copy[OptionalKind] = 'Optional'
  if (node['~readonly'] === true) copy[ReadonlyKind] = 'Readonly'
  return copy
}

function refusedFeature (node: SchemaNode, kind: string): string | undefined {
  if (Object.hasOwn(node, '~refine')) return 'Type.Refine'
  if (Object.hasOwn(node, '~codec')) return 'Type.Codec'
  return SAME_KINDS.has(kind) || kind === 'Enum' ? undefined : `Type.${kind}`
}

/** The 0.34 form of a schema static of a class (`responseSchema`), named `Class.static` in errors. */
export function schemaStatic<K extends string> (
  klass: { readonly name: string } & { readonly [P in K]: Schema },
  key: K
): TSchema
export function schemaStatic<K extends string> (
  klass: { readonly name: string } & { readonly [P in K]?: Schema | undefined },
  key: K
): TSchema | undefined
export function schemaStatic<K extends string> (
  klass: { readonly name: string } & { readonly [P in K]?: Schema | undefined },
  key: K
): TSchema | undefined {
  return toTypeBox(klass[key], `${klass.name}.${key}`)
}
