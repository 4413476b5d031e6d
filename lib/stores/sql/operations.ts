// The CRUD and bulk operations of the SQL repositories, above the builder and below the runners: generators of statements, written once for every dialect and driver.
// What runs in which transaction; where the dialect's writes return nothing, or the repository is
// a query, a written row is read back by key in the write's transaction (`SqlBuilder.readsBack`).
import { ConfigurationError } from '../../core/configuration-error.js'
import { Conflict, NotFound } from '../../http/errors.js'
import { preconditionOf, type Criteria, type DistinctQuery, type ListQuery, type Precondition, type RepositoryOptions } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { Operation, StatementResult } from './statement.js'
import { describeKey, type KeyCondition } from './table-key.js'

type Row = Record<string, unknown>

/**
 * How many keys one statement names (`WHERE "id" IN (...)`, or an OR of each key's equalities): well
 * under both databases' limits on parameters, a key of a few columns binding each.
 */
const KEYS_PER_STATEMENT = 500

/** The key of a bulk write's options that is never a criterion (docs/repositories.md, "Per-row checks"). */
const PRECONDITION = 'precondition'

/**
 * Orders primary-key values: numbers by value, anything else by its text; a key of several
 * columns column by column. Any order every request agrees on prevents the deadlock; it need
 * not be the database's.
 */
function compareKeys (b: SqlBuilder, x: Row, y: Row): number {
  for (const column of b.key.columns) {
    const v = x[column]
    const w = y[column]
    const c = typeof v === 'number' && typeof w === 'number' ? v - w : String(v).localeCompare(String(w))
    if (c !== 0) return c
  }
  return 0
}

const isUnique = (error: unknown): boolean => error instanceof Conflict && error.detail.startsWith('A row with the same unique value')

/** What names rows by their keys (or the rows themselves), a statement's worth at a time. */
function * byKeys (b: SqlBuilder, keys: Row[]): Generator<KeyCondition> {
  for (let i = 0; i < keys.length; i += KEYS_PER_STATEMENT) yield b.keysIn(keys.slice(i, i + KEYS_PER_STATEMENT))
}

/** The criteria of a bulk write's keyword object: without its options (`optionKeys`, the names `option()` binds, `precondition`). */
function optionsFree (b: SqlBuilder, kwargs: Row): Criteria {
  const criteria: Criteria = {}
  for (const [key, value] of Object.entries(kwargs)) {
    if (!b.optionKeys.has(key) && key !== PRECONDITION) criteria[key] = value
  }
  return criteria
}

/**
 * Runs an operation in a transaction (a savepoint inside one): committed when it returns, rolled
 * back when it throws. `read`: a read-only transaction whose statements all see one snapshot.
 */
export function * atomically<R> (operation: Operation<R>, read = false): Operation<R> {
  yield read ? 'read' : 'begin'
  try {
    const result = yield * operation
    yield 'commit'
    return result
  } catch (error) {
    yield 'rollback'
    throw error
  }
}

/** `atomically` of the operation a generator function makes. */
function transaction<R> (work: () => Operation<R>): Operation<R> {
  return atomically(work())
}

/**
 * A row a query's write read back: it must be among the query's rows. An inner join to a row the
 * written one does not have hides it; refused (and the write rolled back) rather than answered as nothing.
 */
function visible (b: SqlBuilder, row: Row | undefined, key: Row): Row {
  if (row !== undefined) return row
  throw new ConfigurationError('FV_ERR_SQL_OPTION', `${b.table}: the row written with ${describeKey(b.key.columns, key)} ` +
    'is not among the rows its reads see: ' +
    'a join of the repository drops it (an inner join to a row it does not have); join optional rows with LEFT JOIN')
}

/**
 * The key of the row an INSERT wrote, as criteria: the one it returned (a query's), else the one
 * its values set, else the one the database generated (the runner's `insertId`, where the dialect
 * returns nothing; a table has one such column).
 */
function insertedKey (b: SqlBuilder, values: Row, result: StatementResult): Row {
  if (result.rows.length > 0) return b.key.of(result.rows[0])
  const key: Row = {}
  for (const column of b.key.columns) key[column] = values[column] ?? result.insertId
  return key
}

/** Rows read back by key after a write, as reads see them. */
function * readBack (b: SqlBuilder, keys: Row[], options: RepositoryOptions | undefined): Operation<Row[]> {
  const rows: Row[] = []
  for (const { criteria, args } of byKeys(b, keys)) {
    rows.push(...(yield b.select(criteria, { orderBy: [], args }, options)).rows)
  }
  return rows
}

/** The CRUD and bulk operations, written once as statement generators. */
export const operations = {
  * create (b: SqlBuilder, values: Row, options?: RepositoryOptions): Operation<Row | null> {
    try {
      if (!b.readsBack) return (yield b.insert(values)).rows[0]
      // The row is read back (through the query, if it is one), in the transaction that wrote it.
      return yield * transaction(function * () {
        const key = insertedKey(b, values, yield b.insert(values))
        return visible(b, (yield b.selectOne(key, options)).rows[0], key)
      })
    } catch (error) {
      if (isUnique(error)) return null
      throw error
    }
  },
  * get (b: SqlBuilder, criteria: Criteria, options?: RepositoryOptions): Operation<Row | null> {
    return (yield b.selectOne(criteria, options)).rows[0] ?? null
  },
  * list (b: SqlBuilder, criteria: Criteria, query: ListQuery, options?: RepositoryOptions): Operation<Row[]> {
    return (yield b.select(criteria, query, options)).rows
  },
  * count (b: SqlBuilder, criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Operation<number> {
    return Number((yield b.count(criteria, query, options)).rows[0].n)
  },
  /** One field's distinct non-null values, each decoded as the field is in every row (selected under the field's name). */
  * distinct (b: SqlBuilder, field: string, criteria: Criteria, query: DistinctQuery,
    options?: RepositoryOptions): Operation<unknown[]> {
    // Refused with the names it may take, before any SQL is written: the field is the caller's text.
    if (!b.fieldNames.includes(field)) {
      throw new ConfigurationError('FV_ERR_SQL_NAME', `${b.table}: no column ${JSON.stringify(field)} to read distinct values of (its fields: ${b.fieldNames.join(', ')})`)
    }
    return (yield b.distinct(field, criteria, query, options)).rows.map((row) => row[field])
  },
  /** A page and the total it belongs to, read in one snapshot so that they agree. */
  * listAndCount (b: SqlBuilder, criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>,
    options?: RepositoryOptions): Operation<{ items: Row[], total: number }> {
    return yield * atomically((function * () {
      const items = (yield b.select(criteria, query, options)).rows
      const total = Number((yield b.count(criteria, countQuery, options)).rows[0].n)
      return { items, total }
    })(), true)
  },
  * update (b: SqlBuilder, criteria: Criteria, values: Row, precondition?: Precondition,
    options?: RepositoryOptions): Operation<Row | null> {
    if (precondition !== undefined || b.readsBack) {
      return yield * conditionally(b, criteria, precondition, options, function * (current) {
        if (Object.keys(values).length === 0) return current
        // The row is locked by this transaction: the update finds it.
        if (!b.readsBack) return (yield b.update(criteria, values, true)).rows[0]
        const key = b.key.of(current)
        yield b.update(key, values, true)
        return visible(b, (yield b.selectOne(key, options)).rows[0], key)
      })
    }
    // Nothing to change: the row as it is, not even its touch column stamped.
    if (Object.keys(values).length === 0) return yield * operations.get(b, criteria)
    return (yield b.update(criteria, values, true)).rows[0] ?? null
  },
  * delete (
    b: SqlBuilder,
    criteria: Criteria,
    precondition?: Precondition,
    options?: RepositoryOptions
  ): Operation<boolean> {
    if (precondition !== undefined || b.isQuery) {
      const deleted = yield * conditionally(b, criteria, precondition, options, function * (current) {
        return (yield b.delete(b.key.of(current), true)).changes > 0
      })
      return deleted ?? false
    }
    return (yield b.delete(criteria, true)).changes > 0
  },
  * createMany (b: SqlBuilder, items: Row[], options?: RepositoryOptions): Operation<Row[]> {
    return yield * transaction(function * () {
      const rows: Row[] = []
      const keys: Row[] = []
      for (const item of items) {
        const result = yield b.insert(item)
        if (b.readsBack) keys.push(insertedKey(b, item, result))
        else rows.push(result.rows[0])
      }
      if (!b.readsBack) return rows
      const readRows = yield * readBack(b, keys, options)
      const byKey = new Map(readRows.map((row) => [b.key.value(row), row]))
      return keys.map((key) => visible(b, byKey.get(b.key.value(key)), key))
    })
  },
  * updateMany (b: SqlBuilder, values: Row, kwargs: Row, args: unknown[]): Operation<Row[]> {
    const criteria = optionsFree(b, kwargs)
    const check = preconditionOf(kwargs)
    // One statement: the database applies it to every selected row or to none.
    if (!b.readsBack && check === undefined) return (yield b.update(criteria, values, false, args)).rows
    // Each row judged before any is written, criteria that name what only a query has, or writes
    // that return nothing: the rows are selected (and locked) as reads see them, written by key,
    // and read back where the write did not return them.
    return yield * transaction(function * () {
      const keys = yield * lockChecked(b, criteria, args, kwargs, check)
      const written: Row[] = []
      for (const { criteria: selected, args: named } of byKeys(b, keys)) {
        written.push(...(yield b.update(selected, values, false, named)).rows)
      }
      return b.readsBack ? yield * readBack(b, keys, kwargs) : written
    })
  },
  * bulkUpdate (
    b: SqlBuilder,
    items: Row[],
    precondition?: Precondition,
    options?: RepositoryOptions
  ): Operation<void> {
    // Rows are locked in primary-key order, whatever order the client sent, so two bulk
    // updates over the same rows wait for each other instead of deadlocking.
    const ordered = [...items.entries()].sort(([, x], [, y]) => compareKeys(b, x, y))
    yield * transaction(function * () {
      for (const [index, item] of ordered) {
        const values = { ...item }
        for (const column of b.key.columns) delete values[column]
        const missing = (): NotFound => new NotFound(`Item ${index}: no row has ${describeKey(b.key.columns, item)}.`)
        if (precondition !== undefined) {
          // The row as reads see it, locked, judged before it is written.
          const current = (yield b.lockOne(b.itemCriteria(item), options)).rows[0]
          if (current === undefined) throw missing()
          precondition(current)
        }
        const result = yield b.update(b.itemCriteria(item), values, true)
        // A write that returns nothing says how many rows it matched.
        if ((b.returnsRows ? result.rows.length : result.changes) === 0) throw missing()
      }
    })
  },
  * deleteMany (b: SqlBuilder, kwargs: Row, args: unknown[]): Operation<void> {
    const criteria = optionsFree(b, kwargs)
    const check = preconditionOf(kwargs)
    if (!b.isQuery && check === undefined) {
      yield b.delete(criteria, false, args)
      return
    }
    yield * transaction(function * () {
      const keys = yield * lockChecked(b, criteria, args, kwargs, check)
      for (const selected of byKeys(b, keys)) yield b.delete(selected.criteria, false, selected.args)
    })
  }
}

/** The rows the criteria select (what names them: their keys), each locked and judged by the check, if any, before anything is written. */
function * lockChecked (b: SqlBuilder, criteria: Criteria, args: unknown[], options: RepositoryOptions,
  check: Precondition | undefined): Operation<Row[]> {
  const rows = (yield b.lockAll(criteria, args, options)).rows
  if (check !== undefined) for (const row of rows) check(row)
  return rows
}

/**
 * A conditional write: the current row is read (as reads see it) and locked, the precondition
 * judges it, and the write runs, all in one transaction, so no other write can come between the
 * check and the write (RFC 9110 §13.1.1, the lost update). `null` when no row is selected.
 */
function * conditionally<R> (b: SqlBuilder, criteria: Criteria, precondition: Precondition | undefined,
  options: RepositoryOptions | undefined, write: (current: Row) => Operation<R>): Operation<R | null> {
  return yield * transaction(function * () {
    const current = (yield b.lockOne(criteria, options)).rows[0]
    if (current === undefined) return null
    precondition?.(current)
    return yield * write(current)
  })
}
