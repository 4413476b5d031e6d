/**
 * Unknown body members stripped instead of refused (the validation policy's `unknownProperties:
 * 'strip'`, Ajv's `removeAdditional`): removed where the validated schema closes an object, before
 * the value is checked (docs/views.md#unknown-properties). Compiled once per schema at registration.
 */
import type { TSchema } from '@sinclair/typebox'

type Node = Record<string | symbol, unknown>

/** Removes, in place, the members the schema's closed objects do not name. */
export type StripUnknown = (value: unknown) => void

/** A compiled check, for choosing the member of a union a value is stripped by. */
export type CompileCheck = (schema: TSchema) => (value: unknown) => boolean

const isNode = (value: unknown): value is Node => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The schema with every object opened again: what a value is matched against before its unknown members are removed. */
function opened (node: Node): Node {
  let out = node
  const edit = (key: string, value: unknown): void => {
    if (out === node) out = { ...node }
    out[key] = value
  }
  if (node.additionalProperties === false) edit('additionalProperties', undefined)
  if (node.unevaluatedProperties === false) edit('unevaluatedProperties', undefined)
  if (isNode(node.properties)) {
    const props = node.properties
    const next: Node = {}
    for (const key of Object.keys(props)) next[key] = isNode(props[key]) ? opened(props[key]) : props[key]
    if (Object.keys(props).some((key) => next[key] !== props[key])) edit('properties', next)
  }
  if (isNode(node.items)) {
    const items = opened(node.items)
    if (items !== node.items) edit('items', items)
  }
  for (const key of ['anyOf', 'oneOf', 'allOf'] as const) {
    const members = node[key]
    if (!Array.isArray(members)) continue
    const next = members.map((member: unknown) => isNode(member) ? opened(member) : member)
    if (next.some((member, i) => member !== members[i])) edit(key, next)
  }
  // An `undefined` keyword is no keyword to the compiler, but would be a member of the JSON.
  for (const key of ['additionalProperties', 'unevaluatedProperties'] as const) if (out !== node && out[key] === undefined) delete out[key]
  return out
}

/**
 * The member names an intersection that closes the whole evaluates, or `undefined` when a member
 * makes them depend on the value (a union, a pattern, a member open to others, a reference).
 */
function evaluatedNames (node: Node, names = new Set<string>()): Set<string> | undefined {
  if (typeof node.$ref === 'string' || node.anyOf !== undefined || node.oneOf !== undefined || node.patternProperties !== undefined) return undefined
  if (node.additionalProperties !== undefined && node.additionalProperties !== false) return undefined
  if (node.unevaluatedProperties !== undefined && node.unevaluatedProperties !== false) return undefined
  if (isNode(node.properties)) for (const key of Object.keys(node.properties)) names.add(key)
  if (Array.isArray(node.allOf)) {
    for (const member of node.allOf) if (!isNode(member) || evaluatedNames(member, names) === undefined) return undefined
  }
  return names
}

/** Deletes the members of `value` outside `known`; `__proto__` too, as an own member (JSON.parse makes it one). */
function removeUnknown (value: Node, known: Set<string>): void {
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
  const root = schema as unknown as Node
  const ids = new Map<string, Node>()
  const collect = (node: Node): void => {
    if (typeof node.$id === 'string' && !ids.has(node.$id)) ids.set(node.$id, node)
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) for (const item of value) { if (isNode(item)) collect(item) } else if (isNode(value)) collect(value)
    }
  }
  collect(root)
  const built = new Map<Node, { strip: StripUnknown | undefined, done: boolean }>()
  const build = (start: Node, insideIntersect: boolean): StripUnknown | undefined => {
    const node = (typeof start.$ref === 'string' ? ids.get(start.$ref) : undefined) ?? start
    const known = built.get(node)
    // A schema that contains itself (`Type.Recursive`): its stripping is read when called.
    if (known !== undefined) return known.done ? known.strip : (value) => known.strip?.(value)
    const cell: { strip: StripUnknown | undefined, done: boolean } = { strip: undefined, done: false }
    if (!insideIntersect) built.set(node, cell)
    const steps: StripUnknown[] = []
    const names = isNode(node.properties) ? node.properties : undefined
    if (node.additionalProperties === false && !insideIntersect) {
      const known = new Set(names === undefined ? [] : Object.keys(names))
      steps.push((value) => { if (isNode(value)) removeUnknown(value, known) })
    }
    if (Array.isArray(node.allOf) && node.unevaluatedProperties === false && !insideIntersect) {
      const known = evaluatedNames(node)
      if (known !== undefined) steps.push((value) => { if (isNode(value)) removeUnknown(value, known) })
    }
    if (names !== undefined) {
      const members: Array<[string, StripUnknown]> = []
      for (const key of Object.keys(names)) {
        const member = isNode(names[key]) ? build(names[key], false) : undefined
        if (member !== undefined) members.push([key, member])
      }
      if (members.length > 0) {
        steps.push((value) => {
          if (!isNode(value)) return
          for (const [key, strip] of members) {
            if (Object.hasOwn(value, key)) strip(value[key])
          }
        })
      }
    }
    if (isNode(node.items)) {
      const item = build(node.items, false)
      if (item !== undefined) steps.push((value) => { if (Array.isArray(value)) for (const each of value) item(each) })
    }
    if (Array.isArray(node.allOf)) {
      for (const member of node.allOf) {
        const strip = isNode(member) ? build(member, true) : undefined
        if (strip !== undefined) steps.push(strip)
      }
    }
    for (const key of ['anyOf', 'oneOf'] as const) {
      const union = node[key]
      if (!Array.isArray(union)) continue
      const strip = unionStrip(union.filter(isNode), insideIntersect)
      if (strip !== undefined) steps.push(strip)
    }
    cell.strip = inOrder(steps)
    cell.done = true
    return cell.strip
  }
  const unionStrip = (members: Node[], insideIntersect: boolean): StripUnknown | undefined => {
    const strips = members.map((member) => build(member, insideIntersect))
    if (strips.every((strip) => strip === undefined)) return undefined
    let compiled: UnionMember[]
    try {
      compiled = members.map((member, i) => ({ exact: compile(member as unknown as TSchema), loose: compile(opened(member) as unknown as TSchema), strip: strips[i] }))
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
