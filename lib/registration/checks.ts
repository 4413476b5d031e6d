import { type ViewClass, type CollectedRoute } from '../views/view.js'
import { ConfigurationError } from '../core/configuration-error.js'

// Mistakes of configuration refused when a view is registered, each naming the view.

/**
 * A view over a repository sends what the store returns: without a response schema the
 * serializer would send every field of the row, so such a view must say which fields
 * clients may see. Routes that declare their own schema, and empty answers, need none.
 */
export function assertStoredObjectsSchema (klass: ViewClass, routes: CollectedRoute[]): void {
  if (!('repository' in klass)) return
  const bare = routes.filter((r) => r.standard && !r.emptyBody && r.status !== 204 && r.responseSchema === undefined).map((r) => r.name)
  if (bare.length === 0) return
  throw new ConfigurationError('FV_ERR_NO_RESPONSE_SCHEMA', `Cannot register ${klass.name}: ${bare.join(', ')} send${bare.length === 1 ? 's' : ''} stored objects but ${bare.length === 1 ? 'has' : 'have'} no response schema. ` +
    'Set static responseSchema to the fields clients may see (to send every stored field deliberately: Type.Object({}, { additionalProperties: true })).')
}

/** A misspelt `actionDependencies` key would leave the action it meant unguarded: refuse it. */
export function assertDependencyKeys (statics: ViewClass, routes: CollectedRoute[]): void {
  const declared = (statics as { actionDependencies?: Record<string, unknown> }).actionDependencies
  if (declared === undefined) return
  const known = new Set(routes.map((r) => r.name))
  const unknown = Object.keys(declared).filter((key) => !known.has(key))
  if (unknown.length === 0) return
  throw new ConfigurationError('FV_ERR_UNKNOWN_ACTION', `Cannot register ${statics.name}: actionDependencies names ${unknown.map((k) => JSON.stringify(k)).join(', ')}, ` +
    `which ${unknown.length === 1 ? 'is not an action' : 'are not actions'} of this view; its actions are ${[...known].sort().join(', ')}`)
}
