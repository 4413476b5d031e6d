// The plugin (entry layer): `configureApp` and the Fastify plugin that registers views, routers and their options.
import type { FastifyInstance, FastifyPluginAsync } from 'fastify'
import fp from 'fastify-plugin'
import { appErrorFormat, PROBLEM_FORMAT, setAppErrorFormat, type ErrorFormat } from './http/error-format.js'
import { registerView } from './registration/register.js'
import type { RegisterViewOptions } from './registration/settings.js'
import { hasViewRoutes } from './registration/served-routes.js'
import { ViewRouter } from './registration/router.js'
import { View, type ViewClass } from './views/view.js'
import { ConfigurationError } from './core/configuration-error.js'
import { describeColumnsOf } from './stores/repository.js'
import type { ValidationPolicy } from './schema/validation-policy.js'
import { configureAuth, type AuthOptions } from './access/authenticator.js'
import { configureCache } from './registration/cache-settings.js'
import type { CacheStore } from './stores/cache/cache-store.js'
import type { Telemetry } from './routes/telemetry.js'
import { configureTelemetry } from './registration/observed-routes.js'

/** A view with its registration options: `{ view: Items, prefix: '/items', tags: ['items'] }`. */
export interface ViewEntry extends RegisterViewOptions {
  view: ViewClass
}

/** Options of the `fastify-views` plugin. */
export interface FastifyViewsOptions {
  /** Views (a class, or `{ view, prefix, ...routeOptions }`) and routers to register. */
  views?: Array<ViewClass | ViewEntry | ViewRouter>
  /**
   * Install the problem+json error and not-found handlers app-wide (default true).
   * View routes answer problem+json either way; this covers the rest of the app.
   */
  configureApp?: boolean
  /**
   * The validation policy of every view the plugin registers (defaults filled, unknown body
   * members refused, unless set); a router's and a registration entry's own options win over it.
   */
  validation?: ValidationPolicy
  /**
   * How the application answers and documents errors (default problem+json): its views, and with
   * `configureApp` its own routes and its 404s. A router's and a registration entry's own win over it.
   */
  errorFormat?: ErrorFormat
  /**
   * How the application authenticates (docs/permissions.md): its principal resolved on every view
   * route it registers. Its authenticators may resolve any type: the application's `Principal`
   * (declared once) is what its permissions and views read.
   */
  auth?: AuthOptions<any>
  /** The application's cache store (docs/cache.md): what views with `static cache` keep their answers in, and every write invalidates. */
  cache?: CacheStore
  /** What observes the application's view routes (docs/observability.md): traces, metrics; a list for several. */
  telemetry?: Telemetry | readonly Telemetry[]
}

/** Options of `configureApp`. */
export interface ConfigureAppOptions {
  /** How the application answers errors (default problem+json, `PROBLEM_FORMAT`). */
  errorFormat?: ErrorFormat
  /**
   * How the application authenticates (docs/permissions.md): its authenticators, tried in order on
   * every view route registered after, which set `request.principal`. Any principal type, as for the plugin's `auth`.
   */
  auth?: AuthOptions<any>
  /**
   * The application's cache store (docs/cache.md): `memoryCache()` for one instance, `redisCache(client)`
   * for several; every view route registered after caches and invalidates through it.
   */
  cache?: CacheStore
  /**
   * What observes every view route registered after (docs/observability.md): `otelTracing()`,
   * `otelMetrics({ meter })`, `prometheusMetrics()`, or a list of them. Without one a route pays nothing.
   */
  telemetry?: Telemetry | readonly Telemetry[]
}

// The error handler belongs to a context (Fastify encapsulates it), so each context
// configured gets one. A not-found handler belongs to a path prefix of the server, and
// Fastify refuses a second one for the same prefix, so it is set once per prefix: the
// plugin registered in two sibling contexts without a prefix configures `/` once. The
// clientError listener belongs to the HTTP server.
const configuredContexts = new WeakMap<FastifyInstance, ErrorFormat>()
const notFoundPrefixes = new WeakMap<object, Set<string>>()
const listeningServers = new WeakSet<object>()

/**
 * Installs what must be app-wide, in the application's error format (problem+json unless
 * `errorFormat` says otherwise): the error handler and not-found handler of the context it is
 * given and the contexts inside it, and the server's `clientError` listener, which answers
 * requests Node cannot parse. Views registered in the context answer in the same format.
 * Safe to call more than once, and on the root after a child context has been configured;
 * a second call with another format is refused, since routes added between the two would
 * answer in the first.
 */
export function configureApp (app: FastifyInstance, options: ConfigureAppOptions = {}): FastifyInstance {
  if (options.auth !== undefined) configureAuth(app, options.auth)
  if (options.cache !== undefined) configureCache(app, options.cache)
  if (options.telemetry !== undefined) configureTelemetry(app, options.telemetry)
  // Without a format of its own, a context answers in the format of the context around it.
  const format = options.errorFormat ?? appErrorFormat(app) ?? PROBLEM_FORMAT
  const configured = configuredContexts.get(app)
  if (configured !== undefined) {
    if (configured !== format) {
      throw new ConfigurationError('FV_ERR_ERROR_FORMAT', 'fastify-views: the application was configured with one error format and is now given another ' +
        `(${describeFormat(configured)}, then ${describeFormat(format)}): routes added in between would answer in the first. ` +
        'Declare the format once, in the first configureApp(app, { errorFormat }) or the plugin\'s errorFormat')
    }
    return app
  }
  configuredContexts.set(app, format)
  setAppErrorFormat(app, format)
  app.setErrorHandler(format.errorHandler)
  let prefixes = notFoundPrefixes.get(app.server)
  if (prefixes === undefined) notFoundPrefixes.set(app.server, prefixes = new Set())
  if (!prefixes.has(app.prefix)) {
    prefixes.add(app.prefix)
    app.setNotFoundHandler(format.notFoundHandler)
  }
  if (!listeningServers.has(app.server)) {
    listeningServers.add(app.server)
    // Fastify installs its JSON clientError listener when the server is created, so
    // the only way to change that answer afterwards is to replace the listener.
    app.server.removeAllListeners('clientError')
    app.server.on('clientError', format.clientErrorHandler)
  }
  return app
}

/** How a message names the format the application's errors were meant to have: the plugin's, else problem+json. */
const formatName = (format: ErrorFormat | undefined): string => format === undefined || format === PROBLEM_FORMAT ? 'problem+json' : `its error format (${describeFormat(format)})`

/** The call that configures the application in that format. */
const configureCall = (format: ErrorFormat | undefined): string => format === undefined || format === PROBLEM_FORMAT ? 'configureApp(app)' : 'configureApp(app, { errorFormat })'

const describeFormat = (format: ErrorFormat): string => format === PROBLEM_FORMAT ? 'problem+json' : `${format.contentType}, validation ${format.validationStatus}`

/** Fastify's own error handler: a context whose handler is still this one answers errors in Fastify's JSON. */
const hasDefaultErrorHandler = (app: FastifyInstance): boolean => app.errorHandler.name === 'defaultErrorHandler'

/**
 * The routes of the application so far, as Fastify prints them (`/ping (GET, HEAD)`), when none of
 * them is a view's: Fastify gives a route the error handler its context has when the route is added,
 * so those keep Fastify's JSON errors. With views already registered (a sibling context that
 * configured itself), the routes cannot be told apart, and none is reported.
 */
function plainRoutesSoFar (app: FastifyInstance): string[] {
  const tree = app.printRoutes({ commonPrefix: false })
  if (tree === '(empty tree)' || hasViewRoutes(app)) return []
  return tree.split('\n').map((line) => line.replace(/^[\s│├└─]+/, '')).filter((line) => line.includes('('))
}

const fastifyViews: FastifyPluginAsync<FastifyViewsOptions> = async (app, options) => {
  if (options.configureApp !== false) {
    // Routes added before the handlers are installed keep Fastify's JSON errors, silently.
    const before = hasDefaultErrorHandler(app) ? plainRoutesSoFar(app) : []
    if (before.length > 0) {
      throw new ConfigurationError('FV_ERR_CONFIGURE_FIRST', `fastify-views: ${before.length} route${before.length === 1 ? ' was' : 's were'} added before the plugin ` +
        `(${before.slice(0, 5).join(', ')}${before.length > 5 ? ', ...' : ''}), so ${before.length === 1 ? 'it keeps' : 'they keep'} Fastify's JSON errors, not ${formatName(options.errorFormat)}. ` +
        `Call ${configureCall(options.errorFormat)} right after creating the app, before any route or plugin`)
    }
    const { errorFormat, auth, cache, telemetry } = options
    configureApp(app, { errorFormat, auth, cache, telemetry })
  } else {
    if (options.auth !== undefined) configureAuth(app, options.auth)
    if (options.cache !== undefined) configureCache(app, options.cache)
    if (options.telemetry !== undefined) configureTelemetry(app, options.telemetry)
    // Opted out: something else must answer the application's errors and 404s by the time it starts.
    app.addHook('onReady', async function checkConfigured () {
      if (hasDefaultErrorHandler(app)) {
        throw new ConfigurationError('FV_ERR_CONFIGURE_FIRST', 'fastify-views: configureApp: false, but no error handler was set on the application: its own routes ' +
          `and its 404s answer Fastify's JSON errors, not ${formatName(options.errorFormat)}. Call ${configureCall(options.errorFormat)} right after creating the app, set your own error handler, ` +
          'or leave configureApp on')
      }
    })
  }
  // Stores that learn their fields from the database (PostgresRepository) learn them first, so that
  // registration checks the response schema of every view over them against their columns.
  const classes = (options.views ?? []).flatMap((entry) => entry instanceof ViewRouter ? entry.entries.map((e) => e.view) : [typeof entry === 'function' ? entry : entry?.view])
  // A database that cannot answer now must not keep the application from starting: its views are
  // registered unchecked, and say why in the log. (An entry that is not a view is refused below.)
  await Promise.all(classes.filter((view) => typeof view === 'function').map(async (view) => {
    try {
      await describeColumnsOf((view as { repository?: unknown }).repository)
    } catch (error) {
      app.log.warn({ err: error }, `fastify-views: the columns of ${view.name}'s table could not be read, so its response schema is not checked against them`)
    }
  }))
  // The plugin's policy and format are the outermost level around a view it registers itself
  // (without a format, its views answer in the application's).
  const { validation, errorFormat } = options
  const pluginLevel = validation === undefined && errorFormat === undefined ? undefined : { prefix: '', options: {}, validation: [validation], errorFormat: [errorFormat] }
  for (const entry of options.views ?? []) {
    if (entry instanceof ViewRouter) entry.register(app, validation, errorFormat)
    else if (typeof entry === 'function' && (entry === View || entry.prototype instanceof View)) registerView(app, entry, {}, pluginLevel)
    else if (typeof entry === 'object' && entry !== null && typeof entry.view === 'function') {
      const { view, ...rest } = entry
      registerView(app, view, rest, pluginLevel)
    } else {
      const given = typeof entry === 'function' ? `the class ${entry.name}` : String(JSON.stringify(entry))
      throw new ConfigurationError('FV_ERR_VIEW_ENTRY', `fastify-views: each entry of \`views\` must be a View class, { view, ...options } or a ViewRouter; got ${given}`)
    }
  }
}

/** The plugin: `app.register(views, { views: [...] })`. */
export const views = fp(fastifyViews, { name: 'fastify-views', fastify: '5.x' })
