import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { buildApp } from '../examples/app.js'
import { checkDocs, checkItemEvents, checkStreamedItems, exerciseItems, literalItems, openEvents } from './example-checks.js'

test('the example API on SQLite serves every item operation, Swagger UI and a valid OpenAPI document', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await exerciseItems(t, app)
  await checkDocs(t, app)
})

test('the example API on SQLite stores and matches SQL-looking names literally in every body and filter', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })).statusCode, 201)
  await literalItems(t, app)
})

test('the example refuses a DATABASE_URL it cannot serve', async (t) => {
  await t.rejects(buildApp({ databaseUrl: 'mysql://localhost/shop' }), { message: 'DATABASE_URL must be sqlite:<path> or postgres://...' })
})

test('the example API with CACHE_URL=memory serves every item operation the same, its reads from the cache', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', cacheUrl: 'memory' })
  t.teardown(() => app.close())
  await exerciseItems(t, app)
  await checkDocs(t, app)
  const first = await app.inject({ method: 'GET', url: '/items?page_size=5' })
  const again = await app.inject({ method: 'GET', url: '/items?page_size=5' })
  t.equal(first.headers['x-cache'], 'MISS', 'a first read is read')
  t.equal(again.headers['x-cache'], 'HIT', 'and the same read again is the cache\'s')
  t.equal(again.body, first.body)
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Cached', price: 1 }, headers: { 'idempotency-key': 'k-1' } })
  t.equal(created.statusCode, 201)
  const retried = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Cached', price: 1 }, headers: { 'idempotency-key': 'k-1' } })
  t.equal(retried.headers['idempotent-replayed'], 'true', 'a retry with the key gets the first answer')
  t.equal(retried.headers.location, created.headers.location)
  const after = await app.inject({ method: 'GET', url: '/items?page_size=5' })
  t.equal(after.headers['x-cache'], 'MISS', 'a create invalidates the cached lists')
})

test('the example refuses a CACHE_URL it cannot use', async (t) => {
  await t.rejects(buildApp({ databaseUrl: 'sqlite::memory:', cacheUrl: 'memcached://localhost' }), { message: 'CACHE_URL must be memory or redis://...' })
})

test('the example API on SQLite over a socket: /items streamed as NDJSON and an array, /items/events live and resumed', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await checkStreamedItems(t, app)
  await checkItemEvents(t, app)
})

test('the example\'s events: a write by another program reaches the followers at the next poll, and a closing app ends them', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-events-'))
  t.teardown(() => { rmSync(dir, { recursive: true, force: true }) })
  const file = path.join(dir, 'shop.db')
  const app = await buildApp({ databaseUrl: `sqlite:${file}` })
  t.teardown(() => app.close())
  const live = await openEvents(app)
  t.teardown(live.close)
  // A batch job's connection of its own: the triggers log its writes; no notify() wakes the feed, its poll
  // (1 s) finds them.
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  const other = new DatabaseSync(file, { timeout: 5000 })
  t.teardown(() => { other.close() })
  const started = Date.now()
  other.prepare('INSERT INTO items (name, price, updated_at) VALUES (?, ?, ?)').run('From a job', 7, '2026-01-01T00:00:00.000Z')
  other.prepare("UPDATE items SET price = 8 WHERE name = 'From a job'").run()
  const [created, updated] = await live.next(2)
  t.same([created.event, created.data.name, created.data.price, updated.event, updated.data.price], ['created', 'From a job', 7, 'updated', 8])
  t.ok(Date.now() - started < 3000, `seen within the poll (${Date.now() - started} ms)`)
  // The application closes its open streams, so that its close does not wait on them.
  const closing = Date.now()
  await app.close()
  t.ok(Date.now() - closing < 3000, 'closed at once')
  await t.rejects(live.next(1), /^the stream ended after \[\]$/, 'the client sees the stream end whole, not cut')
})
