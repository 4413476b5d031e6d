import { Type, type Static, type TOptional } from '@sinclair/typebox'
import { Type as Type1 } from 'typebox'
import type { FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import { APIView, Post } from '../../lib/index.js'
import type { SharedRouteOptions, ViewRequest } from '../../lib/types.js'
import { IdParams, ItemBody, ListQuery, TokenHeaders } from './schemas.js'

type Full = ViewRequest<{
  params: typeof IdParams,
  querystring: typeof ListQuery,
  body: typeof ItemBody,
  headers: typeof TokenHeaders
}>
declare const req: Full

describe('ViewRequest<{ params, querystring, body, headers }>', () => {
  test('params are the Static type of the params schema', () => {
    expect(req.params).type.toBe<{ id: number }>()
    expect(req.params.id).type.toBe<number>()
    expect(req.params).type.toBe<Static<typeof IdParams>>()
  })

  test('the query string is typed, optional fields stay optional', () => {
    expect(req.query).type.toBe<{ page: number, search?: string }>()
    expect(req.query.page).type.toBe<number>()
    expect(req.query.search).type.toBe<string | undefined>()
    expect(req.query).type.not.toHaveProperty('missing')
  })

  test('the body is typed, optional fields stay optional', () => {
    expect(req.body).type.toBe<{ name: string, price: number, tags?: string[] }>()
    expect(req.body.tags).type.toBe<string[] | undefined>()
    expect<{ name: string, price: number }>().type.toBeAssignableTo<typeof req.body>()
    expect<{ name: string }>().type.not.toBeAssignableTo<typeof req.body>()
  })

  test('declared headers are typed on top of the raw headers', () => {
    expect(req.headers['x-token']).type.toBe<string>()
    expect(req.headers['x-trace']).type.toBe<string | undefined>()
    // The raw Node headers are still there.
    expect(req.headers['content-type']).type.toBe<string | undefined>()
  })

  test('parts without a schema are unknown', () => {
    const bare = {} as ViewRequest<{ params: typeof IdParams }>
    expect(bare.params.id).type.toBe<number>()
    expect(bare.query).type.toBe<unknown>()
    expect(bare.body).type.toBe<unknown>()
  })

  test('a ViewRequest is a FastifyRequest', () => {
    expect<Full>().type.toBeAssignableTo<FastifyRequest>()
    expect<ViewRequest>().type.toBeAssignableTo<FastifyRequest>()
  })
})

describe('an optional body: Type.Optional(Body) is the body or nothing', () => {
  test('ViewRequest types it as the body or undefined, from either TypeBox line', () => {
    const optional = {} as ViewRequest<{ body: TOptional<typeof ItemBody> }>
    expect(optional.body).type.toBe<{ name: string, price: number, tags?: string[] } | undefined>()
    const Reason = Type1.Optional(Type1.Object({ reason: Type1.String() }))
    const optional1 = {} as ViewRequest<{ body: typeof Reason }>
    expect(optional1.body).type.toBe<{ reason: string } | undefined>()
    expect(req.body).type.not.toBe<undefined>()
  })

  test('a handler of a route with an optional body must allow for none', () => {
    const Follow = Type.Optional(ItemBody)
    class Profiles extends APIView {
      @(expect(Post('/follow', { schema: { body: Follow }, responseSchema: Type.Object({ name: Type.String() }) })).type.toBeApplicable)
      follow (request: ViewRequest<{ body: typeof Follow }>) { return { name: request.body?.name ?? 'nobody' } }

      @(expect(Post('/follow', { schema: { body: Follow }, responseSchema: Type.Object({ name: Type.String() }) })).type.not.toBeApplicable)
      assumes (request: ViewRequest<{ body: typeof ItemBody }>) { return { name: request.body.name } }
    }
    void Profiles
  })
})

describe('unexpectedContent is \'ignore\' or \'refuse\'', () => {
  test('a route option of decorators, registration entries and routers', () => {
    class Tools extends APIView {
      @(expect(Post('/ping', { unexpectedContent: 'refuse' })).type.toBeApplicable)
      ping () { return undefined }
    }
    expect(Post).type.not.toBeCallableWith('/ping', { unexpectedContent: 'reject' })
    expect<{ unexpectedContent: 'ignore' }>().type.toBeAssignableTo<SharedRouteOptions>()
    expect<{ unexpectedContent: 'reject' }>().type.not.toBeAssignableTo<SharedRouteOptions>()
    void Tools
  })
})
