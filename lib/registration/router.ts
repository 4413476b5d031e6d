import type { FastifyInstance } from 'fastify'
import { registerView, type RegisterViewOptions } from './register.js'
import type { SharedRouteOptions } from '../routes/types.js'
import type { ViewClass } from '../views/view.js'
import type { ValidationPolicy } from '../schema/validation-policy.js'

/** Options of a `ViewRouter`: a prefix, a validation policy, and route options (tags, dependencies, responseHeaders, ...) for every route. */
export interface ViewRouterOptions extends SharedRouteOptions {
  prefix?: string
  /** The validation policy of its views; each option set here wins over the plugin's, and a registration's own wins over it. */
  validation?: ValidationPolicy
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
  readonly entries: Array<{ view: ViewClass, options: RegisterViewOptions }> = []

  constructor (options: ViewRouterOptions = {}) {
    const { prefix = '', validation, ...rest } = options
    this.prefix = prefix
    this.validation = validation
    this.options = rest
  }

  /** Adds every route of a view under `prefix`; extra route options go to each of its routes. */
  registerView (view: ViewClass, options: RegisterViewOptions = {}): this {
    this.entries.push({ view, options })
    return this
  }

  /** Registers every view of the router on a Fastify instance; `validation`: the policy around the router (the plugin's). */
  register (app: FastifyInstance, validation?: ValidationPolicy): void {
    for (const { view, options } of this.entries) registerView(app, view, options, { prefix: this.prefix, options: this.options, validation: [validation, this.validation] })
  }
}
