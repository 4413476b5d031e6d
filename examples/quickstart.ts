// The README's quick start, kept here so that the type-check compiles it (test/readme.test.ts
// checks that the README still shows exactly this code). It is not started by `npm start`.
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { AsyncListAPIView, AsyncRetrieveAPIView, Get, configureApp, mix } from 'fastify-views'
import { swaggerOptions } from 'fastify-views/swagger'

const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'Item' })
const IdParams = Type.Object({ id: Type.Integer() })
type Item = Static<typeof Item>

const rows = new Map<number, Item>([[1, { id: 1, name: 'Lamp' }]])

// The schemas are given once; the types of the actions below come from them.
class Items extends mix(AsyncListAPIView, AsyncRetrieveAPIView).with({ responseSchema: Item, detailParams: IdParams }, {
  async list () { return [...rows.values()] },                          // GET /items -> 200 Item[]
  async retrieve (request) {
    return rows.get(request.params.id) ?? null                          // GET /items/:id -> 200, or a 404 problem
  }
}) {
  @Get('/count', { responseSchema: Type.Object({ count: Type.Integer() }) })
  count () { return { count: rows.size } }                              // GET /items/count
}

const app = Fastify()
configureApp(app)                                                       // problem+json on every route
await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
await app.listen({ port: 3000 })
