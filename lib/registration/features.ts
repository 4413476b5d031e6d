// Route features (registration layer): what any view route may be given through its options, beside
// what its view's mixins contribute. Each feature is a file of its own and one line of this list.
import type { RouteContribution, RouteDefinition, ViewClass } from '../views/view.js'
import { deprecation } from './deprecation.js'
import { access } from './access.js'
import { cache } from './cache.js'
import { streamedLists } from './streamed-lists.js'

/** A feature of routes: what it adds to one operation of a route of `view`, from the route's options; `undefined` for nothing. */
export type RouteFeature = (route: RouteDefinition, method: string, view: ViewClass) => RouteContribution | undefined

/** Every route feature; each is added over the view's contribution, as a mixin mixed first would be. */
export const ROUTE_FEATURES: readonly RouteFeature[] = [
  deprecation,
  access,
  // Before the cache: a streamed answer is never looked up nor kept.
  streamedLists,
  cache
]
