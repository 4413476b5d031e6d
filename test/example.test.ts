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
