// ChangeFeed (views layer): the rows of an append-only store as a stream that resumes from an id, with
// one reader per process publishing what is new to every follower.
import { AsyncResource } from 'node:async_hooks'
import { RequestValidationError } from '../../http/errors.js'
import type { AsyncRepository, Criteria, ListQuery, OrderKey, Repository } from '../../stores/repository.js'
import { compareValues } from '../../stores/value-order.js'
import { EventHub } from './event-hub.js'

/** How a feed reads its store. */
export interface ChangeFeedOptions<T> {
  /**
   * The field whose value grows with each new row, in the order the rows commit: the id of an
   * append-only table of changes (docs/streaming.md, "Resuming"). It is each event's id.
   */
  key: keyof T & string
  /** Only the rows these criteria select (a scope): the feed's followers never see another. */
  criteria?: Criteria
  /** Rows read at a time, while catching up and while polling. Default 100. */
  pageSize?: number
  /** How often the feed looks for new rows while it has followers (ms). `notify()` looks at once. Default 1000. */
  poll?: number
  /** At most this many rows wait for one follower before it is ended as too slow (`EventHub`). Default 1000. */
  maxQueued?: number
  /** Reads a `Last-Event-ID` as a key value; `undefined` refuses it (a 400). Default: a whole number of up to 15 digits. */
  parse?: (id: string) => unknown
}

/** Where one follower starts and when it stops. */
export interface FollowOptions {
  /** The client's `Last-Event-ID`: rows after it. `undefined`: rows written from now on. */
  after: string | undefined
  /** Ends the follow (the stream's signal). */
  signal: AbortSignal
}

const parseInteger = (id: string): unknown => /^\d{1,15}$/.test(id) ? Number(id) : undefined

/** A refused `Last-Event-ID`: a 400 naming the header, answered before the stream opens. */
function badLastEventId (detail: string): RequestValidationError {
  return new RequestValidationError('The Last-Event-ID header is invalid.', {
    errors: [{ detail, pointer: '#/last-event-id', in: 'header', parameter: 'last-event-id' }]
  })
}

/**
 * The rows of a store as they are written, for `Events` methods: `follow({ after, signal })` yields
 * the rows after `after` (a reconnecting client's `Last-Event-ID`) read page by page, then each new
 * row as it commits, none twice. One poll per process reads what is new for all followers
 * (`notify()` after a write of this process wakes it), so a thousand idle followers cost one read
 * a `poll`.
 */
export class ChangeFeed<T> {
  readonly #repository: Repository<T> | AsyncRepository<T>
  readonly #key: string
  readonly #criteria: Criteria
  readonly #pageSize: number
  readonly #poll: number
  readonly #maxQueued: number
  readonly #parse: (id: string) => unknown
  readonly #hub = new EventHub<T>()
  /** The order the feed reads in: its key, ascending. */
  readonly #ascending: OrderKey[]
  /** The key of the last row published; `null` when the store was empty; `undefined` until the poller has read where it is. */
  #head: unknown
  /** Followers waiting for the poller to read where the store is. */
  readonly #headWaiters = new Set<() => void>()
  #polling: Promise<void> | undefined
  /**
   * The async context the feed was made in, which the poller runs in: not the context of the request
   * that first followed or notified, which its timers would otherwise carry on in (a trace would show
   * every later poll inside that request's span).
   */
  readonly #scope: AsyncResource
  #timer: NodeJS.Timeout | undefined
  #again = false

  constructor (repository: Repository<T> | AsyncRepository<T>, options: ChangeFeedOptions<T>) {
    const { key, criteria = {}, pageSize = 100, poll = 1000, maxQueued = 1000, parse = parseInteger } = options
    for (const [name, value, least] of [['pageSize', pageSize, 1], ['poll', poll, 1], ['maxQueued', maxQueued, 1]] as const) {
      if (!Number.isSafeInteger(value) || value < least) throw new RangeError(`ChangeFeed: ${name} is a whole number from ${least}, not ${String(value)}`)
    }
    this.#repository = repository
    this.#key = key
    this.#ascending = [{ field: key, descending: false }]
    this.#criteria = criteria
    this.#pageSize = pageSize
    this.#poll = poll
    this.#maxQueued = maxQueued
    this.#parse = parse
    this.#scope = new AsyncResource('fastify-views.ChangeFeed')
  }

  /** The id of a row's event: its key as text, what the client sends back. */
  idOf (row: T): string {
    return String((row as Record<string, unknown>)[this.#key])
  }

  /** How many follow the feed now. */
  get followers (): number { return this.#hub.size }

  /** Looks for new rows now rather than at the next poll: a write of this process just committed. */
  notify (): void {
    if (this.#hub.size === 0) return
    if (this.#polling !== undefined) {
      this.#again = true
      return
    }
    clearTimeout(this.#timer)
    this.#polling = this.#poller()
  }

  /**
   * The rows after `after`, then the new ones as they come. A malformed `after` is refused here, before
   * the stream opens (400); one past the newest row is refused by the first read (a client's id of
   * another stream would otherwise skip rows).
   */
  follow ({ after, signal }: FollowOptions): AsyncIterable<T> {
    const start = after === undefined ? undefined : this.#parse(after)
    if (after !== undefined && start === undefined) throw badLastEventId('Not an event id of this stream')
    // Subscribed before the first read: a row the poller publishes meanwhile waits in the queue.
    const live = this.#hub.subscribe({ signal, maxQueued: this.#maxQueued })
    this.#startPolling()
    return this.#follow(start, live, signal)
  }

  async * #follow (start: unknown, live: AsyncIterableIterator<T>, signal: AbortSignal): AsyncGenerator<T> {
    try {
      const newest = await this.#newest()
      if (start !== undefined && newest !== undefined && compareValues(start, newest) > 0) throw badLastEventId('Later than the newest event of this stream')
      if (start !== undefined && newest === undefined) throw badLastEventId('This stream has no events yet')
      // Every row after the head the poller has published up to once it knows this follower reaches the
      // queue; the rows up to that head are read here, however far ahead of `newest` the poller started.
      const published = await this.#publishedHead(signal)
      let last = start ?? newest
      // Catching up: what was written after the client's last event, page by page.
      while (!signal.aborted) {
        const rows = await this.#read(last)
        for (const row of rows) {
          last = (row as Record<string, unknown>)[this.#key]
          yield row
        }
        const reached = published === null || (last !== undefined && compareValues(last, published) >= 0)
        if (rows.length === 0 || (rows.length < this.#pageSize && reached)) break
      }
      for await (const row of live) {
        const key = (row as Record<string, unknown>)[this.#key]
        // Read already while catching up.
        if (last !== undefined && compareValues(key, last) <= 0) continue
        last = key
        yield row
      }
    } finally {
      await live.return?.()
    }
  }

  async #newest (): Promise<unknown> {
    const query: ListQuery = { orderBy: [{ field: this.#key, descending: true }], limit: 1 }
    const [row] = await this.#repository.list(this.#criteria, query)
    return row === undefined ? undefined : (row as Record<string, unknown>)[this.#key]
  }

  /** A page of the rows after `last`; `undefined`: from the first row. */
  async #read (last: unknown): Promise<T[]> {
    const query: ListQuery = { orderBy: this.#ascending, limit: this.#pageSize }
    if (last !== undefined) query.after = [last]
    return await this.#repository.list(this.#criteria, query)
  }

  /** The poller's head, once it has read where the store is (`null`: it was empty); `undefined` if the follow ended first. */
  async #publishedHead (signal: AbortSignal): Promise<unknown> {
    while (this.#head === undefined && !signal.aborted) {
      await new Promise<void>((resolve) => {
        this.#headWaiters.add(resolve)
        signal.addEventListener('abort', () => { resolve() }, { once: true })
      })
    }
    return this.#head
  }

  #startPolling (): void {
    if (this.#polling !== undefined || this.#timer !== undefined) return
    this.#polling = this.#poller()
  }

  /** Starts a poll in the feed's own async context. */
  #poller (): Promise<void> {
    return this.#scope.runInAsyncScope(() => this.#pollOnce())
  }

  /** Publishes every row after the head, then waits for the next poll while anyone follows. */
  async #pollOnce (): Promise<void> {
    this.#timer = undefined
    try {
      do {
        this.#again = false
        if (this.#head === undefined) {
          this.#head = await this.#newest() ?? null
          for (const resolve of this.#headWaiters) resolve()
          this.#headWaiters.clear()
        }
        for (;;) {
          const rows = await this.#read(this.#head ?? undefined)
          for (const row of rows) {
            this.#head = (row as Record<string, unknown>)[this.#key]
            this.#hub.publish(row)
          }
          if (rows.length < this.#pageSize) break
        }
      } while (this.#again)
    } catch {
      // A failed read is tried again at the next poll; the followers wait, and their heartbeats go on.
    } finally {
      this.#polling = undefined
      if (this.#hub.size > 0) this.#timer = setTimeout(() => { this.#polling = this.#pollOnce() }, this.#poll).unref()
      else this.#head = undefined
    }
  }
}
