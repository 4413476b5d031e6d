import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'tap'
import pg from 'pg'
import { buildApp } from '../examples/library/app.js'
import { libraryCases } from './library-example-cases.js'
import { postgres } from './pg-server.js'
import { redisMissing, startRedis } from './redis-server.js'

// The lending library example on each database it runs on, through HTTP: the same cases, a fresh
// seeded library for each (a new SQLite file, a new PostgreSQL database).

test('the library on SQLite (node:sqlite)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-library-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  let n = 0
  await libraryCases(t, async () => {
    const file = path.join(dir, `library-${++n}.db`)
    const app = await buildApp({ databaseUrl: `sqlite:${file}` })
    // A connection of the same driver as the app's (one SQLite per process sees the other's locks).
    const db = new DatabaseSync(file, { readOnly: true })
    app.addHook('onClose', () => { db.close() })
    return { app, query: async (sql) => db.prepare(sql).all() }
  })
})

const started = await postgres()

test('the library on PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  const admin = new pg.Pool({ connectionString: server.url, max: 1 })
  // An idle client that meets the server's shutdown is reported on its pool: heard, as the app's pools hear it.
  admin.on('error', () => {})
  t.teardown(async () => { await admin.end(); server.stop() })
  let n = 0
  await libraryCases(t, async () => {
    const name = `library_${++n}`
    await admin.query(`CREATE DATABASE ${name}`)
    const url = server.url.replace(/\/postgres$/, `/${name}`)
    const app = await buildApp({ databaseUrl: url })
    const reader = new pg.Pool({ connectionString: url, max: 1 })
    reader.on('error', () => {})
    app.addHook('onClose', async () => { await reader.end() })
    return { app, query: async (sql) => (await reader.query(sql)).rows }
  })
})

test('two instances of the library count a member\'s writes in one Redis: 16 clients against both, none over the budget', { skip: redisMissing() ?? false }, async (t) => {
  const redis = await startRedis()
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-library-'))
  t.teardown(async () => { await redis.stop(); rmSync(dir, { recursive: true, force: true }) })
  const redisUrl = `redis://127.0.0.1:${redis.port}`
  const instances = [
    await buildApp({ databaseUrl: `sqlite:${path.join(dir, 'a.db')}`, redisUrl }),
    await buildApp({ databaseUrl: `sqlite:${path.join(dir, 'b.db')}`, redisUrl })
  ]
  t.teardown(async () => { for (const app of instances) await app.close() })
  // Each client sends its writes to the two instances in turn: Ada unsaving a book she never saved (a 404, counted).
  const statuses: number[] = []
  await Promise.all(Array.from({ length: 16 }, async (_, client) => {
    for (let n = 0; n < 6; n++) {
      const app = instances[(client + n) % 2]
      statuses.push((await app.inject({ method: 'DELETE', url: '/reading-list/999', headers: { 'x-member-id': '1' } })).statusCode)
    }
  }))
  t.equal(statuses.length, 96)
  t.equal(statuses.filter((status) => status !== 429).length, 60, 'exactly the budget served, across both instances')
  t.same([...new Set(statuses)].sort(), [404, 429])
  const grace = await instances[1].inject({ method: 'DELETE', url: '/reading-list/999', headers: { 'x-member-id': '2' } })
  t.equal(grace.statusCode, 404, 'another member\'s budget is her own')
})

test('the library refuses a DATABASE_URL it cannot serve', async (t) => {
  await t.rejects(buildApp({ databaseUrl: 'mysql://localhost/library' }), { message: 'DATABASE_URL must be sqlite:<path> or postgres://...' })
})
