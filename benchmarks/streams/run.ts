/**
 * The streams benchmark (`npm run bench:streams`, docs/performance.md, "Streams"): event streams and
 * streamed lists, each against what the same work costs by hand. Every server runs in a child process
 * of its own (`server.js`), its memory read there (`process.memoryUsage()`, after a full GC for the
 * steady figures, sampled every 50 ms for the peaks); the clients are other processes.
 *
 *   sse          STREAMS_CONNECTIONS idle event streams from STREAMS_CLIENTS client processes
 *                (`sse-client.js`, raw sockets): memory per connection; then STREAMS_TICKS ticks
 *                published once each to every stream, the delay from `publish` to each arrival;
 *                the CPU of a heartbeat period; the memory once they are closed. The `@Events`
 *                route with its defaults over an `EventHub`, and a hand-written route.
 *   slow         clients that read one byte a second from an `@Events` route whose method yields
 *                1 KiB events as fast as it is asked (1 and STREAMS_SLOW_READERS of them), and one
 *                that reads a hub published to 10,000 times a second: the server's peak memory, and
 *                when and why each stream was cut.
 *   rows-sqlite  STREAMS_ROWS rows of a SQLite file (better-sqlite3, SqliteRepository) as NDJSON:
 *                rows/s and the server's peak RSS, the view with `listStream` against the
 *                hand-written route, STREAMS_REPS fresh servers each, interleaved.
 *   rows-pg      the same from PostgreSQL (PostgresRepository over a pg pool; a throwaway server,
 *                test/pg-server.ts).
 *
 * Settings (environment): STREAMS_PARTS (sse,slow,rows-sqlite,rows-pg), STREAMS_CONNECTIONS (10000),
 * STREAMS_CLIENTS (2), STREAMS_TICKS (20), STREAMS_IDLE (16 s: a heartbeat period and a second),
 * STREAMS_SLOW_READERS (100), STREAMS_ROWS (1000000), STREAMS_REPS (3), STREAMS_ROW_VARIANTS
 * (views,hand,hand-json,views-10k), STREAMS_JSON (a file for every raw figure).
 */
import { execFileSync, fork, type ChildProcess } from 'node:child_process'
import { createHash } from 'node:crypto'
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import http from 'node:http'
import net from 'node:net'
import os from 'node:os'
import { dirname, join } from 'node:path'
import { setTimeout as sleep } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import Database from 'better-sqlite3'
import pg from 'pg'
import { startPostgres, type PgServer } from '../../test/pg-server.js'
import { fixed, integer, median, table } from '../stats.js'
import { SAMPLE_MS, rowOf, type FromServer, type Memory, type PeakReport, type ServerMode, type SlowStream, type ToServer } from './common.js'
import type { FromClient, ToClient } from './sse-client.js'

const here = dirname(fileURLToPath(import.meta.url))
const env = (name: string, fallback: string): string => process.env[name] ?? fallback
const PARTS = env('STREAMS_PARTS', 'sse,slow,rows-sqlite,rows-pg').split(',')
const CONNECTIONS = Number(env('STREAMS_CONNECTIONS', '10000'))
const CLIENTS = Number(env('STREAMS_CLIENTS', '2'))
const TICKS = Number(env('STREAMS_TICKS', '20'))
const IDLE_S = Number(env('STREAMS_IDLE', '16'))
const SLOW_READERS = Number(env('STREAMS_SLOW_READERS', '100'))
const ROWS = Number(env('STREAMS_ROWS', '1000000'))
const REPS = Number(env('STREAMS_REPS', '3'))
const ROW_VARIANTS = env('STREAMS_ROW_VARIANTS', 'views,hand,hand-json,views-10k').split(',')
/** The library measured: the commit, and whether lib/ differed from it (the build compiles the working tree). */
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8' }).trim() +
  (execFileSync('git', ['status', '--porcelain', '--', 'lib'], { encoding: 'utf8' }).trim() === '' ? '' : ' with uncommitted changes in lib/')
const raw: Record<string, unknown> = {
  commit, node: process.version, cpus: os.cpus().length, cpu: os.cpus()[0]?.model, memory: os.totalmem()
}

const KiB = 1024
const MiB = 1024 * 1024
const mib = (bytes: number): string => fixed(bytes / MiB, 1)
const ms = (ns: number): string => fixed(ns / 1e6, ns < 10e6 ? 2 : 1)
/** The machine's load average (1, 5, 15 min): this benchmark's processes and any other work. */
const load = (): string => `load average ${os.loadavg().map((l) => fixed(l, 1)).join(', ')}`

/** CPU time the whole machine spent busy so far (µs, from /proc/stat), to tell what other processes used during a run. */
function machineBusyMicros (): number {
  const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number)
  // USER_HZ is 100 on Linux.
  return (user + nice + system + irq + softirq + steal) * 1e4
}

/** This process's CPU time so far (µs). */
function ownCpuMicros (): number {
  const { user, system } = process.cpuUsage()
  return user + system
}

/** The value at quantile q of sorted values (nearest rank). */
function quantile (sorted: Float64Array | number[], q: number): number {
  if (sorted.length === 0) return Number.NaN
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]
}

// ---------------------------------------------------------------------------
// The server process

class ServerProcess {
  readonly #child: ChildProcess
  readonly #waiting = new Map<number, (message: FromServer) => void>()
  #id = 0
  port = 0
  ready!: Memory
  get pid (): number { return this.#child.pid! }

  private constructor (child: ChildProcess) {
    this.#child = child
    child.on('message', (message: FromServer) => {
      if ('id' in message) {
        const resolve = this.#waiting.get(message.id)
        this.#waiting.delete(message.id)
        resolve?.(message)
      }
    })
  }

  static async start (mode: ServerMode): Promise<ServerProcess> {
    const child = fork(join(here, 'server.js'), [JSON.stringify(mode)], {
      execArgv: ['--expose-gc'],
      stdio: ['ignore', 'inherit', 'inherit', 'ipc']
    })
    const server = new ServerProcess(child)
    await new Promise<void>((resolve, reject) => {
      child.once('exit', (code) => { reject(new Error(`the server exited (${String(code)}) before it was ready`)) })
      child.on('message', (message: FromServer) => {
        if (message.type === 'ready') { server.port = message.port; server.ready = message.memory; resolve() }
      })
    })
    return server
  }

  async ask<T extends FromServer['type']> (message: ToServer & { id: number }): Promise<Extract<FromServer, { type: T }>> {
    return new Promise((resolve) => {
      this.#waiting.set(message.id, resolve as (message: FromServer) => void)
      this.#child.send(message)
    })
  }

  async memory (gc = true): Promise<{ memory: Memory, streams: number }> {
    return this.ask<'memory'>({ type: 'memory', id: ++this.#id, gc })
  }

  async peak (): Promise<PeakReport> {
    return (await this.ask<'peak'>({ type: 'peak', id: ++this.#id })).report
  }

  async publish (seq: number): Promise<{ t: number, fanOutNs: number }> {
    return this.ask<'published'>({ type: 'publish', id: ++this.#id, seq })
  }

  async slowReport (): Promise<{ streams: SlowStream[], log: string[] }> {
    return this.ask<'slow-report'>({ type: 'slow-report', id: ++this.#id })
  }

  async stop (): Promise<void> {
    const exited = new Promise((resolve) => { this.#child.once('exit', resolve) })
    this.#child.send({ type: 'exit' } satisfies ToServer)
    await exited
  }
}

// ---------------------------------------------------------------------------
// sse: idle connections, fan-out

class ClientProcess {
  readonly child: ChildProcess
  readonly #handlers = new Set<(message: FromClient) => void>()

  constructor (port: number, path: string, count: number) {
    this.child = fork(join(here, 'sse-client.js'), [String(port), path, String(count), '500'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] })
    this.child.on('message', (message: FromClient) => { for (const handler of this.#handlers) handler(message) })
  }

  async request<T extends FromClient['type']> (message: ToClient, answer: T): Promise<Extract<FromClient, { type: T }>> {
    return new Promise((resolve) => {
      const handler = (reply: FromClient): void => {
        if (reply.type !== answer) return
        this.#handlers.delete(handler)
        resolve(reply as Extract<FromClient, { type: T }>)
      }
      this.#handlers.add(handler)
      this.child.send(message)
    })
  }

  /** Expects tick `seq`: resolves once the client is listening for it, with a promise of its arrivals (in an object: an async function adopts a promise it returns). */
  async expect (seq: number): Promise<{ arrivals: Promise<Extract<FromClient, { type: 'arrivals' }>> }> {
    const arrivals = new Promise<Extract<FromClient, { type: 'arrivals' }>>((resolve) => {
      const handler = (reply: FromClient): void => {
        if (reply.type === 'arrivals' && reply.seq === seq) { this.#handlers.delete(handler); resolve(reply) }
      }
      this.#handlers.add(handler)
    })
    await this.request({ type: 'expect', seq }, 'expecting')
    return { arrivals }
  }

  async close (): Promise<void> {
    const exited = new Promise((resolve) => { this.child.once('exit', resolve) })
    this.child.send({ type: 'close' } satisfies ToClient)
    await exited
  }
}

interface SseResult {
  variant: string
  connections: number
  connectMs: number
  before: Memory
  connected: Memory
  afterTicks: Memory
  afterIdle: Memory
  closed: Memory
  streamsOpen: number
  streamsAfterClose: number
  idleCpuMicros: number
  idlePeakRss: number
  ticks: Array<{
    seq: number, p50: number, p99: number, max: number, arrived: number, missing: number, fanOutNs: number
  }>
  pooled: { p50: number, p99: number, max: number }
}

async function sse (variant: 'views' | 'hand' | 'hand-stream'): Promise<SseResult> {
  const server = await ServerProcess.start({ part: 'sse', variant })
  try {
    const before = (await server.memory()).memory
    const per = Math.ceil(CONNECTIONS / CLIENTS)
    const clients = Array.from({ length: CLIENTS }, (_, i) => new ClientProcess(server.port, `/${variant}`, Math.min(per, CONNECTIONS - i * per)))
    const started = performance.now()
    const opened = await Promise.all(clients.map((client) => client.request({ type: 'connect' }, 'connected')))
    const connectMs = performance.now() - started
    const total = opened.reduce((sum, o) => sum + o.opened, 0)
    if (total !== CONNECTIONS) throw new Error(`${variant}: ${total} of ${CONNECTIONS} connections opened (${opened.map((o) => o.failed).join(', ')} failed)`)
    await sleep(2000)
    const connected = await server.memory()
    const ticks: SseResult['ticks'] = []
    const all: number[] = []
    for (let seq = 1; seq <= TICKS; seq++) {
      const listening = await Promise.all(clients.map((client) => client.expect(seq)))
      const published = await server.publish(seq)
      const answers = await Promise.all(listening.map((l) => l.arrivals))
      const delays = Float64Array.from(answers.flatMap((a) => a.delaysNs)).sort()
      for (const d of delays) all.push(d)
      ticks.push({
        seq,
        p50: quantile(delays, 0.5),
        p99: quantile(delays, 0.99),
        max: delays[delays.length - 1],
        arrived: delays.length,
        missing: answers.reduce((sum, a) => sum + a.missing, 0),
        fanOutNs: published.fanOutNs
      })
      await sleep(300)
    }
    const afterTicks = (await server.memory()).memory
    await server.peak()
    await sleep(IDLE_S * 1000)
    const idle = await server.peak()
    const afterIdle = (await server.memory()).memory
    await Promise.all(clients.map((client) => client.close()))
    await sleep(3000)
    const closed = await server.memory()
    const sorted = Float64Array.from(all).sort()
    return {
      variant,
      connections: total,
      connectMs,
      before,
      connected: connected.memory,
      afterTicks,
      afterIdle,
      closed: closed.memory,
      streamsOpen: connected.streams,
      streamsAfterClose: closed.streams,
      idleCpuMicros: idle.cpuMicros,
      idlePeakRss: idle.rss,
      ticks,
      pooled: { p50: quantile(sorted, 0.5), p99: quantile(sorted, 0.99), max: sorted[sorted.length - 1] }
    }
  } finally {
    await server.stop()
  }
}

function reportSse (results: SseResult[]): void {
  console.log(`\n## Idle event streams: ${integer(CONNECTIONS)} connections from ${CLIENTS} client processes\n`)
  console.log('Server memory after a full GC, in the server process; per connection = (connected − before) / connections.\n')
  console.log(table(['route', 'RSS before', 'RSS connected', 'RSS per conn.', 'heapUsed per conn.', 'external per conn.', 'after ticks + idle: RSS / heapUsed', 'closed: RSS / heapUsed (streams left)'],
    results.map((r) => [
      r.variant,
      `${mib(r.before.rss)} MiB`,
      `${mib(r.connected.rss)} MiB`,
      `${fixed((r.connected.rss - r.before.rss) / r.connections / KiB, 2)} KiB`,
      `${fixed((r.connected.heapUsed - r.before.heapUsed) / r.connections / KiB, 2)} KiB`,
      `${fixed((r.connected.external - r.before.external) / r.connections / KiB, 2)} KiB`,
      `${mib(r.afterIdle.rss)} / ${mib(r.afterIdle.heapUsed)} MiB`,
      `${mib(r.closed.rss)} / ${mib(r.closed.heapUsed)} MiB (${r.streamsAfterClose})`
    ]), [false, true, true, true, true, true, true, true]))
  console.log(`\nFan-out: one event published to every stream, ${TICKS} times; delay from publish to each client's read (ms).\n`)
  console.log(table(['route', 'p50: median over ticks (range)', 'p99: median (range)', 'max: median (largest)', 'pooled p50 / p99 / max', 'server: publish → last write, median (range)', 'missing'],
    results.map((r) => {
      const p50 = r.ticks.map((t) => t.p50)
      const p99 = r.ticks.map((t) => t.p99)
      const mx = r.ticks.map((t) => t.max)
      const fan = r.ticks.map((t) => t.fanOutNs)
      const range = (v: number[]): string => `${ms(Math.min(...v))}–${ms(Math.max(...v))}`
      return [
        r.variant,
        `${ms(median(p50))} (${range(p50)})`,
        `${ms(median(p99))} (${range(p99)})`,
        `${ms(median(mx))} (${ms(Math.max(...mx))})`,
        `${ms(r.pooled.p50)} / ${ms(r.pooled.p99)} / ${ms(r.pooled.max)}`,
        `${ms(median(fan))} (${range(fan)})`,
        String(r.ticks.reduce((sum, t) => sum + t.missing, 0))
      ]
    }), [false, true, true, true, true, true, true]))
  console.log(`\nIdle: server CPU over ${IDLE_S} s with every connection open (one heartbeat each): ` +
    results.map((r) => `${r.variant} ${fixed(r.idleCpuMicros / 1000, 0)} ms (${fixed(r.idleCpuMicros / r.connections, 1)} µs per connection), peak RSS ${mib(r.idlePeakRss)} MiB`).join('; '))
  console.log('Connecting: ' + results.map((r) => `${r.variant} ${fixed(r.connectMs / 1000, 1)} s`).join('; '))
}

// ---------------------------------------------------------------------------
// slow: readers of one byte a second

interface SlowResult {
  variant: string
  readers: number
  before: Memory
  /** 10 s after the readers connected, every stream stalled: after a full GC; and the hub's subscribers or the streams not cut then. */
  stalled: Memory
  stalledStreams: number
  peakRss: number
  peakHeapUsed: number
  after: Memory
  streams: SlowStream[]
  log: string[]
  clientBytes: number[]
  waitedMs: number
}

/** A client that reads one byte a second: what it takes from its socket, one byte at a time. */
function slowReader (port: number, read: { bytes: number }): net.Socket {
  // A high-water mark of one byte: the socket takes one read from the kernel, then nothing until that is consumed.
  // Node passes the option to the socket's stream; @types/node leaves it out of the constructor's options.
  const socket = new net.Socket({ readableHighWaterMark: 1 } as unknown as net.SocketConstructorOpts)
  socket.connect(port, '127.0.0.1', () => {
    socket.write(`GET /slow HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nAccept: text/event-stream\r\n\r\n`)
  })
  socket.on('error', () => {})
  const timer = setInterval(() => {
    if (socket.read(1) !== null) read.bytes++
  }, 1000)
  socket.once('close', () => { clearInterval(timer) })
  return socket
}

async function slow (variant: 'generator' | 'hub', readers: number): Promise<SlowResult> {
  const server = await ServerProcess.start({ part: 'slow', variant })
  try {
    const before = (await server.memory()).memory
    await server.peak()
    const reads = Array.from({ length: readers }, () => ({ bytes: 0 }))
    const sockets = reads.map((read) => slowReader(server.port, read))
    const started = performance.now()
    // Every stream stalled long since: what the server holds for them (after a GC).
    await sleep(10_000)
    const stalled = await server.memory()
    // Until every stream was cut on the server (a stall is judged every 15 s: 30 to 45 s), at most 100 s.
    let report = await server.slowReport()
    const log: string[] = []
    while (performance.now() - started < 100_000) {
      await sleep(1000)
      report = await server.slowReport()
      log.push(...report.log)
      const ended = report.streams.every((s) => s.aborted !== undefined && s.socketBytes !== undefined)
      if (report.streams.length === readers && ended) break
    }
    const waitedMs = performance.now() - started
    await sleep(1000)
    log.push(...(await server.slowReport()).log)
    const peak = await server.peak()
    for (const socket of sockets) socket.destroy()
    await sleep(500)
    const after = (await server.memory()).memory
    return {
      variant,
      readers,
      before,
      stalled: stalled.memory,
      stalledStreams: stalled.streams,
      peakRss: peak.rss,
      peakHeapUsed: peak.heapUsed,
      after,
      streams: report.streams,
      log,
      clientBytes: reads.map((r) => r.bytes),
      waitedMs
    }
  } finally {
    await server.stop()
  }
}

function reportSlow (results: SlowResult[]): void {
  console.log('\n## Slow readers: one byte a second, against a producer as fast as it is asked\n')
  console.log('Held: 10 s after the readers connected (every stream stalled), after a full GC. Peak: sampled every 50 ms, garbage included.\n')
  console.log(table(['producer', 'readers', 'RSS before', 'held: heapUsed (per stream)', 'held: RSS', 'peak RSS (− before)', 'peak heapUsed (− before)',
    'produced per stream', 'socket wrote per stream', 'last pull → cut, median (range)', 'open → cut', 'cut', 'after, RSS / heapUsed'],
  results.map((r) => {
    const cut = r.streams.filter((s) => s.aborted !== undefined)
    const stall = cut.map((s) => (s.aborted! - s.lastPull) / 1e9)
    const open = cut.map((s) => (s.aborted! - s.started) / 1e9)
    const held = r.stalled.heapUsed - r.before.heapUsed
    return [
      r.variant === 'generator' ? 'generator, 1 KiB events' : 'EventHub, 10,000 events/s',
      String(r.readers),
      `${mib(r.before.rss)} MiB`,
      `+${fixed(held / KiB, 0)} KiB (${fixed(held / r.readers / KiB, 0)} KiB)`,
      `+${mib(r.stalled.rss - r.before.rss)} MiB`,
      `${mib(r.peakRss)} MiB (+${mib(r.peakRss - r.before.rss)})`,
      `${mib(r.peakHeapUsed)} MiB (+${mib(r.peakHeapUsed - r.before.heapUsed)})`,
      `${fixed(median(r.streams.map((s) => s.bytes)) / KiB, 0)} KiB`,
      `${fixed(median(r.streams.map((s) => s.socketBytes ?? Number.NaN)) / KiB, 0)} KiB`,
      stall.length === 0 ? 'not cut' : `${fixed(median(stall), 1)} s (${fixed(Math.min(...stall), 1)}–${fixed(Math.max(...stall), 1)})`,
      open.length === 0 ? '' : `${fixed(median(open), 1)} s (${fixed(Math.min(...open), 1)}–${fixed(Math.max(...open), 1)})`,
      `${cut.length}/${r.streams.length}`,
      `${mib(r.after.rss)} / ${mib(r.after.heapUsed)} MiB`
    ]
  }), [false, true, true, true, true, true, true, true, true, true, true, true, true]))
  for (const r of results) {
    const reasons = new Map<string, number>()
    for (const line of r.log) {
      const reason = line.replace(/\d+ bytes/, 'N bytes')
      reasons.set(reason, (reasons.get(reason) ?? 0) + 1)
    }
    console.log(`\n${r.variant} × ${r.readers}: logged ${[...reasons].map(([line, n]) => `${n} × "${line}"`).join('; ') || 'nothing'}; ` +
      `the clients read ${Math.min(...r.clientBytes)}–${Math.max(...r.clientBytes)} bytes each; ` +
      `${r.variant === 'hub' ? 'subscribers of the hub' : 'streams not cut'} 10 s in: ${r.stalledStreams}`)
    // When the socket took more from the stream after the first second: each time the stall check could see no backpressure.
    const moved = r.streams.map((s) => s.trace
      .filter(([at, , , drain], i) => at > 1500 && (!drain || s.trace[i - 1]?.[1] !== s.trace[i][1]))
      .map(([at]) => Math.round(at / 1000)))
    const shown = moved.slice(0, 3).map((seconds, i) => `stream ${i + 1}: ${seconds.length === 0 ? 'never' : seconds.join(', ') + ' s'}`).join('; ')
    console.log(`  seconds (after its start) at which a stream's socket wrote more or its response did not wait for drain: ${shown}`)
  }
}

// ---------------------------------------------------------------------------
// rows: a million rows as NDJSON

interface RowRun {
  database: string
  variant: string
  rep: number
  rows: number
  bytes: number
  sha1: string
  firstLine: string
  wallMs: number
  firstByteMs: number
  before: Memory
  after: Memory
  /** The server's peak RSS: `process.resourceUsage().maxRSS` in the server after the stream (a fresh process: the stream's peak). */
  maxRss: number
  /** The largest RSS read from /proc/<pid>/status every SAMPLE_MS by the runner, in all and in each half of the stream. */
  procPeakRss: number
  procPeakFirstHalf: number
  procPeakSecondHalf: number
  /** The largest heapUsed and RSS the server's own sampler saw, and how many samples it took (it runs only when the server's event loop turns). */
  sampledHeapUsed: number
  sampledRss: number
  samplesTaken: number
  /** The longest time between two samples of the server's own sampler (ms): how long its event loop did not turn. */
  longestGapMs: number
  /** A GET /ping every 100 ms on another connection meanwhile: how many, the longest wait (ms), the median. */
  pings: number
  pingMaxMs: number
  pingMedianMs: number
  cpuMicros: number
  /** The machine's CPU beyond the server's and this process's meanwhile, in cores: the kernel's work for the loopback transfer, the database server's, any other process's. */
  otherCores: number
}

/** GET of the stream: its lines counted and hashed as they come. */
interface Fetched {
  rows: number, bytes: number, sha1: string, firstLine: string, wallMs: number, firstByteMs: number, status: number
}

async function fetchRows (port: number, path: string): Promise<Fetched> {
  const started = performance.now()
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path, agent: false, headers: { accept: 'application/x-ndjson' } }
    const request = http.get(options, (response) => {
      const firstByteMs = performance.now() - started
      const hash = createHash('sha1')
      let rows = 0
      let bytes = 0
      let firstLine = ''
      response.on('data', (chunk: Buffer) => {
        if (bytes === 0) firstLine = chunk.subarray(0, Math.max(0, chunk.indexOf(10))).toString()
        bytes += chunk.length
        hash.update(chunk)
        for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) rows++
      })
      response.on('end', () => {
        resolve({ rows, bytes, sha1: hash.digest('hex'), firstLine, wallMs: performance.now() - started, firstByteMs, status: response.statusCode ?? 0 })
      })
      response.on('error', reject)
    })
    request.on('error', reject)
  })
}

/** The RSS of process `pid` read from /proc every SAMPLE_MS, from this process: it sees the server whether or not the server's loop turns. */
function watchRss (pid: number): () => Array<[number, number]> {
  const samples: Array<[number, number]> = []
  const read = (): void => {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8')
    const kib = Number(/VmRSS:\s+(\d+)/.exec(status)?.[1])
    samples.push([performance.now(), kib * 1024])
  }
  read()
  const timer = setInterval(read, SAMPLE_MS)
  return () => { clearInterval(timer); read(); return samples }
}

/** GET /ping on a connection of its own every 100 ms, one at a time, until stopped: the wait of each. */
function ping (port: number): () => Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 })
  const waits: number[] = []
  let stopped = false
  const loop = (async () => {
    // eslint-disable-next-line no-unmodified-loop-condition -- set by the function returned, while this loop waits
    while (!stopped) {
      const started = performance.now()
      await new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port, path: '/ping', agent }, (response) => {
          response.resume()
          response.on('end', () => { resolve() })
        }).on('error', reject)
      })
      waits.push(performance.now() - started)
      await sleep(100)
    }
  })()
  return async () => { stopped = true; await loop; agent.destroy(); return waits }
}

async function rowRun (database: 'sqlite' | 'pg', where: string, variant: string, rep: number): Promise<RowRun> {
  const mode: ServerMode = database === 'sqlite' ? { part: 'rows', database, file: where } : { part: 'rows', database, url: where }
  const server = await ServerProcess.start(mode)
  try {
    const before = (await server.memory()).memory
    await server.peak()
    const stopWatching = watchRss(server.pid)
    const stopPinging = ping(server.port)
    const [busy, own] = [machineBusyMicros(), ownCpuMicros()]
    const got = await fetchRows(server.port, `/${variant}/items`)
    const [busyAfter, ownAfter] = [machineBusyMicros(), ownCpuMicros()]
    const waits = await stopPinging()
    const proc = stopWatching()
    const peak = await server.peak()
    const after = (await server.memory()).memory
    if (got.status !== 200 || got.rows !== ROWS) throw new Error(`${database} ${variant}: status ${got.status}, ${got.rows} rows of ${ROWS}`)
    const mid = proc[0][0] + (proc[proc.length - 1][0] - proc[0][0]) / 2
    const half = (first: boolean): number => Math.max(0, ...proc.filter((s) => (s[0] < mid) === first).map((s) => s[1]))
    const gaps = peak.samples.slice(1).map((sample, i) => (sample[0] - peak.samples[i][0]) / 1e6)
    return {
      database,
      variant,
      rep,
      rows: got.rows,
      bytes: got.bytes,
      sha1: got.sha1,
      firstLine: got.firstLine,
      wallMs: got.wallMs,
      firstByteMs: got.firstByteMs,
      before,
      after,
      maxRss: peak.maxRss,
      procPeakRss: Math.max(...proc.map((s) => s[1])),
      procPeakFirstHalf: half(true),
      procPeakSecondHalf: half(false),
      sampledHeapUsed: peak.heapUsed,
      sampledRss: peak.rss,
      samplesTaken: peak.samples.length,
      longestGapMs: Math.max(0, ...gaps),
      pings: waits.length,
      pingMaxMs: Math.max(...waits),
      pingMedianMs: median(waits),
      cpuMicros: peak.cpuMicros,
      otherCores: (busyAfter - busy - (ownAfter - own) - peak.cpuMicros) / (got.wallMs * 1000)
    }
  } finally {
    await server.stop()
  }
}

async function rowsOf (database: 'sqlite' | 'pg', where: string): Promise<RowRun[]> {
  const runs: RowRun[] = []
  for (let rep = 1; rep <= REPS; rep++) {
    // Rotated each repetition, so that a drift of the machine falls on every variant alike.
    const order = ROW_VARIANTS.map((_, i) => ROW_VARIANTS[(i + rep - 1) % ROW_VARIANTS.length])
    for (const variant of order) {
      const run = await rowRun(database, where, variant, rep)
      console.error(`  ${database} ${variant} #${rep}: ${fixed(run.wallMs / 1000, 2)} s, ${integer(run.rows / run.wallMs * 1000)} rows/s, ` +
        `peak RSS ${mib(run.maxRss)} MiB (before ${mib(run.before.rss)}), longest ping ${fixed(run.pingMaxMs, 0)} ms`)
      runs.push(run)
    }
  }
  const hashes = new Set(runs.map((r) => r.sha1))
  if (hashes.size !== 1) throw new Error(`${database}: the variants sent different bytes: ${[...new Set(runs.map((r) => `${r.variant} ${r.sha1}`))].join(', ')}`)
  return runs
}

function reportRows (runs: RowRun[]): void {
  const database = runs[0].database
  const byVariant = ROW_VARIANTS.map((variant) => runs.filter((r) => r.variant === variant))
  const reference = median(byVariant[ROW_VARIANTS.indexOf('hand')]?.map((r) => r.rows / r.wallMs) ?? [Number.NaN])
  const m = (list: RowRun[], f: (r: RowRun) => number): number => median(list.map(f))
  console.log(`\n## ${integer(ROWS)} rows from ${database === 'pg' ? 'PostgreSQL' : 'SQLite'} as NDJSON (${mib(runs[0].bytes)} MiB), ${REPS} fresh servers per variant, medians\n`)
  console.log(table(['variant', 'rows/s (range)', '× hand', 'wall s', 'first byte ms', 'server CPU µs/row', 'RSS before', 'peak RSS (largest)', 'peak − before',
    '/proc RSS peak, 1st / 2nd half', 'heapUsed after', 'server samples (longest gap ms)', 'GET /ping: median / longest ms', 'rest of the machine, cores'],
  byVariant.map((list) => {
    const rate = list.map((r) => r.rows / r.wallMs * 1000)
    return [
      list[0].variant,
      `${integer(median(rate))} (${integer(Math.min(...rate))}–${integer(Math.max(...rate))})`,
      fixed(median(rate) / 1000 / reference, 2),
      fixed(m(list, (r) => r.wallMs) / 1000, 2),
      fixed(m(list, (r) => r.firstByteMs), 0),
      fixed(m(list, (r) => r.cpuMicros / r.rows), 2),
      `${mib(m(list, (r) => r.before.rss))} MiB`,
      `${mib(m(list, (r) => r.maxRss))} (${mib(Math.max(...list.map((r) => r.maxRss)))}) MiB`,
      `+${mib(m(list, (r) => r.maxRss - r.before.rss))} MiB`,
      `${mib(m(list, (r) => r.procPeakFirstHalf))} / ${mib(m(list, (r) => r.procPeakSecondHalf))} MiB`,
      `${mib(m(list, (r) => r.after.heapUsed))} MiB`,
      `${fixed(m(list, (r) => r.samplesTaken), 0)} (${fixed(m(list, (r) => r.longestGapMs), 0)})`,
      `${fixed(m(list, (r) => r.pingMedianMs), 1)} / ${fixed(m(list, (r) => r.pingMaxMs), 0)}`,
      fixed(m(list, (r) => r.otherCores), 2)
    ]
  }), [false, true, true, true, true, true, true, true, true, true, true, true, true, true]))
}

// ---------------------------------------------------------------------------
// The databases

const BATCH = 10_000

function sqliteFile (): string {
  const file = join(os.tmpdir(), `fastify-views-streams-${ROWS}.db`)
  if (existsSync(file)) {
    const db = new Database(file, { readonly: true })
    const { count } = db.prepare('SELECT COUNT(*) AS count FROM items').get() as { count: number }
    db.close()
    if (count === ROWS) return file
  }
  for (const suffix of ['', '-wal', '-shm']) rmSync(file + suffix, { force: true })
  const db = new Database(file)
  db.pragma('journal_mode = WAL')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, updated_at TEXT NOT NULL)')
  const insert = db.prepare('INSERT INTO items (id, name, price, updated_at) VALUES (?, ?, ?, ?)')
  const many = db.transaction((from: number, to: number) => {
    for (let i = from; i <= to; i++) { const row = rowOf(i); insert.run(row.id, row.name, row.price, row.updated_at) }
  })
  for (let from = 1; from <= ROWS; from += BATCH) many(from, Math.min(ROWS, from + BATCH - 1))
  db.pragma('wal_checkpoint(TRUNCATE)')
  db.close()
  return file
}

async function postgresDatabase (server: PgServer): Promise<string> {
  const pool = new pg.Pool({ connectionString: server.url, max: 1 })
  try {
    await pool.query('CREATE TABLE items (id integer PRIMARY KEY, name text NOT NULL, price double precision NOT NULL, updated_at text NOT NULL)')
    // The rows of rowOf: the same names and dates; the prices computed in float8 as JavaScript computes them.
    await pool.query(`INSERT INTO items (id, name, price, updated_at)
      SELECT i, 'Item ' || lpad(i::text, 7, '0'), round((1::float8 + (i % 9973)::float8 * 0.37::float8) * 100::float8) / 100::float8,
        to_char(timestamp '2026-01-01' + i * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
      FROM generate_series(1, $1::integer) AS i`, [ROWS])
    await pool.query('VACUUM ANALYZE items')
    return server.url
  } finally {
    await pool.end()
  }
}

// ---------------------------------------------------------------------------

console.log(`# Streams benchmark: library at ${commit}, Node ${process.version}, ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, ${fixed(os.totalmem() / 2 ** 30, 0)} GiB`)
if (PARTS.includes('sse')) {
  const results: SseResult[] = []
  for (const variant of ['views', 'hand-stream', 'hand'] as const) {
    console.error(`sse: ${variant}, ${CONNECTIONS} connections, ${load()}`)
    results.push(await sse(variant))
  }
  raw.sse = results
  reportSse(results)
  console.log(`(at the end: ${load()})`)
}
if (PARTS.includes('slow')) {
  const results: SlowResult[] = []
  for (const [variant, readers] of [['generator', 1], ['generator', SLOW_READERS], ['hub', 1]] as const) {
    console.error(`slow: ${variant}, ${readers} reader(s), ${load()}`)
    results.push(await slow(variant, readers))
  }
  raw.slow = results
  reportSlow(results)
  console.log(`(at the end: ${load()})`)
}
if (PARTS.includes('rows-sqlite')) {
  console.error(`rows: SQLite, ${ROWS} rows, ${load()}`)
  const runs = await rowsOf('sqlite', sqliteFile())
  raw.rowsSqlite = runs
  reportRows(runs)
  console.log(`(at the end: ${load()})`)
}
if (PARTS.includes('rows-pg')) {
  console.error(`rows: PostgreSQL, ${ROWS} rows, ${load()}`)
  const server = await startPostgres()
  try {
    const runs = await rowsOf('pg', await postgresDatabase(server))
    raw.rowsPg = runs
    reportRows(runs)
    console.log(`(at the end: ${load()})`)
  } finally {
    server.stop()
  }
}
const json = process.env.STREAMS_JSON
if (json !== undefined) writeFileSync(json, JSON.stringify(raw, null, 1))
