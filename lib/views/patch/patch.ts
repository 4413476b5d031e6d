// Patch documents (views layer): JSON Merge Patch (RFC 7396) and JSON Patch (RFC 6902) on a partial update, applied before the action, checked again in the write.
import { Type, type TSchema } from '@sinclair/typebox'
import { schemaStatic } from '../../core/typebox-lines.js'
import type { FastifyRequest, onSendHookHandler, preValidationHookHandler } from 'fastify'
import { alwaysSent } from '../../http/response-headers.js'
import { withContentCheck, type WriteDescription } from '../write.js'
import { BadRequest, Conflict, RequestValidationError, type ProblemErrorEntry } from '../../http/errors.js'
import { applyJsonPatch, parsePointer } from '../../http/json-patch.js'
import { applyMergePatch } from '../../http/merge-patch.js'
import { jsonEqual, type PatchLimits } from '../../http/patch-budget.js'
import { isObject, type PatchError } from '../../http/patch-error.js'
import { compilePartValidator, strictBodySchema } from '../../schema/validation.js'
import { PART_DETAIL } from '../../http/request-parts.js'
import { aliasedSchema } from '../../schema/serialization.js'
import { compileRepresentation } from '../../schema/wire.js'
import { then, type Awaitable } from '../../core/maybe-promise.js'
import { namedOf } from '../../core/schema-node.js'
import type { BeforeAction, BodyMediaType, RouteContribution, RouteDefinition, View } from '../view.js'
import type { ViewBase } from '../mixins.js'

/**
 * The body formats a partial update accepts (docs/patch.md): `json` is the plain partial body,
 * `merge-patch` an RFC 7396 JSON Merge Patch, `json-patch` an RFC 6902 JSON Patch.
 */
export type PatchFormat = 'json' | 'merge-patch' | 'json-patch'

/** The media type of each patch format, as `Content-Type` and `Accept-Patch` name it. */
export const PATCH_MEDIA_TYPES: Readonly<Record<PatchFormat, string>> = {
  json: 'application/json',
  'merge-patch': 'application/merge-patch+json',
  'json-patch': 'application/json-patch+json'
}

/** One RFC 6902 operation, as the API description shows it (a named component). */
export const JsonPatchOperation = Type.Union([
  Type.Object({
    op: Type.Union([Type.Literal('add'), Type.Literal('replace'), Type.Literal('test')]),
    path: Type.String({ description: 'A JSON Pointer (RFC 6901) into the representation.', examples: ['/name'] }),
    value: Type.Unknown()
  }),
  Type.Object({ op: Type.Literal('remove'), path: Type.String() }),
  Type.Object({ op: Type.Union([Type.Literal('move'), Type.Literal('copy')]), from: Type.String(), path: Type.String() })
], { $id: 'JsonPatchOperation', title: 'JsonPatchOperation', description: 'One operation of a JSON Patch (RFC 6902 section 4).' })

/**
 * The merge patch schema shown for a partial body: every property optional, and `null`
 * (which removes the member, RFC 7396 section 2) allowed for each.
 */
export function mergePatchSchema (partial: TSchema): TSchema {
  const properties = Object(partial.properties) as Record<string, TSchema>
  const members: Record<string, TSchema> = {}
  for (const [name, schema] of Object.entries(properties)) {
    members[name] = Type.Optional(
      Type.Union([schema, Type.Null()])
    )
  }
  return Type.Object(members, { description: 'A JSON Merge Patch (RFC 7396): the members to change; null removes one.' })
}

/** The body media types of a partial update accepting `formats`, over its plain partial body. */
export function patchMediaTypes (formats: readonly PatchFormat[], partial: TSchema): Record<string, BodyMediaType> {
  const types: Record<string, BodyMediaType> = {}
  for (const format of formats) {
    if (format === 'json') types[PATCH_MEDIA_TYPES.json] = { schema: partial, validation: partial }
    else if (format === 'merge-patch') types[PATCH_MEDIA_TYPES[format]] = { schema: mergePatchSchema(partial), validation: undefined }
    else types[PATCH_MEDIA_TYPES[format]] = { schema: Type.Array(JsonPatchOperation), validation: undefined }
  }
  return types
}

/** The `Accept-Patch` value of a route (RFC 5789 section 3.1). */
export const acceptPatch = (formats: readonly PatchFormat[]): string => formats.map((f) => PATCH_MEDIA_TYPES[f]).join(', ')

/** A view whose partial update applies patch documents: it reads the object the patch applies to. */
export interface PatchTarget {
  /**
   * The current object a merge patch or JSON Patch applies to, or `null` when there is none
   * (the action's 404). Generic views read it through their repository.
   */
  getPatchTarget (request: FastifyRequest): Awaitable<unknown>
}

/** What a request's patch was applied to: the row read and its representation, kept for the atomic write. */
export interface PatchSnapshot {
  readonly representation: string
  readonly represent: (value: unknown) => string
  readonly current: unknown
}

/** A view whose partial update applied a patch document: what it applied it to, for the write's check. */
export interface PatchedView extends View { patchSnapshot: PatchSnapshot | undefined }

const CHANGED_MEANWHILE = 'The resource changed while the patch was applied; send the patch again.'

/**
 * A patched write's description (`describeWrite`) with one more precondition: the row must still
 * have the representation the patch was applied to, checked in the same atomic step as the write,
 * so that a JSON Patch `test` holds when the write happens. A plain body adds nothing.
 */
export function patchedWrite (view: PatchedView, write: WriteDescription): WriteDescription {
  const snapshot = view.patchSnapshot
  if (snapshot === undefined) return write
  // The write seams receive the row the patch was applied to.
  return withContentCheck(write, (current) => {
    if (snapshot.represent(current) !== snapshot.representation) throw new Conflict(CHANGED_MEANWHILE)
  }, snapshot.current)
}

/**
 * The top-level members whose value the patch changed. A removed member is present with the
 * value `undefined`: the partial-update schema refuses it where the member is required, and a
 * repository unsets it (SQL stores write NULL).
 */
function changedMembers (before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const changed: Record<string, unknown> = {}
  for (const key of Object.keys(after)) {
    if (!Object.hasOwn(before, key) || !jsonEqual(before[key], after[key])) changed[key] = after[key]
  }
  for (const key of Object.keys(before)) {
    if (!Object.hasOwn(after, key)) changed[key] = undefined
  }
  return changed
}

/** Where the last JSON Patch operation that touched each top-level member names it (`#/2/path`, `#/1/from` of a move). */
function lastOperationOf (operations: unknown[]): Map<string, string> {
  const touched = new Map<string, string>()
  operations.forEach((operation, index) => {
    const { op, path, from } = operation as { op: string, path: string, from?: string }
    if (op === 'move' && from !== undefined) touched.set(memberOf(from), `#/${index}/from`)
    touched.set(memberOf(path), `#/${index}/path`)
  })
  return touched
}

/** The top-level member a pointer names (already valid: it was applied, or written by a check). */
const memberOf = (pointer: string): string => String(parsePointer(pointer)[0])

/**
 * The problem of a patch whose result is not a valid update. Each entry points at the JSON
 * Patch operation that last touched the member (a merge patch's pointers are its own); a
 * member no operation touched keeps the pointer to itself.
 */
function invalidResult (entries: ProblemErrorEntry[], format: PatchFormat, document: unknown): RequestValidationError {
  const touched = format === 'json-patch' ? lastOperationOf(document as unknown[]) : new Map<string, string>()
  const errors = entries.map(
    (entry) => ({ ...entry, pointer: touched.get(memberOf(entry.pointer.slice(1))) ?? entry.pointer })
  )
  return new RequestValidationError('The patch does not give a valid update.', { errors })
}

/** The format of a request's body, from the media type Fastify read; `json` for anything else it let through. */
function formatOf (request: FastifyRequest): PatchFormat {
  const type = request.mediaType
  return type === PATCH_MEDIA_TYPES['merge-patch'] ? 'merge-patch' : type === PATCH_MEDIA_TYPES['json-patch'] ? 'json-patch' : 'json'
}

/** The documented `Accept-Patch` of a partial update's success response. */
const ACCEPT_PATCH_HEADER = alwaysSent(Type.String({ description: 'The media types PATCH takes here (RFC 5789 section 3.1).', examples: ['application/json, application/merge-patch+json, application/json-patch+json'] }))

/**
 * What patch formats add to a partial update's route: `Accept-Patch` on every answer (documented
 * on the success response), a 400 for a request without a body, and, for a merge patch or JSON
 * Patch, a step before the action (`BeforeAction`) that applies it to the representation of the
 * current object and hands the action the members it changed, as a plain partial body (validated
 * like one), so the action and any override see what they see today.
 */
export function patchContribution (
  Klass: ViewBase,
  route: RouteDefinition,
  formats: readonly PatchFormat[],
  partial: TSchema,
  full: TSchema | undefined,
  limits: PatchLimits
): RouteContribution {
  const header = acceptPatch(formats)
  // On every answer of the route, a refusal of any kind included (RFC 5789 section 3.1).
  const onSend: onSendHookHandler = (_request, reply, payload, done) => {
    reply.header('accept-patch', header)
    done(null, payload)
  }
  // Fastify validates a body by its media type; a request with none has no body to validate.
  // After the checks of the mixins above (a precondition, RFC 9110 §13.2.1: preconditions come
  // before the content is looked at).
  const requireBody: preValidationHookHandler = (request, _reply, done) => {
    done(request.body === undefined ? new RequestValidationError(PART_DETAIL.body, { errors: [{ detail: 'Expected a body', pointer: '#' }] }) : undefined)
  }
  const contribution: RouteContribution = {
    preValidation: [requireBody],
    onSend: [onSend],
    responses: { [route.status]: { headers: { 'accept-patch': ACCEPT_PATCH_HEADER } } }
  }
  const item = schemaStatic(Klass, 'responseSchema')
  if (formats.every((f) => f === 'json') || item === undefined) return contribution
  const represent = compileRepresentation(item, Klass.defaultSerializerOptions, route.compileSerializer)
  const validate = compilePartValidator(strictBodySchema(aliasedSchema(partial)), 'body')
  // The resource after the patch must still be a valid whole: a removed required member is
  // refused. Its members are checked against the update schema, or, for a view that has only a
  // partial one, against the representation's own schema.
  const whole = aliasedSchema(full ?? item)
  const validateWhole = compilePartValidator(whole, 'body')
  const members = Object.keys(namedOf(whole.properties))
  const missing = route.onNone
  // Before the action, not a preHandler hook: a plain JSON body, the common case, costs one comparison.
  const applyPatch: BeforeAction = (view, request, reply) => {
    const format = formatOf(request)
    if (format === 'json') return
    const apply = (current: unknown): void => {
      if (current === null || current === undefined) {
        // Nothing to patch: the action answers as it does for nothing found (a 404 unless raiseOnNone is off).
        if (missing !== undefined) throw missing()
        request.body = {}
        return
      }
      const representation = represent(current)
      const before = JSON.parse(representation) as Record<string, unknown> // the wire form of an object GET sends
      const document = request.body
      let after: unknown
      try {
        after = format === 'merge-patch' ? applyMergePatch(before, document, { limits, text: representation }) : applyJsonPatch(before, document, { limits, text: representation })
      } catch (error) {
        // The patch functions throw PatchError only: every failure is the client's document.
        const { message, pointer } = error as PatchError
        throw new BadRequest('The patch cannot be applied.', { errors: [{ detail: message, pointer }] })
      }
      if (!isObject(after)) throw new BadRequest('The patch cannot be applied.', { errors: [{ detail: 'The result is not an object', pointer: '#' }] })
      const changed = changedMembers(before, after)
      let verdict = validate(changed)
      if (verdict === true) {
        verdict = validateWhole(
          Object.fromEntries(members.filter((m) => Object.hasOwn(after, m)).map((m) => [m, after[m]]))
        )
      }
      if (verdict !== true) throw invalidResult((verdict.error as BadRequest).errors!, format, document) // a failed check always lists its errors
      request.body = changed;
      (view as PatchedView).patchSnapshot = { representation, represent, current } // the steps of a partial update's route run on its view, which the update mixin declares patched
    }
    // Every partial-update view has getPatchTarget: the update mixins install it.
    return then((view as View & PatchTarget).getPatchTarget(request), apply, reply)
  }
  return { ...contribution, beforeAction: [applyPatch] }
}
