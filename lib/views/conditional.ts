import { Readable } from 'node:stream'
import { schemaStatic } from '../core/typebox-lines.js'
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest, onSendHookHandler, preSerializationHookHandler, preValidationHookHandler } from 'fastify'
import type { APIView } from './api-view.js'
import { PreconditionFailed, PreconditionRequired } from '../http/errors.js'
import type { ActionViewClass } from './actions.js'
import { defineMixin, type ViewBase } from './mixins.js'
import {
  etagOf, failsPrecondition, httpDate, isNotModified, namesStrongTag, parseEntityTags, parseHttpDate, toSeconds,
  weakMatch, type Validators
} from '../http/preconditions.js'
import { alwaysSent } from '../http/response-headers.js'
import { honoursPreconditions, versionFieldOf, type Criteria, type Precondition, type RepositoryOptions } from '../stores/repository.js'
import { loadParent, objectParams } from './parent.js'
import { judges } from './object-permissions.js'
import { envelopeSchema, wrapIn } from './envelope.js'
import { compileRepresentation, type SerializerOptions } from '../schema/wire.js'
import { validateTargetEarly } from '../schema/validation.js'
import type { ResponsesMap } from '../routes/types.js'
import { mergeResponses } from '../routes/route-meta.js'
import { keepView, type RouteDefinition } from './view.js'
import { isThenable, then } from '../core/maybe-promise.js'
import { toList } from '../core/list.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { isRecord } from '../core/record.js'
import { isUnionNode, type SchemaNode } from '../core/schema-node.js'
import { contentValidEarly, isVersionComparer, tagStamp, versionTags, type VersionTags } from './versioned.js'

/** The instance members `ConditionalMixin` adds (docs/conditional.md). */
export interface ConditionalMembers {
  /** Answers 304 when the client's copy (`If-None-Match`) is current; otherwise stamps `ETag` and returns `undefined`. */
  checkEtag (etag: string): FastifyReply | undefined
  /**
   * Answers 304 when `If-Modified-Since` shows the client's copy is current; otherwise
   * stamps `Last-Modified` and returns `undefined`: `return this.checkLastModified(item.updatedAt) ?? item`.
   */
  checkLastModified (value: Date | string | number): FastifyReply | undefined
  /** Sends a 304: the headers set so far (ETag, Cache-Control, Vary, Expires), no body. */
  notModified (): FastifyReply
  /** Whether `If-None-Match` matches the tag (weak comparison, lists and `*`). */
  etagMatches (etag: string): boolean
  /** Whether `If-Modified-Since` is at or after the value (second precision); false when absent or invalid. */
  notModifiedSince (value: Date | string | number): boolean
  /**
   * The current validators of the target resource, for the 412 preconditions of PUT,
   * PATCH and DELETE; `null` when it does not exist (preconditions are then ignored and
   * the action answers its 404). Generic views read the object through their repository.
   */
  getValidators (request: FastifyRequest): Validators | null | undefined | Promise<Validators | null | undefined>
  /**
   * The precondition a generic write hands its repository (`options.precondition`) when the
   * request is conditional, so that the check and the write are one atomic step; `undefined`
   * for an unconditional request.
   */
  writePrecondition (request: FastifyRequest): Precondition | undefined
  /**
   * With `versionField`, for a write whose `If-Match` names one version: the criterion that makes
   * the write change the object only at that version (`{ version: 3 }`), so that the comparison
   * and the write are one statement; `undefined` for any other request.
   */
  versionCriteria (request: FastifyRequest): Criteria | undefined
  /**
   * After a write limited by `versionCriteria` changed nothing: reads the object as the action
   * would, and throws `PreconditionFailed` when it exists (it has another version), or returns
   * `null` (the action's 404) when it does not.
   */
  versionMissed (request: FastifyRequest): null | Promise<null>
}

/** Statics of `ConditionalMixin`. */
export interface ConditionalStatics {
  /** Hash every 2xx GET/HEAD body into a strong ETag and answer 304 when the client's copy is current. */
  etag: boolean
  /** Document validators, 304 and 412 for hand-rolled validators (`checkEtag`, `checkLastModified`). */
  conditionalRequests: boolean
  /** The field holding an object's modification time, for `Last-Modified` of generic views' preconditions. */
  lastModifiedField: string | undefined
  /**
   * Refuse an unsafe detail request whose `If-Match` names no strong ETag with 428 Precondition
   * Required (RFC 6585 §3), so that no client can overwrite a version it did not read.
   */
  requirePreconditions: boolean
  /**
   * An integer field the view's repository changes on every update (its `versionField` or
   * `versionColumn`): ETags are made from it instead of hashing each body, and a write whose
   * `If-Match` names one is compared in the write itself, one `UPDATE ... AND version = ?`.
   */
  versionField: string | undefined
}

declare module './mixins.js' {
  // An augmentation repeats the interface's type parameters, used or not.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ActionRegistry<M> { conditional: ConditionalMembers }
}

/** A class with `ConditionalMixin`'s statics, as the mixin builds it. */
type ConditionalClass = ViewBase & ConditionalStatics
/** Where a view serving a conditional write keeps the ETag of an object as its GET sends it. */
const ETAG_OF = Symbol('fastify-views.etag-of')
/** Where the view serving a write whose `If-Match` names one stored version keeps the criterion that compares it (`{ version: 3 }`). */
const COMPARED_VERSION = Symbol('fastify-views.compared-version')

type ConditionalView = APIView & ConditionalMembers & {
  [ETAG_OF]?: (object: unknown) => string
  [COMPARED_VERSION]?: Criteria
  repository?: { get?: (criteria: Record<string, unknown>, options: Record<string, unknown>) => unknown }
  // Present whenever `repository` is: all come from GenericViewMixin.
  getScopeKwargs: (action?: string) => Record<string, unknown>
  getRepositoryOptions: (action: string) => Record<string, unknown>
  checkObjectPermissions: (object: unknown, action: string) => void
}

const SAFE = new Set(['GET', 'HEAD'])
/** The generic actions that write one object through the repository. */
const GENERIC_WRITES = new Set(['update', 'partialUpdate', 'destroy'])

/**
 * The body of a 304. Fastify's HEAD route ends with a hook that sets `content-length: 0`
 * for an empty payload (and fails on `null`), and a 304 must not claim a length the 200
 * would not have (RFC 9110 section 8.6); an ended stream is the one payload it passes on
 * untouched. GET needs none of this.
 */
function notModifiedBody (request: FastifyRequest): Readable | null {
  return request.method === 'HEAD' ? Readable.from([]) : null
}
const UNSAFE = new Set(['PUT', 'PATCH', 'DELETE'])

/**
 * The `onSend` hook of GET/HEAD routes of views with `etag = true`: hashes a 2xx body
 * into a strong ETag (unless the handler set one) and turns a fresh request into a 304
 * with no body, no Content-Type and no Content-Length (RFC 9110 sections 13.2.2, 15.4.5).
 */
export const etagOnSend: onSendHookHandler = (request, reply, payload, done) => {
  const status = reply.statusCode
  // A 304 decided before serialization, from a stored version's tag (`tagStamp`): sent the same way.
  if (status === 304 && payload === '') {
    notModifiedAnswer(request, reply, done)
    return
  }
  if (status < 200 || status >= 300 || (typeof payload !== 'string' && !Buffer.isBuffer(payload))) {
    done(null, payload)
    return
  }
  const set = reply.getHeader('etag')
  let etag = typeof set === 'string' ? set : undefined
  if (etag === undefined) {
    etag = etagOf(payload)
    reply.header('etag', etag)
  }
  const stamped = reply.getHeader('last-modified')
  const lastModified = typeof stamped === 'string' ? stamped : undefined
  if (isNotModified(request.headers, { etag, lastModified })) {
    reply.code(304)
    notModifiedAnswer(request, reply, done)
    return
  }
  done(null, payload)
}

/** Ends an `onSend` hook with a 304: no body, no Content-Type and no Content-Length (RFC 9110 §15.4.5). */
function notModifiedAnswer (
  request: FastifyRequest,
  reply: FastifyReply,
  done: (error: null, payload: unknown) => void
): void {
  // Deleting a header that is set makes V8 store the reply's headers as a dictionary: Content-Type
  // only when present. Content-Length is set later by Fastify, if a handler did not: deleting an
  // absent property costs nothing.
  if (reply.hasHeader('content-type')) reply.removeHeader('content-type')
  reply.removeHeader('content-length')
  done(null, notModifiedBody(request))
}

/** The `onSend` hook of PUT/PATCH detail routes with `etag = true`: the ETag of the new representation. */
const etagOnWrite: onSendHookHandler = (_request, reply, payload, done) => {
  // Only a representation gets a tag: a success with the body the serializer wrote, and no tag of the handler's own.
  if (reply.statusCode < 300 && typeof payload === 'string' && payload !== '' && !reply.hasHeader('etag')) reply.header('etag', etagOf(payload))
  done(null, payload)
}

/** What GET sends of an item, in the view's envelope when it has one: what the ETag a client holds was hashed from. */
function representationOf (
  item: TSchema,
  envelope: string | undefined,
  options: SerializerOptions,
  compile: (schema: TSchema) => (value: unknown) => string
): (value: unknown) => string {
  if (envelope === undefined) return compileRepresentation(item, options, compile)
  const serialize = compileRepresentation(envelopeSchema(item, envelope), options, compile)
  const wrap = wrapIn(envelope)
  return (value) => serialize(wrap(value))
}

/**
 * The precondition check of unsafe detail routes. It runs in `preValidation`: after
 * the route's `onRequest` and `preValidation` dependencies (authentication comes
 * first), before the body is validated, because preconditions are evaluated before
 * the request content is processed (RFC 9110 section 13.2.1): a stale If-Match with
 * an invalid body is a 412. A request without conditional headers costs three
 * property lookups; one with them reads the current validators and answers 412 when
 * they fail (section 13.2.2).
 */
function preconditionCheck (klass: ConditionalClass, etagOfObject: ((object: unknown) => string) | undefined,
  tags: VersionTags | undefined): preValidationHookHandler {
  const Klass = klass as unknown as new (request: FastifyRequest, reply: FastifyReply) => ConditionalView // a view class is constructed with the request and reply; its statics type says nothing of instances
  const required = klass.requirePreconditions === true
  function viewOf (request: FastifyRequest, reply: FastifyReply): ConditionalView {
    // The handler serves the request with this same instance, which knows how GET tags an object.
    const view = keepView(request, new Klass(request, reply))
    view[ETAG_OF] = etagOfObject
    return view
  }
  async function evaluate (request: FastifyRequest, reply: FastifyReply): Promise<void> {
    const view = viewOf(request, reply)
    const current = await view.getValidators(request)
    // No current representation: the action's own answer (404) wins over preconditions (RFC 9110 section 13.2.1).
    if (current != null && failsPrecondition(request.headers, current)) throw new PreconditionFailed(CHANGED)
  }
  // A callback hook: a request without conditional headers, the common write, costs no promise.
  return function checkPreconditions (request, reply, done) {
    const headers = request.headers
    // Only a strong tag names the version the client read; a date cannot tell two changes
    // within one second apart, and `*` matches any version (RFC 9110 sections 8.8.2.2, 13.1.1).
    if (required && !namesStrongTag(headers['if-match'])) {
      done(new PreconditionRequired(REQUIRED))
      return
    }
    // The target is named by the URI: a malformed path or query is answered (400) before
    // any precondition, and a valid one is converted (an integer id) before it is used.
    if ((headers['if-match'] === undefined && headers['if-none-match'] === undefined && headers['if-unmodified-since'] === undefined) || !validateTargetEarly(request)) {
      done()
      return
    }
    // An If-Match naming one stored version, without If-None-Match, on a valid request: the write
    // compares it (versionCriteria), and nothing is read first. If-Unmodified-Since is not
    // evaluated beside an If-Match (RFC 9110 §13.2.2).
    if (tags !== undefined && headers['if-none-match'] === undefined) {
      const version = tags.versionIn(headers['if-match'])
      if (version !== undefined && contentValidEarly(request)) {
        viewOf(request, reply)[COMPARED_VERSION] = { [tags.field]: version }
        done()
        return
      }
    }
    evaluate(request, reply).then(() => { done() }, done)
  }
}

const CHANGED = 'The resource has changed since the validators the request was made with.'
const REQUIRED = 'Send If-Match with the ETag of the representation you change; If-Match: *, a weak ETag or If-Unmodified-Since alone does not say which version you read.'

// The conditional request headers, documented as parameters so that Swagger UI's "Try it out" can send them (RFC 9110 §13.1).
const READ_CONDITIONS: Record<string, TSchema> = {
  'if-none-match': Type.Optional(Type.String({ description: 'The ETags of the copies the client holds, or *: 304 when one is current (RFC 9110 §13.1.2).' })),
  'if-modified-since': Type.Optional(Type.String({ description: 'The Last-Modified of the client\'s copy, an HTTP-date: 304 when unchanged since (RFC 9110 §13.1.3).' }))
}
const WRITE_CONDITIONS: Record<string, TSchema> = {
  'if-match': Type.Optional(Type.String({ description: 'The ETag the change is based on (strong comparison), or *: 412 when it no longer matches (RFC 9110 §13.1.1).' })),
  'if-unmodified-since': Type.Optional(Type.String({ description: 'The Last-Modified the change is based on, an HTTP-date: 412 when modified since, or within the current second (RFC 9110 §13.1.4).' })),
  'if-none-match': Type.Optional(Type.String({ description: '*: change only a resource that does not exist yet; 412 otherwise (RFC 9110 §13.1.2).' }))
}

/** The validators of a stored object: the ETag of the representation GET sends, and its modification time. */
function validatorsOf (view: ConditionalView, item: unknown): Validators {
  const etagOfObject = view[ETAG_OF]
  const validators: Validators = {}
  if (etagOfObject !== undefined) validators.etag = etagOfObject(item)
  const field = (view.constructor as ConditionalClass).lastModifiedField // an instance's constructor is its class
  const value = field !== undefined && isRecord(item) ? item[field] : undefined
  if (value instanceof Date || typeof value === 'string' || typeof value === 'number') validators.lastModified = value
  return validators
}

/** Whether a property schema holds a time: a date-time or date string, nullable or not. */
function holdsTime (schema: SchemaNode): boolean {
  if (isUnionNode(schema)) {
    const members = schema.anyOf.filter((member) => member.type !== 'null')
    return members.length > 0 && members.every(holdsTime)
  }
  return schema.type === 'string' && (schema.format === 'date-time' || schema.format === 'date')
}

/** Stamps `Last-Modified` from a field of the object a GET returns, so If-Modified-Since can answer 304. */
function lastModifiedStamp (field: string, envelope: string | undefined): preSerializationHookHandler<unknown> {
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
  return (_request, reply, payload, done) => {
    // In a view's envelope (`{ "book": {...} }`), the object is the envelope's member.
    const object = envelope === undefined || !isObject(payload) ? payload : payload[envelope]
    const value = isObject(object) ? object[field] : undefined
    const stamp = value instanceof Date || typeof value === 'string' || typeof value === 'number' ? httpDate(value) : undefined
    if (stamp !== undefined && reply.statusCode < 300 && !reply.hasHeader('last-modified')) reply.header('last-modified', stamp)
    done(null, payload)
  }
}

/**
 * `Last-Modified` as servers send it: an IMF-fixdate (RFC 9110 section 5.6.7). JSON Schema has
 * no format for HTTP-dates, so the shape is a pattern, with an example for Swagger UI.
 */
const LAST_MODIFIED = Type.String({
  description: 'When the representation last changed, as an HTTP-date (RFC 9110 section 8.8.2).',
  pattern: '^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), [0-9]{2} (Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec) [0-9]{4} [0-9]{2}:[0-9]{2}:[0-9]{2} GMT$',
  examples: ['Thu, 01 Jan 2026 10:00:00 GMT']
})

const validatorHeaders = (klass: ConditionalClass, route: RouteDefinition): Record<string, unknown> => {
  const etag = Type.String({ description: 'Strong validator of the representation (RFC 9110 section 8.8.3).' })
  // With etag = true every 2xx and 304 of the route carries one; hand-rolled validators may not.
  const headers: Record<string, unknown> = { etag: klass.etag === true ? alwaysSent(etag) : etag }
  // lastModifiedField is stamped (with etag) from that field of the object sent: only a route
  // whose body has the field sends it; a list, a page or a custom shape never does.
  const field = klass.lastModifiedField
  const stamped = klass.etag === true && field !== undefined &&
    (route.responseSchema?.properties as Record<string, unknown> | undefined)?.[field] !== undefined
  if (klass.conditionalRequests === true || stamped) headers['last-modified'] = LAST_MODIFIED
  return headers
}

/**
 * Conditional requests with no cache backend (docs/conditional.md). Mix it in first:
 * `mix(ConditionalMixin, AsyncGenericViewSet)`. `etag = true` adds strong ETags and
 * 304s to GET/HEAD; PUT, PATCH and DELETE of detail routes check If-Match,
 * If-Unmodified-Since and If-None-Match before the action and answer 412.
 */
export const ConditionalMixin = defineMixin<ActionViewClass<'conditional', ConditionalStatics>>('ConditionalMixin', (Base) => {
  const cls = class ConditionalMixin extends Base {
    static etag = false
    static conditionalRequests = false
    static lastModifiedField: string | undefined = undefined
    static requirePreconditions = false
    static versionField: string | undefined = undefined

    static override assertRegistrable (): void {
      super.assertRegistrable()
      // Last-Modified is stamped from that field of the body sent: a field the response schema
      // does not have would silently never be sent.
      const field = this.lastModifiedField
      const properties: Record<string, SchemaNode> | undefined = schemaStatic(this, 'responseSchema')?.properties
      if (field !== undefined && properties !== undefined && !Object.hasOwn(properties, field)) {
        throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${this.name}: lastModifiedField "${field}" is not a property of its responseSchema (its properties: ${Object.keys(properties).join(', ')})`)
      }
      // A field that holds no time (a title, a year) would be read as one, or never sent.
      if (field !== undefined && properties !== undefined && !holdsTime(properties[field])) {
        throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${this.name}: lastModifiedField "${field}" is not a time in its responseSchema: ` +
          'name the field that says when the item last changed, a string with format \'date-time\' (or \'date\')')
      }
      // Mixed in with nothing turned on, the mixin would do nothing at all: no validators, no 304,
      // no 412, and lastModifiedField and requirePreconditions would be silently inert.
      if (this.etag !== true && this.conditionalRequests !== true) {
        throw new ConfigurationError('FV_ERR_CONDITIONAL_OFF', `Cannot register ${this.name}: it mixes in ConditionalMixin but turns nothing on, so it sends no validators ` +
          'and checks no preconditions. Set etag = true (an ETag, and Last-Modified from lastModifiedField, on every GET; 304 and 412), or ' +
          'conditionalRequests = true (validators you set yourself with checkEtag / checkLastModified, and 412 from getValidators), or leave ConditionalMixin out')
      }
      // A repository from an instance getter is only known per request: its class answers for it.
      // The repository is GenericViewMixin's static, when there is one.
      const repository: unknown = 'repository' in this ? this.repository : undefined
      if (this.versionField !== undefined) assertVersioned(this, repository)
      const writes = this.standardActions().filter((a) => GENERIC_WRITES.has(a.name)).map((a) => a.name)
      if (writes.length === 0 || repository === undefined || honoursPreconditions(repository)) return
      throw new ConfigurationError('FV_ERR_NOT_ATOMIC', `Cannot register ${this.name}: it checks If-Match on ${writes.join(', ')}, but its repository does not declare ` +
        'atomicPreconditions: true, so a concurrent write could slip between the check and the write. Evaluate options.precondition ' +
        'in update and delete in the same step as the write and declare it (docs/repositories.md, "Conditional writes").')
    }

    static override routeHooks (route: RouteDefinition, method: string): ReturnType<typeof Base.routeHooks> {
      const inherited = super.routeHooks(route, method)
      const item = schemaStatic(this, 'responseSchema')
      // Version tags for the routes that send the view's item (retrieve, the updates, a custom route
      // with the same schema); other bodies (a list, a page, another shape) are hashed.
      const tags = this.versionField === undefined || item === undefined
        ? undefined
        : versionTags(this.versionField, item, route.envelope, this.defaultSerializerOptions)
      const sendsItem = item !== undefined &&
        route.responseSchema === (route.envelope === undefined ? item : envelopeSchema(item, route.envelope))
      // Last-Modified first: a 304 decided by tagStamp reads it for If-Modified-Since.
      type TagOf = ((object: unknown) => string | undefined) | undefined
      const stamps = (tagOf: TagOf): Array<preSerializationHookHandler<unknown>> => [
        ...(this.lastModifiedField === undefined ? [] : [lastModifiedStamp(this.lastModifiedField, route.envelope)]),
        ...(tagOf === undefined ? [] : [tagStamp(tagOf, route.envelope, SAFE.has(method))])
      ]
      if (this.etag === true && SAFE.has(method)) {
        return {
          ...inherited,
          onSend: [etagOnSend, ...toList(inherited.onSend)],
          preSerialization: [
            ...stamps(tags === undefined || !sendsItem ? undefined : tags.tagOf),
            ...toList(inherited.preSerialization)
          ]
        }
      }
      if (UNSAFE.has(method) && route.path.includes(':')) {
        // The representation GET sends, compiled now with the application's serializers: the one its ETag was hashed from.
        const represent = item === undefined
          ? undefined
          : representationOf(item, route.envelope, this.defaultSerializerOptions, route.compileSerializer)
        const etagOfObject = represent === undefined
          ? undefined
          : (object: unknown): string => tags?.tagOf(object) ?? etagOf(represent(object))
        // Only the library's own write compares a version; any other action is checked by the early read.
        const compared = route.standard && isVersionComparer(Reflect.get(this.prototype, route.name)) ? tags : undefined
        const hooks = {
          ...inherited,
          preValidation: [preconditionCheck(this, etagOfObject, compared), ...toList(inherited.preValidation)]
        }
        // A write's response carries the new validators, equal to what a GET would send, so a
        // client can chain conditional writes without reading again (RFC 9110 §8.8.3).
        if (this.etag !== true || method === 'DELETE') return hooks
        // With stored versions, the item a write sends is tagged before serialization (by its version, or
        // by the hash of what GET sends of it), and no onSend hook is needed; any other body is hashed as sent.
        const tagged = tags !== undefined && sendsItem && etagOfObject !== undefined
        return {
          ...hooks,
          ...(tagged ? {} : { onSend: [etagOnWrite, ...toList(inherited.onSend)] }),
          preSerialization: [...stamps(tagged ? etagOfObject : undefined), ...toList(inherited.preSerialization)]
        }
      }
      return inherited
    }

    // Registration refused a view with neither etag nor conditionalRequests (FV_ERR_CONDITIONAL_OFF):
    // what follows documents one that has one of them.
    static override extraResponses (route: RouteDefinition, method: string): ResponsesMap | undefined {
      if (SAFE.has(method)) {
        const headers = validatorHeaders(this, route)
        return mergeResponses(super.extraResponses(route, method), { [route.status]: { headers }, 304: { description: 'Not Modified: the client\'s copy is current.', headers } })
      }
      if (UNSAFE.has(method) && route.path.includes(':')) {
        const refusals: ResponsesMap = { 412: { errors: [PreconditionFailed] } }
        if (this.requirePreconditions === true) refusals[428] = { errors: [PreconditionRequired] }
        // Added to what the mixins below document (a PATCH's Accept-Patch), wherever this mixin stands.
        const inherited = super.extraResponses(route, method)
        if (this.etag !== true || method === 'DELETE') return mergeResponses(inherited, refusals)
        return mergeResponses(inherited, { [route.status]: { headers: validatorHeaders(this, route) }, ...refusals })
      }
      return super.extraResponses(route, method)
    }

    static override documentedHeaders (route: RouteDefinition, method: string): Record<string, TSchema> | undefined {
      if (SAFE.has(method)) return READ_CONDITIONS
      if (UNSAFE.has(method) && route.path.includes(':')) return WRITE_CONDITIONS
      return super.documentedHeaders(route, method)
    }

    checkEtag (this: ConditionalView, etag: string): FastifyReply | undefined {
      this.reply.header('etag', etag)
      // Only GET and HEAD may answer 304 (RFC 9110 section 15.4.5).
      return SAFE.has(this.request.method) && isNotModified(this.request.headers, { etag })
        ? this.notModified()
        : undefined
    }

    checkLastModified (this: ConditionalView, value: Date | string | number): FastifyReply | undefined {
      // An unreadable date stamps nothing and never answers 304: the body is served.
      const seconds = toSeconds(value)
      if (seconds === undefined) return undefined
      // The value is read once; the comparison gets it as milliseconds, which need no parsing.
      const lastModified = seconds * 1000
      this.reply.header('last-modified', new Date(lastModified).toUTCString())
      // With `etag`, a 304 must carry the ETag the 200 would have (RFC 9110 section 15.4.5),
      // which exists only once the body is serialized: the onSend hook decides then.
      if ((this.constructor as ConditionalClass).etag === true) return undefined // an instance's constructor is its class
      return SAFE.has(this.request.method) && isNotModified(this.request.headers, { lastModified })
        ? this.notModified()
        : undefined
    }

    notModified (this: ConditionalView): FastifyReply {
      this.reply.code(304)
      this.reply.removeHeader('content-type')
      return this.reply.send(notModifiedBody(this.request) ?? undefined)
    }

    etagMatches (this: ConditionalView, etag: string): boolean {
      const header = this.request.headers['if-none-match']
      return typeof header === 'string' && weakMatch(parseEntityTags(header), etag)
    }

    notModifiedSince (this: ConditionalView, value: Date | string | number): boolean {
      const header = this.request.headers['if-modified-since']
      const since = typeof header === 'string' ? parseHttpDate(header) : undefined
      const modified = toSeconds(value)
      return since !== undefined && modified !== undefined && modified <= Math.floor(since / 1000)
    }

    getValidators (
      this: ConditionalView,
      request: FastifyRequest
    ): Validators | null | undefined | Promise<Validators | null | undefined> {
      const repository = this.repository
      const get = repository?.get
      if (typeof get !== 'function') return undefined
      const read = (criteria: Criteria, options: RepositoryOptions): unknown => get.call(repository, criteria, options)
      return then(currentObject(this, request, read), (item) => item === null ? null : validatorsOf(this, item))
    }

    writePrecondition (this: ConditionalView, request: FastifyRequest): Precondition | undefined {
      const headers = request.headers
      // A version the write compares itself needs no check of the row read.
      if (this[COMPARED_VERSION] !== undefined) return undefined
      if (headers['if-match'] === undefined && headers['if-none-match'] === undefined && headers['if-unmodified-since'] === undefined) return undefined
      return (current) => {
        if (failsPrecondition(headers, validatorsOf(this, current))) throw new PreconditionFailed(CHANGED)
      }
    }

    versionCriteria (this: ConditionalView, _request: FastifyRequest): Criteria | undefined {
      return this[COMPARED_VERSION]
    }

    versionMissed (this: ConditionalView, request: FastifyRequest): null | Promise<null> {
      // The object read as a precondition check reads it: there (with another version), a 412.
      return then(this.getValidators(request), (current) => {
        if (current != null) throw new PreconditionFailed(CHANGED)
        return null
      })
    }
  }
  return cls
})

/**
 * A version tag is strong only if every change of the object changes its version: the view's
 * repository must be the one that keeps it, in that field. ETags of a field nothing changes
 * would stay the same across updates, and a stale `If-Match` would overwrite a newer version.
 */
function assertVersioned (klass: ConditionalClass, repository: unknown): void {
  const field = klass.versionField
  const kept = versionFieldOf(repository)
  if (klass.etag !== true) {
    throw new ConfigurationError('FV_ERR_VERSION_FIELD', `Cannot register ${klass.name}: versionField "${String(field)}" makes the ETags of etag = true from a stored version, ` +
      'and this view has etag = false. Set etag = true, or leave versionField out')
  }
  if (kept === field) return
  const has = kept === undefined ? 'keeps no version' : `keeps its version in "${kept}"`
  throw new ConfigurationError('FV_ERR_VERSION_FIELD', `Cannot register ${klass.name}: versionField is "${String(field)}", but its repository ${has}, so that field would not change ` +
    'on every update and an ETag made from it would match a newer version. Declare the column on the repository (versionColumn of a SQL table, ' +
    'versionField of a MemoryRepository, a versionField property of your own store that bumps it on every write), or name the field it keeps')
}

/**
 * The object a detail write targets, read as its action reads it: within the parent, in the
 * scope, and only one the client may see (object permissions), so that a 304 or a 412 tells a
 * client nothing of an object it may not read. `null` when there is none.
 */
function currentObject (
  view: ConditionalView,
  request: FastifyRequest,
  get: (criteria: Criteria, options: RepositoryOptions) => unknown
): unknown {
  const action = request.routeOptions.config.action!
  const read = (): unknown => {
    const criteria = {
      ...objectParams(view, request.params as Record<string, unknown>),
      ...view.getScopeKwargs(action)
    }
    return then(get(criteria, view.getRepositoryOptions(action)), (item) => {
      if (item === null || item === undefined) return null
      if (judges(view.constructor, action)) view.checkObjectPermissions(item, action)
      return item
    })
  }
  const loaded = loadParent(view)
  return isThenable(loaded) ? Promise.resolve(loaded).then(read) : read()
}
