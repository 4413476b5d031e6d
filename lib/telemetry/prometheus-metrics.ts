// Metrics of view routes for Prometheus (telemetry layer): prom-client's histograms, counters and gauges in
// a registry, and a handler that answers them in the exposition format, for a route the application chooses.
import client, { type Metric } from 'prom-client'
import { ConfigurationError } from '../core/configuration-error.js'
import type { FastifyReply, FastifyRequest } from 'fastify'
import type { ObservedRoute, Telemetry } from '../routes/telemetry.js'
import { routeMetrics, type MetricInstruments } from './route-metrics.js'
import { checkedOptions, dbSystem } from './telemetry-support.js'

/** Options of `prometheusMetrics`. */
export interface PrometheusMetricsOptions {
  /** The registry the metrics are kept in (default: a registry of their own; prom-client's `register` to share the default one). */
  registry?: client.Registry
  /** What every metric's name starts with (default `fastify_views_`). */
  prefix?: string
  /** The request durations' histogram buckets, in seconds (default prom-client's, 5 ms to 10 s). */
  buckets?: number[]
}

/** The Prometheus metrics of an application's views: a telemetry, its registry, and a handler that answers them. */
export interface PrometheusMetrics extends Telemetry {
  readonly registry: client.Registry
  /** A route handler that answers every metric of the registry: `app.get('/metrics', metrics.handler)`. */
  readonly handler: (request: FastifyRequest, reply: FastifyReply) => Promise<string>
}

const OPTIONS = ['registry', 'prefix', 'buckets'] as const
const ROUTE_LABELS = ['view', 'action', 'method'] as const

/**
 * Prometheus metrics of every view route (docs/observability.md), with prom-client (an optional peer
 * dependency): `<prefix>request_duration_seconds` (histogram, its `_count` the requests) by view,
 * action, method and status class; `<prefix>cache_lookups_total` by view, action and result;
 * `<prefix>event_streams_open` by view and action; `<prefix>sql_statement_duration_seconds` by
 * database, operation and table. No label takes a value from a request: paths, ids and queries never
 * become series. A registry that has the metrics already (a second application) keeps counting in them.
 */
export function prometheusMetrics (options: PrometheusMetricsOptions = {}): PrometheusMetrics {
  checkedOptions('prometheusMetrics', options, OPTIONS)
  const registry = options.registry ?? new client.Registry()
  const prefix = options.prefix ?? 'fastify_views_'
  const registers = [registry]
  type Kind<M> = abstract new (...args: never[]) => M
  const made = <M extends Metric>(name: string, kind: Kind<M>, labels: readonly string[], make: (n: string) => M) => {
    const existing = registry.getSingleMetric(prefix + name)
    if (existing === undefined) return make(prefix + name)
    // Another prometheusMetrics over the registry made it; a metric of the application's own under the name would not fit.
    const labelNames = (existing as unknown as { labelNames: readonly string[] }).labelNames // every prom-client metric has them, [] for none
    if (!(existing instanceof kind) || labelNames.join() !== labels.join()) {
      throw new ConfigurationError('FV_ERR_TELEMETRY', `fastify-views: prometheusMetrics: the registry already has a metric ${prefix + name} ` +
        `that is not the library's (${existing.constructor.name} of labels ${labelNames.join(', ') || 'none'}); give another prefix, or another registry`)
    }
    return existing
  }
  const requests = made('request_duration_seconds', client.Histogram, [...ROUTE_LABELS, 'status_class'], (name) => new client.Histogram({
    name,
    help: 'Duration of requests to view routes, in seconds, by view, action, method and status class',
    labelNames: [...ROUTE_LABELS, 'status_class'],
    registers,
    ...options.buckets === undefined ? {} : { buckets: options.buckets }
  }))
  const lookups = made('cache_lookups_total', client.Counter, ['view', 'action', 'result'], (name) => new client.Counter({
    name, help: 'Lookups of cached answers of view routes, by view, action and result (hit or miss)', labelNames: ['view', 'action', 'result'], registers
  }))
  const streams = made('event_streams_open', client.Gauge, ['view', 'action'], (name) => new client.Gauge({
    name, help: 'Event streams open, by view and action', labelNames: ['view', 'action'], registers
  }))
  const statements = made('sql_statement_duration_seconds', client.Histogram, ['database', 'operation', 'table'], (name) => new client.Histogram({
    name,
    help: 'Duration of SQL statements run by repositories, in seconds, by database, operation and table',
    labelNames: ['database', 'operation', 'table'],
    registers,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5]
  }))
  const routeLabels = (route: ObservedRoute): [string, string, string] => [route.view, route.action, route.method]
  const instruments: MetricInstruments = {
    requests: (route, status) => {
      const child = requests.labels(...routeLabels(route), status)
      return (seconds) => { child.observe(seconds) }
    },
    cacheLookups: (route, result) => {
      const child = lookups.labels(route.view, route.action, result)
      return () => { child.inc() }
    },
    openStreams: (route) => {
      const child = streams.labels(route.view, route.action)
      return (change) => { child.inc(change) }
    },
    statements: (database, summary) => {
      const child = statements.labels(dbSystem(database), summary.operation, summary.table ?? '')
      return (seconds) => { child.observe(seconds) }
    }
  }
  const telemetry = routeMetrics('prometheusMetrics', instruments, registry)
  const handler = async (_request: FastifyRequest, reply: FastifyReply): Promise<string> => {
    const text = await registry.metrics()
    reply.type(registry.contentType)
    return text
  }
  return { ...telemetry, registry, handler }
}
