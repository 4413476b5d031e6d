import { Type, type TSchema } from '@sinclair/typebox'
import { BadRequest, type APIErrorClass } from './errors.js'

/** The problem entry of a validation error: what is wrong and where (`#/3/name`). */
export const ProblemErrorEntrySchema = Type.Object({
  detail: Type.String({ description: 'What is wrong with this part of the request.' }),
  pointer: Type.String({ description: 'JSON Pointer (RFC 6901 fragment) to the offending value: `#/3/name`.' }),
  in: Type.Optional(Type.Union([Type.Literal('path'), Type.Literal('query'), Type.Literal('header')], { description: 'For parameters: where the parameter is.' })),
  parameter: Type.Optional(Type.String({ description: 'For parameters: its name.' }))
}, { $id: 'ProblemErrorEntry' })

const problemProperties = {
  type: Type.String({ format: 'uri-reference', description: 'A URI reference identifying the problem type (RFC 9457 section 3.1.1).', default: 'about:blank' }),
  title: Type.String({ description: 'A short summary of the problem type.' }),
  status: Type.Integer({ description: 'The HTTP status code.' }),
  detail: Type.String({ description: 'An explanation specific to this occurrence.' }),
  instance: Type.Optional(Type.String({ format: 'uri-reference', description: 'The request path the problem occurred on (RFC 9457 section 3.1.5).' }))
}

/** RFC 9457 problem document: every error response of the library has this shape. */
export const ProblemSchema = Type.Object(problemProperties, {
  $id: 'Problem',
  description: 'An RFC 9457 problem document.',
  additionalProperties: true
})

/** A 400 problem carrying one entry per invalid part of the request. */
export const ValidationProblemSchema = Type.Object({
  ...problemProperties,
  errors: Type.Optional(Type.Array(ProblemErrorEntrySchema, { description: 'One entry per invalid value.' }))
}, {
  $id: 'ValidationProblem',
  description: 'An RFC 9457 problem document; validation errors list each invalid value in `errors`.',
  additionalProperties: true
})

const classSchemas = new WeakMap<APIErrorClass, TSchema>()

/**
 * The named schema of one error class (`NotFoundProblem`): the problem shape with its
 * status fixed and its title and type as examples. Built once per class.
 */
export function errorClassSchema (cls: APIErrorClass): TSchema {
  let schema = classSchemas.get(cls)
  if (schema !== undefined) return schema
  const validation = cls === BadRequest || cls.prototype instanceof BadRequest
  schema = Type.Object({
    ...problemProperties,
    type: cls.type === 'about:blank' ? problemProperties.type : Type.Literal(cls.type, { format: 'uri-reference', description: problemProperties.type.description }),
    title: Type.String({ description: problemProperties.title.description, examples: [cls.title] }),
    // The same shape as the generic problem's, an integer, fixed to the class's own (a TypeBox literal would say `number`).
    status: Type.Integer({ const: cls.status, description: problemProperties.status.description }),
    detail: Type.String({ description: problemProperties.detail.description, examples: [cls.defaultDetail] }),
    ...(validation ? { errors: Type.Optional(Type.Array(ProblemErrorEntrySchema)) } : {})
  }, { $id: `${cls.name}Problem`, description: `${cls.title}: ${cls.defaultDetail}`, additionalProperties: true })
  classSchemas.set(cls, schema)
  return schema
}

type Json = Record<string, unknown>

/** Problem components by name, in OpenAPI 3.1 form: what `swaggerOptions` adds to a document that references them. */
export const problemComponents = new Map<string, Json>()

/** JSON form of a schema for a document: `$id` dropped, nested `$id` schemas registered and referenced. */
function toComponentJson (schema: unknown, root: boolean): unknown {
  if (Array.isArray(schema)) return schema.map((s) => toComponentJson(s, false))
  if (typeof schema !== 'object' || schema === null) return schema
  const source = schema as Json
  if (!root && typeof source.$id === 'string') return componentRef(source)
  const out: Json = {}
  for (const key of Object.keys(source)) {
    if (key !== '$id') out[key] = toComponentJson(source[key], false)
  }
  return out
}

const componentSources = new Map<string, object>()

/**
 * Registers a schema with an `$id` as a named component and returns a `$ref` to it.
 * Two different schemas under one name would make one document describe the other:
 * that is a `TypeError` at registration.
 */
export function componentRef (schema: { $id?: unknown }): Json {
  const name = schema.$id as string
  const source = componentSources.get(name)
  if (source === undefined) {
    componentSources.set(name, schema)
    problemComponents.set(name, toComponentJson(schema, true) as Json)
  } else if (source !== schema) {
    throw new TypeError(`Two different schemas are documented as the component "${name}"; give one of them (or its error class) another name`)
  }
  return { $ref: `#/components/schemas/${name}` }
}

/** The documented body of a status with these error classes: one reference, or `anyOf` them. */
export function problemBody (classes: APIErrorClass[]): Json {
  const unique = [...new Set(classes)]
  if (unique.length === 1) return componentRef(errorClassSchema(unique[0]))
  return { anyOf: unique.map((cls) => componentRef(errorClassSchema(cls))) }
}
