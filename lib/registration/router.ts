// ViewRouter (registration layer): views grouped under one prefix and shared route options, registered together.
import type { FastifyInstance } from 'fastify'
import { registerView } from './register.js'
import type { RegisterViewOptions } from './settings.js'
import type { SharedRouteOptions } from '../routes/types.js'
import type { ViewClass } from '../views/view.js'
import type { ValidationPolicy } from '../schema/validation-policy.js'
import type { ErrorFormat } from '../http/error-format.js'

/** Options of a `ViewRouter`: a prefix, a validation policy, and route options (tags, dependencies, responseHeaders, ...) for every route. */
export interface ViewRouterOptions extends SharedRouteOptions {
  prefix?: string
  /** The validation policy of its views; each option set here wins over the plugin's, and a registration's own wins over it. */
  validation?: ValidationPolicy
  /** How its views answer and document errors; wins over the plugin's and the application's, a registration's own wins over it. */
  errorFormat?: ErrorFormat
}

/**
 * Groups views under one prefix and shared route options.
 * Hand it to the plugin (`views: [router]`) or call `register(app)` yourself.
 * Its dependencies run before those of each registration and each view.
 */
export class ViewRouter {
  readonly prefix: string
  readonly options: SharedRouteOptions
  readonly validation: ValidationPolicy | undefined
  readonly errorFormat: ErrorFormat | undefined
  readonly entries: Array<{ view: ViewClass, options: RegisterViewOptions }> = []

  constructor (options: ViewRouterOptions = {}) {
    const { prefix = '', validation, errorFormat, ...rest } = options
    this.prefix = prefix
    this.validation = validation
    this.errorFormat = errorFormat
    this.options = rest
  }

  /** Adds every route of a view under `prefix`; extra route options go to each of its routes. */
  registerView (view: ViewClass, options: RegisterViewOptions = {}): this {
    this.entries.push({ view, options })
    return this
  }

  /**
   * Registers every view of the router on a Fastify instance; `validation` and `errorFormat`: the
   * policy and the format around the router (the plugin's), which the router's own options win over.
   */
  register (app: FastifyInstance, validation?: ValidationPolicy, errorFormat?: ErrorFormat): void {
    const levels = {
      prefix: this.prefix,
      options: this.options,
      validation: [validation, this.validation],
      errorFormat: [errorFormat, this.errorFormat]
    }
    for (const { view, options } of this.entries) registerView(app, view, options, levels)
  }
}
