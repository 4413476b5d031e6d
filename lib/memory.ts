import { OPERATORS, type Criteria, type ListQuery, type Operator, type OrderKey, type Repository, type RepositoryOptions } from './repository.js'

type Row = Record<string, unknown>

/** Options of a `MemoryRepository`. */
export interface MemoryRepositoryOptions<T> {
  /** The primary key field (default `id`); integer keys are assigned when a created row has none. */
  idField?: string
  /** Fields whose values must be unique: a clash makes `create` return `null` and `update` throw. */
  unique?: string[]
  /** Rows to start with. */
  rows?: T[]
}

/** Thrown by `MemoryRepository.update` when the new values clash with a unique field. */
export class UniqueViolation extends Error {
  override name = 'UniqueViolation'
}

const OPERATOR_SET = new Set<string>(OPERATORS)

/** `price__gt` -> `['price', 'gt']`; `name` -> `['name', 'eq']`. */
export function splitCriterion (key: string): [string, Operator] {
  const at = key.lastIndexOf('__')
  if (at > 0 && OPERATOR_SET.has(key.slice(at + 2))) return [key.slice(0, at), key.slice(at + 2) as Operator]
  return [key, 'eq']
}

function likePattern (pattern: string, flags: string): RegExp {
  let source = ''
  for (const ch of pattern) source += ch === '%' ? '.*' : ch === '_' ? '.' : ch.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')
  return new RegExp(`^${source}$`, flags + 's')
}

/** Orders like SQL: nulls after every value ascending, before them descending. */
function compareValues (a: unknown, b: unknown): number {
  const aNull = a === null || a === undefined
  const bNull = b === null || b === undefined
  if (aNull || bNull) return aNull === bNull ? 0 : aNull ? 1 : -1
  if (a instanceof Date || b instanceof Date) return new Date(a as string).getTime() - new Date(b as string).getTime()
  return a! < b! ? -1 : a! > b! ? 1 : 0
}

function compareBy (orderBy: OrderKey[], a: unknown[], b: unknown[]): number {
  for (let i = 0; i < orderBy.length; i++) {
    const c = compareValues(a[i], b[i])
    if (c !== 0) return orderBy[i].descending ? -c : c
  }
  return 0
}

function matches (row: Row, field: string, op: Operator, value: unknown): boolean {
  const actual = row[field]
  switch (op) {
    case 'eq': return compareValues(actual, value) === 0 && (actual === null) === (value === null)
    case 'ne': return !matches(row, field, 'eq', value)
    case 'lt': return actual != null && compareValues(actual, value) < 0
    case 'le': return actual != null && compareValues(actual, value) <= 0
    case 'gt': return actual != null && compareValues(actual, value) > 0
    case 'ge': return actual != null && compareValues(actual, value) >= 0
    case 'in': return (value as unknown[]).some((v) => compareValues(actual, v) === 0 && actual != null)
    case 'not_in': return actual != null && !(value as unknown[]).some((v) => compareValues(actual, v) === 0)
    case 'is_null': return (actual === null || actual === undefined) === value
    case 'like': return typeof actual === 'string' && likePattern(String(value), '').test(actual)
    case 'ilike': return typeof actual === 'string' && likePattern(String(value), 'i').test(actual)
  }
}

/**
 * A repository over an in-process `Map`, for tests, examples and prototypes. It
 * implements the CRUD protocol and the filters honestly: every field operator, search,
 * several sort keys applied in the order given, offsets, and keyset seeks. Rows are
 * copied in and out, so callers never share state with the store.
 */
export class MemoryRepository<T extends object = Row> implements Repository<T> {
  readonly idField: string
  readonly unique: string[]
  private readonly rows = new Map<unknown, Row>()
  private nextId = 1

  constructor (options: MemoryRepositoryOptions<T> = {}) {
    this.idField = options.idField ?? 'id'
    this.unique = options.unique ?? []
    for (const row of options.rows ?? []) this.insert({ ...row } as Row)
  }

  private insert (row: Row): Row {
    if (row[this.idField] === undefined) row[this.idField] = this.nextId
    const id = row[this.idField]
    if (typeof id === 'number' && id >= this.nextId) this.nextId = id + 1
    this.rows.set(id, row)
    return row
  }

  private clashes (values: Row, except?: Row): boolean {
    const keys = [this.idField, ...this.unique]
    for (const row of this.rows.values()) {
      if (row === except) continue
      if (keys.some((k) => values[k] !== undefined && row[k] === values[k])) return true
    }
    return false
  }

  private where (criteria: Criteria, search?: ListQuery['search']): Row[] {
    const tests = Object.entries(criteria).map(([key, value]) => [...splitCriterion(key), value] as const)
    const term = search?.term.toLowerCase()
    return [...this.rows.values()].filter((row) =>
      tests.every(([field, op, value]) => matches(row, field, op, value)) &&
      (term === undefined || search!.fields.some((f) => typeof row[f] === 'string' && (row[f] as string).toLowerCase().includes(term))))
  }

  create (values: Record<string, unknown>, _options: RepositoryOptions = {}): T | null {
    if (this.clashes(values)) return null
    return { ...this.insert({ ...values }) } as T
  }

  get (criteria: Criteria, _options: RepositoryOptions = {}): T | null {
    const row = this.where(criteria)[0]
    return row === undefined ? null : { ...row } as T
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, _options: RepositoryOptions = {}): T[] {
    // The primary key ends every ordering, so equal keys never come back in a random order.
    const orderBy = query.orderBy.some((k) => k.field === this.idField) ? query.orderBy : [...query.orderBy, { field: this.idField, descending: false }]
    const keyOf = (row: Row): unknown[] => orderBy.map((k) => row[k.field])
    let rows = this.where(criteria, query.search).sort((a, b) => compareBy(orderBy, keyOf(a), keyOf(b)))
    if (query.after !== undefined) {
      const after = query.after
      rows = rows.filter((row) => compareBy(query.orderBy, query.orderBy.map((k) => row[k.field]), after) > 0)
    }
    const start = query.offset ?? 0
    const end = query.limit === undefined ? undefined : start + query.limit
    return rows.slice(start, end).map((row) => ({ ...row }) as T)
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search'> = {}, _options: RepositoryOptions = {}): number {
    return this.where(criteria, query.search).length
  }

  update (criteria: Criteria, values: Record<string, unknown>, _options: RepositoryOptions = {}): T | null {
    const row = this.where(criteria)[0]
    if (row === undefined) return null
    if (this.clashes(values, row)) throw new UniqueViolation('A unique field already has this value.')
    Object.assign(row, values)
    return { ...row } as T
  }

  delete (criteria: Criteria, _options: RepositoryOptions = {}): boolean {
    const row = this.where(criteria)[0]
    return row === undefined ? false : this.rows.delete(row[this.idField])
  }
}
