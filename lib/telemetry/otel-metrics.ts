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
  const requests = meter.createHistogram('fastify_views.request.duration', { unit: 's', description: 'Duration of requests to view routes' })
  const lookups = meter.createCounter('fastify_views.cache.lookups', { description: 'Lookups of cached answers of view routes' })
  const streams = meter.createUpDownCounter('fastify_views.event_streams.open', { description: 'Event streams open' })
  const statements = meter.createHistogram('db.client.operation.duration', { unit: 's', description: 'Duration of SQL statements run by repositories' })
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
  return routeMetrics('otelMetrics', instruments)
}
