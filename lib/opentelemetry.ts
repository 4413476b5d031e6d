// The `fastify-views/opentelemetry` entry: traces and metrics of view routes through OpenTelemetry's API
// (docs/observability.md). It imports `@opentelemetry/api`, an optional peer dependency; the main entry does not.
import './types.js'
export { otelTracing, type OtelTracingOptions } from './telemetry/otel-tracing.js'
export { otelMetrics, type OtelMetricsOptions } from './telemetry/otel-metrics.js'
