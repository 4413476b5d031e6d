/**
 * Unknown body members stripped instead of refused (the validation policy's `unknownProperties:
 * 'strip'`, Ajv's `removeAdditional`): removed where the validated schema closes an object, before
 * the value is checked (docs/views.md#unknown-properties). Compiled once per schema at registration.
 */
import { KeyOfPattern, type TSchema } from '@sinclair/typebox'
import { asTypeBox, isSchemaNode, listOf, namedOf, type SchemaNode } from '../core/schema-node.js'
import { isRecord } from '../core/record.js'

/** Removes, in place, the members the schema's closed objects do not name. */
export type StripUnknown = (value: unknown) => void

/** A compiled check, for choosing the member of a union a value is stripped by. */
export type CompileCheck = (schema: TSchema) => (value: unknown) => boolean

/** The schema with every object opened again: what a value is matched against before its unknown members are removed. */
function opened (node: SchemaNode): SchemaNode {
  // Only a closure is taken away, a schema for the other members stays; a keyword left `undefined` is none to the compiler.
  const { additionalProperties, unevaluatedProperties, ...out } = node
  if (additionalProperties !== false) out.additionalProperties = additionalProperties
  if (unevaluatedProperties !== false) out.unevaluatedProperties = unevaluatedProperties
  if (node.properties !== undefined) {
    out.properties = Object.fromEntries(
      Object.entries(node.properties).map(([key, schema]) => [key, opened(schema)])
    )
  }
  if (isSchemaNode(node.items)) out.items = opened(node.items)
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) if (node[key] !== undefined) out[key] = listOf(node[key]).map(opened)
  return out
}

/** Deletes the members of `value` outside `known`; `__proto__` too, as an own member (JSON.parse makes it one). */
function removeUnknown (value: Record<string, unknown>, known: { has: (key: string) => boolean }): void {
  for (const key of Object.keys(value)) if (!known.has(key)) delete value[key]
}

function inOrder (steps: StripUnknown[]): StripUnknown | undefined {
  if (steps.length === 0) return undefined
  if (steps.length === 1) return steps[0]
  return (value) => { for (const step of steps) step(value) }
}

interface UnionMember {
  /** The member as validated, closed: a value it accepts keeps every member. */
  exact: (value: unknown) => boolean
  /** The member with its objects open: a value it accepts is stripped by it. */
  loose: (value: unknown) => boolean
  strip: StripUnknown | undefined
}

/**
 * The compiled stripping of `schema`, a body schema as it is validated (closed by
 * `strictBodySchema`), or `undefined` when it closes no object: then the validator a request
 * runs is the one it was without stripping. A value of another type than the schema's is left
 * for the check to refuse. In a union, a value one member accepts as it is keeps every member;
 * otherwise the first member it matches once opened removes what it does not name, and a value
 * no member matches is left as it is.
 */
export function compileStrip (schema: TSchema, compile: CompileCheck): StripUnknown | undefined {
  const root: SchemaNode = schema
  const ids = new Map<string, SchemaNode>()
  const collect = (node: SchemaNode): void => {
    if (typeof node.$id === 'string' && !ids.has(node.$id)) ids.set(node.$id, node)
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isSchemaNode(item)) collect(item)
      } else if (isSchemaNode(value)) collect(value)
    }
  }
  collect(root)
  const built = new Map<SchemaNode, { strip: StripUnknown | undefined, done: boolean }>()
  const build = (start: SchemaNode, insideIntersect: boolean): StripUnknown | undefined => {
    const node = (typeof start.$ref === 'string' ? ids.get(start.$ref) : undefined) ?? start
    const known = built.get(node)
    if (known !== undefined) {
      // A schema that contains itself (`Type.Recursive`) is asked for its stripping while it is built: it is read when called.
      return known.done ? known.strip : (value) => known.strip?.(value)
    }
    const cell: { strip: StripUnknown | undefined, done: boolean } = { strip: undefined, done: false }
    if (!insideIntersect) built.set(node, cell)
    const steps: StripUnknown[] = []
    const names = namedOf(node.properties)
    // An intersection is closed as a whole, by what its members name (TypeBox reads no `additionalProperties` beside `allOf`).
    if (node.additionalProperties === false && !insideIntersect && node.allOf === undefined) {
      const known = new Set(Object.keys(names))
      steps.push((value) => { if (isRecord(value)) removeUnknown(value, known) })
    }
    if (node.unevaluatedProperties === false && !insideIntersect) {
      // The names TypeBox's check of the intersection takes: its members' own, a record's pattern.
      const pattern = new RegExp(KeyOfPattern(asTypeBox(node)))
      const known = { has: (key: string): boolean => pattern.test(key) }
      steps.push((value) => { if (isRecord(value)) removeUnknown(value, known) })
    }
    const members: Array<[string, StripUnknown]> = []
    for (const key of Object.keys(names)) {
      const member = build(names[key], false)
      if (member !== undefined) members.push([key, member])
    }
    if (members.length > 0) {
      steps.push((value) => {
        if (!isRecord(value)) return
        for (const [key, strip] of members) {
          if (Object.hasOwn(value, key)) strip(value[key])
        }
      })
    }
    if (isSchemaNode(node.items)) {
      const item = build(node.items, false)
      if (item !== undefined) steps.push((value) => { if (Array.isArray(value)) for (const each of value) item(each) })
    }
    for (const member of listOf(node.allOf)) {
      const strip = build(member, true)
      if (strip !== undefined) steps.push(strip)
    }
    const union = unionStrip([...listOf(node.anyOf), ...listOf(node.oneOf)], insideIntersect)
    if (union !== undefined) steps.push(union)
    cell.strip = inOrder(steps)
    cell.done = true
    return cell.strip
  }
  const unionStrip = (members: SchemaNode[], insideIntersect: boolean): StripUnknown | undefined => {
    const strips = members.map((member) => build(member, insideIntersect))
    if (strips.every((strip) => strip === undefined)) return undefined // no member, or none that strips
    let compiled: UnionMember[]
    try {
      compiled = members.map(
        (member, i) => ({
          exact: compile(asTypeBox(member)),
          loose: compile(asTypeBox(opened(member))),
          strip: strips[i]
        })
      )
    } catch {
      // A member that refers to the schema around it (`This` of a recursive one) cannot be compiled alone: such a union is not stripped, only checked.
      return undefined
    }
    return (value) => {
      if (typeof value !== 'object' || value === null) return
      for (const member of compiled) if (member.exact(value)) return
      for (const member of compiled) {
        if (member.loose(value)) {
          member.strip?.(value)
          return
        }
      }
    }
  }
  return build(root, false)
}
