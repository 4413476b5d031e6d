// API errors (http layer): `APIError` and one class per status, each a problem document with its title, detail and headers.
import { STATUS_CODES } from 'node:http'

/** One entry of a problem's `errors` array: what is wrong, and where (RFC 9457 section 3 example). */
export interface ProblemErrorEntry {
  /** Human-readable explanation of this one error. */
  detail: string
  /** JSON Pointer (RFC 6901, URI fragment form) into the offending document: `#/3/name`. */
  pointer: string
  /** For path, query and header errors: which part of the request the pointer refers to. */
  in?: 'path' | 'query' | 'header'
  /** For path, query and header errors: the parameter's name. */
  parameter?: string
}

/** The RFC 9457 problem document sent as `application/problem+json`. */
export interface Problem {
  type: string
  title: string
  status: number
  detail: string
  instance?: string
  errors?: ProblemErrorEntry[]
  [extension: string]: unknown
}

/** Options of an `APIError` beyond its detail message. */
export interface APIErrorOptions {
  /** Overrides the class's problem `type` URI. */
  type?: string
  /** Overrides the class's `title`. */
  title?: string
  /** Overrides the class's status code. */
  status?: number
  /** Validation entries, sent as the problem's `errors` member. */
  errors?: ProblemErrorEntry[]
  /** Response headers sent with the problem, such as `WWW-Authenticate` or `Retry-After`. */
  headers?: Record<string, string | number>
  /** Extension members merged into the problem document (RFC 9457 section 3.2). */
  extensions?: Record<string, unknown>
  /** The underlying error, kept for logs and never sent. */
  cause?: unknown
}

/** An error class of the `APIError` family (the constructor, used in `errors`, `Throws` and `raises`). */
export type APIErrorClass = (new (detail?: string, options?: APIErrorOptions) => APIError) & {
  status: number
  title: string
  type: string
  defaultDetail: string
}

/**
 * Base of every error the library turns into an RFC 9457 problem. Subclasses set the
 * static `status`, `title`, `type` and `defaultDetail`; an instance may override each.
 */
export class APIError extends Error {
  /** HTTP status code of this error class. */
  static status = 500
  /**
   * Problem `title`: a short summary that does not change between occurrences (RFC
   * 9457 section 3.1.4); by default the reason phrase of the class's status.
   */
  static get title (): string {
    return statusTitle(this.status)
  }

  /** Problem `type` URI; `about:blank` means the title is the status phrase (RFC 9457 section 4.2.1). */
  static type = 'about:blank'
  /** Detail used when none is given; by default the title, or a generic sentence for server errors. */
  static get defaultDetail (): string {
    return this.status >= 500 ? 'An unexpected error occurred.' : `${this.title}.`
  }

  readonly status: number
  /** Same as `status`: the name Fastify reads (and writes, on validation errors). */
  statusCode: number
  readonly title: string
  readonly type: string
  readonly detail: string
  readonly errors: ProblemErrorEntry[] | undefined
  readonly headers: Record<string, string | number> | undefined
  readonly extensions: Record<string, unknown> | undefined

  constructor (detail?: string, options: APIErrorOptions = {}) {
    const ctor = new.target as unknown as APIErrorClass // new.target is typed as the base constructor; at run time it is the thrown subclass, with its statics
    // An error raised with only a status describes that status, not the class's own.
    const message = detail ?? (options.status === undefined || options.status === ctor.status ? ctor.defaultDetail : `${statusTitle(options.status)}.`)
    super(message, options.cause === undefined ? undefined : { cause: options.cause })
    this.name = new.target.name
    this.status = options.status ?? ctor.status
    this.statusCode = this.status
    this.title = options.title ?? (options.status === undefined ? ctor.title : statusTitle(options.status))
    this.type = options.type ?? ctor.type
    this.detail = message
    this.errors = options.errors
    this.headers = options.headers
    this.extensions = options.extensions
  }

  /** The problem document for this error; `instance` is the request path. */
  toProblem (instance?: string): Problem {
    const problem: Problem = {
      ...this.extensions,
      type: this.type,
      title: this.title,
      status: this.status,
      detail: this.detail
    }
    if (instance !== undefined) problem.instance = instance
    if (this.errors !== undefined) problem.errors = this.errors
    return problem
  }
}

/** The reason phrase of a status code, used as the title of `about:blank` problems. */
export function statusTitle (status: number): string {
  return STATUS_CODES[status] ?? 'Error'
}

function errorClass (status: number, defaultDetail: string): APIErrorClass {
  return class extends APIError {
    static override status = status
    static override title = statusTitle(status)
    static override defaultDetail = defaultDetail
  }
}

/** 400: the request is malformed or fails validation. Documented on every `APIView` route. */
export class BadRequest extends errorClass(400, 'The request is invalid.') {}
/**
 * 400: a request failed validation (its path, query, headers or body). An error format with a
 * `validationStatus` of 422 answers it with 422 instead (docs/errors.md#error-formats).
 */
export class RequestValidationError extends BadRequest {}
/** 401: credentials are missing or wrong; pass `headers: { 'www-authenticate': ... }`. */
export class Unauthorized extends errorClass(401, 'Authentication is required.') {}
/** 403: the client is known but not allowed to do this. */
export class Forbidden extends errorClass(403, 'You do not have permission to perform this action.') {}
/** 404: the resource does not exist. */
export class NotFound extends errorClass(404, 'The resource does not exist.') {}
/** 405: the method is not supported by the resource. */
export class MethodNotAllowed extends errorClass(405, 'The method is not allowed on this resource.') {}
/** 409: the request conflicts with the current state of the resource. */
export class Conflict extends errorClass(409, 'The request conflicts with the current state of the resource.') {}
/** 412: a precondition given in the request headers failed (RFC 9110 section 15.5.13). */
export class PreconditionFailed extends errorClass(412, 'A precondition of the request failed.') {}
/** 413: the request content is larger than the server accepts. */
export class ContentTooLarge extends errorClass(413, 'The request content is too large.') {}
/** 414: the request's target is longer than the server reads, such as a path parameter past Fastify's `maxParamLength` (RFC 9110 section 15.5.15). */
export class URITooLong extends errorClass(414, 'The request URI is too long.') {}
/** 415: the request's media type is not supported. */
export class UnsupportedMediaType extends errorClass(415, 'The media type of the request is not supported.') {}
/** 422: the request is well-formed but cannot be processed. */
export class UnprocessableContent extends errorClass(422, 'The request cannot be processed.') {}
/** 428: the request must be conditional (RFC 6585 section 3). */
export class PreconditionRequired extends errorClass(428, 'The request must be conditional.') {}
/** 429: too many requests; pass `headers: { 'retry-after': seconds }`. */
export class TooManyRequests extends errorClass(429, 'Too many requests.') {}
/** 500: an unexpected failure; the detail never carries internal messages. */
export class InternalServerError extends errorClass(500, 'An unexpected error occurred.') {}
/** 503: the service or one of its backends is unavailable for now. */
export class ServiceUnavailable extends errorClass(503, 'The service is unavailable.') {}

/** Whether a value is one of the `APIError` classes (not an instance). */
export function isAPIErrorClass (value: unknown): value is APIErrorClass {
  return typeof value === 'function' && (value === APIError || value.prototype instanceof APIError)
}
