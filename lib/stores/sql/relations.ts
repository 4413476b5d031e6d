// Relation criteria of the SQL stores (below the builder): "a related row exists" as an EXISTS over a join table, declared once per repository.
import { ConfigurationError } from '../../core/configuration-error.js'
import { condition } from './conditions.js'
import type { Bind, Dialect } from './dialect.js'
import type { RelationJoin, SqlRelation } from './statement.js'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** Where a relation field is: the related table, or the table it joins. */
type Place = 'related' | 'joined'

interface Compiled {
  /** `FROM <table> AS related [JOIN <table> AS joined ON ...]`. */
  readonly from: string
  /** The related columns and the repository fields they equal, in declared order. */
  readonly on: ReadonlyArray<readonly [string, string]>
  readonly fields: ReadonlyMap<string, Place>
}

/**
 * The relations of one repository, checked when it is made: every name a plain identifier, every
 * `on` naming one of the repository's fields. A criterion naming anything else is refused before
 * any SQL is written.
 */
export class SqlRelations {
  /** Every `<relation>.<field>` a criterion may name: what a view's filter is checked against at registration. */
  readonly fieldNames: readonly string[]
  readonly #dialect: Dialect
  readonly #owner: string
  readonly #relations = new Map<string, Compiled>()

  constructor (
    dialect: Dialect,
    owner: string,
    relations: Readonly<Record<string, SqlRelation>>,
    fields: readonly string[]
  ) {
    this.#dialect = dialect
    this.#owner = owner
    const q = (name: string): string => dialect.quote(name)
    const names: string[] = []
    for (const [name, relation] of Object.entries(relations)) {
      const where = `${owner}: relations.${name}`
      const { table, on, fields: own = [], join } = relation
      const joinNames = join === undefined
        ? []
        : [join.table, ...Object.keys(join.on), ...Object.values(join.on), ...join.fields]
      identifiers(where, [name, table, ...Object.keys(on), ...own, ...joinNames])
      if (Object.keys(on).length === 0) {
        throw relationError(`${where}: "on" names no column of ${table} pointing at a field of ${owner}`)
      }
      for (const field of Object.values(on)) {
        if (!fields.includes(field)) throw relationError(`${where}: on points at "${field}", which is not a field of ${owner} (${fields.join(', ')})`)
      }
      const places = new Map<string, Place>(own.map((field) => [field, 'related']))
      for (const field of join?.fields ?? []) {
        if (places.has(field)) throw relationError(`${where}: "${field}" is a field of ${table} and of ${String(join?.table)}; compare it on one of them`)
        places.set(field, 'joined')
      }
      if (places.size === 0) throw relationError(`${where}: name the columns a criterion may compare in fields (or join.fields)`)
      const joinOn = (join: RelationJoin): string => Object.entries(join.on)
        .map(([column, related]) => `${q('fv_joined')}.${q(column)} = ${q('fv_related')}.${q(related)}`).join(' AND ')
      const joined = join === undefined ? '' : ` JOIN ${q(join.table)} AS ${q('fv_joined')} ON ${joinOn(join)}`
      this.#relations.set(name, { from: `${q(table)} AS ${q('fv_related')}${joined}`, on: Object.entries(on), fields: places })
      for (const field of places.keys()) names.push(`${name}.${field}`)
    }
    this.fieldNames = names
  }

  /**
   * The condition of one relation criterion: `path` is `<relation>.<field>`, `row` writes a field of
   * the repository's row as the enclosing statement names it, `bind` binds a value where it is used.
   */
  condition (path: string, op: string, value: unknown, row: (field: string) => string, bind: Bind): string {
    const dot = path.indexOf('.')
    const name = path.slice(0, dot)
    const field = path.slice(dot + 1)
    const relation = this.#relations.get(name)
    if (relation === undefined) {
      const known = [...this.#relations.keys()]
      throw relationError(`${this.#owner}: no relation "${name}" (criterion ${JSON.stringify(path)}); its relations: ${known.join(', ') || 'none'}`)
    }
    const place = relation.fields.get(field)
    if (place === undefined) {
      throw relationError(`${this.#owner}: relations.${name} has no field ${JSON.stringify(field)} a criterion may compare (${[...relation.fields.keys()].join(', ')})`)
    }
    const q = (n: string): string => this.#dialect.quote(n)
    // The row's fields first, then the criterion's value: placeholders stay in text order.
    const links = relation.on.map(([column, own]) => `${q('fv_related')}.${q(column)} = ${row(own)}`)
    const compared = condition(this.#dialect, () => `${q(place === 'related' ? 'fv_related' : 'fv_joined')}.${q(field)}`, op, value, bind)
    return `EXISTS (SELECT 1 FROM ${relation.from} WHERE ${[...links, compared].join(' AND ')})`
  }
}

/** Whether a criterion's field is a relation path (`tags.tag`): a dot, which no identifier holds. */
export const isRelationPath = (field: string): boolean => field.includes('.')

function identifiers (where: string, names: string[]): void {
  const bad = names.find((name) => typeof name !== 'string' || !IDENTIFIER.test(name))
  if (bad !== undefined) throw relationError(`${where}: not a plain SQL identifier: ${JSON.stringify(bad)}`)
}

const relationError = (message: string): ConfigurationError => new ConfigurationError('FV_ERR_RELATION', message)
