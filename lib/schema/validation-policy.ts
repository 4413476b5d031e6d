/**
 * The validation policy of view routes: whether the defaults of members a request leaves out are
 * filled, and whether unknown body members are refused or stripped (docs/views.md#the-validation-policy).
 * Declared on the plugin, a router and a registration entry; resolved once per registration.
 */
import { ConfigurationError } from '../core/configuration-error.js'

/**
 * What a route does with what a request leaves out and with body members its schema does not
 * name (docs/views.md#the-validation-policy). The plugin, a `ViewRouter` and a registration entry
 * each may set it; the innermost setting of each option wins.
 */
export interface ValidationPolicy {
  /**
   * Fill a member the request leaves out with its schema's `default`, in the path, the query,
   * headers and the body, as Fastify's Ajv does with `useDefaults` (default `true`). A member
   * with a default is then not required of the client. Never in the body of a PATCH: a partial
   * update changes what it names, and a default there would overwrite the stored value.
   */
  useDefaults?: boolean
  /**
   * A body member that no schema of its object names: `'refuse'` it, a 400 naming it (the
   * default), or `'strip'` it, removed before the action sees the body (Ajv's `removeAdditional`).
   * Only objects the body schema closes: a `Type.Record` or an object open to other members keeps them.
   */
  unknownProperties?: 'refuse' | 'strip'
}

/** A validation policy with every option decided. */
export type ResolvedValidationPolicy = Required<ValidationPolicy>

/** The policy of a route that sets none: defaults filled, unknown body members refused. */
const DEFAULT_VALIDATION_POLICY: ResolvedValidationPolicy = Object.freeze({ useDefaults: true, unknownProperties: 'refuse' })

const POLICY_CHECKS: Record<keyof ValidationPolicy, { valid: (value: unknown) => boolean, expected: string }> = {
  useDefaults: { valid: (value) => typeof value === 'boolean', expected: 'true or false' },
  unknownProperties: { valid: (value) => value === 'refuse' || value === 'strip', expected: '\'refuse\' or \'strip\'' }
}

/**
 * The policy of a route from the levels that may set it, outermost first (the plugin, a router,
 * the registration entry): each option from the innermost level that sets it. `where` names the
 * registration in the error an option the library does not know, or a value it does not take, throws.
 */
export function resolveValidationPolicy (
  levels: ReadonlyArray<ValidationPolicy | undefined>,
  where: string
): ResolvedValidationPolicy {
  let policy: ResolvedValidationPolicy = DEFAULT_VALIDATION_POLICY
  for (const level of levels) {
    if (level === undefined) continue
    if (typeof level !== 'object' || level === null) {
      throw new ConfigurationError('FV_ERR_VALIDATION_POLICY', `${where}: validation must be an object ({ useDefaults, unknownProperties }); got ${String(JSON.stringify(level))}`)
    }
    for (const [key, value] of Object.entries(level)) {
      const check = Object.hasOwn(POLICY_CHECKS, key) ? POLICY_CHECKS[key as keyof ValidationPolicy] : undefined
      if (check === undefined) {
        throw new ConfigurationError('FV_ERR_VALIDATION_POLICY', `${where}: validation.${key} is not an option of the validation policy; its options are useDefaults and unknownProperties`)
      }
      if (value === undefined) continue
      if (!check.valid(value)) throw new ConfigurationError('FV_ERR_VALIDATION_POLICY', `${where}: validation.${key} must be ${check.expected}; got ${String(JSON.stringify(value))}`)
      policy = { ...policy, [key]: value }
    }
  }
  return policy
}
