import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify'
import { OWN_SERIALIZER_OPTIONS, type APIView } from '../views/api-view.js'
import { findRaises, getCatchSpecs, raisesPairs } from '../views/decorators.js'
import { dependencyHooks } from '../routes/dependencies.js'
import { hasContent, ignoreUnreadContent, isJsonRequest, mediaTypeHooks, noContent, notJson, parseJsonMediaTypes, readsNoContent, type UnexpectedContent } from '../http/media-type.js'
import { assertBodiesFitRepository, assertCreatesFitResponse, assertDependencyKeys, assertFilterFitsFields, assertParamsInPath, assertResponseFitsColumns, assertNoContentHasNoBody, assertNoNearMisses, assertStoredObjectsSchema } from './checks.js'
import { buildRouteSchema } from '../openapi/operation.js'
import { appErrorFormat, PROBLEM_FORMAT, type ErrorFormat } from '../http/error-format.js'
import { compileResponseCheck } from '../schema/response-check.js'
import { serializerCompilerFor } from '../schema/serializer.js'
import { getRouteMeta, mergeRouteOptions, resolveRouteOptions } from '../routes/route-meta.js'
import { assertPrefixParams, withPrefixParams } from './prefix-params.js'
import { joinPath } from '../core/paths.js'
import { ENVELOPED_ACTIONS, envelopeSchema, wrapIn } from '../views/envelope.js'
import { schemaStatic, toTypeBox } from '../core/typebox-lines.js'
import { compileRenamer } from '../schema/serialization.js'
import { wireForm, type SerializerOptions, type WireForm } from '../schema/wire.js'
import type { ResponseHeadersClass } from '../http/response-headers.js'
import type { SharedRouteOptions } from '../routes/types.js'
import { resolveValidationPolicy, type ValidationPolicy } from '../schema/validation-policy.js'
import { documentedDefinition, validatorCompilerFor } from './validators.js'
import { ABSTRACT, keptView, type BeforeAction, type CollectedRoute, type RouteDefinition, type View, type ViewClass } from '../views/view.js'
import { then, type MaybePromise } from '../core/maybe-promise.js'
import { toList } from '../core/list.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { servedBy, sharedRoute } from './served-routes.js'
import { routeContent } from './content.js'
import { notePatchRoute } from '../http/allowed-methods.js'

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

type ViewStatics = ViewClass & Partial<Pick<typeof APIView,
  'responseSchema' | 'envelope' | 'validateResponse' | 'strictResponse' | 'fromAttributes' | 'defaultSerializerOptions' | 'defaultErrors' | 'errors' | 'raises' | 'getDependencies'>>

export { joinPath }

/** A method of a view class as a route's handler calls it, on a new view with the request. */
type ViewMethod = (this: View, request: FastifyRequest) => MaybePromise<unknown>

/** A route of a view with the method that serves it. */
interface ServedRoute { route: CollectedRoute, implementation: ViewMethod }

function methodsOf (klass: ViewClass): Map<string, ViewMethod> {
  const found = new Map<string, ViewMethod>()
  for (let proto = klass.prototype; proto !== null &&
    proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      if (key === 'constructor' || found.has(key)) continue
      const descriptor = Object.getOwnPropertyDescriptor(proto, key)
      if (descriptor !== undefined && typeof descriptor.value === 'function') found.set(key, descriptor.value)
    }
  }
  return found
}

/**
 * Reads a view class into its route definitions, each with the method that serves it: standard
 * actions first, then every decorated method. Throws `FV_ERR_ABSTRACT_VIEW` for an unimplemented action.
 */
export function collectRoutes (klass: ViewClass): ServedRoute[] {
  const statics: ViewStatics = klass
  statics.assertRegistrable()
  const methods = methodsOf(klass)
  const served: ServedRoute[] = []
  const standardNames = new Set<string>()
  for (const action of statics.standardActions()) {
    // The same action mixed in twice (sync and async) is one route.
    if (standardNames.has(action.name)) continue
    standardNames.add(action.name)
    // Every action mixin installs an implementation or the abstract placeholder.
    const fn = methods.get(action.name)
    if (fn === undefined || ABSTRACT in fn) {
      throw new ConfigurationError('FV_ERR_ABSTRACT_VIEW', `Cannot register ${klass.name}: it is abstract, action method "${action.name}" is not implemented`)
    }
    const meta = getRouteMeta(fn)
    const route = klass.getActionRoute(action)
    const where = `${klass.name}.${action.name}`
    const options = resolveRouteOptions(
      meta === undefined ? route.options : mergeRouteOptions(route.options, meta.options),
      where
    )
    served.push({
      implementation: fn,
      route: {
        name: action.name,
        methods: [action.method],
        path: route.path,
        status: options.statusCode ?? action.status,
        options,
        throws: [...new Set([...(action.throws ?? []), ...(route.throws ?? []), ...(meta?.throws ?? [])])],
        responseSchema: options.responseSchema ?? toTypeBox(route.responseSchema, `${where} responseSchema`),
        onNone: route.onNone,
        after: route.after,
        emptyBody: route.emptyBody,
        standard: true,
        // An action that reads a body takes JSON without a schema for it too: any JSON, and its operation says so.
        ...(action.body === true && options.schema?.body === undefined ? { anyJsonBody: true } : {}),
        ...(route.bodyMediaTypes === undefined ? {} : { bodyMediaTypes: route.bodyMediaTypes })
      }
    })
  }
  for (const [name, fn] of methods) {
    const meta = getRouteMeta(fn)
    if (meta === undefined || standardNames.has(name)) continue
    const declared = meta.route
    if (declared === undefined) {
      throw new ConfigurationError('FV_ERR_NO_ROUTE', `${klass.name}.${name} has @Override or @Throws but no route decorator, and is not a standard action`)
    }
    const path = meta.detail === true ? joinPath(klass.getDetailRoute(name), declared.path) : declared.path
    const status = meta.options.statusCode ?? declared.defaultStatus
    const options = resolveRouteOptions(meta.options, `${klass.name}.${name}`)
    served.push({
      implementation: fn,
      route: {
        name,
        methods: declared.methods,
        path,
        status,
        options,
        throws: meta.throws,
        responseSchema: status === 204 ? undefined : options.responseSchema ?? schemaStatic(statics, 'responseSchema'),
        emptyBody: status === 204,
        standard: false
      }
    })
  }
  const routes = served.map(({ route }) => route)
  for (const route of routes) route.options = withPrefixParams(klass, route.options)
  // A malformed entry of raises fails here rather than when the exception it maps is thrown.
  raisesPairs(statics)
  for (const { route, implementation } of served) checkCatches(statics, route.name, implementation)
  assertNoNearMisses(klass)
  assertStoredObjectsSchema(klass, routes)
  assertNoContentHasNoBody(klass, routes)
  assertBodiesFitRepository(klass, routes, methods)
  assertResponseFitsColumns(klass, routes, methods)
  assertFilterFitsFields(klass)
  assertCreatesFitResponse(klass, routes, methods)
  assertDependencyKeys(klass, routes)
  // Last: the checks above compare the object itself with the repository, not its envelope.
  for (const route of routes) if (route.standard) enveloped(klass, route)
  return served
}

/**
 * Puts a standard action on one object in the view's `envelope`: its answer and its JSON body
 * are documented, validated and sent wrapped, while the action sees the object itself.
 */
function enveloped (klass: ViewClass, route: CollectedRoute): void {
  const statics: ViewStatics = klass
  const name = statics.envelope
  if (name === undefined || !ENVELOPED_ACTIONS.has(route.name)) return
  if (route.bodyMediaTypes !== undefined && Object.keys(route.bodyMediaTypes).some((type) => type !== 'application/json')) {
    throw new ConfigurationError('FV_ERR_ENVELOPE', `Cannot register ${klass.name}: patch documents apply to the representation, which its envelope "${name}" wraps; ` +
      'set patchFormats = [\'json\'], or remove the envelope')
  }
  route.envelope = name
  if (route.responseSchema !== undefined && !route.emptyBody) {
    route.responseSchema = envelopeSchema(
      route.responseSchema,
      name
    )
  }
  const body = route.options.schema?.body
  if (body !== undefined) {
    route.options = {
      ...route.options,
      schema: { ...route.options.schema, body: envelopeSchema(body, name) }
    }
  }
  // A partial update in an envelope takes plain JSON only (above), validated as its schema says.
  const json = route.bodyMediaTypes?.['application/json']
  if (json !== undefined) route.bodyMediaTypes = { 'application/json': { schema: envelopeSchema(json.schema, name), validation: envelopeSchema(json.schema, name) } }
}

function checkCatches (klass: ViewStatics, name: string, fn: object): void {
  const specs = getCatchSpecs(fn)
  if (specs === undefined || specs === 'defined') return
  for (const spec of specs) {
    if (spec.status === undefined && spec.detail === undefined && findRaises(klass, spec.type) === undefined) {
      throw new ConfigurationError('FV_ERR_CATCH_UNMAPPED', `${klass.name}.${name}: @Catch(${spec.type.name}) needs an entry in ${klass.name}.raises or its own status and detail`)
    }
  }
}

const SEGMENT_RANK = (segment: string): number => segment.startsWith('*') ? 2 : segment.startsWith(':') ? 1 : 0

/** Orders paths most-specific-first: at the first differing segment, static < parameter < wildcard. */
export function compareSpecificity (a: string, b: string): number {
  const sa = a.split('/')
  const sb = b.split('/')
  for (let i = 0; i < Math.min(sa.length, sb.length); i++) {
    const diff = SEGMENT_RANK(sa[i]) - SEGMENT_RANK(sb[i])
    if (diff !== 0) return diff
  }
  return sb.length - sa.length
}

type Finish = (value: unknown, view: View, reply: FastifyReply) => unknown

/** The form every view route's success schema is compiled (and documented) with. */
const SERVED: SerializerOptions = { byAlias: true }

/**
 * Applies per-request serializer options. A form other than the served one (field names,
 * optional properties) gets its own serializer on this reply, and the body stays an
 * object, so preSerialization hooks still see it.
 */
function applySerializerOptions (
  form: WireForm,
  served: WireForm,
  value: unknown,
  reply: FastifyReply,
  status: number
): unknown {
  const out = form.toWire === undefined ? value : form.toWire(value)
  if (form === served) return out
  reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(form.schema, String(status)))
  return out
}

function buildFinish (klass: ViewStatics, route: CollectedRoute): Finish {
  const { status, emptyBody, onNone, after } = route
  const wrap = route.envelope === undefined ? undefined : wrapIn(route.envelope)
  const schema = route.responseSchema
  const check = schema !== undefined && klass.validateResponse === true
    ? compileResponseCheck(
      schema,
      klass.fromAttributes ?? null,
      klass.strictResponse === true
    )
    : undefined
  const defaults = klass.defaultSerializerOptions ?? SERVED
  // The forms the route's own options pick are found once here; a request's own options look theirs up.
  const forms = schema === undefined
    ? undefined
    : {
        schema,
        served: wireForm(schema, SERVED),
        defaults: wireForm(schema, defaults)
      }
  const defaultsNeedWork = forms !== undefined && (defaults.excludeNone === true || defaults.byAlias === false ||
    forms.defaults.toWire !== undefined)

  return (value, view, reply) => {
    // An async action that returned the reply (`return this.checkLastModified(...) ?? item`)
    // resolves to nothing, since a reply is thenable: the response is already on its way.
    if (value === reply || (value === undefined && reply.sent)) return reply
    if (status !== 200) reply.code(status)
    if (value === null || value === undefined) {
      if (onNone !== undefined) throw onNone()
      return reply.send()
    }
    if (after !== undefined) after(view, value, reply)
    if (emptyBody) return reply.send()
    if (typeof value === 'string' || Buffer.isBuffer(value)) {
      reply.type('text/plain; charset=utf-8')
      return value
    }
    const sent = wrap === undefined ? value : wrap(value)
    const body = check === undefined ? sent : check(sent)
    if (forms === undefined) return body
    const own = (view as Partial<APIView>)[OWN_SERIALIZER_OPTIONS]
    if (own === undefined && !defaultsNeedWork) return body
    return applySerializerOptions(
      own === undefined ? forms.defaults : wireForm(forms.schema, own),
      forms.served,
      body,
      reply,
      status
    )
  }
}

/** What a route's handler checks of the request's content before the action runs. */
interface ContentChecks {
  /** The route takes a JSON body only and refuses another media type here, once the body passed validation (a failed one is refused by the error handler). */
  json: boolean
  /** The route takes no content, on a method whose content Fastify never reads: no hook before parsing sees it, so the handler ignores or refuses it. */
  none: UnexpectedContent | undefined
  /** The body may be left out: a JSON `null`, which Fastify's validation cannot tell from no body, is none too. */
  optionalBody: boolean
  /** The route's body limit, past which unread content closes the connection (`ignoreUnreadContent`). */
  bodyLimit: number
}

/**
 * `keepsView`: a hook of the route may have made the request's view already. `before`: the
 * mixins' work on the view before the action (`BeforeAction`), on the body as it was validated,
 * before the handler renames its members.
 */
function buildHandler (
  klass: ViewClass,
  route: CollectedRoute,
  fn: ViewMethod,
  checks: ContentChecks,
  keepsView: boolean,
  before: readonly BeforeAction[] = []
) {
  const finish = buildFinish(klass, route)
  const bodyRename = route.options.schema?.body === undefined
    ? undefined
    : compileRenamer(
      route.options.schema.body,
      false
    )
  const { json, none, optionalBody, bodyLimit } = checks
  const envelope = route.envelope !== undefined && route.options.schema?.body !== undefined ? route.envelope : undefined
  // Registration refused abstract views (assertRegistrable): this class is concrete.
  const Klass = klass as new (request: FastifyRequest, reply: FastifyReply) => View
  const act = (view: View, request: FastifyRequest, reply: FastifyReply): unknown => {
    if (optionalBody && request.body === null) request.body = undefined
    if (bodyRename !== undefined) request.body = bodyRename(request.body)
    if (envelope !== undefined) request.body = (request.body as Record<string, unknown>)[envelope] // validated: the envelope holds the body
    const result = fn.call(view, request)
    // Returning the reply (thenable too) means the response is already sent: it is not waited on.
    return then(result, (value) => finish(value, view, reply), reply)
  }
  // The steps, then the action: each after the one before it has settled, synchronous while they are.
  const run = before.reduceRight<typeof act>(
    (next, step) => (view, request, reply) => then(step(view, request, reply), () => next(view, request, reply)),
    act
  )
  return function viewRouteHandler (request: FastifyRequest, reply: FastifyReply): unknown {
    if (json && !isJsonRequest(request.headers)) throw notJson(request.headers['content-type'])
    if (none !== undefined && hasContent(request.headers)) {
      if (none === 'refuse') throw noContent()
      ignoreUnreadContent(request, reply, bodyLimit)
    }
    // A hook that needed the view first (a precondition check) made it; else it is made here.
    const view = (keepsView ? keptView(request) : undefined) ?? new Klass(request, reply)
    return run(view, request, reply)
  }
}

const PASS_THROUGH = ['config', 'bodyLimit', 'logLevel', 'logSerializers', 'constraints', 'exposeHeadRoute', 'prefixTrailingSlash',
  'preParsing', 'preSerialization', 'onSend', 'onResponse', 'onTimeout', 'onError', 'onRequestAbort', 'errorHandler'] as const

const HOOK_PHASES = ['onRequest', 'preValidation', 'preHandler'] as const

/**
 * Builds the Fastify route options of every operation of a view, most specific first.
 * With `app`, serializers may use the app's shared schemas.
 */
export function buildViewRoutes (
  klass: ViewClass,
  options: RegisterViewOptions = {},
  router?: RouterContext,
  app?: FastifyInstance
): RouteOptions[] {
  const serializerCompiler = serializerCompilerFor(app)
  const compileSerializer = (schema: TSchema): ((value: unknown) => string) => serializerCompiler({ schema })
  const statics: ViewStatics = klass
  const { prefix = '', validation, errorFormat, ...registration } = options
  const policy = resolveValidationPolicy([...router?.validation ?? [], validation], `${klass.name}'s registration`)
  // The innermost level that declares a format wins; else the application's (`configureApp`).
  const format = [...router?.errorFormat ?? [], errorFormat].reduce<ErrorFormat | undefined>(
    (outer, inner) => inner ?? outer,
    undefined
  ) ??
    (app === undefined ? undefined : appErrorFormat(app)) ?? PROBLEM_FORMAT
  const base = router === undefined ? registration : mergeRouteOptions(router.options, registration)
  const fullPrefix = joinPath(router?.prefix ?? '', prefix)
  // Fastify's own default when the application sets none.
  const appBodyLimit = app?.initialConfig.bodyLimit ?? 1024 * 1024
  const built: RouteOptions[] = []
  for (const { route, implementation } of collectRoutes(klass)) {
    const merged = mergeRouteOptions(base, route.options)
    const bodyLimit = merged.bodyLimit ?? appBodyLimit
    const content = routeContent(klass, route, merged, bodyLimit)
    const { takesBody, jsonChecked } = content
    // Response headers add up across levels instead of the innermost replacing the rest.
    const headerClasses = [
      router?.options.responseHeaders,
      registration.responseHeaders,
      route.options.responseHeaders,
      klass.getResponseHeaders(route.name)
    ]
      .filter((h): h is ResponseHeadersClass => h !== undefined)
    const operations = route.methods.map((method) => {
      // Dependencies run router first, then registration, then the route's own, then the action's.
      const dependencies = [
        ...(base.dependencies ?? []),
        ...(route.options.dependencies ?? []),
        ...(statics.getDependencies?.(route.name, method) ?? [])
      ]
      const definition: RouteDefinition = {
        ...route,
        options: { ...merged, dependencies },
        compileSerializer,
        bodyLimit
      }
      return { method, dependencies, definition, own: klass.routeHooks(definition, method) }
    })
    // Only the view's own hooks of these phases may have made the request's view (keepView).
    const keepsView = operations.some(({ own }) => own.preValidation !== undefined || own.preHandler !== undefined)
    // A route without a body ignores or refuses content; on a GET, whose content Fastify never reads, in its handler.
    const checks: ContentChecks = {
      json: jsonChecked,
      none: !takesBody && route.methods.some(readsNoContent) ? content.unexpectedContent : undefined,
      optionalBody: content.optionalBody,
      bodyLimit
    }
    const shared = buildHandler(klass, route, implementation, checks, keepsView)
    // The hooks that keep a view are the ones that may validate the path and query early.
    const validatorCompiler = validatorCompilerFor(
      klass,
      route,
      { jsonChecked, earlyChecks: keepsView, maxBodyDepth: klass.maxBodyDepth, policy }
    )
    assertPrefixParams(klass, joinPath(app?.prefix ?? '', fullPrefix))
    assertParamsInPath(klass, route, joinPath(app?.prefix ?? '', joinPath(fullPrefix, route.path)))
    for (const { method, dependencies, definition, own } of operations) {
      const hooks = dependencyHooks(dependencies)
      const routeOptions: RouteOptions = {
        method,
        url: joinPath(fullPrefix, route.path),
        schema: buildRouteSchema(klass, documentedDefinition(definition, method, policy), { method, multiMethod: route.methods.length > 1, headerClasses, implementation, errorFormat: format, url: joinPath(app?.prefix ?? '', joinPath(fullPrefix, route.path)) }),
        handler: (own.beforeAction?.length ?? 0) === 0
          ? shared
          : buildHandler(klass, route, implementation, checks, keepsView, own.beforeAction),
        validatorCompiler,
        serializerCompiler,
        errorHandler: format.errorHandler
      }
      // Options Fastify takes as they are, then the hooks of each phase: copied in by name.
      const passed: Record<string, unknown> = {}
      for (const key of PASS_THROUGH) {
        if (merged[key] !== undefined) passed[key] = merged[key]
      }
      Object.assign(routeOptions, passed)
      routeOptions.config = { ...merged.config, view: klass.name, action: route.name, prefix: joinPath(app?.prefix ?? '', fullPrefix) }
      const phases: Record<string, unknown> = {}
      for (const phase of HOOK_PHASES) {
        const list = [...hooks[phase], ...toList(merged[phase]), ...(phase === 'onRequest' ? [] : toList(own[phase]))]
        if (list.length > 0) phases[phase] = list
      }
      Object.assign(routeOptions, phases)
      // The view's own hooks run first, so a 304 is decided before any user hook sees the payload.
      const onSend = [...toList(own.onSend), ...toList(merged.onSend)]
      if (onSend.length > 0) routeOptions.onSend = onSend
      const mediaTypes = mediaTypeHooks(method, content)
      if (mediaTypes.length > 0) routeOptions.preParsing = [...mediaTypes, ...toList(merged.preParsing)]
      const preSerialization = [...toList(own.preSerialization), ...toList(merged.preSerialization)]
      if (preSerialization.length > 0) routeOptions.preSerialization = preSerialization
      built.push(routeOptions)
    }
  }
  return built.sort((a, b) => compareSpecificity(a.url, b.url))
}

const operationIds = new WeakMap<object, Set<string>>()

/** OpenAPI operationIds are unique per document: a view registered twice gets `listItems2`. */
function uniqueOperationId (app: FastifyInstance, schema: { operationId?: string }): void {
  let taken = operationIds.get(app.server)
  if (taken === undefined) operationIds.set(app.server, taken = new Set())
  const base = schema.operationId!
  let id = base
  for (let n = 2; taken.has(id); n++) id = `${base}${n}`
  taken.add(id)
  schema.operationId = id
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

/**
 * A view with standard actions registered with no prefix at all would serve them at the root
 * of its context (`GET /`, `DELETE /:id`), which is seldom what was meant: a prefix must be
 * given, `''` to mean the root.
 */
function assertPrefix (
  app: FastifyInstance,
  klass: ViewClass,
  options: RegisterViewOptions,
  router: RouterContext | undefined
): void {
  if (options.prefix !== undefined || (router?.prefix ?? '') !== '' || app.prefix !== '' || klass.standardActions().length === 0) return
  const actions = [...new Set(klass.standardActions().map((action) => action.name))]
  throw new ConfigurationError('FV_ERR_NO_PREFIX', `Cannot register ${klass.name}: it has no prefix, so its actions (${actions.join(', ')}) would be served at the root ` +
    `of the application. Register it as { view: ${klass.name}, prefix: '/items' } (or prefix: '' to serve it at the root on purpose)`)
}
