// What the telemetries share (telemetry layer), none of their libraries imported: their options checked, the
// database's name as OpenTelemetry writes it, a failing tracer or meter kept from the answer, one subscription.
import type { TracingChannelSubscribers } from 'node:diagnostics_channel'
import type { FastifyRequest } from 'fastify'
import { ConfigurationError } from '../core/configuration-error.js'

/** Refuses an option the telemetry does not take (a misspelt `principalID` would silently do nothing). */
export function checkedOptions (made: string, options: object, known: readonly string[]): void {
  if (typeof options !== 'object' || options === null) {
    throw new ConfigurationError('FV_ERR_TELEMETRY', `fastify-views: ${made}(options) takes an object of options, not ${String(options)}`)
  }
  const unknown = Object.keys(options).filter((key) => !known.includes(key))
  if (unknown.length > 0) {
    throw new ConfigurationError('FV_ERR_TELEMETRY', `fastify-views: ${made} has no option ${unknown.map((key) => JSON.stringify(key)).join(', ')}; ` +
      `it takes ${known.join(', ')}`)
  }
}

/** OpenTelemetry's `db.system.name` for a dialect's name (`postgres` is `postgresql` there). */
export const dbSystem = (database: string): string => database === 'postgres' ? 'postgresql' : database

/** How long a failing tracer or meter is left unreported after it was reported. */
const QUIET_MS = 60_000

/**
 * Runs telemetry work so that its failure (a tracer, a meter or an exporter that throws) never reaches
 * the request: the request is answered as if nothing observed it, and the failure is logged once a minute.
 */
export function guarded (what: string): (request: FastifyRequest | undefined, work: () => void) => void {
  let reported = -Infinity
  return (request, work) => {
    try {
      work()
    } catch (error) {
      const now = Date.now()
      if (now - reported < QUIET_MS) return
      reported = now
      const message = `fastify-views: ${what} threw; what it observes goes unrecorded (reported once a minute)`
      if (request !== undefined) request.log.warn({ err: error }, message)
      else process.emitWarning(`${message}: ${String(error)}`, 'FastifyViewsTelemetryWarning')
    }
  }
}

/**
 * A subscription to the library's channels taken while any application uses the telemetry: the first
 * `attach` subscribes, the last detach gives it back (an application closed stops hearing statements).
 */
export function sharedSubscription (subscribe: () => () => void): () => () => void {
  let users = 0
  let unsubscribe: (() => void) | undefined
  return () => {
    if (users++ === 0) unsubscribe = subscribe()
    let detached = false
    return () => {
      if (detached) return
      detached = true
      if (--users === 0) unsubscribe?.()
    }
  }
}

const ignored = (): void => {}

/**
 * A TracingChannel's subscribers from what is done at `start` and at `end` (the library publishes as
 * `traceSync` does: an asynchronous run's promise is the `end` event's `result`, `error` is on it too).
 */
export function startAndEnd<M extends object> (
  start: (message: M) => void,
  end: (message: M) => void
): TracingChannelSubscribers<M> {
  return { start, end, asyncStart: ignored, asyncEnd: ignored, error: ignored }
}
