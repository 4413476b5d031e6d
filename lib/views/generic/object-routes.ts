// A generic view's own routes on one object (views layer): what they document, and the 404 `getObjectOr404` answers.
import { Forbidden, NotFound } from '../../http/errors.js'
import type { ResponsesMap } from '../../routes/types.js'
import { DEFAULT_ERROR_MESSAGE, type DetailStatics } from '../actions/standard.js'
import { componentName } from '../naming.js'
import type { BeforeAction, RouteContribution, RouteDefinition, ViewClass } from '../view.js'
import { judges } from './object-permissions.js'
import { loadParent, type ParentLookup } from './parent.js'

// What a handler calls is known only when it runs, so what a route of the view's own documents
// follows its path: one that names a parameter (`/:slug/favorite`, an `@Action` with
// `detail: true`) acts on the object the parameter names, as ConditionalMixin takes an unsafe one
// to. The object may not be there (404), and where the view judges the route's action, the client
// may not be allowed it (403): what `getObjectOr404` answers there (docs/generics.md).

/** A route of the view's class runs its steps on its own view. */
const readParent: BeforeAction = (view) => loadParent(view)

/**
 * What a route of a generic view's own adds: a nested view reads its parent before the handler, as
 * the standard actions do (a 404 without one); a route on one object documents its 404, and its 403
 * where the view judges its action. `undefined` when it adds nothing.
 */
export function ownRouteContribution (klass: { readonly parent: ParentLookup | undefined },
  route: RouteDefinition): RouteContribution | undefined {
  const onObject = route.path.includes(':')
  const nested = klass.parent !== undefined
  if (!onObject && !nested) return undefined
  const responses: ResponsesMap = { 404: { errors: [NotFound] } }
  if (onObject && judges(klass, route.name)) responses[403] = { errors: [Forbidden] }
  return nested ? { beforeAction: [readParent], responses } : { responses }
}

/** Throws the 404 of an object the path names and the view does not find, worded as its retrieve words it (`errorMessage`). */
export function missingObject (klass: object): never {
  const view = klass as ViewClass & Partial<DetailStatics> // a view's class (`this.constructor`); a view without detail actions has no errorMessage
  throw new NotFound((view.errorMessage ?? DEFAULT_ERROR_MESSAGE).replace('{}', componentName(view)))
}
