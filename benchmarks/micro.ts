/**
 * In-process micro-measurements the end-to-end figures cannot resolve: the cost of
 * hashing a response body into an ETag, with the library's hook and @fastify/etag's.
 * They run in the runner process (same machine, same Node), on the exact body the
 * server sent, with stub requests and replies.
 */
import crypto from 'node:crypto'
import etagPlugin from '@fastify/etag'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { etagOf } from '../lib/conditional.js'
import { etagOnSend } from '../lib/views/conditional/not-modified.js'
import { fixed, median, table } from './stats.js'

type Hook = (
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void
) => void

/** ns per call of `fn`: the median of `batches` timed batches of `calls` calls, after a warm-up batch. */
function nsPerCall (fn: () => void, calls: number, batches: number): number[] {
  const times: number[] = []
  for (let b = 0; b <= batches; b++) {
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) fn()
    const ns = Number(process.hrtime.bigint() - started) / calls
    if (b > 0) times.push(ns)
  }
  return times
}

/** A reply with just what an onSend hook of a 200 touches, its headers reset before every call. */
function stubReply (): { reply: FastifyReply, reset: () => void } {
  let headers: Record<string, unknown> = {}
  const reply = {
    statusCode: 200,
    getHeader: (name: string) => headers[name],
    header (name: string, value: unknown) { headers[name] = value; return reply },
    code (status: number) { reply.statusCode = status; return reply },
    removeHeader (name: string) { headers[name] = undefined; return reply }
  }
  return { reply: reply as unknown as FastifyReply, reset: () => { headers = { 'content-type': 'application/json; charset=utf-8' }; reply.statusCode = 200 } }
}

/** @fastify/etag's onSend hook, taken from the plugin with a stand-in instance. */
async function fastifyEtagHook (): Promise<Hook> {
  let hook: Hook | undefined
  const fake = { addHook: (_name: string, fn: Hook) => { hook = fn } }
  await (etagPlugin as unknown as (app: FastifyInstance, options: object) => Promise<void>)(
    fake as unknown as FastifyInstance,
    {}
  )
  return hook!
}

export interface HashMicro {
  bodyBytes: number
  /** ns per call, median over batches, per measured operation. */
  ns: Record<string, number>
  /** The hash cost the µs targets add to their allowance: the library's `etagOf` of the body, µs. */
  hashUs: number
}

/** Measures, for one body, SHA-1 the library's way and @fastify/etag's, and both onSend hooks around them. */
export async function measureHashes (body: string, calls = 100_000, batches = 9): Promise<HashMicro> {
  const request = { headers: {} } as unknown as FastifyRequest
  const { reply, reset } = stubReply()
  const theirs = await fastifyEtagHook()
  let sink: unknown
  const done = (_error: Error | null, payload?: unknown): void => { sink = payload }
  const hashFn = (crypto as unknown as { hash?: (alg: string, data: string, enc: string) => string }).hash
  const cases: Record<string, () => void> = {
    'stub only (reset headers, no-op hook)': () => { reset(); done(null, body) },
    'etagOf(body): crypto.hash sha1 base64url, quoted (the library)': () => { sink = etagOf(body) },
    'createHash(sha1).update(body).digest(base64) (@fastify/etag)': () => { sink = crypto.createHash('sha1').update(body).digest('base64') },
    'library etagOnSend, no conditional header': () => { reset(); (etagOnSend as unknown as Hook)(request, reply, body, done) },
    '@fastify/etag onSend, no conditional header': () => { reset(); theirs(request, reply, body, done) }
  }
  if (hashFn !== undefined) cases['crypto.hash(sha1, body, base64url) alone'] = () => { sink = hashFn('sha1', body, 'base64url') }
  const samples: Record<string, number[]> = {}
  for (const name of Object.keys(cases)) samples[name] = []
  // Interleaved, three passes: drift hits every case alike.
  for (let pass = 0; pass < 3; pass++) {
    for (const [name, fn] of Object.entries(cases)) samples[name].push(...nsPerCall(fn, calls, Math.ceil(batches / 3)))
  }
  // The sink is read, so the measured calls stay observable and are not optimized away.
  // eslint-disable-next-line no-void
  void sink
  const ns: Record<string, number> = {}
  for (const [name, times] of Object.entries(samples)) ns[name] = median(times)
  return { bodyBytes: Buffer.byteLength(body), ns, hashUs: ns['etagOf(body): crypto.hash sha1 base64url, quoted (the library)'] / 1000 }
}

export function reportHashes (micro: HashMicro): void {
  console.log(`\n## Hash cost (in-process, runner; the ${micro.bodyBytes}-byte body of the ETag'd variant; median ns per call)\n`)
  console.log(table(['operation', 'ns/call'], Object.entries(micro.ns).map(([name, ns]) => [name, fixed(ns, 0)]), [false, true]))
  console.log(`\nhash cost used in the µs targets: ${fixed(micro.hashUs, 3)} µs per request (the library's etagOf of that body)`)
}
