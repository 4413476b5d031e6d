// Registration (registration layer): a view class becomes Fastify routes in four passes, each in a file
// of its own: collect (collect.ts), contributions (contributions.ts), handler (handler.ts), assemble (assemble.ts),
// over the settings its levels resolve to (settings.ts).
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, RouteOptions } from 'fastify'
import { readsNoContent, parseJsonMediaTypes } from '../http/media-type.js'
import { assertParamsInPath, assertPrefix } from './checks.js'
import { buildRouteSchema } from '../openapi/operation.js'
import { serializerCompilerFor } from '../schema/serializer.js'
import { mergeRouteOptions } from '../routes/route-meta.js'
import { assertPrefixParams } from './prefix-params.js'
import { joinPath } from '../core/paths.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import { registrationSettings, type RegisterViewOptions, type RouterContext } from './settings.js'
import { documentedDefinition, validatorCompilerFor } from './validators.js'
import type { ViewClass } from '../views/view.js'
import { servedBy, sharedRoute, uniqueOperationId } from './served-routes.js'
import { routeContent } from './content.js'
import { notePatchRoute } from '../http/allowed-methods.js'
import { collectRoutes, compareSpecificity } from './collect.js'
import { makesViewEarly, operationsOf } from './contributions.js'
import { buildHandler } from './handler.js'
import { eventStreamer } from './event-stream.js'
import { assembleRoute } from './assemble.js'
import { observeRoute, observersOf } from './observed-routes.js'
import { appCache, cacheOf } from './cache-settings.js'

declare module 'fastify' {
  interface FastifyContextConfig {
    /** On view routes: the name of the view class that serves the route. */
    view?: string
    /** On view routes: the action (method name) that serves the route. */
    action?: string
    /** On view routes: the full prefix the view is registered under, the application's included (what links are built on). */
    prefix?: string
  }
}

export { joinPath, collectRoutes, compareSpecificity }

/**
 * Builds the Fastify route options of every operation of a view, most specific first. With
 * `app`, serializers may use the app's shared schemas.
 */
export function buildViewRoutes (
  klass: ViewClass,
  options: RegisterViewOptions = {},
  router?: RouterContext,
  app?: FastifyInstance
): RouteOptions[] {
  const serializerCompiler = serializerCompilerFor(app)
  const compileSerializer = (schema: TSchema): ((value: unknown) => string) => serializerCompiler({ schema })
  const resolved = registrationSettings(klass, options, router, app)
  const { policy, format, shared, registration, fullPrefix, appPrefix, appBodyLimit } = resolved
  const served = collectRoutes(klass)
  if (served.length > 0) assertPrefixParams(klass, joinPath(appPrefix, fullPrefix))
  const built: RouteOptions[] = []
  for (const { route, implementation } of served) {
    const merged = mergeRouteOptions(shared, route.options)
    const bodyLimit = merged.bodyLimit ?? appBodyLimit
    const content = routeContent(klass, route, merged, bodyLimit)
    const operations = operationsOf(klass, route, merged, bodyLimit, { shared, compileSerializer, app })
    const keepsView = makesViewEarly(operations)
    // A route without a body ignores or refuses content; on a GET, whose content Fastify never reads, in its handler.
    const checks = {
      json: content.jsonChecked,
      none: !content.takesBody && route.methods.some(readsNoContent) ? content.unexpectedContent : undefined,
      optionalBody: content.optionalBody,
      bodyLimit
    }
    const events = route.events === undefined ? undefined : eventStreamer(route.events, compileSerializer, app)
    const handler = buildHandler(klass, route, implementation, checks, keepsView, [], events)
    // The hooks that may make the view early are the ones that may validate the path and query early.
    const { jsonChecked } = content
    const settings = { jsonChecked, earlyChecks: keepsView, maxBodyDepth: klass.maxBodyDepth, policy }
    const validatorCompiler = validatorCompilerFor(klass, route, settings)
    const url = joinPath(fullPrefix, route.path)
    assertParamsInPath(klass, route, joinPath(appPrefix, url))
    // Response headers add up across levels instead of the innermost replacing the rest.
    const headerClasses = [router?.options.responseHeaders, registration.responseHeaders, route.options.responseHeaders,
      klass.getResponseHeaders(route.name)]
      .filter((h): h is ResponseHeadersClass => h !== undefined)
    for (const operation of operations) {
      const { method, definition, contribution } = operation
      const multiMethod = route.methods.length > 1
      const documented = { method, multiMethod, headerClasses, implementation, contribution }
      const context = { ...documented, errorFormat: format, url: joinPath(appPrefix, url) }
      const schema = buildRouteSchema(klass, documentedDefinition(definition, method, policy), context)
      const steps = contribution.beforeAction ?? []
      const observers = observersOf(app, {
        view: klass.name,
        action: route.name,
        method,
        route: context.url,
        stream: route.events === undefined ? undefined : 'events',
        cached: caches(app, klass, route.name, method)
      })
      built.push(observeRoute(assembleRoute(operation, {
        merged,
        content,
        route: {
          url,
          schema,
          handler: steps.length === 0
            ? handler
            : buildHandler(klass, route, implementation, checks, keepsView, steps, events),
          validatorCompiler,
          serializerCompiler,
          errorHandler: format.errorHandler,
          config: { ...merged.config, view: klass.name, action: route.name, prefix: joinPath(appPrefix, fullPrefix) }
        }
      }), observers))
    }
  }
  return built.sort((a, b) => compareSpecificity(a.url, b.url))
}

/** Whether the application's cache serves this operation's reads (what its answers' `x-cache` says). */
function caches (app: FastifyInstance | undefined, klass: ViewClass, action: string, method: string): boolean {
  if (appCache(app) === undefined || (method !== 'GET' && method !== 'HEAD')) return false
  const cache = cacheOf(klass)
  return cache?.ttl !== undefined && cache.actions.has(action)
}

/**
 * Registers every route of a view on a Fastify instance.
 * All reading of the class happens here, once; requests only run the handlers.
 */
export function registerView (
  app: FastifyInstance,
  klass: ViewClass,
  options: RegisterViewOptions = {},
  router?: RouterContext
): void {
  const routes = buildViewRoutes(klass, options, router, app)
  assertPrefix(app, klass, options, router)
  for (const route of routes) {
    uniqueOperationId(app, route.schema as { operationId?: string })
    parseJsonMediaTypes(app, route)
    // The OPTIONS of a path names the patch documents its PATCH takes (http/allowed-methods.ts).
    if (route.method === 'PATCH') {
      const body = route.schema?.body as { content?: Record<string, unknown> } | undefined
      notePatchRoute(app, joinPath(app.prefix, route.url), body === undefined ? undefined : body.content === undefined ? ['application/json'] : Object.keys(body.content))
    }
    try {
      app.route(route)
    } catch (error) {
      throw sharedRoute(app, klass, route, error)
    }
    servedBy(app).set(`${String(route.method)} ${route.url}`, klass.name)
  }
}
