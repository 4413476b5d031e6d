// What the streams benchmark's processes share (benchmarks/streams/run.ts): the schemas, the table, the
// messages between the runner and the server it forks, and the clock every process reads.
import { Type, type Static } from '@sinclair/typebox'

/** The data of one fan-out event: its number, and when the server published it (`now()`, ns). */
export const Tick = Type.Object({ seq: Type.Integer(), t: Type.Number() })
export type Tick = Static<typeof Tick>

/** The data of one slow-reader event: its number and about a kilobyte of text. */
export const Chunk = Type.Object({ n: Type.Integer(), text: Type.String() })
export type Chunk = Static<typeof Chunk>

/** One row of the streamed table: about 80 bytes of JSON. */
export const Row = Type.Object({
  id: Type.Integer(), name: Type.String(), price: Type.Number(), updated_at: Type.String()
})
export type Row = Static<typeof Row>
export const COLUMNS = ['id', 'name', 'price', 'updated_at'] as const

/** Row `i` (from 1) of the table, the same in SQLite and PostgreSQL. */
export function rowOf (i: number): Row {
  return {
    id: i,
    name: `Item ${String(i).padStart(7, '0')}`,
    price: Math.round((1 + (i % 9973) * 0.37) * 100) / 100,
    updated_at: new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString()
  }
}

/**
 * CLOCK_MONOTONIC in nanoseconds, as a number: the same clock in every process of the machine
 * (libuv's `uv_hrtime` on Linux), so that a time taken by the server and one taken by a client compare.
 */
export function now (): number {
  return Number(process.hrtime.bigint())
}

/** What the server process is started for (its one argument, JSON). */
export type ServerMode =
  | { part: 'sse', variant: 'views' | 'hand' | 'hand-stream' }
  | { part: 'slow', variant: 'generator' | 'hub' }
  | { part: 'rows', database: 'sqlite', file: string }
  | { part: 'rows', database: 'pg', url: string }

/** One reading of the server's memory. */
export interface Memory { rss: number, heapUsed: number, heapTotal: number, external: number, arrayBuffers: number }

/** The runner's requests to the server. */
export type ToServer =
  | { type: 'memory', id: number, gc: boolean }
  | { type: 'peak', id: number }
  | { type: 'publish', id: number, seq: number }
  | { type: 'slow-report', id: number }
  | { type: 'exit' }

/** What the server's memory was between two `peak` requests: sampled every SAMPLE_MS. */
export interface PeakReport {
  /** The largest RSS and heapUsed sampled, and the time of that RSS (ns, `now()`). */
  rss: number
  heapUsed: number
  /** Every sample since the last request: [time (ns), rss, heapUsed]. */
  samples: Array<[number, number, number]>
  /** The server's CPU time since the last request (µs, user + system). */
  cpuMicros: number
  /** The largest RSS of the process's life (`process.resourceUsage().maxRSS`, bytes): its peak even where no sample ran. */
  maxRss: number
}

/** What the slow-reader routes saw of each stream. */
export interface SlowStream {
  /** When the method was called, when it was last asked for an event, when its signal aborted (ns, `now()`). */
  started: number
  lastPull: number
  aborted: number | undefined
  /** Events handed to the route, and their bytes as text. */
  events: number
  bytes: number
  /** What the response's socket had written when it closed. */
  socketBytes: number | undefined
  /**
   * Every second until the stream ends: [ms since it started, bytes the socket handed to the kernel,
   * bytes waiting in the socket, whether the response waits for 'drain' (what the stall check reads)].
   */
  trace: Array<[number, number, number, boolean]>
}

export type FromServer =
  | { type: 'ready', port: number, memory: Memory }
  | { type: 'memory', id: number, memory: Memory, streams: number }
  | { type: 'peak', id: number, report: PeakReport }
  | { type: 'published', id: number, seq: number, t: number, fanOutNs: number }
  | { type: 'slow-report', id: number, streams: SlowStream[], log: string[] }

/** How often the server samples its memory. */
export const SAMPLE_MS = 50
