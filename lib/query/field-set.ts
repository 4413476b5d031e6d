// Sparse fieldsets (query layer): `?fields=` and `?omit=` read against a representation's fields, and the partial schema a response of them has.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { RequestValidationError, type ProblemErrorEntry } from '../http/errors.js'
import { PART_DETAIL } from '../http/request-parts.js'
import { etagOf } from '../http/preconditions.js'

/** The fields one request asked for: what the response sends of each object, and a short name of that set for its ETag. */
export interface FieldSet {
  /** Every field the response keeps, the ones always kept included, in the schema's order. */
  readonly names: readonly string[]
  /** Eight characters naming the set: what tells the ETag of this representation from the full one's (RFC 9110 §8.8.3). */
  readonly tag: string
}

/** How many unknown names a 400 quotes, and how many characters of each: a client needs the first mistakes, not an echo of its query. */
const QUOTED_NAMES = 5
const QUOTED_LENGTH = 40

/**
 * The fields of one representation a client may choose among (the properties of its schema), the
 * ones always sent (the key, the validators), and the bound of a parameter naming them.
 */
export class Fieldsets {
  readonly #known: ReadonlySet<string>
  readonly #order: readonly string[]
  readonly #kept: ReadonlySet<string>
  /**
   * The longest `fields` or `omit` accepted: every field named twice, with a space after each
   * comma. Anything longer repeats itself beyond that or names what is not there, and is refused
   * by the route's schema before a character of it is split.
   */
  readonly maxLength: number

  constructor (fields: readonly string[], kept: readonly string[]) {
    this.#order = fields
    this.#known = new Set(fields)
    this.#kept = new Set(kept.filter((name) => this.#known.has(name)))
    this.maxLength = Math.max(64, 2 * fields.reduce((sum, name) => sum + name.length + 2, 0))
  }

  /** The fields always sent, whatever the request names. */
  get kept (): readonly string[] { return this.#order.filter((name) => this.#kept.has(name)) }

  /**
   * The set a request names (`undefined`: all of them, the full representation). `fields` lists
   * what to send, `omit` what to leave out of it; names are separated by commas, spaces around them
   * and empty names ignored, a name given twice counted once. An unknown name is a 400 naming it.
   */
  read (fields: string | undefined, omit: string | undefined): FieldSet | undefined {
    if (fields === undefined && omit === undefined) return undefined
    const unknown = { fields: new Set<string>(), omit: new Set<string>() }
    const chosen = fields === undefined ? undefined : this.#names(fields, unknown.fields)
    const left = omit === undefined ? undefined : this.#names(omit, unknown.omit)
    if (unknown.fields.size > 0 || unknown.omit.size > 0) throw this.#refusal(unknown)
    const names = this.#order.filter((name) =>
      this.#kept.has(name) || ((chosen === undefined || chosen.has(name)) && left?.has(name) !== true))
    if (names.length === this.#order.length) return undefined
    return { names, tag: etagOf(names.join(',')).slice(1, 9) }
  }

  #names (value: string, unknown: Set<string>): Set<string> {
    const names = new Set<string>()
    for (const part of value.split(',')) {
      const name = part.trim()
      if (name !== '') (this.#known.has(name) ? names : unknown).add(name)
    }
    return names
  }

  /** The 400 of unknown names: the parameter of each of the first few, and the fields there are. */
  #refusal (unknown: Record<'fields' | 'omit', Set<string>>): RequestValidationError {
    const errors: ProblemErrorEntry[] = []
    for (const parameter of ['fields', 'omit'] as const) {
      const names = [...unknown[parameter]]
      if (names.length === 0) continue
      const quoted = names.slice(0, QUOTED_NAMES).map((name) => JSON.stringify(name.length > QUOTED_LENGTH ? `${name.slice(0, QUOTED_LENGTH)}…` : name))
      const more = names.length > QUOTED_NAMES ? ` and ${names.length - QUOTED_NAMES} more` : ''
      errors.push({
        detail: `Unknown field${names.length > 1 ? 's' : ''} ${quoted.join(', ')}${more}; the fields are ${this.#order.join(', ')}`,
        pointer: `#/${parameter}`,
        in: 'query',
        parameter
      })
    }
    return new RequestValidationError(PART_DETAIL.querystring, { errors })
  }
}

/** The query parameters of a view with sparse fieldsets, bounded by the length of its fields. */
export function fieldsetParameters (fieldsets: Fieldsets): Record<'fields' | 'omit', TSchema> {
  const bound = { maxLength: fieldsets.maxLength }
  const kept = fieldsets.kept.length === 0 ? '' : ` ${fieldsets.kept.join(', ')} ${fieldsets.kept.length === 1 ? 'is' : 'are'} always sent.`
  return {
    fields: Type.Optional(Type.String({ ...bound, description: `Only these fields of each object, by name, separated by commas.${kept}` })),
    omit: Type.Optional(Type.String({ ...bound, description: `Every field of each object but these, by name, separated by commas.${kept}` }))
  }
}

/** The partial schemas made of each full one, by the fields they keep: what tells a response of a field set from one of the whole object. */
const VARIANTS = new WeakMap<TSchema, Map<string, TObject>>()

/**
 * The schema of an object as a field set sends it, named `<Name>Fieldset` in the document when the
 * full one has a name: the same properties, in the order the full schema's serializer writes them
 * (fast-json-stringify writes the required ones first), so that the whole object serializes to the
 * same bytes through either and an ETag hashed from one is the tag of the other. Required: the kept
 * fields that open that order (the key, usually); the other kept ones are always sent too, which the
 * parameters' descriptions say. One per object schema and kept fields, compared by identity.
 */
export function sparseSchema (item: TObject, kept: readonly string[]): TObject {
  let byKept = VARIANTS.get(item)
  if (byKept === undefined) VARIANTS.set(item, byKept = new Map())
  let variant = byKept.get(kept.join(','))
  if (variant === undefined) {
    const { $id, required, properties, ...rest } = item
    const first = new Set(required ?? [])
    const names = Object.keys(properties)
    const order = [...names.filter((name) => first.has(name)), ...names.filter((name) => !first.has(name))]
    const opening = order.findIndex((name) => !kept.includes(name) || !first.has(name))
    const stillRequired = opening === -1 ? order : order.slice(0, opening)
    variant = { ...rest, properties: Object.fromEntries(order.map((name) => [name, properties[name]])) } as TObject // the object schema's own members
    if (stillRequired.length > 0) variant.required = stillRequired
    // Views that keep other fields of one schema (another version field) each have their own: `ItemFieldset2`.
    if (typeof $id === 'string') variant.$id = `${$id}Fieldset${byKept.size === 0 ? '' : byKept.size + 1}`
    byKept.set(kept.join(','), variant)
  }
  return variant
}

/** The partial schemas `sparseSchema` made of `item`: what a route of field sets sends instead of it. */
export const sparseVariantsOf = (item: TSchema): Iterable<TObject> => VARIANTS.get(item)?.values() ?? []

/** The field set of each request that named one: what the hooks after the action (the cut, the ETag) read. */
const REQUEST_SETS = new WeakMap<FastifyRequest, FieldSet>()

/** Remembers the field set a request named, for the hooks after its action. */
export const rememberFieldSet = (request: FastifyRequest, set: FieldSet): void => { REQUEST_SETS.set(request, set) }

/** The field set a request of a view with sparse fieldsets named, if any (`undefined`: the whole object). */
export const fieldSetOf = (request: FastifyRequest): FieldSet | undefined => REQUEST_SETS.get(request)
