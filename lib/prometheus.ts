// The `fastify-views/prometheus` entry: metrics of view routes with prom-client, answered on a route the
// application chooses (docs/observability.md). It imports `prom-client`, an optional peer dependency.
import './types.js'
export { prometheusMetrics, type PrometheusMetrics, type PrometheusMetricsOptions } from './telemetry/prometheus-metrics.js'
