// EventHub (views layer): events published once and read by every subscriber, each through a queue of
// its own, bounded so that a subscriber that reads too slowly is ended rather than kept growing.

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
  #failing: ((error: Error) => void) | undefined
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

  /** Hands the event to a waiting reader, or queues it; past the bound, ends the subscription. */
  deliver (event: T): void {
    if (this.#closed) return
    const waiting = this.#waiting
    if (waiting !== undefined) {
      this.#waiting = this.#failing = undefined
      waiting({ value: event, done: false })
      return
    }
    if (this.#queue.length - this.#head >= this.#maxQueued) {
      this.#fail(new SlowSubscriber(`More than ${this.#maxQueued} events waited for this subscriber: it reads too slowly, and was ended`))
      return
    }
    this.#queue.push(event)
  }

  #fail (error: Error): void {
    this.#error = error
    this.#close()
    const failing = this.#failing
    this.#waiting = this.#failing = undefined
    failing?.(error)
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
    return await new Promise<IteratorResult<T>>((resolve, reject) => {
      this.#waiting = resolve
      this.#failing = reject
    })
  }

  async return (): Promise<IteratorResult<T>> {
    this.end()
    return { value: undefined, done: true }
  }

  /** Ends the subscription: a reader waiting is answered done, and the hub forgets it. */
  end (): void {
    this.#close()
    const waiting = this.#waiting
    this.#waiting = this.#failing = undefined
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

  /** Delivers the event to every subscriber (the same object to each: a route serializes it once). */
  publish (event: T): void {
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
