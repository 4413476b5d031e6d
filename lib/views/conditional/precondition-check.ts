// The 412 side of conditional requests (views layer): the preconditions of an unsafe detail request,
// checked before its content is looked at, against the validators of the current object (RFC 9110 §13.2).
import type { FastifyReply, FastifyRequest, preValidationHookHandler } from 'fastify'
import { PreconditionFailed, PreconditionRequired } from '../../http/errors.js'
import { failsPrecondition, namesStrongTag, type Validators } from '../../http/preconditions.js'
import type { Criteria } from '../../stores/repository.js'
import { validateTargetEarly } from '../../schema/validation.js'
import { isRecord } from '../../core/record.js'
import type { APIView } from '../api-view.js'
import { keepView } from '../view.js'
import { contentValidEarly, type VersionTags } from './versioned.js'
import type { ConditionalOptions } from './conditional-options.js'

/** What a conditional write's view knows of its request once the precondition check made it. */
export interface ConditionalState {
  /** The ETag of an object as the route's GET sends it (the representation hashed, or its version tag). */
  readonly etagOf: ((object: unknown) => string) | undefined
  /** The criterion that compares the one stored version an `If-Match` names, in the write itself (`{ version: 3 }`). */
  comparedVersion?: Criteria
  /** The row the preconditions were checked on, for the write seams (`current`). */
  current?: unknown
}

/** The members of the views the precondition check makes and reads. */
export interface PreconditionView extends APIView {
  conditionalState: ConditionalState | undefined
  getValidators (request: FastifyRequest): Validators | null | undefined | PromiseLike<Validators | null | undefined>
}

/** What the precondition check reads of a view's class. */
export interface PreconditionClass { readonly conditional: Pick<ConditionalOptions, 'require' | 'lastModifiedField'> }

/**
 * The precondition check of unsafe detail routes. It runs in `preValidation`: after
 * the route's `onRequest` and `preValidation` dependencies (authentication comes
 * first), before the body is validated, because preconditions are evaluated before
 * the request content is processed (RFC 9110 section 13.2.1): a stale If-Match with
 * an invalid body is a 412. A request without conditional headers costs three
 * property lookups; one with them reads the current validators and answers 412 when
 * they fail (section 13.2.2).
 */
export function preconditionCheck (klass: PreconditionClass, etagOfObject: ((object: unknown) => string) | undefined,
  tags: VersionTags | undefined): preValidationHookHandler {
  const Klass = klass as unknown as new (request: FastifyRequest, reply: FastifyReply) => PreconditionView // a view class is constructed with the request and reply; its statics type says nothing of instances
  const required = klass.conditional.require === true
  function viewOf (request: FastifyRequest, reply: FastifyReply): PreconditionView {
    // The handler serves the request with this same instance, which knows how GET tags an object.
    const view = keepView(request, new Klass(request, reply))
    view.conditionalState = { etagOf: etagOfObject }
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
    // compares it (describeWrite), and nothing is read first. If-Unmodified-Since is not
    // evaluated beside an If-Match (RFC 9110 §13.2.2).
    if (tags !== undefined && headers['if-none-match'] === undefined) {
      const version = tags.versionIn(headers['if-match'])
      if (version !== undefined && contentValidEarly(request)) {
        const state = viewOf(request, reply).conditionalState! // viewOf just set it
        state.comparedVersion = { [tags.field]: version }
        done()
        return
      }
    }
    evaluate(request, reply).then(() => { done() }, done)
  }
}

export const CHANGED = 'The resource has changed since the validators the request was made with.'
const REQUIRED = 'Send If-Match with the ETag of the representation you change; If-Match: *, a weak ETag or If-Unmodified-Since alone does not say which version you read.'

/** The validators of a stored object: the ETag of the representation GET sends, and its modification time. */
export function validatorsOf (view: PreconditionView, item: unknown): Validators {
  const etagOfObject = view.conditionalState?.etagOf
  const validators: Validators = {}
  if (etagOfObject !== undefined) validators.etag = etagOfObject(item)
  const field = (view.constructor as unknown as PreconditionClass).conditional.lastModifiedField // an instance's constructor is its class
  const value = field !== undefined && isRecord(item) ? item[field] : undefined
  if (value instanceof Date || typeof value === 'string' || typeof value === 'number') validators.lastModified = value
  return validators
}
