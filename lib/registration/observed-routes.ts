// Telemetry of view routes (registration layer): an application's telemetries, and each operation's Fastify
// options given their observers. A route no telemetry observes is left exactly as it was built.
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'
import type { ObservedRoute, RouteObserver, Telemetry } from '../routes/telemetry.js'

const APP_TELEMETRY = Symbol('fastify-views.telemetry')
type WithTelemetry = FastifyInstance & { [APP_TELEMETRY]?: readonly Telemetry[] }

/**
 * Records a context's telemetries: every view route registered after it is observed by them.
 * Each is attached once per application and detached when it closes.
 */
export function configureTelemetry (app: FastifyInstance, telemetry: Telemetry | readonly Telemetry[]): void {
  const given = Array.isArray(telemetry) ? telemetry as readonly Telemetry[] : [telemetry as Telemetry]
  for (const [index, each] of given.entries()) {
    if (typeof (each as Partial<Telemetry> | null)?.observe !== 'function') {
      throw new ConfigurationError('FV_ERR_TELEMETRY', `fastify-views: telemetry${Array.isArray(telemetry) ? `[${index}]` : ''} is not a telemetry ` +
        '(an object with observe(route)): give otelTracing(), otelMetrics(), prometheusMetrics() or an object of your own')
    }
  }
  const own = Object.hasOwn(app, APP_TELEMETRY) ? (app as WithTelemetry)[APP_TELEMETRY] : undefined
  if (own !== undefined) {
    if (own.length === given.length && own.every((each, i) => each === given[i])) return
    throw new ConfigurationError('FV_ERR_TELEMETRY', 'fastify-views: the application was configured with one telemetry and is now given another; ' +
      'give it once, in the first configureApp(app, { telemetry }) or the plugin\'s telemetry (a list for several)')
  }
  ;(app as WithTelemetry)[APP_TELEMETRY] = given
  for (const each of given) {
    const detach = each.attach?.()
    if (detach !== undefined) app.addHook('onClose', async () => { detach() })
  }
}

/** The observers of one operation: those the context's telemetries return for it. */
export function observersOf (app: FastifyInstance | undefined, route: ObservedRoute): readonly RouteObserver[] {
  const telemetries = app === undefined ? undefined : (app as WithTelemetry)[APP_TELEMETRY]
  if (telemetries === undefined) return []
  return telemetries.map((telemetry) => telemetry.observe(route)).filter((observer) => observer !== undefined)
}

/** The hooks of Fastify's route options, each run inside the observers' context when one has one. */
const HOOKS = ['onRequest', 'preParsing', 'preValidation', 'preHandler', 'preSerialization', 'onSend', 'onResponse', 'onError',
  'onTimeout', 'onRequestAbort'] as const

type Within = NonNullable<RouteObserver['within']>
type Hook = (this: unknown, request: FastifyRequest, ...rest: unknown[]) => unknown

/**
 * The route options with its observers: a first `onRequest` hook that starts them and ends them when
 * the response is over (the socket's `close`, which an aborted response and an event stream's end
 * reach as well as a finished one), an `onError` hook that tells them of errors, and every other hook
 * and the handler run inside the observers that have a context.
 */
export function observeRoute (options: RouteOptions, observers: readonly RouteObserver[]): RouteOptions {
  if (observers.length === 0) return options
  const withins = observers.map((observer) => observer.within).filter((within) => within !== undefined)
  const out: Record<string, unknown> = { ...options }
  if (withins.length > 0) {
    // Several contexts nest, the first telemetry's outermost.
    const within = withins.reduce((outer: Within, inner: Within): Within => (request, fn, thisArg, ...args) =>
      outer(request, inner, undefined, request, fn, thisArg, ...args))
    for (const phase of HOOKS) {
      const hooks = options[phase] as Hook | Hook[] | undefined
      if (hooks !== undefined) out[phase] = (Array.isArray(hooks) ? hooks : [hooks]).map((hook) => inside(within, hook))
    }
    out.handler = inside(within, options.handler as Hook)
  }
  const errors = observers.filter((observer) => observer.error !== undefined)
  if (errors.length > 0) {
    const told = function observedError (request: FastifyRequest, reply: FastifyReply, error: Error, done: () => void) {
      for (const observer of errors) observer.error?.(request, reply, error)
      done()
    }
    out.onError = [told, ...(out.onError as Hook[] | undefined) ?? []]
  }
  const started = function observedRequest (request: FastifyRequest, reply: FastifyReply, done: () => void): void {
    for (const observer of observers) observer.start(request, reply)
    const raw = reply.raw
    raw.once('close', () => {
      for (const observer of observers) observer.end(request, reply, raw.writableEnded)
    })
    done()
  }
  out.onRequest = [started, ...(out.onRequest as Hook[] | undefined) ?? []]
  return out as unknown as RouteOptions // Fastify's own options, each hook list rebuilt from its own entries
}

/**
 * `hook` run inside the observers' context, with the same `this` and arguments (its `done` among them),
 * and its name (what a log or `@fastify/otel`'s hook spans call it).
 */
function inside (within: Within, hook: Hook): Hook {
  const observed = function (this: unknown, request: FastifyRequest, ...rest: unknown[]): unknown {
    return within(request, hook, this, request, ...rest)
  }
  return Object.defineProperty(observed, 'name', { value: hook.name })
}
