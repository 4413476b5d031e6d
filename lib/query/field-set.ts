// Sparse fieldsets (query layer): `?fields=` and `?omit=` read against a representation's fields, and the partial schema a response of them has.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { RequestValidationError, type ProblemErrorEntry } from '../http/errors.js'
import { PART_DETAIL } from '../http/request-parts.js'
import { etagOf } from '../http/preconditions.js'

/**
 * The fields one request asked for: what the response sends of each object, what the store reads
 * of it, the relations embedded in it with their own sets, and a short name of that set for its ETag.
 */
export interface FieldSet {
  /** Every field the response keeps, the ones always kept included, in the schema's order; then each relation embedded. */
  readonly names: readonly string[]
  /** The fields the store reads: the ones sent, and those an embedded relation is found by; `undefined` for every field. */
  readonly reads: readonly string[] | undefined
  /** Eight characters naming the set: what tells the ETag of this representation from the full one's (RFC 9110 §8.8.3). */
  readonly tag: string
  /** The relations embedded (`?expand=`), each with the set of its objects (`undefined`: every field). */
  readonly expand: ReadonlyMap<string, FieldSet | undefined>
}

/** A relation a representation may embed: the fields of its objects, and the field of one's own its objects are found by. */
export interface RelatedFields { readonly fieldsets: Fieldsets, readonly by: string }

/** Names a parameter gives: one's own fields, and the fields of each relation, by relation (`book.title`). */
interface Names { readonly own: Set<string>, readonly nested: Map<string, Set<string>> }

/** The parameters that name fields and relations. */
type Parameter = 'fields' | 'omit' | 'expand'

/** How many unknown names a 400 quotes, and how many characters of each: a client needs the first mistakes, not an echo of its query. */
const QUOTED_NAMES = 5
const QUOTED_LENGTH = 40

const NO_RELATIONS: ReadonlyMap<string, RelatedFields> = new Map()

/** How many sets a representation remembers: a client's usual few, bounded whatever others send (a refused name is never kept). */
const READ_SETS = 256
const NOTHING_EXPANDED: ReadonlyMap<string, FieldSet | undefined> = new Map()

/**
 * The fields of one representation a client may choose among (the properties of its schema), the
 * ones always sent (the key, the validators), the relations it may embed, and the bound of a
 * parameter naming them.
 */
export class Fieldsets {
  readonly #known: ReadonlySet<string>
  readonly #order: readonly string[]
  readonly #kept: ReadonlySet<string>
  readonly #relations: ReadonlyMap<string, RelatedFields>
  /** The sets read lately, by the parameters that named them (a set, or `undefined` for the whole object). */
  readonly #read = new Map<string, { set: FieldSet | undefined }>()
  /**
   * The longest `fields` or `omit` accepted: every field (and every field of every relation, as
   * `relation.field`) named twice, with a space after each comma. Anything longer repeats itself
   * beyond that or names what is not there, and is refused by the route's schema before a
   * character of it is split. `expand` is bounded the same way by the relations' names.
   */
  readonly maxLength: number
  readonly maxExpandLength: number

  constructor (
    fields: readonly string[], kept: readonly string[], relations: ReadonlyMap<string, RelatedFields> = NO_RELATIONS
  ) {
    this.#order = fields
    this.#known = new Set(fields)
    this.#kept = new Set(kept.filter((name) => this.#known.has(name)))
    this.#relations = relations
    const nested = [...relations].flatMap(([name, related]) => related.fieldsets.#order.map((field) => `${name}.${field}`))
    this.maxLength = bound([...fields, ...nested])
    this.maxExpandLength = bound([...relations.keys()])
  }

  /** The fields always sent, whatever the request names. */
  get kept (): readonly string[] { return this.#order.filter((name) => this.#kept.has(name)) }

  /** The relations a request may embed, by name. */
  get relations (): ReadonlyMap<string, RelatedFields> { return this.#relations }

  /**
   * The set a request names (`undefined`: all of them, the full representation). `fields` lists
   * what to send, `omit` what to leave out of it, `expand` the relations to embed; names are
   * separated by commas, spaces around them and empty names ignored, a name given twice counted
   * once; `relation.field` names a field of an embedded relation. An unknown name is a 400 naming it.
   */
  read (fields: string | undefined, omit: string | undefined, expand?: string): FieldSet | undefined {
    if (fields === undefined && omit === undefined && expand === undefined) return undefined
    // Clients ask for the same few sets again and again: each is read once. The key cannot be
    // forged from other values: each part is the parameter as sent (a string or nothing), JSON-quoted.
    const key = JSON.stringify([fields, omit, expand])
    const known = this.#read.get(key)
    if (known !== undefined) return known.set
    const set = this.#parse(fields, omit, expand)
    if (this.#read.size >= READ_SETS) this.#read.delete(this.#read.keys().next().value as string) // the oldest of a full map
    this.#read.set(key, { set })
    return set
  }

  #parse (fields: string | undefined, omit: string | undefined, expand: string | undefined): FieldSet | undefined {
    const unknown: Record<Parameter, Set<string>> = { fields: new Set(), omit: new Set(), expand: new Set() }
    const expanded = new Set<string>()
    for (const name of split(expand)) (this.#relations.has(name) ? expanded : unknown.expand).add(name)
    const chosen = fields === undefined ? undefined : this.#names(fields, expanded, unknown.fields)
    const left = omit === undefined ? undefined : this.#names(omit, expanded, unknown.omit)
    if (unknown.fields.size > 0 || unknown.omit.size > 0 || unknown.expand.size > 0) throw this.#refusal(unknown)
    return this.#select(chosen, left, expanded)
  }

  #names (value: string, expanded: ReadonlySet<string>, unknown: Set<string>): Names {
    const names: Names = { own: new Set(), nested: new Map() }
    for (const name of split(value)) {
      const dot = name.indexOf('.')
      const relation = dot === -1 ? undefined : name.slice(0, dot)
      const related = relation === undefined || !expanded.has(relation) ? undefined : this.#relations.get(relation)
      if (related !== undefined && related.fieldsets.#known.has(name.slice(dot + 1))) {
        let fields = names.nested.get(relation as string) // a relation of this name, just found
        if (fields === undefined) names.nested.set(relation as string, fields = new Set())
        fields.add(name.slice(dot + 1))
      } else (this.#known.has(name) ? names.own : unknown).add(name)
    }
    return names
  }

  /** The set of the names chosen (`undefined`: every field) less the names left out, with the relations expanded. */
  #select (chosen: Names | undefined, left: Names | undefined, expanded: ReadonlySet<string>): FieldSet | undefined {
    // `fields` narrows the objects' own fields unless it names only fields of relations (`fields=book.title`).
    const narrowed = chosen !== undefined && (chosen.own.size > 0 || chosen.nested.size === 0)
    const own = this.#order.filter((name) =>
      this.#kept.has(name) || ((!narrowed || chosen.own.has(name)) && left?.own.has(name) !== true))
    const expand = new Map<string, FieldSet | undefined>()
    for (const relation of expanded) {
      const nested = (names: Names | undefined): Names | undefined => {
        const fields = names?.nested.get(relation)
        return fields === undefined ? undefined : { own: fields, nested: new Map() }
      }
      const fieldsets = (this.#relations.get(relation) as RelatedFields).fieldsets // expanded: a relation's name
      expand.set(relation, fieldsets.#select(nested(chosen), nested(left), new Set()))
    }
    const whole = own.length === this.#order.length
    if (whole && expand.size === 0) return undefined
    const by = [...expand.keys()].map((relation) => (this.#relations.get(relation) as RelatedFields).by)
    const names = [...own, ...expand.keys()]
    const spelt = JSON.stringify([names, [...expand.values()].map((set) => set?.names ?? null)])
    return {
      names,
      reads: whole ? undefined : [...new Set([...own, ...by])],
      tag: etagOf(spelt).slice(1, 9),
      expand: expand.size === 0 ? NOTHING_EXPANDED : expand
    }
  }

  /** The 400 of unknown names: the parameter of each of the first few, and the names there are. */
  #refusal (unknown: Record<Parameter, Set<string>>): RequestValidationError {
    const errors: ProblemErrorEntry[] = []
    for (const parameter of ['fields', 'omit', 'expand'] as const) {
      const names = [...unknown[parameter]]
      if (names.length === 0) continue
      const quoted = names.slice(0, QUOTED_NAMES).map((name) => JSON.stringify(name.length > QUOTED_LENGTH ? `${name.slice(0, QUOTED_LENGTH)}…` : name))
      const more = names.length > QUOTED_NAMES ? ` and ${names.length - QUOTED_NAMES} more` : ''
      const what = parameter === 'expand' ? 'relation' : 'field'
      const there = parameter === 'expand'
        ? `the relations are ${[...this.#relations.keys()].join(', ')}`
        : `the fields are ${this.#order.join(', ')}${this.#relations.size === 0 ? '' : '; a field of a relation the request expands is <relation>.<field>'}`
      errors.push({
        detail: `Unknown ${what}${names.length > 1 ? 's' : ''} ${quoted.join(', ')}${more}; ${there}`,
        pointer: `#/${parameter}`,
        in: 'query',
        parameter
      })
    }
    return new RequestValidationError(PART_DETAIL.querystring, { errors })
  }
}

/** The names of a parameter: separated by commas, spaces around them and empty ones ignored. */
function * split (value: string | undefined): Iterable<string> {
  if (value === undefined) return
  for (const part of value.split(',')) {
    const name = part.trim()
    if (name !== '') yield name
  }
}

/** The longest value naming `names` a parameter takes: each twice, with a comma and a space after it (at least 64). */
const bound = (names: readonly string[]): number =>
  Math.max(64, 2 * names.reduce((sum, name) => sum + name.length + 2, 0))

/** The query parameters of a view with sparse fieldsets (and `expand` when it has relations), bounded by the length of the names. */
export function fieldsetParameters (fieldsets: Fieldsets): Record<string, TSchema> {
  const kept = fieldsets.kept.length === 0 ? '' : ` ${fieldsets.kept.join(', ')} ${fieldsets.kept.length === 1 ? 'is' : 'are'} always sent.`
  const nested = fieldsets.relations.size === 0 ? '' : ' A field of a relation the request expands is <relation>.<field>.'
  const names = { maxLength: fieldsets.maxLength }
  const parameters: Record<string, TSchema> = {
    fields: Type.Optional(Type.String({ ...names, description: `Only these fields of each object, by name, separated by commas.${kept}${nested}` })),
    omit: Type.Optional(Type.String({ ...names, description: `Every field of each object but these, by name, separated by commas.${kept}${nested}` }))
  }
  if (fieldsets.relations.size > 0) {
    const relations = [...fieldsets.relations.keys()].join(', ')
    parameters.expand = Type.Optional(Type.String({
      maxLength: fieldsets.maxExpandLength,
      description: `The relations to embed in each object, separated by commas: ${relations}.`
    }))
  }
  return parameters
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
export function sparseSchema (
  item: TObject, kept: readonly string[], members: Readonly<Record<string, TSchema>> = {}
): TObject {
  let variants = VARIANTS.get(item)
  if (variants === undefined) VARIANTS.set(item, variants = new Map())
  const { $id, required, properties, ...rest } = item
  const first = new Set(required ?? [])
  const names = Object.keys(properties)
  const order = [...names.filter((name) => first.has(name)), ...names.filter((name) => !first.has(name))]
  const opening = order.findIndex((name) => !kept.includes(name) || !first.has(name))
  const stillRequired = opening === -1 ? order : order.slice(0, opening)
  // Equal schemas are one variant, whatever else the views that make them keep.
  const key = JSON.stringify([stillRequired, Object.keys(members)])
  let variant = variants.get(key)
  if (variant === undefined) {
    // The relations' members come last, sent only when expanded: the whole object's bytes are the same through either.
    const shaped = { ...Object.fromEntries(order.map((name) => [name, properties[name]])), ...members }
    variant = { ...rest, properties: shaped } as TObject // the object schema's own members, and the relations'
    if (stillRequired.length > 0) variant.required = stillRequired
    if (typeof $id === 'string') variant.$id = variantName($id, Object.keys(members), variants)
    variants.set(key, variant)
  }
  return variant
}

/**
 * The document's name of a variant: `ItemFieldset`, or `LoanFieldsetWithBook` with the members of
 * relations; a number after it only where views of one schema keep other fields (`ItemFieldset2`).
 */
function variantName ($id: string, members: readonly string[], variants: ReadonlyMap<string, TObject>): string {
  const capital = (name: string): string => name.charAt(0).toUpperCase() + name.slice(1)
  const base = `${$id}Fieldset${members.length === 0 ? '' : `With${members.map(capital).join('And')}`}`
  const taken = new Set([...variants.values()].map((variant) => variant.$id))
  let name = base
  for (let n = 2; taken.has(name); n++) name = `${base}${n}`
  return name
}

/** The partial schemas `sparseSchema` made of `item`: what a route of field sets sends instead of it. */
export const sparseVariantsOf = (item: TSchema): Iterable<TObject> => VARIANTS.get(item)?.values() ?? []

/** The field set of each request that named one: what the hooks after the action (the cut, the ETag) read. */
const REQUEST_SETS = new WeakMap<FastifyRequest, FieldSet>()

/** Remembers the field set a request named, for the hooks after its action. */
export const rememberFieldSet = (request: FastifyRequest, set: FieldSet): void => { REQUEST_SETS.set(request, set) }

/** The field set a request of a view with sparse fieldsets named, if any (`undefined`: the whole object). */
export const fieldSetOf = (request: FastifyRequest): FieldSet | undefined => REQUEST_SETS.get(request)
