// MemoryRepository (stores layer): the repository protocol over rows kept in the process, with the operators, conditional writes and bulk calls of the SQL stores.
import { Conflict, NotFound } from '../http/errors.js'
import {
  preconditionOf, splitCriterion, type FieldOf, type BulkRepository, type Criteria, type DistinctQuery,
  type DistinctRepository, type DistinctValue, type ListQuery, type Repository,
  type RepositoryOptions
} from './repository.js'
import { compareBy, distinctValues, firstOfEachGroup, isNull, matches } from './value-order.js'
import { MemoryRelations, type MemoryRelation } from './memory-relations.js'
import { CompositeKey, integerKey, keyFieldsOf } from './memory-key.js'
import { describeKey } from './sql/table-key.js'

type Row = Record<string, unknown>

/** Options of a `MemoryRepository`. */
export interface MemoryRepositoryOptions<T> {
  /**
   * The primary key field (default `id`); integer keys are assigned when a created row has none. Or
   * its fields, for a key of several (a link table's `['article_id', 'user_id']`), which a create gives.
   */
  idField?: FieldOf<T> | ReadonlyArray<FieldOf<T>>
  /**
   * A field set to the current time (an ISO 8601 string) by every create and update, such as
   * `updated_at`: what `touchColumn` is to the SQL repositories, and what `lastModifiedField` reads.
   */
  touchField?: FieldOf<T>
  /**
   * An integer field holding the row's version: 1 on create, one more on every update, whatever
   * the values say. What `versionColumn` is to the SQL repositories, and what a conditional view's
   * `versionField` builds its ETags from and compares in the write (docs/conditional.md).
   */
  versionField?: FieldOf<T>
  /** Fields whose values must be unique: a clash makes `create` return `null` and `update` throw. */
  unique?: ReadonlyArray<FieldOf<T>>
  /** Rows to start with. */
  rows?: T[]
  /**
   * Keys of the merged keyword object of `updateMany` / `deleteMany` that are options
   * (the view's `repositoryOptions`, such as `batch_size`), not criteria.
   */
  optionKeys?: string[]
  /**
   * Fields that scope rows to an owner (a tenant). `bulkUpdate` items carry them
   * (merged from `getKwargs`), and an item that carries one only finds a row with the
   * same value, as `WHERE id = ? AND tenant = ?` would.
   */
  scopeFields?: ReadonlyArray<FieldOf<T>>
  /** Repositories whose rows point at this one's, by name, for `<relation>.<field>` criteria (docs/filters.md, "Relation filters"). */
  relations?: Readonly<Record<string, MemoryRelation>>
}

/** Thrown by `MemoryRepository.update` when the new values clash with a unique field: a 409 problem. */
export class UniqueViolation extends Conflict {}

/**
 * A repository over an in-process `Map`, for tests, examples and prototypes. It
 * implements the CRUD protocol and the filters honestly: every field operator, search,
 * several sort keys applied in the order given, offsets, and keyset seeks. Rows are
 * copied in and out, so callers never share state with the store.
 */
export class MemoryRepository<T extends object = Row>
implements Repository<T>, BulkRepository<T>, DistinctRepository<T> {
  /** `update` and `delete` evaluate `options.precondition` in the same atomic step as the write. */
  readonly atomicPreconditions = true
  /** Its list reads the first rows of each group (`query.perGroup`). */
  readonly listsPerGroup = true
  /** The key as `idField` gave it: a field, or several. */
  readonly idField: string | readonly string[]
  /** The primary key's fields: one, or several. */
  readonly keyFields: readonly string[]
  readonly touchField: string | undefined
  readonly versionField: string | undefined
  readonly unique: readonly string[]
  readonly optionKeys: Set<string>
  readonly scopeFields: readonly string[]
  readonly #relations: MemoryRelations
  readonly #rows = new Map<unknown, Row>()
  /**
   * One index per unique field, value -> row, so that a uniqueness check is a lookup:
   * a bulk create of n items costs O(n), not O(n x rows). Nulls are not indexed: as
   * in SQL, a unique field may be null on many rows.
   */
  readonly #indexes: Array<[string, Map<unknown, Row>]>
  #nextId = 1
  /** The key field of a key of one field (what the single-key code reads); the first one of several. */
  readonly #id: string
  /** A key of several fields; `undefined` for one. */
  readonly #composite: CompositeKey | undefined
  /** The value a row is kept under in `#rows`, chosen once for the key's kind. */
  readonly #keyOf: (row: Row) => unknown
  /** The first row criteria select, chosen once: looked up by key when they name it. */
  readonly #first: (criteria: Criteria) => Row | undefined

  constructor (options: MemoryRepositoryOptions<T> = {}) {
    this.idField = options.idField ?? 'id'
    this.keyFields = keyFieldsOf(this.idField, new.target.name)
    const id = this.keyFields[0]
    this.#id = id
    const composite = this.keyFields.length > 1 ? new CompositeKey(this.keyFields, new.target.name) : undefined
    this.#composite = composite
    this.#keyOf = composite === undefined ? (row) => row[id] : (row) => composite.of(row)
    this.#first = composite === undefined
      ? (criteria) => this.#firstById(criteria)
      : (criteria) => this.#firstByKey(criteria, composite)
    this.touchField = options.touchField
    this.versionField = options.versionField
    this.unique = options.unique ?? []
    this.optionKeys = new Set(options.optionKeys ?? [])
    this.scopeFields = options.scopeFields ?? []
    this.#relations = new MemoryRelations(new.target.name, options.relations ?? {})
    this.#indexes = this.unique.map((field) => [field, new Map()])
    for (const row of options.rows ?? []) this.#insert({ ...row } as Row)
  }

  /** The values of a write with the touch field set to now, when there is one. */
  #touched (values: Record<string, unknown>): Row {
    return this.touchField === undefined ? { ...values } : { ...values, [this.touchField]: new Date().toISOString() }
  }

  /** The values of a write to `row` (`undefined`: a new row) with its version stamped: 1 for a new row, one more than the row's. */
  #versioned (values: Row, row: Row | undefined): Row {
    const field = this.versionField
    if (field === undefined) return values
    const current = row?.[field]
    return { ...values, [field]: typeof current === 'number' ? current + 1 : 1 }
  }

  #insert (row: Row): Row {
    this.#rows.set(this.#composite === undefined ? this.#nextKey(row) : this.#composite.ofNew(row), row)
    this.#index(row)
    return row
  }

  /** The key of a new row of a key of one field: the one it has, or the next integer. */
  #nextKey (row: Row): unknown {
    if (row[this.#id] === undefined) row[this.#id] = this.#nextId
    const id = row[this.#id]
    if (typeof id === 'number' && id >= this.#nextId) this.#nextId = id + 1
    return id
  }

  #index (row: Row): void {
    for (const [field, index] of this.#indexes) if (!isNull(row[field])) index.set(row[field], row)
  }

  #unindex (row: Row): void {
    for (const [field, index] of this.#indexes) if (index.get(row[field]) === row) index.delete(row[field])
  }

  #remove (row: Row): void {
    this.#rows.delete(this.#keyOf(row))
    this.#unindex(row)
  }

  /** The row other than `except` that already holds one of the primary or unique values in `values`. */
  #holderOf (values: Row, except?: Row): Row | undefined {
    const id = this.#composite === undefined ? values[this.#id] : this.#composite.ofWrite(values, except)
    const byId = isNull(id) ? undefined : this.#rows.get(id)
    if (byId !== undefined && byId !== except) return byId
    for (const [field, index] of this.#indexes) {
      const holder = isNull(values[field]) ? undefined : index.get(values[field])
      if (holder !== undefined && holder !== except) return holder
    }
    return undefined
  }

  /** Applies `values` to a stored row, keeping the key map and the unique indexes in step. */
  #assign (row: Row, values: Row): void {
    this.#remove(row)
    Object.assign(row, values)
    this.#rows.set(this.#keyOf(row), row)
    this.#index(row)
  }

  /**
   * Runs a multi-row write as one transaction: `work` records how to undo each step,
   * and a throw undoes them all, newest first, so the store is left exactly as it was.
   */
  #transaction<R> (work: (undo: Array<() => void>) => R): R {
    const undo: Array<() => void> = []
    try {
      return work(undo)
    } catch (error) {
      for (let i = undo.length - 1; i >= 0; i--) undo[i]()
      throw error
    }
  }

  /** `#assign` inside a transaction: records the row's previous values first. */
  #assignLogged (row: Row, values: Row, undo: Array<() => void>): void {
    const before = { ...row }
    undo.push(() => {
      this.#remove(row)
      for (const key of Object.keys(row)) if (!(key in before)) delete row[key]
      this.#insert(Object.assign(row, before))
    })
    this.#assign(row, values)
  }

  /** The test of each criterion: a field's operator, or a relation's related rows, read once per call. */
  #tests (criteria: Criteria): Array<(row: Row) => boolean> {
    return Object.entries(criteria).map(([key, value]) => {
      const [field, op] = splitCriterion(key)
      return field.includes('.') ? this.#relations.test(field, op, value) : (row: Row) => matches(row, field, op, value)
    })
  }

  /** Every `<relation>.<field>` a criterion may name: what a view's filter may name besides the rows' fields. */
  get relationFields (): readonly string[] {
    return this.#relations.fieldNames
  }

  #where (criteria: Criteria, search?: ListQuery['search'], predicates: unknown[] = []): Row[] {
    const tests = this.#tests(criteria)
    const term = search?.term.toLowerCase()
    const extra = predicates.filter((p): p is (row: Row) => boolean => typeof p === 'function')
    return [...this.#rows.values()].filter((row) =>
      tests.every((test) => test(row)) &&
      extra.every((test) => test(row)) &&
      (term === undefined || search!.fields.some((f) => typeof row[f] === 'string' && row[f].toLowerCase().includes(term))))
  }

  create (values: Record<string, unknown>, _options: RepositoryOptions = {}): T | null {
    if (this.#holderOf(values) !== undefined) return null
    return { ...this.#insert(this.#versioned(this.#touched(values), undefined)) } as T
  }

  /**
   * The first row the criteria select. Criteria naming the primary key (a detail route,
   * possibly with a tenant) look the row up by key instead of scanning the store.
   */
  #firstById (criteria: Criteria): Row | undefined {
    const id = criteria[this.#id]
    if ((typeof id === 'string' || (typeof id === 'number' && !Number.isNaN(id))) && Object.hasOwn(criteria, this.#id)) {
      const row = this.#rows.get(id) ?? this.#rows.get(integerKey(id))
      if (row === undefined) return undefined
      for (const key in criteria) {
        if (key === this.#id) continue
        const [field, op] = splitCriterion(key)
        const holds = field.includes('.') ? this.#relations.test(field, op, criteria[key])(row) : matches(row, field, op, criteria[key])
        if (!holds) return undefined
      }
      return row
    }
    return this.#where(criteria)[0]
  }

  /** `#firstById` of a key of several fields: the row they all name, with the other criteria holding of it. */
  #firstByKey (criteria: Criteria, key: CompositeKey): Row | undefined {
    const row = key.find(this.#rows, criteria)
    if (row === null) return this.#where(criteria)[0]
    return row !== undefined && this.#tests(key.rest(criteria)).every((test) => test(row)) ? row : undefined
  }

  /**
   * A create stores the values it is given, its key and its touch field, nothing else: what
   * registration checks response schemas against. A subclass with its own `create` may store
   * more, so it says nothing.
   */
  get filledOnCreate (): readonly string[] | undefined {
    if (this.create !== MemoryRepository.prototype.create) return undefined
    // A key of several fields is the create's to give, never filled.
    const key = this.#composite === undefined ? this.#id : undefined
    return [key, this.touchField, this.versionField].filter((field) => field !== undefined)
  }

  /** Every field a stored row has now: what a view's filter is checked against at registration, beside its response schema. */
  get storedFieldNames (): readonly string[] {
    const names = new Set<string>()
    for (const row of this.#rows.values()) for (const key of Object.keys(row)) names.add(key)
    return [...names]
  }

  get (criteria: Criteria, _options: RepositoryOptions = {}): T | null {
    const row = this.#first(criteria)
    return row === undefined ? null : { ...row } as T
  }

  list (criteria: Criteria, query: ListQuery = { orderBy: [] }, _options: RepositoryOptions = {}): T[] {
    // The primary key (each of its fields) ends every ordering, so equal keys never come back in a random order.
    const orderBy = this.#composite?.ordering(query.orderBy) ?? (query.orderBy.some((k) => k.field === this.#id)
      ? query.orderBy
      : [...query.orderBy, { field: this.#id, descending: false }])
    const keyOf = (row: Row): unknown[] => orderBy.map((k) => row[k.field])
    let rows = this.#where(criteria, query.search, query.args).sort((a, b) => compareBy(orderBy, keyOf(a), keyOf(b)))
    if (query.after !== undefined) {
      const after = query.after
      rows = rows.filter((row) => compareBy(query.orderBy, query.orderBy.map((k) => row[k.field]), after) > 0)
    }
    if (query.perGroup !== undefined) rows = firstOfEachGroup(rows, query.perGroup)
    const start = query.offset ?? 0
    const end = query.limit === undefined ? undefined : start + query.limit
    return rows.slice(start, end).map((row) => ({ ...row }) as T)
  }

  count (criteria: Criteria, query: Pick<ListQuery, 'search' | 'args'> = {}, _options: RepositoryOptions = {}): number {
    return this.#where(criteria, query.search, query.args).length
  }

  /** Each non-null value of `field` among the rows the criteria select, once, in the store's order (`DistinctRepository`). */
  distinct<K extends FieldOf<T>> (
    field: K, criteria: Criteria = {}, query: DistinctQuery = {}, _options: RepositoryOptions = {}
  ): Array<DistinctValue<T, K>> {
    const values = this.#where(criteria, query.search, query.args).map((row) => row[field])
    // The values of the rows' field `K`, nulls left out: what `DistinctValue` names.
    return distinctValues(values, query) as Array<DistinctValue<T, K>>
  }

  update (criteria: Criteria, values: Record<string, unknown>, options: RepositoryOptions = {}): T | null {
    const row = this.#first(criteria)
    if (row === undefined) return null
    // Synchronous: nothing can write between this check and the write below.
    preconditionOf(options)?.({ ...row })
    // Nothing to change: the row as it is, not even its touch field or version stamped (as the SQL stores do).
    if (Object.keys(values).length === 0) return { ...row } as T
    if (this.#holderOf(values, row) !== undefined) throw new UniqueViolation('A unique field already has this value.')
    this.#assign(row, this.#versioned(this.#touched(values), row))
    return { ...row } as T
  }

  delete (criteria: Criteria, options: RepositoryOptions = {}): boolean {
    const row = this.#first(criteria)
    if (row === undefined) return false
    preconditionOf(options)?.({ ...row })
    this.#remove(row)
    return true
  }

  /** The criteria of a bulk write's keyword object: without its options (`optionKeys`, and `precondition`, the check of each row). */
  #criteriaOf (kwargs: Record<string, unknown>): Criteria {
    const criteria: Criteria = {}
    for (const [key, value] of Object.entries(kwargs)) if (!this.optionKeys.has(key) && key !== 'precondition') criteria[key] = value
    return criteria
  }

  /** The rows the criteria select, each judged by the keyword object's precondition, if any, before anything is written. */
  #selectChecked (kwargs: Record<string, unknown>, args: unknown[]): Row[] {
    const check = preconditionOf(kwargs)
    const rows = this.#where(this.#criteriaOf(kwargs), undefined, args)
    if (check !== undefined) for (const row of rows) check({ ...row })
    return rows
  }

  /** Inserts every item, or none when one clashes with a row or with another item. */
  createMany (items: Array<Record<string, unknown>>, _options: RepositoryOptions = {}): T[] {
    const positions = new Map<Row, number>()
    const nextId = this.#nextId
    return this.#transaction((undo) => {
      undo.push(() => { this.#nextId = nextId })
      return items.map((item, index) => {
        const holder = this.#holderOf(item)
        if (holder !== undefined) {
          const twin = positions.get(holder)
          throw new Conflict(`Item ${index} clashes with ${twin === undefined ? 'an existing row' : `item ${twin}`}.`)
        }
        const row = this.#insert(this.#versioned(this.#touched(item), undefined))
        positions.set(row, index)
        undo.push(() => this.#remove(row))
        return { ...row } as T
      })
    })
  }

  /** Applies `values` to every selected row, or to none when the result would clash or one fails `kwargs.precondition`. */
  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): T[] {
    const rows = this.#selectChecked(kwargs, args)
    const changesUnique = [...this.keyFields, ...this.unique].some((k) => values[k] !== undefined)
    if (changesUnique && (rows.length > 1 || rows.some((row) => this.#holderOf(values, row) !== undefined))) throw new Conflict('The values would make a unique field repeat.')
    const touched = this.#touched(values)
    for (const row of rows) this.#assign(row, this.#versioned(touched, row))
    return rows.map((row) => ({ ...row }) as T)
  }

  /** Replaces each item's row by primary key, or nothing when one is missing, clashes, or fails `options.precondition`. */
  bulkUpdate (items: Array<Record<string, unknown>>, options: RepositoryOptions = {}): void {
    const check = preconditionOf(options)
    // Row by row, as `UPDATE ... WHERE id = ?` executed many times in one transaction:
    // an item that repeats a unique value of a row (or of an earlier item) fails the batch.
    this.#transaction((undo) => items.forEach((item, index) => {
      const row = this.#rows.get(this.#keyOf(item))
      if (row === undefined || this.scopeFields.some((f) => item[f] !== undefined && row[f] !== item[f])) {
        throw new NotFound(`Item ${index}: no row has ${describeKey(this.keyFields, item)}.`)
      }
      check?.({ ...row })
      if (this.#holderOf(item, row) !== undefined) throw new Conflict(`Item ${index} clashes with an existing row.`)
      this.#assignLogged(row, this.#versioned(this.#touched(item), row), undo)
    }))
  }

  /** Deletes every selected row, or none when one fails `kwargs.precondition`. */
  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): void {
    for (const row of this.#selectChecked(kwargs, args)) this.#remove(row)
  }
}
