import { Conflict, NotFound } from '../../http/errors.js'
import type { Criteria, ListQuery, Precondition } from '../repository.js'
import type { SqlBuilder } from './builder.js'
import type { Operation } from './statement.js'

// The CRUD and bulk operations of the SQL repositories, written once as generators of
// statements over a SqlBuilder: what runs in which transaction, on either driver.

/**
 * Orders primary-key values: numbers by value, anything else by its text. Any order every
 * request agrees on prevents the deadlock; it need not be the database's.
 */
function compareKeys (x: unknown, y: unknown): number {
  if (typeof x === 'number' && typeof y === 'number') return x - y
  return String(x).localeCompare(String(y))
}

const isUnique = (error: unknown): boolean => error instanceof Conflict && error.detail.startsWith('A row with the same unique value')

/** The CRUD and bulk operations, written once as statement generators. */
export const operations = {
  * create (b: SqlBuilder, values: Record<string, unknown>): Operation<Record<string, unknown> | null> {
    try {
      return (yield b.insert(values)).rows[0]
    } catch (error) {
      if (isUnique(error)) return null
      throw error
    }
  },
  * get (b: SqlBuilder, criteria: Criteria): Operation<Record<string, unknown> | null> {
    return (yield b.selectOne(criteria)).rows[0] ?? null
  },
  * list (b: SqlBuilder, criteria: Criteria, query: ListQuery): Operation<Array<Record<string, unknown>>> {
    return (yield b.select(criteria, query)).rows
  },
  * count (b: SqlBuilder, criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'>): Operation<number> {
    return Number((yield b.count(criteria, query)).rows[0].n)
  },
  /** A page and the total it belongs to, read in one snapshot so that they agree. */
  * listAndCount (b: SqlBuilder, criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>): Operation<{ items: Array<Record<string, unknown>>, total: number }> {
    yield b.beginRead()
    try {
      const items = (yield b.select(criteria, query)).rows
      const total = Number((yield b.count(criteria, countQuery)).rows[0].n)
      yield 'commit'
      return { items, total }
    } catch (error) {
      yield 'rollback'
      throw error
    }
  },
  * update (b: SqlBuilder, criteria: Criteria, values: Record<string, unknown>, precondition?: Precondition): Operation<Record<string, unknown> | null> {
    if (precondition !== undefined) {
      return yield * conditionally(b, criteria, precondition, function * (current) {
      // The row is locked by this transaction: the update finds it.
        return Object.keys(values).length === 0 ? current : (yield b.update(criteria, values, true)).rows[0] as Record<string, unknown>
      })
    }
    // Nothing to change: the row as it is, not even its touch column stamped.
    if (Object.keys(values).length === 0) return yield * operations.get(b, criteria)
    return (yield b.update(criteria, values, true)).rows[0] ?? null
  },
  * delete (b: SqlBuilder, criteria: Criteria, precondition?: Precondition): Operation<boolean> {
    if (precondition !== undefined) return (yield * conditionally(b, criteria, precondition, function * () { return (yield b.delete(criteria, true)).changes > 0 })) ?? false
    return (yield b.delete(criteria, true)).changes > 0
  },
  * createMany (b: SqlBuilder, items: Array<Record<string, unknown>>): Operation<Array<Record<string, unknown>>> {
    yield 'begin'
    try {
      const rows: Array<Record<string, unknown>> = []
      for (const item of items) rows.push((yield b.insert(item)).rows[0])
      yield 'commit'
      return rows
    } catch (error) {
      yield 'rollback'
      throw error
    }
  },
  * updateMany (b: SqlBuilder, values: Record<string, unknown>, kwargs: Record<string, unknown>, args: unknown[]): Operation<Array<Record<string, unknown>>> {
    // One statement: the database applies it to every selected row or to none.
    return (yield b.update(b.optionsFree(kwargs), values, false, args)).rows
  },
  * bulkUpdate (b: SqlBuilder, items: Array<Record<string, unknown>>): Operation<void> {
    // Rows are locked in primary-key order, whatever order the client sent, so two bulk
    // updates over the same rows wait for each other instead of deadlocking.
    const ordered = [...items.entries()].sort(([, x], [, y]) => compareKeys(x[b.idColumn], y[b.idColumn]))
    yield 'begin'
    try {
      for (const [index, item] of ordered) {
        const { [b.idColumn]: _id, ...values } = item
        const result = yield b.update(b.itemCriteria(item), values, true)
        if (result.rows.length === 0) throw new NotFound(`Item ${index}: no row has ${b.idColumn} ${JSON.stringify(item[b.idColumn])}.`)
      }
      yield 'commit'
    } catch (error) {
      yield 'rollback'
      throw error
    }
  },
  * deleteMany (b: SqlBuilder, kwargs: Record<string, unknown>, args: unknown[]): Operation<void> {
    yield b.delete(b.optionsFree(kwargs), false, args)
  }
}

/**
 * A conditional write: the current row is read and locked, the precondition judges it, and
 * the write runs, all in one transaction, so no other write can come between the check and
 * the write (RFC 9110 §13.1.1, the lost update). `null` when no row is selected.
 */
function * conditionally<R> (b: SqlBuilder, criteria: Criteria, precondition: Precondition, write: (current: Record<string, unknown>) => Operation<R>): Operation<R | null> {
  yield 'begin'
  try {
    const current = (yield b.lockOne(criteria)).rows[0]
    let result: R | null = null
    if (current !== undefined) {
      precondition(current)
      result = yield * write(current)
    }
    yield 'commit'
    return result
  } catch (error) {
    yield 'rollback'
    throw error
  }
}
