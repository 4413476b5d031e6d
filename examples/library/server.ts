// Serves the lending library example: `DATABASE_URL` (default `sqlite:./data/library.db`), `REDIS_URL`
// (the write budgets every instance shares; without it, each counts its own), `HOST`, `PORT`.
import { buildApp } from './app.js'

const app = await buildApp({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, databaseUrl: process.env.DATABASE_URL, redisUrl: process.env.REDIS_URL })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3001) })
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0), (error: unknown) => { console.error(error); process.exit(1) })
  })
}
