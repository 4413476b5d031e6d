import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply } from 'fastify'
import Fastify from 'fastify'
import { APIView, Get, Post, Override, Throws, CatchDefined, Catch, ResponseHeaders, NotFound, views, View, type ViewRequest } from '../../lib/index.js'

const P = Type.Object({ id: Type.Integer() })
const SP = Type.Object({ id: Type.String() })
const Q = Type.Object({ q: Type.Optional(Type.String()), page: Type.Integer() })
const B = Type.Object({ name: Type.String(), tags: Type.Optional(Type.Array(Type.String())) })
const H = Type.Object({ 'x-token': Type.String() })
const Item = Type.Object({ id: Type.Integer(), name: Type.String() })

declare const req: ViewRequest<{ params: typeof P, querystring: typeof Q, body: typeof B, headers: typeof H }>
const a: number = req.params.id
const b: string | undefined = req.query.q
const c: string = req.headers['x-token']
const d: string[] | undefined = req.body.tags
type Tok = typeof req.headers['x-token']
type Params = typeof req.params
export type { Tok, Params }

export class Items extends APIView {
  static override responseSchema = Item
  static override raises = [[RangeError, 'bad']]

  @Get('/:id', { schema: { params: P }, responseSchema: Item })
  ok (r: ViewRequest<{ params: typeof P }>): Static<typeof Item> { return { id: r.params.id, name: 'x' } }

  @Get('/:id', { schema: { params: P }, responseSchema: Item })
  bad1 () { return { id: 'x' } }

  @Get('/:id', { schema: { params: P }, responseSchema: Item })
  async bad2 () { return { wrong: 1 } }

  @Get('/:id', { schema: { params: P } })
  bad3 (_r: ViewRequest<{ params: typeof SP }>) { return null }

  @Get('/:id', { schema: { params: P, tags: ['x'] } })
  gap1 () { return null }

  @Get('/:id', { schema: { tags: ['x'] } })
  gap2 () { return null }

  @Get('/:id')
  static bad4 () { return null }

  @Get('/:id')
  #priv () { return null }

  @Post('/', { schema: { body: B }, responseSchema: Item })
  create (r: ViewRequest<{ body: typeof B }>) { return { id: 1, name: r.body.name, extra: true } }

  @Override({ summary: 'x' }) @Throws(NotFound) @CatchDefined @Catch(RangeError, { status: 400 })
  list () { return [] }
}

declare const reply: FastifyReply
const PH = ResponseHeaders.define({ x_total_count: Type.Integer() })
PH.apply(reply, { x_total_count: 'nope' })
class PH2 extends ResponseHeaders.define({ x_total_count: Type.Integer() }) {}
PH2.apply(reply, { x_total_count: 'nope' })
PH2.apply(reply, { unknown_field: 1 })

const app = Fastify()
app.register(views, { views: [Items, { view: Items, prefix: '/x', tags: ['a'] }] })
app.register(views, { views: [123] })
app.register(views, { views: [class Foo {}] })
app.register(views, { views: [View] })
export { a, b, c, d }
