// The settings of one registration (registration layer): the options of its entry, what a router adds,
// and what they resolve to across the levels (plugin, router, entry): validation policy, error
// format, shared route options, prefixes and body limit.
import type { FastifyInstance } from 'fastify'
import { appErrorFormat, PROBLEM_FORMAT, type ErrorFormat } from '../http/error-format.js'
import { mergeRouteOptions } from '../routes/route-meta.js'
import { joinPath } from '../core/paths.js'
import type { SharedRouteOptions } from '../routes/types.js'
import { resolveValidationPolicy, type ResolvedValidationPolicy, type ValidationPolicy } from '../schema/validation-policy.js'
import type { ViewClass } from '../views/view.js'

/** Options of one registration of a view: its prefix, its validation policy, and route options for every route. */
export interface RegisterViewOptions extends SharedRouteOptions {
  prefix?: string
  /** The validation policy of the view's routes; each option set here wins over the router's and the plugin's (docs/views.md#the-validation-policy). */
  validation?: ValidationPolicy
  /** How the view's routes answer and document errors; wins over the router's, the plugin's and the application's (docs/errors.md#error-formats). */
  errorFormat?: ErrorFormat
}

/** What a router adds to every view it registers. */
export interface RouterContext {
  prefix: string
  options: SharedRouteOptions
  /** The validation policies of the levels around the registration, outermost first: the plugin's, the router's. */
  validation?: ReadonlyArray<ValidationPolicy | undefined>
  /** The error formats of the levels around the registration, outermost first: the plugin's, the router's. */
  errorFormat?: ReadonlyArray<ErrorFormat | undefined>
}

/** What a registration resolves to, read once for every route of the view. */
export interface RegistrationSettings {
  policy: ResolvedValidationPolicy
  format: ErrorFormat
  /** The route options of the entry, under the router's. */
  shared: SharedRouteOptions
  /** The entry's own route options (the ones response headers add up from). */
  registration: SharedRouteOptions
  /** The router's prefix and the entry's, joined; the application's prefix apart. */
  fullPrefix: string
  appPrefix: string
  appBodyLimit: number
}

/** Resolves a registration's settings: the innermost level that sets one wins, else the application's. */
export function registrationSettings (
  klass: ViewClass,
  options: RegisterViewOptions,
  router: RouterContext | undefined,
  app: FastifyInstance | undefined
): RegistrationSettings {
  const { prefix = '', validation, errorFormat, ...registration } = options
  const policy = resolveValidationPolicy([...router?.validation ?? [], validation], `${klass.name}'s registration`)
  const levels = [...router?.errorFormat ?? [], errorFormat]
  const format = levels.reduce<ErrorFormat | undefined>((outer, inner) => inner ?? outer, undefined) ??
    (app === undefined ? undefined : appErrorFormat(app)) ?? PROBLEM_FORMAT
  return {
    policy,
    format,
    shared: router === undefined ? registration : mergeRouteOptions(router.options, registration),
    registration,
    fullPrefix: joinPath(router?.prefix ?? '', prefix),
    appPrefix: app?.prefix ?? '',
    // Fastify's own default when the application sets none.
    appBodyLimit: app?.initialConfig.bodyLimit ?? 1024 * 1024
  }
}
