// The first pass of registration (registration layer): a view class read into its routes, each with
// the method that serves it, checked, most specific first.
import type { FastifyRequest } from 'fastify'
import type { APIView } from '../views/api-view.js'
import { findRaises, getCatchSpecs, raisesPairs } from '../views/decorators.js'
import { assertBodiesFitRepository, assertCreatesFitResponse, assertDependencyKeys, assertFilterFitsFields, assertResponseFitsColumns, assertNoContentHasNoBody, assertNoNearMisses, assertStoredObjectsSchema, assertCurrentStatics } from './checks.js'
import { getRouteMeta, mergeRouteOptions, resolveRouteOptions } from '../routes/route-meta.js'
import { eventStreamOptions } from '../openapi/responses.js'
import { withPrefixParams } from './prefix-params.js'
import { joinPath } from '../core/paths.js'
import { ENVELOPED_ACTIONS, envelopeSchema } from '../views/envelope.js'
import { schemaStatic, toTypeBox } from '../core/typebox-lines.js'
import { ABSTRACT, type CollectedRoute, type View, type ViewClass } from '../views/view.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import { ConfigurationError } from '../core/configuration-error.js'

/** A view class with the statics of `APIView` the registration reads, where it has them. */
export type ViewStatics = ViewClass & Partial<Pick<typeof APIView,
  'responseSchema' | 'envelope' | 'validateResponse' | 'strictResponse' | 'fromAttributes' | 'defaultSerializerOptions' | 'defaultErrors' | 'errors' | 'raises' | 'getDependencies' | 'getPermissions' | 'getThrottles'>>

/** A method of a view class as a route's handler calls it, on a new view with the request. */
export type ViewMethod = (this: View, request: FastifyRequest) => MaybePromise<unknown>

/** A route of a view with the method that serves it. */
export interface ServedRoute { route: CollectedRoute, implementation: ViewMethod }

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
  assertCurrentStatics(klass)
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
        ...(action.store === undefined ? {} : { store: action.store }),
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
    const resolved = resolveRouteOptions(meta.options, `${klass.name}.${name}`)
    // An event stream's answer is its events: the view's responseSchema is not its body.
    const options = meta.events === undefined ? resolved : eventStreamOptions(resolved, meta.events)
    const envelope = meta.options.envelope === true ? askedEnvelope(statics, name) : undefined
    served.push({
      implementation: fn,
      route: {
        name,
        methods: declared.methods,
        path,
        status,
        options,
        throws: meta.throws,
        responseSchema: status === 204 || meta.events !== undefined ? undefined : options.responseSchema ?? schemaStatic(statics, 'responseSchema'),
        emptyBody: status === 204,
        standard: false,
        ...(envelope === undefined ? {} : { envelope }),
        ...(meta.events === undefined ? {} : { events: meta.events })
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
  assertBodiesFitRepository(klass, routes)
  assertResponseFitsColumns(klass, routes)
  assertFilterFitsFields(klass)
  assertCreatesFitResponse(klass, routes)
  assertDependencyKeys(klass, routes)
  // Last: the checks above compare the object itself with the repository, not its envelope.
  for (const route of routes) {
    if (route.standard) enveloped(klass, route)
    else if (route.envelope !== undefined && route.responseSchema !== undefined) {
      route.responseSchema = envelopeSchema(route.responseSchema, route.envelope)
    }
  }
  return served
}

/** The view's `envelope`, which a route of its own asks its answer to be sent in (`envelope: true`). */
function askedEnvelope (klass: ViewStatics, name: string): string {
  if (klass.envelope !== undefined) return klass.envelope
  throw new ConfigurationError('FV_ERR_ENVELOPE', `Cannot register ${klass.name}: ${klass.name}.${name} asks for envelope: true, but the view has no envelope ` +
    'to send its answer in. Name it on the view (envelope: \'article\'), or leave envelope out of the route\'s options')
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
      'set patch = { formats: [\'json\'] }, or remove the envelope')
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
