// The diagnostics channels the library publishes on (core layer): each SQL statement a repository runs and
// each bulk batch a generic bulk view writes, for a telemetry (docs/observability.md) or any subscriber.
// They follow Node's TracingChannel convention (`tracing:<name>:start`, `end`, `error`): with no subscriber
// a call pays one check of `hasSubscribers`, and nothing is made for it.
import { tracingChannel, type TracingChannel } from 'node:diagnostics_channel'

/** What a statement's events carry: its text (parameterised, never a bound value) and the database. */
export interface SqlStatementMessage {
  /** The SQL sent, placeholders where values go (`SELECT ... WHERE "id" = ?`), or a transaction's step (`BEGIN`). */
  readonly sql: string
  /** The dialect's name: `sqlite`, `postgres`, or a third dialect's own. */
  readonly database: string
  /** Set by Node's TracingChannel: what the run returned (a promise for an asynchronous driver) or threw. */
  result?: unknown
  error?: unknown
}

/** What a bulk batch's events carry: the view class, its action and how many items the batch holds. */
export interface BulkBatchMessage {
  readonly view: string
  readonly action: string
  readonly items: number
  result?: unknown
  error?: unknown
}

/** The name of the statements' tracing channel: `tracing:fastify-views:sql:start`, `:end`, `:error`. */
export const SQL_STATEMENTS = 'fastify-views:sql'
/** The name of the bulk batches' tracing channel. */
export const BULK_BATCHES = 'fastify-views:bulk'

/**
 * Every SQL statement the library's repositories run, published as `traceSync` publishes: `start`
 * before the driver is called, `end` after it returned, with `result` a promise where the driver
 * answers with one (a subscriber waits on it: it settles when the statement has run), `error` when
 * it threw at once.
 */
export const sqlStatements: TracingChannel<SqlStatementMessage, SqlStatementMessage> = tracingChannel(SQL_STATEMENTS)

/** Every batch a generic bulk view writes in one repository call, published as statements are. */
export const bulkBatches: TracingChannel<BulkBatchMessage, BulkBatchMessage> = tracingChannel(BULK_BATCHES)
