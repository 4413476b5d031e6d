// How a view route's request parts are validated under its validation policy
// (docs/views.md#the-validation-policy), and how the document shows what the policy fills.
import type { TSchema } from '@sinclair/typebox'
import { JSON_BODY_ONLY } from '../http/media-type.js'
import { aliasedSchema } from '../schema/serialization.js'
import { assertDefaultsValid, compilePartValidator, strictBodySchema, type HttpPart, type PartValidator } from '../schema/validation.js'
import type { ResolvedValidationPolicy } from '../schema/validation-policy.js'
import { optionalDefaults } from '../schema/defaults.js'
import type { ResolvedRouteSchemas } from '../routes/types.js'
import type { CollectedRoute, RouteDefinition, ViewClass } from '../views/view.js'
import { isOptionalNode } from '../core/schema-node.js'

/** How a route's validators are compiled, besides its schemas. */
export interface ValidatorSettings {
  /** The route takes a JSON body only: a body's failures carry `JSON_BODY_ONLY`. */
  jsonChecked: boolean
  /** A hook of the route may validate the path, query and body early (`validateTargetEarly`, `checkedEarly`). */
  earlyChecks: boolean
  maxBodyDepth: number
  policy: ResolvedValidationPolicy
}

/** A PATCH body is a partial update: it changes what it names, so no default is ever filled into it. */
const fillsBodyDefaults = (method: string | undefined, policy: ResolvedValidationPolicy): boolean => policy.useDefaults && method !== 'PATCH'

/**
 * The route's validator compiler: it compiles the schemas the view declared (a body
 * closed against unknown properties, by its wire names), whatever wrapper the
 * route's documented schema puts around them, under the route's validation policy.
 * The defaults the policy fills are checked against their schemas here, at registration.
 */
export function validatorCompilerFor (klass: ViewClass, route: CollectedRoute, settings: ValidatorSettings): (
  input: { httpPart?: string, contentType?: string, method?: string }
) => PartValidator {
  const parts: ResolvedRouteSchemas = route.options.schema ?? {}
  const { bodyMediaTypes } = route
  const { jsonChecked, earlyChecks, maxBodyDepth, policy } = settings
  if (policy.useDefaults) {
    for (const part of ['params', 'querystring', 'headers', 'body'] as const) {
      const schema = parts[part]
      if (schema !== undefined && (part !== 'body' || route.methods.some((method) => fillsBodyDefaults(method, policy)))) {
        assertDefaultsValid(schema, `${klass.name}.${route.name} schema.${part}`)
      }
    }
  }
  // Fastify compiles exactly the parts the route's schema has, which are the declared ones;
  // a body taken in several media types is compiled once per type.
  return ({ httpPart, contentType, method }) => {
    const part = httpPart as HttpPart
    const declared = part === 'body' && contentType !== undefined && bodyMediaTypes !== undefined ? bodyMediaTypes[contentType].validation : parts[part]
    if (declared === undefined) return acceptAny // a patch document is checked when it is applied, with pointers into it
    if (part !== 'body') {
      return sharedValidator(declared, `${part} ${earlyChecks} ${policy.useDefaults}`, () => compilePartValidator(declared, part, { earlyChecks, useDefaults: policy.useDefaults }))
    }
    const useDefaults = fillsBodyDefaults(method, policy)
    const stripUnknown = policy.unknownProperties === 'strip'
    const validate = sharedValidator(declared, `body ${earlyChecks} ${maxBodyDepth} ${useDefaults} ${stripUnknown}`, () =>
      compilePartValidator(
        strictBodySchema(aliasedSchema(declared)),
        part,
        { earlyChecks, maxBodyDepth, useDefaults, stripUnknown }
      ))
    const checked = jsonChecked ? markJsonBodyErrors(validate) : validate
    return isOptionalNode(declared) ? orNone(checked) : checked
  }
}

/**
 * The body validator of a route whose body is optional: no body passes. Fastify hands a body
 * validator `null` for a request without one, so a JSON `null` passes too, and is no body.
 */
const orNone = (validate: PartValidator): PartValidator => (data) => data === null || validate(data)

/**
 * The route as its operation documents it for one method: where the policy fills defaults, a
 * member with one is optional, as the client may leave it out (`optionalDefaults`).
 */
export function documentedDefinition (
  definition: RouteDefinition,
  method: string,
  policy: ResolvedValidationPolicy
): RouteDefinition {
  const parts = definition.options.schema
  if (!policy.useDefaults || parts === undefined) return definition
  const shown: ResolvedRouteSchemas = {}
  let changed = false
  for (const part of ['params', 'querystring', 'headers', 'body'] as const) {
    const schema = parts[part]
    if (schema === undefined) continue
    shown[part] = part === 'body' && !fillsBodyDefaults(method, policy) ? schema : optionalDefaults(schema)
    changed ||= shown[part] !== schema
  }
  return changed ? { ...definition, options: { ...definition.options, schema: shown } } : definition
}

/** The body validator of a JSON-only route: its failures carry `JSON_BODY_ONLY`, for the error handler. */
function markJsonBodyErrors (validate: PartValidator): PartValidator {
  return (data) => {
    const result = validate(data)
    if (result !== true) (result.error as Error & { [JSON_BODY_ONLY]?: true })[JSON_BODY_ONLY] = true
    return result
  }
}

const acceptAny: PartValidator = () => true

/**
 * Validators compiled from one declared schema, by part and options: the routes of a view share
 * their schemas (the detail params of four routes, a body of create and update), and so share the
 * compiled validator, whose code and closures would otherwise be held once per route.
 */
const compiledValidators = new WeakMap<TSchema, Map<string, PartValidator>>()

function sharedValidator (declared: TSchema, key: string, compile: () => PartValidator): PartValidator {
  let byOptions = compiledValidators.get(declared)
  if (byOptions === undefined) compiledValidators.set(declared, byOptions = new Map())
  let validator = byOptions.get(key)
  if (validator === undefined) byOptions.set(key, validator = compile())
  return validator
}
