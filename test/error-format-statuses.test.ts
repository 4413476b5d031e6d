import { test, type Test } from 'tap'
import Fastify, { type FastifyInstance } from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import { Validator } from '@seriousme/openapi-schema-validator'
import views, { APIView, Get, Throws, configureApp, mix } from '../lib/index.js'
import {
  APIError, Conflict, ErrorFormat, NotFound, PROBLEM_CONTENT_TYPE, problemFormat, type ConfigurationError, type Problem
} from '../lib/errors.js'
import { AsyncGenericViewSet, MemoryRepository, asyncRepository } from '../lib/generics.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { caught } from './helpers.js'
import { buildApp as buildConduit } from '../examples/error-format/app.js'

// An error format maps statuses as well as bodies: `statuses: { 409: 422 }` answers a conflict
// with 422, on the wire and in the document.

const Tag = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'Tag' })
const TagIn = Type.Object({ name: Type.String({ minLength: 1 }) })

class SoldOut extends APIError {
  static override status = 409
  static override type = 'https://example.com/problems/sold-out'
  static override title = 'Sold out'
  static override defaultDetail = 'Nothing left.'
}

class Shop extends APIView {
  @Get('/sold-out')
  @Throws(SoldOut)
  soldOut (): never { throw new SoldOut() }

  @Get('/gone')
  @Throws(NotFound)
  gone (): never { throw new NotFound('No such thing.') }
}

const Tags = mix(AsyncGenericViewSet).with({
  responseSchema: Tag,
  createSchema: TagIn,
  detailParams: Type.Object({ id: Type.Integer({ minimum: 1 }) }),
  repository: asyncRepository(new MemoryRepository<Static<typeof Tag>>({ unique: ['name'] }))
})

async function shop (t: Test, format: ErrorFormat): Promise<FastifyInstance> {
  const app = Fastify()
  configureApp(app, { errorFormat: format })
  await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Tags, prefix: '/tags' }, { view: Shop, prefix: '' }] })
  await app.ready()
  t.teardown(() => app.close())
  return app
}

test('problem+json with { 409: 422 }: a conflict is a 422 with its title, a typed problem keeps its own, others unchanged', async (t) => {
  const app = await shop(t, problemFormat({ statuses: { 409: 422 } }))
  t.equal((await app.inject({ method: 'POST', url: '/tags', payload: { name: 'a' } })).statusCode, 201)
  const again = await app.inject({ method: 'POST', url: '/tags', payload: { name: 'a' } })
  t.equal(again.statusCode, 422)
  t.match(again.headers['content-type'], /^application\/problem\+json/)
  t.match(again.json(), { type: 'about:blank', title: 'Unprocessable Entity', status: 422, instance: '/tags' }, 'status member and title follow the status sent')
  t.match((await app.inject('/sold-out')).json(), { type: 'https://example.com/problems/sold-out', title: 'Sold out', status: 422 })
  t.equal((await app.inject({ method: 'POST', url: '/tags', payload: { name: '' } })).statusCode, 400, 'a validation failure stays 400')
  t.equal((await app.inject('/tags/9')).statusCode, 404, 'an unmapped status stays')
  t.equal((await app.inject('/nowhere')).statusCode, 404)
})

test('the document lists the status sent: no 409, the conflict documented at 422 beside what was there', async (t) => {
  const app = await shop(t, problemFormat({ statuses: { 409: 422 }, validationStatus: 422 }))
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  for (const [path, item] of Object.entries<Record<string, { responses: Record<string, unknown> }>>(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) t.notOk(operation.responses['409'], `${method} ${path}: no 409`)
  }
  const post = doc.paths['/tags'].post.responses
  t.same(Object.keys(post).sort(), ['201', '400', '413', '415', '422'])
  t.equal(post['422'].description, 'Unprocessable Entity')
  // The 422 holds a validation failure and a conflict: the generic problem, not one class's fixed status.
  t.same(post['422'].content[PROBLEM_CONTENT_TYPE].schema, { $ref: '#/components/schemas/Problem' })
  t.same(Object.keys(doc.paths['/sold-out'].get.responses).sort(), ['200', '422'])
  t.same(doc.paths['/gone'].get.responses['404'].content[PROBLEM_CONTENT_TYPE].schema, { $ref: '#/components/schemas/NotFoundProblem' }, 'an unmapped class keeps its own schema')
  const result = await new Validator().validate(doc)
  t.same(result, { valid: true }, JSON.stringify(result.errors ?? []).slice(0, 2000))
})

test('a custom format\'s body schema is asked for the status sent, with the classes answered there', async (t) => {
  const asked: Array<[string[], number]> = []
  const format = new ErrorFormat({
    statuses: { 409: 422, 404: 410 },
    body: (problem: Problem) => ({ message: problem.detail, code: problem.status }),
    schema: (errors, status) => {
      asked.push([errors.map((cls) => cls.name), status])
      return Type.Object({ message: Type.String(), code: Type.Literal(status) })
    }
  })
  const app = await shop(t, format)
  t.same((await app.inject('/gone')).json(), { message: 'No such thing.', code: 410 })
  t.equal((await app.inject('/gone')).statusCode, 410)
  t.same((await app.inject('/nowhere')).statusCode, 410, 'the format\'s own 404 is mapped too')
  const doc = JSON.parse(JSON.stringify(app.swagger()))
  t.same(Object.keys(doc.paths['/gone'].get.responses).sort(), ['200', '410'])
  t.equal(doc.paths['/gone'].get.responses['410'].description, 'Gone')
  t.ok(asked.some(([names, status]) => status === 422 && names.includes('SoldOut')), 'asked for 422 with SoldOut')
  t.notOk(asked.some(([, status]) => status === 409 || status === 404), 'never for a status that is not sent')
})

test('a 405 mapped to 404 for an API that does not reveal its methods; Allow is still sent', async (t) => {
  const app = await shop(t, problemFormat({ statuses: { 405: 404 } }))
  const res = await app.inject({ method: 'DELETE', url: '/sold-out' })
  t.equal(res.statusCode, 404)
  t.match(res.json(), { status: 404, title: 'Not Found' })
  t.equal((await app.inject({ method: 'OPTIONS', url: '/sold-out' })).statusCode, 204, 'OPTIONS is no error')
})

test('the statuses of the error-format example: a title taken twice is a 422, as its convention has it', async (t) => {
  const app = await buildConduit()
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'POST', url: '/articles', payload: { title: 'Welcome', body: 'Hi' } })).statusCode, 201)
  const again = await app.inject({ method: 'POST', url: '/articles', payload: { title: 'Welcome', body: 'Again' } })
  t.equal(again.statusCode, 422)
  t.same(again.json(), { errors: { body: ['The request conflicts with the current state of the resource.'] } })
  t.notOk(app.swagger().paths?.['/articles']?.post?.responses?.['409' as never], 'no 409 documented')
})

test('statuses must map error statuses to error statuses', async (t) => {
  const body = (problem: Problem): Problem => problem
  for (const statuses of [{ 200: 400 }, { 409: 302 }, { 409: 422.5 }, { 409: '422' }, { 600: 400 }, { 399: 400 }, { abc: 400 }]) {
    const error = await caught(() => new ErrorFormat({ statuses: statuses as never, body, schema: Type.Unknown() }))
    t.equal((error as ConfigurationError).code, 'FV_ERR_ERROR_FORMAT', JSON.stringify(statuses))
    t.match((error as Error).message, /statuses map error statuses to error statuses \(400 to 599\)/)
  }
  t.same([...problemFormat({ statuses: { 409: 422, 503: 500 } }).statuses], [[409, 422], [503, 500]])
  t.equal(problemFormat().statuses.size, 0)
  t.equal(problemFormat({ statuses: { 409: 422 } }).statusOf(409), 422)
  t.equal(problemFormat({ statuses: { 409: 422 } }).statusOf(404), 404)
  t.equal(Conflict.status, 409, 'the classes keep their own status')
})

test('a status mapped onto one documented before it, and entries documented by hand without classes', async (t) => {
  class Hand extends APIView {
    // 409 by hand (a description only), and 400 by hand beside the validation failure mapped onto it.
    @Get('/hand', { schema: { querystring: Type.Object({ n: Type.Integer() }) }, responses: { 409: { description: 'Taken' }, 400: { description: 'Bad' }, 410: { description: 'Gone for good' } } })
    hand () { return {} }
  }
  const app = Fastify()
  configureApp(app, { errorFormat: problemFormat({ validationStatus: 422, statuses: { 422: 400, 409: 410 } }) })
  await app.register(swagger, swaggerOptions({ info: { title: 'Shop', version: '1.0.0' } }))
  await app.register(views, { views: [{ view: Hand, prefix: '' }] })
  await app.ready()
  t.teardown(() => app.close())
  const responses = JSON.parse(JSON.stringify(app.swagger())).paths['/hand'].get.responses
  t.same(Object.keys(responses).sort(), ['200', '400', '410'], 'the 422 joins the 400 documented before it; the 409 is a 410')
  t.equal(responses['400'].description, 'Bad', 'the entry at the status keeps its own description')
  t.equal(responses['410'].description, 'Gone for good', 'an entry at the status the 409 maps to keeps its own description')
  t.equal((await app.inject('/hand?n=x')).statusCode, 400, 'a validation failure: 422, then mapped to 400')
})
