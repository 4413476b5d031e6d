import type { Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import type { ViewRequest } from '../../lib/index.js'
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
