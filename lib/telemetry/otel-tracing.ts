// Traces of view routes through OpenTelemetry (telemetry layer): a span per action, a child span per SQL
// statement and per bulk batch it runs, after the semantic conventions of HTTP and database spans.
import { context, createContextKey, SpanKind, SpanStatusCode, trace, type Context, type Span, type Tracer } from '@opentelemetry/api'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { bulkBatches, sqlStatements, type BulkBatchMessage, type SqlStatementMessage } from '../core/channels.js'
import { isThenable } from '../core/maybe-promise.js'
import type { Principal } from '../access/principal.js'
import type { ObservedRoute, RouteObserver, Telemetry } from '../routes/telemetry.js'
import { SqlSummaries } from './sql-summary.js'
import { checkedOptions, dbSystem, guarded, sharedSubscription, startAndEnd } from './telemetry-support.js'

/** Options of `otelTracing`. */
export interface OtelTracingOptions {
  /** The tracer spans are made with (default: `trace.getTracer('fastify-views')`, the global provider's). */
  tracer?: Tracer
  /**
   * The principal's id for the action span's `enduser.id`, when the application chooses to send it;
   * without this option no span says who asked.
   */
  principalId?: (principal: Principal) => string | number | undefined
  /** Child spans for each SQL statement an action runs (default true). */
  statements?: boolean
}

const OPTIONS = ['tracer', 'principalId', 'statements'] as const

/** The context key an action's context names the telemetry that traces it under. */
const ACTION = createContextKey('fastify-views action')

/** What a traced request carries: its span and the context its hooks and handler run in. */
interface Traced { span: Span, context: Context, error: Error | undefined }
const TRACED = Symbol('fastify-views.traced')
type TracedRequest = FastifyRequest & { [TRACED]?: Traced }

/** `@fastify/otel`'s request decoration: the context of its request span, when it instruments the request. */
type OtelRequest = FastifyRequest & { opentelemetry?: () => { context?: Context | null } }

/**
 * Traces every view route with OpenTelemetry (docs/observability.md). An action's span, named
 * `View.action`, is the child of `@fastify/otel`'s request span when it instruments the request (else
 * of the active context), and the parent of a span per SQL statement (`SELECT items`, its text with
 * placeholders and never a bound value) and per bulk batch. The application brings the SDK; this
 * module needs only `@opentelemetry/api`. A tracer that throws costs the request its span, never its answer.
 */
export function otelTracing (options: OtelTracingOptions = {}): Telemetry {
  checkedOptions('otelTracing', options, OPTIONS)
  const tracer = options.tracer ?? trace.getTracer('fastify-views')
  const { principalId } = options
  // The contexts of this telemetry's own actions: a statement is traced inside one of them only. The key is
  // the API's (one for every telemetry: createContextKey makes a Symbol.for); the value is this telemetry's.
  const own = {}
  const summaries = new SqlSummaries()
  const guard = guarded('the tracer')
  const guardPrincipal = guarded('otelTracing\'s principalId')

  const observe = (route: ObservedRoute): RouteObserver => {
    const name = `${route.view}.${route.action}`
    const attributes = {
      'fastify_views.view': route.view,
      'fastify_views.action': route.action,
      'http.route': route.route,
      ...route.stream === undefined ? {} : { 'fastify_views.stream': route.stream }
    }
    return {
      start (request: TracedRequest) {
        guard(request, () => {
          const parent = (request as OtelRequest).opentelemetry?.().context ?? context.active()
          const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes: { ...attributes, 'http.request.method': request.method } }, parent)
          request[TRACED] = { span, context: trace.setSpan(parent, span).setValue(ACTION, own), error: undefined }
        })
      },
      within (request, fn, thisArg, ...args) {
        const traced = (request as TracedRequest)[TRACED]
        return traced === undefined ? fn.apply(thisArg, args) : context.with(traced.context, fn, thisArg, ...args)
      },
      error (request: TracedRequest, _reply, error) {
        const traced = request[TRACED]
        if (traced !== undefined) traced.error = error
      },
      end (request: TracedRequest, reply: FastifyReply, finished) {
        const traced = request[TRACED]
        if (traced === undefined) return
        const { span, error } = traced
        if (principalId !== undefined && request.principal != null) {
          const asker = request.principal
          guardPrincipal(request, () => {
            const id = principalId(asker)
            if (id !== undefined) span.setAttribute('enduser.id', String(id))
          })
        }
        guard(request, () => {
          try {
            const status = reply.statusCode
            span.setAttribute('http.response.status_code', status)
            if (!finished) span.setAttribute('fastify_views.response.completed', false)
            // A server's 4xx is the client's mistake, not the span's error (semantic conventions of HTTP spans).
            if (status >= 500) {
              span.setAttribute('error.type', error?.name ?? String(status))
              if (error !== undefined) span.recordException(error)
              span.setStatus({ code: SpanStatusCode.ERROR, message: error?.message })
            }
          } finally {
            span.end()
          }
        })
      }
    }
  }

  const spans = new WeakMap<object, Span>()
  const ended = (message: { result?: unknown, error?: unknown }): void => {
    const span = spans.get(message)
    if (span === undefined) return
    const close = (error: unknown): void => {
      guard(undefined, () => {
        if (error !== undefined) failed(span, error)
        span.end()
      })
    }
    if (isThenable(message.result)) message.result.then(() => { close(undefined) }, close)
    else close(message.error)
  }
  const statements = startAndEnd((message: SqlStatementMessage) => {
    const parent = activeAction(own)
    if (parent === undefined) return
    guard(undefined, () => {
      const summary = summaries.of(message.sql)
      spans.set(message, tracer.startSpan(summary.name, {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': dbSystem(message.database),
          'db.operation.name': summary.operation,
          ...summary.table === undefined ? {} : { 'db.collection.name': summary.table },
          'db.query.summary': summary.name,
          'db.query.text': message.sql
        }
      }, parent))
    })
  }, ended)
  const batches = startAndEnd((message: BulkBatchMessage) => {
    const parent = activeAction(own)
    if (parent === undefined) return
    guard(undefined, () => {
      spans.set(message, tracer.startSpan(`${message.view}.${message.action} batch`, {
        attributes: { 'fastify_views.view': message.view, 'fastify_views.action': message.action, 'fastify_views.batch.items': message.items }
      }, parent))
    })
  }, ended)
  const subscription = sharedSubscription(() => {
    if (options.statements !== false) sqlStatements.subscribe(statements)
    bulkBatches.subscribe(batches)
    return () => {
      if (options.statements !== false) sqlStatements.unsubscribe(statements)
      bulkBatches.unsubscribe(batches)
    }
  })
  return { observe, attach: subscription }
}

/** Records an error on a span: an exception event, and the span's status an error. */
/**
 * The active context when it is one of this telemetry's actions and its span is still open: a timer a
 * request set off carries the request's context on after its span ended, and is no part of it.
 */
function activeAction (own: object): Context | undefined {
  const active = context.active()
  return active.getValue(ACTION) === own && trace.getSpan(active)?.isRecording() === true ? active : undefined
}

function failed (span: Pick<Span, 'recordException' | 'setStatus'>, error: unknown): void {
  // A driver's error is an Error; anything else thrown is recorded as its text.
  const exception = error instanceof Error ? error : new Error(String(error))
  span.recordException(exception)
  span.setStatus({ code: SpanStatusCode.ERROR, message: exception.message })
}
