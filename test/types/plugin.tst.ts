import Fastify, { type FastifyReply, type FastifyRequest } from 'fastify'
import { Type } from '@sinclair/typebox'
import { describe, expect, test } from 'tstyche'
import { APIView, configureApp, Get, registerView, View, views, ViewRouter } from '../../lib/index.js'
import type { FastifyViewsOptions, ViewClass, ViewEntry, ViewRequest } from '../../lib/types.js'
import { ErrorFormat, problemFormat } from '../../lib/errors.js'
import { IdParams, Item } from './schemas.js'

class Items extends APIView {
  static override responseSchema = Item

  @Get('/:id', { schema: { params: IdParams }, responseSchema: Item })
  retrieve (request: ViewRequest<{ params: typeof IdParams }>) { return { id: request.params.id, name: 'a' } }
}

class Health extends View {
  // Spelled out: a view with its own constructor of this signature is still a view class.
  // eslint-disable-next-line @typescript-eslint/no-useless-constructor
  constructor (request: FastifyRequest, reply: FastifyReply) {
    super(request, reply)
  }

  @Get('/health')
  check () { return { ok: true } }
}

abstract class Base extends APIView {}

class NotAView {
  static detailRoute = '/:id'
}

const app = Fastify()
const router = new ViewRouter({ prefix: '/api', tags: ['api'] }).registerView(Items, { prefix: '/items' })

describe('plugin options', () => {
  test('views take View classes, { view, prefix, ...route options } entries and routers', () => {
    expect(app.register).type.toBeCallableWith(views, { views: [Items, { view: Items, prefix: '/x', tags: ['a'] }] })
    expect(app.register).type.toBeCallableWith(views, { views: [Health, router], configureApp: false })
    expect(app.register).type.toBeCallableWith(views, {
      views: [{ view: Items, prefix: '/items', summary: 'Items', deprecated: true, dependencies: [async () => {}], responses: { 404: { description: 'Gone' } } }]
    })
    expect(app.register).type.toBeCallableWith(views, {})
    expect(app.register).type.toBeCallableWith(views)
    expect<[typeof Items, typeof Health]>().type.toBeAssignableTo<ViewClass[]>()
    // `ViewClass` is `(abstract new (...) => V) & typeof View`: the concrete constructor of
    // `typeof View` wins, so an abstract base view cannot be registered by mistake.
    expect<typeof Base>().type.not.toBeAssignableTo<ViewClass>()
    expect(app.register).type.not.toBeCallableWith(views, { views: [Base] })
  })

  test('anything else in views is a compile error', () => {
    expect(app.register).type.not.toBeCallableWith(views, { views: [123] })
    expect(app.register).type.not.toBeCallableWith(views, { views: ['Items'] })
    expect(app.register).type.not.toBeCallableWith(views, { views: [NotAView] })
    expect(app.register).type.not.toBeCallableWith(views, { views: [class {}] })
    expect(app.register).type.not.toBeCallableWith(
      views,
      { views: [new Items({} as FastifyRequest, {} as FastifyReply)] }
    )
    expect(app.register).type.not.toBeCallableWith(views, { views: Items })
    expect(app.register).type.not.toBeCallableWith(views, { views: [{ prefix: '/x' }] })
    expect(app.register).type.not.toBeCallableWith(views, { views: [{ view: NotAView }] })
  })

  test('entry options are checked like route options', () => {
    expect(app.register).type.not.toBeCallableWith(views, { views: [{ view: Items, prefx: '/x' }] })
    expect(app.register).type.not.toBeCallableWith(views, { views: [{ view: Items, tags: 'a' }] })
    // Per-route schemas belong on the decorators, not on a registration.
    expect(app.register).type.not.toBeCallableWith(views, { views: [{ view: Items, schema: { params: IdParams } }] })
    expect(app.register).type.not.toBeCallableWith(views, { configureApp: 'yes' })
    expect(app.register).type.not.toBeCallableWith(views, { view: [Items] })
  })

  test('the options types', () => {
    expect<{ views: [typeof Items, ViewRouter] }>().type.toBeAssignableTo<FastifyViewsOptions>()
    expect<{ view: typeof Items, prefix: string, tags: string[] }>().type.toBeAssignableTo<ViewEntry>()
    expect<{ view: number }>().type.not.toBeAssignableTo<ViewEntry>()
  })
})

describe('registerView and ViewRouter', () => {
  test('registerView takes an app, a view class and registration options', () => {
    expect(registerView).type.toBeCallableWith(app, Items)
    expect(registerView).type.toBeCallableWith(app, Items, { prefix: '/items', tags: ['items'] })
    expect(registerView).type.not.toBeCallableWith(app, NotAView)
    expect(registerView).type.not.toBeCallableWith(app, Items, { prefix: 1 })
  })

  test('ViewRouter takes a prefix and shared route options', () => {
    expect(ViewRouter).type.toBeConstructableWith({ prefix: '/api', tags: ['api'], security: [{ bearer: [] }] })
    expect(ViewRouter).type.not.toBeConstructableWith({ prefix: '/api', tag: 'api' })
    expect(router.registerView).type.toBeCallableWith(Health, { prefix: '/health', hide: true })
    expect(router.registerView).type.not.toBeCallableWith(NotAView)
    expect(router.registerView(Health)).type.toBe<ViewRouter>()
  })
})

describe('error formats', () => {
  test('a format\'s body is typed by its schema', () => {
    const Errors = Type.Object({ errors: Type.Object({ body: Type.Array(Type.String()) }) })
    expect(
      new ErrorFormat(
        { validationStatus: 422, schema: Errors, body: (problem) => ({ errors: { body: [problem.detail] } }) }
      )
    ).type.not.toRaiseError()
    expect(
      new ErrorFormat({ schema: Errors, body: (problem) => ({ errors: { body: problem.detail } }) })
    ).type.toRaiseError(2322)
    expect(
      new ErrorFormat({ validationStatus: 418, schema: Errors, body: () => ({ errors: { body: [] } }) })
    ).type.toRaiseError(2322)
  })

  test('declared on configureApp, the plugin, a router and a registration', () => {
    const format = problemFormat({ validationStatus: 422 })
    expect(configureApp(Fastify(), { errorFormat: format })).type.not.toRaiseError()
    expect({ errorFormat: format, views: [new ViewRouter({ errorFormat: format }), { view: Items, prefix: '/items', errorFormat: format }] }).type.toBeAssignableTo<FastifyViewsOptions>()
    expect(configureApp(Fastify(), { errorFormat: 'problem' })).type.toRaiseError(2322)
  })
})
