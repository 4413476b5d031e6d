// The memory store's keys (stores layer): a path parameter's integer, and a key of several fields, each row kept under its fields' values as one.
import { ConfigurationError } from '../core/configuration-error.js'
import type { Criteria, OrderKey } from './repository.js'
import { isNull } from './value-order.js'

type Row = Record<string, unknown>

/**
 * The integer a path parameter spells (`'42'` -> 42), or `undefined`. A detail route's id is a
 * string unless `detailParams` says otherwise; an integer column of a SQL database finds its row
 * by that string too, so the memory store does the same.
 */
export function integerKey (id: string | number): number | undefined {
  if (typeof id !== 'string' || !/^(?:0|-?[1-9][0-9]*)$/.test(id)) return undefined
  const n = Number(id)
  return Number.isSafeInteger(n) ? n : undefined
}

/** The fields of the key `idField` declares; a list of none is refused. */
export function keyFieldsOf (idField: string | readonly string[], owner: string): readonly string[] {
  if (typeof idField === 'string') return [idField]
  if (idField.length === 0) throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `${owner}: idField is an empty list; name the key's field, or its fields`)
  return [...idField]
}

/** What a criterion's value may stand for in a key: itself, then the integer a string spells. */
function spellings (value: unknown): unknown[] {
  const n = typeof value === 'string' ? integerKey(value) : undefined
  return n === undefined ? [value] : [value, n]
}

/**
 * A key of several fields (a link table's `['article_id', 'user_id']`): a row is kept under the
 * JSON of its fields' values, which a create must give, since no value of several fields can be
 * generated as the next integer is.
 */
export class CompositeKey {
  readonly fields: readonly string[]
  readonly #owner: string

  /** `fields`: at least two; `owner`: the repository's class, for messages. */
  constructor (fields: readonly string[], owner: string) {
    this.fields = fields
    this.#owner = owner
  }

  /** The value a row is kept under (a date as its ISO text, which `compareValues` equates with it). */
  of (row: Row): string {
    return JSON.stringify(this.fields.map((field) => row[field]))
  }

  /** The key of a new row; one lacking a key field is refused, naming it. */
  ofNew (row: Row): string {
    const missing = this.fields.filter((field) => isNull(row[field]))
    if (missing.length === 0) return this.of(row)
    // Only a view whose body schema lets a key field be left out reaches this from a request: the
    // schema's mistake, not the client's, as FV_ERR_SCHEMA_COLUMNS is at registration.
    throw new ConfigurationError('FV_ERR_SCHEMA_COLUMNS', `${this.#owner}: a row is kept under its key (${this.fields.join(', ')}), which a create ` +
      `must give whole; this one lacks ${missing.join(', ')}. Require ${missing.length === 1 ? 'it' : 'them'} in the create's body schema, or give ` +
      `${missing.length === 1 ? 'it' : 'them'} in getKwargs`)
  }

  /**
   * The key a write of `values` gives `row` (`undefined`: a new row), when it names one: not when
   * it leaves the row's key as it is, nor when the key would lack a field (a create refused later).
   */
  ofWrite (values: Row, row: Row | undefined): string | undefined {
    if (row !== undefined && this.fields.every((field) => values[field] === undefined)) return undefined
    const merged = row === undefined ? values : { ...row, ...values }
    return this.fields.some((field) => isNull(merged[field])) ? undefined : this.of(merged)
  }

  /**
   * The stored row criteria name with a plain value (text or a number) of every key field, or
   * `undefined`; `null` when they do not name the whole key so, and the rows must be scanned. Each
   * value is tried as given, then as the integer a string spells, in every combination: a path
   * parameter is a string, and a key of text and integers has both.
   */
  find (rows: ReadonlyMap<unknown, Row>, criteria: Criteria): Row | undefined | null {
    let keys: unknown[][] = [[]]
    for (const field of this.fields) {
      const value = criteria[field]
      if (!Object.hasOwn(criteria, field) || !(typeof value === 'string' || (typeof value === 'number' && !Number.isNaN(value)))) return null
      keys = keys.flatMap((key) => spellings(value).map((spelt) => [...key, spelt]))
    }
    for (const key of keys) {
      const row = rows.get(JSON.stringify(key))
      if (row !== undefined) return row
    }
    return undefined
  }

  /** The criteria besides the key fields: what a row found by its key must still satisfy. */
  rest (criteria: Criteria): Criteria {
    const rest = { ...criteria }
    for (const field of this.fields) delete rest[field]
    return rest
  }

  /** The ordering with each key field it lacks appended, ascending: a total order. */
  ordering (orderBy: OrderKey[]): OrderKey[] {
    const missing = this.fields.filter((field) => !orderBy.some((k) => k.field === field))
    return [...orderBy, ...missing.map((field) => ({ field, descending: false }))]
  }
}
