/**
 * The library's one rule for values that may arrive later. A repository of the sync
 * family returns values, one of the async family returns promises, and a query builder
 * returns a thenable that is not a `Promise`: all three are accepted wherever the
 * library waits, and this module is the only place that decides which is which.
 */

/** A value now, or a promise or other thenable of it: what the library waits on. */
export type Awaitable<T> = T | PromiseLike<T>

/** A value now, or a native promise of it: what the library gives back (a handler's result, `then`'s). */
export type MaybePromise<T> = T | Promise<T>

/**
 * Whether `value` must be waited on: anything with a callable `then` (a promise, a query
 * builder), except `except`. A view's reply is thenable too, but it settles only once the
 * response is sent, so waiting on it from inside the handler would never end.
 */
export function isThenable (value: unknown, except?: unknown): value is PromiseLike<unknown> {
  return value !== except && typeof (value as { then?: unknown } | null)?.then === 'function'
}

/**
 * `fn` applied to `value`: at once for a plain value, after it settles for a thenable.
 * The result of a wait is always a native promise, which is what Fastify's handler and
 * `await` expect; a plain value stays synchronous, so the sync family allocates nothing.
 */
export function then<T, R> (value: Awaitable<T>, fn: (value: T) => R, except?: unknown): MaybePromise<R> {
  // A thenable's `then` may return nothing (many query builders): `Promise.resolve` adopts it first.
  return isThenable(value, except) ? Promise.resolve(value).then(fn) : fn(value)
}
