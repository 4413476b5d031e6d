// The statement builder, above the dialect and below the operations: the SQL of one table, or of a query over it, for any dialect.
import { splitCriterion, type Criteria, type DistinctQuery, type ListQuery, type OrderKey, type RepositoryOptions } from '../repository.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import { condition, windowSize } from './conditions.js'
import type { Bind, Dialect } from './dialect.js'
import { expressionOf, SqlExpression } from './expression.js'
import { postgresDialect } from './postgres-dialect.js'
import { sqliteDialect } from './sqlite-dialect.js'
import type { SqlFragment, Statement, TableDefinition } from './statement.js'
import { isRelationPath, SqlRelations } from './relations.js'
import { tableKey, type KeyCondition, type TableKey } from './table-key.js'
import { projectionList } from './projection.js'
import { listStatement, type ListWriters } from './page-query.js'

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/

/** The dialects the library ships, by the names a builder may be given instead of the object. */
const BUILT_IN = { sqlite: sqliteDialect, postgres: postgresDialect }

/**
 * Writes the SQL of one table, or of a query over it (`joins`, `computed` fields). Field names
 * come only from the declared columns and computed fields, so a criterion or sort key naming
 * anything else is a `TypeError`, and every value is a bound parameter: what a client sends is
 * matched or stored literally.
 */
export class SqlBuilder {
  readonly dialect: Dialect
  readonly table: string
  /** The base table's declared columns: what a write may set. */
  readonly columns: Set<string>
  /** Read-only fields: SQL expressions by name. */
  readonly computed: ReadonlyMap<string, SqlExpression>
  /** Every field a read may select, order or search by: the columns, then the computed fields. */
  readonly fieldNames: readonly string[]
  /**
   * Whether reads are a query beyond the table (joins or computed fields): base columns are then
   * qualified, and a write reads its row back through the query in the same transaction.
   */
  readonly isQuery: boolean
  /** The primary key: one column, or several (a link table's). */
  readonly key: TableKey
  readonly touchColumn: string | undefined
  readonly versionColumn: string | undefined
  readonly optionKeys: Set<string>
  readonly scopeFields: readonly string[]
  /**
   * The declared columns, quoted, then each computed field as `(<expression>) AS "<name>"`: what every SELECT
   * lists. Never `*`, so a column the repository was not told about (a password hash) never leaves the database.
   */
  readonly selectList: string
  /** What a write returns where the dialect returns rows: the whole row from a table, the key from a query (which reads the row back). */
  readonly returning: string
  /** Whether a write hands back rows (`Dialect.returning`): the row from a table, the key from a query. */
  readonly returnsRows: boolean
  /**
   * Whether the operations read a written row back by key, in the write's transaction: over a
   * query (a write returns the key only), or where the dialect's writes return nothing.
   */
  readonly readsBack: boolean
  /** `FROM` and what follows it: the table and its joins. */
  readonly from: string
  /** The tables related to this one, for `<relation>.<field>` criteria. */
  readonly relations: SqlRelations
  /** The expressions whose values the select list and the joins bind, in text order. */
  readonly #bound: readonly SqlExpression[]
  readonly #joins: SqlExpression | undefined
  /** What an INSERT or UPDATE ends with to return `returning` (` RETURNING ...`), or nothing. */
  readonly #returningClause: string
  /** What a one-row write and a write of many rows ask the driver for: their rows, or the count where they return none. */
  readonly #writeOne: Statement['returns']
  readonly #writeMany: Statement['returns']
  /** INSERT texts by the columns they set (names joined with newlines), with their count: only sets of the table's own columns, a few per table. */
  readonly #inserts = new Map<string, { sql: string, count: number }>()
  /** SELECT texts of single-row reads by plain equality, keyed by the criteria's column names in order. */
  readonly #pointReads = new Map<string, string>()
  /** UPDATE texts of single-row writes by plain equality, keyed by the columns set and the criteria's names. */
  readonly #pointWrites = new Map<string, string>()
  /** The key's columns quoted, joined by commas: what a query's write returns, and what `Dialect.firstRow` picks a row by. */
  readonly #quotedKey: string
  /** What `listStatement` asks of the builder to write a list: its head, its fields and its joins' values. */
  readonly #lists: ListWriters = {
    head: (params, options, fields, keys, rank) => this.#head(params, options, fields, keys, rank),
    field: (name, params, options) => this.#field(name, params, options),
    joins: (params, options) => { this.#joins?.render(params, options) }
  }

  /** `dialect`: the database's dialect object, or the name of one the library ships. */
  constructor (dialect: Dialect | keyof typeof BUILT_IN, options: TableDefinition) {
    this.dialect = typeof dialect === 'string' ? BUILT_IN[dialect] : dialect
    const quote = (name: string): string => this.dialect.quote(name)
    const declared = options.computed ?? {}
    const computedNames = Object.keys(declared)
    this.key = tableKey(options.table, options.idColumn)
    for (const name of [options.table, ...options.columns, ...this.key.columns, ...computedNames]) {
      if (!IDENTIFIER.test(name)) throw new ConfigurationError('FV_ERR_SQL_NAME', `Not a plain SQL identifier: ${JSON.stringify(name)}`)
    }
    this.table = quote(options.table)
    this.columns = new Set(options.columns)
    const computed = new Map<string, SqlExpression>()
    for (const name of computedNames) {
      if (this.columns.has(name)) {
        throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: "${name}" is both a column and a computed field; name the computed field otherwise`)
      }
      computed.set(name, expressionOf(declared[name], `${this.table}: computed.${name}`))
    }
    this.computed = computed
    this.fieldNames = [...this.columns, ...computed.keys()]
    const given = options.joins === undefined ? [] : Array.isArray(options.joins) ? options.joins : [options.joins]
    const joins = given.map((join, i) => expressionOf(join, `${this.table}: joins[${i}]`))
    this.#joins = joins.length === 0 ? undefined : new SqlExpression(joins.map((j) => j.text).join(' '), joins.flatMap((j) => j.values))
    this.isQuery = computed.size > 0 || this.#joins !== undefined
    this.touchColumn = options.touchColumn
    this.versionColumn = options.versionColumn
    if (this.versionColumn !== undefined && !this.columns.has(this.versionColumn)) throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: versionColumn "${this.versionColumn}" is not one of its columns (${options.columns.join(', ')})`)
    this.scopeFields = options.scopeFields ?? []
    this.optionKeys = new Set(options.optionKeys ?? [])
    const read = [...computed.values(), ...joins]
    for (const name of read.flatMap((expression) => expression.optionNames)) {
      if (this.fieldNames.includes(name)) throw new ConfigurationError('FV_ERR_SQL_OPTION', `${this.table}: option("${name}") has the name of a field; an option is never a criterion, so name it otherwise`)
      // An option an expression binds is read from the options, never taken for a criterion.
      this.optionKeys.add(name)
    }
    this.#bound = read
    const columnList = options.columns.map((c) => this.isQuery ? `${this.table}.${quote(c)} AS ${quote(c)}` : quote(c))
    this.selectList = [...columnList, ...[...computed].map(([name, expression]) => `(${expression.text}) AS ${quote(name)}`)].join(', ')
    this.#quotedKey = this.key.columns.map(quote).join(', ')
    this.returning = this.isQuery ? this.#quotedKey : this.selectList
    const clause = this.dialect.returning(this.returning)
    this.returnsRows = clause !== undefined
    this.readsBack = this.isQuery || !this.returnsRows
    this.#returningClause = clause ?? ''
    this.#writeOne = this.returnsRows ? 'row' : 'count'
    this.#writeMany = this.returnsRows ? 'rows' : 'count'
    this.from = this.#joins === undefined ? this.table : `${this.table} ${this.#joins.text}`
    this.relations = new SqlRelations(this.dialect, this.table, options.relations ?? {}, this.fieldNames)
  }

  /** Adds the values the select list and the joins bind, in text order. */
  #headValues (params: unknown[], options: RepositoryOptions | undefined): void {
    for (const expression of this.#bound) expression.render(params, options)
  }

  /** `SELECT <list><rank> FROM <table and joins>`, values added to `params`: all fields, or `fields` (`projectionList`). */
  #head (params: unknown[], options?: RepositoryOptions, fields?: readonly string[], keys: OrderKey[] = [], rank = ''): string {
    if (fields === undefined) this.#headValues(params, options)
    const list = fields === undefined ? this.selectList : projectionList(this, fields, keys, params, options)
    if (fields !== undefined) this.#joins?.render(params, options)
    return `SELECT ${list}${rank} FROM ${this.from}`
  }

  /**
   * A field as a read writes it, its values added to `params`: a column (qualified by the table in
   * a query, so that no join makes it ambiguous), or a computed field's expression, written out
   * again with its values wherever it is used (PostgreSQL takes no select alias in WHERE).
   */
  #field (name: string, params: unknown[], options: RepositoryOptions | undefined, qualified = this.isQuery): string {
    if (this.columns.has(name)) return qualified ? `${this.table}.${this.dialect.quote(name)}` : this.dialect.quote(name)
    const expression = this.computed.get(name)
    if (expression === undefined) throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: no column ${JSON.stringify(name)}`)
    return `(${expression.render(params, options)})`
  }

  /** A column a write sets: a column of the table, never a computed field. */
  #writable (name: string): string {
    if (this.computed.has(name)) {
      const columns = [...this.columns].join(', ')
      throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: "${name}" is a computed field, read-only; a write sets the table's columns (${columns})`)
    }
    if (!this.columns.has(name)) throw new ConfigurationError('FV_ERR_SQL_NAME', `${this.table}: no column ${JSON.stringify(name)}`)
    return this.dialect.quote(name)
  }

  /** The statement as the driver takes it: placeholders and values in the dialect's form. */
  private finish (sql: string, params: unknown[], returns: Statement['returns']): Statement {
    return { sql: this.dialect.placeholders(sql), params: params.map(this.dialect.value), returns }
  }

  /** `WHERE` of criteria, search and positional fragments; `options` bind what computed fields read. */
  where (criteria: Criteria, params: unknown[], search?: ListQuery['search'], args: unknown[] = [], options?: RepositoryOptions): string {
    const parts: string[] = []
    let bind: Bind | undefined
    for (const [key, value] of Object.entries(criteria)) {
      if (this.optionKeys.has(key)) continue
      const [field, op] = splitCriterion(key)
      bind ??= (v) => { params.push(v); return '?' }
      // The field is written where the text uses it, each time, so that its values stay in text order;
      // inside a relation's EXISTS always by its table, which the related table's columns would shadow.
      parts.push(isRelationPath(field)
        ? this.relations.condition(field, op, value, (own) => this.#field(own, params, options, true), bind)
        : condition(this.dialect, () => this.#field(field, params, options), op, value, bind))
    }
    if (search !== undefined) {
      // A substring search, not LIKE '%term%': LIKE backtracks, and a term of a hundred characters
      // against long repetitive text cost over a second per request; instr (SQLite) and strpos
      // (PostgreSQL) search the same substring in a small fraction of that (docs/filters.md, "Bounds").
      const term = search.term.toLowerCase()
      const bindTerm = (): string => { params.push(term); return '?' }
      const contains = (field: string): string => this.dialect.contains(() => `lower(${this.#field(field, params, options)})`, bindTerm)
      parts.push(`(${search.fields.map(contains).join(' OR ')})`)
    }
    for (const arg of args) {
      const fragment = arg as SqlFragment
      if (typeof fragment?.sql !== 'string' || !Array.isArray(fragment.params)) throw new ConfigurationError('FV_ERR_SQL_FRAGMENT', 'SQL repositories take positional criteria as { sql, params } fragments')
      parts.push(`(${fragment.sql})`)
      params.push(...fragment.params)
    }
    return parts.length === 0 ? '' : ` WHERE ${parts.join(' AND ')}`
  }

  /** The rows the criteria and the query select, keys first for some windows (page-query.ts); `options` bind what the query's expressions read. */
  select (criteria: Criteria, query: ListQuery, options?: RepositoryOptions): Statement {
    const params: unknown[] = []
    return this.finish(listStatement(this, this.#lists, criteria, query, params, options), params, 'rows')
  }

  /**
   * Whether a criterion is an equality on a column with a value whose text is a placeholder: what
   * the cached texts of one-row reads and writes take. A null (an object to typeof), a Date or a
   * list, an operator or an option is written by the general builder.
   */
  #plainEquality (key: string, value: unknown): boolean {
    return typeof value !== 'object' && this.columns.has(key) && !key.includes('__') && !this.optionKeys.has(key)
  }

  /**
   * The statement reading the first row the criteria select. Criteria of plain equalities on columns with
   * non-null values (a detail route's id, a tenant) have a text that depends only on their column names,
   * so it is built once per set of names: a detail read then costs a map lookup, not a SQL build.
   */
  selectOne (criteria: Criteria, options?: RepositoryOptions): Statement {
    let shape = ''
    const params: unknown[] = []
    if (this.isQuery) {
      this.#headValues(params, options)
      for (let i = 0; i < params.length; i++) params[i] = this.dialect.value(params[i])
    }
    for (const key in criteria) {
      const value = criteria[key]
      if (!this.#plainEquality(key, value)) return { ...this.select(criteria, { orderBy: [], limit: 1 }, options), returns: 'row' }
      shape += `${key},`
      params.push(this.dialect.value(value))
    }
    let sql = this.#pointReads.get(shape)
    if (sql === undefined) {
      // With the primary key (every column of it) among the equalities at most one row matches: no ORDER BY or LIMIT to plan.
      sql = this.key.namedBy(criteria)
        ? this.finish(`${this.#head([], options)}${this.where(criteria, [], undefined, [], options)}`, [], 'rows').sql
        : this.select(criteria, { orderBy: [], limit: 1 }, options).sql
      // Shapes are subsets of the declared columns; keep the cache bounded all the same.
      if (this.#pointReads.size < 256) this.#pointReads.set(shape, sql)
    }
    return { sql, params, returns: 'row' }
  }

  /** The first row the criteria select, locked as the dialect locks (PostgreSQL the base row; SQLite's write transaction holds the file). */
  lockOne (criteria: Criteria, options?: RepositoryOptions): Statement {
    const statement = this.selectOne(criteria, options)
    return { ...statement, sql: statement.sql + this.dialect.lockRows(this.table) }
  }

  /** Every row the criteria select, as reads see them, in primary-key order (the order every writer locks in), locked. */
  lockAll (criteria: Criteria, args: unknown[], options?: RepositoryOptions): Statement {
    const statement = this.select(criteria, { orderBy: [], args }, options)
    return { ...statement, sql: statement.sql + this.dialect.lockRows(this.table) }
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Statement {
    const params: unknown[] = []
    if (this.#joins !== undefined) this.#joins.render(params, options)
    const where = this.where(criteria, params, query.search, query.args, options)
    return this.finish(`SELECT COUNT(*) AS n FROM ${this.from}${where}`, params, 'rows')
  }

  /** One field's non-null values among the rows the criteria select, once each, in its order: `distinct`'s statement. */
  distinct (name: string, criteria: Criteria, query: DistinctQuery, options?: RepositoryOptions): Statement {
    const params: unknown[] = []
    // Selected and ordered under its own name: PostgreSQL orders a DISTINCT only by what it selects.
    const head = `SELECT DISTINCT ${this.#field(name, params, options)} AS ${this.dialect.quote(name)} FROM ${this.from}`
    this.#joins?.render(params, options)
    const where = this.where(criteria, params, query.search, query.args, options)
    const limit = query.limit === undefined ? '' : ` LIMIT ${windowSize(query.limit)}`
    const order = this.dialect.order(() => this.dialect.quote(name), query.descending === true)
    return this.finish(`${head}${where === '' ? ' WHERE' : `${where} AND`} ${this.#field(name, params, options)} IS NOT NULL ORDER BY ${order}${limit}`, params, 'rows')
  }

  private touched (values: Record<string, unknown>): Record<string, unknown> {
    return this.touchColumn === undefined ? values : { ...values, [this.touchColumn]: new Date().toISOString() }
  }

  /** Inserts a row (version 1 with a version column); returns it from a table, its key from a query, nothing where the dialect cannot. */
  insert (values: Record<string, unknown>): Statement {
    const touched = this.touched(values)
    const data = this.versionColumn === undefined ? touched : { ...touched, [this.versionColumn]: 1 }
    const names = Object.keys(data)
    const key = names.join('\n')
    // A bulk create inserts thousands of rows with the same columns: their text is built once. No
    // column name holds a newline (they are identifiers), so an equal key of as many names is the same columns.
    let insert = this.#inserts.get(key)
    if (insert === undefined || insert.count !== names.length) {
      const cols = names.map((c) => this.#writable(c))
      insert = { sql: this.dialect.placeholders(`INSERT INTO ${this.table} (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})${this.#returningClause}`), count: names.length }
      this.#inserts.set(key, insert)
    }
    return { sql: insert.sql, params: Object.values(data).map(this.dialect.value), returns: this.#writeOne }
  }

  /** Updates the rows the criteria select; `first` limits it to one, by primary key. Returns them from a table, their keys from a query, nothing where the dialect cannot. */
  update (criteria: Criteria, values: Record<string, unknown>, first: boolean, args: unknown[] = []): Statement {
    const data = this.touched(values)
    const cached = first && args.length === 0 ? this.#pointWrite(criteria, data) : undefined
    return cached ?? this.#update(criteria, data, first, args)
  }

  #update (criteria: Criteria, data: Record<string, unknown>, first: boolean, args: unknown[]): Statement {
    const params: unknown[] = []
    const version = this.versionColumn
    // A member present as `undefined` (removed by a merge patch or JSON Patch) is unset: NULL.
    const sets = Object.keys(data).filter((c) => c !== version).map((c) => {
      const col = this.#writable(c)
      params.push(data[c] === undefined ? null : data[c])
      return `${col} = ?`
    })
    // The database adds one to the version in the statement itself: no value read before can be stale.
    if (version !== undefined) sets.push(`${this.dialect.quote(version)} = ${this.dialect.quote(version)} + 1`)
    const target = this.target(criteria, params, first, args)
    return this.finish(`UPDATE ${this.table} SET ${sets.join(', ')}${target}${this.#returningClause}`, params, first ? this.#writeOne : this.#writeMany)
  }

  /**
   * A one-row write by plain equalities on columns (a detail route's id, a compared version, a
   * tenant): its text depends only on the names of the columns set and of the criteria, so it is
   * built once per set of names, as `selectOne`'s is. `undefined` for any other write, which is
   * built (and its names checked) each time. Names are identifiers, so a comma cannot join two into one.
   */
  #pointWrite (criteria: Criteria, data: Record<string, unknown>): Statement | undefined {
    let shape = ''
    const params: unknown[] = []
    for (const key in data) {
      if (!this.columns.has(key)) return undefined
      shape += `${key},`
      const value = data[key]
      if (key !== this.versionColumn) params.push(this.dialect.value(value === undefined ? null : value))
    }
    shape += '|'
    for (const key in criteria) {
      const value = criteria[key]
      if (!this.#plainEquality(key, value)) return undefined
      shape += `${key},`
      params.push(this.dialect.value(value))
    }
    let sql = this.#pointWrites.get(shape)
    if (sql === undefined) {
      sql = this.#update(criteria, data, true, []).sql
      // Shapes are subsets of the declared columns; keep the cache bounded all the same.
      if (this.#pointWrites.size < 256) this.#pointWrites.set(shape, sql)
    }
    return { sql, params, returns: this.#writeOne }
  }

  delete (criteria: Criteria, first: boolean, args: unknown[] = []): Statement {
    const params: unknown[] = []
    return this.finish(`DELETE FROM ${this.table}${this.target(criteria, params, first, args)}`, params, 'count')
  }

  /**
   * The `WHERE` of a write; `first` limits it to the first row by primary key. With the primary key (each of
   * its columns) among the equalities at most one row matches, so they are the whole condition; otherwise
   * the dialect picks the row (`Dialect.firstRow`). A query's writes name their rows by key, read first.
   */
  private target (criteria: Criteria, params: unknown[], first: boolean, args: unknown[]): string {
    const where = this.where(criteria, params, undefined, args)
    if (!first || this.key.namedBy(criteria)) return where
    return this.dialect.firstRow(this.table, this.#quotedKey, where)
  }

  /** The row a bulk PUT item replaces: its primary key, and its scope columns when declared. */
  itemCriteria (item: Record<string, unknown>): Criteria {
    const criteria = this.key.of(item)
    for (const field of this.scopeFields) if (item[field] !== undefined) criteria[field] = item[field]
    return criteria
  }

  /** What names the rows of `keys` (rows, or their keys) in a statement, as reads name a column. */
  keysIn (keys: Array<Record<string, unknown>>): KeyCondition {
    return this.key.among(keys, (name) => this.#field(name, [], undefined))
  }
}
