// The `fastify-views/prometheus` entry: metrics of view routes with prom-client, answered on a route the
// application chooses (docs/observability.md). It imports `prom-client`, an optional peer dependency.
import './types.js'
export { prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './telemetry/prometheus-metrics.js'
export type { MetricInstruments, StatusClass } from './telemetry/route-metrics.js'
export type { ObservedRoute, RouteObserver, Telemetry } from './routes/telemetry.js'
export type { SqlSummary } from './telemetry/sql-summary.js'
