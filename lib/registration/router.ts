import type { FastifyInstance } from 'fastify'
import { registerView, type RegisterViewOptions } from './register.js'
import type { SharedRouteOptions } from '../routes/types.js'
import type { ViewClass } from '../views/view.js'

/** Options of a `ViewRouter`: a prefix, and route options (tags, dependencies, responseHeaders, ...) for every route. */
export interface ViewRouterOptions extends SharedRouteOptions {
  prefix?: string
}

/**
 * Groups views under one prefix and shared route options.
 * Hand it to the plugin (`views: [router]`) or call `register(app)` yourself.
 * Its dependencies run before those of each registration and each view.
 */
export class ViewRouter {
  readonly prefix: string
  readonly options: SharedRouteOptions
  readonly entries: Array<{ view: ViewClass, options: RegisterViewOptions }> = []

  constructor (options: ViewRouterOptions = {}) {
    const { prefix = '', ...rest } = options
    this.prefix = prefix
    this.options = rest
  }

  /** Adds every route of a view under `prefix`; extra route options go to each of its routes. */
  registerView (view: ViewClass, options: RegisterViewOptions = {}): this {
    this.entries.push({ view, options })
    return this
  }

  /** Registers every view of the router on a Fastify instance. */
  register (app: FastifyInstance): void {
    for (const { view, options } of this.entries) registerView(app, view, options, { prefix: this.prefix, options: this.options })
  }
}
