/**
 * The server of the streams benchmark, forked by `run.js` with one argument (a `ServerMode`, JSON):
 * one Fastify app on 127.0.0.1 with the routes of one part, its memory sampled every SAMPLE_MS and
 * read over IPC, so that what is measured is this process alone, not the clients'.
 *
 *   sse   `GET /views`: an `@Events` route with the library's defaults returning `hub.subscribe()`;
 *         `GET /hand`: the same events written by hand (`reply.hijack()`, `res.write` of each
 *         event's text, one heartbeat timer for all); `GET /hand-stream`: by hand through Fastify's
 *         stream path (`reply.send` of a `Readable` per connection, the text pushed to each).
 *         `publish` sends one tick to every stream.
 *   slow  `GET /slow`: an `@Events` route with the defaults whose method yields 1 KiB events as fast
 *         as it is asked (`generator`), or reads a hub published to 10,000 times a second (`hub`).
 *   rows  `GET /views/items`, `/views-10k/items`: a generic list view over SqliteRepository or
 *         PostgresRepository with `listStream` (default pageSize, and 10,000), asked for NDJSON;
 *         `/hand/items`, `/hand-json/items`: the same rows by hand (keyset pages of 1,000,
 *         fast-json-stringify or JSON.stringify per row, `reply.send` of a `Readable`);
 *         `/hand-lib-sql/items`: by hand with the text of the library's page query.
 */
import type { ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import { Readable } from 'node:stream'
import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify'
import fastJson from 'fast-json-stringify'
import pg from 'pg'
import { APIView, Events, views } from '../../lib/index.js'
import { AsyncGenericListAPIView, GenericListAPIView } from '../../lib/generics.js'
import { EventHub } from '../../lib/streams.js'
import { PostgresRepository, SqliteRepository, type SqlTableOptions } from '../../lib/stores/sql/index.js'
import type { EventStreamContext } from '../../lib/types.js'
import {
  COLUMNS, Chunk, Row, SAMPLE_MS, Tick, now,
  type FromServer, type Memory, type PeakReport, type ServerMode, type SlowStream, type ToServer
} from './common.js'

if (process.send === undefined) {
  console.error('benchmarks/streams/server.js is started by benchmarks/streams/run.js (child_process.fork)')
  process.exit(1)
}
const send = (message: FromServer): void => { process.send!(message) }
const mode = JSON.parse(process.argv[2]) as ServerMode

// ---------------------------------------------------------------------------
// Memory, sampled

function memory (): Memory {
  const { rss, heapUsed, heapTotal, external, arrayBuffers } = process.memoryUsage()
  return { rss, heapUsed, heapTotal, external, arrayBuffers }
}

let samples: Array<[number, number, number]> = []
let cpu = process.cpuUsage()
setInterval(() => {
  const { rss, heapUsed } = process.memoryUsage()
  samples.push([now(), rss, heapUsed])
}, SAMPLE_MS)

/** The samples since the last call, and the CPU time since then. */
function peak (): PeakReport {
  const taken = samples
  // The next period starts with a sample of now, so that a loop that does not turn from here shows as a gap.
  samples = [[now(), process.memoryUsage.rss(), process.memoryUsage().heapUsed]]
  const used = process.cpuUsage(cpu)
  cpu = process.cpuUsage()
  const { rss, heapUsed } = process.memoryUsage()
  taken.push([now(), rss, heapUsed])
  return {
    rss: Math.max(...taken.map((s) => s[1])),
    heapUsed: Math.max(...taken.map((s) => s[2])),
    samples: taken,
    cpuMicros: used.user + used.system,
    maxRss: process.resourceUsage().maxRSS * 1024
  }
}

/** A full collection, twice (the second takes what the first's finalizers let go), when `--expose-gc` is on. */
function collect (): void {
  const gc = (globalThis as { gc?: () => void }).gc
  gc?.()
  gc?.()
}

// ---------------------------------------------------------------------------
// sse: one hub, many idle streams

type TickEvent = { event: 'tick', data: Tick }
const hub = new EventHub<TickEvent>()
const handStreams = new Set<ServerResponse>()
const handOutputs = new Set<Readable>()
const serializeTick = fastJson(Tick)

async function sse (app: FastifyInstance, variant: 'views' | 'hand' | 'hand-stream'): Promise<() => number> {
  if (variant === 'views') {
    class Feed extends APIView {
      // The library's defaults: heartbeat 15 s, maxBufferedBytes 64 KiB, stallTimeout 30 s, openAfter 1 s.
      @Events('/', { events: { tick: Tick } })
      ticks (_request: unknown, stream: EventStreamContext) {
        return hub.subscribe({ signal: stream.signal })
      }
    }
    await app.register(views, { views: [{ view: Feed, prefix: '/views' }] })
    return () => hub.size
  }
  if (variant === 'hand-stream') {
    // By hand through Fastify's stream path, as the library's route answers: `reply.send` of a Readable per connection.
    app.get('/hand-stream', (_request, reply) => {
      const output = new Readable({ read () {} })
      output.push(':\n\n')
      handOutputs.add(output)
      reply.raw.once('close', () => { handOutputs.delete(output) })
      reply.header('content-type', 'text/event-stream; charset=utf-8').header('cache-control', 'no-cache').header('x-accel-buffering', 'no')
      reply.send(output)
    })
    setInterval(() => {
      for (const output of handOutputs) if (output.readableLength === 0) output.push(':\n\n')
    }, 15_000).unref()
    return () => handOutputs.size
  }
  // The floor: what a hand-written route keeps per connection (the response, and its place in a set).
  app.get('/hand', (_request, reply) => {
    reply.hijack()
    const res = reply.raw
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache', 'x-accel-buffering': 'no' })
    res.write(':\n\n')
    handStreams.add(res)
    res.once('close', () => { handStreams.delete(res) })
  })
  setInterval(() => {
    for (const res of handStreams) if (!res.writableNeedDrain) res.write(':\n\n')
  }, 15_000).unref()
  return () => handStreams.size
}

/** Publishes tick `seq` to every stream; resolves with the time from `publish` until every write was made. */
async function publish (seq: number): Promise<{ t: number, fanOutNs: number }> {
  const t = now()
  if (mode.part === 'sse' && mode.variant === 'hand') {
    const text = `event: tick\ndata: ${serializeTick({ seq, t })}\n\n`
    for (const res of handStreams) res.write(text)
  } else if (mode.part === 'sse' && mode.variant === 'hand-stream') {
    const text = `event: tick\ndata: ${serializeTick({ seq, t })}\n\n`
    for (const output of handOutputs) output.push(text)
  } else {
    hub.publish({ event: 'tick', data: { seq, t } })
  }
  // The hub hands the event over in promise reactions: every stream has written it before the next turn of the loop.
  await new Promise((resolve) => { setImmediate(resolve) })
  return { t, fanOutNs: now() - t }
}

// ---------------------------------------------------------------------------
// slow: a fast producer, a client that does not read

const slowStreams: SlowStream[] = []
const KIB = 'x'.repeat(1000)
const chunkHub = new EventHub<{ event: 'chunk', data: Chunk }>()

/** An event's bytes as the stream writes it (`event:` and `data:` lines, a blank line). */
const eventBytes = (n: number): number => `event: chunk\ndata: ${JSON.stringify({ n, text: KIB })}\n\n`.length

async function * produce (record: SlowStream): AsyncGenerator<{ event: 'chunk', data: Chunk }> {
  for (let n = 0; ; n++) {
    record.lastPull = now()
    record.events++
    record.bytes += eventBytes(n)
    yield { event: 'chunk', data: { n, text: KIB } }
  }
}

async function * relay (record: SlowStream, signal: AbortSignal): AsyncGenerator<{ event: 'chunk', data: Chunk }> {
  for await (const event of chunkHub.subscribe({ signal })) {
    record.lastPull = now()
    record.events++
    record.bytes += eventBytes(event.data.n)
    yield event
  }
}

async function slow (app: FastifyInstance, variant: 'generator' | 'hub'): Promise<() => number> {
  class Feed extends APIView {
    // The library's defaults.
    @Events('/', { events: { chunk: Chunk } })
    chunks (this: Feed, request: FastifyRequest, stream: EventStreamContext) {
      const record: SlowStream = {
        started: now(), lastPull: now(), aborted: undefined, events: 0, bytes: 0, socketBytes: undefined, trace: []
      }
      slowStreams.push(record)
      const socket = request.raw.socket
      const response = this.reply.raw
      const trace = setInterval(() => {
        const at = (now() - record.started) / 1e6
        record.trace.push([at, socket.bytesWritten, socket.writableLength, response.writableNeedDrain])
      }, 1000)
      stream.signal.addEventListener('abort', () => { record.aborted = now(); clearInterval(trace) }, { once: true })
      socket.once('close', () => { record.socketBytes = socket.bytesWritten })
      return variant === 'generator' ? produce(record) : relay(record, stream.signal)
    }
  }
  await app.register(views, { views: [{ view: Feed, prefix: '/slow' }] })
  if (variant === 'hub') {
    // 10 events of 1 KiB every millisecond, to every subscriber: 10,000 a second.
    let n = 0
    setInterval(() => { for (let i = 0; i < 10; i++) chunkHub.publish({ event: 'chunk', data: { n: n++, text: KIB } }) }, 1).unref()
  }
  // The hub's subscribers, or the streams not cut yet.
  return variant === 'hub' ? () => chunkHub.size : () => slowStreams.filter((s) => s.aborted === undefined).length
}

// ---------------------------------------------------------------------------
// rows: a million rows as NDJSON

const PAGE = 1000
const TABLE = { table: 'items', columns: [...COLUMNS] } satisfies SqlTableOptions<Row>
const serializeRow = fastJson(Row)

/** A hand-written streamed route: keyset pages of PAGE rows read by `page(after)`, each row serialized, one chunk per page. */
function handRoute (app: FastifyInstance, path: string, page: (after: number) => Row[] | Promise<Row[]>,
  serialize: (row: Row) => string): void {
  app.get(path, (_request, reply) => {
    async function * chunks (): AsyncGenerator<string> {
      let after = 0
      for (;;) {
        const rows = await page(after)
        if (rows.length === 0) return
        let text = ''
        for (const row of rows) text += serialize(row) + '\n'
        yield text
        if (rows.length < PAGE) return
        after = rows[rows.length - 1].id
      }
    }
    reply.type('application/x-ndjson; charset=utf-8')
    return reply.send(Readable.from(chunks(), { objectMode: false, highWaterMark: 65_536 }))
  })
}

/** The text of the library's page query after the first page, as `STREAMS_LOG_SQL=1` prints it. */
const LIB_AFTER_SQL = {
  sqlite: 'SELECT "id", "name", "price", "updated_at" FROM "items" WHERE ((("id" > ? OR "id" IS NULL))) ORDER BY "id" ASC NULLS LAST LIMIT 1000',
  pg: 'SELECT "id", "name", "price", "updated_at" FROM "items" WHERE ((("id" > $1 OR "id" IS NULL))) ORDER BY "id" ASC NULLS LAST LIMIT 1000'
}

async function rows (app: FastifyInstance, database: 'sqlite' | 'pg', where: string): Promise<() => number> {
  const log = process.env.STREAMS_LOG_SQL === '1'
  if (database === 'sqlite') {
    const db = new Database(where, { readonly: true })
    if (log) {
      const prepare = db.prepare.bind(db)
      db.prepare = ((sql: string) => { console.error(`[sql] ${sql}`); return prepare(sql) }) as typeof db.prepare
    }
    const repository = new SqliteRepository<Row>(db, TABLE)
    class Items extends GenericListAPIView.with({ responseSchema: Row, repository }) {
      static override listStream = true
    }
    class Items10k extends GenericListAPIView.with({ responseSchema: Row, repository }) {
      static override listStream = { pageSize: 10_000 }
    }
    await app.register(views, { views: [{ view: Items, prefix: '/views/items' }, { view: Items10k, prefix: '/views-10k/items' }] })
    const first = db.prepare('SELECT id, name, price, updated_at FROM items ORDER BY id LIMIT 1000')
    const next = db.prepare('SELECT id, name, price, updated_at FROM items WHERE id > ? ORDER BY id LIMIT 1000')
    const page = (after: number): Row[] => (after === 0 ? first.all() : next.all(after)) as Row[]
    handRoute(app, '/hand/items', page, serializeRow)
    handRoute(app, '/hand-json/items', page, JSON.stringify)
    const libNext = db.prepare(LIB_AFTER_SQL.sqlite)
    const libPage = (after: number): Row[] => (after === 0 ? first.all() : libNext.all(after)) as Row[]
    handRoute(app, '/hand-lib-sql/items', libPage, serializeRow)
  } else {
    const pool = new pg.Pool({ connectionString: where })
    pool.on('error', () => {})
    if (log) pool.on('connect', (client) => { client.on('notice', () => {}) })
    if (log) {
      const query = pg.Client.prototype.query
      pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
        console.error(`[sql] ${typeof args[0] === 'string' ? args[0] : String((args[0] as { text?: unknown }).text)}`)
        return (query as (...a: unknown[]) => unknown).apply(this, args)
      } as typeof query
    }
    const repository = new PostgresRepository<Row>(pool, TABLE)
    class Items extends AsyncGenericListAPIView.with({ responseSchema: Row, repository }) {
      static override listStream = true
    }
    class Items10k extends AsyncGenericListAPIView.with({ responseSchema: Row, repository }) {
      static override listStream = { pageSize: 10_000 }
    }
    await app.register(views, { views: [{ view: Items, prefix: '/views/items' }, { view: Items10k, prefix: '/views-10k/items' }] })
    const page = async (after: number): Promise<Row[]> => (after === 0
      ? await pool.query<Row>('SELECT id, name, price, updated_at FROM items ORDER BY id LIMIT 1000')
      : await pool.query<Row>('SELECT id, name, price, updated_at FROM items WHERE id > $1 ORDER BY id LIMIT 1000', [after])).rows
    handRoute(app, '/hand/items', page, serializeRow)
    handRoute(app, '/hand-json/items', page, JSON.stringify)
    handRoute(app, '/hand-lib-sql/items', async (after) => (after === 0
      ? await pool.query<Row>('SELECT id, name, price, updated_at FROM items ORDER BY id LIMIT 1000')
      : await pool.query<Row>(LIB_AFTER_SQL.pg, [after])).rows, serializeRow)
    // A first connection before the baseline is read, as a warm server has.
    await pool.query('SELECT 1')
  }
  // What another client asks meanwhile: how long it waits while a stream is sent.
  app.get('/ping', async () => 'pong')
  return () => 0
}

// ---------------------------------------------------------------------------

/** What Fastify logs (warnings and errors): a stream cut is logged with its reason. */
const logged: string[] = []
const app = Fastify({
  logger: { level: 'warn', stream: { write (line: string) { logged.push(line) } } }
})
let count: () => number
if (mode.part === 'sse') count = await sse(app, mode.variant)
else if (mode.part === 'slow') count = await slow(app, mode.variant)
else count = await rows(app, mode.database, mode.database === 'sqlite' ? mode.file : mode.url)
await app.listen({ port: 0, host: '127.0.0.1', backlog: 4096 })
collect()
const port = (app.server.address() as AddressInfo).port

process.on('message', (message: ToServer) => {
  switch (message.type) {
    case 'memory':
      if (message.gc) collect()
      send({ type: 'memory', id: message.id, memory: memory(), streams: count() })
      break
    case 'peak':
      send({ type: 'peak', id: message.id, report: peak() })
      break
    case 'publish':
      publish(message.seq).then(({ t, fanOutNs }) => {
        send({ type: 'published', id: message.id, seq: message.seq, t, fanOutNs })
      }, (error: unknown) => { throw error })
      break
    case 'slow-report': {
      const log = logged.splice(0).map((line) => {
        const parsed = JSON.parse(line) as { msg?: string, err?: { type?: string, message?: string } }
        return parsed.err === undefined ? String(parsed.msg) : `${String(parsed.err.type)}: ${String(parsed.err.message)}`
      })
      send({ type: 'slow-report', id: message.id, streams: slowStreams, log })
      break
    }
    case 'exit':
      // Not app.close(): the hand-written streams would hold it open; the runner reads nothing more.
      process.exit(0)
  }
})
send({ type: 'ready', port, memory: memory() })
