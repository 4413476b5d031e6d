// A SQL table's primary key, one column or several (below the builder): which criteria name one row, the order ending with it, rows named by it.
import { ConfigurationError } from '../../core/configuration-error.js'
import type { Criteria, OrderKey } from '../repository.js'
import type { SqlFragment } from './statement.js'

type Row = Record<string, unknown>

/** What names rows in a statement: criteria, and positional fragments (`SqlBuilder.where`'s `args`). */
export interface KeyCondition { criteria: Criteria, args: SqlFragment[] }

/**
 * A table's primary key: one column (`idColumn: 'id'`) or several (`idColumn: ['article_id', 'user_id']`,
 * a link table's). One class each, picked once when the builder is made, so that a key of one column
 * keeps the statements and the cost it had before keys of several existed.
 */
export interface TableKey {
  /** The key's columns, in the order declared. */
  readonly columns: readonly string[]
  /** Whether the criteria name every key column: then at most one row matches, and there is no first row to pick. */
  namedBy (criteria: Criteria): boolean
  /** The ordering with each key column it lacks appended, ascending: a total order, so that pages never overlap. */
  ordering (orderBy: OrderKey[]): OrderKey[]
  /** The criteria naming one row by its key. */
  of (row: Row): Criteria
  /** A row's key as one value, to find it in a `Map`. */
  value (row: Row): unknown
  /** What names the rows of `keys`; `column` writes a key column as the statement names it (qualified in a query). */
  among (keys: Row[], column: (name: string) => string): KeyCondition
}

class ColumnKey implements TableKey {
  readonly columns: readonly string[]
  readonly #column: string

  constructor (column: string) {
    this.columns = [column]
    this.#column = column
  }

  namedBy (criteria: Criteria): boolean {
    return this.#column in criteria
  }

  ordering (orderBy: OrderKey[]): OrderKey[] {
    return orderBy.some((k) => k.field === this.#column)
      ? orderBy
      : [...orderBy, { field: this.#column, descending: false }]
  }

  of (row: Row): Criteria {
    return { [this.#column]: row[this.#column] }
  }

  value (row: Row): unknown {
    return row[this.#column]
  }

  among (keys: Row[]): KeyCondition {
    return { criteria: { [`${this.#column}__in`]: keys.map((key) => key[this.#column]) }, args: [] }
  }
}

class CompositeKey implements TableKey {
  constructor (readonly columns: readonly string[]) {}

  namedBy (criteria: Criteria): boolean {
    return this.columns.every((column) => column in criteria)
  }

  ordering (orderBy: OrderKey[]): OrderKey[] {
    const missing = this.columns.filter((column) => !orderBy.some((k) => k.field === column))
    return [...orderBy, ...missing.map((field) => ({ field, descending: false }))]
  }

  of (row: Row): Criteria {
    const key: Criteria = {}
    for (const column of this.columns) key[column] = row[column]
    return key
  }

  value (row: Row): unknown {
    return JSON.stringify(this.columns.map((column) => row[column]))
  }

  among (keys: Row[], column: (name: string) => string): KeyCondition {
    // No criterion says "one of these tuples", and a row value's IN is not SQL every database takes:
    // each key is an AND of equalities, and the keys are joined by OR.
    const one = `(${this.columns.map((name) => `${column(name)} = ?`).join(' AND ')})`
    const params = keys.flatMap((key) => this.columns.map((name) => key[name]))
    return { criteria: {}, args: [{ sql: keys.map(() => one).join(' OR '), params }] }
  }
}

/** The key `idColumn` declares (default `id`); a list of no column is refused. */
export function tableKey (table: string, idColumn: string | readonly string[] = 'id'): TableKey {
  if (typeof idColumn === 'string') return new ColumnKey(idColumn)
  if (idColumn.length === 0) throw new ConfigurationError('FV_ERR_SQL_NAME', `${JSON.stringify(table)}: idColumn is an empty list; name the key's column, or its columns`)
  return idColumn.length === 1 ? new ColumnKey(idColumn[0]) : new CompositeKey([...idColumn])
}

/** A key as messages say it: `id 5`, `article_id 1, user_id 2`. */
export function describeKey (columns: readonly string[], row: Row): string {
  return columns.map((column) => `${column} ${JSON.stringify(row[column])}`).join(', ')
}
