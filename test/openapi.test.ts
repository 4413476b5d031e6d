import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import { Validator } from '@seriousme/openapi-schema-validator'
import views, {
  Action, APIError, APIView, BadRequest as BadRequestError, AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView, AsyncRetrieveAPIView,
  AsyncUpdateAPIView, Catch, CatchDefined, Conflict, Delete, Forbidden, Get, mix, NotFound, Post, ResponseHeaders, Route, Throws, View,
  ViewRouter, errors, type FastifyViewsOptions
} from '../lib/index.js'
import { swaggerOptions } from '../lib/swagger.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number({ minimum: 0 }) }, { $id: 'Item' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), price: Type.Number({ minimum: 0 }) }, { $id: 'ItemIn' })
const Page = Type.Object({ items: Type.Array(Item), total: Type.Integer() }, { $id: 'ItemPage' })
const Stats = Type.Object({ count: Type.Integer() })
const ListQuery = Type.Object({ page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })), page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })) })
const Paging = ResponseHeaders.define({ x_total_count: Type.Integer({ description: 'Number of items in all pages' }) })
const RateLimit = ResponseHeaders.define({ x_rate_limit_remaining: Type.Integer() })

class Gone extends APIError {
  static override status = 410
  static override title = 'Gone'
  static override defaultDetail = 'The item was removed.'
}
class ArchivedNotFound extends NotFound {
  static override type = 'https://example.com/problems/archived'
  static override defaultDetail = 'The item is archived.'
}
class Sold extends Error {}

class Items extends mix(AsyncListAPIView, AsyncCreateAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView, AsyncPartialUpdateAPIView, AsyncDestroyAPIView) {
  static override responseSchema = Item
  static override createSchema = ItemIn
  static override detailParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
  static override errors = [Forbidden]
  static override raises = new Map([[Sold, { status: 410, detail: 'Sold out.' }]])
  static override getResponseHeaders (action?: string) { return action === 'list' ? Paging : undefined }

  @Throws(ArchivedNotFound)
  override async retrieve () { return null }

  override async list () { return [] }
  override async create () { return null }
  override async update () { return null }
  override async partialUpdate () { return null }
  override async destroy () { return null }

  @Get('/stats', { responseSchema: Stats, responses: { 200: { description: 'Counts', headers: { 'x-cache': Type.String() } } } })
  stats () { return { count: 0 } }

  @Action(undefined, { detail: true, responseSchema: Stats, schema: { params: Type.Object({ id: Type.Integer() }) } })
  @Throws(NotFound, Gone)
  history () { return { count: 1 } }

  @Post('/import', { responses: errors(Conflict, Gone), responseHeaders: RateLimit, responseSchema: Stats })
  @Catch(Sold)
  import () { return { count: 1 } }

  @Route('/sync', { methods: ['GET', 'POST'], responseSchema: Stats })
  @CatchDefined
  sync () { return { count: 2 } }

  @Delete('/purge', { responses: { 404: { description: 'Nothing to purge', schema: Type.Object({ reason: Type.String() }) } } })
  purge () { return null }

  @Get('/secret', { hide: true })
  secret () { return {} }
}

class Paged extends AsyncListAPIView<{ list: { items: never[], total: number } }> {
  static override responseSchema = Page
  static override responseSchemaAsList = false
  @Throws(NotFound)
  override async list () { return { items: [], total: 0 } }
}

class Plain extends View {
  @Get('/open')
  open () { return {} }

  @Get('/checked', { schema: { querystring: ListQuery } })
  checked () { return {} }

  @Post('/body', { schema: { body: ItemIn } })
  body () { return {} }
}

class Custom extends APIView {
  static override apiComponentName = 'Widget'
  @Get('/', { operationId: 'myOwnId', summary: 'Mine', description: 'Long text', deprecated: true, tags: ['custom'] })
  mine () { return {} }
}

async function documented (options: FastifyViewsOptions): Promise<{ app: FastifyInstance, doc: any }> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
  await app.register(views, options)
  await app.ready()
  // The document as a client reads it: JSON.
  return { app, doc: JSON.parse(JSON.stringify(app.swagger())) }
}

const everything = (): FastifyViewsOptions => {
  const router = new ViewRouter({ prefix: '/v2', responseHeaders: RateLimit, tags: ['v2'] })
  router.registerView(Items, { prefix: '/items' })
  return {
    views: [
      { view: Items, prefix: '/items' },
      { view: Paged, prefix: '/paged' },
      { view: Plain, prefix: '/plain' },
      { view: Custom, prefix: '/custom' },
      router
    ]
  }
}

test('operationIds, summaries and tags follow the documented rule', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  const op = (path: string, method: string) => doc.paths[path][method]
  const ids = [
    ['/items', 'get', 'listItems', 'List Items'],
    ['/items', 'post', 'createItem', 'Create Item'],
    ['/items/{id}', 'get', 'retrieveItem', 'Retrieve Item'],
    ['/items/{id}', 'put', 'updateItem', 'Replace Item'],
    ['/items/{id}', 'patch', 'partialUpdateItem', 'Update Item partially'],
    ['/items/{id}', 'delete', 'destroyItem', 'Delete Item'],
    ['/items/stats', 'get', 'statsItems', 'Stats'],
    ['/items/{id}/history', 'get', 'historyItem', 'History'],
    ['/items/sync', 'get', 'syncItemsGet', 'Sync'],
    ['/items/sync', 'post', 'syncItemsPost', 'Sync'],
    ['/v2/items', 'get', 'listItems2', 'List Items'],
    ['/paged', 'get', 'listItemPages', 'List ItemPages']
  ]
  for (const [path, method, id, summary] of ids) {
    t.equal(op(path, method).operationId, id, `${method} ${path}`)
    t.equal(op(path, method).summary, summary)
  }
  t.same(op('/items', 'get').tags, ['Items'], 'the default tag is the plural resource name')
  t.same(op('/v2/items', 'get').tags, ['v2'], 'router tags replace the default')
  t.match(op('/custom', 'get'), { operationId: 'myOwnId', summary: 'Mine', description: 'Long text', deprecated: true, tags: ['custom'] }, 'explicit options win')
  t.equal(doc.paths['/items/secret'], undefined, 'hide leaves a route out')
  const all = Object.values(doc.paths).flatMap((p: any) => Object.values(p).map((o: any) => o.operationId))
  t.equal(new Set(all).size, all.length, 'operationIds are unique in the document')
})

test('success responses: schema, list wrapping, envelope, empty bodies', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  const body = (path: string, method: string, status: string) => doc.paths[path][method].responses[status]
  t.same(body('/items', 'get', '200').content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Item' } }, 'list wraps responseSchema in an array')
  t.same(body('/items/{id}', 'get', '200').content['application/json'].schema, { allOf: [{ $ref: '#/components/schemas/Item' }] })
  t.same(body('/paged', 'get', '200').content['application/json'].schema, { allOf: [{ $ref: '#/components/schemas/ItemPage' }] }, 'responseSchemaAsList false: the envelope as is')
  t.same(body('/items', 'post', '201').description, 'Created')
  t.same(body('/items/{id}', 'delete', '204'), { description: 'No Content' }, '204 has no content')
  t.same(body('/items/stats', 'get', '200').content['application/json'].schema, { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } })
  t.same(body('/plain/open', 'get', '200').content['application/json'].schema, {}, 'an undeclared body is any JSON')
  t.same(doc.paths['/items'].post.requestBody.content['application/json'].schema, { allOf: [{ $ref: '#/components/schemas/ItemIn' }] })
})

test('errors: defaults, detail and create errors, class errors, Throws, errors(), Catch; anyOf on a shared status', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses)
  const problem = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/problem+json'].schema
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

  t.same(statuses('/items', 'get'), ['200', '400', '403'], 'list: defaultErrors (400) and class errors (403)')
  t.same(statuses('/items', 'post'), ['201', '400', '403', '409'], 'create documents 409')
  for (const method of ['put', 'patch', 'delete']) t.ok(statuses('/items/{id}', method).includes('404'), `${method} documents 404`)
  t.same(problem('/items/{id}', 'get', '404'), { anyOf: [ref('NotFoundProblem'), ref('ArchivedNotFoundProblem')] }, 'two errors on one status: anyOf')
  t.same(problem('/items/{id}', 'get', '400'), ref('BadRequestProblem'))
  t.same(statuses('/items/{id}/history', 'get'), ['200', '400', '403', '404', '410'], 'Throws per action')
  t.same(problem('/items/import', 'post', '409'), ref('ConflictProblem'), 'responses: errors(...) combine with the rest')
  t.same(problem('/items/import', 'post', '410'), ref('GoneProblem'), 'errors() and Catch(Sold -> 410) share the documented class')
  t.same(problem('/items/sync', 'get', '410'), ref('Problem'), 'CatchDefined documents what raises maps to')
  t.same(statuses('/paged', 'get'), ['200', '400', '404'])
  t.same(statuses('/plain/open', 'get'), ['200'], 'a View route without a request schema cannot answer 400')
  t.same(statuses('/plain/checked', 'get'), ['200', '400'], 'a View route with a schema documents the 400 of its validation')
  t.same(problem('/plain/body', 'post', '400'), ref('BadRequestProblem'))

  const schemas = doc.components.schemas
  t.match(schemas.NotFoundProblem, { type: 'object', required: ['type', 'title', 'status', 'detail'], properties: { status: { const: 404 }, title: { examples: ['Not Found'] } } })
  t.same(schemas.ArchivedNotFoundProblem.properties.type.const, 'https://example.com/problems/archived')
  t.same(schemas.BadRequestProblem.properties.errors, { type: 'array', items: ref('ProblemErrorEntry') }, 'validation problems document their errors array')
  t.match(schemas.ProblemErrorEntry, { required: ['detail', 'pointer'] })
})

test('merge rules: explicit entries win key by key, an explicit body replaces the generated one, headers add up', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  const stats = doc.paths['/items/stats'].get.responses['200']
  t.equal(stats.description, 'Counts', 'the explicit description wins')
  t.same(stats.content['application/json'].schema.properties, { count: { type: 'integer' } }, 'the generated body is kept when the entry has none')
  t.same(Object.keys(stats.headers), ['x-cache'])

  const purge = doc.paths['/items/purge'].delete.responses['404']
  t.equal(purge.description, 'Nothing to purge')
  t.same(purge.content['application/problem+json'].schema, { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } }, 'an explicit body replaces the generated one')

  class HeaderKeeper extends AsyncListAPIView {
    static override responseSchema = Item
    static override getResponseHeaders () { return Paging }
    @Post('/x', { responses: { 201: { description: 'Made', headers: { 'x-extra': Type.String() } } }, responseHeaders: RateLimit })
    x () { return {} }

    override async list () { return [] }
  }
  const { app: app2, doc: doc2 } = await documented({ views: [HeaderKeeper] })
  t.teardown(() => app2.close())
  t.same(Object.keys(doc2.paths['/x'].post.responses['201'].headers).sort(), ['x-extra', 'x-rate-limit-remaining', 'x-total-count'],
    'an explicit responses entry never drops headers from getResponseHeaders or responseHeaders')
})

test('response headers: declared names become header names; routers keep theirs to themselves', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  t.same(doc.paths['/items'].get.responses['200'].headers, {
    'x-total-count': { schema: { type: 'integer' }, description: 'Number of items in all pages' }
  }, 'x_total_count is documented as x-total-count, on list only')
  t.equal(doc.paths['/items/{id}'].get.responses['200'].headers, undefined)
  t.same(Object.keys(doc.paths['/items/import'].post.responses['201'].headers), ['x-rate-limit-remaining'], 'responseHeaders on a route')
  t.same(Object.keys(doc.paths['/v2/items/{id}'].get.responses['200'].headers), ['x-rate-limit-remaining'], 'the router adds its headers to its routes')
  t.same(Object.keys(doc.paths['/v2/items'].get.responses['200'].headers).sort(), ['x-rate-limit-remaining', 'x-total-count'])
  t.equal(doc.paths['/paged'].get.responses['200'].headers, undefined, 'and nowhere else')
})

test('parameters show their bounds', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  t.same(doc.paths['/items/{id}'].get.parameters, [{ schema: { type: 'integer', minimum: 1 }, in: 'path', name: 'id', required: true }])
  t.same(doc.paths['/plain/checked'].get.parameters, [
    { schema: { type: 'integer', minimum: 1, default: 1 }, in: 'query', name: 'page', required: false },
    { schema: { type: 'integer', minimum: 1, maximum: 100 }, in: 'query', name: 'page_size', required: false }
  ])
})

test('components: every $id once under its own name, never def-N', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  t.same(Object.keys(doc.components.schemas).sort(), [
    'ArchivedNotFoundProblem', 'BadRequestProblem', 'ConflictProblem', 'ForbiddenProblem', 'GoneProblem', 'Item', 'ItemIn', 'ItemPage',
    'NotFoundProblem', 'Problem', 'ProblemErrorEntry'
  ])
  const text = JSON.stringify(doc)
  t.notMatch(text, /def-\d/)
  for (const ref of text.matchAll(/"#\/components\/schemas\/([^"]+)"/g)) t.ok(doc.components.schemas[ref[1]], `${ref[1]} resolves`)
  t.same(doc.components.schemas.ItemPage.properties.items, { type: 'array', items: { $ref: '#/components/schemas/Item' } })
})

test('the whole document is a valid OpenAPI 3.1 description', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  t.equal(doc.openapi, '3.1.0')
  const result = await new Validator().validate(doc)
  t.same(result, { valid: true }, JSON.stringify(result.errors ?? []).slice(0, 2000))
})

test('swaggerOptions passes extra options through and runs your transformObject after its own', async (t) => {
  const app = Fastify()
  let seen: any
  await app.register(swagger, swaggerOptions({ info: { title: 'x', version: '1' } }, {
    hideUntagged: false,
    transformObject: (input) => {
      if (!('openapiObject' in input)) return input.swaggerObject
      seen = input.openapiObject.components?.schemas
      return Object.assign(input.openapiObject, { 'x-seen': true })
    }
  }))
  await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as any
  t.equal(doc['x-seen'], true)
  t.ok(seen.NotFoundProblem, 'problem components were added before yours ran')
})

test('documented responses do not change what is served', async (t) => {
  const { app } = await documented(everything())
  t.teardown(() => app.close())
  t.same((await app.inject('/items/stats')).json(), { count: 0 })
  t.same((await app.inject({ method: 'POST', url: '/items/sync' })).json(), { count: 2 })
  const missing = await app.inject('/items/5')
  t.equal(missing.statusCode, 404)
  t.match(missing.headers['content-type'], /^application\/problem\+json/)
})

test('generic views: page schemas are named components, filter parameters show their bounds, the document stays valid', async (t) => {
  const { AsyncGenericViewSet, GenericListAPIView, MemoryRepository, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter, asyncRepository } = await import('../lib/index.js')
  class Pages extends PaginationFilter {
    static override maxPageSize = 50
    static override fields = { name: Type.String() }
    static override operatorFields = { price: Type.Number() }
    static override operators = { price: ['gt', 'in'] as const }
    static override orderingFields = ['name', 'price']
    static override searchFields = ['name']
  }
  class GenericItems extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = Pages
    static override repository = asyncRepository(new MemoryRepository())
  }
  const list = (filter: typeof OffsetLimitFilter) => class extends GenericListAPIView {
    static override responseSchema = Item
    static override filter = filter
    static override repository = new MemoryRepository()
  }
  const Offsets = list(OffsetLimitFilter)
  const Cursors = list(CursorPaginationFilter)
  const { app, doc } = await documented({
    views: [{ view: GenericItems, prefix: '/generic' }, { view: Offsets, prefix: '/offsets' }, { view: Cursors, prefix: '/cursors' }]
  })
  t.teardown(() => app.close())
  const schema = (path: string) => doc.paths[path].get.responses['200'].content['application/json'].schema
  t.same(schema('/generic'), { allOf: [{ $ref: '#/components/schemas/ItemNumberedPage' }] })
  t.same(schema('/offsets'), { allOf: [{ $ref: '#/components/schemas/ItemOffsetPage' }] })
  t.same(schema('/cursors'), { allOf: [{ $ref: '#/components/schemas/ItemCursorPage' }] })
  t.same(Object.keys(doc.components.schemas.ItemNumberedPage.properties), ['items', 'current_page', 'page_size', 'total_pages', 'total_items', 'has_more'])
  t.same(Object.keys(doc.components.schemas.ItemOffsetPage.properties), ['items', 'offset', 'limit', 'total_items', 'has_more'])
  t.same(Object.keys(doc.components.schemas.ItemCursorPage.properties), ['items', 'next_page', 'previous_page'])
  const params = Object.fromEntries(doc.paths['/generic'].get.parameters.map((p: any) => [p.name, p.schema]))
  t.same(Object.keys(params), ['name', 'price__gt', 'price__in', 'sort', 'q', 'page', 'page_size'])
  t.same(params.page, { type: 'integer', minimum: 1, default: 1 })
  t.same(params.page_size, { type: 'integer', minimum: 1, maximum: 50, default: 50 })
  t.same(params.sort.items.anyOf.map((member: { enum: string[] }) => member.enum[0]), ['name', '-name', 'price', '-price'], 'sort lists exactly the whitelisted keys')
  t.same(Object.fromEntries(doc.paths['/offsets'].get.parameters.map((p: any) => [p.name, p.schema])), {
    offset: { type: 'integer', minimum: 0, default: 0 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 100 }
  })
  t.match(Object.fromEntries(doc.paths['/cursors'].get.parameters.map((p: any) => [p.name, p.schema])).cursor, { type: 'string', pattern: '^[A-Za-z0-9_-]+$' })
  t.same(await new Validator().validate(doc), { valid: true })
})

test('two error classes with one name cannot share a component', async (t) => {
  const make = () => class Duplicate extends APIError { static override status = 418 }
  const First = make()
  const Second = make()
  class Clash extends APIView {
    @Get('/a')
    @Throws(First)
    a () { return {} }

    @Get('/b')
    @Throws(Second)
    b () { return {} }
  }
  await t.rejects(documented({ views: [Clash] }), { name: 'TypeError', message: /"DuplicateProblem"/ })
})

test('a View route that reads a body documents the 400 of a malformed one', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  class Bodyless extends View {
    @Post('/')
    post () { return {} }
  }
  const { app: app2, doc: doc2 } = await documented({ views: [Bodyless] })
  t.teardown(() => app2.close())
  t.same(Object.keys(doc2.paths['/'].post.responses), ['201', '400'])
  const res = await app2.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: '{' })
  t.equal(res.statusCode, 400)
  t.ok(doc)
})

test('bulk views: 400 everywhere, 409 on POST/PUT/PATCH, 404 on PUT, filter parameters on PATCH and DELETE; valid', async (t) => {
  const { AsyncBulkAPIViewSet, AsyncGenericViewSet, MemoryRepository, BaseFilter, asyncRepository } = await import('../lib/index.js')
  class ByName extends BaseFilter {
    static override fields = { name: Type.String() }
    static override orderingFields = ['name']
  }
  class Bulk extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override updateSchema = Type.Partial(ItemIn)
    static override filter = ByName
    static override maxBatchSize = 500
    static override repository = asyncRepository(new MemoryRepository()) as never
  }
  const { app, doc } = await documented({ views: [{ view: Bulk, prefix: '/items' }] })
  t.teardown(() => app.close())
  const bulk = doc.paths['/items/bulk']
  t.same(Object.keys(bulk).sort(), ['delete', 'patch', 'post', 'put'])
  t.same(Object.keys(bulk.post.responses), ['201', '400', '409', '413'], 'POST: 201, 400, 409, and 413 past maxBatchSize')
  t.same(Object.keys(bulk.put.responses), ['204', '400', '404', '409', '413'])
  t.same(Object.keys(bulk.patch.responses), ['200', '400', '409'])
  t.same(Object.keys(bulk.delete.responses), ['204', '400'])
  t.same(bulk.post.operationId, 'bulkCreateItems')
  t.same([bulk.put.operationId, bulk.patch.operationId, bulk.delete.operationId], ['bulkUpdateItems', 'updateManyItems', 'bulkDeleteItems'])
  t.same(bulk.patch.parameters.map((p: any) => p.name), ['name'], 'PATCH selects by the filter fields only (no sort)')
  t.same(bulk.delete.parameters.map((p: any) => p.name), ['name'])
  t.equal(bulk.post.requestBody.content['application/json'].schema.maxItems, 500)
  t.same(bulk.post.responses['201'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Item' } })
  t.equal(bulk.patch.requestBody.content['application/json'].schema.minProperties, 1)
  t.ok(doc.paths['/items/{id}'].put, 'the CRUD routes stay beside the bulk ones')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('conditional views document validators, 304 on safe methods and 412 on unsafe detail routes; explicit responses keep them', async (t) => {
  const { ConditionalMixin, AsyncGenericViewSet, MemoryRepository, asyncRepository } = await import('../lib/index.js')
  class Conditional extends mix(ConditionalMixin, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override etag = true
    static override lastModifiedField = 'updated_at'
    static override repository = asyncRepository(new MemoryRepository()) as never

    @Get('/:id/summary', { schema: { params: Type.Object({ id: Type.Integer() }) }, responseSchema: Stats, responses: { 200: { description: 'Short', headers: { 'x-extra': Type.String() } } } })
    summary () { return { count: 1 } }
  }
  class HandRolled extends ConditionalMixin {
    static override conditionalRequests = true
    @Get('/', { responseSchema: Stats })
    get () { return { count: 1 } }
  }
  const { app, doc } = await documented({ views: [{ view: Conditional, prefix: '/c' }, { view: HandRolled, prefix: '/h' }] })
  t.teardown(() => app.close())
  const responses = (path: string, method: string) => doc.paths[path][method].responses
  t.same(Object.keys(responses('/c/{id}', 'get')), ['200', '304', '400', '404'])
  t.same(Object.keys(responses('/c/{id}', 'get')['200'].headers), ['etag', 'last-modified'])
  t.same(responses('/c/{id}', 'get')['304'].headers, responses('/c/{id}', 'get')['200'].headers, 'a 304 documents the same validators')
  t.notOk(responses('/c/{id}', 'get')['304'].content, 'a 304 has no content')
  t.same(Object.keys(responses('/c', 'get')), ['200', '304', '400'], 'lists are conditional too')
  for (const method of ['put', 'patch', 'delete']) {
    t.same(responses('/c/{id}', method)['412'].content['application/problem+json'].schema, { $ref: '#/components/schemas/PreconditionFailedProblem' }, `${method}: 412`)
  }
  t.notOk(responses('/c', 'post')['412'], 'no 412 on POST')
  t.notOk(responses('/c', 'post')['304'], 'no 304 on POST')
  const summary = responses('/c/{id}/summary', 'get')
  t.same(Object.keys(summary['200'].headers).sort(), ['etag', 'last-modified', 'x-extra'], 'an explicit entry never drops the validators')
  t.equal(summary['200'].description, 'Short')
  t.same(Object.keys(responses('/h', 'get')), ['200', '304', '400'], 'conditionalRequests documents hand-rolled validators')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('documentation corners: CatchDefined string entries, Catch with a detail only, explicit content, helpers', async (t) => {
  const { refResolver, addProblemComponents, swaggerOptions: options } = await import('../lib/swagger.js')
  const { mergeResponses } = await import('../lib/route-meta.js')
  const { componentName, NumberedPage, serializerCompilerForTest } = { ...(await import('../lib/index.js')), serializerCompilerForTest: (await import('../lib/serializer.js')).serializerCompilerFor }
  class Oops extends Error {}
  class Corners extends APIView {
    static override raises = new Map([[Oops, 'Oops.']])
    @Get('/defined')
    @CatchDefined
    defined () { return {} }

    @Get('/detail-only')
    @Catch(Oops, { detail: 'Only a detail.' })
    detailOnly () { return {} }

    @Get('/csv', { responses: { 200: { content: { 'text/csv': { schema: Type.String() } } } } })
    csv () { return 'a,b' }
  }
  const { app, doc } = await documented({ views: [Corners] })
  t.teardown(() => app.close())
  t.same(Object.keys(doc.paths['/defined'].get.responses), ['200', '400'])
  t.same(Object.keys(doc.paths['/detail-only'].get.responses), ['200', '400'])
  t.same(doc.paths['/csv'].get.responses['200'].content, { 'text/csv': { schema: { type: 'string' } } })

  t.equal(refResolver.buildLocalReference({}, '', '', 3), 'def-3')
  t.same(addProblemComponents({}), { components: { schemas: {} } })
  const passThrough = options({ info: { title: 'x', version: '1' } })
  t.same(passThrough.transformObject({ swaggerObject: { swagger: '2.0' } } as never), { swagger: '2.0' }, 'swagger 2 documents pass through')
  const theirs = options({ info: { title: 'x', version: '1' } }, { transformObject: () => ({ mine: true }) as never })
  t.same(theirs.transformObject({ swaggerObject: {} } as never), { mine: true })

  t.same(mergeResponses({ 400: { errors: [BadRequestError] } }, { 400: { description: 'x' } }), { 400: { errors: [BadRequestError], description: 'x', headers: undefined } })
  t.same(mergeResponses({ 400: { description: 'x' } }, { 400: { errors: [BadRequestError] } })![400].errors, [BadRequestError])
  t.same(mergeResponses({ 400: { errors: [BadRequestError] } }, { 400: { errors: [BadRequestError, NotFound] } })![400].errors, [BadRequestError, NotFound])

  t.equal(componentName(class extends APIView { static override responseSchema = Type.Object({}, { title: 'Titled' }) }), 'Titled')
  t.equal(componentName(class APIView2 extends APIView {}), 'APIView2')
  t.equal(componentName(class ViewSet extends APIView {}), 'ViewSet', 'a name that is only a suffix stays')
  t.notOk(NumberedPage(Type.Object({ a: Type.String() })).$id, 'a page of an anonymous item is anonymous')
  t.equal(serializerCompilerForTest()({ schema: {}, contentType: 'application/problem+json' })({ a: 1 }), '{"a":1}')
})
