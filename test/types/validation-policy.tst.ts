import Fastify from 'fastify'
import { describe, expect, test } from 'tstyche'
import { APIView, Get, registerView, views, ViewRouter } from '../../lib/index.js'
import type { ValidationPolicy } from '../../lib/types.js'

class Items extends APIView {
  @Get('/') list () { return [] }
}

const app = Fastify()

describe('the validation policy', () => {
  test('the plugin, a router and a registration entry take it', () => {
    expect(app.register).type.toBeCallableWith(views, { validation: { useDefaults: false }, views: [{ view: Items, prefix: '/i', validation: { unknownProperties: 'strip' } }] })
    expect(ViewRouter).type.toBeConstructableWith({ prefix: '/api', validation: { unknownProperties: 'refuse', useDefaults: true } })
    expect(new ViewRouter().registerView).type.toBeCallableWith(Items, { prefix: '/i', validation: {} })
    expect(new ViewRouter().register).type.toBeCallableWith(app, { useDefaults: false })
    expect(registerView).type.toBeCallableWith(app, Items, { prefix: '/i', validation: { useDefaults: true } })
    expect<ValidationPolicy>().type.toBe<{ useDefaults?: boolean, unknownProperties?: 'refuse' | 'strip' }>()
  })

  test('an option it does not have, or a value it does not take, is a compile error', () => {
    expect(app.register).type.not.toBeCallableWith(views, { validation: { unknownProperties: 'remove' } })
    expect(app.register).type.not.toBeCallableWith(views, { validation: { useDefaults: 'yes' } })
    expect(app.register).type.not.toBeCallableWith(views, { validation: { removeAdditional: true } })
    expect(registerView).type.not.toBeCallableWith(app, Items, { validation: { strip: true } })
  })
})
