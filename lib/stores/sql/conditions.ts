// Criteria as SQL, for the statement builder (builder.ts): one criterion by its operator, ORDER BY, a cursor's keyset seek, and checked windows.
// A field is written by the builder's writer each time the text uses it (a computed field's values
// bound there again), and every value is bound where its placeholder is, so that values stay in text order.
import { ConfigurationError } from '../../core/configuration-error.js'
import type { OrderKey } from '../repository.js'
import type { Bind, Dialect } from './dialect.js'

/** Writes a field of a read where the text uses it, binding the values it binds. */
export type FieldWriter = (name: string) => string

/** One criterion: `col` writes its field, `bind` its value (once per use). */
export function condition (dialect: Dialect, col: () => string, op: string, value: unknown, bind: Bind): string {
  switch (op) {
    case 'eq': return value === null ? `${col()} IS NULL` : `${col()} = ${bind(value)}`
    case 'ne': return value === null ? `${col()} IS NOT NULL` : `${col()} <> ${bind(value)}`
    case 'lt': return `${col()} < ${bind(value)}`
    case 'le': return `${col()} <= ${bind(value)}`
    case 'gt': return `${col()} > ${bind(value)}`
    case 'ge': return `${col()} >= ${bind(value)}`
    case 'in':
    case 'not_in': {
      const items = value as unknown[]
      // `IN ()` is not SQL: an empty list selects nothing, and excludes nothing but nulls.
      if (items.length === 0) return op === 'in' ? 'FALSE' : `${col()} IS NOT NULL`
      return `${col()} ${op === 'in' ? 'IN' : 'NOT IN'} (${items.map(bind).join(', ')})`
    }
    case 'is_null': return value === true ? `${col()} IS NULL` : `${col()} IS NOT NULL`
    // `\` escapes a wildcard in every store.
    case 'like': return dialect.like(col, value, bind)
    default: return dialect.ilike(col, value, bind)
  }
}

/** ` ORDER BY` of the keys: ascending puts nulls last, descending first, as the in-memory repository does (the dialect writes how). */
export function orderBy (dialect: Dialect, keys: OrderKey[], field: FieldWriter): string {
  let sql = ' ORDER BY '
  // One writer for every key, made once per statement.
  let name = ''
  const expression = (): string => field(name)
  for (let i = 0; i < keys.length; i++) {
    name = keys[i].field
    sql += (i === 0 ? '' : ', ') + dialect.order(expression, keys[i].descending)
  }
  return sql
}

/**
 * The keyset condition "after these values" in the sort order, nulls placed as `orderBy` places them.
 * A column that holds no null (`notNull`: the table's key) is compared alone: `"id" > ?` is a seek along
 * its index, where `("id" > ? OR "id" IS NULL)` makes both databases scan from the first row.
 */
export function after (
  keys: OrderKey[], values: unknown[], field: FieldWriter, bind: Bind, notNull: (field: string) => boolean
): string {
  const col = (j: number): string => field(keys[j].field)
  const alternatives = keys.map((key, i) => {
    const parts: string[] = []
    for (let j = 0; j < i; j++) parts.push(values[j] === null ? `${col(j)} IS NULL` : `${col(j)} = ${bind(values[j])}`)
    const v = values[i]
    if (v === null) parts.push(key.descending ? `${col(i)} IS NOT NULL` : 'FALSE')
    else if (key.descending) parts.push(`${col(i)} < ${bind(v)}`)
    else parts.push(notNull(key.field) ? `${col(i)} > ${bind(v)}` : `(${col(i)} > ${bind(v)} OR ${col(i)} IS NULL)`)
    return `(${parts.join(' AND ')})`
  })
  return `(${alternatives.join(' OR ')})`
}

/** A LIMIT or OFFSET, checked before it is written into the SQL text. */
export function windowSize (n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new ConfigurationError('FV_ERR_SQL_ROW_COUNT', `LIMIT or OFFSET must be a whole, non-negative row count; got ${String(n)}`)
  return n
}
