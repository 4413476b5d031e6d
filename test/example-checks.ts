import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Validator } from '@seriousme/openapi-schema-validator'
import { NASTY } from './sql-cases.js'

/** Every operation of the example's `/items`, as a user would try them in Swagger UI. */
export async function exerciseItems (t: Test, app: FastifyInstance): Promise<void> {
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })
  t.equal(created.statusCode, 201)
  const item = created.json()
  t.equal(created.headers.location, `/items/${item.id}`)
  t.match(item, { name: 'Lamp', price: 30, updated_at: /^\d{4}-\d\d-\d\dT/ })

  const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'Desk', price: 120 }, { name: 'Chair', price: 45 }, { name: 'Chair', price: 50 }] })
  t.equal(bulk.statusCode, 201)
  const page = (await app.inject('/items?page_size=2&sort=-price')).json()
  t.same({ names: page.items.map((i: { name: string }) => i.name), total: page.total_items, pages: page.total_pages, more: page.has_more }, { names: ['Desk', 'Chair'], total: 4, pages: 2, more: true })
  t.equal((await app.inject('/items?name=Chair')).json().total_items, 2)

  const one = await app.inject(`/items/${item.id}`)
  t.same(one.json(), item)
  t.ok(one.headers.etag)
  t.equal(one.headers['last-modified'], new Date(new Date(item.updated_at).setMilliseconds(0)).toUTCString())
  t.equal((await app.inject({ url: `/items/${item.id}`, headers: { 'if-none-match': one.headers.etag as string } })).statusCode, 304)
  t.equal((await app.inject({ url: `/items/${item.id}`, headers: { 'if-modified-since': one.headers['last-modified'] as string } })).statusCode, 304)
  const put = await app.inject({ method: 'PUT', url: `/items/${item.id}`, headers: { 'if-match': one.headers.etag as string }, payload: { name: 'Lamp', price: 25 } })
  t.equal(put.json().price, 25)
  t.equal((await app.inject({ method: 'PUT', url: `/items/${item.id}`, headers: { 'if-match': one.headers.etag as string }, payload: { name: 'Lamp', price: 20 } })).statusCode, 412)
  t.equal((await app.inject({ method: 'PATCH', url: `/items/${item.id}`, payload: { name: 'Desk lamp' } })).json().name, 'Desk lamp')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/bulk?name=Chair', payload: { price: 40 } })).json().length, 2)
  const ids = bulk.json().map((i: { id: number }) => i.id)
  t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: ids[0], name: 'Oak desk', price: 130 }] })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?name=Chair' })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: `/items/${item.id}` })).statusCode, 204)
  t.equal((await app.inject(`/items/${item.id}`)).statusCode, 404)
  t.same((await app.inject('/items')).json().items.map((i: { name: string }) => i.name), ['Oak desk'])
  for (const bad of [{ name: '', price: 1 }, { name: 'x', price: -1 }, { name: 'x'.repeat(101), price: 1 }, { name: 'x' }]) {
    const res = await app.inject({ method: 'POST', url: '/items', payload: bad })
    t.equal(res.statusCode, 400)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk' })).statusCode, 400, 'a filterless DELETE is refused')
  t.same((await app.inject('/health')).json(), { status: 'ok' })
}

export async function checkDocs (t: Test, app: FastifyInstance): Promise<void> {
  const ui = await app.inject('/docs/')
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/i)
  const doc = (await app.inject('/docs/json')).json()
  t.same(Object.keys(doc.paths).sort(), ['/health', '/items', '/items/bulk', '/items/{id}'])
  t.same(await new Validator().validate(doc), { valid: true })
}

/**
 * Every string of `NASTY` as an item name through the example's `/items`: created, read,
 * filtered by `name`, written by PUT and PATCH, by bulk POST and PUT, and selected by the
 * `name` filter of bulk PATCH and DELETE. Each is stored and matched literally; the
 * items that were there before are left as they were.
 */
export async function literalItems (t: Test, app: FastifyInstance): Promise<void> {
  const all = async () => (await app.inject('/items?page_size=100&sort=name')).json()
  const before = await all()
  const byName = async (name: string) => (await app.inject(`/items?name=${encodeURIComponent(name)}&page_size=100`)).json()
  const enc = encodeURIComponent
  const ids: number[] = []
  for (const s of NASTY) {
    const label = JSON.stringify(s)
    const created = await app.inject({ method: 'POST', url: '/items', payload: { name: s, price: 1 } })
    t.equal(created.statusCode, 201, `POST ${label}`)
    const item = created.json()
    ids.push(item.id)
    t.equal(item.name, s, `${label}: stored as sent`)
    t.equal((await app.inject(`/items/${item.id}`)).json().name, s, `${label}: read back`)
    t.same((await byName(s)).items.map((i: { id: number }) => i.id), [item.id], `${label}: ?name= matches it alone`)
    t.equal((await app.inject({ method: 'PUT', url: `/items/${item.id}`, payload: { name: `${s}#put`, price: 2 } })).json().name, `${s}#put`, `${label}: PUT`)
    t.equal((await app.inject({ method: 'PATCH', url: `/items/${item.id}`, payload: { name: s } })).json().name, s, `${label}: PATCH`)
    const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: `${s}#1`, price: 1 }, { name: `${s}#1`, price: 2 }] })
    t.same(bulk.json().map((i: { name: string }) => i.name), [`${s}#1`, `${s}#1`], `${label}: bulk POST`)
    const [b1, b2] = bulk.json().map((i: { id: number }) => i.id)
    t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: b1, name: `${s}#2`, price: 3 }] })).statusCode, 204, `${label}: bulk PUT`)
    const patched = await app.inject({ method: 'PATCH', url: `/items/bulk?name=${enc(`${s}#1`)}`, payload: { price: 5 } })
    t.same(patched.json().map((i: { id: number, name: string, price: number }) => [i.id, i.name, i.price]), [[b2, `${s}#1`, 5]], `${label}: bulk PATCH by name`)
    t.equal((await byName(`${s}#2`)).items[0]?.id, b1)
    for (const name of [`${s}#1`, `${s}#2`]) t.equal((await app.inject({ method: 'DELETE', url: `/items/bulk?name=${enc(name)}` })).statusCode, 204, `${label}: bulk DELETE by name`)
    t.equal((await byName(`${s}#1`)).total_items + (await byName(`${s}#2`)).total_items, 0, `${label}: the bulk rows are gone`)
  }
  const after = await all()
  t.equal(after.total_items, before.total_items + NASTY.length, 'the table is intact: the items before, one per string')
  t.same([...after.items.filter((i: { id: number }) => !ids.includes(i.id))], before.items, 'the items before are as they were')
  const names = new Map(after.items.map((i: { id: number, name: string }) => [i.id, i.name]))
  t.same(ids.map((id) => names.get(id)), NASTY, 'each name stored exactly as sent')
  for (const s of NASTY) t.equal((await app.inject({ method: 'DELETE', url: `/items/bulk?name=${enc(s)}` })).statusCode, 204)
  t.equal((await all()).total_items, before.total_items, 'and deleted by name, one by one')
}
