// Event-stream routes (registration layer): the method's events written as text/event-stream, with
// heartbeats, a bounded buffer for a client that reads slowly, and an end when the client or the application goes.
import { Readable } from 'node:stream'
import type { TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { EVENT_STREAM, HEARTBEAT, eventText } from '../http/event-stream.js'
import { then } from '../core/maybe-promise.js'
import type { EventRoute, EventStreamContext, EventStreamLimits } from '../routes/events.js'
import type { View } from '../views/view.js'
import { isPublished } from '../views/events/event-hub.js'

/** One event as a method yields it: the route's types were checked by the decorator's signature, its values here. */
interface YieldedEvent { event?: unknown, data?: unknown, id?: string | number, retry?: number }

/** A heartbeat, as the bytes every stream sends. */
const HEARTBEAT_BYTES = Buffer.from(HEARTBEAT)

/** The headers of every stream: every read is new, and a proxy that buffers would hold the events back (nginx reads X-Accel-Buffering). */
const STREAM_HEADERS = { 'content-type': `${EVENT_STREAM}; charset=utf-8`, 'cache-control': 'no-cache', 'x-accel-buffering': 'no' }

/** Why a stream was cut before its end: what the log says. */
export class EventStreamCut extends Error {
  override readonly name = 'EventStreamCut'
}

/** The streams open on each application, ended when it closes. */
const openStreams = new WeakMap<object, Set<EventOutput>>()

/**
 * The streams of `app`'s server, and the hook that ends them before it closes: Fastify's close waits
 * for every connection that is not idle, and a stream is never idle (docs/streaming.md, "Closing").
 */
function streamsOf (app: FastifyInstance): Set<EventOutput> {
  // The server is shared by every encapsulated context of one application.
  let streams = openStreams.get(app.server)
  if (streams === undefined) {
    const open = new Set<EventOutput>()
    streams = open
    openStreams.set(app.server, open)
    app.addHook('preClose', (done) => {
      for (const stream of open) stream.finish()
      done()
    })
  }
  return streams
}

/**
 * The output of one stream: pulls an event from the method's iterator only when the buffer below
 * `maxBufferedBytes` has room (Fastify pipes it into the response, which stops reading it while the
 * socket is full), writes a heartbeat after a quiet `heartbeat`, and cuts a connection whose client
 * has read nothing for `stallTimeout` while output waits.
 */
class EventOutput extends Readable {
  readonly #iterator: AsyncIterator<YieldedEvent>
  readonly #encode: (event: YieldedEvent) => Buffer
  readonly #controller: AbortController
  readonly #limits: EventStreamLimits
  readonly #reply: FastifyReply
  readonly #streams: Set<EventOutput> | undefined
  readonly #timer: NodeJS.Timeout | undefined
  #pulling = false
  #ended = false
  #lastWrite = Date.now()
  /** The last time the client was known to read: a drain of the response, or a check that found nothing waiting. */
  #readAt = Date.now()
  readonly #drained = (): void => { this.#readAt = Date.now() }

  constructor (
    iterator: AsyncIterator<YieldedEvent>,
    encode: (event: YieldedEvent) => Buffer,
    controller: AbortController,
    reply: FastifyReply,
    limits: EventStreamLimits,
    streams: Set<EventOutput> | undefined
  ) {
    super({ highWaterMark: limits.maxBufferedBytes })
    this.#iterator = iterator
    this.#encode = encode
    this.#controller = controller
    this.#limits = limits
    this.#reply = reply
    this.#streams = streams
    streams?.add(this)
    // A client that reads, however slowly, drains the response now and then: only one that reads nothing is stalled.
    reply.raw.on('drain', this.#drained)
    const { heartbeat, stallTimeout } = limits
    // One timer does both: a heartbeat is due after `heartbeat` of quiet; a stall is judged every quarter of
    // `stallTimeout`, so a client is cut between `stallTimeout` and 1.25 times it after it last read, never before.
    const period = Math.min(heartbeat > 0 ? heartbeat : Infinity, stallTimeout / 4)
    this.#timer = setInterval(() => { this.#tick() }, period).unref()
  }

  /**
   * Writes an event, or a comment, as bytes: a string the socket has not taken would be held in a buffer
   * sized for its longest UTF-8 form, three times its length.
   */
  send (bytes: Buffer): void {
    this.#lastWrite = Date.now()
    this.push(bytes)
  }

  override _read (): void {
    if (!this.#pulling && !this.#ended) this.pull(this.#iterator.next())
  }

  /** Writes what one step of the iterator gives, when it settles; no other step is asked for meanwhile. */
  pull (step: Promise<IteratorResult<YieldedEvent>>): void {
    this.#pulling = true
    step.then((result) => {
      this.#pulling = false
      if (this.#ended) return
      if (result.done === true) this.finish()
      else this.send(this.#encode(result.value))
    }).catch((error: unknown) => {
      this.#pulling = false
      // Logged by Fastify with the response cut: the client sees the stream end without its last blank line.
      this.destroy(error instanceof Error ? error : new EventStreamCut(String(error)))
    })
  }

  #tick (): void {
    const now = Date.now()
    const response = this.#reply.raw
    if (response.writableNeedDrain) {
      if (now - this.#readAt >= this.#limits.stallTimeout) {
        const waiting = response.writableLength + this.readableLength
        this.destroy(new EventStreamCut(`The client read nothing for ${this.#limits.stallTimeout} ms while ${waiting} bytes waited for it: the stream was cut`))
      }
      return
    }
    this.#readAt = now
    if (this.#limits.heartbeat > 0 && now - this.#lastWrite >= this.#limits.heartbeat) this.send(HEARTBEAT_BYTES)
  }

  /** Ends the stream cleanly: what was written is sent, the method's iterator is closed. Called once: every caller sees the stream open. */
  finish (): void {
    this.#release()
    this.push(null)
  }

  override _destroy (error: Error | null, callback: (error?: Error | null) => void): void {
    this.#release()
    callback(error)
  }

  /** Stops the timer, aborts the signal the method was given and closes its iterator (its `finally` runs), once. */
  #release (): void {
    if (this.#ended) return
    this.#ended = true
    clearInterval(this.#timer)
    this.#reply.raw.off('drain', this.#drained)
    this.#streams?.delete(this)
    this.#controller.abort()
    // A method that ignores the signal may hold `return` until its pending step settles; nothing waits for it.
    this.#iterator.return?.().catch(() => {})
  }
}

/** An event-stream method as the handler calls it. */
type EventMethod = (this: View, request: FastifyRequest, stream: EventStreamContext) => unknown

/** How a route's handler serves an event-stream method: the method called with its context, its events sent. */
export interface EventStreamer {
  act (fn: EventMethod, view: View, request: FastifyRequest, reply: FastifyReply): unknown
}

/** The text of an event, its data serialized by the compiled serializer of its name; a name the route does not declare is a mistake of the method. */
function encoderOf (serializers: ReadonlyMap<unknown, (value: unknown) => string>): (event: YieldedEvent) => Buffer {
  // An event a hub published is sent on many streams: serialized once, for all of them. Any other may be
  // an object the method changes and yields again, and is serialized each time.
  const texts = new WeakMap<YieldedEvent, Buffer>()
  return (event) => {
    const shared = isPublished(event)
    const known = shared ? texts.get(event) : undefined
    if (known !== undefined) return known
    const serialize = serializers.get(event.event)
    if (serialize === undefined) {
      throw new EventStreamCut(`The method yielded an event named ${JSON.stringify(event.event)}, which its route does not declare`)
    }
    // A name a serializer was found under: one of the route's, a string.
    const fields = { event: event.event as string, id: event.id, retry: event.retry }
    const bytes = Buffer.from(eventText(fields, serialize(event.data)))
    if (shared) texts.set(event, bytes)
    return bytes
  }
}

/**
 * The streamer of an event-stream route: each event's data serializer compiled here, once. The
 * method runs after every hook of the route (its dependencies and permissions); an error before its
 * first event is an error answer as any route's, after it the stream is cut and the error logged.
 */
export function eventStreamer (events: EventRoute, compile: (schema: TSchema) => (value: unknown) => string,
  app: FastifyInstance | undefined): EventStreamer {
  const serializers = new Map(Object.entries(events.schemas).map(([name, schema]) => [name, compile(schema)]))
  const encode = encoderOf(serializers)
  const streams = app === undefined ? undefined : streamsOf(app)
  return {
    act (fn, view, request, reply) {
      // A HEAD is answered the headers a GET would have, without running the method: a stream that is never read would stay open.
      if (request.method === 'HEAD') return reply.headers(STREAM_HEADERS).send()
      const controller = new AbortController()
      const header = request.headers['last-event-id']
      const context: EventStreamContext = { lastEventId: typeof header === 'string' ? header : undefined, signal: controller.signal }
      // The client may go before the first event: the method's waits end with the signal.
      const gone = (): void => { controller.abort() }
      reply.raw.once('close', gone)
      return then(fn.call(view, request, context), (iterable) => {
        const iterator = (iterable as AsyncIterable<YieldedEvent>)[Symbol.asyncIterator]()
        const first = iterator.next()
        // The answer waits for the first event, at most `openAfter`: an error meanwhile is an error answer.
        let timer: NodeJS.Timeout | undefined
        const opened = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => { resolve(undefined) }, events.limits.openAfter)
        })
        return Promise.race([first, opened]).then((step) => {
          clearTimeout(timer)
          reply.raw.off('close', gone)
          // The first event's text before anything is made: a mistake in it is an error answer, and nothing is left open.
          const ended = step !== undefined && (step.done === true || controller.signal.aborted)
          const text = step === undefined ? HEARTBEAT_BYTES : ended ? undefined : encode(step.value)
          const output = new EventOutput(iterator, encode, controller, reply, events.limits, streams)
          if (text === undefined) output.finish()
          else output.send(text)
          // Opened by a comment: the first step is still running, and the output takes it.
          if (step === undefined) output.pull(first)
          // Resolved with the stream, which Fastify sends: a reply returned instead would be awaited as a thenable for the stream's life.
          reply.headers(STREAM_HEADERS)
          return output
        }).catch((error: unknown) => {
          clearTimeout(timer)
          reply.raw.off('close', gone)
          controller.abort()
          iterator.return?.()?.catch(() => {})
          throw error
        })
      }, reply)
    }
  }
}
