// Relation criteria of the memory store (stores layer): "a related row exists" over the rows of other repositories, as the SQL stores' EXISTS answers it.
import { ConfigurationError } from '../core/configuration-error.js'
import type { Criteria, Operator, Repository } from './repository.js'

/** The further repository of a relation: its rows point at the related rows (`on`: its field -> the related field). */
export interface MemoryRelationJoin {
  readonly repository: Pick<Repository<object>, 'list'>
  readonly on: Readonly<Record<string, string>>
  readonly fields: readonly string[]
}

/**
 * Rows of another repository that point at this one's (docs/filters.md, "Relation filters"): what
 * `relations` of a SQL repository is, over repositories in the process. `on`: the related field ->
 * this repository's field; `fields`: the related fields a criterion may compare; `join`: a further
 * repository matched on a related field, whose `fields` a criterion may compare too.
 */
export interface MemoryRelation {
  readonly repository: Pick<Repository<object>, 'list'>
  readonly on: Readonly<Record<string, string>>
  readonly fields?: readonly string[]
  readonly join?: MemoryRelationJoin
}

type Row = Record<string, unknown>

/** The values of `fields` of a row as one key; `undefined` when one is null (a null equals nothing, as in SQL). */
function keyOf (row: Row, fields: readonly string[]): string | undefined {
  const values = fields.map((field) => row[field])
  if (values.some((value) => value === null || value === undefined)) return undefined
  return JSON.stringify(values.map((value) => value instanceof Date ? value.toISOString() : value))
}

/** A criterion on one field with an operator, as the repositories take it. */
const criterion = (field: string, op: Operator, value: unknown): Criteria => ({ [op === 'eq' ? field : `${field}__${op}`]: value })

/** The relations of one memory repository: each criterion `<relation>.<field>` becomes a test of its rows. */
export class MemoryRelations {
  /** Every `<relation>.<field>` a criterion may name. */
  readonly fieldNames: readonly string[]
  readonly #owner: string
  readonly #relations: Readonly<Record<string, MemoryRelation>>

  constructor (owner: string, relations: Readonly<Record<string, MemoryRelation>>) {
    this.#owner = owner
    this.#relations = relations
    const names: string[] = []
    for (const [name, relation] of Object.entries(relations)) {
      const joined = relation.join?.fields ?? []
      const clash = (relation.fields ?? []).find((field) => joined.includes(field))
      if (clash !== undefined) throw relationError(`${owner}: relations.${name}: "${clash}" is a field of the related rows and of the joined ones; compare it on one of them`)
      if (Object.keys(relation.on).length === 0) throw relationError(`${owner}: relations.${name}: "on" names no field of the related rows`)
      for (const field of [...relation.fields ?? [], ...joined]) names.push(`${name}.${field}`)
    }
    this.fieldNames = names
  }

  /** The test of one relation criterion, reading the related rows once per call of the repository. */
  test (path: string, op: Operator, value: unknown): (row: Row) => boolean {
    const dot = path.indexOf('.')
    const name = path.slice(0, dot)
    const field = path.slice(dot + 1)
    const relation = Object.hasOwn(this.#relations, name) ? this.#relations[name] : undefined
    if (relation === undefined) {
      const known = Object.keys(this.#relations).join(', ') || 'none'
      throw relationError(`${this.#owner}: no relation "${name}" (criterion ${JSON.stringify(path)}); its relations: ${known}`)
    }
    const { join } = relation
    let related: Row[]
    if (relation.fields?.includes(field) === true) {
      related = relation.repository.list(criterion(field, op, value)) as Row[]
    } else if (join?.fields.includes(field) === true) {
      const joinRows = join.repository.list(criterion(field, op, value)) as Row[]
      const joined = new Set(joinRows.map((row) => keyOf(row, Object.keys(join.on))))
      related = (relation.repository.list({}) as Row[]).filter((row) => joined.has(keyOf(row, Object.values(join.on))))
    } else {
      const fields = [...relation.fields ?? [], ...join?.fields ?? []]
      throw relationError(`${this.#owner}: relations.${name} has no field ${JSON.stringify(field)} a criterion may compare (${fields.join(', ')})`)
    }
    const keys = new Set(related.map((row) => keyOf(row, Object.keys(relation.on))))
    keys.delete(undefined)
    const own = Object.values(relation.on)
    return (row) => keys.has(keyOf(row, own))
  }
}

const relationError = (message: string): ConfigurationError => new ConfigurationError('FV_ERR_RELATION', message)
