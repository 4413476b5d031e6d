// Metrics of view routes through OpenTelemetry (telemetry layer): the instruments of a meter, the SQL
// statements' durations as the semantic conventions of database metrics name them.
import { metrics, type Attributes, type Meter } from '@opentelemetry/api'
import type { ObservedRoute, Telemetry } from '../routes/telemetry.js'
import { routeMetrics, type MetricInstruments } from './route-metrics.js'
import { checkedOptions, dbSystem } from './telemetry-support.js'

/** Options of `otelMetrics`. */
export interface OtelMetricsOptions {
  /** The meter the instruments are made with (default: `metrics.getMeter('fastify-views')`, the global provider's). */
  meter?: Meter
}

const OPTIONS = ['meter'] as const

/**
 * OpenTelemetry metrics of every view route (docs/observability.md), with `@opentelemetry/api` (an
 * optional peer dependency; the application brings the SDK and its exporter):
 * `fastify_views.request.duration` (histogram, seconds), `fastify_views.cache.lookups` (counter),
 * `fastify_views.event_streams.open` (up-down counter) and `db.client.operation.duration`. Their
 * attributes are the route's names and the answer's status class, never a value from a request.
 */
export function otelMetrics (options: OtelMetricsOptions = {}): Telemetry {
  checkedOptions('otelMetrics', options, OPTIONS)
  const meter = options.meter ?? metrics.getMeter('fastify-views')
  // In seconds, so the SDK's default boundaries (made for milliseconds) would put every value in the first bucket:
  // the boundaries the semantic conventions advise for http.server.request.duration and db.client.operation.duration.
  const requests = meter.createHistogram('fastify_views.request.duration', {
    unit: 's',
    description: 'Duration of requests to view routes',
    advice: { explicitBucketBoundaries: [0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10] }
  })
  const lookups = meter.createCounter('fastify_views.cache.lookups', { unit: '{lookup}', description: 'Lookups of cached answers of view routes' })
  const streams = meter.createUpDownCounter('fastify_views.event_streams.open', { unit: '{stream}', description: 'Event streams open' })
  const statements = meter.createHistogram('db.client.operation.duration', {
    unit: 's',
    description: 'Duration of SQL statements run by repositories',
    advice: { explicitBucketBoundaries: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10] }
  })
  const routeAttributes = (route: ObservedRoute): Attributes => ({
    'fastify_views.view': route.view,
    'fastify_views.action': route.action,
    'http.request.method': route.method,
    'http.route': route.route
  })
  const instruments: MetricInstruments = {
    requests: (route, status) => {
      const attributes = { ...routeAttributes(route), 'fastify_views.status_class': status }
      return (seconds) => { requests.record(seconds, attributes) }
    },
    cacheLookups: (route, result) => {
      const attributes = { ...routeAttributes(route), 'fastify_views.cache.result': result }
      return () => { lookups.add(1, attributes) }
    },
    openStreams: (route) => {
      const attributes = routeAttributes(route)
      return (change) => { streams.add(change, attributes) }
    },
    statements: (database, summary) => {
      const attributes: Attributes = {
        'db.system.name': dbSystem(database),
        'db.operation.name': summary.operation,
        ...summary.table === undefined ? {} : { 'db.collection.name': summary.table }
      }
      return (seconds) => { statements.record(seconds, attributes) }
    }
  }
  return routeMetrics('otelMetrics', instruments, meter)
}
