// The schema node (core): a schema as the library walks it, its JSON Schema keywords typed, with the guards
// that tell its forms apart, the way TypeBox guards its kinds. Every layer that reads a schema reads this one.
import { Kind, OptionalKind, ReadonlyKind, type TSchema } from '@sinclair/typebox'

/**
 * A JSON Schema object with TypeBox's markers, as the walkers of the library read and rebuild it.
 * The keywords they read are typed; any other keyword is `unknown`. A TypeBox schema is one
 * (`const node: SchemaNode = schema`), and so is each schema inside it.
 */
export interface SchemaNode {
  [Kind]?: string
  [OptionalKind]?: string
  [ReadonlyKind]?: string
  $id?: string
  $ref?: string
  type?: string | string[]
  const?: unknown
  enum?: unknown[]
  format?: string
  default?: unknown
  properties?: Record<string, SchemaNode>
  required?: string[]
  patternProperties?: Record<string, SchemaNode>
  additionalProperties?: boolean | SchemaNode
  unevaluatedProperties?: boolean | SchemaNode
  items?: SchemaNode | SchemaNode[]
  prefixItems?: SchemaNode[]
  anyOf?: SchemaNode[]
  oneOf?: SchemaNode[]
  allOf?: SchemaNode[]
  not?: SchemaNode
  [keyword: string]: unknown
}

/** A node that names its members: an object schema (TypeBox writes `properties` on every `Object`). */
export interface ObjectNode extends SchemaNode { properties: Record<string, SchemaNode> }

/** A node whose items are all of one schema: an array schema (a tuple lists its items instead). */
export interface ArrayNode extends SchemaNode { items: SchemaNode }

/** A node that is one of several: a union (`anyOf`, what TypeBox's `Union` writes). */
export interface UnionNode extends SchemaNode { anyOf: SchemaNode[] }

/** Whether a value is a schema node: an object that is no array (members, items, `not`, `additionalProperties`). */
export const isSchemaNode = (value: unknown): value is SchemaNode => typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether a node names its members. */
export const isObjectNode = (node: SchemaNode): node is ObjectNode => isSchemaNode(node.properties)

/** Whether a node's items are all of one schema. */
export const isArrayNode = (node: SchemaNode): node is ArrayNode => isSchemaNode(node.items)

/** Whether a node is a union of members. */
export const isUnionNode = (node: SchemaNode): node is UnionNode => Array.isArray(node.anyOf)

/** Whether a node is marked optional (`Type.Optional`): a member that may be left out, or a body that may be (docs/routing.md#optional-bodies). */
export const isOptionalNode = (node: SchemaNode | undefined): boolean => node !== undefined && node[OptionalKind] === 'Optional'

/** A keyword's member schemas by name (`properties`, `patternProperties`): none when the node lacks it. */
export const namedOf = (keyword: Record<string, SchemaNode> | undefined): Record<string, SchemaNode> => keyword ?? {}

/** A keyword's list of schemas (`allOf`, `anyOf`, a tuple's `items`): none when the node lacks it. */
export const listOf = (
  keyword: SchemaNode | SchemaNode[] | undefined
): SchemaNode[] => Array.isArray(keyword) ? keyword : []

/** The names a node requires: none when it says nothing (or there is no node). */
export const requiredOf = (node: SchemaNode | undefined): string[] => Array.isArray(node?.required) ? node.required : []

/**
 * A node read from a TypeBox schema, or rebuilt from one, handed back to TypeBox (its compiler,
 * its key patterns) or to a caller that gave a schema of type `T`. The walkers keep every marker
 * and keyword they do not rewrite, so the node is the schema TypeBox built, with its static type:
 * this is the one place where the library's reading of a schema meets TypeBox's declarations.
 */
export function asTypeBox<T extends TSchema = TSchema> (node: SchemaNode): T {
  return node as T // the boundary named above: TypeBox's phantom members (`static`, `params`) exist in types only
}
