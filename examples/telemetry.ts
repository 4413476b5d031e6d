// The example's telemetry, chosen by its environment (docs/deployment.md#telemetry): Prometheus metrics on
// GET /metrics with METRICS=prometheus; traces with TRACING=console (printed) or TRACING=otlp (sent over
// OTLP/HTTP to OTEL_EXPORTER_OTLP_ENDPOINT), each request's span from @fastify/otel, the views' beneath it.
// What each turns on is loaded only then: a server without telemetry loads none of it (and its memory
// stays what the example's 96 MiB heap test measures).
import type { SpanExporter } from '@opentelemetry/sdk-trace-base'
import type { FastifyOtelInstrumentation } from '@fastify/otel'
import type { Telemetry } from 'fastify-views/types'
import type { PrometheusMetrics } from 'fastify-views/prometheus'

/** What the environment turned on: the telemetries, the metrics /metrics answers, and what ends them. */
export interface ExampleTelemetry {
  telemetry: Telemetry[]
  metrics?: PrometheusMetrics
  /** `@fastify/otel`'s instrumentation, registered on the app first when traces are on. */
  http?: FastifyOtelInstrumentation
  /** Sends what is still buffered: called when the server stops. */
  shutdown: () => Promise<void>
}

/** Reads METRICS and TRACING; anything else they say is refused, so that a typo does not silently turn nothing on. */
export async function telemetryFromEnvironment (env: NodeJS.ProcessEnv): Promise<ExampleTelemetry> {
  const { METRICS: metricsWanted, TRACING: tracing } = env
  if (metricsWanted !== undefined && metricsWanted !== 'prometheus') throw new Error(`METRICS must be prometheus, not ${metricsWanted}`)
  if (tracing !== undefined && tracing !== 'console' && tracing !== 'otlp') throw new Error(`TRACING must be console or otlp, not ${tracing}`)
  const metrics = metricsWanted === undefined ? undefined : (await import('fastify-views/prometheus')).prometheusMetrics()
  const telemetry: Telemetry[] = metrics === undefined ? [] : [metrics]
  if (tracing === undefined) return { telemetry, metrics, shutdown: async () => {} }
  const [
    { BatchSpanProcessor, ConsoleSpanExporter }, { NodeTracerProvider }, { resourceFromAttributes },
    { ATTR_SERVICE_NAME }, { FastifyOtelInstrumentation }, { otelTracing }
  ] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'), import('@opentelemetry/sdk-trace-node'), import('@opentelemetry/resources'),
    import('@opentelemetry/semantic-conventions'), import('@fastify/otel'), import('fastify-views/opentelemetry')
  ])
  // OTLPTraceExporter reads OTEL_EXPORTER_OTLP_ENDPOINT itself (default http://localhost:4318).
  const exporter: SpanExporter = tracing === 'console'
    ? new ConsoleSpanExporter()
    : new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter()
  const provider = new NodeTracerProvider({
    // What a trace backend lists the spans under: OTEL_SERVICE_NAME, as every OpenTelemetry SDK reads it.
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: env.OTEL_SERVICE_NAME ?? 'fastify-views-example' }),
    spanProcessors: [new BatchSpanProcessor(exporter)]
  })
  // The global provider, a context that follows each request through its awaits, W3C trace headers.
  provider.register()
  telemetry.push(otelTracing())
  const http = new FastifyOtelInstrumentation()
  return { telemetry, metrics, http, shutdown: async () => { await provider.shutdown() } }
}
