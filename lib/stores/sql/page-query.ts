// Page queries (stores layer, SQL): the statement of a list, and its window read keys first, so that computed fields are computed for the page's rows only.
// A list over a query selects `(<expression>) AS "<name>"` for each computed field. With `OFFSET`,
// one statement computes them for every row it skips (issue 53: the lending example's deepest page
// of books took seconds). The page query selects the window's keys in a subquery that computes
// only what it filters and orders by, and the fields of those rows around it (docs/repositories.md,
// "Page queries").
import type { Criteria, ListQuery, OrderKey, RepositoryOptions } from '../repository.js'
import { after, orderBy, windowSize, type FieldWriter } from './conditions.js'
import type { Bind, Dialect } from './dialect.js'
import { groupedSelect, rankColumn } from './grouped.js'
import { projectedNames, type Projected } from './projection.js'

/** The name `rankColumn` gives the rank of a grouped read (grouped.ts), which the keys' subquery compares. */
const RANK = 'fv_rank'

/** What a list statement reads of its builder: the declared fields, the key, and `FROM` with its joins. */
export interface Listed extends Projected {
  readonly dialect: Dialect
  readonly key: { readonly columns: readonly string[], ordering (orderBy: OrderKey[]): OrderKey[] }
  readonly from: string
  where (criteria: Criteria, params: unknown[], search?: ListQuery['search'], args?: unknown[], options?: RepositoryOptions): string
}

/**
 * The parts of a list statement only its builder writes, made once per builder. Each adds the
 * values it binds to `params` when called: call them in the order of the text.
 */
export interface ListWriters {
  /** `SELECT <list><rank> FROM <table and joins>`: every field, or those of `fields` (`projectionList`). */
  head (params: unknown[], options: RepositoryOptions | undefined, fields: readonly string[] | undefined,
    keys: OrderKey[], rank: string): string
  /** A field as a read writes it: a column qualified in a query, or a computed field's expression. */
  field (name: string, params: unknown[], options: RepositoryOptions | undefined): string
  /** Binds the values of the joins, written again where the keys' subquery names `from`. */
  joins (params: unknown[], options: RepositoryOptions | undefined): void
}

/**
 * The SQL of a list (placeholders `?`, values added to `params` in text order): the page query when
 * it saves work (`keysFirst`), else one statement, `SELECT ... WHERE ... ORDER BY ... LIMIT ... OFFSET ...`.
 */
export function listStatement (
  table: Listed, writers: ListWriters, criteria: Criteria, query: ListQuery,
  params: unknown[], options: RepositoryOptions | undefined
): string {
  const { dialect } = table
  const keys = table.key.ordering(query.orderBy)
  const field: FieldWriter = (name) => writers.field(name, params, options)
  const where = (): string => {
    const filtered = table.where(criteria, params, query.search, query.args, options)
    return seek(table, query, filtered, field, params)
  }
  const group = query.perGroup
  if (!keysFirst(table, query, keys)) {
    const rank = group === undefined ? '' : rankColumn(table, group, keys, field)
    const head = writers.head(params, options, query.fields, keys, rank)
    const sql = group === undefined ? `${head}${where()}${orderBy(dialect, keys, field)}` : groupedSelect(table, head + where(), group, keys, query.fields)
    return sql + windowOf(dialect, query)
  }
  const head = writers.head(params, options, query.fields, keys, '')
  const key = table.key.columns.map((name) => `${table.table}.${dialect.quote(name)}`)
  const row = key.length === 1 ? key[0] : `(${key.join(', ')})`
  // The subquery reads the table and its joins again, their values bound again: its criteria and order may read what they join.
  const keysFrom = (): string => {
    writers.joins(params, options)
    return ` FROM ${table.from}${where()}`
  }
  if (group === undefined) {
    const keysOf = `SELECT ${key.join(', ')}${keysFrom()}${orderBy(dialect, keys, field)}${windowOf(dialect, query)}`
    return `${head} WHERE ${row} IN (${keysOf})${orderBy(dialect, keys, field)}`
  }
  // Each group's first rows, their keys only, ranked as a grouped read ranks them (its group and order are columns, which bind nothing).
  const names = table.key.columns.map((name) => dialect.quote(name))
  const ranked = `SELECT ${key.map((column, i) => `${column} AS ${names[i]}`).join(', ')}${rankColumn(table, group, keys, field)}${keysFrom()}`
  const keysOf = `SELECT ${names.join(', ')} FROM (${ranked}) AS ${dialect.quote('fv_grouped')} WHERE ${dialect.quote(RANK)} <= ${windowSize(group.limit)}`
  return `${head} WHERE ${row} IN (${keysOf})${orderBy(dialect, keys, field)}${windowOf(dialect, query)}`
}

/**
 * Whether the page query saves work, so that it is written: the dialect takes it, the read selects
 * a computed field, and one statement would compute it for rows it drops: those an `OFFSET` skips,
 * and those of each group past its limit. Not for a `LIMIT` alone, sorted or not: both databases
 * answered a first page as fast in one statement (PostgreSQL evaluates a costly select list after
 * its sort and limit), so a first page, a cursor's page, a plain table and a read without a
 * computed field keep the statement they had (measured: docs/repositories.md, "Page queries").
 */
function keysFirst (table: Listed, query: ListQuery, keys: readonly OrderKey[]): boolean {
  const { computed, dialect } = table
  const drops = query.perGroup !== undefined || (query.offset !== undefined && query.offset > 0)
  if (!drops || computed.size === 0 || dialect.keysFirstPages !== true) return false
  // A sparse field set computes only the computed fields it selects (projection.ts): perhaps none.
  const { fields } = query
  return fields === undefined || projectedNames(table, fields, keys).some((name) => computed.has(name))
}

/** `where` and a cursor's keyset seek ("after these values", conditions.ts), its values bound. */
function seek (table: Listed, query: ListQuery, where: string, field: FieldWriter, params: unknown[]): string {
  if (query.after === undefined) return where
  const bind: Bind = (v) => { params.push(v); return '?' }
  const keyColumn = (name: string): boolean => table.key.columns.includes(name)
  return where + (where === '' ? ' WHERE ' : ' AND ') + after(query.orderBy, query.after, field, bind, keyColumn)
}

/** ` LIMIT n OFFSET m` of the query, or what of it it has. */
function windowOf (dialect: Dialect, query: ListQuery): string {
  // Window sizes are written as literals: SQLite plans a bound LIMIT much worse (about
  // 3 µs more per single-row read). Both are checked integers, never client text.
  let sql = query.limit === undefined ? '' : ` LIMIT ${windowSize(query.limit)}`
  if (query.offset !== undefined && query.offset > 0) {
    sql += `${query.limit === undefined ? dialect.offsetWithoutLimit : ''} OFFSET ${windowSize(query.offset)}`
  }
  return sql
}
