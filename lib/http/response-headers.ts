// Declared response headers (http layer): `ResponseHeaders` classes, documented on a success response, and those always sent.
import type { TSchema } from '@sinclair/typebox'
import { toTypeBox, type Schema, type StaticOf } from '../core/typebox-lines.js'
import type { FastifyReply } from 'fastify'

/** Header fields: an attribute name (`x_total_count`) -> the header value's schema. */
export type HeaderFields = Record<string, Schema>

/** A `ResponseHeaders` class: what `responseHeaders` options and `getResponseHeaders` take. */
export interface ResponseHeadersClass<F extends HeaderFields = HeaderFields> {
  readonly fields: F
  /** Wire header names (`x-total-count`) -> schemas. */
  headers (): Record<string, TSchema>
  /** Sets the declared headers on a reply from typed values. */
  apply (reply: FastifyReply, values: Partial<{ [K in keyof F]: StaticOf<F[K]> }>): FastifyReply
}

/**
 * Marks a documented response header as sent on every such response: `swaggerOptions`
 * turns it into the header object's `required: true` (OpenAPI 3.1 section 4.8.21), which
 * @fastify/swagger has no other way to say, so generated clients type it as present.
 */
export const ALWAYS_SENT = 'x-always-sent'

/** A header schema marked as sent on every response it documents. */
export function alwaysSent<S extends Schema> (schema: S): S {
  // Copied with its descriptors: the markers of a typebox 1.x schema are non-enumerable.
  return Object.defineProperties({ [ALWAYS_SENT]: true }, Object.getOwnPropertyDescriptors(schema)) as unknown as S // the same schema, plus the mark
}

/** The header an attribute stands for: `x_total_count` -> `x-total-count`. */
export function headerName (field: string): string {
  return field.replace(/_/g, '-').toLowerCase()
}

/** What `ResponseHeaders.define(fields)` returns: the typed `apply` only, not the base class's untyped one. */
export type DefinedResponseHeaders<F extends HeaderFields> =
  ResponseHeadersClass<F> & Omit<typeof ResponseHeaders, 'apply' | 'fields'> & (new () => ResponseHeaders)

/**
 * Base class of documented response headers (docs/openapi.md). A subclass declares its
 * fields as TypeBox schemas; attribute names become header names with `_` -> `-`.
 *
 * ```ts
 * class PageHeaders extends ResponseHeaders.define({ x_total_count: Type.Integer() }) {}
 * PageHeaders.apply(reply, { x_total_count: 42 })
 * ```
 *
 * Declared headers are documented, not validated: the handler sets them (with `apply`
 * for type checking), and nothing on the request path inspects them.
 */
export class ResponseHeaders {
  /** The declared header fields. */
  static fields: HeaderFields = {}

  /** A subclass with the given fields, typed so that `apply` checks its values. */
  static define<F extends HeaderFields> (fields: F): DefinedResponseHeaders<F> {
    return class extends ResponseHeaders {
      static override fields = fields
    } // the class has exactly these fields; TypeScript types a class expression's statics by its declaration
  }

  /** Wire header names -> schemas. */
  static headers (): Record<string, TSchema> {
    const out: Record<string, TSchema> = {}
    for (const [field, schema] of Object.entries(this.fields)) out[headerName(field)] = toTypeBox(schema, `${this.name}.fields.${field}`)
    return out
  }

  /** Sets the declared headers on a reply; unset values are skipped. */
  static apply (reply: FastifyReply, values: Record<string, unknown>): FastifyReply {
    for (const [field, value] of Object.entries(values)) {
      if (value !== undefined && value !== null) reply.header(headerName(field), String(value))
    }
    return reply
  }
}
