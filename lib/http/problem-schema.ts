// The schemas of problem documents (http layer): RFC 9457 problems and validation problems, as the document shows them, per error class.
import { Type, type TSchema } from '@sinclair/typebox'
import { BadRequest, UnprocessableContent, type APIErrorClass } from './errors.js'

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
  additionalProperties: true,
  examples: [{ type: 'about:blank', title: 'Not Found', status: 404, detail: 'Item 1 does not exist.', instance: '/items/1' }]
})

/** A 400 problem carrying one entry per invalid part of the request. */
export const ValidationProblemSchema = Type.Object({
  ...problemProperties,
  errors: Type.Optional(Type.Array(ProblemErrorEntrySchema, { description: 'One entry per invalid value.' }))
}, {
  $id: 'ValidationProblem',
  description: 'An RFC 9457 problem document; validation errors list each invalid value in `errors`.',
  additionalProperties: true,
  examples: [{
    type: 'about:blank',
    title: 'Bad Request',
    status: 400,
    detail: 'The request body is invalid.',
    instance: '/items',
    errors: [{ detail: 'Expected string length greater or equal to 1', pointer: '#/name' }]
  }]
})

const classSchemas = new WeakMap<APIErrorClass, TSchema>()

/**
 * The named schema of one error class (`NotFoundProblem`): the problem shape with its
 * status fixed and its title and type as examples. Built once per class.
 */
export function errorClassSchema (cls: APIErrorClass): TSchema {
  let schema = classSchemas.get(cls)
  if (schema !== undefined) return schema
  // The validation statuses: a 400 or a 422 may list the invalid values.
  const validation = [BadRequest, UnprocessableContent].some(
    (family) => cls === family || cls.prototype instanceof family
  )
  schema = Type.Object({
    ...problemProperties,
    type: cls.type === 'about:blank' ? problemProperties.type : Type.Literal(cls.type, { format: 'uri-reference', description: problemProperties.type.description }),
    title: Type.String({ description: problemProperties.title.description, examples: [cls.title] }),
    // The same shape as the generic problem's, an integer, fixed to the class's own (a TypeBox literal would say `number`).
    status: Type.Integer({ const: cls.status, description: problemProperties.status.description }),
    detail: Type.String({ description: problemProperties.detail.description, examples: [cls.defaultDetail] }),
    ...(validation ? { errors: Type.Optional(Type.Array(ProblemErrorEntrySchema)) } : {})
  }, {
    $id: `${cls.name}Problem`,
    description: `${cls.title}: ${cls.defaultDetail}`,
    additionalProperties: true,
    // A whole sample, so that a UI shows a problem rather than inventing extension members.
    examples: [{
      type: cls.type,
      title: cls.title,
      status: cls.status,
      detail: cls.defaultDetail,
      instance: '/items/1',
      ...(validation ? { errors: [{ detail: 'Expected string length greater or equal to 1', pointer: '#/name' }] } : {})
    }]
  })
  classSchemas.set(cls, schema)
  return schema
}

/**
 * The documented body of a status with these error classes: one class's schema, or `anyOf`
 * them. The schemas keep their `$id`: `swaggerOptions` turns them into named components of
 * the document being generated, so nothing is registered outside an application.
 */
export function problemBody (classes: readonly APIErrorClass[]): TSchema {
  const unique = [...new Set(classes)]
  if (unique.length === 1) return errorClassSchema(unique[0])
  return Type.Union(unique.map(errorClassSchema))
}
