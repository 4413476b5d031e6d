// The JSON types a schema lets through, as registration compares them: a response schema with
// what a table holds, a filter's parameter with the field it matches. JSON has one kind of
// number; `integer` is among them.
import type { SchemaNode } from '../core/schema-node.js'

/** The JSON types a TypeBox schema accepts, or `undefined` for any (`Type.Unknown`, `Type.Any`, a kind not read here). */
export function acceptedTypes (schema: SchemaNode): Set<string> | undefined {
  if (Array.isArray(schema.anyOf)) {
    const out = new Set<string>()
    for (const member of schema.anyOf) {
      const types = acceptedTypes(member)
      if (types === undefined) return undefined
      for (const type of types) out.add(type)
    }
    return out
  }
  // TypeBox says one type per schema (a literal's too), and several through anyOf.
  return typeof schema.type === 'string' ? new Set([schema.type]) : undefined
}

/** Whether a value of JSON type `type` fits a schema accepting `accepted`. */
export function fits (type: string, accepted: ReadonlySet<string>): boolean {
  return type === 'integer' || type === 'number' ? accepted.has('integer') || accepted.has('number') : accepted.has(type)
}

/** Whether some value other than null fits both. */
export const overlap = (a: ReadonlySet<string>, b: ReadonlySet<string>): boolean => [...a].some((type) => type !== 'null' && fits(type, b))
