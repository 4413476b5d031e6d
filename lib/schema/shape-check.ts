// The shape check (schema layer): the response check of a shape schema compiled to plain loops.
import { Kind, type TSchema } from '@sinclair/typebox'
import { isArrayNode, isObjectNode, isUnionNode, requiredOf, type SchemaNode } from '../core/schema-node.js'

/**
 * Keywords that change nothing a check decides: annotations, and what the compiler reads
 * itself. A schema with any other keyword (`$ref`, `allOf`, `patternProperties`, a closed
 * object, ...) is left to TypeBox.
 */
const INERT = new Set(['type', 'properties', 'required', 'items', 'anyOf', 'const', '$id', '$schema', 'title', 'description',
  'examples', 'example', 'default', 'deprecated', 'readOnly', 'writeOnly', 'alias', 'contentMediaType', 'contentEncoding', '$comment'])

/** The JavaScript test of each kind the compiler handles, as TypeBox 0.34 decides it by default. */
const PRIMITIVE: Record<string, (v: string) => string> = {
  String: (v) => `typeof ${v} === 'string'`,
  Number: (v) => `Number.isFinite(${v})`,
  Integer: (v) => `Number.isInteger(${v})`,
  Boolean: (v) => `typeof ${v} === 'boolean'`,
  Null: (v) => `${v} === null`,
  Unknown: () => 'true',
  Any: () => 'true'
}

/** Whether a kind accepts `undefined`, so that a required property of it must be tested for presence. */
const ACCEPTS_UNDEFINED = new Set<string | undefined>(['Unknown', 'Any'])

/**
 * Writes the test of `value` (a JavaScript expression) against `schema`, or `undefined` for a
 * schema the compiler does not handle. Each array gets a function of its own with a plain loop,
 * so that a check allocates nothing: no closure, no iterator.
 */
function emit (schema: SchemaNode, value: string, next: () => string, lines: string[]): string | undefined {
  if (Object.keys(schema).some((key) => !INERT.has(key))) return undefined
  const kind = schema[Kind]
  if (kind !== undefined && PRIMITIVE[kind] !== undefined) return PRIMITIVE[kind](value)
  if (kind === 'Literal') return `${value} === ${JSON.stringify(schema.const)}`
  // TypeBox writes `anyOf` on every Union, `items` on every Array and `properties` on every Object, empty ones included.
  if (kind === 'Union' && isUnionNode(schema)) {
    const members = schema.anyOf.map((member) => emit(member, value, next, lines))
    return members.includes(undefined) ? undefined : `(${members.join(' || ')})`
  }
  if (kind === 'Array' && isArrayNode(schema)) {
    const ok = next()
    const i = next()
    const item = next()
    const test = emit(schema.items, item, next, lines)
    if (test === undefined) return undefined
    lines.push(`function ${ok} (a) { for (let ${i} = 0; ${i} < a.length; ${i}++) { const ${item} = a[${i}]; if (!(${test})) return false } return true }`)
    return `(Array.isArray(${value}) && ${ok}(${value}))`
  }
  if (kind !== 'Object' || !isObjectNode(schema)) return undefined
  const required = new Set(requiredOf(schema))
  const tests = [`typeof ${value} === 'object'`, `${value} !== null`, `!Array.isArray(${value})`]
  for (const [key, property] of Object.entries(schema.properties)) {
    const read = `${value}[${JSON.stringify(key)}]`
    const test = emit(property, read, next, lines)
    if (test === undefined) return undefined
    if (!required.has(key)) tests.push(`(${read} === undefined || ${test})`)
    else tests.push(ACCEPTS_UNDEFINED.has(property[Kind]) ? `(${JSON.stringify(key)} in ${value} && ${test})` : test)
  }
  return `(${tests.join(' && ')})`
}

/**
 * Compiles the check of a shape schema (`shapeSchema`: types, required properties, nesting,
 * unions, literals) into one function of plain loops, which decides what TypeBox's compiled
 * check decides for these kinds but allocates nothing: TypeBox's code runs a closure and an
 * iterator per array, garbage on every response of a list. `undefined` for a schema with
 * anything else, which TypeBox's check keeps.
 */
export function compileShapeCheck (schema: TSchema): ((value: unknown) => boolean) | undefined {
  const lines: string[] = []
  let counter = 0
  const test = emit(schema, 'value', () => `v${counter++}`, lines)
  if (test === undefined) return undefined
  const source = `${lines.join('\n')}\nreturn function shapeCheck (value) { return ${test} }`
  // Schemas of one shape (the items of many resources) have one source: compiled once, kept once.
  let check = SHAPE_CHECKS.get(source)
  if (check === undefined) {
    // Generated from the schema's structure alone; keys and literals are written with JSON.stringify.
    // eslint-disable-next-line no-new-func
    check = new Function(source)() as (value: unknown) => boolean // the source returns the check it defines
    SHAPE_CHECKS.set(source, check)
  }
  return check
}

/** The shape checks compiled in this process, by their source. */
const SHAPE_CHECKS = new Map<string, (value: unknown) => boolean>()
