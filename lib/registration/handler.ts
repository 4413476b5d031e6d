// The handler of a view route (registration layer): a new view per request, the mixins' steps before
// the action, the action, and its value turned into the answer with the route's compiled serializer.
import type { FastifyReply, FastifyRequest } from 'fastify'
import { OWN_SERIALIZER_OPTIONS, type APIView } from '../views/api-view.js'
import { hasContent, ignoreUnreadContent, isJsonRequest, noContent, notJson, type UnexpectedContent } from '../http/media-type.js'
import { compileResponseCheck } from '../schema/response-check.js'
import { wrapIn } from '../views/envelope.js'
import { compileRenamer } from '../schema/serialization.js'
import { wireForm, type SerializerOptions, type WireForm } from '../schema/wire.js'
import { ANSWERED, keptView, type BeforeAction, type CollectedRoute, type View, type ViewClass } from '../views/view.js'
import { then } from '../core/maybe-promise.js'
import type { ViewMethod, ViewStatics } from './collect.js'
import type { EventStreamer } from './event-stream.js'

type Finish = (value: unknown, view: View, reply: FastifyReply) => unknown

/** The form every view route's success schema is compiled (and documented) with. */
const SERVED: SerializerOptions = { byAlias: true }

/**
 * Applies per-request serializer options. A form other than the served one (field names,
 * optional properties) gets its own serializer on this reply, and the body stays an
 * object, so preSerialization hooks still see it.
 */
function applySerializerOptions (
  form: WireForm,
  served: WireForm,
  value: unknown,
  reply: FastifyReply,
  status: number
): unknown {
  const out = form.toWire === undefined ? value : form.toWire(value)
  if (form === served) return out
  reply.type('application/json; charset=utf-8').serializer(reply.compileSerializationSchema(form.schema, String(status)))
  return out
}

function buildFinish (klass: ViewStatics, route: CollectedRoute): Finish {
  const { status, emptyBody, onNone, after } = route
  const wrap = route.envelope === undefined ? undefined : wrapIn(route.envelope)
  const schema = route.responseSchema
  const check = schema !== undefined && klass.validateResponse === true
    ? compileResponseCheck(
      schema,
      klass.fromAttributes ?? null,
      klass.strictResponse === true
    )
    : undefined
  const defaults = klass.defaultSerializerOptions ?? SERVED
  // The forms the route's own options pick are found once here; a request's own options look theirs up.
  const forms = schema === undefined
    ? undefined
    : {
        schema,
        served: wireForm(schema, SERVED),
        defaults: wireForm(schema, defaults)
      }
  const defaultsNeedWork = forms !== undefined && (defaults.excludeNone === true || defaults.byAlias === false ||
    forms.defaults.toWire !== undefined)

  return (value, view, reply) => {
    // An async action that returned the reply (`return this.checkLastModified(...) ?? item`)
    // resolves to nothing, since a reply is thenable: the response is already on its way.
    if (value === reply || (value === undefined && reply.sent)) return reply
    if (status !== 200) reply.code(status)
    if (value === null || value === undefined) {
      if (onNone !== undefined) throw onNone()
      return reply.send()
    }
    if (after !== undefined) after(view, value, reply)
    if (emptyBody) return reply.send()
    if (typeof value === 'string' || Buffer.isBuffer(value)) {
      reply.type('text/plain; charset=utf-8')
      return value
    }
    const sent = wrap === undefined ? value : wrap(value)
    const body = check === undefined ? sent : check(sent)
    if (forms === undefined) return body
    const own = (view as Partial<APIView>)[OWN_SERIALIZER_OPTIONS]
    if (own === undefined && !defaultsNeedWork) return body
    return applySerializerOptions(
      own === undefined ? forms.defaults : wireForm(forms.schema, own),
      forms.served,
      body,
      reply,
      status
    )
  }
}

/** What a route's handler checks of the request's content before the action runs. */
export interface ContentChecks {
  /** The route takes a JSON body only and refuses another media type here, once the body passed validation (a failed one is refused by the error handler). */
  json: boolean
  /** The route takes no content, on a method whose content Fastify never reads: no hook before parsing sees it, so the handler ignores or refuses it. */
  none: UnexpectedContent | undefined
  /** The body may be left out: a JSON `null`, which Fastify's validation cannot tell from no body, is none too. */
  optionalBody: boolean
  /** The route's body limit, past which unread content closes the connection (`ignoreUnreadContent`). */
  bodyLimit: number
}

/**
 * `keepsView`: a hook of the route may have made the request's view already. `before`: the
 * mixins' work on the view before the action (`BeforeAction`), on the body as it was validated,
 * before the handler renames its members. `events`: the route answers a stream of events (`Events`).
 */
export function buildHandler (
  klass: ViewClass,
  route: CollectedRoute,
  fn: ViewMethod,
  checks: ContentChecks,
  keepsView: boolean,
  before: readonly BeforeAction[] = [],
  events?: EventStreamer
) {
  const finish = buildFinish(klass, route)
  const bodyRename = route.options.schema?.body === undefined
    ? undefined
    : compileRenamer(
      route.options.schema.body,
      false
    )
  const { json, none, optionalBody, bodyLimit } = checks
  // A standard action takes its body in the envelope too; a route of the view's own, as its schema says.
  const envelope = route.standard && route.options.schema?.body !== undefined ? route.envelope : undefined
  // Registration refused abstract views (assertRegistrable): this class is concrete.
  const Klass = klass as new (request: FastifyRequest, reply: FastifyReply) => View
  const act = events !== undefined
    ? (view: View, request: FastifyRequest, reply: FastifyReply): unknown => events.act(fn, view, request, reply)
    : (view: View, request: FastifyRequest, reply: FastifyReply): unknown => {
        if (optionalBody && request.body === null) request.body = undefined
        if (bodyRename !== undefined) request.body = bodyRename(request.body)
        if (envelope !== undefined) request.body = (request.body as Record<string, unknown>)[envelope] // validated: the envelope holds the body
        const result = fn.call(view, request)
        // Returning the reply (thenable too) means the response is already sent: it is not waited on.
        return then(result, (value) => finish(value, view, reply), reply)
      }
  // The steps, then the action: each after the one before it has settled, synchronous while they are.
  const run = before.reduceRight<typeof act>(
    (next, step) => (view, request, reply) =>
      then(step(view, request, reply), (done) => done === ANSWERED ? reply : next(view, request, reply)),
    act
  )
  return function viewRouteHandler (request: FastifyRequest, reply: FastifyReply): unknown {
    if (json && !isJsonRequest(request.headers)) throw notJson(request.headers['content-type'])
    if (none !== undefined && hasContent(request.headers)) {
      if (none === 'refuse') throw noContent()
      ignoreUnreadContent(request, reply, bodyLimit)
    }
    // A hook that needed the view first (a precondition check) made it; else it is made here.
    const view = (keepsView ? keptView(request) : undefined) ?? new Klass(request, reply)
    return run(view, request, reply)
  }
}
