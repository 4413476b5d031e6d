// The second pass of registration (registration layer): each operation of a route (one method of it),
// with its dependencies in order and what the view's mixins contribute to it.
import type { HTTPMethods } from 'fastify'
import type { Dependency, SharedRouteOptions } from '../routes/types.js'
import { extendContribution, type CollectedRoute, type RouteContribution, type RouteDefinition, type ViewClass } from '../views/view.js'
import { ROUTE_FEATURES } from './features.js'
import type { ViewStatics } from './collect.js'

/** One operation of a route: its method, its dependencies, its definition and its mixins' contribution. */
export interface Operation {
  readonly method: HTTPMethods
  readonly dependencies: readonly Dependency[]
  readonly definition: RouteDefinition
  readonly contribution: RouteContribution
}

/** What every operation of a view's routes shares: the options of the levels around the route, and the application's compilers and limits. */
export interface OperationSetting {
  /** The router's and the registration's options, merged. */
  readonly shared: SharedRouteOptions
  readonly compileSerializer: RouteDefinition['compileSerializer']
  /** The application the routes are registered on, if registration was given one. */
  readonly app?: RouteDefinition['app']
}

/**
 * The operations of a route, one per method. Dependencies run router first, then registration,
 * then the route's own, then the action's (`getDependencies`); the contribution is the view's
 * `contribute`, asked once per operation, and the route features' (`ROUTE_FEATURES`).
 */
export function operationsOf (
  klass: ViewClass,
  route: CollectedRoute,
  merged: RouteDefinition['options'],
  bodyLimit: number,
  setting: OperationSetting
): Operation[] {
  const statics: ViewStatics = klass
  return route.methods.map((method) => {
    const dependencies = [
      ...(setting.shared.dependencies ?? []),
      ...(route.options.dependencies ?? []),
      ...(statics.getDependencies?.(route.name, method) ?? [])
    ]
    const definition: RouteDefinition = {
      ...route,
      options: { ...merged, dependencies },
      compileSerializer: setting.compileSerializer,
      bodyLimit,
      app: setting.app
    }
    // The view's mixins first, then the route features (registration/features.ts), each over what came before.
    const contribution = ROUTE_FEATURES.reduce<RouteContribution>((inherited, feature) => {
      const own = feature(definition, method, klass)
      return own === undefined ? inherited : extendContribution(inherited, own)
    }, klass.contribute(definition, method))
    return { method, dependencies, definition, contribution }
  })
}

/**
 * Whether a route's mixins may make the request's view before its handler (`keepView`): only
 * their hooks before the handler do, a precondition check that reads the current object.
 */
export const makesViewEarly = (operations: readonly Operation[]): boolean => operations.some(({ contribution: own }) =>
  own.preconditions !== undefined || own.preValidation !== undefined || own.preHandler !== undefined)
