import { buildApp } from './app.js'
import { telemetryFromEnvironment } from './telemetry.js'

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 3000)

const databaseUrl = process.env.DATABASE_URL
const cacheUrl = process.env.CACHE_URL
// METRICS=prometheus, TRACING=console|otlp (docs/deployment.md#telemetry).
const telemetry = await telemetryFromEnvironment(process.env)
const app = await buildApp({
  logger: { level: process.env.LOG_LEVEL ?? 'info' },
  telemetry,
  ...(databaseUrl === undefined ? {} : { databaseUrl }),
  ...(cacheUrl === undefined ? {} : { cacheUrl })
})
await app.listen({ host, port })
// The port actually bound: PORT=0 asks the system for a free one.
const bound = (app.server.address() as { port: number }).port
const base = `http://${host.includes(':') ? `[${host}]` : host}:${bound}`
console.log(`fastify-views example listening on ${base}`)
console.log(`Swagger UI: ${base}/docs  OpenAPI JSON: ${base}/docs/json`)
console.log(`Store: ${databaseUrl?.startsWith('postgres') === true ? 'PostgreSQL' : `SQLite ${databaseUrl?.replace(/^sqlite:/, '') ?? './data/shop.db'}`}`)
if (cacheUrl !== undefined) console.log(`Cache: ${cacheUrl === 'memory' ? 'this process' : 'Redis'}`)
if (telemetry.metrics !== undefined) console.log(`Metrics: ${base}/metrics`)
const otlp = process.env.OTEL_EXPORTER_OTLP_ENDPOINT ?? 'http://localhost:4318'
if (process.env.TRACING !== undefined) console.log(`Traces: ${process.env.TRACING === 'otlp' ? `OTLP to ${otlp}` : 'printed'}`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(telemetry.shutdown).then(
      () => process.exit(0),
      (error: unknown) => { console.error(error); process.exit(1) }
    )
  })
}
