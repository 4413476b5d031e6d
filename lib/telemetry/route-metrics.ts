// Metrics of view routes, whatever records them (telemetry layer): request durations by route and status
// class, cache lookups, open event streams and SQL statement durations, every label bounded.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { sqlStatements, type SqlStatementMessage } from '../core/channels.js'
import { isThenable } from '../core/maybe-promise.js'
import type { ObservedRoute, RouteObserver, Telemetry } from '../routes/telemetry.js'
import { SqlSummaries, type SqlSummary } from './sql-summary.js'
import { guarded, sharedSubscription, startAndEnd } from './telemetry-support.js'

const STARTED = Symbol('fastify-views.started')
type TimedRequest = FastifyRequest & { [STARTED]?: number }

/** A status class as a label says it: `2xx`... `5xx`. */
export type StatusClass = '1xx' | '2xx' | '3xx' | '4xx' | '5xx'
const CLASSES: readonly StatusClass[] = ['1xx', '1xx', '2xx', '3xx', '4xx', '5xx']

/**
 * Where a metrics telemetry records (`prometheusMetrics`: prom-client's registry; `otelMetrics`: an
 * OpenTelemetry meter). Each method is asked once per route and label values, at registration or the
 * first time they occur, and returns what records them: a request pays a call, no lookup of labels.
 */
export interface MetricInstruments {
  /** Records a request's duration in seconds, for the route and the status class of its answer. */
  requests (route: ObservedRoute, status: StatusClass): (seconds: number) => void
  /** Counts a lookup of a cached route's answer: found (`hit`) or not (`miss`). */
  cacheLookups (route: ObservedRoute, result: 'hit' | 'miss'): () => void
  /** Counts an event stream of the route opened (+1) or ended (-1). */
  openStreams (route: ObservedRoute): (change: 1 | -1) => void
  /** Records a SQL statement's duration in seconds, by database, operation and table. */
  statements (database: string, summary: SqlSummary): (seconds: number) => void
}

/** The statements' subscriptions by where they record (a registry, a meter): one per place, however many telemetries record there. */
const SUBSCRIPTIONS = new WeakMap<object, () => () => void>()

/**
 * A telemetry that records the metrics of every view route into `instruments`; the SQL statements of
 * the process are timed while an application uses it, once per `place` (the registry or meter the
 * instruments record in: two telemetries over one would count each statement twice). `made` names it in what it logs.
 */
export function routeMetrics (made: string, instruments: MetricInstruments, place: object): Telemetry {
  const guard = guarded(made)
  const observe = (route: ObservedRoute): RouteObserver => {
    const byClass: Array<((seconds: number) => void) | undefined> = []
    const lookups = route.cached ? { HIT: instruments.cacheLookups(route, 'hit'), MISS: instruments.cacheLookups(route, 'miss') } : undefined
    const streams = route.stream === undefined ? undefined : instruments.openStreams(route)
    return {
      start (request: TimedRequest) {
        // Timed here: Fastify's own reply.elapsedTime is 0 on an app without a logger or an onResponse hook.
        request[STARTED] = performance.now()
        if (streams !== undefined) guard(request, () => { streams(1) })
      },
      end (request: TimedRequest, reply: FastifyReply) {
        guard(request, () => {
          const index = Math.min(Math.max(Math.floor(reply.statusCode / 100), 1), 5)
          const record = byClass[index] ??= instruments.requests(route, CLASSES[index])
          record((performance.now() - (request[STARTED] as number)) / 1000) // set by start, which began every request ended here
          // A refused request (a 400 of its parameters) was never looked up, whatever its x-cache says.
          if (lookups !== undefined && reply.statusCode < 400) {
            const found = reply.getHeader('x-cache')
            if (found === 'HIT' || found === 'MISS') lookups[found]()
          }
          if (streams !== undefined) streams(-1)
        })
      }
    }
  }

  const summaries = new SqlSummaries()
  const recorders = new Map<string, (seconds: number) => void>()
  const started = new WeakMap<SqlStatementMessage, number>()
  const record = (message: SqlStatementMessage, since: number): void => {
    guard(undefined, () => {
      const summary = summaries.of(message.sql)
      const key = `${message.database} ${summary.name}`
      let recorder = recorders.get(key)
      if (recorder === undefined) recorders.set(key, recorder = instruments.statements(message.database, summary))
      recorder((performance.now() - since) / 1000)
    })
  }
  const ended = (message: SqlStatementMessage): void => {
    const since = started.get(message)
    if (since === undefined) return
    const done = (): void => { record(message, since) }
    if (isThenable(message.result)) message.result.then(done, done)
    else done()
  }
  const subscribers = startAndEnd((message: SqlStatementMessage) => { started.set(message, performance.now()) }, ended)
  let attach = SUBSCRIPTIONS.get(place)
  if (attach === undefined) {
    attach = sharedSubscription(() => {
      sqlStatements.subscribe(subscribers)
      return () => { sqlStatements.unsubscribe(subscribers) }
    })
    SUBSCRIPTIONS.set(place, attach)
  }
  return { observe, attach }
}
