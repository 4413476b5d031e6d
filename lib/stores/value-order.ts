// How the memory store compares, matches and orders values as a SQL database does (stores layer): kinds never mix, nulls sort last, an operator's test, a field's distinct values in that order, and the first rows of each group.
import { windowSize } from './sql/conditions.js'
import type { DistinctQuery, Operator, OrderKey, PerGroup } from './repository.js'

/** Whether a stored value is null: a field a row lacks reads as null, as a SQL column without a value does. */
export const isNull = (v: unknown): boolean => v === null || v === undefined

/** A date, or an ISO string compared with one, as milliseconds; anything else as it is. */
function comparable (value: unknown, other: unknown): unknown {
  if (value instanceof Date) return other instanceof Date || typeof other === 'string' ? value.getTime() : value
  if (other instanceof Date && typeof value === 'string') return Date.parse(value)
  return value
}

/**
 * Compares two non-null values of one kind: numbers with numbers, strings with
 * strings, dates with dates or ISO strings. Values of different kinds are not
 * comparable (`NaN`): they are never equal, less or greater, as in a typed database
 * where `id = 'abc'` matches no integer key.
 */
export function compareValues (a: unknown, b: unknown): number {
  const x = comparable(a, b)
  const y = comparable(b, a)
  // Objects (arrays included) are never ordered or equal by value, and kinds never mix.
  if (typeof x !== typeof y || typeof x === 'object') return Number.NaN
  return (x as number) < (y as number) ? -1 : (x as number) > (y as number) ? 1 : x === y ? 0 : Number.NaN
}

/** Sort order like SQL: nulls after every value ascending, before them descending; other kinds by type name. */
export function sortValues (a: unknown, b: unknown): number {
  if (isNull(a) || isNull(b)) return isNull(a) === isNull(b) ? 0 : isNull(a) ? 1 : -1
  const c = compareValues(a, b)
  if (!Number.isNaN(c)) return c
  return typeof a < typeof b ? -1 : 1
}

/** Compares two rows' values of the sort keys (`a[i]`, `b[i]` of `orderBy[i]`), each key in its direction. */
export function compareBy (orderBy: OrderKey[], a: unknown[], b: unknown[]): number {
  for (let i = 0; i < orderBy.length; i++) {
    const c = sortValues(a[i], b[i])
    if (c !== 0) return orderBy[i].descending ? -c : c
  }
  return 0
}

/**
 * The distinct non-null values among `values`, in `sortValues` order (`descending`: reversed), at
 * most `limit` of them: what `SELECT DISTINCT ... WHERE ... IS NOT NULL ORDER BY ... LIMIT` answers.
 * Equal means `compareValues` says 0, so objects and arrays are never collapsed, as no criterion
 * finds them equal either.
 */
export function distinctValues (values: unknown[], { descending = false, limit }: DistinctQuery = {}): unknown[] {
  // Checked as the SQL stores check it, before any work: the same refusal from every store.
  const bound = limit === undefined ? undefined : windowSize(limit)
  const sorted = values.filter((value) => !isNull(value)).sort(sortValues)
  const distinct = sorted.filter((value, i) => i === 0 || compareValues(sorted[i - 1], value) !== 0)
  if (descending) distinct.reverse()
  return bound === undefined ? distinct : distinct.slice(0, bound)
}

const escapeRegExp = (ch: string): string => ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** SQL LIKE as a regular expression: `%` any run, `_` one character, `\` escaping the next one. */
function likePattern (pattern: string, flags: string): RegExp {
  let source = ''
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]
    if (ch === '\\' && i + 1 < pattern.length) source += escapeRegExp(pattern[++i])
    else source += ch === '%' ? '.*' : ch === '_' ? '.' : escapeRegExp(ch)
  }
  return new RegExp(`^${source}$`, flags + 's')
}

/** Whether a row's `field` satisfies `op` with `value`, as the SQL stores' WHERE does. */
export function matches (row: Record<string, unknown>, field: string, op: Operator, value: unknown): boolean {
  const actual = row[field]
  // As in SQL, a null only matches `is_null` (and equality with a null criterion).
  if (isNull(actual)) return op === 'is_null' ? value === true : op === 'eq' && isNull(value)
  switch (op) {
    case 'eq': return compareValues(actual, value) === 0
    case 'ne': return !isNull(value) && compareValues(actual, value) !== 0
    case 'lt': return compareValues(actual, value) < 0
    case 'le': return compareValues(actual, value) <= 0
    case 'gt': return compareValues(actual, value) > 0
    case 'ge': return compareValues(actual, value) >= 0
    case 'in': return (value as unknown[]).some((v) => compareValues(actual, v) === 0)
    // As in SQL, NOT IN with a null in the list is never true.
    case 'not_in': return !(value as unknown[]).some((v) => isNull(v) || compareValues(actual, v) === 0)
    case 'is_null': return value === false
    case 'like': return typeof actual === 'string' && likePattern(String(value), '').test(actual)
    case 'ilike': return typeof actual === 'string' && likePattern(String(value), 'i').test(actual)
  }
}

/** The first `limit` rows of each value of `field`, in their order (`ListQuery.perGroup`). */
export function firstOfEachGroup<R extends Record<string, unknown>> (rows: R[], { field, limit }: PerGroup): R[] {
  const taken = new Map<unknown, number>()
  return rows.filter((row) => {
    const n = taken.get(row[field]) ?? 0
    taken.set(row[field], n + 1)
    return n < limit
  })
}
