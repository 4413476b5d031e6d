// Event-stream routes as users write them (routes layer): the events a route sends, their schemas, what
// its method yields, the context it is given, and the settings of its connection.
import type { TSchema } from '@sinclair/typebox'
import type { Schema, StaticOf } from '../core/typebox-lines.js'
import type { MaybePromise } from '../core/maybe-promise.js'
import type { ViewRequest, RouteSchemas } from './types.js'

/** The events of an event-stream route: each event's name and the schema of its data. */
export type EventSchemas = Record<string, Schema>

/**
 * One event a handler yields: `event` one of the declared names, `data` typed by that name's
 * schema; `id` is what a reconnecting client sends back as `Last-Event-ID`, `retry` how long it
 * waits before reconnecting (ms).
 */
export type ServerEvent<E extends EventSchemas> = {
  [K in keyof E & string]: { event: K, data: StaticOf<E[K]>, id?: string | number, retry?: number }
}[keyof E & string]

/** What an event-stream method is given beside the request. */
export interface EventStreamContext {
  /**
   * The `Last-Event-ID` the client sent when it reconnected (the `id` of the last event it
   * received), `undefined` on a first connection. Text from the client: parse it, and answer a
   * malformed one with an error before the first event (a 400).
   */
  readonly lastEventId: string | undefined
  /**
   * Aborted when the stream ends early: the client went away, the connection was cut for reading
   * too slowly, or the application is closing. Pass it to what the method waits on.
   */
  readonly signal: AbortSignal
}

/** How an event-stream connection is kept (docs/streaming.md, "Connections"). */
export interface EventStreamSettings {
  /** A comment line is sent after this long without an event (ms; 0: never). Default 15000. */
  heartbeat?: number
  /**
   * How much may wait to be sent to a client that does not read, in bytes, beyond what the
   * operating system holds: past it the method is not asked for more, and the stream is cut once
   * the client has read nothing for `stallTimeout`. Default 65536.
   */
  maxBufferedBytes?: number
  /** How long a client may read nothing while output waits for it, before the connection is cut (ms). Default 30000. */
  stallTimeout?: number
  /**
   * How long the answer waits for the first event (ms): it opens with that event, or with a comment
   * line once this has passed. An error before it opens is an error answer (a problem), one after
   * it ends the stream. Default 1000.
   */
  openAfter?: number
}

/** The settings of an event-stream route, every one given. */
export type EventStreamLimits = Required<EventStreamSettings>

/** What `Events` records of a route: its events and its connection's settings. */
export interface EventRoute {
  /** Each event's data schema, in the 0.34 form. */
  readonly schemas: Readonly<Record<string, TSchema>>
  readonly limits: EventStreamLimits
}

/** An event-stream method of a view, typed from its route's schemas and its events. */
export type EventRouteMethod<This, S extends RouteSchemas, E extends EventSchemas> = (
  this: This,
  request: ViewRequest<S>,
  stream: EventStreamContext
) => MaybePromise<AsyncIterable<ServerEvent<E>>>
