import { test } from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { buildApp } from '../examples/app.js'

test('the example API serves items, Swagger UI and a valid OpenAPI document', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())

  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, '/items/1')
  const item = created.json()
  t.match(item, { id: 1, name: 'Lamp', price: 30, updated_at: /^\d{4}-\d\d-\d\dT/ })

  t.same((await app.inject('/items')).json(), [item])
  t.same((await app.inject('/items/1')).json(), item)
  t.equal((await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'Lamp', price: 25 } })).json().price, 25)
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', payload: { name: 'Desk lamp' } })).json().name, 'Desk lamp')
  t.equal((await app.inject({ method: 'DELETE', url: '/items/1' })).statusCode, 204)
  t.equal((await app.inject('/items/1')).statusCode, 404)
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: '', price: -1 } })).statusCode, 400)
  t.same((await app.inject('/health')).json(), { status: 'ok' })

  const ui = await app.inject('/docs/')
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/i)
  const doc = (await app.inject('/docs/json')).json()
  t.same(Object.keys(doc.paths).sort(), ['/health', '/items', '/items/{id}'])
  t.same(await new Validator().validate(doc), { valid: true })
})
