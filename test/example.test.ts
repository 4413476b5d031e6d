import { test } from 'tap'
import { buildApp } from '../examples/app.js'
import { checkDocs, exerciseItems, literalItems } from './example-checks.js'

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
