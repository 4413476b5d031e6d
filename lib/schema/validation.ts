// Request validation (schema layer): the TypeBox compiler with the formats Fastify validates with, the
// problem entries of a failure, bodies closed against unknown members, and the compiled validator of each request part.
import { Kind, type TSchema } from '@sinclair/typebox'
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler'
import type { FastifyRequest } from 'fastify'
import { RequestValidationError, type ProblemErrorEntry } from '../http/errors.js'
import { PART_DETAIL, PART_LOCATION, type HttpPart } from '../http/request-parts.js'
import { toTypeBox, type Schema } from '../core/typebox-lines.js'
import { firstTooDeep } from '../core/json-depth.js'
import { schemaDepth } from './depth.js'
import { compileDefaults, declaredDefaults, unfilledDefaults } from './defaults.js'
import { compileStrip } from './strip.js'
import { buildCoercion } from './coercion.js'
import { useFormatsOf } from './formats.js'

export { isCanonicalDateTime, registerFormats, useFormatsOf } from './formats.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { asTypeBox, isArrayNode, isObjectNode, isUnionNode, type SchemaNode } from '../core/schema-node.js'

export type { HttpPart }

const MAX_REPORTED_ERRORS = 20

/** The TypeBox compiler, with the formats the schema uses registered first. */
export function compileCheck<T extends TSchema> (schema: T): TypeCheck<T> {
  useFormatsOf(schema)
  // Equal schemas (the bodies and parameters of many resources) compile to one text: one check
  // serves them all, and its function and text are kept once, not once per route. The key holds
  // the schema's JSON too, which an error function may read (an `errorMessage` keyword).
  const key = `${TypeCompiler.Code(schema)}\n${JSON.stringify(schema)}`
  let check = COMPILED.get(key)
  if (check === undefined) COMPILED.set(key, check = TypeCompiler.Compile(schema))
  return check as TypeCheck<T> // the same code checks the same values: a check of an equal schema
}

/** The TypeBox checks compiled in this process, by their code and schema. */
const COMPILED = new Map<string, TypeCheck<TSchema>>()

/** Problem entries for a value that failed `check`: one per pointer, the first message wins. */
export function validationEntries (check: TypeCheck<TSchema>, value: unknown, part: HttpPart): ProblemErrorEntry[] {
  const entries: ProblemErrorEntry[] = []
  const seen = new Set<string>()
  const location = PART_LOCATION[part]
  for (const error of check.Errors(value)) {
    if (seen.has(error.path)) continue
    seen.add(error.path)
    const entry: ProblemErrorEntry = { detail: allowedValues(error.schema) ?? error.message, pointer: '#' + error.path }
    if (location !== undefined) {
      entry.in = location
      // An error about the whole query (`minProperties`) names no parameter.
      const token = error.path.split('/')[1]
      if (token !== undefined) entry.parameter = unescapePointerToken(token)
    }
    entries.push(entry)
    if (entries.length === MAX_REPORTED_ERRORS) break
  }
  return entries
}

/** Literals a union lists in full before the rest is cut: a client needs the choices, not a page of them. */
const LISTED_LITERALS = 20

/**
 * For a value that is none of a union of literals (`sort=author`, an enum), the choices:
 * `Expected one of: name, -name, price, -price` instead of TypeBox's "Expected union value".
 */
function allowedValues (schema: SchemaNode): string | undefined {
  if (!isUnionNode(schema)) return undefined
  const members = schema.anyOf
  if (members.length === 0 || !members.every((m) => m.const !== undefined)) return undefined
  const values = members.map((m) => typeof m.const === 'string' ? m.const : JSON.stringify(m.const))
  return `Expected one of: ${values.slice(0, LISTED_LITERALS).join(', ')}${values.length > LISTED_LITERALS ? `, and ${values.length - LISTED_LITERALS} more` : ''}`
}

function unescapePointerToken (token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~')
}

/**
 * The schema a JSON body is validated against: every object that does not say
 * otherwise rejects unknown properties, so a typo or a field the client may not set
 * (an `id`, a tenant) is a 400 naming it rather than silently dropped or stored.
 * Intersections are closed as a whole (`unevaluatedProperties`), never member by member.
 */
export function strictBodySchema<T extends TSchema> (schema: T): T {
  return asTypeBox<T>(closeObjects(schema, false))
}

function closeObjects (schema: SchemaNode, insideIntersect: boolean): SchemaNode {
  const kind = schema[Kind]
  if (kind === 'Ref' || kind === 'This' || schema.$ref !== undefined) return schema
  let out: SchemaNode = schema
  const edit = (key: string, value: unknown): void => {
    if (out === schema) out = { ...schema }
    out[key] = value
  }
  if (isObjectNode(schema)) {
    const props = schema.properties
    const closed: Record<string, SchemaNode> = {}
    let changed = false
    for (const key of Object.keys(props)) {
      closed[key] = closeObjects(props[key], false)
      if (closed[key] !== props[key]) changed = true
    }
    if (changed) edit('properties', closed)
  }
  if (schema.type === 'object' && !insideIntersect && schema.additionalProperties === undefined && schema.unevaluatedProperties === undefined && schema.patternProperties === undefined) {
    edit('additionalProperties', false)
  }
  if (isArrayNode(schema)) {
    const items = closeObjects(schema.items, false)
    if (items !== schema.items) edit('items', items)
  }
  for (const key of ['anyOf', 'oneOf'] as const) {
    const members = schema[key]
    if (Array.isArray(members)) {
      const closed = members.map((m) => closeObjects(m, insideIntersect))
      if (closed.some((m, i) => m !== members[i])) edit(key, closed)
    }
  }
  if (Array.isArray(schema.allOf)) {
    const members = schema.allOf
    const closed = members.map((m) => closeObjects(m, true))
    if (closed.some((m, i) => m !== members[i])) edit('allOf', closed)
    // An intersection inside another is closed by the outer one; one that says otherwise stays open.
    if (!insideIntersect && schema.unevaluatedProperties === undefined) edit('unevaluatedProperties', false)
  }
  return out
}

/**
 * The schema with its property names lower-cased: header names are case-insensitive, and Node.js gives
 * them lower-cased. The schema itself when every name is lower-case already.
 */
export function lowerCaseKeys (schema: SchemaNode): SchemaNode {
  const props = schema.properties
  if (props === undefined || Object.keys(props).every((key) => key === key.toLowerCase())) return schema
  const lowered: Record<string, SchemaNode> = {}
  for (const key of Object.keys(props)) lowered[key.toLowerCase()] = props[key]
  const out: SchemaNode = { ...schema, properties: lowered }
  if (Array.isArray(schema.required)) out.required = schema.required.map((k) => k.toLowerCase())
  return out
}

/** The request parts a hook may check ahead of Fastify's validation phase. */
export type EarlyPart = 'params' | 'querystring' | 'body'

/**
 * The object of each part a hook found valid ahead of Fastify's validation phase
 * (`validateTargetEarly`, `checkedEarly`): the route's own validator, which Fastify runs next on
 * the same object, passes it without checking it twice, and forgets it. One slot per part, not a
 * set of every request's objects: a weak collection keyed by short-lived objects cost each
 * request more than the check it saved. A request whose later hooks wait may find its slot taken
 * by another request's object; its part is then checked again, which is only slower.
 */
const passedEarly: Record<EarlyPart, object | undefined> = {
  params: undefined,
  querystring: undefined,
  body: undefined
}

/** Records that `value`, the request's `part`, passed the route's own validator ahead of Fastify's phase. */
export function checkedEarly (part: EarlyPart, value: unknown): void {
  // Only an object is known by its identity: an equal string or number of another request is not this one.
  if (typeof value === 'object' && value !== null) passedEarly[part] = value
}

const TARGET_PARTS = ['params', 'querystring'] as const

/**
 * Validates (and converts, in place) the path and query of a request before Fastify's
 * validation phase, for a hook that must know its target first: a precondition check
 * reads the current object before the body is processed (RFC 9110 section 13.2.1). What
 * passes is remembered, so the route's own validators do not check it a second time.
 */
export function validateTargetEarly (request: FastifyRequest): boolean {
  for (const part of TARGET_PARTS) {
    const validate = request.getValidationFunction(part)
    if (validate === undefined) continue
    const value = part === 'params' ? request.params : request.query
    if (validate(value) !== true) return false
    checkedEarly(part, value)
  }
  return true
}

/** How many levels of arrays and objects a JSON body may nest where its schema does not bound it (`View.maxBodyDepth`). */
export const DEFAULT_MAX_BODY_DEPTH = 128

/** A member's path in a schema for a message: `lines.*.n`. */
const memberPath = (path: string): string => path.slice(1).replaceAll('/', '.')

/**
 * Refuses, at registration, a `default` that would not do what it says: one its own schema does not
 * accept (every request that left the member out would be a 400 the client could do nothing about),
 * and one inside a union, where none is filled (Fastify's Ajv refuses it too, in strict mode).
 * `where` names the schema.
 */
export function assertDefaultsValid (schema: TSchema, where: string): void {
  const [unfilled] = unfilledDefaults(schema)
  if (unfilled !== undefined) {
    throw new ConfigurationError('FV_ERR_VALIDATION_POLICY', `${where}: the default of ${memberPath(unfilled)} is inside a union (anyOf), where no default is filled ` +
      '(which member a value matches is not known before it is checked); move it onto the member that holds the union, or remove it')
  }
  for (const { schema: member, value, path } of declaredDefaults(schema)) {
    let valid: boolean
    try {
      // The default is filled in, its own defaults included, before the value is checked.
      const filled: unknown = typeof value === 'object' && value !== null ? JSON.parse(JSON.stringify(value)) : value
      compileDefaults(member)?.(filled)
      valid = typeof value !== 'function' && compileCheck(member).Check(filled)
    } catch {
      // A member that refers to the schema around it (`This`) cannot be compiled alone: the request's check covers it.
      continue
    }
    if (!valid) {
      throw new ConfigurationError('FV_ERR_VALIDATION_POLICY', `${where}: the default of ${memberPath(path)} (${String(JSON.stringify(value))}) is not a value its own schema accepts, ` +
        'so every request that leaves it out would be refused; correct the default, or remove it')
    }
  }
}

/** A compiled validator as Fastify's route-level `validatorCompiler` returns it. */
export type PartValidator = (data: unknown) => true | { error: Error }

/** How one request part is validated, besides its schema. */
export interface PartValidatorOptions {
  /** A hook of the route may have validated the path, query or body already (`validateTargetEarly`, `checkedEarly`): what it passed is not checked again. */
  earlyChecks?: boolean
  /** How deeply a body may nest where its schema does not bound it (a deeper one is a 400 naming where). */
  maxBodyDepth?: number
  /** Fill the defaults of members the request leaves out (default: none filled). */
  useDefaults?: boolean
  /** Remove body members the schema's closed objects do not name, instead of refusing them (default: refused). */
  stripUnknown?: boolean
}

/** Steps that change a value before it is checked, run in order; `undefined` when there are none. */
function inOrder (...steps: Array<((data: never) => void) | undefined>): ((data: unknown) => void) | undefined {
  // A step that reads an object (the coercion of a query) is given one: Fastify parses path, query and headers into objects.
  const present = steps.filter((step) => step !== undefined) as Array<(data: unknown) => void>
  if (present.length === 0) return undefined
  if (present.length === 1) return present[0]
  const [first, second] = present
  return (data) => {
    first(data)
    second(data)
  }
}

/**
 * Compiles the validator of one request part. Called by Fastify at registration
 * (route option `validatorCompiler`); the returned function is the whole per-request cost.
 * Before the check, in order: a query, path or headers value is converted (`buildCoercion`), a
 * body's unknown members are stripped (`stripUnknown`), and missing members get their defaults
 * (`useDefaults`); each step exists only where the schema gives it something to do.
 */
export function compilePartValidator (
  schema: TSchema,
  part: HttpPart,
  options: PartValidatorOptions = {}
): PartValidator {
  const {
    earlyChecks = false,
    maxBodyDepth = DEFAULT_MAX_BODY_DEPTH,
    useDefaults = false,
    stripUnknown = false
  } = options
  const target = part === 'headers' ? asTypeBox(lowerCaseKeys(schema)) : schema
  const check = compileCheck(target)
  const prepare = part === 'body'
    ? inOrder(
      stripUnknown
        ? compileStrip(
          target,
          (s) => { const c = compileCheck(s); return (value) => c.Check(value) }
        )
        : undefined,
      useDefaults ? compileDefaults(target) : undefined
    )
    : inOrder(buildCoercion(target), useDefaults ? compileDefaults(target) : undefined)
  const fail = (data: unknown): { error: Error } => ({
    error: new RequestValidationError(PART_DETAIL[part], { errors: validationEntries(check, data, part) })
  })
  // A body whose schema lets it nest without bound (Type.Unknown, Type.Any) would be stored as it
  // came, and every later answer that serializes it would fail: it is walked for its depth first.
  const tooDeep = part === 'body' && schemaDepth(target) > maxBodyDepth
    ? (data: unknown): { error: Error } | undefined => {
        const where = firstTooDeep(data, maxBodyDepth)
        return where === undefined ? undefined : { error: new RequestValidationError(PART_DETAIL.body, { errors: [{ detail: `Nested more than ${maxBodyDepth} levels deep`, pointer: '#' + where }] }) }
      }
    : undefined
  const checked: PartValidator = prepare === undefined
    ? (data) => check.Check(data) ? true : fail(data)
    : (data) => {
        prepare(data)
        return check.Check(data) ? true : fail(data)
      }
  const run: PartValidator = tooDeep === undefined ? checked : (data) => tooDeep(data) ?? checked(data)
  // A part a hook validated ahead of Fastify's phase (validateTargetEarly, checkedEarly) is not checked twice.
  const early = earlyChecks && part !== 'headers' ? part : undefined
  const validate: PartValidator = early === undefined
    ? run
    : (data) => {
        if (data !== passedEarly[early]) return run(data)
        passedEarly[early] = undefined
        return true
      }
  // A recursive schema (TypeBox `Recursive`) is checked by recursion, so a value nested
  // deeper than the stack allows (a few kilobytes of `[[[...`) would end in a RangeError
  // and a 500: it is a 400. A try costs nothing until something is thrown.
  return (data) => {
    try {
      return validate(data)
    } catch (error) {
      if (!(error instanceof RangeError)) throw error
      return { error: new RequestValidationError(`${PART_DETAIL[part]} It is nested too deeply to be checked.`, { errors: [{ detail: 'Nested too deeply', pointer: '#' }] }) }
    }
  }
}

/**
 * Fastify's `validatorCompiler` route option, backed by the TypeBox compiler; takes schemas of
 * either TypeBox line. Defaults are filled as Fastify's Ajv fills them (not in a PATCH body);
 * bodies are not closed against unknown members.
 */
export function typeboxValidatorCompiler (
  { schema, httpPart, url, method }: { schema: unknown, httpPart?: string, url?: string, method?: string }
): PartValidator {
  const part = (httpPart ?? 'body') as HttpPart // Fastify names one of the four parts
  const where = `the ${part} schema of ${url ?? 'a route'}`
  const typed = toTypeBox(schema as Schema, where) // Fastify passes the route's schema as it was given
  const useDefaults = part !== 'body' || method !== 'PATCH'
  if (useDefaults) assertDefaultsValid(typed, where)
  return compilePartValidator(typed, part, { useDefaults })
}
