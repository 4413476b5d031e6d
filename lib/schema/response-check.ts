import type { TSchema } from '@sinclair/typebox'
import { InternalServerError, type ProblemErrorEntry } from '../http/errors.js'
import { compileProjection, isPlainData, shapeSchema } from './serialization.js'
import { compileCheck, validationEntries } from './validation.js'
import { compileShapeCheck } from './shape-check.js'

/**
 * A returned value did not match the route's response schema. The client gets a
 * generic 500; the log gets the pointers, so the bug is found without leaking data.
 */
export class ResponseValidationError extends InternalServerError {
  /** Where the returned value differs from the schema (logged, never sent). */
  readonly mismatches: ProblemErrorEntry[]

  constructor (mismatches: ProblemErrorEntry[]) {
    super(undefined)
    this.mismatches = mismatches
  }
}

/**
 * Compiles the response check of a route: the returned value, read per `fromAttributes`,
 * must have the shape of the success schema before it is sent (`validateResponse = true`),
 * or match every keyword of it, value constraints included (`strictResponse`).
 */
export function compileResponseCheck (
  schema: TSchema,
  fromAttributes: boolean | null,
  strict = false
): (value: unknown) => unknown {
  const checked = strict ? schema : shapeSchema(schema)
  const check = compileCheck(checked)
  // The shape check of most schemas compiles to plain loops; TypeBox's check explains a failure.
  const passes = (strict ? undefined : compileShapeCheck(checked)) ?? ((data: unknown) => check.Check(data))
  const project = fromAttributes === true ? compileProjection(schema) : undefined
  return (value) => {
    const data = project === undefined ? value : project(value)
    if (fromAttributes === false && !isPlainData(data)) {
      throw new ResponseValidationError([{ detail: 'Expected plain data, got a class instance (set fromAttributes to read attributes)', pointer: '#' }])
    }
    if (!passes(data)) throw new ResponseValidationError(validationEntries(check, data, 'body'))
    return data
  }
}
