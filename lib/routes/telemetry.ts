// What observes view routes (routes layer): the protocol a telemetry implements (docs/observability.md):
// `otelTracing`, `otelMetrics`, `prometheusMetrics`, or an application's own. Asked once per operation at
// registration; a route no telemetry observes gets no hook, and its requests pay nothing.
import type { FastifyReply, FastifyRequest } from 'fastify'

/**
 * One operation of a view route, as a telemetry is shown it at registration. Every name is the
 * application's own, fixed when it starts: none comes from a request, so a label made of them has
 * as many values as the application has routes, whatever clients send.
 */
export interface ObservedRoute {
  /** The view class's name (`ItemDetail`). */
  readonly view: string
  /** The action serving the route (`retrieve`, `bulkCreate`, a route method's name). */
  readonly action: string
  /** The HTTP method of this operation (`GET`; a route's HEAD is observed as its GET). */
  readonly method: string
  /** The path template, the application's prefix included (`/items/:id`): OpenTelemetry's `http.route`. */
  readonly route: string
  /** `'events'` for an event stream (`Events`): its request lasts as long as the stream. */
  readonly stream: 'events' | undefined
  /** Whether the application's cache serves its reads: its answers say `x-cache: HIT` or `MISS`. */
  readonly cached: boolean
}

/** What a telemetry does on each request of one operation. */
export interface RouteObserver {
  /** The request reached the route: called first of all its hooks, before authentication. */
  start (request: FastifyRequest, reply: FastifyReply): void
  /**
   * Runs one of the route's hooks or its handler (`fn` with `thisArg` and `args`) inside what `start`
   * began: a tracing context, so that what they call (a repository's statements) is seen as part of
   * the request. Without it they run as they are.
   */
  within?: <A extends unknown[], R>(request: FastifyRequest, fn: (...args: A) => R, thisArg: unknown, ...args: A) => R
  /** An error a hook or the handler threw, before the error handler answers it (Fastify's `onError`). */
  error? (request: FastifyRequest, reply: FastifyReply, error: Error): void
  /**
   * The response is over: ended by the server (`finished`), or its connection closed first (a client that left,
   * an event stream's end). Called once per request that `start` saw.
   */
  end (request: FastifyRequest, reply: FastifyReply, finished: boolean): void
}

/** A telemetry: given to `configureApp(app, { telemetry })` or the plugin's `telemetry`, before the views. */
export interface Telemetry {
  /** What observes the requests of one operation, or `undefined` to leave it alone. */
  observe (route: ObservedRoute): RouteObserver | undefined
  /**
   * Called when an application takes the telemetry; what it returns is called when that application
   * closes (a subscription to the library's diagnostics channels taken, then given back).
   */
  attach? (): () => void
}
