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

/** The values of `fields` of a row as one key (a date as its ISO text); `undefined` when one is null (a null equals nothing, as in SQL). */
function keyOf (row: Row, fields: readonly string[]): string | undefined {
  const values = fields.map((field) => row[field])
  return values.some((value) => value === null || value === undefined) ? undefined : JSON.stringify(values)
}

/** The keys of rows, nulls left out. */
function keysOf (rows: Row[], fields: readonly string[]): Set<string | undefined> {
  const keys = new Set(rows.map((row) => keyOf(row, fields)))
  keys.delete(undefined)
  return keys
}

/** A criterion on one field with an operator, as the repositories take it. */
const criterion = (field: string, op: Operator, value: unknown): Criteria => ({ [op === 'eq' ? field : `${field}__${op}`]: value })

/** A relation as its tests read it: where each comparable field is, and the fields each side of a link names. */
interface Compiled {
  readonly related: MemoryRelation['repository']
  /** The related fields that point at the row, and the row's fields they equal. */
  readonly from: readonly string[]
  readonly to: readonly string[]
  readonly own: ReadonlySet<string>
  readonly join: MemoryRelationJoin | undefined
}

/** The relations of one memory repository: each criterion `<relation>.<field>` becomes a test of its rows. */
export class MemoryRelations {
  /** Every `<relation>.<field>` a criterion may name. */
  readonly fieldNames: readonly string[]
  readonly #owner: string
  readonly #relations = new Map<string, Compiled>()

  constructor (owner: string, relations: Readonly<Record<string, MemoryRelation>>) {
    this.#owner = owner
    const names: string[] = []
    for (const [name, { repository, on, fields = [], join }] of Object.entries(relations)) {
      const joined = join?.fields ?? []
      const clash = fields.find((field) => joined.includes(field))
      if (clash !== undefined) throw relationError(`${owner}: relations.${name}: "${clash}" is a field of the related rows and of the joined ones; compare it on one of them`)
      if (Object.keys(on).length === 0) throw relationError(`${owner}: relations.${name}: "on" names no field of the related rows`)
      const link = { from: Object.keys(on), to: Object.values(on) }
      this.#relations.set(name, { related: repository, ...link, own: new Set(fields), join })
      for (const field of [...fields, ...joined]) names.push(`${name}.${field}`)
    }
    this.fieldNames = names
  }

  /** The test of one relation criterion, reading the related rows once per call of the repository. */
  test (path: string, op: Operator, value: unknown): (row: Row) => boolean {
    const dot = path.indexOf('.')
    const name = path.slice(0, dot)
    const field = path.slice(dot + 1)
    const relation = this.#relations.get(name)
    if (relation === undefined) {
      const known = [...this.#relations.keys()].join(', ') || 'none'
      throw relationError(`${this.#owner}: no relation "${name}" (criterion ${JSON.stringify(path)}); its relations: ${known}`)
    }
    const { related, join } = relation
    let rows: Row[]
    if (relation.own.has(field)) {
      rows = related.list(criterion(field, op, value)) as Row[]
    } else if (join !== undefined && join.fields.includes(field)) {
      const joined = keysOf(join.repository.list(criterion(field, op, value)) as Row[], Object.keys(join.on))
      rows = (related.list({}) as Row[]).filter((row) => joined.has(keyOf(row, Object.values(join.on))))
    } else {
      const fields = this.fieldNames.filter((path) => path.startsWith(`${name}.`)).map((path) => path.slice(dot + 1))
      throw relationError(`${this.#owner}: relations.${name} has no field ${JSON.stringify(field)} a criterion may compare (${fields.join(', ')})`)
    }
    const keys = keysOf(rows, relation.from)
    return (row) => keys.has(keyOf(row, relation.to))
  }
}

const relationError = (message: string): ConfigurationError => new ConfigurationError('FV_ERR_RELATION', message)
