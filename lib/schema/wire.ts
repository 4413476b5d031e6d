// The wire form of a response (schema layer): the schema a body is serialized with under serializer options (aliases, optional members), and the representation of an object.
import type { TSchema } from '@sinclair/typebox'
import { aliasedSchema, compileRenamer, excludeNone, optionalSchema } from './serialization.js'

/** Dump options of a response. */
export interface SerializerOptions {
  /** Use the `alias` of properties as wire names (default true). */
  byAlias?: boolean
  /** Leave out properties whose value is `null` or `undefined`, at any depth. */
  excludeNone?: boolean
}

/** A response body as it goes on the wire under one set of serializer options. */
export interface WireForm {
  /** The schema the body is serialized with: aliases as keys, no `required` when nulls are dropped. */
  schema: TSchema
  /** Turns a returned value into that body (nulls dropped, keys renamed); `undefined` when it is already. */
  toWire: ((value: unknown) => unknown) | undefined
}

const forms = new WeakMap<TSchema, Map<string, WireForm>>()

/**
 * The wire form of a response schema under serializer options. It is the one place that
 * says what a representation is: the response pipeline serializes with it, and the ETag a
 * precondition compares is hashed from it, so the two cannot drift apart. Built once per
 * schema and options; the same object is returned each time, so serializers compiled
 * from its schema are shared.
 */
export function wireForm (schema: TSchema, options: SerializerOptions): WireForm {
  const byAlias = options.byAlias !== false
  const dropNone = options.excludeNone === true
  const key = `${byAlias ? 'alias' : 'field'}${dropNone ? '-none' : ''}`
  let variants = forms.get(schema)
  if (variants === undefined) forms.set(schema, variants = new Map())
  let form = variants.get(key)
  if (form === undefined) {
    // With nulls dropped, the aliased schema is derived from the plain aliased form, built once.
    const wire = !byAlias ? schema : dropNone ? wireForm(schema, { byAlias: true }).schema : aliasedSchema(schema)
    const rename = byAlias ? compileRenamer(schema, true) : undefined
    form = {
      schema: dropNone ? optionalSchema(wire) : wire,
      toWire: !dropNone ? rename : rename === undefined ? excludeNone : (value) => rename(excludeNone(value))
    }
    variants.set(key, form)
  }
  return form
}

/**
 * The representation a GET sends of an object, as a string: its wire form under the
 * view's default options, serialized by the serializer compiler of the application
 * (so shared schemas it references resolve). Compiled at registration.
 */
export function compileRepresentation (
  schema: TSchema,
  options: SerializerOptions,
  compile: (schema: TSchema) => (value: unknown) => string
): (value: unknown) => string {
  const { schema: wire, toWire } = wireForm(schema, options)
  const serialize = compile(wire)
  return toWire === undefined ? serialize : (value) => serialize(toWire(value))
}
