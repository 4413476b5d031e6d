import { buildApp } from './app.js'

const host = process.env.HOST ?? '127.0.0.1'
const port = Number(process.env.PORT ?? 3000)

const app = await buildApp({ logger: { level: process.env.LOG_LEVEL ?? 'info' } })
await app.listen({ host, port })
const base = `http://${host.includes(':') ? `[${host}]` : host}:${port}`
console.log(`fastify-views example listening on ${base}`)
console.log(`Swagger UI: ${base}/docs  OpenAPI JSON: ${base}/docs/json`)

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => { void app.close().then(() => process.exit(0)) })
}
