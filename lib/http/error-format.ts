// Error formats (http layer): how an API answers and documents errors, problem+json by default, its handlers, and the 404, 405 and OPTIONS of unknown routes.
import type { Socket } from 'node:net'
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Static, TSchema } from '@sinclair/typebox'
import { RequestValidationError, statusTitle, type APIErrorClass, type Problem } from './errors.js'
import { clientErrorAnswer, methodNotAllowedProblem, notFoundProblem, PROBLEM_CONTENT_TYPE, toProblem } from './problem.js'
import { allowedMethods } from './allowed-methods.js'
import { jsonBodyError } from './media-type.js'
import { problemBody, ProblemSchema } from './problem-schema.js'
import { ConfigurationError } from '../core/configuration-error.js'

/**
 * The status of a request that fails validation: 400 (RFC 9110 §15.5.1), or 422 for content
 * whose syntax is right but whose values are not (RFC 9110 §15.5.21). A body that is not JSON
 * at all stays a 400 either way: it was never well-formed.
 */
export type ValidationStatus = 400 | 422

/** How an API answers errors: its media type, its validation status, its body and that body's schema. */
export interface ErrorFormatOptions<S extends TSchema = TSchema> {
  /** The media type of error responses (default `application/json`). */
  contentType?: string
  /** The status of a request that fails validation (default 400). */
  validationStatus?: ValidationStatus
  /**
   * Error statuses this API answers with another one (`{ 409: 422 }`: a conflict is a 422 here),
   * on the wire and in the document. Applied after `validationStatus`; keys and values 400 to 599.
   */
  statuses?: Readonly<Record<number, number>>
  /**
   * The body of an error response, made from the problem document (RFC 9457) the library builds
   * for every error: its `status`, `title`, `detail`, the `errors` of a validation failure, and
   * the extension members an `APIError` carries.
   */
  body: (problem: Problem) => Static<S>
  /**
   * The documented schema of error bodies: one for every status, or one per status from the
   * error classes a route documents there (an empty list for a status no class names).
   */
  schema: S | ((errors: readonly APIErrorClass[], status: number) => S)
}

/**
 * A failed validation: this library's validators, and Fastify's (Ajv) on the app's plain routes.
 * Asked only of an error that became a 400 problem, which is an object.
 */
const isValidationFailure = (error: unknown): boolean =>
  error instanceof RequestValidationError || (error as Partial<FastifyError>).validationContext !== undefined

/**
 * Where a configured context keeps its format. A context made inside it (a plugin's) is created
 * from it by prototype, as Fastify encapsulates, so it reads its parent's format here too.
 */
const APP_FORMAT = Symbol('fastify-views.errorFormat')

type WithFormat = { [APP_FORMAT]?: ErrorFormat }

/**
 * One declaration of how errors are answered and documented (docs/errors.md#error-formats).
 * Every view route, the app's own routes and its 404s (through `configureApp`), and the routes'
 * documented error responses all follow it, so a generated client types the bodies it receives.
 * The default is problem+json (`problemFormat()`).
 */
export class ErrorFormat<S extends TSchema = TSchema> {
  readonly contentType: string
  readonly validationStatus: ValidationStatus
  /** The error statuses answered with another one, `statuses` as a map (empty: none). */
  readonly statuses: ReadonlyMap<number, number>
  readonly #body: (problem: Problem) => unknown
  readonly #schema: S | ((errors: readonly APIErrorClass[], status: number) => S)

  constructor (options: ErrorFormatOptions<S>) {
    const { contentType = 'application/json', validationStatus = 400, statuses = {}, body, schema } = options
    if (validationStatus !== 400 && validationStatus !== 422) {
      throw new ConfigurationError('FV_ERR_ERROR_FORMAT', `fastify-views: an error format's validationStatus must be 400 or 422; got ${String(validationStatus)}`)
    }
    if (typeof body !== 'function' || (typeof schema !== 'function' && (typeof schema !== 'object' || schema === null))) {
      throw new ConfigurationError('FV_ERR_ERROR_FORMAT', 'fastify-views: an error format needs body (problem) => body and the schema of that body')
    }
    this.contentType = contentType
    this.validationStatus = validationStatus
    this.statuses = statusMap(statuses)
    this.#body = body
    this.#schema = schema
  }

  /** The problem document of an error, with the status this format gives a validation failure. */
  problemOf (error: unknown, request: FastifyRequest): { problem: Problem, headers?: Record<string, string | number> } {
    // A body refused on a JSON-only view route because it was not JSON at all is a 415, not a 400.
    const refused = jsonBodyError(error, request)
    const made = toProblem(refused ?? error, request)
    if (refused === undefined && this.validationStatus !== 400 && made.problem.status === 400 &&
      isValidationFailure(error)) {
      retitle(made.problem, this.validationStatus)
    }
    const mapped = this.statuses.get(made.problem.status)
    if (mapped !== undefined) retitle(made.problem, mapped)
    return made
  }

  /** The status this format answers an error of `status` with: the mapped one, or itself. */
  statusOf (status: number): number {
    return this.statuses.get(status) ?? status
  }

  /**
   * The body of a problem in this format, serialized, with its media type. A `body` of the
   * user's that throws or gives nothing JSON can hold is answered with the problem document
   * instead: an error about an error must not become a crash (the clientError listener has
   * nobody to catch it) or an empty answer.
   */
  serialize (problem: Problem): { contentType: string, payload: string } {
    try {
      const payload = JSON.stringify(this.#body(problem)) as string | undefined // undefined for a body that is not JSON (undefined, a function)
      if (payload !== undefined) return { contentType: this.contentType, payload }
    } catch {}
    return { contentType: PROBLEM_CONTENT_TYPE, payload: JSON.stringify(problem) }
  }

  /** The documented body of a status answered by these error classes. */
  schemaFor (errors: readonly APIErrorClass[], status: number): TSchema {
    return typeof this.#schema === 'function' ? this.#schema(errors, status) : this.#schema
  }

  /**
   * The error handler of every view route and, through `configureApp`, of the app. Server errors
   * are logged with their stack; their body only ever carries a generic detail.
   */
  readonly errorHandler = (error: unknown, request: FastifyRequest, reply: FastifyReply): void => {
    const { problem, headers } = this.problemOf(error, request)
    if (problem.status >= 500) {
      request.log.error({ err: error }, 'request failed')
    } else {
      request.log.info({ status: problem.status, detail: problem.detail }, 'request rejected')
    }
    if (headers !== undefined) reply.headers(headers)
    // A string is sent as it is: the route's compiled serializers, which know only the
    // success schema, never touch an error body.
    const { contentType, payload } = this.serialize(problem)
    reply.code(problem.status).type(contentType).send(payload)
  }

  /**
   * The not-found handler `configureApp` installs. A request whose path no route serves is a 404
   * in this format. One whose path is served, but not with its method, is a 405 with `Allow`
   * (RFC 9110 §15.5.6), and an OPTIONS request there is answered 204 with `Allow`, and the
   * `Accept-Patch` of a view's PATCH there (RFC 9110 §9.3.7, RFC 5789 §3.1).
   */
  readonly notFoundHandler = (request: FastifyRequest, reply: FastifyReply): void => {
    const allowed = allowedMethods(request)
    if (allowed === undefined) {
      this.send(reply, notFoundProblem(request))
      return
    }
    reply.header('allow', allowed.allow)
    if (request.method === 'OPTIONS') {
      if (allowed.acceptPatch !== undefined) reply.header('accept-patch', allowed.acceptPatch)
      reply.code(204).send()
      return
    }
    this.send(reply, methodNotAllowedProblem(request, allowed.allow))
  }

  /** Sends a problem the format made itself (a 404, a 405), at the status it maps that one to. */
  private send (reply: FastifyReply, problem: Problem): void {
    const mapped = this.statuses.get(problem.status)
    if (mapped !== undefined) retitle(problem, mapped)
    const { contentType, payload } = this.serialize(problem)
    reply.code(problem.status).type(contentType).send(payload)
  }

  /**
   * Fastify's `frameworkErrors` option: errors its router meets before any route or hook runs
   * (a URL with bad percent-encoding, `GET /items/%`). No plugin can set it, since it is an
   * option of the server: `Fastify({ frameworkErrors: format.frameworkErrors })`.
   */
  readonly frameworkErrors = (error: FastifyError, request: FastifyRequest, reply: FastifyReply): void => {
    this.errorHandler(error, request, reply)
  }

  /**
   * A `clientError` listener for the HTTP server: a request Node cannot even parse (a
   * Content-Length that disagrees with the bytes sent, oversized headers) is still answered in
   * this format before the socket closes.
   */
  readonly clientErrorHandler = (error: Error & { code?: string }, socket: Socket): void => {
    clientErrorAnswer(error, socket, (problem) => this.serialize(problem))
  }
}

/**
 * Gives a problem another status; an about:blank problem's title is the phrase of its status
 * (RFC 9457 §4.2.1), a typed problem keeps its own.
 */
function retitle (problem: Problem, status: number): void {
  problem.status = status
  if (problem.type === 'about:blank') problem.title = statusTitle(status)
}

const isErrorStatus = (status: number): boolean => Number.isInteger(status) && status >= 400 && status <= 599

/** The `statuses` option as a map, each key and value an error status (400 to 599). */
function statusMap (statuses: Readonly<Record<number, number>>): ReadonlyMap<number, number> {
  const map = new Map<number, number>()
  for (const [key, value] of Object.entries(statuses)) {
    const from = Number(key)
    if (!isErrorStatus(from) || typeof value !== 'number' || !isErrorStatus(value)) {
      throw new ConfigurationError('FV_ERR_ERROR_FORMAT', `fastify-views: an error format's statuses map error statuses to error statuses (400 to 599); got ${key}: ${String(value)}`)
    }
    map.set(from, value)
  }
  return map
}

/**
 * The documented problem of a status: the classes' own schemas (each fixes its status), or the
 * generic problem, also where a class is answered at a status that is not its own (a mapped one).
 */
const problemSchemaFor = (
  errors: readonly APIErrorClass[],
  status: number
): TSchema => errors.length > 0 && errors.every((cls) => cls.status === status) ? problemBody(errors) : ProblemSchema

/**
 * RFC 9457 problem documents, sent as `application/problem+json`: the default format. With
 * `validationStatus: 422`, a request that fails validation is a 422 problem.
 */
export function problemFormat (options: Pick<ErrorFormatOptions, 'validationStatus' | 'statuses'> = {}): ErrorFormat {
  return new ErrorFormat(
    {
      contentType: PROBLEM_CONTENT_TYPE,
      validationStatus: options.validationStatus,
      statuses: options.statuses,
      body: (problem) => problem,
      schema: problemSchemaFor
    }
  )
}

/** The format every view route answers in unless the app, a router or a registration declares another. */
export const PROBLEM_FORMAT: ErrorFormat = problemFormat()

/** The format `configureApp` gave this context or a context around it, if any. */
export function appErrorFormat (app: FastifyInstance): ErrorFormat | undefined {
  return (app as WithFormat)[APP_FORMAT]
}

/** Records the format a context answers in, for its views and for the contexts inside it. */
export function setAppErrorFormat (app: FastifyInstance, format: ErrorFormat): void {
  // Not enumerable, not writable: a context inside defines its own, which shadows it.
  Object.defineProperty(app, APP_FORMAT, { value: format })
}

/** The problem+json error handler: `PROBLEM_FORMAT.errorHandler`. */
export const problemErrorHandler = PROBLEM_FORMAT.errorHandler
/** The problem+json not-found handler: `PROBLEM_FORMAT.notFoundHandler`. */
export const problemNotFoundHandler = PROBLEM_FORMAT.notFoundHandler
/** Fastify's `frameworkErrors` answered with problems: `PROBLEM_FORMAT.frameworkErrors`. */
export const problemFrameworkErrors = PROBLEM_FORMAT.frameworkErrors
/** The server's `clientError` listener answering problems: `PROBLEM_FORMAT.clientErrorHandler`. */
export const problemClientErrorHandler = PROBLEM_FORMAT.clientErrorHandler
