// EventHub (views layer): events published once and read by every subscriber, each through a queue of
// its own, bounded so that a subscriber that reads too slowly is ended rather than kept growing.

/** Every object a hub published: what a route may serialize once for every stream it is sent on. */
const PUBLISHED = new WeakSet<object>()

/** Whether the event was published by a hub, and so is shared by streams rather than made for one. */
export const isPublished = (event: object): boolean => PUBLISHED.has(event)

/** Why a subscription ended early: more events waited for it than its bound. */
export class SlowSubscriber extends Error {
  override readonly name = 'SlowSubscriber'
}

/** How one subscriber reads a hub. */
export interface SubscribeOptions {
  /** Ends the subscription (its iterator answers done) when aborted: the stream's signal. */
  signal?: AbortSignal
  /**
   * At most this many events wait for the subscriber; one more ends its subscription with a
   * `SlowSubscriber` error (an event stream is cut, and says why in the log). Default 1000.
   */
  maxQueued?: number
}

/** One subscriber's queue, read as an async iterator. */
class Subscription<T> implements AsyncIterableIterator<T> {
  readonly #queue: T[] = []
  #head = 0
  #waiting: ((result: IteratorResult<T>) => void) | undefined
  #error: Error | undefined
  #closed = false
  readonly #maxQueued: number
  readonly #leave: (subscription: Subscription<T>) => void
  readonly #signal: AbortSignal | undefined
  readonly #onAbort = (): void => { this.end() }

  constructor (maxQueued: number, leave: (subscription: Subscription<T>) => void, signal: AbortSignal | undefined) {
    this.#maxQueued = maxQueued
    this.#leave = leave
    this.#signal = signal
    signal?.addEventListener('abort', this.#onAbort, { once: true })
  }

  /**
   * Hands the event to a waiting reader, or queues it; past the bound, ends the subscription, whose
   * reader is not waiting then (its queue is full) and meets the error at its next read. Only an open
   * subscription is delivered to: a closed one has left the hub.
   */
  deliver (event: T): void {
    const waiting = this.#waiting
    if (waiting !== undefined) {
      this.#waiting = undefined
      waiting({ value: event, done: false })
      return
    }
    if (this.#queue.length - this.#head >= this.#maxQueued) {
      this.#error = new SlowSubscriber(`More than ${this.#maxQueued} events waited for this subscriber: it reads too slowly, and was ended`)
      this.#close()
      return
    }
    this.#queue.push(event)
  }

  #close (): void {
    if (this.#closed) return
    this.#closed = true
    this.#queue.length = this.#head = 0
    this.#signal?.removeEventListener('abort', this.#onAbort)
    this.#leave(this)
  }

  async next (): Promise<IteratorResult<T>> {
    if (this.#head < this.#queue.length) {
      const value = this.#queue[this.#head++]
      // The queue is compacted once it is read through, so a long subscription holds only what waits.
      if (this.#head === this.#queue.length) this.#queue.length = this.#head = 0
      return { value, done: false }
    }
    if (this.#error !== undefined) throw this.#error
    if (this.#closed) return { value: undefined, done: true }
    return await new Promise<IteratorResult<T>>((resolve) => { this.#waiting = resolve })
  }

  async return (): Promise<IteratorResult<T>> {
    this.end()
    return { value: undefined, done: true }
  }

  /** Ends the subscription: a reader waiting is answered done, and the hub forgets it. */
  end (): void {
    this.#close()
    const waiting = this.#waiting
    this.#waiting = undefined
    waiting?.({ value: undefined, done: true })
  }

  [Symbol.asyncIterator] (): this { return this }
}

/**
 * Events published in this process, delivered to every subscriber in the order published: the
 * fan-out of one event to many streams (each `subscribe()` an iterator an `Events` method can
 * return or read). A hub holds nothing for a subscriber that is not there yet: a stream that must
 * miss nothing across reconnects reads what it missed from the store first (`ChangeFeed`).
 */
export class EventHub<T> {
  readonly #subscribers = new Set<Subscription<T>>()
  readonly #leave = (subscription: Subscription<T>): void => { this.#subscribers.delete(subscription) }

  /** How many subscribers read the hub now. */
  get size (): number { return this.#subscribers.size }

  /**
   * Delivers the event to every subscriber, the same object to each: an event-stream route serializes
   * it once for all of its streams, so an object is sent as it was when first serialized.
   */
  publish (event: T): void {
    if (typeof event === 'object' && event !== null) PUBLISHED.add(event)
    for (const subscriber of this.#subscribers) subscriber.deliver(event)
  }

  /** A new subscriber: the events published from now on, until its signal aborts or it is returned. */
  subscribe (options: SubscribeOptions = {}): AsyncIterableIterator<T> {
    const { signal, maxQueued = 1000 } = options
    if (!Number.isSafeInteger(maxQueued) || maxQueued < 1) throw new RangeError(`maxQueued is a whole number of events from 1, not ${String(maxQueued)}`)
    const subscription = new Subscription<T>(maxQueued, this.#leave, signal)
    if (signal?.aborted === true) subscription.end()
    else this.#subscribers.add(subscription)
    return subscription
  }
}
