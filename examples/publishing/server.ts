// Serves the publishing example: `DATABASE_URL` (default `sqlite:./data/publishing.db`), `HOST`, `PORT`.
import { buildApp } from './app.js'

const app = await buildApp({ logger: { level: process.env.LOG_LEVEL ?? 'info' }, databaseUrl: process.env.DATABASE_URL })
await app.listen({ host: process.env.HOST ?? '127.0.0.1', port: Number(process.env.PORT ?? 3002) })
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.once(signal, () => {
    app.close().then(() => process.exit(0), (error: unknown) => { console.error(error); process.exit(1) })
  })
}
