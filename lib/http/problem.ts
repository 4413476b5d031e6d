// Problem documents (http layer): any error as an RFC 9457 problem, the problems of an unknown route and an unallowed method, and the answer to an unparsable request.
import type { Socket } from 'node:net'
import type { FastifyError, FastifyRequest } from 'fastify'
import { APIError, statusTitle, type Problem, type ProblemErrorEntry } from './errors.js'
import { PART_DETAIL, PART_LOCATION, type HttpPart } from './request-parts.js'

/** Media type of every error response (RFC 9457 section 3). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json'

const GENERIC_DETAIL = 'An unexpected error occurred.'

/**
 * What a URI reference may hold as it is (RFC 3986 section 4.1: unreserved and reserved characters,
 * and `%` that starts an escape); anything else a client sent in its path is escaped.
 */
const NOT_IN_URI = /%(?![0-9A-Fa-f]{2})|[^A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]/gu

/** A character as UTF-8 percent-escapes (a lone surrogate, which has no UTF-8 form, as U+FFFD's). */
const escaped = (character: string): string => [...Buffer.from(character)].map((byte) => '%' + byte.toString(16).toUpperCase().padStart(2, '0')).join('')

/**
 * The request path without its query: the problem's `instance` (RFC 9457 section 3.1.5), a URI
 * reference even when the path the client sent is not one (`/items/a|b`, `/items/%zz`).
 */
export function instanceOf (request: FastifyRequest): string {
  const url = request.url
  const q = url.indexOf('?')
  const path = q === -1 ? url : url.slice(0, q)
  return path.replace(NOT_IN_URI, escaped)
}

interface AjvLikeError { instancePath?: string, message?: string, params?: Record<string, unknown> }

/**
 * Entries for a validation error that did not come from this library's validator
 * (an Ajv-validated route of the same app): the pointer is built from Ajv's instancePath.
 */
function ajvEntries (validation: AjvLikeError[], context: string): ProblemErrorEntry[] {
  const location = PART_LOCATION[context as HttpPart]
  return validation.map((e) => {
    let path = e.instancePath ?? ''
    const missing = e.params?.missingProperty
    if (typeof missing === 'string') path += '/' + missing
    const entry: ProblemErrorEntry = { detail: e.message ?? 'is invalid', pointer: '#' + path }
    if (location !== undefined) {
      entry.in = location
      entry.parameter = path.split('/')[1] ?? ''
    }
    return entry
  })
}

type ErrorWithValidation = FastifyError & { errors?: ProblemErrorEntry[] }

/** Turns any thrown value into a problem document; 5xx details never reveal internals. */
export function toProblem (error: unknown, request: FastifyRequest): {
  problem: Problem,
  headers?: Record<string, string | number>
} {
  const instance = instanceOf(request)
  // An APIError's detail was written for the client, whatever its status.
  if (error instanceof APIError) {
    return { problem: error.toProblem(instance), headers: error.headers }
  }
  const err = error as ErrorWithValidation
  const status = typeof err?.statusCode === 'number' && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500
  if (status >= 500) {
    return { problem: { type: 'about:blank', title: statusTitle(status), status, detail: GENERIC_DETAIL, instance } }
  }
  const problem: Problem = { type: 'about:blank', title: statusTitle(status), status, detail: err.message, instance }
  if (err.validationContext !== undefined) {
    problem.detail = PART_DETAIL[err.validationContext] ?? problem.detail
    problem.errors = err.errors ?? ajvEntries((err.validation ?? []), err.validationContext)
  }
  return { problem }
}

/** The problem of a request whose path is served, but not with its method (RFC 9110 §15.5.6); `allow` lists the methods it is. */
export function methodNotAllowedProblem (request: FastifyRequest, allow: string): Problem {
  const instance = instanceOf(request)
  return { type: 'about:blank', title: statusTitle(405), status: 405, detail: `${instance} does not take ${request.method}; it takes ${allow}.`, instance }
}

/** The problem of a request no route matched. */
export function notFoundProblem (request: FastifyRequest): Problem {
  const instance = instanceOf(request)
  return { type: 'about:blank', title: statusTitle(404), status: 404, detail: `Route ${request.method} ${instance} not found.`, instance }
}

const CLIENT_ERRORS: Record<string, [number, string]> = {
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'The request was not received in time.'],
  HPE_HEADER_OVERFLOW: [431, 'The request headers are too large.']
}

/**
 * Answers a request Node cannot even parse (a Content-Length that disagrees with the bytes sent,
 * a malformed request line, oversized headers) before its socket closes: `render` gives the
 * error body (a problem without `instance`: there is no request to name) in the app's format.
 */
export function clientErrorAnswer (
  error: Error & { code?: string },
  socket: Socket,
  render: (problem: Problem) => { contentType: string, payload: string }
): void {
  // A reset connection has nobody left to answer (Node's own clientError rule).
  if (error.code === 'ECONNRESET' || socket.destroyed) return
  const [status, detail] = CLIENT_ERRORS[error.code ?? ''] ?? [400, 'The request could not be parsed.']
  const title = statusTitle(status)
  const { contentType, payload } = render({ type: 'about:blank', title, status, detail })
  // Only a socket on which nothing has been answered yet gets the problem: a response under way
  // must not be cut into, and once one has been sent (a request answered before its body finished
  // arriving, or an earlier request on a keep-alive connection), a 408 written now could be read as
  // the answer to a request the client has not made yet. Such a socket is closed without one.
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } | null })._httpMessage // Node's http server keeps the socket's current response there
  if (socket.writable && (response === undefined ||
    response === null
    ? socket.bytesWritten === 0
    : response.headersSent !== true)) {
    socket.write(`HTTP/1.1 ${status} ${title}\r\nContent-Length: ${Buffer.byteLength(payload)}\r\nContent-Type: ${contentType}\r\nConnection: close\r\n\r\n${payload}`)
  }
  socket.destroy(error)
}
