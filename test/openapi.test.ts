import { test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import { Validator } from '@seriousme/openapi-schema-validator'
import views, {
  Action, APIView, AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView,
  AsyncRetrieveAPIView, AsyncUpdateAPIView, Catch, CatchDefined, CreateAPIView, Delete, Get, mix, Override, Post,
  ResponseHeaders, Route, Throws, View, ViewRouter, configureApp
} from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import {
  APIError, BadRequest as BadRequestError, Conflict, Forbidden, NotFound, errors, PROBLEM_FORMAT
} from '../lib/errors.js'
import { type FilterClass } from '../lib/generics.js'
import { buildViewRoutes } from '../lib/registration/register.js'
import { documentedSchema, swaggerOptions } from '../lib/openapi/swagger.js'
import { StampingRepository, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number({ minimum: 0 }) }, { $id: 'Item' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), price: Type.Number({ minimum: 0 }) }, { $id: 'ItemIn' })
const Page = Type.Object({ items: Type.Array(Item), total: Type.Integer() }, { $id: 'ItemPage' })
const Stats = Type.Object({ count: Type.Integer() })
const ListQuery = Type.Object(
  {
    page: Type.Optional(Type.Integer({ minimum: 1, default: 1 })),
    page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 }))
  }
)
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

class Items extends mix(
  AsyncListAPIView,
  AsyncCreateAPIView,
  AsyncRetrieveAPIView,
  AsyncUpdateAPIView,
  AsyncPartialUpdateAPIView,
  AsyncDestroyAPIView
) {
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
  for (const [path, methods] of Object.entries<Record<string, { tags: string[] }>>(doc.paths)) {
    const expected = path.startsWith('/v2/') ? ['v2'] : path.startsWith('/items') ? ['Items'] : undefined
    if (expected === undefined) continue
    for (const [method, operation] of Object.entries(methods)) {
      t.same(operation.tags, expected, `${method} ${path}: ${expected[0] === 'v2' ? 'router tags replace the default' : 'the default tag is the plural resource name'}`)
    }
  }
  t.same(Object.keys(doc.paths).filter((p) => p.startsWith('/items')).sort(),
    ['/items', '/items/import', '/items/purge', '/items/stats', '/items/sync', '/items/{id}', '/items/{id}/history'], 'every path of the view was checked')
  t.same(op('/paged', 'get').tags, ['ItemPages'])
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
  t.same(body('/items/{id}', 'get', '200').content['application/json'].schema, { $ref: '#/components/schemas/Item' })
  t.same(body('/paged', 'get', '200').content['application/json'].schema, { $ref: '#/components/schemas/ItemPage' }, 'responseSchemaAsList false: the envelope as is')
  t.same(body('/items', 'post', '201').description, 'Created')
  t.same(body('/items/{id}', 'delete', '204'), { description: 'No Content' }, '204 has no content')
  t.same(body('/items/stats', 'get', '200').content['application/json'].schema, { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } })
  t.same(body('/plain/open', 'get', '200').content['application/json'].schema, {}, 'an undeclared body is any JSON')
  t.same(doc.paths['/items'].post.requestBody.content['application/json'].schema, { $ref: '#/components/schemas/ItemIn' })
})

test('errors: defaults, detail and create errors, class errors, Throws, errors(), Catch; anyOf on a shared status', async (t) => {
  const { app, doc } = await documented(everything())
  t.teardown(() => app.close())
  const statuses = (path: string, method: string) => Object.keys(doc.paths[path][method].responses)
  const problem = (path: string, method: string, status: string) => doc.paths[path][method].responses[status].content['application/problem+json'].schema
  const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })

  t.same(statuses('/items', 'get'), ['200', '403'], 'list: class errors (403); no 400, since it validates nothing and reads no body; no 413 or 415: a GET\'s content is never read')
  t.same(statuses('/items', 'post'), ['201', '400', '403', '409', '413', '415'], 'create documents 409, and the 413 and 415 of its body')
  t.same(statuses('/items/{id}', 'put'), ['200', '400', '403', '404', '409', '413', '414', '415'], 'update documents 404 and 409 (a documented decision)')
  t.same(statuses('/items/{id}', 'patch'), ['200', '400', '403', '404', '409', '413', '414', '415'], 'partialUpdate documents 404 and 409')
  t.same(statuses('/items/{id}', 'delete'), ['204', '400', '403', '404', '413', '414'], 'destroy documents 404, no 409; content is read within bodyLimit and ignored: 413, no 415')
  t.same(problem('/items/{id}', 'put', '409'), ref('ConflictProblem'))
  t.same(problem('/items/{id}', 'patch', '409'), ref('ConflictProblem'))
  t.same(problem('/items/{id}', 'get', '404'), { anyOf: [ref('NotFoundProblem'), ref('ArchivedNotFoundProblem')] }, 'two errors on one status: anyOf')
  t.same(problem('/items/{id}', 'get', '400'), ref('BadRequestProblem'))
  t.same(statuses('/items/{id}/history', 'get'), ['200', '400', '403', '404', '410', '414'], 'Throws per action')
  t.same(problem('/items/import', 'post', '409'), ref('ConflictProblem'), 'responses: errors(...) combine with the rest')
  t.same(problem('/items/import', 'post', '410'), ref('GoneProblem'), 'errors() and Catch(Sold -> 410) share the documented class')
  t.same(problem('/items/sync', 'get', '410'), ref('Problem'), 'CatchDefined documents what raises maps to')
  t.same(statuses('/paged', 'get'), ['200', '404'])
  t.same(statuses('/plain/open', 'get'), ['200'], 'a View route without a request schema cannot answer 400')
  t.same(statuses('/plain/checked', 'get'), ['200', '400'], 'a View route with a schema documents the 400 of its validation')
  t.same(problem('/plain/body', 'post', '400'), ref('BadRequestProblem'))

  const schemas = doc.components.schemas
  t.match(schemas.NotFoundProblem, { type: 'object', required: ['type', 'title', 'status', 'detail'], properties: { status: { const: 404 }, title: { examples: ['Not Found'] } } })
  t.same(schemas.ArchivedNotFoundProblem.properties.type.const, 'https://example.com/problems/archived')
  t.same(schemas.BadRequestProblem.properties.errors, { type: 'array', items: ref('ProblemErrorEntry') }, 'validation problems document their errors array')
  t.match(schemas.ProblemErrorEntry, { required: ['detail', 'pointer'] })
})

test('the problem schemas, whole: every member described, the validation entry, a class\'s status fixed and a whole sample', async (t) => {
  const { ProblemSchema, ValidationProblemSchema } = await import('../lib/errors.js')
  const json = (value: unknown) => JSON.parse(JSON.stringify(value))
  const members = {
    type: { format: 'uri-reference', description: 'A URI reference identifying the problem type (RFC 9457 section 3.1.1).', default: 'about:blank', type: 'string' },
    title: { description: 'A short summary of the problem type.', type: 'string' },
    status: { description: 'The HTTP status code.', type: 'integer' },
    detail: { description: 'An explanation specific to this occurrence.', type: 'string' },
    instance: { format: 'uri-reference', description: 'The request path the problem occurred on (RFC 9457 section 3.1.5).', type: 'string' }
  }
  const entry = {
    type: 'object',
    required: ['detail', 'pointer'],
    properties: {
      detail: { description: 'What is wrong with this part of the request.', type: 'string' },
      pointer: { description: 'JSON Pointer (RFC 6901 fragment) to the offending value: `#/3/name`.', type: 'string' },
      in: { description: 'For parameters: where the parameter is.', anyOf: [{ const: 'path', type: 'string' }, { const: 'query', type: 'string' }, { const: 'header', type: 'string' }] },
      parameter: { description: 'For parameters: its name.', type: 'string' }
    }
  }
  const required = ['type', 'title', 'status', 'detail']
  t.same(json(ProblemSchema), {
    $id: 'Problem',
    description: 'An RFC 9457 problem document.',
    additionalProperties: true,
    examples: [{ type: 'about:blank', title: 'Not Found', status: 404, detail: 'Item 1 does not exist.', instance: '/items/1' }],
    type: 'object',
    required,
    properties: members
  })
  t.same(json(ValidationProblemSchema), {
    $id: 'ValidationProblem',
    description: 'An RFC 9457 problem document; validation errors list each invalid value in `errors`.',
    additionalProperties: true,
    examples: [{
      type: 'about:blank', title: 'Bad Request', status: 400, detail: 'The request body is invalid.', instance: '/items', errors: [{ detail: 'Expected string length greater or equal to 1', pointer: '#/name' }]
    }],
    type: 'object',
    required,
    properties: { ...members, errors: { description: 'One entry per invalid value.', type: 'array', items: { ...entry, $id: 'ProblemErrorEntry' } } }
  })
  class Moved extends APIError {
    static override status = 410
    static override type = 'https://example.com/problems/moved'
  }
  class Shelf extends APIView {
    @Get('/:id', { schema: { params: Type.Object({ id: Type.Integer() }) }, responses: errors(NotFound, Moved) })
    get () { return {} }
  }
  const { app, doc } = await documented({ views: [Shelf] })
  t.teardown(() => app.close())
  const schemas = doc.components.schemas
  t.same(schemas.ProblemErrorEntry, entry)
  t.same(schemas.MovedProblem.properties.type, { const: 'https://example.com/problems/moved', type: 'string', format: 'uri-reference', description: members.type.description },
    'a class\'s own type: that URI reference, described as every problem type is')
  const classSchema = (title: string, status: number, detail: string) => ({
    type: 'object',
    required,
    additionalProperties: true,
    description: `${title}: ${detail}`,
    properties: {
      ...members,
      title: { ...members.title, examples: [title] },
      status: { ...members.status, const: status },
      detail: { ...members.detail, examples: [detail] }
    }
  })
  t.same(schemas.NotFoundProblem, {
    ...classSchema('Not Found', 404, 'The resource does not exist.'),
    examples: [{ type: 'about:blank', title: 'Not Found', status: 404, detail: 'The resource does not exist.', instance: '/items/1' }]
  })
  const badRequest = classSchema('Bad Request', 400, 'The request is invalid.')
  t.same(schemas.BadRequestProblem, {
    ...badRequest,
    properties: { ...badRequest.properties, errors: { type: 'array', items: { $ref: '#/components/schemas/ProblemErrorEntry' } } },
    examples: [{ type: 'about:blank', title: 'Bad Request', status: 400, detail: 'The request is invalid.', instance: '/items/1', errors: [{ detail: 'Expected string length greater or equal to 1', pointer: '#/name' }] }]
  })
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
  const { app: app2, doc: doc2 } = await documented({ views: [{ view: HeaderKeeper, prefix: '' }] })
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
    'ArchivedNotFoundProblem', 'BadRequestProblem', 'ConflictProblem', 'ContentTooLargeProblem', 'ForbiddenProblem', 'GoneProblem', 'Item', 'ItemIn', 'ItemPage',
    'NotFoundProblem', 'Problem', 'ProblemErrorEntry', 'URITooLongProblem', 'UnsupportedMediaTypeProblem'
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
  const { AsyncGenericViewSet, GenericListAPIView, MemoryRepository, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter, asyncRepository } = await import('../lib/generics.js')
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
  const list = (filter: FilterClass) => class extends GenericListAPIView {
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
  t.same(schema('/generic'), { $ref: '#/components/schemas/ItemNumberedPage' })
  t.same(schema('/offsets'), { $ref: '#/components/schemas/ItemOffsetPage' })
  t.same(schema('/cursors'), { $ref: '#/components/schemas/ItemCursorPage' })
  t.same(Object.keys(doc.components.schemas.ItemNumberedPage.properties), ['items', 'current_page', 'page_size', 'total_pages', 'total_items', 'has_more'])
  t.same(Object.keys(doc.components.schemas.ItemOffsetPage.properties), ['items', 'offset', 'limit', 'total_items', 'has_more'])
  t.same(Object.keys(doc.components.schemas.ItemCursorPage.properties), ['items', 'next_page', 'previous_page'])
  const params = Object.fromEntries(doc.paths['/generic'].get.parameters.map((p: any) => [p.name, p.schema]))
  t.same(Object.keys(params), ['name', 'price__gt', 'price__in', 'sort', 'q', 'page', 'page_size'])
  t.same(params.page, { type: 'integer', minimum: 1, maximum: 10_001, default: 1 }, 'page is bounded so that it skips at most maxOffset rows')
  t.same(params.page_size, { type: 'integer', minimum: 1, maximum: 50, default: 50 })
  t.same(params.sort.items.anyOf.map((member: { enum: string[] }) => member.enum[0]), ['name', '-name', 'price', '-price'], 'sort lists exactly the whitelisted keys')
  t.same(Object.fromEntries(doc.paths['/offsets'].get.parameters.map((p: any) => [p.name, p.schema])), {
    offset: { type: 'integer', minimum: 0, maximum: 10_000, default: 0 },
    limit: { type: 'integer', minimum: 1, maximum: 100, default: 100 }
  })
  t.match(Object.fromEntries(doc.paths['/cursors'].get.parameters.map((p: any) => [p.name, p.schema])).cursor, { type: 'string', pattern: '^[A-Za-z0-9_-]+$' })
  t.same(await new Validator().validate(doc), { valid: true })
})

test('error classes with one name share a component when they say the same, and cannot when they differ', async (t) => {
  const make = (status: number) => class Duplicate extends APIError { static override status = status }
  const views = (first: ReturnType<typeof make>, second: ReturnType<typeof make>) => class Clash extends APIView {
    @Get('/a')
    @Throws(first)
    a () { return {} }

    @Get('/b')
    @Throws(second)
    b () { return {} }
  }
  const { app, doc } = await documented({ views: [views(make(418), make(418))] })
  t.teardown(() => app.close())
  t.same(doc.paths['/b'].get.responses['418'], doc.paths['/a'].get.responses['418'], 'one component for both')
  t.equal(doc.components.schemas.DuplicateProblem.properties.status.const, 418)
  await t.rejects(documented({ views: [views(make(418), make(419))] }), { name: 'TypeError', message: /"DuplicateProblem"/ }, 'one document cannot show two schemas under one name')
})

test('each application documents its own components: two apps in one process, each with its own Gone', async (t) => {
  const appWith = async (reason: string) => {
    class Gone extends APIError { static override status = 410 }
    const GoneDetail = Type.Object({ reason: Type.String({ description: reason }) }, { $id: 'GoneDetail' })
    const GoneProblem = Type.Object({ status: Type.Integer(), detail: GoneDetail }, { $id: 'GoneProblem' })
    class Archive extends APIView {
      @Get('/old', { responses: { 410: { schema: GoneProblem } } })
      @Throws(Gone)
      old () { return {} }
    }
    return documented({ views: [Archive] })
  }
  const first = await appWith('Moved to cold storage.')
  t.teardown(() => first.app.close())
  const second = await appWith('Deleted by its owner.')
  t.teardown(() => second.app.close())
  for (const [{ doc }, reason] of [[first, 'Moved to cold storage.'], [second, 'Deleted by its owner.']] as const) {
    t.same(doc.paths['/old'].get.responses['410'].content['application/problem+json'].schema, { $ref: '#/components/schemas/GoneProblem' })
    t.same(doc.components.schemas.GoneProblem.properties.detail, { $ref: '#/components/schemas/GoneDetail' })
    t.equal(doc.components.schemas.GoneDetail.properties.reason.description, reason, 'the app\'s own schema')
    t.same(await new Validator().validate(doc), { valid: true })
  }
})

test('a View route without a body schema takes no content: it ignores content within bodyLimit and documents the 413 past it alone; one that refuses content documents and answers 415 alone, before reading any', async (t) => {
  class Bodyless extends View {
    @Post('/')
    post () { return {} }

    @Post('/strict', { unexpectedContent: 'refuse' })
    strict () { return {} }
  }
  const { app, doc } = await documented({ views: [Bodyless] })
  t.teardown(() => app.close())
  const tooLarge = JSON.stringify({ text: 'x'.repeat(1024 * 1024 + 1) })
  t.same(Object.keys(doc.paths['/'].post.responses), ['201', '413'], 'no 400 and no 415: nothing is parsed or validated; 413: content is read within bodyLimit')
  t.equal(doc.paths['/'].post.requestBody, undefined, 'and no request body')
  // Malformed content, or of another media type, is read and dropped unparsed: the request is served as without it.
  for (const [type, payload] of [['application/json', '{'], ['application/xml', '<a/>']]) {
    const res = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': type }, payload })
    t.equal(res.statusCode, 201, `${type} content is ignored`)
    t.same(res.json(), {})
  }
  // The documented error status is one the route answers, as problem+json.
  const large = await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' }, payload: tooLarge })
  t.equal(large.statusCode, 413, 'content past bodyLimit')
  t.match(large.headers['content-type'], /^application\/problem\+json/)
  t.equal(large.json().detail, 'Request body is too large')
  t.equal((await app.inject({ method: 'POST', url: '/', headers: { 'content-type': 'application/json' } })).statusCode, 201, 'an empty body with a JSON media type is no content')

  t.same(Object.keys(doc.paths['/strict'].post.responses), ['201', '415'], 'unexpectedContent: \'refuse\': no 400 and no 413: nothing is read or validated')
  t.equal(doc.paths['/strict'].post.requestBody, undefined, 'and no request body')
  // Malformed or oversized content is refused unread.
  for (const payload of ['{', '<a/>', tooLarge]) {
    const res = await app.inject({ method: 'POST', url: '/strict', headers: { 'content-type': 'application/json' }, payload })
    t.equal(res.statusCode, 415)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
    t.equal(res.json().detail, 'This route takes no content.')
  }
  t.equal((await app.inject({ method: 'POST', url: '/strict', headers: { 'content-type': 'application/json' } })).statusCode, 201, 'an empty body with a JSON media type is no content')
})

test('bulk views: 400 everywhere, 409 on POST/PUT/PATCH, 404 on PUT, filter parameters on PATCH and DELETE; valid', async (t) => {
  const { AsyncBulkAPIViewSet } = await import('../lib/bulk.js')
  const { AsyncGenericViewSet, MemoryRepository, BaseFilter, asyncRepository } = await import('../lib/generics.js')
  class ByName extends BaseFilter {
    static override fields = { name: Type.String() }
    static override orderingFields = ['name']
  }
  class Bulk extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
    static override updateSchema = Type.Partial(ItemIn)
    static override filter: typeof ByName | null = ByName
    static override maxBatchSize = 500
    static override repository = asyncRepository(new MemoryRepository()) as never
  }
  const { app, doc } = await documented({ views: [{ view: Bulk, prefix: '/items' }] })
  t.teardown(() => app.close())
  const bulk = doc.paths['/items/bulk']
  t.same(Object.keys(bulk).sort(), ['delete', 'patch', 'post', 'put'])
  t.same(Object.keys(bulk.post.responses), ['201', '400', '409', '413', '415'], 'POST: 201, 400, 409, 413 past maxBatchSize or bodyLimit, 415')
  t.same(Object.keys(bulk.put.responses), ['204', '400', '404', '409', '413', '415'])
  t.same(Object.keys(bulk.patch.responses), ['200', '400', '409', '413', '415'])
  t.same(Object.keys(bulk.delete.responses), ['204', '400', '415'], 'DELETE: content is refused unread, so no 413')
  t.same(bulk.post.operationId, 'bulkCreateItems')
  t.same([bulk.put.operationId, bulk.patch.operationId, bulk.delete.operationId], ['bulkUpdateItems', 'updateManyItems', 'bulkDeleteItems'])
  t.same([bulk.post.summary, bulk.put.summary, bulk.patch.summary, bulk.delete.summary],
    ['Create Items in bulk', 'Replace Items in bulk', 'Update the Items a filter selects', 'Delete the Items a filter selects'], 'bulk summaries')
  for (const [path, methods] of Object.entries<Record<string, { tags: string[] }>>(doc.paths)) {
    for (const [method, operation] of Object.entries(methods)) t.same(operation.tags, ['Items'], `${method} ${path} is tagged`)
  }
  t.same(bulk.patch.parameters.map((p: any) => p.name), ['name'], 'PATCH selects by the filter fields only (no sort)')
  t.same(bulk.delete.parameters.map((p: any) => p.name), ['name'])
  for (const method of ['patch', 'delete']) {
    t.equal(bulk[method].parameters[0].required, true, `${method}: the one filter parameter the server requires is required`)
    t.match(bulk[method].description, /filter parameter `name`, which is required/)
  }
  problem(t, await app.inject({ method: 'DELETE', url: '/items/bulk' }), 400)

  // Several filter parameters: OpenAPI has no "at least one of", so the description says it; with
  // allowUnfiltered, none is needed; without a filter, the view alone selects.
  class ByNameOrPrice extends ByName { static override fields = { name: Type.String(), price: Type.Number() } }
  const views = [
    { view: class extends Bulk { static override filter = ByNameOrPrice }, prefix: '/several' },
    { view: class extends Bulk { static override allowUnfiltered = true }, prefix: '/open' },
    { view: class extends Bulk { static override filter = null }, prefix: '/scoped' }
  ]
  const more = await documented({ views })
  t.teardown(() => more.app.close())
  const several = more.doc.paths['/several/bulk'].delete
  t.same(several.parameters.map((p: any) => [p.name, p.required]), [['name', false], ['price', false]])
  t.match(several.description, /filter parameters `name`, `price`: at least one is required/)
  t.equal(problem(t, await more.app.inject({ method: 'DELETE', url: '/several/bulk' }), 400).detail, 'At least one filter parameter is required to select rows.')
  const open = more.doc.paths['/open/bulk'].patch
  t.same(open.parameters.map((p: any) => [p.name, p.required]), [['name', false]])
  t.match(open.description, /with none, every row this endpoint selects/)
  t.notOk(more.doc.paths['/scoped/bulk'].delete.parameters, 'no filter, no parameters')
  t.equal(more.doc.paths['/scoped/bulk'].delete.description, 'Deletes every row this endpoint selects.')
  t.equal(bulk.post.requestBody.content['application/json'].schema.maxItems, 500)
  t.same(bulk.post.responses['201'].content['application/json'].schema, { type: 'array', items: { $ref: '#/components/schemas/Item' } })
  t.equal(bulk.patch.requestBody.content['application/json'].schema.minProperties, 1)
  t.ok(doc.paths['/items/{id}'].put, 'the CRUD routes stay beside the bulk ones')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('conditional views document validators, 304 on safe methods and 412 on unsafe detail routes; explicit responses keep them', async (t) => {
  const { ConditionalMixin } = await import('../lib/conditional.js')
  const { AsyncGenericViewSet, asyncRepository } = await import('../lib/generics.js')
  const Stamped = Type.Object({ ...Item.properties, updated_at: Type.String({ format: 'date-time' }) }, { $id: 'StampedItem' })
  class Conditional extends mix(ConditionalMixin, AsyncGenericViewSet) {
    static override responseSchema = Stamped
    static override createSchema = ItemIn
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true, lastModifiedField: 'updated_at' }
    static override repository = asyncRepository(new StampingRepository()) as never

    @Get('/:id/summary', { schema: { params: Type.Object({ id: Type.Integer() }) }, responseSchema: Stats, responses: { 200: { description: 'Short', headers: { 'x-extra': Type.String() } } } })
    summary () { return { count: 1 } }

    // An unsafe route without a path parameter names no single resource: no preconditions.
    @Delete('/')
    clear () {}
  }
  class HandRolled extends ConditionalMixin {
    static override conditional = { requests: true }
    @Get('/', { responseSchema: Stats })
    get () { return { count: 1 } }
  }
  const { app, doc } = await documented({ views: [{ view: Conditional, prefix: '/c' }, { view: HandRolled, prefix: '/h' }] })
  t.teardown(() => app.close())
  const responses = (path: string, method: string) => doc.paths[path][method].responses
  t.same(Object.keys(responses('/c/{id}', 'get')), ['200', '304', '400', '404', '414'])
  t.same(Object.keys(responses('/c/{id}', 'get')['200'].headers), ['etag', 'last-modified'])
  t.same(responses('/c/{id}', 'get')['304'].headers, responses('/c/{id}', 'get')['200'].headers, 'a 304 documents the same validators')
  t.notOk(responses('/c/{id}', 'get')['304'].content, 'a 304 has no content')
  t.same(Object.keys(responses('/c', 'get')), ['200', '304'], 'lists are conditional too')
  for (const method of ['put', 'patch', 'delete']) {
    t.same(responses('/c/{id}', method)['412'].content['application/problem+json'].schema, { $ref: '#/components/schemas/PreconditionFailedProblem' }, `${method}: 412`)
  }
  t.notOk(responses('/c', 'post')['412'], 'no 412 on POST')
  t.notOk(responses('/c', 'post')['304'], 'no 304 on POST')
  const summary = responses('/c/{id}/summary', 'get')
  t.same(Object.keys(summary['200'].headers).sort(), ['etag', 'x-extra'], 'an explicit entry never drops the validators; Last-Modified only where the body has the field')
  t.notOk(responses('/c', 'get')['200'].headers['last-modified'], 'a list has no Last-Modified')
  t.match(responses('/c/{id}', 'get')['200'].headers['last-modified'].schema, { pattern: /GMT\$$/, examples: ['Thu, 01 Jan 2026 10:00:00 GMT'] }, 'an HTTP-date')
  t.equal(summary['200'].description, 'Short')
  t.same(Object.keys(responses('/h', 'get')), ['200', '304'], 'conditionalRequests documents hand-rolled validators')
  // etag = true sends an ETag with every 2xx and 304: a client may rely on it. Last-Modified depends on the stored value.
  for (const [path, method, status] of [['/c/{id}', 'get', '200'], ['/c/{id}', 'get', '304'], ['/c', 'get', '200'], ['/c/{id}', 'put', '200'], ['/c/{id}', 'patch', '200']]) {
    const headers = responses(path, method)[status].headers
    t.equal(headers.etag.required, true, `${method} ${path} ${status}: ETag is required`)
    t.same(headers.etag.schema, { type: 'string' }, 'the marker leaves the schema')
    t.notOk(headers['last-modified']?.required, 'Last-Modified is not')
  }
  t.notOk(responses('/h', 'get')['200'].headers.etag.required, 'hand-rolled validators may not send an ETag')
  t.same(Object.keys(responses('/h', 'get')['200'].headers), ['etag', 'last-modified'], 'and conditionalRequests documents Last-Modified, which checkLastModified sends')
  t.notOk(responses('/c/{id}', 'delete')['204'].headers, 'a DELETE sends no representation, so no validators')
  t.same(Object.keys(responses('/c/{id}', 'put')['200'].headers), ['etag', 'last-modified'], 'a PUT sends the new ones')
  const headerParams = (path: string, method: string): string[] => (doc.paths[path][method].parameters ?? []).filter((p: { in: string }) => p.in === 'header').map((p: { name: string }) => p.name).sort()
  t.same(headerParams('/c/{id}', 'delete'), ['if-match', 'if-none-match', 'if-unmodified-since'], 'a detail DELETE takes the write conditions')
  const described = (path: string, method: string) => Object.fromEntries(doc.paths[path][method].parameters.filter((p: { in: string }) => p.in === 'header').map((p: { name: string, description: string }) => [p.name, p.description]))
  t.match(described('/c/{id}', 'get'), { 'if-none-match': /^The ETags of the copies the client holds, or \*: 304 when one is current \(RFC 9110 §13\.1\.2\)\.$/, 'if-modified-since': /^The Last-Modified of the client's copy, an HTTP-date: 304 when unchanged since \(RFC 9110 §13\.1\.3\)\.$/ },
    'each conditional header says what it does')
  t.match(described('/c/{id}', 'put'), {
    'if-match': /^The ETag the change is based on \(strong comparison\), or \*: 412 when it no longer matches \(RFC 9110 §13\.1\.1\)\.$/,
    'if-unmodified-since': /^The Last-Modified the change is based on, an HTTP-date: 412 when modified since, or within the current second \(RFC 9110 §13\.1\.4\)\.$/,
    'if-none-match': /^\*: change only a resource that does not exist yet; 412 otherwise \(RFC 9110 §13\.1\.2\)\.$/
  })
  t.same(headerParams('/c', 'delete'), [], 'a collection DELETE takes none')
  t.notOk(responses('/c', 'delete')['412'], 'and documents no 412')
  const get = await app.inject({ url: '/c' })
  t.ok(get.headers.etag, 'and the server sends it')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('documentation corners: CatchDefined string entries, Catch with a detail only, explicit content, helpers', async (t) => {
  const { refResolver, swaggerOptions: options } = await import('../lib/openapi/swagger.js')
  const { mergeResponses } = await import('../lib/routes/route-meta.js')
  const { componentName, plural } = await import('../lib/views/naming.js')
  const { documentedResponses } = await import('../lib/openapi/operation.js')
  const { NumberedPage } = await import('../lib/generics.js')
  const { serializerCompilerFor: serializerCompilerForTest } = await import('../lib/schema/serializer.js')
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
  const { ComponentCollector } = await import('../lib/openapi/components.js')
  const collector = new ComponentCollector()
  const bare = { 204: { description: 'none' } }
  t.equal(collector.responses(bare), bare, 'nothing to reference: the same object')
  t.same(collector.responses({ 200: { content: { 'text/plain': { example: 'no schema' } } } }), { 200: { content: { 'text/plain': { example: 'no schema' } } } })
  t.equal(collector.responses(undefined), undefined)
  collector.reference(Type.Object({}, { $id: 'Lone' }))
  const noComponents: { components?: { schemas?: Record<string, unknown> } } = {}
  collector.addTo(noComponents)
  t.same(noComponents, { components: { schemas: { Lone: { type: 'object', properties: {} } } } }, 'a document without components gets them')
  const noSchemas: { components?: { schemas?: Record<string, unknown> } } = { components: {} }
  collector.addTo(noSchemas)
  t.same(noSchemas, { components: { schemas: {} } }, 'each generation starts afresh')
  const passThrough = options({ info: { title: 'x', version: '1' } })
  t.same(passThrough.transformObject({ swaggerObject: { swagger: '2.0' } }), { swagger: '2.0' }, 'swagger 2 documents pass through')
  const theirs = options({ info: { title: 'x', version: '1' } }, { transformObject: () => ({ mine: true }) as never })
  t.same(theirs.transformObject({ swaggerObject: {} }), { mine: true })

  t.same(mergeResponses({ 400: { errors: [BadRequestError] } }, { 400: { description: 'x' } }), { 400: { errors: [BadRequestError], description: 'x', headers: undefined } })
  t.same(mergeResponses({ 400: { description: 'x' } }, { 400: { errors: [BadRequestError] } })[400].errors, [BadRequestError])
  t.same(
    mergeResponses(
      { 400: { errors: [BadRequestError] } },
      { 400: { errors: [BadRequestError, NotFound] } }
    )[400].errors,
    [BadRequestError, NotFound]
  )

  t.equal(componentName(class extends APIView { static override responseSchema = Type.Object({}, { title: 'Titled' }) }), 'Titled')
  t.same(['Item', 'Category', 'Day', 'Box', 'Match', 'Address'].map(plural), ['Items', 'Categories', 'Days', 'Boxes', 'Matches', 'Addresses'], 'plural')

  const itemsRoute = { name: 'retrieve', methods: ['GET'], path: '/:id', status: 200, options: {}, throws: [NotFound], responseSchema: Item, emptyBody: false, standard: true } as never
  const documentedMap = documentedResponses(Items, itemsRoute, { method: 'GET', multiMethod: false, headerClasses: [Paging], implementation: Items.prototype.retrieve, errorFormat: PROBLEM_FORMAT, url: '/items/:id', contribution: {} })
  t.same(Object.keys(documentedMap), ['200', '400', '403', '404', '414'], 'documentedResponses: the merged map of one operation (a URL with a parameter: 400 and 414 from the router; a GET: no 413 or 415)')
  t.same(Object.keys(documentedMap[200].headers!), ['x-total-count'])
  t.same(documentedMap[404].errors, [NotFound], 'its errors as classes')
  t.equal(componentName(class APIView2 extends APIView {}), 'APIView2')
  t.equal(componentName(class ViewSet extends APIView {}), 'ViewSet', 'a name that is only a suffix stays')
  t.notOk(NumberedPage(Type.Object({ a: Type.String() })).$id, 'a page of an anonymous item is anonymous')
  t.equal(serializerCompilerForTest()({ schema: {}, contentType: 'application/problem+json' })({ a: 1 }), '{"a":1}')
})

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const LOCATION = { schema: { type: 'string', format: 'uri-reference' }, description: 'The URL of the created item.', required: true }

test('create documents Location on its success response exactly when the view provides getLocation', async (t) => {
  const { AsyncGenericViewSet, MemoryRepository, asyncRepository } = await import('../lib/generics.js')
  class Located extends AsyncCreateAPIView {
    static override responseSchema = Item
    static override createSchema = ItemIn
    override async create () { return { id: 7, name: 'a', price: 1 } }
    override getLocation (item: unknown) { return `/located/${(item as { id: number }).id}` }
  }
  class SyncLocated extends CreateAPIView {
    static override createSchema = ItemIn
    static override returnOnCreate = false

    @Override({ responses: { 201: { description: 'Accepted for creation', headers: { 'x-extra': Type.String() } } } })
    override create () { return { id: 8 } }

    override getLocation (item: unknown) { return `/sync/${(item as { id: number }).id}` }
  }
  class Unlocated extends mix(AsyncListAPIView, AsyncCreateAPIView) {
    static override responseSchema = Item
    override async list () { return [] }
    override async create () { return { id: 9, name: 'b', price: 2 } }
  }
  class GenericLocated extends AsyncGenericViewSet {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override repository = asyncRepository(new MemoryRepository())
    override getLocation (item: unknown) { return `/generic/${(item as { id: number }).id}` }
  }
  const { app, doc } = await documented({
    views: [{ view: Located, prefix: '/located' }, { view: SyncLocated, prefix: '/sync' }, { view: Unlocated, prefix: '/unlocated' }, { view: GenericLocated, prefix: '/generic' }]
  })
  t.teardown(() => app.close())
  const responses = (path: string, method: string) => doc.paths[path][method].responses
  t.same(responses('/located', 'post')['201'].headers, { location: LOCATION }, 'an own getLocation documents location on the 201')
  t.same(responses('/sync', 'post')['201'], { description: 'Accepted for creation', headers: { location: LOCATION, 'x-extra': { schema: { type: 'string' } } } },
    'sync views too; an empty 201 still sends Location; an explicit entry keeps it')
  t.equal(responses('/unlocated', 'post')['201'].headers, undefined, 'the default getLocation sends nothing and documents nothing')
  t.equal(responses('/unlocated', 'get')['200'].headers, undefined, 'only create documents it')
  t.same(responses('/generic', 'post')['201'].headers, { location: LOCATION }, 'generic create views')
  for (const [path, method] of [['/generic', 'get'], ['/generic/{id}', 'get'], ['/generic/{id}', 'put']]) {
    t.equal(responses(path, method)['200'].headers, undefined, `${method} ${path}: no location`)
  }
  const created = await app.inject({ method: 'POST', url: '/located', payload: { name: 'a', price: 1 } })
  t.equal(created.statusCode, 201)
  t.equal(created.headers.location, '/located/7', 'what is documented is what is sent')
  const empty = await app.inject({ method: 'POST', url: '/sync', payload: { name: 'a', price: 1 } })
  t.same([empty.statusCode, empty.headers.location, empty.body], [201, '/sync/8', ''])
  t.same(await new Validator().validate(doc), { valid: true })
})

test('an explicit success body is documentation: the route still serves its own response schema', async (t) => {
  const IdOnly = Type.Object({ id: Type.Integer() })
  const row = { id: 1, name: 'a', price: 2, secret: 'not in Item' }
  class Served extends mix(AsyncListAPIView, AsyncRetrieveAPIView) {
    static override responseSchema = Item

    @Override({ responses: { 200: { description: 'The item', schema: IdOnly, headers: { 'x-extra': Type.String() } } } })
    override async retrieve () { return row }

    @Override({ responses: { 200: { content: { 'text/csv': { schema: Type.String() } } } } })
    override async list () { return [row] }

    @Get('/named', { responseSchema: Stats, responses: { 200: { schema: Item } } })
    named () { return { count: 3, secret: 'x' } }

    @Get('/same', { responseSchema: Stats, responses: { 200: { description: 'Same body' } } })
    same () { return { count: 4, secret: 'x' } }

    @Get('/queued', { responseSchema: Stats, responses: { 202: { description: 'Queued', schema: Type.Object({ job: Type.String() }) }, default: { description: 'Anything else' } } })
    queued () {
      if (this.request.headers['x-queue'] === 'yes') this.reply.code(202)
      return { count: 5, job: 'j1' }
    }
  }
  const { app, doc } = await documented({ views: [{ view: Served, prefix: '/served' }] })
  t.teardown(() => app.close())
  const ok = (path: string) => doc.paths[path].get.responses['200']
  t.same(ok('/served/{id}'), {
    description: 'The item',
    headers: { 'x-extra': { schema: { type: 'string' } } },
    content: { 'application/json': { schema: { type: 'object', required: ['id'], properties: { id: { type: 'integer' } } } } }
  }, 'the document shows the explicit body')
  t.same(ok('/served').content, { 'text/csv': { schema: { type: 'string' } } }, 'an explicit content, as given')
  t.same(ok('/served/named').content['application/json'].schema, ref('Item'), 'a named explicit body is a reference')
  t.same(ok('/served/same').content['application/json'].schema.properties, { count: { type: 'integer' } })

  const item = { id: 1, name: 'a', price: 2 }
  t.same((await app.inject('/served/1')).json(), item, 'served with responseSchema, not with the documented { id }')
  const list = await app.inject('/served')
  t.match(list.headers['content-type'], /^application\/json/)
  t.same(list.json(), [item], 'served with the list schema, not unfiltered because of a documented text/csv')
  t.same((await app.inject('/served/named')).json(), { count: 3 }, 'a custom route serves its own responseSchema')
  t.same((await app.inject('/served/same')).json(), { count: 4 })
  t.same(Object.keys(doc.paths['/served/queued'].get.responses), ['200', '202', 'default'], 'a status only responses documents is in the document')
  t.same(doc.paths['/served/queued'].get.responses['202'].content['application/json'].schema.properties, { job: { type: 'string' } })
  t.same(doc.paths['/served/queued'].get.responses.default, { description: 'Anything else' })
  const queued = await app.inject({ url: '/served/queued', headers: { 'x-queue': 'yes' } })
  t.same([queued.statusCode, queued.json()], [202, { count: 5, job: 'j1' }], 'and is served as if undocumented, not with { job }')
  t.same((await app.inject('/served/queued')).json(), { count: 5 }, 'the success status with the route schema')

  const [retrieve] = buildViewRoutes(Served).filter((r) => r.config?.action === 'retrieve')
  const schema = retrieve.schema as { response: Record<string, { [key: string]: unknown }> }
  t.same(schema.response['200'].allOf, [Item], 'Fastify serializes the success status with the route schema')
  t.equal(schema.response['200']['x-response-description'], 'The item', 'with the documented description and headers')
  t.same(Object.keys(schema.response['200'].headers as object), ['x-extra'])
  t.same((documentedSchema(schema).response['200'] as { required: string[] }).required, ['id'], 'documentedSchema gives the documented form')
  t.notOk(schema.response['400'], 'an error status is not served by Fastify: the error format\'s handler serializes it')
  t.ok(documentedSchema(schema).response['400'], 'and the document has it')
  const [queuedRoute] = buildViewRoutes(Served).filter((r) => r.config?.action === 'queued')
  t.same(Object.keys((queuedRoute.schema as { response: object }).response), ['200'], 'Fastify serializes only what is served')
  t.same(Object.keys(documentedSchema(queuedRoute.schema as { response: object }).response), ['200', '202', 'default'])
  t.same(Object.keys(schema.response), ['200'], 'retrieve serves its success status only')
  t.same(Object.keys(documentedSchema(schema).response), ['200', '400', '404', '414'], 'a view route\'s document adds its error statuses to what is served')
  const [same] = buildViewRoutes(Served).filter((r) => r.config?.action === 'same')
  t.same(Object.keys(documentedSchema(same.schema as { response: object }).response), ['200'], 'a GET that validates nothing and names no error: its document adds none (its content is never read: no 413 or 415)')
  const plain = { response: { 200: Item } }
  t.equal(documentedSchema(plain), plain, 'a schema with nothing kept aside (a plain route\'s) is returned as is')
  t.equal(documentedSchema(undefined), undefined)
})

test('swaggerOptions: a transform of yours sees the documented schema', async (t) => {
  const seen: unknown[] = []
  class Served extends AsyncRetrieveAPIView {
    static override responseSchema = Item
    @Override({ responses: { 200: { schema: Stats } } })
    override async retrieve () { return { id: 1, name: 'a', price: 2 } }

    @Get('/plain', { responseSchema: Stats })
    plain () { return { count: 1 } }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'x', version: '1' } }, {
    transform: ({ schema, url }) => {
      seen.push(schema?.response)
      return { schema, url: url.replace('/served', '/renamed') }
    }
  }))
  await app.register(views, { views: [{ view: Served, prefix: '/served' }] })
  app.get('/bare', () => 'no schema at all')
  await app.ready()
  t.teardown(() => app.close())
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  t.same(doc.paths['/renamed/{id}'].get.responses['200'].content['application/json'].schema.properties, { count: { type: 'integer' } }, 'yours runs after ours')
  t.ok(doc.paths['/renamed/plain'])
  t.ok(doc.paths['/bare'], 'a route without a schema passes through')
  t.ok(seen.includes(undefined))
  t.same((await app.inject('/served/1')).json(), { id: 1, name: 'a', price: 2 })
})

test('an explicit body at a more specific level replaces a less specific one, whichever form each uses', async (t) => {
  const Csv = { 'text/csv': { schema: Type.String() } }
  const Reason = Type.Object({ reason: Type.String() })
  class Levels extends mix(AsyncListAPIView, AsyncRetrieveAPIView) {
    static override responseSchema = Item
    override async list () { return [{ id: 1, name: 'a', price: 2 }] }

    @Override({ responses: { 200: { schema: Stats }, 404: { schema: Reason } } })
    override async retrieve () { return null }

    @Get('/gone', { responses: errors(Gone) })
    gone () { return {} }

    @Get('/csv', { responses: { 200: { content: Csv } } })
    csv () { return 'a,b' }
  }
  const router = new ViewRouter({
    prefix: '/r',
    responses: {
      200: { content: { 'application/xml': { schema: Type.String() } } },
      404: { content: { 'application/problem+json': { schema: Type.Object({ router: Type.Boolean() }) } } },
      410: { schema: Reason }
    }
  })
  router.registerView(Levels, { prefix: '/levels' })
  const { app, doc } = await documented({ views: [router, { view: Levels, prefix: '/reg', responses: { 200: { schema: Stats } } }] })
  t.teardown(() => app.close())
  const response = (path: string, status: string) => doc.paths[path].get.responses[status]
  t.same(response('/r/levels', '200').content, { 'application/xml': { schema: { type: 'string' } } }, 'the router content where the route says nothing')
  t.same(response('/r/levels/{id}', '200').content, { 'application/json': { schema: { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } } } },
    'route schema over router content')
  t.same(response('/r/levels/{id}', '404').content, { 'application/problem+json': { schema: { type: 'object', required: ['reason'], properties: { reason: { type: 'string' } } } } },
    'on an error status too')
  t.same(response('/r/levels/gone', '410').content, { 'application/problem+json': { schema: ref('GoneProblem') } }, 'route errors() over a router schema')
  t.same(response('/r/levels/csv', '200').content, { 'text/csv': { schema: { type: 'string' } } }, 'route content over router content')
  t.same(response('/reg/csv', '200').content, { 'text/csv': { schema: { type: 'string' } } }, 'route content over a registration schema')
  t.same(response('/reg', '200').content['application/json'].schema.properties, { count: { type: 'integer' } }, 'the registration schema where the route says nothing')
  t.same((await app.inject('/r/levels')).json(), [{ id: 1, name: 'a', price: 2 }], 'none of it changes what is served')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('header parameters: in header, lower-cased names, required flags', async (t) => {
  class Headed extends APIView {
    @Get('/', { schema: { headers: Type.Object({ 'X-Request-Id': Type.String({ minLength: 8 }), 'x-trace': Type.Optional(Type.String()) }) } })
    get () { return {} }

    @Get('/optional', { schema: { headers: Type.Object({ 'X-Trace': Type.Optional(Type.String()) }) } })
    optional () { return {} }

    @Get('/lower', { schema: { headers: Type.Object({ 'x-api-key': Type.String() }) } })
    lower () { return {} }
  }
  const { app, doc } = await documented({ views: [Headed] })
  t.teardown(() => app.close())
  t.same(doc.paths['/'].get.parameters, [
    { schema: { minLength: 8, type: 'string' }, in: 'header', name: 'x-request-id', required: true },
    { schema: { type: 'string' }, in: 'header', name: 'x-trace', required: false }
  ])
  t.same(doc.paths['/optional'].get.parameters, [{ schema: { type: 'string' }, in: 'header', name: 'x-trace', required: false }])
  t.same(doc.paths['/lower'].get.parameters, [{ schema: { type: 'string' }, in: 'header', name: 'x-api-key', required: true }])
  t.same(Object.keys(doc.paths['/'].get.responses), ['200', '400'], 'validated headers can answer 400')
  t.equal((await app.inject({ url: '/', headers: { 'X-Request-Id': '12345678' } })).statusCode, 200, 'validation is unchanged')
  t.equal((await app.inject({ url: '/', headers: { 'x-request-id': 'short' } })).statusCode, 400)
  t.same(await new Validator().validate(doc), { valid: true })
})

test('SEED 7.2: Throws(NotFound) plus responses: errors(Conflict) documents exactly the success, 400, 404 and 409, and the 413 and 415 of a POST body', async (t) => {
  class Orders extends APIView {
    @Post('/', { schema: { body: ItemIn }, responseSchema: Stats, responses: errors(Conflict) })
    @Throws(NotFound)
    place () { return { count: 1 } }
  }
  const { app, doc } = await documented({ views: [{ view: Orders, prefix: '/orders' }] })
  t.teardown(() => app.close())
  const responses = doc.paths['/orders'].post.responses
  t.same(Object.keys(responses), ['201', '400', '404', '409', '413', '415'])
  t.same([responses['400'], responses['404'], responses['409']].map((r: any) => [r.description, r.content['application/problem+json'].schema]), [
    ['Bad Request', ref('BadRequestProblem')], ['Not Found', ref('NotFoundProblem')], ['Conflict', ref('ConflictProblem')]
  ])
})

test('key by key on a generated error status: a description keeps the generated problem body', async (t) => {
  class Described extends AsyncRetrieveAPIView {
    static override responseSchema = Item
    @Override({ responses: { 404: { description: 'No such item' } } })
    override async retrieve () { return null }
  }
  const { app, doc } = await documented({ views: [{ view: Described, prefix: '/described' }] })
  t.teardown(() => app.close())
  t.same(doc.paths['/described/{id}'].get.responses['404'], {
    description: 'No such item',
    content: { 'application/problem+json': { schema: ref('NotFoundProblem') } }
  })
  const missing = await app.inject('/described/1')
  t.same([missing.statusCode, missing.json().title], [404, 'Not Found'])
})

test('response headers by router and by registration: each route gets its own levels, nothing leaks', async (t) => {
  const A = ResponseHeaders.define({ x_router_a: Type.String() })
  const B = ResponseHeaders.define({ x_router_b: Type.String() })
  const R = ResponseHeaders.define({ x_registration: Type.Integer() })
  class Simple extends mix(AsyncListAPIView, AsyncRetrieveAPIView) {
    static override responseSchema = Item
    override async list () { return [] }
    override async retrieve () { return null }
  }
  const routerA = new ViewRouter({ prefix: '/a', responseHeaders: A })
  routerA.registerView(Simple, { prefix: '/s' })
  routerA.registerView(Simple, { prefix: '/both', responseHeaders: R })
  const routerB = new ViewRouter({ prefix: '/b', responseHeaders: B })
  routerB.registerView(Simple, { prefix: '/s' })
  const { app, doc } = await documented({ views: [routerA, routerB, { view: Simple, prefix: '/plain' }, { view: Simple, prefix: '/reg', responseHeaders: R }] })
  t.teardown(() => app.close())
  const expected: Record<string, string[] | undefined> = {
    '/a/s': ['x-router-a'], '/a/both': ['x-registration', 'x-router-a'], '/b/s': ['x-router-b'], '/plain': undefined, '/reg': ['x-registration']
  }
  for (const [prefix, headers] of Object.entries(expected)) {
    for (const path of [prefix, `${prefix}/{id}`]) {
      const responses = doc.paths[path].get.responses
      t.same(responses['200'].headers === undefined ? undefined : Object.keys(responses['200'].headers).sort(), headers, `${path}: ${String(headers)}`)
      t.equal(responses['404']?.headers, undefined, `${path}: error responses carry no success headers`)
    }
  }
  t.same(doc.paths['/reg'].get.responses['200'].headers['x-registration'], { schema: { type: 'integer' } })
})

test('one app with every kind of view and documented response: a valid document, named components, resolvable refs, unique operationIds', async (t) => {
  // Every kind of view: the names of every entry point.
  const lib = { ...await import('../lib/index.js'), ...await import('../lib/generics.js'), ...await import('../lib/bulk.js'), ...await import('../lib/conditional.js') }
  const {
    asyncRepository,
    BaseFilter,
    PaginationFilter,
    OffsetLimitFilter,
    CursorPaginationFilter,
    ConditionalMixin
  } = lib
  class ByName extends BaseFilter { static override fields = { name: Type.String() } }
  const ItemUpdate = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number() })
  type AnyClass = new (...args: any[]) => any

  /** An action view (or viewset) of its own: every action a mixin may ask for is implemented. */
  const concrete = (Base: unknown): typeof APIView => {
    const cls = class extends (Base as AnyClass) {
      static responseSchema = Item
      static createSchema = ItemIn
      static detailParams = Type.Object({ id: Type.Integer() })
      list () { return [] }
      create () { return null }
      retrieve () { return null }
      update () { return null }
      partialUpdate () { return null }
      destroy () { return null }
      bulkCreate () { return [] }
      bulkUpdate () { return true }
      updateMany () { return [] }
      bulkDelete () { return true }
    }
    return cls as unknown as typeof APIView
  }
  /** A generic view (or viewset) of a family, with a filter. */
  const generic = (Base: unknown, async: boolean, filter: unknown = null): typeof APIView => {
    const cls = class extends (Base as AnyClass) {
      static responseSchema = Item
      static createSchema = ItemIn
      static updateSchema = ItemIn
      static bulkUpdateSchema = ItemUpdate
      static detailParams = Type.Object({ id: Type.Integer() })
      static filter = filter
      static repository = async ? asyncRepository(new StampingRepository()) : new StampingRepository()
    }
    return cls as unknown as typeof APIView
  }

  const entries: Array<{ view: typeof APIView, prefix: string }> = []
  const add = (prefix: string, view: typeof APIView) => entries.push({ view, prefix })
  // Action views and abstract viewsets, both families.
  for (const name of ['ListAPIView', 'CreateAPIView', 'RetrieveAPIView', 'UpdateAPIView', 'PartialUpdateAPIView', 'DestroyAPIView',
    'APIViewSet', 'ReadOnlyAPIViewSet', 'ListCreateAPIView', 'RetrieveUpdateDestroyAPIView',
    'BulkCreateAPIView', 'BulkUpdateAPIView', 'UpdateManyAPIView', 'BulkDestroyAPIView']) {
    for (const family of ['', 'Async']) add(`/abstract/${family}${name}`, concrete((lib as Record<string, unknown>)[family + name]))
  }
  // Generic views of each family: lists without a filter and with each pagination, every single action, the viewsets, bulk.
  const filters: Array<[string, unknown]> = [['none', null], ['pages', PaginationFilter], ['offsets', OffsetLimitFilter], ['cursors', CursorPaginationFilter]]
  for (const [family, async] of [['', false], ['Async', true]] as const) {
    for (const [label, filter] of filters) {
      add(`/generic/${family}list-${label}`, generic((lib as Record<string, unknown>)[`${family}GenericListAPIView`], async, filter))
      add(`/generic/${family}viewset-${label}`, generic((lib as Record<string, unknown>)[`${family}GenericViewSet`], async, filter))
    }
    for (const name of ['CreateAPIView', 'RetrieveAPIView', 'UpdateAPIView', 'PartialUpdateAPIView', 'DestroyAPIView', 'ReadOnlyViewSet', 'ListCreateAPIView', 'RetrieveUpdateDestroyAPIView',
      'BulkCreateAPIView', 'BulkUpdateAPIView', 'UpdateManyAPIView', 'BulkDestroyAPIView']) {
      add(`/generic/${family}${name}`, generic((lib as Record<string, unknown>)[`${family}Generic${name}`], async, ByName))
    }
    add(`/generic/${family}BulkAPIViewSet`, generic((lib as Record<string, unknown>)[`${family}BulkAPIViewSet`], async, ByName))
    add(`/generic/${family}bulk-and-crud`, generic(mix((lib as any)[`${family}BulkAPIViewSet`], (lib as any)[`${family}GenericViewSet`]), async, ByName))
  }
  // Conditional views, empty bodies, Location, response headers, Throws and errors().
  add('/conditional/etag', class extends generic(mix(ConditionalMixin, lib.AsyncGenericViewSet), true) {
    static conditional = { etag: true, lastModifiedField: 'updated_at' }
    // A modification time the response shows: Last-Modified is stamped from it.
    static override responseSchema = Type.Object({ ...Item.properties, updated_at: Type.String({ format: 'date-time' }) })
  })
  add('/conditional/hand-rolled', class extends concrete(mix(ConditionalMixin, lib.ReadOnlyAPIViewSet)) {
    static conditional = { requests: true }
  })
  add('/empty', class extends generic(lib.GenericViewSet, false) {
    static returnOnCreate = false
    static returnOnUpdate = false
  })
  add('/located', class extends concrete(lib.AsyncAPIViewSet) {
    getLocation (item: { id: number }) { return `/located/${item.id}` }
  })
  add('/headers', class extends concrete(lib.AsyncReadOnlyAPIViewSet) {
    static override errors = [Forbidden]
    static override getResponseHeaders () { return Paging }
    @Get('/thrown', { responses: errors(Conflict, Gone), responseHeaders: RateLimit })
    @Throws(NotFound, ArchivedNotFound)
    thrown () { return {} }
  })
  const router = new ViewRouter({ prefix: '/routed', responseHeaders: RateLimit, tags: ['routed'] })
  router.registerView(entries[0].view, { prefix: '/list' })
  const { app, doc } = await documented({ views: [...entries, router, ...everything().views!] })
  t.teardown(() => app.close())

  const result = await new Validator().validate(doc)
  t.same(result, { valid: true }, JSON.stringify(result.errors ?? []).slice(0, 2000))
  const text = JSON.stringify(doc)
  t.notMatch(text, /def-\d/, 'no def-N component names')
  t.notMatch(Object.keys(doc.components.schemas).join(' '), /def-/)
  const refs = [...text.matchAll(/"\$ref":"([^"]+)"/g)].map((match) => match[1])
  t.ok(refs.length > 0)
  for (const target of new Set(refs)) {
    t.match(target, /^#\/components\/schemas\//, `${target} is local`)
    t.ok(doc.components.schemas[target.slice('#/components/schemas/'.length)], `${target} resolves`)
  }
  const operations = Object.values(doc.paths).flatMap<{ operationId: string, responses: object }>(
    (methods: any) => Object.values(methods)
  )
  const ids = operations.map((operation) => operation.operationId)
  t.equal(new Set(ids).size, ids.length, 'every operationId is unique')
  t.ok(ids.every((id) => typeof id === 'string' && id !== ''), 'and present')
  // Every kind is there: a sample of what each contributed.
  t.ok(doc.paths['/abstract/AsyncBulkCreateAPIView/bulk'].post)
  t.ok(doc.paths['/abstract/BulkDestroyAPIView/bulk'].delete)
  t.same(doc.paths['/generic/AsyncBulkAPIViewSet/bulk'] && Object.keys(doc.paths['/generic/AsyncBulkAPIViewSet/bulk']).sort(), ['delete', 'patch', 'post', 'put'])
  t.same(doc.paths['/generic/list-pages'].get.responses['200'].content['application/json'].schema, ref('ItemNumberedPage'))
  t.same(doc.paths['/generic/Asynclist-offsets'].get.responses['200'].content['application/json'].schema, ref('ItemOffsetPage'))
  t.same(doc.paths['/generic/viewset-cursors'].get.responses['200'].content['application/json'].schema, ref('ItemCursorPage'))
  t.same(doc.paths['/generic/list-none'].get.responses['200'].content['application/json'].schema, { type: 'array', items: ref('Item') })
  t.ok(doc.paths['/conditional/etag/{id}'].get.responses['304'])
  t.ok(doc.paths['/conditional/hand-rolled/{id}'].get.responses['304'])
  t.same(doc.paths['/empty'].post.responses['201'], { description: 'Created' })
  t.same(doc.paths['/empty/{id}'].put.responses['200'], { description: 'OK' })
  t.same(doc.paths['/located'].post.responses['201'].headers, { location: LOCATION })
  t.same(Object.keys(doc.paths['/headers/thrown'].get.responses), ['200', '403', '404', '409', '410'])
  t.same(Object.keys(doc.paths['/headers/thrown'].get.responses['200'].headers).sort(), ['x-rate-limit-remaining', 'x-total-count'])
  t.same(doc.paths['/routed/list'].get.tags, ['routed'])
})

test('every problem schema has one shape: an integer status and a uri-reference type (RFC 9457 section 3.1)', async (t) => {
  const { buildApp } = await import('../examples/app.js')
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', logger: false })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as {
    components: { schemas: Record<string, { properties?: Record<string, { type?: string, format?: string }> }> }
  }
  const problems = Object.entries(doc.components.schemas).filter(([name]) => name.endsWith('Problem'))
  t.ok(problems.length > 3, 'the example documents several problem classes')
  for (const [name, schema] of problems) {
    t.equal(schema.properties?.status?.type, 'integer', `${name}.status is an integer`)
    t.equal(schema.properties?.type?.format, 'uri-reference', `${name}.type is a URI reference`)
  }
})

test('the document reads as views declare: paths and methods in action order, tags with descriptions, described operations, sample problems', async (t) => {
  const { buildApp } = await import('../examples/app.js')
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  t.same(Object.keys(doc.paths), ['/items', '/items/{id}', '/items/bulk', '/items/events', '/health'], 'list and create, detail, bulk, the event stream; the next view after')
  t.same(Object.keys(doc.paths['/items/{id}']), ['get', 'put', 'patch', 'delete'])
  t.same(Object.keys(doc.paths['/items/bulk']), ['post', 'put', 'patch', 'delete'])
  t.same(doc.tags.map((tag: { name: string }) => tag.name), ['Items', 'Health'])
  t.match(doc.tags[0].description, /^The shop's items/, 'a view\'s apiDescription describes its tag')
  t.equal(doc.paths['/items/{id}'].get.description, 'Returns the Item the path names; 404 when there is none.')
  t.equal(doc.paths['/items'].get.description, 'Returns the Items.')
  t.match(doc.paths['/items/bulk'].post.description, /all or nothing/)
  t.equal(doc.paths['/health'].get.description, 'Answers 200 while the process serves requests.', 'a route\'s own description')
  t.same(doc.components.schemas.NotFoundProblem.examples[0], { type: 'about:blank', title: 'Not Found', status: 404, detail: 'The resource does not exist.', instance: '/items/1' })
  t.ok(doc.components.schemas.BadRequestProblem.examples[0].errors.length > 0, 'a validation problem sample lists an invalid value')
  t.same(doc.components.schemas.Item.examples[0].name, 'Desk lamp', 'schema examples reach the document')
  t.same(await new Validator().validate(doc), { valid: true })
})

test('paths of routes that are not views keep their place after the views; tags the document declares come first', async (t) => {
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' }, tags: [{ name: 'Ops', description: 'Operations.' }] }))
  app.get('/ping', { schema: { tags: ['Ops'] } }, async () => 'pong')
  class Items extends AsyncCreateAPIView {
    static override responseSchema = Item
    static override createSchema = ItemIn
    override async create () { return { id: 1, name: 'a', price: 1 } }
  }
  class Reports extends APIView {
    @Get('/:id/history') history () { return {} }
    @Get('/') list () { return [] }
  }
  await app.register(views, { views: [{ view: Reports, prefix: '/reports' }, { view: Items, prefix: '/items' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  t.same(Object.keys(doc.paths), ['/reports', '/reports/{id}/history', '/items', '/ping'], 'views in registration order, a custom list first, then routes of the app')
  t.same(doc.tags, [{ name: 'Ops', description: 'Operations.' }, { name: 'Reports' }, { name: 'Items' }])
  t.equal(doc.paths['/items'].post.description, 'Creates one Item from the request body.')
})

test('default errors on a route that validates nothing: every class but a 400 (BadRequest or a subclass) is documented', async (t) => {
  const { Unauthorized, BadRequest } = await import('../lib/errors.js')
  class Malformed extends BadRequest {}
  class Status extends APIView {
    static override defaultErrors = [Malformed, Unauthorized]
    @Get('/') status () { return { ok: true } }
    @Get('/:id', { schema: { params: Type.Object({ id: Type.Integer() }) } }) one () { return { ok: true } }
  }
  const { app, doc } = await documented({ views: [{ view: Status, prefix: '/status' }] })
  t.teardown(() => app.close())
  t.same(Object.keys(doc.paths['/status'].get.responses), ['200', '401'], 'no input: the 401 stays, the 400 subclass goes')
  t.same(Object.keys(doc.paths['/status/{id}'].get.responses), ['200', '400', '401', '414'], 'a validated path: both')
})
