// The response check (schema layer): a returned value checked against the route's response schema before it is serialized, a 500 rather than a wrong answer.
import type { TSchema } from '@sinclair/typebox'
import type { TypeCheck } from '@sinclair/typebox/compiler'
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
  // The routes of a view send one schema several times (retrieve, create, the updates): one check serves them all.
  const key = `${String(fromAttributes)} ${String(strict)}`
  let compiled = CHECKS.get(schema)
  if (compiled === undefined) CHECKS.set(schema, compiled = new Map())
  let check = compiled.get(key)
  if (check === undefined) compiled.set(key, check = compileFresh(schema, fromAttributes, strict))
  return check
}

/** The response checks compiled so far, by schema, then by their options. */
const CHECKS = new WeakMap<TSchema, Map<string, (value: unknown) => unknown>>()

function compileFresh (schema: TSchema, fromAttributes: boolean | null, strict: boolean): (value: unknown) => unknown {
  const checked = strict ? schema : shapeSchema(schema)
  // The shape check of most schemas compiles to plain loops; TypeBox's check, which explains a
  // failure, is then compiled on the first failure only (a bug of the application), not kept by every route.
  const shape = strict ? undefined : compileShapeCheck(checked)
  let check = shape === undefined ? compileCheck(checked) : undefined
  const explained = (): TypeCheck<TSchema> => (check ??= compileCheck(checked))
  const passes = shape ?? ((data: unknown) => explained().Check(data))
  const project = fromAttributes === true ? compileProjection(schema) : undefined
  return (value) => {
    const data = project === undefined ? value : project(value)
    if (fromAttributes === false && !isPlainData(data)) {
      throw new ResponseValidationError([{ detail: 'Expected plain data, got a class instance (set fromAttributes to read attributes)', pointer: '#' }])
    }
    if (!passes(data)) throw new ResponseValidationError(validationEntries(explained(), data, 'body'))
    return data
  }
}
