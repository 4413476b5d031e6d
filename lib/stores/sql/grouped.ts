// Grouped reads (stores layer, SQL): at most n rows for each value of a field in one statement, ranked in a window, for the to-many relations a view embeds.
import { ConfigurationError } from '../../core/configuration-error.js'
import type { OrderKey, PerGroup } from '../repository.js'
import { orderBy, windowSize } from './conditions.js'
import { projectedNames, type Projected } from './projection.js'

/** The name of the rank a grouped read computes: no declared field may have it, since each is a plain identifier of the table's. */
const RANK = 'fv_rank'

/**
 * What a grouped read adds to its select list: each row's rank within its group, in the read's
 * order (`ROW_NUMBER() OVER (PARTITION BY ... ORDER BY ...)`, SQLite 3.25 and PostgreSQL alike).
 * The group and the order are columns, written by `column` with no value to bind.
 */
export function rankColumn (
  table: Projected, group: PerGroup, keys: readonly OrderKey[], column: (name: string) => string
): string {
  for (const name of [group.field, ...keys.map((key) => key.field)]) {
    if (!table.columns.has(name)) {
      throw new ConfigurationError('FV_ERR_SQL_NAME', `${table.table}: a read of each group ranks its rows by columns; "${name}" is no column of it`)
    }
  }
  return `, ROW_NUMBER() OVER (PARTITION BY ${column(group.field)}${orderBy(table.dialect, [...keys], column)}) AS ${table.dialect.quote(RANK)}`
}

/**
 * The statement of a grouped read: the rows of `inner` (which selects the rank) whose rank is at
 * most the group's limit, their fields without the rank, in the read's order.
 */
export function groupedSelect (
  table: Projected, inner: string, group: PerGroup, keys: readonly OrderKey[], fields: readonly string[] | undefined
): string {
  const quote = (name: string): string => table.dialect.quote(name)
  const names = fields === undefined ? table.fieldNames : projectedNames(table, fields, keys)
  const ranked = `${quote('fv_grouped')} WHERE ${quote(RANK)} <= ${windowSize(group.limit)}`
  return `SELECT ${names.map(quote).join(', ')} FROM (${inner}) AS ${ranked}${orderBy(table.dialect, [...keys], quote)}`
}
