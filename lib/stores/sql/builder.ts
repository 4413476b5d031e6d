import { splitCriterion, type Criteria, type ListQuery, type OrderKey } from '../repository.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import type { Dialect } from './dialect.js'
import { postgresDialect } from './postgres-dialect.js'
import { sqliteDialect } from './sqlite-dialect.js'
import type { SqlFragment, Statement, TableDefinition } from './statement.js'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The dialects the library ships, by the names a builder may be given instead of the object. */
const BUILT_IN = { sqlite: sqliteDialect, postgres: postgresDialect }

/**
 * Writes the SQL of one table. Column names come only from the declared list, so a
 * criterion or sort key naming anything else is a `TypeError`, and every value is a
 * bound parameter: what a client sends is matched or stored literally.
 */
export class SqlBuilder {
  readonly dialect: Dialect
  readonly table: string
  readonly columns: Set<string>
  readonly idColumn: string
  readonly touchColumn: string | undefined
  readonly optionKeys: Set<string>
  readonly scopeFields: readonly string[]
  /**
   * The declared columns, quoted: what every SELECT and RETURNING lists. Never `*`, so a
   * column the repository was not told about (a password hash) never leaves the database.
   */
  readonly selectList: string
  /** SELECT texts of single-row reads by plain equality, keyed by the criteria's column names in order. */
  readonly #pointReads = new Map<string, string>()

  /** `dialect`: the database's dialect object, or the name of one the library ships. */
  constructor (dialect: Dialect | keyof typeof BUILT_IN, options: TableDefinition) {
    this.dialect = typeof dialect === 'string' ? BUILT_IN[dialect] : dialect
    const quote = (name: string): string => this.dialect.quote(name)
    for (const name of [options.table, ...options.columns, options.idColumn ?? 'id']) {
      if (!IDENTIFIER.test(name)) throw new ConfigurationError('FV_ERR_SQL_NAME', `Not a plain SQL identifier: ${JSON.stringify(name)}`)
    }
    this.table = quote(options.table)
    this.columns = new Set(options.columns)
    this.idColumn = options.idColumn ?? 'id'
    this.touchColumn = options.touchColumn
    this.optionKeys = new Set(options.optionKeys ?? [])
    this.scopeFields = options.scopeFields ?? []
    this.selectList = options.columns.map(quote).join(', ')
  }

  private column (name: string): string {
    if (!this.columns.has(name)) throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: no column ${JSON.stringify(name)}`)
    return this.dialect.quote(name)
  }

  /** The statement as the driver takes it: placeholders and values in the dialect's form. */
  private finish (sql: string, params: unknown[], returns: Statement['returns']): Statement {
    return { sql: this.dialect.placeholders(sql), params: params.map(this.dialect.value), returns }
  }

  private condition (field: string, op: string, value: unknown, params: unknown[]): string {
    const col = this.column(field)
    const bind = (v: unknown): string => { params.push(v); return '?' }
    switch (op) {
      case 'eq': return value === null ? `${col} IS NULL` : `${col} = ${bind(value)}`
      case 'ne': return value === null ? `${col} IS NOT NULL` : `${col} <> ${bind(value)}`
      case 'lt': return `${col} < ${bind(value)}`
      case 'le': return `${col} <= ${bind(value)}`
      case 'gt': return `${col} > ${bind(value)}`
      case 'ge': return `${col} >= ${bind(value)}`
      case 'in':
      case 'not_in': {
        const items = value as unknown[]
        // `IN ()` is not SQL: an empty list selects nothing, and excludes nothing but nulls.
        if (items.length === 0) return op === 'in' ? 'FALSE' : `${col} IS NOT NULL`
        return `${col} ${op === 'in' ? 'IN' : 'NOT IN'} (${items.map(bind).join(', ')})`
      }
      case 'is_null': return value === true ? `${col} IS NULL` : `${col} IS NOT NULL`
      // `\` escapes a wildcard in every store.
      case 'like': return this.dialect.like(() => col, value, bind)
      default: return this.dialect.ilike(() => col, value, bind)
    }
  }

  /** `WHERE` of criteria, search and positional fragments. */
  where (criteria: Criteria, params: unknown[], search?: ListQuery['search'], args: unknown[] = []): string {
    const parts: string[] = []
    for (const [key, value] of Object.entries(criteria)) {
      if (this.optionKeys.has(key)) continue
      const [field, op] = splitCriterion(key)
      parts.push(this.condition(field, op, value, params))
    }
    if (search !== undefined) {
      // A substring search, not LIKE '%term%': LIKE backtracks, and a term of a hundred characters
      // against long repetitive text cost over a second per request; instr (SQLite) and strpos
      // (PostgreSQL) search the same substring in a small fraction of that (docs/filters.md, "Bounds").
      const term = search.term.toLowerCase()
      parts.push(`(${search.fields.map((f) => { params.push(term); return this.dialect.contains(`lower(${this.column(f)})`, '?') }).join(' OR ')})`)
    }
    for (const arg of args) {
      const fragment = arg as SqlFragment
      if (typeof fragment?.sql !== 'string' || !Array.isArray(fragment.params)) throw new ConfigurationError('FV_ERR_SQL_FRAGMENT', 'SQL repositories take positional criteria as { sql, params } fragments')
      parts.push(`(${fragment.sql})`)
      params.push(...fragment.params)
    }
    return parts.length === 0 ? '' : ` WHERE ${parts.join(' AND ')}`
  }

  /** Ascending puts nulls last, descending first, as the in-memory repository does. */
  private orderBy (keys: OrderKey[]): string {
    return ' ORDER BY ' + keys.map((k) => `${this.column(k.field)} ${k.descending ? 'DESC NULLS FIRST' : 'ASC NULLS LAST'}`).join(', ')
  }

  /** The keyset condition "after these values" in the sort order, nulls placed as `orderBy` places them. */
  private after (keys: OrderKey[], values: unknown[], params: unknown[]): string {
    const alternatives = keys.map((key, i) => {
      const parts: string[] = []
      for (let j = 0; j < i; j++) {
        const col = this.column(keys[j].field)
        parts.push(values[j] === null ? `${col} IS NULL` : `${col} = ?`)
        if (values[j] !== null) params.push(values[j])
      }
      const col = this.column(key.field)
      const v = values[i]
      if (v === null) parts.push(key.descending ? `${col} IS NOT NULL` : 'FALSE')
      else {
        params.push(v)
        parts.push(key.descending ? `${col} < ?` : `(${col} > ? OR ${col} IS NULL)`)
      }
      return `(${parts.join(' AND ')})`
    })
    return `(${alternatives.join(' OR ')})`
  }

  select (criteria: Criteria, query: ListQuery): Statement {
    const params: unknown[] = []
    let where = this.where(criteria, params, query.search, query.args)
    const keys = query.orderBy.some((k) => k.field === this.idColumn) ? query.orderBy : [...query.orderBy, { field: this.idColumn, descending: false }]
    if (query.after !== undefined) where += (where === '' ? ' WHERE ' : ' AND ') + this.after(query.orderBy, query.after, params)
    let sql = `SELECT ${this.selectList} FROM ${this.table}${where}${this.orderBy(keys)}`
    // Window sizes are written as literals: SQLite plans a bound LIMIT much worse (about
    // 3 µs more per single-row read). Both are checked integers, never client text.
    if (query.limit !== undefined) sql += ` LIMIT ${windowSize(query.limit)}`
    if (query.offset !== undefined && query.offset > 0) {
      sql += `${query.limit === undefined ? this.dialect.offsetWithoutLimit : ''} OFFSET ${windowSize(query.offset)}`
    }
    return this.finish(sql, params, 'rows')
  }

  /**
   * The statement reading the first row the criteria select. Criteria of plain
   * equalities on columns with non-null values (a detail route's id, a tenant) have
   * a text that depends only on their column names, so it is built once per set of
   * names: a detail read then costs a map lookup, not a SQL build.
   */
  selectOne (criteria: Criteria): Statement {
    let shape = ''
    const params: unknown[] = []
    for (const key in criteria) {
      const value = criteria[key]
      if (value === null || typeof value === 'object' || !this.columns.has(key) || key.includes('__') || this.optionKeys.has(key)) {
        return this.select(criteria, { orderBy: [], limit: 1 })
      }
      shape += `${key},`
      params.push(this.dialect.value(value))
    }
    let sql = this.#pointReads.get(shape)
    if (sql === undefined) {
      // With the primary key among the equalities at most one row matches: no ORDER BY or LIMIT to plan.
      sql = this.idColumn in criteria ? this.finish(`SELECT ${this.selectList} FROM ${this.table}${this.where(criteria, [])}`, [], 'rows').sql : this.select(criteria, { orderBy: [], limit: 1 }).sql
      // Shapes are subsets of the declared columns; keep the cache bounded all the same.
      if (this.#pointReads.size < 256) this.#pointReads.set(shape, sql)
    }
    return { sql, params, returns: 'rows' }
  }

  /**
   * Starts a read-only transaction whose statements all see one snapshot: PostgreSQL's
   * REPEATABLE READ, SQLite's deferred transaction (its first read fixes the snapshot).
   */
  beginRead (): Statement {
    return { sql: this.dialect.beginRead, params: [], returns: 'count' }
  }

  /** The first row the criteria select, locked for the rest of the transaction (SQLite's write transaction locks the file). */
  lockOne (criteria: Criteria): Statement {
    const statement = this.selectOne(criteria)
    return { ...statement, sql: statement.sql + this.dialect.lockRows(this.table) }
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'>): Statement {
    const params: unknown[] = []
    return this.finish(`SELECT COUNT(*) AS n FROM ${this.table}${this.where(criteria, params, query.search, query.args)}`, params, 'rows')
  }

  private touched (values: Record<string, unknown>): Record<string, unknown> {
    return this.touchColumn === undefined ? values : { ...values, [this.touchColumn]: new Date().toISOString() }
  }

  insert (values: Record<string, unknown>): Statement {
    const data = this.touched(values)
    const cols = Object.keys(data).map((c) => this.column(c))
    return this.finish(`INSERT INTO ${this.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')}) RETURNING ${this.selectList}`, Object.values(data), 'rows')
  }

  /** Updates the rows the criteria select; `first` limits it to one, by primary key. */
  update (criteria: Criteria, values: Record<string, unknown>, first: boolean, args: unknown[] = []): Statement {
    const data = this.touched(values)
    const params: unknown[] = []
    // A member present as `undefined` (removed by a merge patch or JSON Patch) is unset: NULL.
    const sets = Object.keys(data).map((c) => { params.push(data[c] === undefined ? null : data[c]); return `${this.column(c)} = ?` })
    const target = this.target(criteria, params, first, args)
    return this.finish(`UPDATE ${this.table} SET ${sets.join(', ')}${target} RETURNING ${this.selectList}`, params, 'rows')
  }

  delete (criteria: Criteria, first: boolean, args: unknown[] = []): Statement {
    const params: unknown[] = []
    return this.finish(`DELETE FROM ${this.table}${this.target(criteria, params, first, args)}`, params, 'count')
  }

  /**
   * The `WHERE` of a write; `first` limits it to the first row by primary key. With the
   * primary key among the equalities at most one row matches, so the criteria are the
   * whole condition. Otherwise a scalar subquery picks the row: SQLite evaluates
   * `IN (SELECT ...)` in an UPDATE ... RETURNING into an ephemeral table, which with the
   * default `temp_store` is a temporary file per statement (measured at about 40 times
   * the cost of the update itself).
   */
  private target (criteria: Criteria, params: unknown[], first: boolean, args: unknown[]): string {
    const where = this.where(criteria, params, undefined, args)
    if (!first || this.idColumn in criteria) return where
    const id = this.dialect.quote(this.idColumn)
    return ` WHERE ${id} = (SELECT ${id} FROM ${this.table}${where} ORDER BY ${id} LIMIT 1)`
  }

  /** The row a bulk PUT item replaces: its primary key, and its scope columns when declared. */
  itemCriteria (item: Record<string, unknown>): Criteria {
    const criteria: Criteria = { [this.idColumn]: item[this.idColumn] }
    for (const field of this.scopeFields) if (item[field] !== undefined) criteria[field] = item[field]
    return criteria
  }

  optionsFree (kwargs: Record<string, unknown>): Criteria {
    const criteria: Criteria = {}
    for (const [key, value] of Object.entries(kwargs)) if (!this.optionKeys.has(key)) criteria[key] = value
    return criteria
  }
}

/** A LIMIT or OFFSET, checked before it is written into the SQL text. */
function windowSize (n: number): number {
  if (!Number.isSafeInteger(n) || n < 0) throw new ConfigurationError('FV_ERR_SQL_ROW_COUNT', `LIMIT or OFFSET must be a whole, non-negative row count; got ${String(n)}`)
  return n
}
