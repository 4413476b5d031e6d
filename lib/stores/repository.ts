// The repository protocol (stores layer): what generic and bulk views call (sync, async, bulk), criteria and operators, and what a store declares of itself.
import { ConfigurationError } from '../core/configuration-error.js'

/**
 * Criteria selecting rows: a field name means equality, `field__op` an operator
 * (`price__gt`, `name__in`, `deleted_at__is_null`). See `OPERATORS`.
 */
export type Criteria = Record<string, unknown>

/** Extra options a view forwards to every repository call (`repositoryOptions`). */
export type RepositoryOptions = Record<string, unknown>

/**
 * A check of the current row before a write: a conditional write's precondition (If-Match,
 * If-Unmodified-Since, throwing `PreconditionFailed`), or an object permission (throwing
 * `Forbidden`). `update` and `delete` receive it as `options.precondition`, `bulkUpdate` as
 * `options.precondition` too, and `updateMany` / `deleteMany` as `kwargs.precondition`; each calls
 * it with every current row it writes (as reads see the row), *inside the same atomic step as the
 * write* (a transaction holding the rows, or a synchronous read-then-write). When it throws, the
 * call writes nothing and throws what it threw.
 */
export type Precondition = (current: unknown) => void

/**
 * Whether a repository declares that its `update` and `delete` evaluate `options.precondition`
 * in the same atomic step as the write (`atomicPreconditions: true`). A view that checks
 * preconditions over a repository that does not is refused at registration.
 */
export function honoursPreconditions (repository: unknown): boolean {
  return declared(repository, 'atomicPreconditions') === true
}

/** A property a repository may declare (`atomicPreconditions`, `fieldNames`, ...), read whatever the repository is. */
function declared (repository: unknown, key: string): unknown {
  return typeof repository === 'object' && repository !== null ? Reflect.get(repository, key) : undefined
}

/** A declared list of field names. */
const isNames = (value: unknown): value is readonly string[] => Array.isArray(value) && value.every((name) => typeof name === 'string')

/**
 * The integer field a repository keeps each row's version in (`versionField` of a
 * `MemoryRepository`, `versionColumn` of a SQL table), or `undefined`. Such a store sets it to 1
 * on create and adds one on every update, whatever the values say, so two states of a row never
 * share a version: a conditional view builds strong ETags from it and compares it in the write.
 */
export function versionFieldOf (repository: unknown): string | undefined {
  const field = declared(repository, 'versionField')
  return typeof field === 'string' ? field : undefined
}

/**
 * The fields of a repository's primary key (`keyFields`: `['id']`, or a link table's
 * `['article_id', 'user_id']`), or `undefined` when it does not say. Registration refuses what
 * finds a row by one field over a store whose rows are found by several.
 */
export function keyFieldsOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'keyFields')
  return isNames(names) ? names : undefined
}

/** A field of rows of type `T`: a key of `T` for typed rows (`unique: ['skus']` does not compile for a row with `sku`), any name for untyped ones. */
export type FieldOf<T> = string extends keyof T ? string : keyof T & string

/**
 * The fields a repository can select, order and search by, when it has a fixed set (the
 * columns of a SQL table), or `undefined`. A view checks its filter against them at
 * registration, so a misspelt field fails there rather than on the first request.
 */
export function fieldNamesOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'fieldNames')
  return isNames(names) ? names : undefined
}

/**
 * The names among `fields` a repository can select: those it declares when it has a fixed set
 * (`fieldNames`), all of them otherwise. A response may show a field the store does not hold (an
 * optional member a view of its own fills): a read of a field set never asks the store for it.
 */
export function selectable (fields: readonly string[], repository: unknown): readonly string[] {
  const names = fieldNamesOf(repository)
  return names === undefined ? fields : fields.filter((name) => names.includes(name))
}

/**
 * The `<relation>.<field>` names a repository's criteria may use besides its fields (docs/filters.md,
 * "Relation filters"), or `undefined` when it has no relations. Registration accepts them in a
 * filter's parameters (never in its ordering or search), and refuses any other dotted name.
 */
export function relationFieldsOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'relationFields')
  return isNames(names) ? names : undefined
}

/**
 * The fields a repository reads but never writes (the computed fields of a SQL query repository),
 * or `undefined`. Registration refuses a body the library writes as it is that names one.
 */
export function readOnlyFieldsOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'readOnlyFields')
  return isNames(names) ? names : undefined
}

/**
 * The fields the rows of a store without a fixed set hold now (every key of every row of a
 * `MemoryRepository`), or `undefined` when the store cannot say. Registration checks a filter
 * against them and the response schema together: a field in neither is a typo.
 */
export function storedFieldNamesOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'storedFieldNames')
  return isNames(names) ? names : undefined
}

/**
 * The fields a store adds to the values a create gives it, when it adds nothing else (a
 * `MemoryRepository`: its key), or `undefined` when the store cannot say (a SQL table's defaults
 * and triggers). Registration checks that the rows such a store creates hold what the response
 * schema requires.
 */
export function filledOnCreateOf (repository: unknown): readonly string[] | undefined {
  const names = declared(repository, 'filledOnCreate')
  return isNames(names) ? names : undefined
}

/** The JSON type a stored field's values arrive as, when the store knows it. */
export type FieldKind = 'integer' | 'number' | 'string' | 'boolean'

/** What a store says of one of its fields: may it hold null, and the JSON type of its values (`undefined`: it does not say). */
export interface ColumnFacts { nullable: boolean, kind: FieldKind | undefined }

/**
 * What a store says of its fields (the columns of a SQL table), or `undefined`. A view checks
 * its response schema against it at registration: a field that may hold null, or values of
 * another type, than the schema says would fail every answer that sends such a row.
 */
export function columnFactsOf (repository: unknown): ReadonlyMap<string, ColumnFacts> | undefined {
  const facts = declared(repository, 'columnFacts')
  return facts instanceof Map ? facts : undefined
}

/**
 * Lets a store that learns its fields asynchronously (`PostgresRepository.describeColumns`) learn
 * them; the plugin awaits it before registering the views over the store. Nothing for others.
 */
export async function describeColumnsOf (repository: unknown): Promise<void> {
  const describe = declared(repository, 'describeColumns')
  if (typeof describe === 'function') await describe.call(repository) // a store's own method, with the store as this
}

/**
 * The precondition a write's options (or a bulk write's keyword object) carry, if any. The key
 * `precondition` is an option, never a criterion: anything there but a function is refused.
 */
export function preconditionOf (options: RepositoryOptions | undefined): Precondition | undefined {
  const precondition = options?.precondition
  // A function: the check it is documented to be.
  if (precondition === undefined || typeof precondition === 'function') return precondition as Precondition | undefined
  const got = precondition === null ? 'null' : typeof precondition
  throw new ConfigurationError('FV_ERR_OPTION_IS_CRITERION', `The repository option "precondition" is the check of each row a write changes, a function; got ${got}. ` +
    'A criterion cannot be named "precondition": rename the field the filter sends')
}

/** The field operators a `field__op` criterion may use. */
export const OPERATORS = ['eq', 'ne', 'lt', 'le', 'gt', 'ge', 'in', 'not_in', 'is_null', 'like', 'ilike'] as const

/** One field operator. */
export type Operator = (typeof OPERATORS)[number]

const OPERATOR_SET = new Set<string>(OPERATORS)
const isOperator = (name: string): name is Operator => OPERATOR_SET.has(name)

/**
 * Reads a criteria key the way the library writes it, for a repository's own query
 * building: `price__gt` -> `['price', 'gt']`; `name` -> `['name', 'eq']`.
 */
export function splitCriterion (key: string): [string, Operator] {
  const at = key.lastIndexOf('__')
  const operator = key.slice(at + 2)
  if (at > 0 && isOperator(operator)) return [key.slice(0, at), operator]
  return [key, 'eq']
}

/** One sort key: the field and its direction. */
export interface OrderKey { field: string, descending: boolean }

/** How `list` reads: order, full-text search, and the window of rows. */
export interface ListQuery {
  /** Sort keys applied in the order given; ties keep the next key's order. */
  orderBy: OrderKey[]
  /** Rows where any of `fields` contains `term`, case-insensitively. */
  search?: { term: string, fields: readonly string[] }
  /** Skip this many rows. */
  offset?: number
  /** Return at most this many rows. */
  limit?: number
  /** Keyset seek: only rows strictly after these values of the `orderBy` keys. */
  after?: unknown[]
  /** Positional criteria from an overridden `resolveFilter` (SQL expressions), for repositories that take them. */
  args?: unknown[]
  /**
   * The fields the caller sends of each row (a sparse fieldset): a repository may read only these,
   * its key and the `orderBy` fields (a SQL table selects only their columns), or ignore it. The view
   * sends only the set whatever the rows hold.
   */
  fields?: readonly string[]
  /**
   * At most `limit` rows for each value of `field`, the first in the `orderBy` order (the related
   * rows a view embeds in each of a page's objects), in one read. Only a repository that declares
   * `listsPerGroup: true` is given it.
   */
  perGroup?: PerGroup
}

/** A read of each group of rows: at most `limit` rows for each value of `field`. */
export interface PerGroup { readonly field: string, readonly limit: number }

/** Whether a repository declares that its `list` honours `query.perGroup` (`listsPerGroup: true`). */
export function listsPerGroup (repository: unknown): boolean {
  return declared(repository, 'listsPerGroup') === true
}

/**
 * The CRUD repository the generic views call, synchronous (SQLite, an
 * in-memory store): every method returns its value. `create` returns `null` on a
 * conflict; `get`, `update` return `null` when no row matches; `delete` reports
 * whether a row was deleted. The views always pass every argument; a caller of its own may leave
 * out the query (no order, no window) and the options (none), and an implementation takes that.
 */
export interface Repository<T = unknown> {
  create (values: Record<string, unknown>, options?: RepositoryOptions): T | null
  get (criteria: Criteria, options?: RepositoryOptions): T | null
  list (criteria: Criteria, query?: ListQuery, options?: RepositoryOptions): T[]
  count (criteria: Criteria, query?: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): number
  update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): T | null
  delete (criteria: Criteria, options?: RepositoryOptions): boolean
}

/** How `distinct` reads: the direction, a bound, and the search and positional criteria a view's filter adds (as `count` takes them). */
export interface DistinctQuery extends Pick<ListQuery, 'search' | 'args' | 'limit'> {
  /** Largest value first; by default the smallest first. */
  descending?: boolean
}

/** The values `distinct` returns of field `K` of rows `T`: never null (nulls are left out); anything for untyped rows. */
export type DistinctValue<T, K extends string> = unknown extends T[K & keyof T] ? unknown : NonNullable<T[K & keyof T]>

/**
 * An optional repository method (docs/repositories.md, "Distinct values"), synchronous: each value
 * `field` holds among the rows the criteria select, once, nulls left out, in the store's order of
 * that field (ascending, or `descending`), at most `limit` of them. The criteria are those of `list`
 * (fields and `field__op`), so a scope narrows it as it narrows `list`. A store with a fixed set of
 * fields (a SQL table) refuses any other name; one without (the memory store) reads a field no row
 * has as null, and answers `[]`. Not part of `Repository`: a repository of your own need not have it.
 */
export interface DistinctRepository<T = Record<string, unknown>> {
  distinct<K extends FieldOf<T>> (
    field: K, criteria?: Criteria, query?: DistinctQuery, options?: RepositoryOptions
  ): Array<DistinctValue<T, K>>
}

/** `DistinctRepository` answering with a promise, typed per field (which `Promised` of a generic method is not). */
export interface AsyncDistinctRepository<T = Record<string, unknown>> {
  distinct<K extends FieldOf<T>> (
    field: K, criteria?: Criteria, query?: DistinctQuery, options?: RepositoryOptions
  ): Promise<Array<DistinctValue<T, K>>>
}

/**
 * A view's repository seen through `DistinctRepository` (`await distinctOf(this.repository).distinct('tag')`),
 * typed by its rows; a repository without `distinct` is refused when it is asked, naming its class.
 */
export function distinctOf<T> (repository: AsyncRepository<T>): AsyncDistinctRepository<T>
export function distinctOf<T> (repository: Repository<T>): DistinctRepository<T>
export function distinctOf (repository: object): object {
  if (typeof declared(repository, 'distinct') === 'function') return repository
  // An object without a prototype has no constructor to name.
  const owner: unknown = declared(repository, 'constructor')
  const name = typeof owner === 'function' ? owner.name : 'an object'
  throw new ConfigurationError('FV_ERR_NOT_IMPLEMENTED', `The repository (${name}) has no distinct method: ` +
    'give it one (docs/repositories.md, "Distinct values"), or read distinct values another way')
}

/** The async form of `R`'s `distinct`, typed per field, when `R` has one: `Promised` would type it for every field at once. */
type AsyncDistinctOf<R> = R extends { distinct: unknown, get: (...args: never) => infer V }
  ? AsyncDistinctRepository<NonNullable<V>>
  : unknown

/** `R` with every method returning a promise of what it returned. */
export type Promised<R> = {
  [K in keyof R]: R[K] extends (...args: infer A) => infer V ? (...args: A) => Promise<V> : R[K]
}

/** The asynchronous CRUD repository (PostgreSQL, HTTP services): the same methods, returning promises. */
export type AsyncRepository<T = unknown> = Promised<Repository<T>>

/**
 * The repository `asyncRepository` makes of `R`: its methods answering promises, `distinct` typed
 * per field. One name, so that a message about it stays one short line.
 */
export type AsyncRepositoryOf<T, R> = AsyncRepository<T> & AsyncDistinctOf<R> & Promised<R>

/** A synchronous repository seen through the asynchronous protocol, for async views. */
export function asyncRepository<T, R extends object> (repository: R): AsyncRepositoryOf<T, R> {
  const wrapped: Record<string, unknown> = {}
  for (let proto: object | null = repository; proto !== null &&
    proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const key of Object.getOwnPropertyNames(proto)) {
      const value = (repository as Record<string, unknown>)[key]
      if (key === 'constructor' || key in wrapped || typeof value !== 'function') continue
      wrapped[key] = (...args: unknown[]) => {
        try {
          return Promise.resolve((value as (...a: unknown[]) => unknown).apply(repository, args))
        } catch (error) {
          return Promise.reject(error)
        }
      }
    }
  }
  // The declarations are properties, not methods: carried over as they are.
  if (honoursPreconditions(repository)) wrapped.atomicPreconditions = true
  if (listsPerGroup(repository)) wrapped.listsPerGroup = true
  const version = versionFieldOf(repository)
  if (version !== undefined) wrapped.versionField = version
  const fieldNames = fieldNamesOf(repository)
  if (fieldNames !== undefined) wrapped.fieldNames = fieldNames
  // A key of one field is what a store that declares none is taken to have.
  const keyFields = keyFieldsOf(repository)
  if (keyFields !== undefined && keyFields.length > 1) wrapped.keyFields = keyFields
  const readOnly = readOnlyFieldsOf(repository)
  if (readOnly !== undefined) wrapped.readOnlyFields = readOnly
  // Read when asked: a memory store's related rows change.
  if ('relationFields' in repository) Object.defineProperty(wrapped, 'relationFields', { get: () => relationFieldsOf(repository) })
  // Read when asked, too: a store may learn them after it is wrapped (describeColumns).
  if ('columnFacts' in repository) Object.defineProperty(wrapped, 'columnFacts', { get: () => columnFactsOf(repository) })
  const filled = filledOnCreateOf(repository)
  if (filled !== undefined) wrapped.filledOnCreate = filled
  // Read when asked: the rows a store holds change.
  if ('storedFieldNames' in repository) Object.defineProperty(wrapped, 'storedFieldNames', { get: () => storedFieldNamesOf(repository) })
  return wrapped as AsyncRepositoryOf<T, R> // every method of R, wrapped above, and its declarations
}

/**
 * The bulk repository (docs/bulk.md), synchronous. Each call is one transaction: when any
 * item fails, nothing is written. `kwargs` holds the filter criteria merged with the
 * view's `repositoryOptions`; `args` are positional criteria from `resolveFilter`.
 *
 * Per-row checks (object permissions): `bulkUpdate` calls `options.precondition`, and
 * `updateMany` / `deleteMany` call `kwargs.precondition` (an option, never a criterion), with
 * each current row before it is written, in the same transaction, the rows locked; when one
 * call throws (a `Forbidden`), nothing is written and the error propagates.
 */
export interface BulkRepository<T = unknown> {
  /** Inserts every item or none; returns the created rows. */
  createMany (items: Array<Record<string, unknown>>, options?: RepositoryOptions): T[]
  /** Applies `values` to every row the criteria select, each judged first by `kwargs.precondition` if given; returns the updated rows. */
  updateMany (values: Record<string, unknown>, kwargs: Record<string, unknown>, ...args: unknown[]): T[]
  /** Replaces each item's row, found by its primary key and judged first by `options.precondition` if given; returns nothing. */
  bulkUpdate (items: Array<Record<string, unknown>>, options?: RepositoryOptions): void
  /** Deletes every row the criteria select, each judged first by `kwargs.precondition` if given. */
  deleteMany (kwargs: Record<string, unknown>, ...args: unknown[]): void
}

/** The asynchronous bulk repository: the same methods, returning promises. */
export type AsyncBulkRepository<T = unknown> = Promised<BulkRepository<T>>
