// ConditionalMixin (views layer): validators (ETag, Last-Modified), 304 and 412 for the views it is mixed
// into, with no cache backend; the 304 side, the 412 side and what it documents are in the files beside.
import { schemaStatic } from '../../core/typebox-lines.js'
import type { FastifyReply, FastifyRequest, preSerializationHookHandler } from 'fastify'
import type { APIView } from '../api-view.js'
import { PreconditionFailed, PreconditionRequired } from '../../http/errors.js'
import type { ActionViewClass } from '../actions/standard.js'
import { defineMixin, type ViewBase } from '../mixins.js'
import { etagOf, failsPrecondition, isNotModified, parseEntityTags, parseHttpDate, toSeconds, weakMatch, type Validators } from '../../http/preconditions.js'
import { honoursPreconditions, versionFieldOf } from '../../stores/repository.js'
import { envelopeSchema } from '../envelope.js'
import type { ResponsesMap } from '../../routes/types.js'
import { extendContribution, type RouteContribution, type RouteDefinition } from '../view.js'
import { withPrecondition, type WriteDescription } from '../write.js'
import { then, type Awaitable } from '../../core/maybe-promise.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import type { SchemaNode } from '../../core/schema-node.js'
import { comparesVersion } from '../generic/generic-actions.js'
import { etagOnSend, etagOnWrite, lastModifiedStamp, notModifiedBody, representationOf } from './not-modified.js'
import { CHANGED, preconditionCheck, validatorsOf, type ConditionalState } from './precondition-check.js'
import { holdsTime, READ_CONDITIONS, validatorHeaders, WRITE_CONDITIONS } from './conditional-docs.js'
import { tagStamp, versionTags, type VersionTags } from './versioned.js'
import { CONDITIONAL, type ConditionalOptions } from './conditional-options.js'
import { sparseVariantsOf } from '../../query/field-set.js'
import type { TSchema } from '@sinclair/typebox'

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
}

/** Statics of `ConditionalMixin`. */
export interface ConditionalStatics {
  /** What it does for the view: `{ etag, requests, lastModifiedField, versionField, require }` (all off by default). */
  conditional: ConditionalOptions
}

declare module '../mixins.js' {
  // An augmentation repeats the interface's type parameters, used or not.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ActionRegistry<M> { conditional: ConditionalMembers }
}

/** A class with `ConditionalMixin`'s statics, as the mixin builds it. */
type ConditionalClass = ViewBase & ConditionalStatics

/** A conditional view as its own members see it: what a generic view below it adds, when there is one. */
type ConditionalView = APIView & ConditionalMembers & {
  conditionalState: ConditionalState | undefined
  getObject?: (action?: string) => Awaitable<unknown>
}

const SAFE = new Set(['GET', 'HEAD'])
const UNSAFE = new Set(['PUT', 'PATCH', 'DELETE'])
/** The generic actions that write one object through the repository. */
const GENERIC_WRITES = new Set(['update', 'partialUpdate', 'destroy', 'restore'])
/** Whether a route writes the object its path names: PUT, PATCH, DELETE, and SoftDeleteMixin's `POST .../restore`. */
const writesObject = (route: RouteDefinition, method: string): boolean =>
  UNSAFE.has(method) || (method === 'POST' && route.standard && route.name === 'restore')

/**
 * Conditional requests with no cache backend (docs/conditional.md). Mix it in first:
 * `mix(ConditionalMixin, AsyncGenericViewSet)`. `conditional = { etag: true }` adds strong ETags and
 * 304s to GET/HEAD; PUT, PATCH and DELETE of detail routes check If-Match,
 * If-Unmodified-Since and If-None-Match before the action and answer 412.
 */
export const ConditionalMixin = defineMixin<ActionViewClass<'conditional', ConditionalStatics>>('ConditionalMixin', (Base) => {
  const cls = class ConditionalMixin extends Base {
    static conditional: ConditionalOptions = {}

    static override assertRegistrable (): void {
      super.assertRegistrable()
      const { etag, requests, lastModifiedField: field, versionField } = CONDITIONAL.of(this)
      // Last-Modified is stamped from that field of the body sent: a field the response schema
      // does not have would silently never be sent.
      const properties: Record<string, SchemaNode> | undefined = schemaStatic(this, 'responseSchema')?.properties
      if (field !== undefined && properties !== undefined && !Object.hasOwn(properties, field)) {
        throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${this.name}: conditional.lastModifiedField "${field}" is not a property of its responseSchema (its properties: ${Object.keys(properties).join(', ')})`)
      }
      // A field that holds no time (a title, a year) would be read as one, or never sent.
      if (field !== undefined && properties !== undefined && !holdsTime(properties[field])) {
        throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${this.name}: conditional.lastModifiedField "${field}" is not a time in its responseSchema: ` +
          'name the field that says when the item last changed, a string with format \'date-time\' (or \'date\')')
      }
      // Mixed in with nothing turned on, the mixin would do nothing at all: no validators, no 304,
      // no 412, and lastModifiedField and require would be silently inert.
      if (etag !== true && requests !== true) {
        throw new ConfigurationError('FV_ERR_CONDITIONAL_OFF', `Cannot register ${this.name}: it mixes in ConditionalMixin but turns nothing on, so it sends no validators ` +
          'and checks no preconditions. Set conditional = { etag: true } (an ETag, and Last-Modified from lastModifiedField, on every GET; 304 and 412), or ' +
          'conditional = { requests: true } (validators you set yourself with checkEtag / checkLastModified, and 412 from getValidators), or leave ConditionalMixin out')
      }
      // A repository from an instance getter is only known per request: its class answers for it.
      // The repository is GenericViewMixin's static, when there is one.
      const repository: unknown = 'repository' in this ? this.repository : undefined
      if (versionField !== undefined) assertVersioned(this, versionField, etag === true, repository)
      const writes = this.standardActions().filter((a) => GENERIC_WRITES.has(a.name)).map((a) => a.name)
      if (writes.length === 0 || repository === undefined || honoursPreconditions(repository)) return
      throw new ConfigurationError('FV_ERR_NOT_ATOMIC', `Cannot register ${this.name}: it checks If-Match on ${writes.join(', ')}, but its repository does not declare ` +
        'atomicPreconditions: true, so a concurrent write could slip between the check and the write. Evaluate options.precondition ' +
        'in update and delete in the same step as the write and declare it (docs/repositories.md, "Conditional writes").')
    }

    // One test of the route, then everything the mixin adds to it: on GET and HEAD the validators
    // of what is sent and the 304; on an unsafe detail route the preconditions (412, 428), checked
    // before the content is looked at, and the validators of the new representation.
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      // An event stream has no representation to tag: each read is new (docs/streaming.md).
      if (route.events !== undefined) return inherited
      if (SAFE.has(method)) return extendContribution(inherited, readContribution(this, route))
      if (writesObject(route, method) && route.path.includes(':')) return extendContribution(inherited, writeContribution(this, route, method))
      return inherited
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
      if ((this.constructor as ConditionalClass).conditional.etag === true) return undefined // an instance's constructor is its class
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

    getValidators (this: ConditionalView, request: FastifyRequest): Awaitable<Validators | null | undefined> {
      // A generic view reads the object as its action does (within the parent and the scope, only
      // one the client may see), so that a 304 or a 412 tells a client nothing of an object it may not read.
      if (this.getObject === undefined) return undefined
      // A generic view's getObject is sync or async as its repository.
      const read = this.getObject(request.routeOptions.config.action)
      return then(read, (item) => {
        if (item === null) return null
        // The write after the precondition check receives the row it was checked on.
        if (this.conditionalState !== undefined) this.conditionalState.current = item
        return validatorsOf(this, item)
      })
    }

    // A conditional write on a generic view: an If-Match naming one stored version is a criterion of
    // the write itself (one `UPDATE ... AND version = ?`), and a write that then changes nothing
    // reads the object again: there, it has another version (412); gone, the action's 404. Any other
    // conditional header is checked on the current row in the write's atomic step.
    override describeWrite (this: ConditionalView, action: string): WriteDescription {
      const write = super.describeWrite(action)
      const state = this.conditionalState
      const compared = state?.comparedVersion
      if (compared !== undefined) {
        return { ...write, criteria: { ...write.criteria, ...compared }, miss: () => versionMissed(this, action) }
      }
      const headers = this.request.headers
      if (headers['if-match'] === undefined && headers['if-none-match'] === undefined && headers['if-unmodified-since'] === undefined) return write
      // The row the preconditions were first checked on, unless a patch read it since.
      return withPrecondition(write, (current) => {
        if (failsPrecondition(headers, validatorsOf(this, current))) throw new PreconditionFailed(CHANGED)
      }, write.current ?? state?.current)
    }
  }
  return cls
})

/**
 * A version tag is strong only if every change of the object changes its version: the view's
 * repository must be the one that keeps it, in that field. ETags of a field nothing changes
 * would stay the same across updates, and a stale `If-Match` would overwrite a newer version.
 */
function assertVersioned (klass: ConditionalClass, field: string, etag: boolean, repository: unknown): void {
  const kept = versionFieldOf(repository)
  if (!etag) {
    throw new ConfigurationError('FV_ERR_VERSION_FIELD', `Cannot register ${klass.name}: conditional.versionField "${field}" makes the ETags of etag: true from a stored version, ` +
      'and this view does not set etag. Set conditional = { etag: true, versionField }, or leave versionField out')
  }
  if (kept === field) return
  const has = kept === undefined ? 'keeps no version' : `keeps its version in "${kept}"`
  throw new ConfigurationError('FV_ERR_VERSION_FIELD', `Cannot register ${klass.name}: conditional.versionField is "${field}", but its repository ${has}, so that field would not change ` +
    'on every update and an ETag made from it would match a newer version. Declare the column on the repository (versionColumn of a SQL table, ' +
    'versionField of a MemoryRepository, a versionField property of your own store that bumps it on every write), or name the field it keeps')
}

/** What the mixin adds to a GET or HEAD: ETag and Last-Modified, and the 304 (documented). */
function readContribution (klass: ConditionalClass, route: RouteDefinition): RouteContribution {
  const headers = validatorHeaders(klass, route)
  const responses: ResponsesMap = { [route.status]: { headers }, 304: { description: 'Not Modified: the client\'s copy is current.', headers } }
  // Registration refused a view with neither etag nor requests (FV_ERR_CONDITIONAL_OFF):
  // with hand-rolled validators only, the routes are documented and the handler answers.
  if (klass.conditional.etag !== true) return { responses, requestHeaders: READ_CONDITIONS }
  const tags = tagsOf(klass, route)
  return {
    onSend: [etagOnSend],
    // On GET and HEAD, a client whose copy is current gets its 304 before the body is serialized.
    preSerialization: stamps(klass, route, sendsItem(klass, route) ? tags?.tagOf : undefined, true),
    responses,
    requestHeaders: READ_CONDITIONS
  }
}

/** What the mixin adds to a PUT, PATCH or DELETE of one object: its preconditions, and the new validators. */
function writeContribution (klass: ConditionalClass, route: RouteDefinition, method: string): RouteContribution {
  const tags = tagsOf(klass, route)
  const item = schemaStatic(klass, 'responseSchema')
  // The representation GET sends, compiled now with the application's serializers: the one its ETag was hashed from.
  const represent = item === undefined
    ? undefined
    : representationOf(item, route.envelope, klass.defaultSerializerOptions, route.compileSerializer)
  const etagOfObject = represent === undefined
    ? undefined
    : (object: unknown): string => tags?.tagOf(object) ?? etagOf(represent(object))
  // Only the library's own write compares a version; any other action is checked by the read before it.
  const compared = route.standard && comparesVersion(klass, route.name) ? tags : undefined
  const responses: ResponsesMap = { 412: { errors: [PreconditionFailed] } }
  if (klass.conditional.require === true) responses[428] = { errors: [PreconditionRequired] }
  const check = preconditionCheck(klass, etagOfObject, compared)
  const checks: RouteContribution = { preconditions: [check], requestHeaders: WRITE_CONDITIONS }
  if (klass.conditional.etag !== true || method === 'DELETE') return { ...checks, responses }
  // A write's response carries the new validators, equal to what a GET would send, so a client
  // can chain conditional writes without reading again (RFC 9110 §8.8.3). With stored versions,
  // the item a write sends is tagged before serialization (by its version, or by the hash of what
  // GET sends of it), and no onSend hook is needed; any other body is hashed as sent.
  const tagged = tags !== undefined && sendsItem(klass, route) && etagOfObject !== undefined
  return {
    ...checks,
    ...(tagged ? {} : { onSend: [etagOnWrite] }),
    preSerialization: stamps(klass, route, tagged ? etagOfObject : undefined, false),
    responses: { ...responses, [route.status]: { headers: validatorHeaders(klass, route) } }
  }
}

/** The version tags of the route's item (`versionField`), when the view keeps versions. */
function tagsOf (klass: ConditionalClass, route: RouteDefinition): VersionTags | undefined {
  const item = schemaStatic(klass, 'responseSchema')
  const field = klass.conditional.versionField
  return field === undefined || item === undefined
    ? undefined
    : versionTags(field, item, route.envelope, klass.defaultSerializerOptions)
}

/** Last-Modified first (a 304 decided by tagStamp reads it for If-Modified-Since), then the tag of the item sent, if any. */
function stamps (
  klass: ConditionalClass,
  route: RouteDefinition,
  tagOf: ((object: unknown) => string | undefined) | undefined,
  notModified: boolean
): Array<preSerializationHookHandler<unknown>> {
  const field = klass.conditional.lastModifiedField
  const item = schemaStatic(klass, 'responseSchema')
  const sparse = item !== undefined && sendsFieldSets(item, route)
  return [
    ...(field === undefined ? [] : [lastModifiedStamp(field, route.envelope, sparse)]),
    ...(tagOf === undefined ? [] : [tagStamp(tagOf, route.envelope, notModified, sparse)])
  ]
}

/** Whether a route sends the view's item (retrieve, the updates, a custom route with the same schema): what version tags name. */
function sendsItem (klass: ConditionalClass, route: RouteDefinition): boolean {
  const item = schemaStatic(klass, 'responseSchema')
  return item !== undefined && (route.responseSchema === sentAs(item, route) || sendsFieldSets(item, route))
}

/** Whether a route sends field sets of the view's item (`SparseFieldsMixin`): the same object, fewer of its fields. */
function sendsFieldSets (item: TSchema, route: RouteDefinition): boolean {
  for (const variant of sparseVariantsOf(item)) if (route.responseSchema === sentAs(variant, route)) return true
  return false
}

/** An object schema as a route sends it: in the route's envelope, when it has one. */
const sentAs = (schema: TSchema, route: RouteDefinition): TSchema =>
  route.envelope === undefined ? schema : envelopeSchema(schema, route.envelope)

/** After a write that compared a version changed nothing: 412 when the object is there, `null` (the action's 404) when not. */
function versionMissed (view: ConditionalView, action: string): Awaitable<null> {
  return then(view.getObject?.(action), (current) => {
    if (current != null) throw new PreconditionFailed(CHANGED)
    return null
  })
}
