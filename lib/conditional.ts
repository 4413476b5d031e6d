// The `fastify-views/conditional` entry: ETag and Last-Modified validators, 304 and 412
// (RFC 9110 §13), as a mixin of views and as functions for routes of your own.
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export { ConditionalMixin, type ConditionalMembers, type ConditionalStatics } from './views/conditional/conditional-view.js'
export type { ConditionalOptions } from './views/conditional/conditional-options.js'
export { etagOf, isNotModified, failsPrecondition, type Validators } from './http/preconditions.js'
