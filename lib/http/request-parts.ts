// The parts of a request (http layer): how a problem names the part that failed validation (path, query, header, body).
import type { ProblemErrorEntry } from './errors.js'

/** The request parts Fastify validates, as it names them. */
export type HttpPart = 'body' | 'querystring' | 'params' | 'headers'

/** Where a problem entry says an invalid parameter is (RFC 9457 extension `in`); the body has no location. */
export const PART_LOCATION: Record<HttpPart, ProblemErrorEntry['in']> = {
  body: undefined,
  querystring: 'query',
  params: 'path',
  headers: 'header'
}

/** The detail of a 400 about each part. */
export const PART_DETAIL: Record<HttpPart, string> = {
  body: 'The request body is invalid.',
  querystring: 'The query string is invalid.',
  params: 'The path parameters are invalid.',
  headers: 'The request headers are invalid.'
}
