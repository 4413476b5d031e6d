import { test, type Test } from 'tap'
import http from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { readFileSync } from 'node:fs'
import { setTimeout as wait } from 'node:timers/promises'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { Type } from '@sinclair/typebox'
import views, { APIView, Events, configureApp } from '../lib/index.js'
import type { EventStreamContext, FastifyViewsOptions, ServerEvent, ViewRequest } from '../lib/types.js'
import { APIError, Conflict, Forbidden } from '../lib/errors.js'
import { IsAuthenticated, permission } from '../lib/access.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { ChangeFeed, EventFieldError, EventHub, EventStreamCut, eventText } from '../lib/streams.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildViewRoutes } from '../lib/registration/register.js'
import { build, headerAuth, problem } from './helpers.js'

// Event-stream routes (`@Events`): the text/event-stream format of each event, its data serialized by
// its schema; the route's validation, dependencies and permissions before the method runs; errors
// before the stream opens answered as problems, after it the stream cut and the error logged; the
// comment that opens a slow stream, heartbeats, a client that goes away, one that stops reading, the
// application closing with streams open; a hostile Last-Event-ID through a ChangeFeed, a reconnect
// storm; the document. Where bytes or timing matter the client is a real socket.

const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'EventItem' })
const ItemId = Type.Object({ id: Type.Integer() })
const Tick = Type.Object({ n: Type.Integer() })
const TICKS = { tick: Tick }
type TickEvent = ServerEvent<typeof TICKS>
const tick = (n: number): TickEvent => ({ event: 'tick', data: { n } })

type LogEntry = Record<string, any>

/** Waits (5 ms at a time, at most `ms`) until `done` holds; whether it did. */
async function until (done: () => boolean, ms = 2_000): Promise<boolean> {
  for (const started = Date.now(); !done(); await wait(5)) {
    if (Date.now() - started > ms) return false
  }
  return true
}

interface Served { app: FastifyInstance, port: number, logs: LogEntry[] }

/** The plugin with `options` on a listening app, closed by the test's teardown; its log entries, warn and up. */
async function serve (t: Test, options: FastifyViewsOptions): Promise<Served> {
  const logs: LogEntry[] = []
  const logger = { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } }
  const app = await build(options, { logger })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  return { app, port: (app.server.address() as AddressInfo).port, logs }
}

/** What a client of a stream saw over a real socket. */
interface Reader {
  res: http.IncomingMessage
  /** Milliseconds from the request to its response's headers. */
  headersAfter: number
  /** Everything received so far. */
  received: () => string
  /** When each chunk arrived (ms after the headers) and what it held. */
  chunks: Array<{ at: number, text: string }>
  /** Settles when the response closes: true if it ended (its last chunk came), false if it was cut. */
  closed: Promise<boolean>
  destroy: () => void
}

/** A GET of `path` on its own connection, resolved with the response's headers. */
function connect (port: number, path: string, headers: Record<string, string> = {}): Promise<Reader> {
  return new Promise((resolve, reject) => {
    const sent = Date.now()
    const request = http.get({ host: '127.0.0.1', port, path, headers, agent: false }, (res) => {
      const opened = Date.now()
      const chunks: Reader['chunks'] = []
      let text = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        text += chunk
        chunks.push({ at: Date.now() - opened, text: chunk })
      })
      // A cut chunked response is an 'aborted' error: what `closed` reports as false.
      res.on('error', () => {})
      const closed = new Promise<boolean>((resolve) => { res.on('close', () => { resolve(res.complete) }) })
      const destroy = (): void => { request.destroy() }
      resolve({ res, headersAfter: opened - sent, received: () => text, chunks, closed, destroy })
    })
    request.on('error', reject)
  })
}

/** The complete blocks of a stream's text, each without the blank line that ends it (`:` is a comment). */
const blocks = (text: string): string[] => text.split('\n\n').slice(0, -1)
/** The complete events, comments left out. */
const eventsOf = (text: string): string[] => blocks(text).filter((block) => !block.startsWith(':'))

/** What a method saw of its stream: how often it ran, whether its `finally` ran, and its signal. */
class Watch {
  calls = 0
  finished = 0
  signals: AbortSignal[] = []
  abortedAt: number[] = []

  /** Counts a call, and keeps its signal. */
  called (stream: EventStreamContext): void {
    this.calls++
    this.signals.push(stream.signal)
    stream.signal.addEventListener('abort', () => { this.abortedAt.push(Date.now()) })
  }
}

/** A wait that ends early, without an error, when `signal` aborts. */
const quietWait = (ms: number, signal: AbortSignal): Promise<unknown> => wait(ms, undefined, { signal }).catch(() => {})

test('an event: its fields, its data as its schema serializes it, a blank line; the end with the method', async (t) => {
  const watch = new Watch()
  class Wire extends APIView {
    @Events('/events', { events: { created: Item, note: Type.String(), deleted: ItemId } })
    async * events (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        // A member the schema does not name is not sent: the row may hold what the client must not see.
        const row = { id: 1, name: 'lamp', secret: 'hunter2' }
        yield { event: 'created' as const, id: 7, retry: 2500, data: row }
        yield { event: 'note' as const, id: 'n-1', data: 'two\nlines, "quoted"' }
        yield { event: 'deleted' as const, data: { id: 1 } }
      } finally {
        watch.finished++
      }
    }

    @Events('/echo', { events: { echo: Type.Object({ lastEventId: Type.Union([Type.String(), Type.Null()]) }) } })
    async * echo (_request: unknown, stream: EventStreamContext) {
      yield { event: 'echo' as const, data: { lastEventId: stream.lastEventId ?? null } }
    }
  }
  const expected = 'event: created\nid: 7\nretry: 2500\ndata: {"id":1,"name":"lamp"}\n\n' +
    'event: note\nid: n-1\ndata: "two\\nlines, \\"quoted\\""\n\n' +
    'event: deleted\ndata: {"id":1}\n\n'
  const { app, port } = await serve(t, { views: [{ view: Wire, prefix: '/wire' }] })

  const res = await app.inject('/wire/events')
  t.equal(res.statusCode, 200)
  t.equal(res.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(res.headers['cache-control'], 'no-cache', 'every read is new')
  t.equal(res.headers['x-accel-buffering'], 'no', 'a proxy that buffers would hold the events back')
  t.equal(res.body, expected, 'byte for byte')
  t.notOk(res.body.includes('hunter2'), 'nothing the schema does not name')

  const reader = await connect(port, '/wire/events')
  t.equal(await reader.closed, true, 'over a socket, the response ends (its last chunk arrives) when the method does')
  t.equal(reader.received(), expected)
  t.same([watch.calls, watch.finished], [2, 2], "each method's finally ran")
  t.equal(watch.signals.every((signal) => signal.aborted), true, 'the signal of a finished stream is aborted')

  // A HEAD would read nothing of a stream that may never end: the headers alone, the method not run.
  const head = await app.inject({ method: 'HEAD', url: '/wire/events' })
  t.same([head.statusCode, head.headers['content-type'], head.headers['cache-control'], head.body],
    [200, 'text/event-stream; charset=utf-8', 'no-cache', ''])
  const headOverSocket = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path: '/wire/events', method: 'HEAD', agent: false }
    http.request(options, resolve).on('error', reject).end()
  })
  t.equal(headOverSocket.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(watch.calls, 2, 'the method did not run for a HEAD')

  const first = await app.inject('/wire/echo')
  t.equal(first.body, 'event: echo\ndata: {"lastEventId":null}\n\n', 'a first connection: no id')
  const resumed = await app.inject({ url: '/wire/echo', headers: { 'last-event-id': 'n-1' } })
  t.equal(resumed.body, 'event: echo\ndata: {"lastEventId":"n-1"}\n\n', 'a reconnection: the Last-Event-ID, as sent')
})

test('eventText: the lines of the HTML standard, and the fields that would break them refused', async (t) => {
  t.equal(eventText({}, '{}'), 'data: {}\n\n', 'no name: a message event')
  t.equal(eventText({ event: 'a', id: 0, retry: 0 }, 'x'), 'event: a\nid: 0\nretry: 0\ndata: x\n\n', 'zero is a value')
  t.equal(eventText({}, ''), 'data: \n\n', 'empty data is one empty line')
  t.equal(eventText({ event: 'a b:c' }, 'one\ntwo\r\nthree\rfour\n'),
    'event: a b:c\ndata: one\ndata: two\ndata: three\ndata: four\ndata: \n\n',
    'data of several lines is as many data fields, whatever the line break, so that a client joins them back')
  const refusals: Array<[string, () => string, RegExp]> = [
    ['a name holding LF', () => eventText({ event: 'a\nb' }, 'x'),
      /^An event name may not hold a line break: "a\\nb"$/],
    ['a name holding CR', () => eventText({ event: 'a\rdata: forged' }, 'x'), /event name may not hold a line break/],
    ['an id holding LF', () => eventText({ id: '1\nevent: forged' }, 'x'),
      /^An event id may not hold a line break or NUL: "1\\nevent: forged"$/],
    ['an id holding CR', () => eventText({ id: '1\r' }, 'x'), /event id may not hold/],
    ['an id holding NUL, which clients ignore', () => eventText({ id: '1\0' }, 'x'),
      /event id may not hold a line break or NUL/],
    ['a negative retry', () => eventText({ retry: -1 }, 'x'), /^retry is a number of milliseconds, not -1$/],
    ['a fractional retry', () => eventText({ retry: 1.5 }, 'x'), /not 1\.5$/],
    ['a retry that is no number', () => eventText({ retry: NaN }, 'x'), /not NaN$/]
  ]
  for (const [name, write, message] of refusals) {
    t.throws(write, { name: 'EventFieldError', message }, name)
    t.throws(write, EventFieldError)
  }
})

test('the path and the query are validated before the stream opens: a 400, the method never called', async (t) => {
  const Room = Type.Object({ room: Type.Integer({ minimum: 1 }) })
  const Since = Type.Object({ since: Type.Optional(Type.Integer({ minimum: 0 })) })
  const Said = Type.Object({ room: Type.Integer(), since: Type.Union([Type.Integer(), Type.Null()]) })
  let calls = 0
  class Rooms extends APIView {
    @Events('/:room/events', { schema: { params: Room, querystring: Since }, events: { said: Said } })
    async * events (request: ViewRequest<{ params: typeof Room, querystring: typeof Since }>) {
      calls++
      yield { event: 'said' as const, data: { room: request.params.room, since: request.query.since ?? null } }
    }
  }
  const { app } = await serve(t, { views: [{ view: Rooms, prefix: '/rooms' }] })
  const invalid = ['/rooms/lobby/events', '/rooms/0/events', '/rooms/1/events?since=-1', '/rooms/1/events?since=soon']
  for (const url of invalid) {
    const res = await app.inject(url)
    problem(t, res, 400)
    t.notOk(String(res.headers['content-type']).startsWith('text/event-stream'), `${url}: no stream`)
  }
  t.equal(calls, 0, 'the method never ran')
  const res = await app.inject('/rooms/3/events?since=5')
  t.equal(res.body, 'event: said\ndata: {"room":3,"since":5}\n\n', 'the typed, coerced parameters reach the method')
  t.equal(calls, 1)
})

test("the route's dependencies and permissions run before the method: 401 and 403 problems, no stream", async (t) => {
  interface User { name: string, admin: boolean, suspended?: boolean }
  const USERS: Record<string, User> = {
    ann: { name: 'ann', admin: true },
    bob: { name: 'bob', admin: false },
    eve: { name: 'eve', admin: true, suspended: true }
  }
  const IsAdmin = permission<unknown, User>({ name: 'IsAdmin', request: (user) => user.admin })
  const notSuspended = (request: FastifyRequest): void => {
    if ((request.principal as User | null)?.suspended === true) throw new Forbidden('This account is suspended.')
  }
  let calls = 0
  class Audit extends APIView {
    @Events('/events', { events: TICKS, permissions: [IsAuthenticated, IsAdmin], dependencies: [notSuspended] })
    async * events () {
      calls++
      yield tick(1)
    }
  }
  const auth = { authenticators: [headerAuth(USERS)] }
  const { app } = await serve(t, { auth, views: [{ view: Audit, prefix: '/audit' }] })
  const anonymous = await app.inject('/audit/events')
  problem(t, anonymous, 401)
  t.equal(anonymous.headers['www-authenticate'], 'User realm="test"', 'a 401 says how to sign in')
  problem(t, await app.inject({ url: '/audit/events', headers: { 'x-user': 'bob' } }), 403)
  t.equal(problem(t, await app.inject({ url: '/audit/events', headers: { 'x-user': 'eve' } }), 403).detail,
    'This account is suspended.', "the dependency's refusal")
  problem(t, await app.inject({ url: '/audit/events', headers: { 'x-user': 'mallory' } }), 401)
  t.equal(calls, 0, 'the method never ran for a refused request')
  const allowed = await app.inject({ url: '/audit/events', headers: { 'x-user': 'ann' } })
  t.same([allowed.statusCode, allowed.body, calls], [200, 'event: tick\ndata: {"n":1}\n\n', 1])
})

test('an error before the first event is an error answer: 500 for an Error, its status for an APIError', async (t) => {
  let returned = 0
  /** An iterator whose every step fails, and whose return fails too: the answer is the step's error. */
  const failing = (error: Error): AsyncIterable<TickEvent> => ({
    [Symbol.asyncIterator]: () => ({
      next: () => Promise.reject(error),
      return: () => {
        returned++
        return Promise.reject(new Error('return failed as well'))
      }
    })
  })
  class Broken extends APIView {
    @Events('/sync', { events: TICKS })
    sync (): AsyncIterable<TickEvent> { throw new Error('the method failed at once') }

    @Events('/async', { events: TICKS })
    async async (): Promise<AsyncIterable<TickEvent>> {
      await wait(5)
      throw new Conflict('The feed is being rebuilt.')
    }

    @Events('/first', { events: TICKS })
    async * first (): AsyncGenerator<TickEvent> {
      await wait(20)
      throw new Error('the database is down')
    }

    @Events('/first-api-error', { events: TICKS })
    async * firstAPIError (): AsyncGenerator<TickEvent> {
      throw new APIError('This feed has ended.', { status: 410 })
    }

    @Events('/hand-made', { events: TICKS })
    handMade () { return failing(new Conflict('Not now.')) }
  }
  const { app, logs } = await serve(t, { views: [{ view: Broken, prefix: '/broken' }] })
  for (const [url, status, detail] of [
    ['/broken/sync', 500, 'An unexpected error occurred.'],
    ['/broken/async', 409, 'The feed is being rebuilt.'],
    ['/broken/first', 500, 'An unexpected error occurred.'],
    ['/broken/first-api-error', 410, 'This feed has ended.'],
    ['/broken/hand-made', 409, 'Not now.']
  ] as const) {
    const res = await app.inject(url)
    t.equal(problem(t, res, status).detail, detail, `${url}: ${status}`)
    t.notOk(res.body.includes('database'), `${url}: no internal message`)
  }
  t.equal(returned, 1, "the iterator was returned, and its failing return() was no one's concern")
  const messages = logs.filter((entry) => entry.level >= 50).map((entry) => entry.err.message)
  t.same(messages, ['the method failed at once', 'the database is down'], 'the 500s are logged, with their message')
})

test('an error after the first event cuts the stream, and the log says why', async (t) => {
  class Failing extends APIView {
    @Events('/error', { events: TICKS })
    async * error () {
      yield tick(1)
      await wait(10)
      throw new Error('lost the database')
    }

    @Events('/thrown-text', { events: TICKS })
    async * thrownText () {
      yield tick(1)
      // eslint-disable-next-line no-throw-literal -- what a careless library does
      throw 'a bare string'
    }

    @Events('/undeclared', { events: TICKS })
    async * undeclared () {
      yield tick(1)
      yield { event: 'tock', data: { n: 2 } } as unknown as TickEvent // what a JavaScript caller can do
    }

    @Events('/bad-id', { events: TICKS })
    async * badId () {
      yield tick(1)
      yield { ...tick(2), id: '2\ndata: forged' }
    }
  }
  const { port, logs } = await serve(t, { views: [{ view: Failing, prefix: '/failing' }] })
  for (const [path, type, message] of [
    ['error', 'Error', /^lost the database$/],
    ['thrown-text', 'EventStreamCut', /^a bare string$/],
    ['undeclared', 'EventStreamCut', /^The method yielded an event named "tock", which its route does not declare$/],
    ['bad-id', 'EventFieldError', /^An event id may not hold a line break or NUL/]
  ] as const) {
    const before = logs.length
    const reader = await connect(port, `/failing/${path}`)
    t.equal(reader.res.statusCode, 200, `${path}: the stream had opened`)
    t.equal(await reader.closed, false, `${path}: the response is cut, not ended: a client knows it missed its end`)
    t.same(eventsOf(reader.received()), ['event: tick\ndata: {"n":1}'], `${path}: the first event, and nothing forged`)
    t.ok(await until(() => logs.length > before), `${path}: logged`)
    t.match(logs[before], { level: 40, err: { type, message } }, `${path}: the log names the error`)
  }
  t.ok(new EventStreamCut('x') instanceof Error)
})

test('a mistake in the first event is a 500, logged', async (t) => {
  const watch = new Watch()
  class Mistaken extends APIView {
    @Events('/undeclared', { events: TICKS })
    async * undeclared (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        yield { event: 'tock', data: { n: 1 } } as unknown as TickEvent
        await quietWait(60_000, stream.signal)
      } finally {
        watch.finished++
      }
    }

    @Events('/bad-retry', { events: TICKS })
    async * badRetry () { yield { ...tick(1), retry: -5 } }
  }
  const { app, logs } = await serve(t, { views: [{ view: Mistaken, prefix: '/mistaken' }] })
  problem(t, await app.inject('/mistaken/undeclared'), 500)
  problem(t, await app.inject('/mistaken/bad-retry'), 500)
  t.match(logs.filter((entry) => entry.level >= 50).map((entry) => entry.err), [
    { type: 'EventStreamCut', message: /named "tock"/ }, { type: 'EventFieldError', message: /^retry is/ }
  ])
  // The answer is a problem, so the stream never runs: its method must be ended as a stream that is cut is.
  t.ok(await until(() => watch.finished === 1, 500), "the method's finally ran")
  t.equal(watch.signals[0]?.aborted, true, 'its signal aborted')
})

test('openAfter: a method slow to its first event gets the headers and a comment line, then the event', async (t) => {
  class Slow extends APIView {
    @Events('/late', { events: TICKS, openAfter: 100 })
    async * late (_request: unknown, stream: EventStreamContext) {
      await quietWait(600, stream.signal)
      yield tick(1)
    }

    @Events('/late-error', { events: TICKS, openAfter: 100 })
    async * lateError (): AsyncGenerator<TickEvent> {
      await wait(300)
      throw new Conflict('too late to answer 409')
    }
  }
  const { port, logs } = await serve(t, { views: [{ view: Slow, prefix: '/slow' }] })
  const reader = await connect(port, '/slow/late')
  t.equal(reader.res.statusCode, 200)
  t.ok(reader.headersAfter >= 90 && reader.headersAfter < 550,
    `the headers came after openAfter, not with the event (${reader.headersAfter} ms)`)
  t.ok(await until(() => reader.chunks.length > 0, 1_000))
  t.equal(reader.chunks[0].text, ':\n\n', 'a comment line first, so that proxies and clients see the stream open')
  t.equal(await reader.closed, true)
  t.same(blocks(reader.received()), [':', 'event: tick\ndata: {"n":1}'], 'then the event, then the end')
  t.ok(reader.chunks[1].at >= 250, `the event came when the method gave it (${reader.chunks[1].at} ms after)`)

  const late = await connect(port, '/slow/late-error')
  t.equal(late.res.statusCode, 200, 'an error after the stream opened cannot change its status')
  t.equal(await late.closed, false, 'the stream is cut')
  t.same(blocks(late.received()), [':'])
  t.ok(await until(() => logs.length === 1))
  t.match(logs[0], { level: 40, err: { message: 'too late to answer 409' } }, 'the error is logged')
})

test('heartbeat: a comment line after each quiet heartbeat, none while events flow, none when 0', async (t) => {
  class Quiet extends APIView {
    @Events('/idle', { events: TICKS, heartbeat: 200 })
    async * idle (_request: unknown, stream: EventStreamContext) {
      yield tick(1)
      await quietWait(60_000, stream.signal)
    }

    @Events('/busy', { events: TICKS, heartbeat: 400 })
    async * busy (_request: unknown, stream: EventStreamContext) {
      for (let n = 1; n <= 15 && !stream.signal.aborted; n++) {
        yield tick(n)
        await wait(50)
      }
    }

    @Events('/silent', { events: TICKS, heartbeat: 0, stallTimeout: 200 })
    async * silent (_request: unknown, stream: EventStreamContext) {
      yield tick(1)
      await quietWait(60_000, stream.signal)
    }
  }
  const { port } = await serve(t, { views: [{ view: Quiet, prefix: '/quiet' }] })
  const paths = ['idle', 'busy', 'silent']
  const [idle, busy, silent] = await Promise.all(paths.map((path) => connect(port, `/quiet/${path}`)))
  await wait(1_000)
  const comments = idle.chunks.filter((chunk) => chunk.text === ':\n\n')
  t.ok(comments.length >= 2 && comments.length <= 5, `one comment each 200 ms of quiet (${comments.length} in 1 s)`)
  // Timed from the server's last write, a little before the client saw the headers: a loaded machine shows the gap.
  t.ok(comments[0].at >= 150, `none before the first heartbeat (${comments[0].at} ms)`)
  for (let i = 1; i < comments.length; i++) {
    const gap = comments[i].at - comments[i - 1].at
    t.ok(gap >= 150, `spaced by the heartbeat (${gap} ms)`)
  }
  t.same(eventsOf(idle.received()), ['event: tick\ndata: {"n":1}'])
  t.equal(blocks(busy.received()).filter((block) => block === ':').length, 0,
    'a stream with an event every 50 ms needs no heartbeat (400 ms)')
  t.ok(eventsOf(busy.received()).length >= 10)
  t.same(blocks(silent.received()), ['event: tick\ndata: {"n":1}'], 'heartbeat 0: no comment line, ever')
  for (const reader of [idle, busy, silent]) reader.destroy()
})

test('a client that goes away: the method is ended (its finally runs) and its signal aborted, at once', async (t) => {
  const watch = new Watch()
  let stepsAfterAbort = 0
  class Live extends APIView {
    @Events('/after-first', { events: TICKS })
    async * afterFirst (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        for (let n = 1; ; n++) {
          yield tick(n)
          await quietWait(50, stream.signal)
        }
      } finally {
        watch.finished++
      }
    }

    @Events('/before-open', { events: TICKS, openAfter: 2_000 })
    async * beforeOpen (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        await quietWait(10_000, stream.signal)
        yield tick(1)
      } finally {
        watch.finished++
      }
    }

    // It goes on to its first event whatever the signal says: the stream is not opened for it.
    @Events('/ignores-signal', { events: TICKS, openAfter: 2_000 })
    async * ignoresSignal (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        await wait(300)
        if (stream.signal.aborted) stepsAfterAbort++
        yield tick(1)
        stepsAfterAbort++
      } finally {
        watch.finished++
      }
    }
  }
  const { port } = await serve(t, { views: [{ view: Live, prefix: '/live' }] })
  const reader = await connect(port, '/live/after-first')
  t.ok(await until(() => eventsOf(reader.received()).length >= 3))
  const left = Date.now()
  reader.destroy()
  t.ok(await until(() => watch.finished === 1, 1_000), 'the finally ran')
  t.ok(watch.signals[0].aborted, 'the signal aborted')
  t.ok(watch.abortedAt[0] - left < 1_000, `within ${watch.abortedAt[0] - left} ms of the client leaving`)

  // Before the stream opens, the request's socket is all there is to watch.
  const early = http.get({ host: '127.0.0.1', port, path: '/live/before-open', agent: false })
  early.on('error', () => {})
  t.ok(await until(() => watch.calls === 2))
  early.destroy()
  t.ok(await until(() => watch.finished === 2, 1_000), 'a client gone before the first event ends the method too')
  t.ok(watch.signals[1].aborted)

  const ignoring = http.get({ host: '127.0.0.1', port, path: '/live/ignores-signal', agent: false })
  ignoring.on('error', () => {})
  t.ok(await until(() => watch.calls === 3))
  ignoring.destroy()
  t.ok(await until(() => watch.finished === 3, 1_000), 'its first event is not sent, and it is ended')
  t.same([watch.signals[2].aborted, stepsAfterAbort], [true, 1], 'it saw the signal aborted; not asked for more')
})

test('a client that stops reading: the method is not asked for more, the stream cut after stallTimeout', async (t) => {
  const pad = 'x'.repeat(1_000)
  const Blob = Type.Object({ n: Type.Integer(), pad: Type.String() })
  const AVAILABLE = 100_000
  let produced = 0
  let lastYield = 0
  let finished = 0
  let hwm = 0
  let called = 0
  class Firehose extends APIView {
    @Events('/events', { events: { blob: Blob }, maxBufferedBytes: 1024, stallTimeout: 500 })
    async * events (request: FastifyRequest) {
      hwm = request.raw.socket.writableHighWaterMark
      called = Date.now()
      try {
        for (let n = 0; n < AVAILABLE; n++) {
          produced++
          lastYield = Date.now()
          yield { event: 'blob' as const, data: { n, pad } }
        }
      } finally {
        finished = Date.now()
      }
    }
  }
  const { port, logs } = await serve(t, { views: [{ view: Firehose, prefix: '/firehose' }] })
  const reader = await connect(port, '/firehose/events')
  reader.res.pause()
  t.ok(await until(() => finished > 0, 5_000), 'the stream was cut')
  const eventBytes = eventText({ event: 'blob' }, JSON.stringify({ n: AVAILABLE, pad })).length
  // What the operating system may hold for a client that reads nothing: its receive buffer and our send buffer.
  const [rmem, wmem] = ['tcp_rmem', 'tcp_wmem'].map((name) => {
    try {
      return Number(readFileSync(`/proc/sys/net/ipv4/${name}`, 'utf8').trim().split(/\s+/)[2])
    } catch {
      return 32 * 1024 * 1024 // no such file off Linux: a bound as generous as Linux's largest default
    }
  })
  const serverSide = 1024 + 2 * hwm + 2 * eventBytes
  const [sent, bound] = [produced * eventBytes, rmem + wmem + serverSide]
  t.ok(sent <= bound, `the method gave ${produced} events (${sent} bytes): what buffers hold (${bound})`)
  t.ok(produced < AVAILABLE / 4, `well short of the ${AVAILABLE} it could have given`)
  // A stall is judged at each tick (every 250 ms here): cut from stallTimeout on, a few ticks after the buffers filled.
  t.ok(finished - called >= 500 && finished - called < 3_000,
    `cut ${finished - called} ms after the stream began, which the client never read (stallTimeout 500)`)
  t.ok(lastYield <= finished, 'the method was not asked for more once it was cut')
  t.ok(await until(() => logs.length === 1))
  const cut = logs[0]
  const message = /^The client read nothing for 500 ms while \d+ bytes waited for it: the stream was cut$/
  t.match(cut, { level: 40, err: { type: 'EventStreamCut', message } })
  const waited = Number(/while (\d+) bytes/.exec(cut.err.message)?.[1])
  t.ok(waited <= serverSide, `in the process, maxBufferedBytes and the socket's buffers (${waited} <= ${serverSide})`)
  reader.res.resume()
  t.equal(await reader.closed, false, 'the client, reading again, finds its stream cut')
})

test('a client that reads slowly but steadily is not cut for a stall', async (t) => {
  const Blob = Type.Object({ n: Type.Integer(), pad: Type.String() })
  const pad = 'x'.repeat(1_000)
  let finished = 0
  class Firehose extends APIView {
    // A second of stallTimeout: a loaded machine may hold the client's reading timer back some hundreds of ms.
    @Events('/events', { events: { blob: Blob }, maxBufferedBytes: 1024, stallTimeout: 1_000 })
    async * events () {
      try {
        for (let n = 0; ; n++) yield { event: 'blob' as const, data: { n, pad } }
      } finally {
        finished = Date.now()
      }
    }
  }
  const { port } = await serve(t, { views: [{ view: Firehose, prefix: '/firehose' }] })
  const reader = await connect(port, '/firehose/events')
  // Reads for 20 ms every 100 ms: slower than the method gives, so output always waits, yet never stopped.
  reader.res.pause()
  const reading = setInterval(() => {
    reader.res.resume()
    setTimeout(() => { reader.res.pause() }, 20)
  }, 100)
  t.teardown(() => { clearInterval(reading) })
  const readBy = (): number => reader.chunks.reduce((sum, chunk) => sum + chunk.text.length, 0)
  await wait(400)
  t.ok(readBy() > 0, `the client reads (${readBy()} bytes in 400 ms)`)
  await wait(3_600)
  t.equal(finished, 0, 'its stream is still open after 4 s, four times stallTimeout')
  clearInterval(reading)
  reader.destroy()
})

test('closing the application ends every open stream at once, each method ended', async (t) => {
  const watch = new Watch()
  let release: () => void = () => {}
  let stubbornFinished = false
  class Open extends APIView {
    @Events('/events', { events: TICKS })
    async * events (_request: unknown, stream: EventStreamContext) {
      watch.called(stream)
      try {
        yield tick(1)
        await quietWait(60_000, stream.signal)
      } finally {
        watch.finished++
      }
    }

    @Events('/stubborn', { events: TICKS })
    async * stubborn () {
      try {
        yield tick(1)
        // Waits on something the signal does not end: the close does not wait for it.
        await new Promise<void>((resolve) => { release = resolve })
        yield tick(2)
      } finally {
        stubbornFinished = true
      }
    }
  }
  const app = await build({ views: [{ view: Open, prefix: '/open' }] })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const paths = ['/open/events', '/open/events', '/open/events', '/open/stubborn']
  const readers = await Promise.all(paths.map((path) => connect(port, path)))
  t.ok(await until(() => readers.every((reader) => eventsOf(reader.received()).length === 1)))
  const started = Date.now()
  await app.close()
  const took = Date.now() - started
  t.ok(took < 1_000, `app.close() finished in ${took} ms`)
  // Each was waiting on its signal: its finally runs as soon as that wait ends, a tick later.
  t.ok(await until(() => watch.finished === 3, 1_000), "every method's finally ran")
  t.ok(watch.signals.every((signal) => signal.aborted))
  const ends = await Promise.all(readers.map((reader) => reader.closed))
  t.same(ends, [true, true, true, true], 'each client saw its stream end')
  t.equal(stubbornFinished, false, 'a method that waits on something else is ended once that settles')
  release()
  t.ok(await until(() => stubbornFinished), 'and then its finally runs, with no second event asked for')
})

test('an EventHub fans an event out to every stream; a subscriber too slow is cut, and the log says so', async (t) => {
  const hub = new EventHub<TickEvent>()
  class Hubbed extends APIView {
    @Events('/events', { events: TICKS })
    events (_request: unknown, stream: EventStreamContext) { return hub.subscribe({ signal: stream.signal }) }

    @Events('/tight', { events: TICKS })
    tight (_request: unknown, stream: EventStreamContext) {
      return hub.subscribe({ signal: stream.signal, maxQueued: 2 })
    }
  }
  const { port, logs } = await serve(t, { views: [{ view: Hubbed, prefix: '/hub' }] })
  const readers = await Promise.all([0, 1, 2].map(async () => {
    const opening = connect(port, '/hub/events')
    t.ok(await until(() => hub.size > 0))
    return opening
  }))
  t.ok(await until(() => hub.size === 3))
  for (let n = 1; n <= 3; n++) hub.publish({ ...tick(n), id: n })
  const expected = [1, 2, 3].map((n) => `event: tick\nid: ${n}\ndata: {"n":${n}}`)
  t.ok(await until(() => readers.every((reader) => eventsOf(reader.received()).length === 3)))
  for (const reader of readers) t.same(eventsOf(reader.received()), expected, 'every stream, the same events in order')

  const tight = connect(port, '/hub/tight')
  t.ok(await until(() => hub.size === 4))
  // Published in one go, more than the bound: the subscription ends rather than grows.
  for (let n = 4; n <= 10; n++) hub.publish(tick(n))
  const slow = await tight
  t.equal(await slow.closed, false, 'the slow one is cut')
  t.ok(await until(() => logs.length === 1))
  const message = /^More than 2 events waited for this subscriber/
  t.match(logs[0], { level: 40, err: { type: 'SlowSubscriber', message } })
  t.ok(await until(() => readers.every((reader) => eventsOf(reader.received()).length === 10)), 'the others got all')
  t.equal(hub.size, 3)
  for (const reader of readers) reader.destroy()
  t.ok(await until(() => hub.size === 0), 'the clients gone, the hub has no subscriber left')
})

/** One row of an append-only log of changes. */
const Change = Type.Object({ seq: Type.Integer(), text: Type.String() })
interface ChangeT { seq: number, text: string }

/** A view streaming a ChangeFeed's rows as `change` events; `active` counts the streams that run. */
function changesView (feed: ChangeFeed<ChangeT>, active: { now: number, started: number }) {
  async function * asEvents (rows: AsyncIterable<ChangeT>) {
    active.now++
    active.started++
    try {
      for await (const row of rows) yield { event: 'change' as const, id: feed.idOf(row), data: row }
    } finally {
      active.now--
    }
  }
  return class Changes extends APIView {
    @Events('/events', { events: { change: Change } })
    events (_request: unknown, stream: EventStreamContext) {
      return asEvents(feed.follow({ after: stream.lastEventId, signal: stream.signal }))
    }
  }
}

test('a hostile Last-Event-ID: a 400 problem naming the header, before the stream opens', async (t) => {
  const rows = [1, 2, 3, 4, 5].map((seq) => ({ seq, text: `change ${seq}` }))
  const feed = new ChangeFeed(new MemoryRepository<ChangeT>({ rows }), { key: 'seq', poll: 50 })
  const empty = new ChangeFeed(new MemoryRepository<ChangeT>({ rows: [] }), { key: 'seq', poll: 50 })
  const active = { now: 0, started: 0 }
  const { app, port } = await serve(t, {
    views: [
      { view: changesView(feed, active), prefix: '/changes' },
      { view: changesView(empty, active), prefix: '/empty' }
    ]
  })
  const refused = async (url: string, id: string, detail: string, name = id): Promise<void> => {
    const res = await app.inject({ url, headers: { 'last-event-id': id } })
    const body = problem(t, res, 400)
    t.equal(body.detail, 'The Last-Event-ID header is invalid.', `${name}: refused`)
    t.match(body.errors, [{ detail, in: 'header', parameter: 'last-event-id' }], `${name}: the header named`)
  }
  const MALFORMED = 'Not an event id of this stream'
  const malformed = ['abc', '-1', '1.5', '1e3', '0x10', '1'.repeat(16), '9'.repeat(100), '١٢٣', '１２', '12 3', '3;rm']
  for (const id of malformed) {
    await refused('/changes/events', id, MALFORMED)
  }
  await refused('/changes/events', '900', 'Later than the newest event of this stream', "another stream's id, ahead")
  await refused('/empty/events', '1', 'This stream has no events yet', 'an id on a stream with no event')

  // Near Node's 16 KiB limit of a request's headers, over a real socket: refused as any other.
  const huge = await connect(port, '/changes/events', { 'last-event-id': '7'.repeat(16_000) })
  t.equal(huge.res.statusCode, 400, 'a 16,000-digit id: 400')
  // Past the limit, Node answers before the application sees the request.
  const over = await new Promise<string>((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.end(`GET /changes/events HTTP/1.1\r\nHost: x\r\nLast-Event-ID: ${'7'.repeat(17_000)}\r\n\r\n`)
    })
    let text = ''
    socket.on('data', (chunk) => { text += chunk.toString() })
    socket.on('close', () => { resolve(text) })
  })
  t.match(over, /^HTTP\/1\.1 431 /, 'a header past the limit: 431, from Node')

  const ok = async (id: string, expected: number[]): Promise<void> => {
    // The stream stays open for new rows: read what it sent once the catch-up is done.
    const reader = await connect(port, '/changes/events', { 'last-event-id': id })
    t.ok(await until(() => eventsOf(reader.received()).length === expected.length))
    await wait(50)
    t.same(eventsOf(reader.received()).map((event) => Number(/^id: (\d+)$/m.exec(event)?.[1])), expected, `after ${id}`)
    reader.destroy()
  }
  await ok('0', [1, 2, 3, 4, 5])
  await ok('000000000000003', [4, 5])
  await ok('5', [])
  t.ok(await until(() => feed.followers === 0 && active.now === 0), 'every follower gone')
})

test('a reconnect storm: 2,000 connections dropped with a Last-Event-ID leave no follower and no error', async (t) => {
  const rows = Array.from({ length: 50 }, (_, i) => ({ seq: i + 1, text: `change ${i + 1}` }))
  const feed = new ChangeFeed(new MemoryRepository<ChangeT>({ rows }), { key: 'seq', poll: 20 })
  const active = { now: 0, started: 0 }
  const { app, port, logs } = await serve(t, { views: [{ view: changesView(feed, active), prefix: '/changes' }] })
  let received = 0
  /** One client: drops its connection at once, when the headers come, or after some events. */
  const hit = (i: number): Promise<void> => new Promise((resolve) => {
    const request = http.get({
      host: '127.0.0.1', port, path: '/changes/events', agent: false, headers: { 'last-event-id': String(i % 51) }
    }, (res) => {
      if (i % 3 === 1) request.destroy()
      res.on('data', () => {
        received++
        request.destroy()
      })
    })
    if (i % 3 === 0) request.on('socket', (socket) => { socket.on('connect', () => { request.destroy() }) })
    request.on('error', () => {})
    request.on('close', () => { resolve() })
  })
  const started = Date.now()
  let next = 0
  await Promise.all(Array.from({ length: 50 }, async () => {
    while (next < 2_000) await hit(next++)
  }))
  t.comment(`2,000 connections in ${Date.now() - started} ms`)
  t.ok(received > 0 && active.started > 100, `streams ran (${active.started}), events were read (${received})`)
  t.ok(await until(() => feed.followers === 0 && active.now === 0, 5_000),
    `no follower and no stream left (followers ${feed.followers}, streams ${active.now})`)
  const connections = await new Promise<number>((resolve, reject) => {
    app.server.getConnections((error, count) => { if (error === null) resolve(count); else reject(error) })
  })
  t.equal(connections, 0, 'no connection left open')
  t.same(logs.filter((entry) => entry.level >= 50), [], 'nothing logged as an error')
  const reader = await connect(port, '/changes/events', { 'last-event-id': '48' })
  t.ok(await until(() => eventsOf(reader.received()).length === 2), 'the server still streams')
  reader.destroy()
})

test('the document: text/event-stream, each event in x-itemSchema, and it validates', async (t) => {
  class Documented extends GenericViewSet.with({
    responseSchema: Item,
    detailParams: Type.Object({ id: Type.Integer() }),
    repository: new MemoryRepository({ rows: [{ id: 1, name: 'a' }] })
  }) {
    @Events('/events', { events: { created: Item, deleted: ItemId }, summary: 'Item changes, live' })
    async * events () { yield { event: 'deleted' as const, data: { id: 1 } } }

    @Events(undefined, { events: TICKS, detail: true, description: 'One item, watched.' })
    async * watchOne () { yield tick(1) }
  }
  const app = Fastify()
  configureApp(app)
  // As the example's document (test/openapi-lint.test.ts): a server and no security, which the linter asks to be said.
  const license = { name: 'MIT', identifier: 'MIT' }
  const info = { title: 'events', version: '1', description: 'Event streams.', license }
  await app.register(swagger, swaggerOptions({ info, servers: [{ url: '/' }], security: [] }))
  await app.register(views, { views: [{ view: Documented, prefix: '/items' }] })
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject('/items/1/watch-one')).body, 'event: tick\ndata: {"n":1}\n\n',
    'a detail route, its path from the method name')
  const document = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(document), { valid: true })
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId}: ${p.message}`), [], 'no lint error')

  const operation = document.paths['/items/events'].get
  t.equal(operation.summary, 'Item changes, live')
  const ok = operation.responses['200']
  t.same(Object.keys(ok.content), ['text/event-stream'], 'the events, not the view\'s responseSchema')
  const media = ok.content['text/event-stream']
  t.equal(media.schema.type, 'string')
  const items = media['x-itemSchema'].anyOf
  t.same(items.map((item: any) => item.properties.event),
    [{ type: 'string', enum: ['created'] }, { type: 'string', enum: ['deleted'] }],
    'one object for each event, named by its literal')
  for (const item of items) {
    t.same(Object.keys(item.properties).sort(), ['data', 'event', 'id', 'retry'])
    t.same(item.required.sort(), ['data', 'event'])
  }
  t.same(items[1].properties.data.properties, { id: { type: 'integer' } }, "each event's data schema")
  const one = document.paths['/items/{id}/watch-one'].get.responses['200'].content['text/event-stream']['x-itemSchema']
  t.same(one.properties.event.enum, ['tick'], 'a route of one event: that object alone')
})

test('routes built without an application stream too (buildViewRoutes)', async (t) => {
  class Bare extends APIView {
    @Events('/events', { events: TICKS })
    async * events () {
      yield tick(1)
      yield tick(2)
    }
  }
  const app = Fastify()
  configureApp(app)
  for (const route of buildViewRoutes(Bare, { prefix: '/bare' })) app.route(route)
  await app.ready()
  t.teardown(() => app.close())
  t.equal((await app.inject('/bare/events')).body, 'event: tick\ndata: {"n":1}\n\nevent: tick\ndata: {"n":2}\n\n')
})

test('an iterator of its own: no return() to call, and a return() that fails, are both ended quietly', async (t) => {
  let returns = 0
  const once = (withReturn: boolean): AsyncIterable<TickEvent> => ({
    [Symbol.asyncIterator] () {
      let n = 0
      return {
        next: async () => n++ < 2 ? { done: false, value: tick(n) } : { done: true, value: undefined },
        ...withReturn
          ? {
              return: async (): Promise<IteratorResult<TickEvent>> => {
                returns++
                throw new Error('return failed')
              }
            }
          : {}
      }
    }
  })
  class Own extends APIView {
    @Events('/plain', { events: TICKS })
    plain () { return once(false) }

    @Events('/returning', { events: TICKS })
    returning () { return once(true) }
  }
  const { app, logs } = await serve(t, { views: [{ view: Own, prefix: '/own' }] })
  for (const path of ['plain', 'returning']) {
    const body = (await app.inject(`/own/${path}`)).body
    t.equal(body, 'event: tick\ndata: {"n":1}\n\nevent: tick\ndata: {"n":2}\n\n', path)
  }
  t.equal(returns, 1, 'return() was called once')
  t.same(logs, [], 'and its failure is no error of the stream')
})

test('content sent with the GET of a stream is ignored unread, as on any GET; one refused is a 415 before the method', async (t) => {
  let calls = 0
  class Content extends APIView {
    @Events('/events', { events: { note: Type.String() } })
    async * events () {
      calls++
      yield { event: 'note' as const, data: 'hi' }
    }

    @Events('/strict', { events: { note: Type.String() }, unexpectedContent: 'refuse' })
    async * strict () {
      calls++
      yield { event: 'note' as const, data: 'hi' }
    }
  }
  const { app } = await serve(t, { views: [{ view: Content, prefix: '/content' }] })
  for (const type of ['application/json', 'application/xml', 'text/plain']) {
    const res = await app.inject({ method: 'GET', url: '/content/events', headers: { 'content-type': type }, payload: '{"a":1}' })
    t.same([res.statusCode, res.body], [200, 'event: note\ndata: "hi"\n\n'], `${type}: the stream, the content ignored`)
  }
  const refused = await app.inject({ method: 'GET', url: '/content/strict', headers: { 'content-type': 'application/json' }, payload: '{}' })
  t.equal(refused.statusCode, 415, 'a route that refuses content: 415')
  t.equal(calls, 3, 'the refusing route\'s method never ran')
})

test('an event stream with headers of its own: they are validated and documented beside Last-Event-ID', async (t) => {
  const Room = Type.Object({ 'x-room': Type.String({ minLength: 1 }) })
  class Rooms extends APIView {
    @Events('/events', { events: { note: Type.String() }, schema: { headers: Room } })
    async * events (request: { headers: { 'x-room': string } }) {
      yield { event: 'note' as const, data: request.headers['x-room'] }
    }
  }
  const app = Fastify()
  configureApp(app)
  await app.register(swagger, swaggerOptions({ info: { title: 'rooms', version: '1' } }))
  await app.register(views, { views: [{ view: Rooms, prefix: '/rooms' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/rooms/events', headers: { 'x-room': 'blue' } })).body, 'event: note\ndata: "blue"\n\n')
  problem(t, await app.inject('/rooms/events'), 400)
  type Parameter = { name: string, in: string, required?: boolean }
  const doc = app.swagger() as { paths: Record<string, { get: { parameters: Parameter[] } }> }
  t.same(doc.paths['/rooms/events'].get.parameters.filter((p) => p.in === 'header').map((p) => [p.name, p.required === true]),
    [['last-event-id', false], ['x-room', true]], 'both headers, the route\'s own required')
})
