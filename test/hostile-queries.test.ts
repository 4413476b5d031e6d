import { test } from 'tap'
import { Type } from '@sinclair/typebox'
import { BaseFilter, GenericListAPIView, MemoryRepository, OffsetLimitFilter } from '../lib/index.js'
import { buildApp } from '../examples/app.js'
import { build, problem } from './helpers.js'
import { hostileQueries } from './hostile-cases.js'

test('query keys named like Object.prototype members are not fields', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 3 } })
  for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf']) {
    const res = await app.inject(`/items?${key}=1`)
    t.equal(res.statusCode, 200, `GET /items?${key}=1 is served, the key ignored like any undeclared one`)
    t.equal(res.json().total_items, 1)
  }
  const bulk = await app.inject({ method: 'PATCH', url: '/items/bulk?name=lamp&valueOf=1', payload: { price: 4 } })
  t.equal(bulk.statusCode, 200, 'a bulk update selects by the declared filter alone')
  t.equal((await app.inject('/items/1')).json().price, 4)
})

test('q on a filter without search fields is ignored; pages and offsets beyond what a store can address are 400s naming them', async (t) => {
  class Plain extends BaseFilter {
    static override fields = { name: Type.String() }
  }
  class Offsets extends OffsetLimitFilter {}
  const rows = new MemoryRepository({ rows: [{ id: 1, name: 'lamp' }] })
  class Items extends GenericListAPIView {
    static override responseSchema = Type.Object({ id: Type.Integer(), name: Type.String() })
    static override repository = rows as never
    static override filter = Plain
  }
  class Windows extends GenericListAPIView {
    static override responseSchema = Type.Object({ id: Type.Integer(), name: Type.String() })
    static override repository = rows as never
    static override filter = Offsets
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }, { view: Windows, prefix: '/windows' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/items?q=lamp')).json(), [{ id: 1, name: 'lamp' }], 'q is not a parameter here: ignored')
  const offset = problem(t, await app.inject('/windows?offset=9007199254740993'), 400)
  t.equal(offset.errors[0].parameter, 'offset', 'an offset past the exact integers is a 400 naming offset')

  const example = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => example.close())
  const page = problem(t, await example.inject('/items?page=9007199254740991'), 400)
  t.equal(page.errors[0].parameter, 'page', 'a page whose offset no store can address is a 400 naming page')
  t.equal((await example.inject('/items?page=1000000')).statusCode, 200, 'a far but addressable page is an empty page')
})

test('a URL the router cannot decode is a problem (frameworkErrors)', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const res = await app.inject('/items/%')
  t.equal(problem(t, res, 400).status, 400)
  t.notMatch(res.body, /FST_ERR/, 'no framework error code in the body')
})

test('seeded hostile query strings on SQLite: no 5xx, every 4xx a problem', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  for (let i = 0; i < 5; i++) await app.inject({ method: 'POST', url: '/items', payload: { name: `lamp ${i}`, price: i } })
  await hostileQueries(t, app, 1200)
})
