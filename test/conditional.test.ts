import { test } from 'tap'
import net from 'node:net'
import { Type, type Static, type TSchema } from '@sinclair/typebox'
import Fastify, { type FastifyInstance, type FastifyRequest, type InjectOptions } from 'fastify'
import { APIView, Get, Override, Post, Route, mix } from '../lib/index.js'
import type { ViewRequest } from '../lib/types.js'
import {
  AsyncGenericViewSet, GenericDestroyAPIView, GenericRetrieveAPIView, GenericViewSet, MemoryRepository, asyncRepository
} from '../lib/generics.js'
import { ConditionalMixin, etagOf, failsPrecondition, isNotModified, type ConditionalMembers } from '../lib/conditional.js'
import views from '../lib/index.js'
import { parseEntityTags, parseHttpDate, strongMatch, weakMatch, httpDate } from '../lib/http/preconditions.js'
import { StampingRepository, build, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), updated_at: Type.String({ format: 'date-time' }) }, { $id: 'Item' })
const IdParams = Type.Object({ id: Type.Integer() })
type ItemT = Static<typeof Item>
const MODIFIED = '2026-01-01T10:00:00.500Z' // milliseconds on the server side
const LAST_MODIFIED = 'Thu, 01 Jan 2026 10:00:00 GMT'

const families = [
  { name: 'async', ViewSet: AsyncGenericViewSet, wrap: (r: MemoryRepository<ItemT>) => asyncRepository<ItemT, MemoryRepository<ItemT>>(r) },
  { name: 'sync', ViewSet: GenericViewSet, wrap: (r: MemoryRepository<ItemT>) => r }
] as const

/** Counts the generic actions that reach the store, and moves `updated_at` as a database trigger would. */
class CountingRepository extends MemoryRepository<ItemT> {
  readonly ran: string[] = []
  override create (values: Record<string, unknown>, options: Record<string, unknown> = {}) {
    return super.create({ ...values, updated_at: new Date().toISOString() }, options)
  }

  override update (
    criteria: Record<string, unknown>,
    values: Record<string, unknown>,
    options: Record<string, unknown> = {}
  ) {
    this.ran.push('update')
    return super.update(criteria, { ...values, updated_at: new Date().toISOString() }, options)
  }

  override delete (criteria: Record<string, unknown>, options: Record<string, unknown> = {}) {
    this.ran.push('destroy')
    return super.delete(criteria, options)
  }
}

async function appFor (family: (typeof families)[number]) {
  const repo = new CountingRepository({ rows: [{ id: 1, name: 'lamp', updated_at: MODIFIED }] })
  // The family's own generic update, partial update and destroy run the unsafe rows.
  class Items extends (mix(ConditionalMixin, family.ViewSet) as unknown as typeof APIView) {
    static override responseSchema = Item
    static createSchema = Type.Object({ name: Type.String() })
    static detailParams = IdParams
    static conditional = { etag: true, lastModifiedField: 'updated_at' }
    static repository = family.wrap(repo)

    @Get('/:id/dated', { schema: { params: IdParams } })
    dated (request: FastifyRequest<{ Params: { id: number } }>) {
      const item = repo.get({ id: request.params.id }, {})!
      return (this as unknown as ConditionalMembers).checkLastModified(item.updated_at) ?? item
    }

    @Get('/:id/adated', { schema: { params: IdParams } })
    async adated (request: FastifyRequest<{ Params: { id: number } }>) {
      const item = (await asyncRepository<ItemT, MemoryRepository<ItemT>>(repo).get({ id: request.params.id }, {}))!
      return (this as unknown as ConditionalMembers).checkLastModified(item.updated_at) ?? item
    }

    @Get('/:id/tagged', { schema: { params: IdParams } })
    tagged () {
      return (this as unknown as ConditionalMembers).checkEtag('W/"v1"') ?? { weak: true }
    }

    @Get('/:id/cached', { schema: { params: IdParams } })
    cached () {
      this.reply.header('cache-control', 'max-age=60').header('vary', 'accept').header('expires', 'Thu, 01 Jan 2026 11:00:00 GMT')
      return repo.get({ id: 1 }, {})
    }

    @Get('/boom')
    boom (): never { throw new Error('down') }

    // A 3xx is no representation of the item: it gets no ETag and never becomes a 304.
    @Get('/:id/choices', { schema: { params: IdParams }, responses: { 300: { description: 'Multiple Choices' } } })
    choices () { return this.reply.code(300).send({ choices: ['/items/1', '/items/1/dated'] }) }

    // A body of null, sent by hand (a returned null is an empty body), has no lastModifiedField to stamp from.
    @Get('/nothing', { responseSchema: Type.Null() })
    nothing () { return this.reply.send(null) }

    @Post('/action', { responseSchema: Type.Object({ done: Type.Boolean() }) })
    action () { return { done: true } }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  const etag = (await app.inject('/items/1')).headers.etag as string
  return { app, repo, ran: repo.ran, etag }
}

type Row = [name: string, method: string, url: string, headers: (etag: string) => Record<string, string>,
  status: number, payload?: unknown]
const weakOf = (etag: string) => `W/${etag}`

/** RFC 9110 section 13 case by case; `etag` is the current strong tag of item 1. */
const rows: Row[] = [
  ['no validators: 200', 'GET', '/items/1', () => ({}), 200],
  ['If-None-Match exact: 304', 'GET', '/items/1', (e) => ({ 'if-none-match': e }), 304],
  ['If-None-Match weak on the client side: 304 (weak comparison)', 'GET', '/items/1', (e) => ({ 'if-none-match': weakOf(e) }), 304],
  ['weak on the server side, strong from the client: 304', 'GET', '/items/1/tagged', () => ({ 'if-none-match': '"v1"' }), 304],
  ['weak on both sides: 304', 'GET', '/items/1/tagged', () => ({ 'if-none-match': 'W/"v1"' }), 304],
  ['list, match first: 304', 'GET', '/items/1', (e) => ({ 'if-none-match': `${e}, "b", "c"` }), 304],
  ['list, match in the middle: 304', 'GET', '/items/1', (e) => ({ 'if-none-match': `"a", ${e}, "c"` }), 304],
  ['list, match last: 304', 'GET', '/items/1', (e) => ({ 'if-none-match': `"a","b",${e}` }), 304],
  ['list without a match: 200', 'GET', '/items/1', () => ({ 'if-none-match': '"a", "b"' }), 200],
  ['* on an existing resource: 304', 'GET', '/items/1', () => ({ 'if-none-match': '*' }), 304],
  ['* on a missing resource: 404, never 304', 'GET', '/items/2', () => ({ 'if-none-match': '*' }), 404],
  ['an invalid tag (no closing quote) never matches: 200', 'GET', '/items/1', (e) => ({ 'if-none-match': e.slice(0, -1) }), 200],
  ['an unquoted tag never matches: 200', 'GET', '/items/1', (e) => ({ 'if-none-match': e.slice(1, -1) }), 200],
  ['If-None-Match decides over a fresh If-Modified-Since: 200', 'GET', '/items/1/dated', () => ({ 'if-none-match': '"other"', 'if-modified-since': LAST_MODIFIED }), 200],
  ['a matching If-None-Match wins over a stale If-Modified-Since: 304', 'GET', '/items/1', (e) => ({ 'if-none-match': e, 'if-modified-since': 'Thu, 01 Jan 2026 09:00:00 GMT' }), 304],
  ['If-Modified-Since equal to Last-Modified: 304', 'GET', '/items/1/dated', () => ({ 'if-modified-since': LAST_MODIFIED }), 304],
  ['If-Modified-Since earlier: 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 200],
  ['If-Modified-Since later: 304', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Fri, 02 Jan 2026 00:00:00 GMT' }), 304],
  ['If-Modified-Since invalid: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'yesterday' }), 200],
  ['If-Modified-Since in RFC 850 form: 304', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Thursday, 01-Jan-26 10:00:00 GMT' }), 304],
  ['If-Modified-Since in asctime form: 304', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Thu Jan  1 10:00:00 2026' }), 304],
  ['an asctime date after other text is not a date: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'on Thu Jan  1 10:00:00 2026' }), 200],
  ['an asctime date before other text is not a date: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Thu Jan  1 10:00:00 2026 UTC' }), 200],
  ['an IMF-fixdate after other text is not a date: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': `x ${LAST_MODIFIED}` }), 200],
  ['an IMF-fixdate before other text is not a date: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': `${LAST_MODIFIED}+1` }), 200],
  ['an RFC 850 date before other text is not a date: ignored, 200', 'GET', '/items/1/dated', () => ({ 'if-modified-since': 'Thursday, 01-Jan-26 10:00:00 GMT+1' }), 200],
  ['If-Modified-Since is ignored on methods other than GET/HEAD', 'PATCH', '/items/1', () => ({ 'if-modified-since': 'Fri, 02 Jan 2026 00:00:00 GMT' }), 200],
  ['HEAD behaves like GET: 304', 'HEAD', '/items/1', (e) => ({ 'if-none-match': e }), 304],
  ['HEAD without validators: 200', 'HEAD', '/items/1', () => ({}), 200],
  ['HEAD with a fresh If-Modified-Since via checkLastModified: 304', 'HEAD', '/items/1/dated', () => ({ 'if-modified-since': LAST_MODIFIED }), 304],
  ['a 500 with a matching tag stays a 500', 'GET', '/items/boom', () => ({ 'if-none-match': '*' }), 500],
  ['a 300 with a matching tag stays a 300', 'GET', '/items/1/choices', () => ({ 'if-none-match': '*' }), 300],
  ['POST with a matching tag is not conditional here: 201', 'POST', '/items/action', (e) => ({ 'if-none-match': e, 'if-match': '"nope"' }), 201],
  ['PUT with If-Match current: 200', 'PUT', '/items/1', (e) => ({ 'if-match': e }), 200],
  ['PUT with If-Match stale: 412', 'PUT', '/items/1', () => ({ 'if-match': '"stale"' }), 412],
  ['PUT with If-Match weak: 412 (strong comparison)', 'PUT', '/items/1', (e) => ({ 'if-match': weakOf(e) }), 412],
  ['PUT with If-Match *: 200', 'PUT', '/items/1', () => ({ 'if-match': '*' }), 200],
  ['PUT with If-Match * on a missing resource: 404 (preconditions ignored)', 'PUT', '/items/2', () => ({ 'if-match': '*' }), 404],
  ['PATCH with If-Match current: 200', 'PATCH', '/items/1', (e) => ({ 'if-match': e }), 200],
  ['PATCH with If-Match stale: 412', 'PATCH', '/items/1', () => ({ 'if-match': '"stale", "older"' }), 412],
  ['PATCH with If-Match listing the current tag: 200', 'PATCH', '/items/1', (e) => ({ 'if-match': `"older", ${e}` }), 200],
  ['DELETE with If-Match current: 204', 'DELETE', '/items/1', (e) => ({ 'if-match': e }), 204],
  ['DELETE with If-Match stale: 412', 'DELETE', '/items/1', () => ({ 'if-match': '"stale"' }), 412],
  ['DELETE with If-Match weak: 412', 'DELETE', '/items/1', (e) => ({ 'if-match': weakOf(e) }), 412],
  ['If-Unmodified-Since before the change: 412', 'PUT', '/items/1', () => ({ 'if-unmodified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 412],
  ['If-Unmodified-Since equal: 200', 'PUT', '/items/1', () => ({ 'if-unmodified-since': LAST_MODIFIED }), 200],
  ['If-Unmodified-Since invalid: ignored, 200', 'DELETE', '/items/1', () => ({ 'if-unmodified-since': 'not a date' }), 204],
  ['If-Match decides over If-Unmodified-Since: 200', 'PATCH', '/items/1', (e) => ({ 'if-match': e, 'if-unmodified-since': 'Thu, 01 Jan 2026 09:00:00 GMT' }), 200],
  ['If-None-Match matching on an unsafe method: 412', 'PATCH', '/items/1', (e) => ({ 'if-none-match': e }), 412],
  ['If-None-Match * on an unsafe method: 412', 'DELETE', '/items/1', () => ({ 'if-none-match': '*' }), 412],
  ['If-None-Match not matching on an unsafe method: 200', 'PUT', '/items/1', () => ({ 'if-none-match': '"other"' }), 200],
  ['PATCH with If-Match weak: 412 (strong comparison)', 'PATCH', '/items/1', (e) => ({ 'if-match': weakOf(e) }), 412],
  ['PATCH with If-Match *: 200', 'PATCH', '/items/1', () => ({ 'if-match': '*' }), 200],
  ['DELETE with If-Match *: 204', 'DELETE', '/items/1', () => ({ 'if-match': '*' }), 204],
  ['DELETE with If-Match * on a missing resource: 404 (preconditions ignored)', 'DELETE', '/items/2', () => ({ 'if-match': '*' }), 404],
  ['If-None-Match * on PUT of an existing resource: 412', 'PUT', '/items/1', () => ({ 'if-none-match': '*' }), 412],
  ['If-None-Match * on PATCH of an existing resource: 412', 'PATCH', '/items/1', () => ({ 'if-none-match': '*' }), 412],
  ['If-Unmodified-Since before the change on PATCH: 412', 'PATCH', '/items/1', () => ({ 'if-unmodified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 412],
  ['If-Unmodified-Since before the change on DELETE: 412', 'DELETE', '/items/1', () => ({ 'if-unmodified-since': 'Wednesday, 31-Dec-25 23:59:59 GMT' }), 412],
  ['If-Unmodified-Since after the change on DELETE: 204', 'DELETE', '/items/1', () => ({ 'if-unmodified-since': 'Fri Jan  2 00:00:00 2026' }), 204],
  ['a stale If-Match with an invalid body: 412, preconditions come before the content', 'PUT', '/items/1', () => ({ 'if-match': '"stale"' }), 412, { name: 5 }],
  ['a current If-Match with an invalid body: 400', 'PUT', '/items/1', (e) => ({ 'if-match': e }), 400, { name: 5 }],
  ['a stale If-Match on a malformed id: 400, the target is checked first', 'PUT', '/items/abc', () => ({ 'if-match': '"stale"' }), 400],
  ['async checkLastModified, equal date: 304', 'GET', '/items/1/adated', () => ({ 'if-modified-since': LAST_MODIFIED }), 304],
  ['async checkLastModified, earlier date: 200', 'GET', '/items/1/adated', () => ({ 'if-modified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' }), 200],
  ['HEAD through async checkLastModified: 304', 'HEAD', '/items/1/adated', () => ({ 'if-modified-since': LAST_MODIFIED }), 304]
]

for (const family of families) {
  test(`${family.name}: RFC 9110 section 13, one row per case`, async (t) => {
    for (const [name, method, url, headers, status, payload = { name: 'renamed' }] of rows) {
      const { app, repo, ran, etag } = await appFor(family)
      const before = repo.get({ id: 1 }, {})
      const res = await app.inject({ method: method as 'GET', url, headers: headers(etag), ...(method === 'PUT' || method === 'PATCH' ? { payload: payload as object } : {}) })
      t.equal(res.statusCode, status, name)
      if (status === 304) {
        t.equal(res.body, '', `${name}: no body`)
        t.equal(res.headers['content-type'], undefined, `${name}: no content type`)
        t.equal(res.headers['content-length'], undefined, `${name}: no content length`)
        t.ok(res.headers.etag, `${name}: the ETag a 200 would carry (RFC 9110 section 15.4.5)`)
      }
      if (status === 412 || status === 400) {
        t.match(res.headers['content-type'], /^application\/problem\+json/)
        t.same(repo.get({ id: 1 }, {}), before, `${name}: nothing changed`)
        t.same(ran, [], `${name}: the action did not run`)
      }
      if (['PUT', 'PATCH', 'DELETE'].includes(method) && status < 300) t.equal(ran.length, 1, `${name}: the action ran once`)
      await app.close()
    }
  })

  test(`${family.name}: a 304 keeps ETag, Cache-Control, Vary and Expires`, async (t) => {
    const { app } = await appFor(family)
    t.teardown(() => app.close())
    const first = await app.inject('/items/1/cached')
    t.equal(first.statusCode, 200)
    const again = await app.inject({ url: '/items/1/cached', headers: { 'if-none-match': first.headers.etag as string } })
    t.equal(again.statusCode, 304)
    t.same([again.headers.etag, again.headers['cache-control'], again.headers.vary, again.headers.expires],
      [first.headers.etag, 'max-age=60', 'accept', 'Thu, 01 Jan 2026 11:00:00 GMT'])
    const dated = await app.inject('/items/1/dated')
    t.equal(dated.headers['last-modified'], LAST_MODIFIED, 'Last-Modified is stamped, at second precision')
  })

  test(`${family.name}: a 3xx gets no ETag; a body of null, no Last-Modified`, async (t) => {
    const { app } = await appFor(family)
    t.teardown(() => app.close())
    const choices = await app.inject('/items/1/choices')
    t.equal(choices.statusCode, 300)
    t.equal(choices.headers.etag, undefined, 'only a 2xx body is a representation to tag (RFC 9110 section 8.8.3)')
    const nothing = await app.inject('/items/nothing')
    t.same([nothing.statusCode, nothing.body, nothing.headers['last-modified']], [200, 'null', undefined], 'null is sent as it is, with nothing to stamp')
  })

  test(`${family.name}: a PUT with a tag read before it succeeds once, then the old tag is stale`, async (t) => {
    const { app, etag, ran } = await appFor(family)
    t.teardown(() => app.close())
    t.equal((await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'first' } })).statusCode, 200)
    const second = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'second' } })
    t.equal(problem(t, second, 412).title, 'Precondition Failed')
    t.same(ran, ['update'], 'the failed precondition stopped the action before it ran')
    t.not((await app.inject('/items/1')).headers.etag, etag, 'the representation has a new tag')
  })
}

for (const family of families) {
  test(`${family.name}, on the wire: every 304 to GET and HEAD has no body, no Content-Length, no Content-Type, and keeps its validators`, async (t) => {
    const { app, etag } = await appFor(family)
    await app.listen({ port: 0, host: '127.0.0.1' })
    t.teardown(() => app.close())
    const { port } = app.server.address() as net.AddressInfo
    const cases: Array<[path: string, header: string]> = [
      ['/items/1', `If-None-Match: ${etag}`], // the hashed ETag
      ['/items/1/cached', `If-None-Match: ${etag}`], // with Cache-Control, Vary and Expires
      ['/items/1/dated', `If-Modified-Since: ${LAST_MODIFIED}`], // checkLastModified, sync
      ['/items/1/adated', `If-Modified-Since: ${LAST_MODIFIED}`], // checkLastModified, async
      ['/items/1/tagged', 'If-None-Match: "v1"'] // checkEtag
    ]
    for (const method of ['GET', 'HEAD']) {
      for (const [path, header] of cases) {
        const raw = await new Promise<string>((resolve, reject) => {
          const socket = net.connect(port, '127.0.0.1', () => socket.end(`${method} ${path} HTTP/1.1\r\nHost: x\r\n${header}\r\nConnection: close\r\n\r\n`))
          let data = ''
          socket.on('data', (c) => { data += c.toString() })
          socket.on('end', () => resolve(data))
          socket.on('error', reject)
        })
        const what = `${method} ${path}`
        t.match(raw, /^HTTP\/1\.1 304 Not Modified\r\n/, what)
        t.notMatch(raw, /content-length|content-type|transfer-encoding/i, `${what}: no length, type or chunking`)
        t.match(raw, path.endsWith('tagged') ? /\r\netag: W\/"v1"\r\n/i : new RegExp(`\r\netag: ${etag.replace(/[-/\\^$*+?.()|[\]{}]/g, '\\$&')}\r\n`, 'i'), `${what}: the ETag`)
        if (path.endsWith('cached')) t.match(raw, /cache-control: max-age=60\r\n[^]*vary: accept\r\n[^]*expires: Thu, 01 Jan 2026 11:00:00 GMT\r\n/i, `${what}: Cache-Control, Vary, Expires`)
        if (path.endsWith('dated')) t.match(raw, new RegExp(`last-modified: ${LAST_MODIFIED}\r\n`, 'i'), `${what}: Last-Modified`)
        t.ok(raw.endsWith('\r\n\r\n'), `${what}: nothing after the headers`)
      }
    }
  })
}

test('authentication runs before preconditions: an anonymous PUT with a stale tag is a 401, and reads nothing', async (t) => {
  const { Unauthorized } = await import('../lib/errors.js')
  let reads = 0
  class Guarded extends ConditionalMixin {
    static override conditional = { requests: true }
    override getValidators () { reads++; return { etag: '"v2"' } }

    @Route('/:id', { methods: ['PUT'], schema: { params: IdParams } })
    put () { return { saved: true } }
  }
  const auth = (request: FastifyRequest): void => { if (request.headers.authorization !== 'Bearer ok') throw new Unauthorized('Sign in first.') }
  const app = await build({ views: [{ view: Guarded, dependencies: [auth] }] })
  t.teardown(() => app.close())
  problem(t, await app.inject({ method: 'PUT', url: '/1', headers: { 'if-match': '"v1"' } }), 401)
  t.equal(reads, 0, 'the validators were not read for an anonymous client')
  problem(t, await app.inject({ method: 'PUT', url: '/1', headers: { 'if-match': '"v1"', authorization: 'Bearer ok' } }), 412)
  t.equal((await app.inject({ method: 'PUT', url: '/1', headers: { 'if-match': '"v2"', authorization: 'Bearer ok' } })).statusCode, 200)
})

test('views that do not opt in never hash', async (t) => {
  class Plain extends APIView {
    @Get('/')
    get () { return { a: 1 } }
  }
  const app = await build({ views: [{ view: Plain, prefix: '' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/', headers: { 'if-none-match': '*' } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers.etag, undefined)
})

test('the building blocks', async (t) => {
  t.same(parseEntityTags('"a", W/"b" ,"c"'), [{ weak: false, opaque: '"a"' }, { weak: true, opaque: '"b"' }, { weak: false, opaque: '"c"' }])
  t.same(parseEntityTags(' * '), '*')
  t.same(parseEntityTags('"a", b, "c"'), [{ weak: false, opaque: '"a"' }], 'reading stops at an invalid member')
  t.same(parseEntityTags(''), [])
  t.ok(weakMatch(parseEntityTags('W/"x"'), '"x"'))
  t.notOk(strongMatch(parseEntityTags('W/"x"'), '"x"'))
  t.notOk(strongMatch(parseEntityTags('"x"'), 'W/"x"'), 'a weak current tag never matches strongly')
  t.notOk(weakMatch(parseEntityTags('"x"'), 'garbage'))
  t.notOk(strongMatch(parseEntityTags('"x"'), 'garbage'))
  t.ok(strongMatch('*', '"x"'))
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT'), Date.UTC(1994, 10, 6, 8, 49, 37))
  t.equal(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT'), Date.UTC(1994, 10, 6, 8, 49, 37))
  t.equal(parseHttpDate('Sun Nov  6 08:49:37 1994'), Date.UTC(1994, 10, 6, 8, 49, 37))
  t.equal(parseHttpDate('Wed Nov 16 08:49:37 1994'), Date.UTC(1994, 10, 16, 8, 49, 37), 'asctime with a day of two digits')
  t.equal(parseHttpDate('Sun, 31 Feb 1994 08:49:37 GMT'), undefined, 'not a day')
  t.equal(parseHttpDate('Sun, 06 Foo 1994 08:49:37 GMT'), undefined, 'not a month')
  t.equal(parseHttpDate('1994-11-06T08:49:37Z'), undefined, 'ISO 8601 is not an HTTP-date')
  t.equal(parseHttpDate('Friday, 01-Jan-99 00:00:00 GMT'), Date.UTC(1999, 0, 1), 'two-digit years more than 50 years ahead are in the past century')
  // RFC 9110 section 5.6.7: only a two-digit year that appears to be MORE than 50 years in the future is in the past.
  for (const year of [2026, 2049, 2050, 2060, 2099]) {
    const rfc850 = (n: number) =>
      parseHttpDate(`Friday, 01-Jan-${String(n % 100).padStart(2, '0')} 00:00:00 GMT`, Date.UTC(year, 5))
    t.equal(rfc850(year + 50), Date.UTC(year + 50, 0, 1), `in ${year}, exactly 50 years ahead is ahead`)
    t.equal(rfc850(year + 51), Date.UTC(year - 49, 0, 1), `in ${year}, 51 years ahead is in the past`)
  }
  t.equal(parseHttpDate('x Sunday, 06-Nov-94 08:49:37 GMT'), undefined, 'an RFC 850 date after some text is none')
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:60 GMT'), Date.UTC(1994, 10, 6, 8, 50), 'a leap second is a second')
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:61 GMT'), undefined, 'second 61 is not')
  t.equal(parseHttpDate('Sun, 06 Nov 1994 08:49:99 GMT'), undefined, 'nor 99, which the minute would hide')
  t.equal(httpDate('2026-01-01T10:00:00.900Z'), 'Thu, 01 Jan 2026 10:00:00 GMT')
  t.match(etagOf('x'), /^"[A-Za-z0-9_-]{27}"$/)
  t.notOk(isNotModified({ 'if-modified-since': LAST_MODIFIED }, {}), 'nothing to compare')
  t.notOk(isNotModified({ 'if-none-match': '*' }, {}), 'no current tag')
  t.notOk(isNotModified({ 'if-modified-since': LAST_MODIFIED }, { lastModified: 'not a date' }))
  t.ok(isNotModified({ 'if-none-match': '"x"' }, { etag: '"x"' }), 'the tag sent back as it was sent')
  t.ok(isNotModified({ 'if-none-match': 'W/"x"' }, { etag: 'W/"x"' }), 'a weak one too')
  t.notOk(isNotModified({ 'if-none-match': 'x' }, { etag: 'x' }), 'a current "tag" that is not one matches nothing, not even itself')
  // An entity-tag is DQUOTE *etagc DQUOTE (RFC 9110 section 8.8.3): both quotes, and nothing between them is one too.
  t.notOk(isNotModified({ 'if-none-match': '"x' }, { etag: '"x' }), 'nor one missing its closing quote')
  t.notOk(isNotModified({ 'if-none-match': 'x"' }, { etag: 'x"' }), 'nor one missing its opening quote')
  t.notOk(isNotModified({ 'if-none-match': '"' }, { etag: '"' }), 'nor a lone quote')
  t.ok(isNotModified({ 'if-none-match': '""' }, { etag: '""' }), 'the empty tag is one')
  // A handler's own tag with a character etagc leaves out (a space) is the application's to fix;
  // sent back exactly as it was sent, it names the representation it was sent with.
  t.ok(isNotModified({ 'if-none-match': '"a b"' }, { etag: '"a b"' }), 'a quoted tag sent back unchanged is compared as sent')
  t.ok(isNotModified({ 'if-none-match': '"x", ""' }, { etag: 'W/""' }), 'and is compared like any other')
  t.notOk(isNotModified({ 'if-none-match': '"y"', 'if-modified-since': LAST_MODIFIED }, { etag: '"x"', lastModified: MODIFIED }),
    'If-None-Match decides alone')
  t.ok(failsPrecondition({ 'if-match': '"x"' }, { lastModified: MODIFIED }), 'If-Match cannot hold without a current tag')
  t.notOk(failsPrecondition({ 'if-match': '*' }, { lastModified: MODIFIED }))
  t.notOk(failsPrecondition({}, {}))
})

test('views supply validators through getValidators; none means no preconditions', async (t) => {
  const version = { etag: '"v7"', lastModified: MODIFIED }
  const ran: string[] = []
  class Documents extends ConditionalMixin {
    static override conditional = { requests: true }
    override getValidators (request: FastifyRequest) {
      return (request.params as { id: number }).id === 1 ? version : null
    }

    @Get('/:id', { schema: { params: IdParams } })
    get () { return this.checkEtag(version.etag) ?? { v: 7 } }

    @Post('/:id/publish', { schema: { params: IdParams }, statusCode: 200 })
    publish () { ran.push('publish'); return { published: true } }

    @Route('/:id', { methods: ['PUT'], schema: { params: IdParams } })
    put () { ran.push('put'); return { saved: true } }
  }
  class NoValidators extends ConditionalMixin {
    static override conditional = { requests: true }
    @Route('/:id', { methods: ['DELETE'], schema: { params: IdParams } })
    remove () { ran.push('remove'); return { removed: true } }
  }
  // Validated by its modification time alone: no ETag. Stamped ahead of the server's clock, which
  // a valid If-Unmodified-Since always fails (docs/conditional.md, "the one-second clock").
  class Dated extends ConditionalMixin {
    static override conditional = { requests: true }
    override getValidators () { return { lastModified: Date.now() + 3_600_000 } }
    @Route('/:id', { methods: ['PUT', 'DELETE'], schema: { params: IdParams } })
    write () { ran.push('dated'); return { saved: true } }
  }
  const app = await build({ views: [{ view: Documents, prefix: '/docs' }, { view: NoValidators, prefix: '/plain' }, { view: Dated, prefix: '/dated' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/docs/1', headers: { 'if-none-match': '"v7"' } })).statusCode, 304, 'checkEtag answers 304')
  t.equal((await app.inject({ url: '/docs/1' })).headers.etag, '"v7"', 'and stamps the tag otherwise')
  problem(t, await app.inject({ method: 'PUT', url: '/docs/1', headers: { 'if-match': '"v6"' } }), 412)
  const put = await app.inject({ method: 'PUT', url: '/docs/1', headers: { 'if-match': '"v7"' } })
  t.same([put.statusCode, put.headers.etag], [200, undefined], 'without etag a write is not hashed: its validators are the view\'s own')
  t.equal((await app.inject({ method: 'PUT', url: '/docs/2', headers: { 'if-match': '"v7"' } })).statusCode, 200, 'no current representation: preconditions ignored')
  t.equal((await app.inject({ method: 'POST', url: '/docs/1/publish', headers: { 'if-match': '"v6"' } })).statusCode, 200, 'POST is not checked')
  t.equal((await app.inject({ method: 'DELETE', url: '/plain/1', headers: { 'if-match': '"any"' } })).statusCode, 200, 'a view without validators checks nothing')
  for (const method of ['PUT', 'DELETE'] as const) {
    problem(t, await app.inject({ method, url: '/dated/1', headers: { 'if-none-match': '*' } }), 412)
    t.equal((await app.inject({ method, url: '/dated/1', headers: { 'if-none-match': '"v7"' } })).statusCode, 200, `${method}: without an ETag, only * matches If-None-Match`)
    problem(t, await app.inject({ method, url: '/dated/1', headers: { 'if-unmodified-since': LAST_MODIFIED } }), 412)
    t.equal((await app.inject({ method, url: '/dated/1', headers: { 'if-unmodified-since': 'not a date' } })).statusCode, 200, `${method}: an If-Unmodified-Since that is no date is ignored`)
  }
  t.same(ran, ['put', 'put', 'publish', 'remove', 'dated', 'dated', 'dated', 'dated'])
})

test('a precondition waits for a valid target: a bad query is a 400 before any 412; a route without a params schema is checked as it is', async (t) => {
  const reads: unknown[] = []
  class Documents extends ConditionalMixin {
    static override conditional = { requests: true }
    override getValidators (request: FastifyRequest) { reads.push(request.params); return { etag: '"v2"' } }

    @Route('/typed/:id', { methods: ['PUT'], schema: { params: IdParams, querystring: Type.Object({ force: Type.Optional(Type.Boolean()) }) } })
    typed () { return { saved: true } }

    @Route('/loose/:id', { methods: ['DELETE'] })
    loose () { return { removed: true } }
  }
  const app = await build({ views: [Documents] })
  t.teardown(() => app.close())
  problem(t, await app.inject({ method: 'PUT', url: '/typed/1?force=maybe', headers: { 'if-match': '"v1"' } }), 400)
  t.same(reads, [], 'an invalid query never reaches the validators')
  problem(t, await app.inject({ method: 'PUT', url: '/typed/1?force=true', headers: { 'if-match': '"v1"' } }), 412)
  t.same(reads, [{ id: 1 }], 'a valid target reaches them converted')
  problem(t, await app.inject({ method: 'DELETE', url: '/loose/abc', headers: { 'if-match': '"v1"' } }), 412)
  t.same(reads[1], { id: 'abc' }, 'without a params schema the path is taken as it is')
})

test('etagMatches and notModifiedSince for hand-rolled logic', async (t) => {
  const seen: unknown[] = []
  class Manual extends ConditionalMixin {
    static override conditional = { requests: true }
    @Get('/')
    get () {
      seen.push([this.etagMatches('"a"'), this.notModifiedSince(MODIFIED), this.notModifiedSince(new Date(0)), this.notModifiedSince(Date.parse(MODIFIED))])
      return {}
    }
  }
  const app = await build({ views: [Manual] })
  t.teardown(() => app.close())
  await app.inject({ url: '/', headers: { 'if-none-match': 'W/"a"', 'if-modified-since': LAST_MODIFIED } })
  t.equal((await app.inject('/')).headers.etag, undefined, 'hand-rolled validators only: no ETag the view did not set')
  await app.inject({ url: '/', headers: { 'if-modified-since': 'garbage' } })
  await app.inject({ url: '/', headers: { 'if-modified-since': 'Thu, 01 Jan 2026 09:59:59 GMT' } })
  t.same(
    seen,
    [[true, true, true, true], [false, false, false, false], [false, false, false, false], [false, false, true, false]]
  )
  t.equal(httpDate(Date.parse(MODIFIED)), LAST_MODIFIED)
  t.equal(httpDate(new Date(MODIFIED)), LAST_MODIFIED)
  t.equal(httpDate('not a date'), undefined, 'an unreadable date has no HTTP-date')
})

test('checkLastModified with an unreadable date serves the body and stamps nothing', async (t) => {
  class Broken extends ConditionalMixin {
    static override conditional = { requests: true }
    @Get('/')
    get () { return this.checkLastModified('garbage') ?? { served: true } }
  }
  const app = await build({ views: [Broken] })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/', headers: { 'if-modified-since': LAST_MODIFIED } })
  t.equal(res.statusCode, 200)
  t.equal(res.headers['last-modified'], undefined)
})

test('ETags of byte bodies and of aliased generic objects; streams and views with an open schema are left alone', async (t) => {
  const { Readable } = await import('node:stream')
  const Aliased = Type.Object({ id: Type.Integer(), full_name: Type.String({ alias: 'fullName' }) })
  const repo = new MemoryRepository({ rows: [{ id: 1, full_name: 'Ada' }] })
  class People extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Aliased
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override repository = repo as never

    @Get('/bytes/raw')
    bytes () { return Buffer.from('raw bytes') }

    @Get('/stream/raw')
    stream () { return this.reply.type('text/plain').send(Readable.from(['streamed'])) }
  }
  class Schemaless extends mix(ConditionalMixin, GenericViewSet) {
    // Every stored field, deliberately: the serializer then sends the row as JSON.
    static override responseSchema = Type.Object({}, { additionalProperties: true })
    static override detailParams = IdParams
    static override conditional = { requests: true }
    static override repository = repo as never
  }
  const app = await build({ views: [{ view: People, prefix: '/people' }, { view: Schemaless, prefix: '/loose' }] })
  t.teardown(() => app.close())
  const bytes = await app.inject('/people/bytes/raw')
  t.equal(bytes.headers.etag, etagOf(Buffer.from('raw bytes')), 'a Buffer body is hashed as it is sent')
  const streamed = await app.inject('/people/stream/raw')
  t.same([streamed.statusCode, streamed.body, streamed.headers.etag], [200, 'streamed', undefined], 'a stream is sent, not buffered to be hashed')
  const person = await app.inject('/people/1')
  t.same(person.json(), { id: 1, fullName: 'Ada' })
  t.equal(person.headers.etag, etagOf(person.body))
  t.equal((await app.inject({ method: 'PATCH', url: '/people/1', headers: { 'if-match': person.headers.etag as string }, payload: {} })).statusCode, 200,
    'the precondition computes the same tag from the aliased representation')
  t.equal((await app.inject({ method: 'DELETE', url: '/loose/1', headers: { 'if-match': '"anything"' } })).statusCode, 412,
    'without a response schema there is no tag to match')
})

test('mixins compose their route hooks with ConditionalMixin', async (t) => {
  const order: string[] = []
  const { defineMixin, extendContribution } = await import('../lib/index.js')
  const Tracing = defineMixin<typeof ConditionalMixin>('Tracing', (Base) => class extends Base {
    static override contribute (route: never, method: string) {
      const inherited = super.contribute(route, method)
      return extendContribution(inherited, { onSend: [async (_q: unknown, _r: unknown, payload: unknown) => { order.push('trace'); return payload }], preValidation: [async () => { order.push('pre') }] })
    }
  })
  class Traced extends mix(ConditionalMixin, Tracing) {
    static override conditional = { etag: true, requests: true }
    override getValidators () { return { etag: '"t"' } }

    @Get('/:id', { schema: { params: IdParams } })
    get () { return { a: 1 } }

    @Route('/:id', { methods: ['PUT'], schema: { params: IdParams } })
    put () { return { b: 1 } }
  }
  const app = await build({ views: [Traced] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/1')).statusCode, 200)
  t.equal((await app.inject({ method: 'PUT', url: '/1', headers: { 'if-match': '"x"' } })).statusCode, 412)
  t.same(order, ['pre', 'trace', 'trace'], "GET runs both; on the PUT the precondition check runs first and stops it before the other mixin's preValidation hook, whose onSend still runs")
  order.length = 0
  t.equal((await app.inject({ method: 'PUT', url: '/1', headers: { 'if-match': '"t"' } })).statusCode, 200)
  t.same(order, ['pre', 'trace'], 'a passing precondition lets the rest run')
})

test('preconditions follow excludeNone defaults; checkEtag never answers 304 to PATCH; lastModifiedField answers If-Modified-Since', async (t) => {
  const Nullable = Type.Object({ id: Type.Integer(), note: Type.Union([Type.String(), Type.Null()]), updated_at: Type.String({ format: 'date-time' }) })
  const repo = new MemoryRepository({ rows: [{ id: 1, note: null, updated_at: MODIFIED }] })
  class Sparse extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Nullable
    static override detailParams = IdParams
    static override conditional = { etag: true, lastModifiedField: 'updated_at' }
    static override defaultSerializerOptions = { byAlias: true, excludeNone: true }
    static override repository = repo as never

    @Route('/:id/touch', { methods: ['PATCH'], schema: { params: IdParams }, responseSchema: Type.Object({ touched: Type.Boolean() }) })
    touch () { return this.checkEtag('"same"') ?? { touched: true } }
  }
  const app = await build({ views: [{ view: Sparse, prefix: '' }] })
  t.teardown(() => app.close())
  const got = await app.inject('/1')
  t.same(got.json(), { id: 1, updated_at: MODIFIED }, 'the null was left out')
  t.equal(got.headers['last-modified'], LAST_MODIFIED, 'Last-Modified from lastModifiedField')
  t.equal((await app.inject({ url: '/1', headers: { 'if-modified-since': LAST_MODIFIED } })).statusCode, 304)
  t.equal((await app.inject({ method: 'PATCH', url: '/1', headers: { 'if-match': got.headers.etag as string }, payload: {} })).statusCode, 200,
    'the precondition tag is computed with the same options as the GET body')
  const touched = await app.inject({ method: 'PATCH', url: '/1/touch', headers: { 'if-none-match': '"same"' } })
  t.equal(touched.statusCode, 200, 'a PATCH is never answered 304')
  t.equal(touched.headers.etag, '"same"')
  t.equal((await app.inject('/')).headers['last-modified'], undefined, 'a list has no single Last-Modified')
})

test('lastModifiedField stamps Last-Modified from a Date, a date string or milliseconds, as docs/conditional.md says', async (t) => {
  const Stamp = (field: TSchema) => Type.Object({ updated_at: field })
  class Stamped extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Item
    static override detailParams = IdParams
    static override conditional = { etag: true, lastModifiedField: 'updated_at' }
    static override repository = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', updated_at: MODIFIED }] }) as never

    @Get('/:id/date', { schema: { params: IdParams }, responseSchema: Stamp(Type.Unknown()) })
    date () { return { updated_at: new Date(MODIFIED) } }

    @Get('/:id/millis', { schema: { params: IdParams }, responseSchema: Stamp(Type.Number()) })
    millis () { return { updated_at: Date.parse(MODIFIED) } }

    @Get('/:id/unknown', { schema: { params: IdParams }, responseSchema: Stamp(Type.Boolean()) })
    unknown () { return { updated_at: true } }

    @Route('/:id/archive', { methods: ['DELETE'], schema: { params: IdParams }, responseSchema: Item })
    archive () { return { id: 1, name: 'lamp', updated_at: MODIFIED } }
  }
  const app = await build({ views: [{ view: Stamped, prefix: '' }] })
  t.teardown(() => app.close())
  for (const path of ['/1', '/1/date', '/1/millis']) {
    t.equal((await app.inject(path)).headers['last-modified'], LAST_MODIFIED, `${path}: stamped`)
    t.equal((await app.inject({ url: path, headers: { 'if-modified-since': LAST_MODIFIED } })).statusCode, 304, `${path}: and answers If-Modified-Since`)
  }
  t.equal((await app.inject('/1/unknown')).headers['last-modified'], undefined, 'a value that is no time stamps nothing')
  const archived = await app.inject({ method: 'DELETE', url: '/1/archive' })
  t.same([archived.statusCode, archived.headers.etag, archived.headers['last-modified']], [200, undefined, undefined], 'a DELETE\'s body is no current representation: no validators')
})

test('preconditions follow byAlias = false defaults too', async (t) => {
  const Aliased = Type.Object({ id: Type.Integer(), full_name: Type.String({ alias: 'fullName' }) })
  class FieldNames extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Aliased
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override defaultSerializerOptions = { byAlias: false }
    static override repository = new MemoryRepository({ rows: [{ id: 1, full_name: 'Ada' }] }) as never
  }
  const app = await build({ views: [{ view: FieldNames, prefix: '' }] })
  t.teardown(() => app.close())
  const got = await app.inject('/1')
  t.same(got.json(), { id: 1, full_name: 'Ada' })
  t.equal((await app.inject({ method: 'PATCH', url: '/1', headers: { 'if-match': got.headers.etag as string }, payload: {} })).statusCode, 200)
})

test('an async action returning checkLastModified ?? item answers a clean 304', async (t) => {
  const lines: string[] = []
  class AsyncItem extends mix(ConditionalMixin, AsyncGenericViewSet)<{ item: ItemT, params: { id: number } }> {
    static override responseSchema = Item
    static override detailParams = IdParams
    static override conditional = { requests: true }
    static override repository = asyncRepository(new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', updated_at: MODIFIED }] })) as never
    override async retrieve (request: FastifyRequest<{ Params: { id: number } }>) {
      const item = (await this.repository.get({ id: request.params.id }, {})) as ItemT
      return this.checkLastModified(item.updated_at) ?? item
    }
  }
  const app = await build({ views: [{ view: AsyncItem, prefix: '' }] }, { logger: { level: 'warn', stream: { write: (l: string) => { lines.push(l) } } } })
  t.teardown(() => app.close())
  const res = await app.inject({ url: '/1', headers: { 'if-modified-since': LAST_MODIFIED } })
  t.equal(res.statusCode, 304)
  t.equal(res.body, '')
  t.equal((await app.inject('/1')).statusCode, 200)
  t.same(lines, [], 'nothing was thrown or sent twice')
})

test('a conditional generic view whose routes declare their own schema: preconditions without an ETag validator', async (t) => {
  const Row = Type.Object({ id: Type.Integer(), name: Type.String() })
  const RowParams = Type.Object({ id: Type.Integer() })
  class Rows extends mix(ConditionalMixin, GenericRetrieveAPIView, GenericDestroyAPIView)<{ params: { id: number } }> {
    static override detailParams = RowParams
    static override conditional = { requests: true }
    static override repository = new MemoryRepository({ rows: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }] }) as never
    @Override({ responseSchema: Row })
    override retrieve (request: ViewRequest<{ params: typeof RowParams }>) { return super.retrieve(request) }
  }
  const app = await build({ views: [{ view: Rows, prefix: '/rows' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/rows/1')).json(), { id: 1, name: 'a' })
  t.equal((await app.inject({ method: 'DELETE', url: '/rows/1', headers: { 'if-match': '*' } })).statusCode, 204, 'If-Match * holds for a row that exists')
  t.equal(problem(t, await app.inject({ method: 'DELETE', url: '/rows/2', headers: { 'if-match': '"abc"' } }), 412).status, 412, 'no tag can match without a representation to hash')
})

test('a representation that references a shared schema of the app: GET and the precondition hash the same bytes', async (t) => {
  const Fastify = (await import('fastify')).default
  const { views } = await import('../lib/index.js')
  const Owner = Type.Object({ name: Type.String() }, { $id: 'Owner' })
  const Owned = Type.Object({ id: Type.Integer(), name: Type.String(), owner: Type.Ref(Owner) })
  const repo = new MemoryRepository<Static<typeof Owned>>({ rows: [{ id: 1, name: 'lamp', owner: { name: 'ada' } }] })
  class Things extends mix(ConditionalMixin, GenericViewSet)<{ item: Static<typeof Owned>, params: { id: number } }> {
    static override responseSchema = Owned
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override repository = repo
    static override validateResponse = false // TypeBox cannot check a Ref to a schema it was not given; the serializer resolves it
  }
  const app = Fastify()
  app.addSchema(Owner)
  await app.register(views, { views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  const got = await app.inject('/things/1')
  t.same(got.json(), { id: 1, name: 'lamp', owner: { name: 'ada' } })
  const put = await app.inject({ method: 'PATCH', url: '/things/1', headers: { 'if-match': got.headers.etag as string }, payload: { name: 'desk' } })
  t.equal(put.statusCode, 200, 'the tag GET gave matches the one the precondition computes')
  t.not(put.headers.etag, got.headers.etag, 'the write answers the new tag')
  problem(t, await app.inject({ method: 'DELETE', url: '/things/1', headers: { 'if-match': got.headers.etag as string } }), 412)
})

test('one view instance serves a conditional write: the precondition check and the action share it', async (t) => {
  const seen: object[] = []
  const repo = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp', updated_at: MODIFIED }] })
  class Items extends mix(ConditionalMixin, GenericViewSet)<{ item: ItemT, params: { id: number } }> {
    static override responseSchema = Item
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override repository = repo
    override getKwargs (action?: string) { seen.push(this); return super.getKwargs(action) }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const etag = (await app.inject('/items/1')).headers.etag as string
  seen.length = 0
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'desk' } })).statusCode, 200)
  t.ok(seen.length >= 2, 'the check and the action both read the view')
  t.ok(seen.every((view) => view === seen[0]), 'one instance')
})

test('a conditional write validates its path once, before the precondition, not again in Fastify\'s phase', async (t) => {
  const { FormatRegistry } = await import('@sinclair/typebox')
  let checks = 0
  FormatRegistry.Set('counted-id', (value) => { checks++; return /^\d+$/.test(value) })
  t.teardown(() => FormatRegistry.Delete('counted-id'))
  const Coded = Type.Object({ id: Type.String(), name: Type.String() })
  const repo = new MemoryRepository<Static<typeof Coded>>({ rows: [{ id: '1', name: 'lamp' }] })
  class Items extends mix(ConditionalMixin, GenericViewSet)<{ item: Static<typeof Coded>, params: { id: string } }> {
    static override responseSchema = Coded
    static override detailParams = Type.Object({ id: Type.String({ format: 'counted-id' }) })
    static override conditional = { etag: true }
    static override repository = repo
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const etag = (await app.inject('/items/1')).headers.etag as string
  checks = 0
  t.equal((await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'desk' } })).statusCode, 200)
  t.equal(checks, 1, 'the path was checked once')
  problem(t, await app.inject({ method: 'PATCH', url: '/items/x', headers: { 'if-match': etag }, payload: { name: 'desk' } }), 400)
})

test('lastModifiedField names a time: a date-time or date string, nullable or not; anything else is refused at registration', async (t) => {
  const stamped = (field: TSchema) => {
    class Stamped extends mix(ConditionalMixin, GenericViewSet) {
      static override responseSchema = Type.Object({ id: Type.Integer(), changed: field })
      static override conditional = { etag: true, lastModifiedField: 'changed' }
      static override repository = new MemoryRepository({ rows: [] }) as never
    }
    return Stamped
  }
  const accepted = [
    Type.String({ format: 'date-time' }), Type.String({ format: 'date' }),
    Type.Union([Type.String({ format: 'date-time' }), Type.Null()])
  ]
  for (const field of accepted) {
    const app = await build({ views: [{ view: stamped(field), prefix: '' }] })
    await app.close()
    t.pass(`${JSON.stringify(field)} holds a time`)
  }
  const refused = [Type.String(), Type.String({ format: 'email' }), Type.Integer(), Type.Union([Type.String({ format: 'date-time' }), Type.Integer()]), Type.Union([Type.Null()]),
    Type.Union([Type.Null(), Type.Null()]), // an anyOf that only ever holds null
    Type.Number({ format: 'date-time' })] // a format on a number is no time
  for (const field of refused) {
    const error = await build({ views: [{ view: stamped(field), prefix: '' }] }).then(() => undefined, (e: unknown) => e)
    t.match(error, { code: 'FV_ERR_UNKNOWN_FIELD', message: /lastModifiedField "changed" is not a time in its responseSchema/ }, `${JSON.stringify(field)} holds no time`)
  }
})

test('ConditionalMixin mixed first or last: the same document and the same answers, preconditions before the content either way', async (t) => {
  const { AsyncBulkAPIViewSet } = await import('../lib/bulk.js')
  const swagger = (await import('@fastify/swagger')).default
  const { swaggerOptions } = await import('../lib/openapi/swagger.js')
  const Stamped = Type.Object({ id: Type.Integer(), name: Type.String(), updated_at: Type.String({ format: 'date-time' }) })
  const statics = {
    responseSchema: Stamped,
    createSchema: Type.Object({ name: Type.String() }),
    updateSchema: Type.Object({ name: Type.String() }),
    bulkUpdateSchema: Stamped,
    detailParams: IdParams,
    conditional: { etag: true, lastModifiedField: 'updated_at' as const, require: true },
    filter: null
  }
  const appFor = async (first: boolean): Promise<FastifyInstance> => {
    const repository = asyncRepository(new StampingRepository({ rows: [{ id: 1, name: 'a', updated_at: MODIFIED }, { id: 2, name: 'b', updated_at: MODIFIED }] }))
    const Items = first
      ? class extends mix(
        ConditionalMixin,
        AsyncBulkAPIViewSet,
        AsyncGenericViewSet
      ).with({ ...statics, repository }) {}
      : class extends mix(
        AsyncBulkAPIViewSet,
        AsyncGenericViewSet,
        ConditionalMixin
      ).with({ ...statics, repository }) {}
    const app = Fastify()
    await app.register(swagger, swaggerOptions({ info: { title: 'order', version: '1' } }))
    await app.register(views, { views: [{ view: Items, prefix: '/items' }] })
    await app.ready()
    return app
  }
  const first = await appFor(true)
  const last = await appFor(false)
  t.teardown(async () => { await first.close(); await last.close() })
  t.same(last.swagger(), first.swagger(), 'the same document, Accept-Patch and the validators included')
  const etag = (await first.inject('/items/1')).headers.etag as string
  const requests: InjectOptions[] = [
    { method: 'GET', url: '/items/1', headers: { 'if-none-match': etag } },
    { method: 'PATCH', url: '/items/1', headers: { 'if-match': '"stale"' } },
    { method: 'PATCH', url: '/items/1', headers: { 'if-match': '"stale"', 'content-type': 'application/merge-patch+json' }, payload: '{"name":"x"}' },
    { method: 'PATCH', url: '/items/1', payload: { name: 'x' } },
    { method: 'PATCH', url: '/items/1', headers: { 'if-match': etag } },
    { method: 'PATCH', url: '/items/1', headers: { 'if-match': etag, 'content-type': 'text/plain' }, payload: 'x' },
    { method: 'PUT', url: '/items/1', headers: { 'if-match': '"stale"' }, payload: { name: 1 } },
    { method: 'DELETE', url: '/items/1', headers: { 'if-match': '"stale"' } },
    { method: 'PATCH', url: '/items/2', headers: { 'if-match': (await first.inject('/items/2')).headers.etag as string }, payload: { name: 'y' } }
  ]
  for (const request of requests) {
    const a = await first.inject(request)
    const b = await last.inject(request)
    t.same([b.statusCode, b.headers['accept-patch'], b.body], [a.statusCode, a.headers['accept-patch'], a.body], `${request.method} ${request.url} ${JSON.stringify(request.headers ?? {})}: ${a.statusCode} either way`)
  }
  const stale = await first.inject(requests[1])
  t.equal(stale.statusCode, 412, 'a stale If-Match without a body: 412, the precondition before the content')
  t.match(stale.headers['accept-patch'], /application\/merge-patch\+json/, 'and the refusal names the patch formats')
  t.match((await first.inject(requests[3])).headers['accept-patch'], /application\/json/, 'a 428 too')
})

test('what a conditional view does without conditions: no early read, a handler\'s non-string ETag replaced, a 300 stamped with no validator', async (t) => {
  const repo = new MemoryRepository<ItemT>({ touchField: 'updated_at', rows: [{ id: 1, name: 'lamp', updated_at: MODIFIED }] })
  const early: string[] = []
  class Items extends mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Item,
    createSchema: Type.Object({ name: Type.String() }),
    detailParams: IdParams,
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository: repo
  }) {
    override getValidators (request: FastifyRequest) {
      early.push(request.method)
      return super.getValidators(request)
    }

    @Get('/:id/numbered', { schema: { params: IdParams }, responseSchema: Type.Object({ n: Type.Integer() }) })
    numbered () {
      // Not an entity-tag: what the client gets is the body's hash.
      this.reply.header('etag', 7)
      return { n: 1 }
    }

    @Get('/:id/moved', { schema: { params: IdParams }, responseSchema: Item })
    moved (request: ViewRequest<{ params: typeof IdParams }>) {
      this.reply.code(300)
      return repo.get({ id: request.params.id })
    }

    @Get('/:id/restamped', { schema: { params: IdParams }, responseSchema: Item })
    restamped (request: ViewRequest<{ params: typeof IdParams }>) {
      return this.checkLastModified('2025-06-01T00:00:00Z') ?? repo.get({ id: request.params.id })
    }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const plain = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'desk lamp' } })
  t.same([plain.statusCode, early], [200, []], 'a write without conditional headers reads nothing before its action')
  const conditional = await app.inject({ method: 'PUT', url: '/items/1', headers: { 'if-match': plain.headers.etag as string }, payload: { name: 'lamp' } })
  t.same([conditional.statusCode, early], [200, ['PUT']], 'one with If-Match reads the current validators first')
  t.match((await app.inject('/items/1/numbered')).headers.etag, /^"[A-Za-z0-9_-]{27}"$/)
  const moved = await app.inject('/items/1/moved')
  t.same([moved.statusCode, moved.headers.etag, moved.headers['last-modified']], [300, undefined, undefined], 'a 300 is no representation: no ETag, no Last-Modified')
  t.equal((await app.inject('/items/1/restamped')).headers['last-modified'], 'Sun, 01 Jun 2025 00:00:00 GMT', 'a handler\'s own Last-Modified is kept')
})
