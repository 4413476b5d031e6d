// Projections (stores layer, SQL): the select list of a read that sends some fields only (a sparse fieldset), held to the declared fields.
import { ConfigurationError } from '../../core/configuration-error.js'
import type { OrderKey, RepositoryOptions } from '../repository.js'
import type { Dialect } from './dialect.js'
import type { SqlExpression } from './expression.js'

/** What a projection reads of a builder: its declared fields, how it names them, and its key. */
export interface Projected {
  readonly dialect: Dialect
  readonly table: string
  readonly columns: ReadonlySet<string>
  readonly computed: ReadonlyMap<string, SqlExpression>
  readonly fieldNames: readonly string[]
  readonly isQuery: boolean
  readonly key: { readonly columns: readonly string[] }
}

/**
 * The select list of the fields a caller sends, the key and the sort keys (which a cursor reads),
 * in the declared order, each computed field's values added to `params`: a computed field nobody
 * asked for is not computed. A name that is no declared field is refused, so a client's text never
 * reaches the statement (the view refused it before, with a 400).
 */
export function projectionList (
  table: Projected,
  fields: readonly string[],
  keys: readonly OrderKey[],
  params: unknown[],
  options: RepositoryOptions | undefined
): string {
  const quote = (name: string): string => table.dialect.quote(name)
  return projectedNames(table, fields, keys).map((name) => {
    const expression = table.computed.get(name)
    if (expression !== undefined) return `(${expression.render(params, options)}) AS ${quote(name)}`
    return table.isQuery ? `${table.table}.${quote(name)} AS ${quote(name)}` : quote(name)
  }).join(', ')
}

/** The names `projectionList` selects: the fields asked for, the key and the sort keys, in the declared order. */
export function projectedNames (table: Projected, fields: readonly string[], keys: readonly OrderKey[]): string[] {
  const wanted = new Set([...table.key.columns, ...keys.map((key) => key.field)])
  for (const name of fields) {
    if (!table.columns.has(name) && !table.computed.has(name)) throw new ConfigurationError('FV_ERR_SQL_NAME', `${table.table}: no column ${JSON.stringify(name)}`)
    wanted.add(name)
  }
  return table.fieldNames.filter((name) => wanted.has(name))
}
