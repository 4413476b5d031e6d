// The text/event-stream format (http layer): one event as the lines of the HTML Living Standard §9.2.6, and a comment line.

/** The media type of server-sent events. */
export const EVENT_STREAM = 'text/event-stream'

/** A comment line, which every client ignores: what a heartbeat sends to keep the connection and its proxies awake. */
export const HEARTBEAT = ':\n\n'

/** What a line of the stream may not hold: it would end the field early (§9.2.6 splits lines on CR, LF and CRLF). */
const LINE_BREAK = /[\r\n]/
/** An `id` holding NUL is ignored by clients (§9.2.6, "If the field value does not contain U+0000 NULL"). */
const BAD_ID = /[\0\r\n]/

/** The fields of one event besides its data, as the stream writes them. */
export interface EventFields {
  /** The event's name; absent: a `message`. */
  readonly event?: string | undefined
  /** The id a reconnecting client sends back as `Last-Event-ID`. */
  readonly id?: string | number | undefined
  /** How long a client waits before it reconnects, in milliseconds. */
  readonly retry?: number | undefined
}

/** Why an event cannot be written: a mistake of the code that produced it, logged, and the stream cut. */
export class EventFieldError extends Error {
  override readonly name = 'EventFieldError'
}

/**
 * One event as text: its fields, then its data on as many `data:` lines as it has lines (a client
 * joins them back with LF), then the blank line that dispatches it. `data` is already serialized.
 */
export function eventText (fields: EventFields, data: string): string {
  let text = ''
  if (fields.event !== undefined) {
    if (LINE_BREAK.test(fields.event)) throw new EventFieldError(`An event name may not hold a line break: ${JSON.stringify(fields.event)}`)
    text += `event: ${fields.event}\n`
  }
  if (fields.id !== undefined) {
    const id = String(fields.id)
    if (BAD_ID.test(id)) throw new EventFieldError(`An event id may not hold a line break or NUL: ${JSON.stringify(id)}`)
    text += `id: ${id}\n`
  }
  if (fields.retry !== undefined) {
    if (!Number.isSafeInteger(fields.retry) || fields.retry < 0) throw new EventFieldError(`retry is a number of milliseconds, not ${String(fields.retry)}`)
    text += `retry: ${fields.retry}\n`
  }
  // Serialized JSON holds no line break; text of another serializer may, and each line is a field of its own.
  text += LINE_BREAK.test(data) ? data.split(/\r\n|\r|\n/).map((line) => `data: ${line}\n`).join('') : `data: ${data}\n`
  return text + '\n'
}
