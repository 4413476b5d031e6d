/**
 * Request defaults: the members a request leaves out, filled from their schema's `default` before
 * it is validated, where Fastify's Ajv fills them with `useDefaults` (docs/views.md#defaults).
 * Compiled once per schema at registration; a schema without a default compiles to nothing.
 */
import { OptionalKind, type TSchema } from '@sinclair/typebox'
import { asTypeBox, isSchemaNode, listOf, namedOf, requiredOf, type SchemaNode } from '../core/schema-node.js'
import { isRecord } from '../core/record.js'

/** Fills the defaults a value lacks, in place; a value of another type than the schema's is left for the check to refuse. */
export type ApplyDefaults = (value: unknown) => void

/** One `default` the library fills: the schema of the member that declares it, and where it is in the schema. */
export interface DeclaredDefault {
  schema: TSchema
  value: unknown
  /** The member's path in the schema, for messages: `/address/zip`, `/items/*` for any item. */
  path: string
}

/** Names a plain object inherits: such a member is read as an own one only. */
const INHERITED = new Set(Object.getOwnPropertyNames(Object.prototype))

/**
 * The schemas a value is checked against where Ajv fills defaults (and so does the library):
 * the members of an object (`properties`, `additionalProperties`, `patternProperties`), the items of
 * an array, and every member of an intersection (`allOf`). A union's members (`anyOf`, `oneOf`) are
 * not among them: which member a value will match is not known while its defaults are filled, and
 * Ajv, which tries each in turn, fills none there either.
 */
function visited (node: SchemaNode): Array<{ schema: SchemaNode, path: string, member?: string }> {
  const out: Array<{ schema: SchemaNode, path: string, member?: string }> = []
  const props = namedOf(node.properties)
  for (const key of Object.keys(props)) out.push({ schema: props[key], path: '/' + key, member: key })
  if (isSchemaNode(node.additionalProperties)) out.push({ schema: node.additionalProperties, path: '/*' })
  for (const schema of Object.values(namedOf(node.patternProperties))) out.push({ schema, path: '/*' })
  if (isSchemaNode(node.items)) out.push({ schema: node.items, path: '/*' })
  listOf(node.items).forEach((schema, i) => out.push({ schema, path: '/' + String(i) }))
  for (const schema of listOf(node.allOf)) out.push({ schema, path: '' })
  return out
}

/** The schemas with an `$id` inside `schema`, by id: what its `$ref`s (a `Type.Recursive`'s `This`) point to. */
function identified (schema: SchemaNode): Map<string, SchemaNode> {
  const ids = new Map<string, SchemaNode>()
  const walk = (node: SchemaNode): void => {
    if (typeof node.$id === 'string' && !ids.has(node.$id)) ids.set(node.$id, node)
    for (const value of Object.values(node)) {
      if (Array.isArray(value)) {
        for (const item of value) if (isSchemaNode(item)) walk(item)
      } else if (isSchemaNode(value)) walk(value)
    }
  }
  walk(schema)
  return ids
}

/** Where a `$ref` inside the schema leads, or `undefined` for a reference outside it. */
const target = (node: SchemaNode, ids: Map<string, SchemaNode>): SchemaNode | undefined => typeof node.$ref === 'string' ? ids.get(node.$ref) : undefined

/** Every `default` the library fills under `start`, each once (a recursive schema's too); `ids`: the `$id` schemas of the whole. */
function collect (start: SchemaNode, ids: Map<string, SchemaNode>, first = false): DeclaredDefault[] {
  const found: DeclaredDefault[] = []
  const seen = new Set<SchemaNode>()
  const walk = (node: SchemaNode, path: string): void => {
    const next = target(node, ids) ?? node
    if (seen.has(next)) return
    seen.add(next)
    for (const { schema: child, path: step, member } of visited(next)) {
      if (member !== undefined && Object.hasOwn(child, 'default')) {
        found.push({ schema: asTypeBox(child), value: child.default, path: path + step })
        if (first) return
      }
      walk(child, path + step)
      if (first && found.length > 0) return
    }
  }
  walk(start, '')
  return found
}

/** Every `default` the library fills in values of `schema`, each once (a recursive schema's too). */
export function declaredDefaults (schema: SchemaNode): DeclaredDefault[] {
  return collect(schema, identified(schema))
}

/**
 * The members with a `default` inside a union (`anyOf`, `oneOf`, `not`), where none is filled:
 * what Fastify's Ajv refuses in strict mode ("default is ignored"). Paths as `declaredDefaults` gives them.
 */
export function unfilledDefaults (root: SchemaNode): string[] {
  const ids = identified(root)
  const found: string[] = []
  // Each schema once outside a union and once inside one.
  const seen = { true: new Set<SchemaNode>(), false: new Set<SchemaNode>() }
  const walk = (node: SchemaNode, path: string, inUnion: boolean): void => {
    const next = target(node, ids) ?? node
    const walked = seen[`${inUnion}`]
    if (walked.has(next)) return
    walked.add(next)
    for (const { schema: child, path: step, member } of visited(next)) {
      if (inUnion && member !== undefined && Object.hasOwn(child, 'default')) found.push(path + step)
      walk(child, path + step, inUnion)
    }
    for (const member of [
      ...listOf(next.anyOf),
      ...listOf(next.oneOf),
      ...(isSchemaNode(next.not) ? [next.not] : [])
    ]) walk(member, path, true)
  }
  walk(root, '', false)
  return found
}

/** A fresh copy of a default for each request, so that an action changing the value it got changes no other request's. */
function factoryOf (value: unknown): () => unknown {
  if (typeof value !== 'object' || value === null) return () => value
  // The common ones without parsing.
  if (Array.isArray(value)) {
    if (value.length === 0) return () => []
  } else if (Object.keys(value).length === 0) return () => ({})
  const text = JSON.stringify(value)
  return (): unknown => JSON.parse(text)
}

/** Sets a member; `__proto__` is defined as an own member, never assigned (which would replace the prototype). */
function setMember (value: Record<string, unknown>, key: string, member: unknown): void {
  if (key === '__proto__') Object.defineProperty(value, key, { value: member, writable: true, enumerable: true, configurable: true })
  else value[key] = member
}

interface Member {
  key: string
  /** Makes the default when the member is missing. */
  make: (() => unknown) | undefined
  /** Fills the defaults inside the member's value. */
  inner: ApplyDefaults | undefined
  /** The name is one a plain object inherits (`constructor`): only an own member counts. */
  inherited: boolean
}

function applyAll (steps: ApplyDefaults[]): ApplyDefaults | undefined {
  if (steps.length === 0) return undefined
  if (steps.length === 1) return steps[0]
  return (value) => { for (const step of steps) step(value) }
}

/** Fills the defaults of an object's named members, then those inside each member's value. */
function objectStep (members: Member[]): ApplyDefaults {
  return (value) => {
    if (!isRecord(value)) return
    for (const { key, make, inner, inherited } of members) {
      let member = inherited && !Object.hasOwn(value, key) ? undefined : value[key]
      if (member === undefined && make !== undefined) setMember(value, key, member = make())
      if (inner !== undefined && typeof member === 'object' && member !== null) inner(member)
    }
  }
}

/** Fills the defaults inside the members an object's own `properties` do not name (a record's values, `additionalProperties`). */
function otherMembersStep (
  named: Set<string>,
  patterns: Array<[RegExp, ApplyDefaults]>,
  additional: ApplyDefaults | undefined
): ApplyDefaults {
  return (value) => {
    if (!isRecord(value)) return
    for (const key of Object.keys(value)) {
      if (named.has(key)) continue
      const member = value[key]
      if (typeof member !== 'object' || member === null) continue
      let matched = false
      for (const [pattern, inner] of patterns) {
        if (pattern.test(key)) {
          matched = true
          inner(member)
        }
      }
      if (!matched && additional !== undefined) additional(member)
    }
  }
}

function itemsStep (inner: ApplyDefaults): ApplyDefaults {
  return (value) => {
    if (!Array.isArray(value)) return
    for (const item of value) if (typeof item === 'object' && item !== null) inner(item)
  }
}

function tupleStep (inners: Array<ApplyDefaults | undefined>): ApplyDefaults {
  return (value) => {
    if (!Array.isArray(value)) return
    inners.forEach((inner, i) => {
      const item: unknown = value[i]
      if (inner !== undefined && typeof item === 'object' && item !== null) inner(item)
    })
  }
}

/**
 * The compiled filling of `schema`'s defaults, or `undefined` when it declares none the library
 * fills: then the validator a request runs is the one it was without defaults.
 */
export function compileDefaults (root: SchemaNode): ApplyDefaults | undefined {
  const ids = identified(root)
  const fills = (node: SchemaNode): boolean => collect(node, ids, true).length > 0
  if (!fills(root)) return undefined
  const built = new Map<SchemaNode, { apply: ApplyDefaults | undefined, done: boolean }>()
  const build = (start: SchemaNode): ApplyDefaults | undefined => {
    const node = target(start, ids) ?? start
    const known = built.get(node)
    if (known !== undefined) {
      if (known.done) return known.apply
      // A schema that contains itself (`Type.Recursive`) is asked for its filling while it is built: it is read when called.
      return fills(node) ? (value) => known.apply?.(value) : undefined
    }
    const cell: { apply: ApplyDefaults | undefined, done: boolean } = { apply: undefined, done: false }
    built.set(node, cell)
    const steps: ApplyDefaults[] = []
    const props = namedOf(node.properties)
    const members: Member[] = []
    for (const key of Object.keys(props)) {
      const prop = props[key]
      const make = Object.hasOwn(prop, 'default') ? factoryOf(prop.default) : undefined
      const inner = build(prop)
      if (make !== undefined || inner !== undefined) members.push({ key, make, inner, inherited: INHERITED.has(key) })
    }
    if (members.length > 0) steps.push(objectStep(members))
    const patterns: Array<[RegExp, ApplyDefaults]> = []
    for (const [pattern, schema] of Object.entries(namedOf(node.patternProperties))) {
      const inner = build(schema)
      if (inner !== undefined) patterns.push([new RegExp(pattern), inner]) // as TypeBox's check reads the pattern
    }
    const additional = isSchemaNode(node.additionalProperties) ? build(node.additionalProperties) : undefined
    if (patterns.length > 0 || additional !== undefined) {
      steps.push(
        otherMembersStep(new Set(Object.keys(props)), patterns, additional)
      )
    }
    const item = isSchemaNode(node.items) ? build(node.items) : undefined
    if (item !== undefined) steps.push(itemsStep(item))
    const tuple = listOf(node.items).map(build)
    if (tuple.some((inner) => inner !== undefined)) steps.push(tupleStep(tuple))
    for (const member of listOf(node.allOf)) {
      const inner = build(member)
      if (inner !== undefined) steps.push(inner)
    }
    cell.apply = applyAll(steps)
    cell.done = true
    return cell.apply
  }
  return build(root)
}

/**
 * The schema a request part is documented with once defaults are filled: a member with a
 * `default` is optional (not `required`, and TypeBox's optional mark), since a request may leave
 * it out, at every depth defaults are filled. A named schema (`$id`) that changes is named
 * `<name>Input`: the name without the suffix stays the form answers send, every member present,
 * and one document may show both. A schema referring to itself is shown as declared.
 */
export function optionalDefaults<T extends TSchema> (schema: T): T {
  const root: SchemaNode = schema
  if (declaredDefaults(schema).length === 0) return schema
  const refs = new Set<string>()
  const scan = (value: unknown): void => {
    if (Array.isArray(value)) for (const item of value) scan(item)
    else if (isSchemaNode(value)) {
      if (typeof value.$ref === 'string') refs.add(value.$ref)
      for (const member of Object.values(value)) scan(member)
    }
  }
  scan(root)
  const rewriteAll = (schemas: Record<string, SchemaNode>): Record<string, SchemaNode> | undefined => {
    const shown: Record<string, SchemaNode> = {}
    let changed = false
    for (const key of Object.keys(schemas)) {
      shown[key] = rewrite(schemas[key])
      changed ||= shown[key] !== schemas[key]
    }
    return changed ? shown : undefined
  }
  const rewriteList = (schemas: SchemaNode[]): SchemaNode[] | undefined => {
    const shown = schemas.map(rewrite)
    return shown.some((member, i) => member !== schemas[i]) ? shown : undefined
  }
  const rewrite = (node: SchemaNode): SchemaNode => {
    if (typeof node.$id === 'string' && refs.has(node.$id)) return node
    const out: SchemaNode = { ...node }
    let changed = false
    if (node.properties !== undefined) {
      const props = namedOf(node.properties)
      const next: Record<string, SchemaNode> = {}
      const defaulted = new Set<string>()
      for (const key of Object.keys(props)) {
        next[key] = rewrite(props[key])
        if (Object.hasOwn(props[key], 'default')) {
          defaulted.add(key)
          next[key] = { ...next[key], [OptionalKind]: 'Optional' }
        }
        changed ||= next[key] !== props[key]
      }
      out.properties = next
      const required = requiredOf(node).filter((key) => !defaulted.has(key))
      if (required.length > 0) out.required = required
      else delete out.required
    }
    const patterns = rewriteAll(namedOf(node.patternProperties))
    if (patterns !== undefined) out.patternProperties = patterns
    const members = rewriteList(listOf(node.allOf))
    if (members !== undefined) out.allOf = members
    const tuple = rewriteList(listOf(node.items))
    if (tuple !== undefined) out.items = tuple
    for (const key of ['additionalProperties', 'items'] as const) {
      const child = node[key]
      if (isSchemaNode(child)) out[key] = rewrite(child)
      changed ||= out[key] !== child
    }
    changed ||= patterns !== undefined || members !== undefined || tuple !== undefined
    if (!changed) return node
    if (typeof node.$id === 'string') out.$id = `${node.$id}Input`
    return out
  }
  return asTypeBox<T>(rewrite(root))
}
