// Registered permissions (access layer): the permissions of every level each view's actions were registered with, by server, for what embeds their objects elsewhere.
import type { FastifyInstance } from 'fastify'
import type { Permission } from './permission.js'

/** By server, by view class, by action: the permissions of every level (router, registration, view, action). */
const REGISTERED = new WeakMap<object, WeakMap<object, Map<string, ReadonlyArray<Permission<never>>>>>()

/** Records the permissions `action` of `view` is served with in `app`'s server. */
export function recordPermissions (
  app: FastifyInstance, view: object, action: string, permissions: ReadonlyArray<Permission<never>>
): void {
  let views = REGISTERED.get(app.server)
  if (views === undefined) REGISTERED.set(app.server, views = new WeakMap())
  let actions = views.get(view)
  if (actions === undefined) views.set(view, actions = new Map())
  // A view registered twice (under two prefixes) is judged by the permissions of both; a route
  // served by two methods (GET and HEAD) records its permissions once.
  const recorded = actions.get(action) ?? []
  actions.set(action, [...recorded, ...permissions.filter((permission) => !recorded.includes(permission))])
}

/**
 * The permissions `action` of `view` was registered with in the server `app` belongs to, or
 * `undefined` when `view` serves no such action there: what an expansion that embeds its objects
 * must pass (docs/expand.md).
 */
export function registeredPermissions (
  app: FastifyInstance, view: object, action: string
): ReadonlyArray<Permission<never>> | undefined {
  return REGISTERED.get(app.server)?.get(view)?.get(action)
}
