// Filters (query layer): the query parameters of a list (fields, operators, sort, q and its pagination's) in, repository criteria out.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { Criteria, Operator, OrderKey } from '../stores/repository.js'
import type { PageWindow, Pagination } from './pagination-protocol.js'
import { numberedPages } from './page-number.js'
import { offsetPages } from './offset.js'
import { cursorPages, totalOrdering } from './cursor.js'
import { operatorSchema } from './operator-schema.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { misspeltMember, misspeltSentence, type DidYouMean } from '../core/names.js'
import { assignStatics, withName } from '../core/statics.js'
import { assertStaticGroups, retireStatic } from '../core/static-groups.js'
import { toTypeBoxRecord, type Schema } from '../core/typebox-lines.js'

/** Filter fields: a query parameter name -> the schema of its value (equality). */
export type FilterFields = Record<string, Schema>

/** Field operators: a field -> the operators it accepts as `field__op` parameters. */
export type FilterOperators = Record<string, readonly Operator[]>

/** A filter class: what a view's `filter` attribute holds. */
export type FilterClass = typeof BaseFilter

/**
 * The statics a filter's `.with({...})` takes: any of its own, with its declared type, and any
 * pagination as `paginator` (a named filter declares its own pagination's type). A name the
 * filter does not have is typed as a sentence saying so, which is what the compiler prints (the
 * retired `pagination`, its new spelling).
 */
export type FilterStaticsInput<F, C> = {
  [P in keyof C]: P extends 'paginator' ? Pagination | null
    : P extends keyof F ? F[P]
      : P extends 'pagination' ? 'pagination is now paginator: new NumberedPages(), OffsetPages or CursorPages'
        : `unknown filter static ${P & string}${DidYouMean<P & string, keyof F & string>}`
}

/** Type-level record of the statics a filter's `.with()` set, with their literal types (never set at run time). */
export const FILTER_STATICS = '~statics'

/** A filter class with the statics `C` set by `.with({...})`. */
export type TypedFilter<F extends FilterClass, C> = F & { readonly [FILTER_STATICS]?: C }

/**
 * A filter's query schema, and the criterion each parameter that is one stands for
 * (`author__in` -> `author_username__in`); `sort`, `q` and its pagination's are none.
 */
interface FilterParameters { schema: TObject, criteria: Map<string, string> }

const querySchemas = new WeakMap<FilterClass, FilterParameters>()

/**
 * Base of every filter (docs/filters.md): its declared fields become optional query
 * parameters, and the statics switch on field operators, ordering (`sort`), search
 * (`q`) and pagination. A filter instance is built per request from the validated query.
 *
 * ```ts
 * class ItemFilter extends PaginationFilter {
 *   static override fields = { name: Type.String() }
 *   static override operatorFields = { price: Type.Number() }
 *   static override operators = { price: ['gt', 'le'] as const }
 *   static override orderingFields = ['name', 'price']
 *   static override searchFields = ['name']
 * }
 * ```
 */
export class BaseFilter {
  /** Equality fields: each is an optional query parameter of that name. */
  static fields: FilterFields = {}
  /** Operators per field (`price: ['gt']` adds `price__gt`); the field's schema comes from `fields` or `operatorFields`. */
  static operators: FilterOperators = {}
  /** Schemas of fields that only take operators (no plain equality parameter). */
  static operatorFields: FilterFields = {}
  /**
   * The stored field a parameter of `fields` or `operatorFields` compares, when it is not the
   * parameter's own name: `{ author: 'author_username' }` makes `?author=jake` (and `author__in`)
   * the criterion `author_username`, so a parameter may share a name with a member of the items.
   */
  static fieldOf: Readonly<Record<string, string>> = {}
  /** Fields `sort` may name (`sort=name&sort=-price`); empty: no `sort` parameter. */
  static orderingFields: readonly string[] = []
  /** The ordering when the client sends no `sort`, in `sort` syntax (`['-price']`). */
  static defaultOrdering: readonly string[] = []
  /** Fields `q` searches, case-insensitively; empty: no `q` parameter. */
  static searchFields: readonly string[] = []
  /**
   * How the list pages (docs/filters.md#pagination): its parameters, its window, its page. `null`:
   * no pagination, the list is an array. Set by `PaginationFilter`, `OffsetLimitFilter`,
   * `CursorPaginationFilter`, or to a pagination of your own (`new ArticlePages()`).
   */
  static paginator: Pagination | null = null
  /** Largest `page_size` / `limit` a client may ask for. */
  static maxPageSize = 100
  /** `page_size` / `limit` when the client sends none. */
  static defaultPageSize = 100
  /**
   * The most rows a page may skip (`offset`; `(page - 1) × page_size`): the store reads every row it
   * skips, so a deep offset costs a request as much as reading them all. Past it a request is a 400
   * naming the parameter. Deep pages are a cursor's (`CursorPaginationFilter`), which seeks to them;
   * `Number.MAX_SAFE_INTEGER` lifts the bound.
   */
  static maxOffset = 10_000
  /** The field that makes the order total for cursors (the primary key), or its fields (a key of several). */
  static tieBreaker: string | readonly string[] = 'id'
  // Bounds on what one request may ask the store to do (docs/filters.md): a search or a LIKE
  // pattern costs the store about rows x text length x pattern length comparisons, and each
  // item of a list is a bound parameter. A value past one is a 400 naming the parameter.
  /** The longest `q` a client may send, in characters. */
  static maxSearchLength = 100
  /** The longest `field__like` / `field__ilike` pattern a client may send, in characters. */
  static maxPatternLength = 100
  /** The most items a `field__in` / `field__not_in` list may hold. */
  static maxListLength = 100

  /**
   * This filter with its statics set once, their literal types kept:
   * `PaginationFilter.with({ fields: { name: Type.String() }, orderingFields: ['name', 'price'] })`.
   * A view given it in `.with({ filter })` checks every field it names against its items.
   */
  static with<F extends FilterClass, const C extends FilterStaticsInput<F, C>> (this: F, statics: C): TypedFilter<F,
    C> {
    const name = withName(this, statics)
    const Base: FilterClass = this // a generic `this` cannot be extended (TS2545); its class type can
    const typed = class extends Base {}
    assignStatics(typed, this, statics, name)
    Object.defineProperty(typed, 'name', { value: name })
    return typed as TypedFilter<F, C> // the statics just assigned are the ones `C` names
  }

  /** The query string schema: built once per class, at registration. */
  static querySchema (): TObject {
    return parametersOf(this).schema
  }

  /**
   * Every stored field the filter names, with the static that names it: what the repository
   * must have (checked at registration against a repository with a fixed set of fields).
   */
  static namedFields (): Array<{ field: string, static: string }> {
    const named = (names: Iterable<string>, where: string): Array<{ field: string, static: string }> => [...names].map(
      (field) => ({ field, static: where })
    )
    const compared = (names: string[]): string[] => names.map((name) => fieldComparedBy(this, name))
    return [
      ...named(compared(Object.keys(this.fields)), 'fields'),
      ...named(compared(Object.keys(this.operators)), 'operators'),
      ...named(compared(Object.keys(this.operatorFields)), 'operatorFields'),
      ...named(this.orderingFields, 'orderingFields'),
      ...named(this.defaultOrdering.map((key) => key.replace(/^-/, '')), 'defaultOrdering'),
      ...named(this.searchFields, 'searchFields'),
      ...(paginationOf(this)?.namedFields(this) ?? [])
    ]
  }

  /** The page size used when the client sends none: `defaultPageSize`, capped at `maxPageSize`. */
  static pageSize (): number {
    return Math.min(this.defaultPageSize, this.maxPageSize)
  }

  /**
   * The query schema of the criteria alone (fields and operators): what bulk actions
   * select rows with, where ordering, search and pages mean nothing.
   */
  static criteriaSchema (): TObject {
    const { schema, criteria } = parametersOf(this)
    const props: Record<string, TSchema> = {}
    for (const [key, value] of Object.entries(schema.properties)) if (criteria.has(key)) props[key] = value
    return Type.Object(props)
  }

  /** The validated query parameters of this request. */
  readonly values: Readonly<Record<string, unknown>>
  private readonly extra: Criteria

  constructor (values: Record<string, unknown> = {}, extra: Criteria = {}) {
    this.values = values
    this.extra = extra
  }

  private get statics (): FilterClass {
    return this.constructor as FilterClass
  }

  /**
   * The criteria the client sent (fields and `field__op` keys, each under the field it compares),
   * plus those merged by `withKwargs`.
   */
  asKwargs (): Criteria {
    const out: Criteria = {}
    // A Map of the declared parameters: `?constructor=1` or `?toString=x` name members of every object, not fields.
    const { criteria } = parametersOf(this.statics)
    for (const key of Object.keys(this.values)) {
      const criterion = criteria.get(key)
      if (criterion !== undefined && this.values[key] !== undefined) out[criterion] = this.values[key]
    }
    return { ...out, ...this.extra }
  }

  /** A copy of this filter with more criteria; later values win. */
  withKwargs (kwargs: Criteria): this {
    const Klass = this.constructor as new (values: Record<string, unknown>, extra: Criteria) => this
    return new Klass(this.values, { ...this.extra, ...kwargs })
  }

  /** The sort keys: what `sort` asked for (or `defaultOrdering`), in the order given. */
  get ordering (): OrderKey[] {
    // Without ordering fields `sort` is not a parameter of the filter: an undeclared one, ignored as the others are.
    // The query schema made `sort` a list of strings, where there are ordering fields.
    const asked = this.statics.orderingFields.length > 0 ? this.values.sort as string[] | undefined : undefined
    const sort = asked ?? this.statics.defaultOrdering
    return sort.map((key) => key.startsWith('-') ? { field: key.slice(1), descending: true } : { field: key, descending: false })
  }

  /** The search the client asked for, if any. */
  get search (): { term: string, fields: readonly string[] } | undefined {
    const term = this.values.q
    const fields = this.statics.searchFields
    // Without search fields `q` is not a parameter of the filter, and like any other undeclared one it is ignored.
    return typeof term === 'string' && term !== '' && fields.length > 0 ? { term, fields } : undefined
  }

  /** The window of rows its pagination reads (`{ kind: 'none' }` without one); throws the 400 of an invalid cursor. */
  get window (): PageWindow {
    return paginationOf(this.statics)?.window({ values: this.values, bounds: this.statics, ordering: this.ordering }) ?? { kind: 'none' }
  }

  /** The ordering a cursor seeks along: the sort keys, then the tie-breaker so the order is total. */
  cursorOrdering (): OrderKey[] {
    return totalOrdering(this.ordering, this.statics.tieBreaker)
  }
}

/** The pagination of a filter: its `paginator`; `undefined` when the filter does not paginate. */
export function paginationOf (filter: FilterClass): Pagination | undefined {
  return filter.paginator ?? undefined
}

/**
 * The query parameters of a filter: its fields and operators, `sort`, `q` and its pagination's,
 * built and checked once per class (the first request or registration), with the names among
 * them that are not criteria.
 */
function parametersOf (filter: FilterClass): FilterParameters {
  let built = querySchemas.get(filter)
  if (built !== undefined) return built
  assertNoMisspeltStatic(filter)
  const pagination = paginationOf(filter)
  // A default page longer than the longest allowed would be cut to it without a word.
  if (pagination !== undefined && filter.defaultPageSize > filter.maxPageSize && setsDefaultPageSize(filter)) {
    throw new ConfigurationError('FV_ERR_PAGE_SIZE', `${filter.name}: defaultPageSize ${filter.defaultPageSize} is more than maxPageSize ${filter.maxPageSize}, so pages would ` +
      `hold ${filter.maxPageSize} items, not ${filter.defaultPageSize}. Lower defaultPageSize to ${filter.maxPageSize} or less, or raise maxPageSize`)
  }
  if (pagination !== undefined && !(Number.isSafeInteger(filter.maxOffset) && filter.maxOffset >= 0)) {
    throw new ConfigurationError('FV_ERR_PAGE_SIZE', `${filter.name}: maxOffset is ${String(filter.maxOffset)}; give a whole number of rows ` +
      'from 0 (Number.MAX_SAFE_INTEGER for no bound)')
  }
  const props: Record<string, TSchema> = {}
  const criteria = new Map<string, string>()
  const fields = toTypeBoxRecord(filter.fields, `${filter.name}.fields`)
  const operatorFields = toTypeBoxRecord(filter.operatorFields, `${filter.name}.operatorFields`)
  const compared = comparedFields(filter, fields, operatorFields)
  for (const [name, field] of Object.entries(fields)) {
    props[name] = Type.Optional(field)
    setCriterion(filter, criteria, name, compared(name))
  }
  for (const [name, ops] of Object.entries(filter.operators)) {
    const field = fields[name] ?? operatorFields[name]
    if (field === undefined) throw new ConfigurationError('FV_ERR_FILTER_FIELD', `${filter.name}.operators.${name}: declare the field in fields or operatorFields`)
    for (const op of ops) {
      props[`${name}__${op}`] = Type.Optional(operatorSchema(op, field, filter))
      setCriterion(filter, criteria, `${name}__${op}`, `${compared(name)}__${op}`)
    }
  }
  if (filter.orderingFields.length > 0) {
    const keys = filter.orderingFields.flatMap((f) => [Type.Literal(f), Type.Literal(`-${f}`)])
    // Each field orders once at most: a longer list only repeats a key and makes the ORDER BY longer.
    props.sort = Type.Optional(Type.Array(Type.Union(keys), {
      maxItems: filter.orderingFields.length,
      description: `Sort keys, applied in order; prefix - for descending. One of: ${filter.orderingFields.join(', ')}.`
    }))
  }
  if (filter.searchFields.length > 0) props.q = Type.Optional(Type.String({ maxLength: filter.maxSearchLength, description: `Searches ${filter.searchFields.join(', ')}.` }))
  const notCriteria = new Set(['sort', 'q'])
  for (const [name, schema] of Object.entries(pagination?.parameters(filter) ?? {})) {
    // A criterion of the same name would be read as the page, or the page as a criterion.
    if (Object.hasOwn(props, name) || notCriteria.has(name)) {
      throw new ConfigurationError('FV_ERR_FILTER_FIELD', `${filter.name}: its pagination's parameter "${name}" is also a parameter of the filter; rename one of them`)
    }
    props[name] = Type.Optional(schema)
    notCriteria.add(name)
  }
  built = { schema: Type.Object(props), criteria }
  querySchemas.set(filter, built)
  return built
}

/** The stored field a parameter compares: its `fieldOf` (an own member: `constructor` is a parameter's name too), or its name. */
export const fieldComparedBy = (filter: FilterClass, name: string): string =>
  Object.hasOwn(filter.fieldOf, name) ? filter.fieldOf[name] : name

/**
 * The field each parameter of `fields` and `operatorFields` compares: its `fieldOf`, or its own
 * name. A `fieldOf` naming no such parameter would rename nothing: refused, by name.
 */
function comparedFields (filter: FilterClass, fields: object, operatorFields: object): (name: string) => string {
  const declared = new Set([...Object.keys(fields), ...Object.keys(operatorFields)])
  for (const [name, field] of Object.entries(filter.fieldOf)) {
    if (!declared.has(name)) {
      throw new ConfigurationError('FV_ERR_FILTER_FIELD', `${filter.name}.fieldOf.${name}: "${name}" is not a parameter of its fields or operatorFields ` +
        `(${[...declared].join(', ') || 'none'}); fieldOf renames the parameters declared there`)
    }
    if (typeof field !== 'string' || field === '') {
      throw new ConfigurationError('FV_ERR_FILTER_FIELD', `${filter.name}.fieldOf.${name}: the field a parameter compares is a field name; got ${JSON.stringify(field)}`)
    }
  }
  return (name: string): string => fieldComparedBy(filter, name)
}

/**
 * Records that the parameter `key` is the criterion `criterion`. Two parameters that are one
 * criterion (`?name=` and `?label=` with `fieldOf: { label: 'name' }`) would each overwrite
 * the other's value: refused, by name.
 */
function setCriterion (filter: FilterClass, criteria: Map<string, string>, key: string, criterion: string): void {
  for (const [other, taken] of criteria) {
    if (taken !== criterion) continue
    throw new ConfigurationError('FV_ERR_FILTER_FIELD', `${filter.name}: the parameters "${other}" and "${key}" are both the criterion "${criterion}" ` +
      '(through fieldOf), so one would overwrite the other\'s value; keep one of them')
  }
  criteria.set(key, criterion)
}

/** The filters the library exports; the classes below them are the user's. */
const isLibraryFilter = (cls: object): boolean => LIBRARY_FILTERS.has(cls)

/**
 * A static of the user's filter whose name is near one it inherits (`orderingField`,
 * `search_fields`) sets nothing: the filter keeps the inherited value (no `sort` parameter, no
 * search) and no compiler says so, since a new static needs no `override`. Refused at
 * registration, naming both (`core/names.ts` says what is near).
 */
export function assertNoMisspeltStatic (filter: FilterClass): void {
  assertStaticGroups(filter, isLibraryFilter)
  const found = misspeltMember(filter, isLibraryFilter)
  if (found === undefined) return
  throw new ConfigurationError('FV_ERR_MISSPELT_MEMBER', misspeltSentence(found))
}

/**
 * Whether a filter below `BaseFilter` sets `defaultPageSize` itself: lowering only `maxPageSize`
 * caps the inherited default (documented), a default the filter chose is a promise to keep.
 */
export function setsDefaultPageSize (filter: FilterClass): boolean {
  for (let c: FilterClass = filter; c !== BaseFilter; c = Object.getPrototypeOf(c)) { // every filter class extends BaseFilter
    if (Object.hasOwn(c, 'defaultPageSize')) return true
  }
  return false
}

/** A filter whose `sort` parameter orders by `orderingFields` (several keys, applied in order). */
export class OrderingFilter extends BaseFilter {}

/** A filter whose `q` parameter searches `searchFields`. */
export class SearchFilter extends BaseFilter {}

// Each named filter's `paginator` has the type of its own pagination, so that a view's
// `.with({ filter })` types its list as that pagination's page.

/** Page-number pagination: `page` (>= 1, default 1) and `page_size` (1..maxPageSize); lists answer a `NumberedPage`. */
export class PaginationFilter extends BaseFilter {
  static override paginator = numberedPages
}

/** Offset pagination: `offset` (>= 0) and `limit` (1..maxPageSize, capped); lists answer an `OffsetPage`. */
export class OffsetLimitFilter extends BaseFilter {
  static override paginator = offsetPages
}

/** Keyset pagination: an opaque `cursor` and `page_size`; lists answer a `CursorPage`. */
export class CursorPaginationFilter extends BaseFilter {
  static override paginator = cursorPages
}

const LIBRARY_FILTERS = new Set<object>(
  [BaseFilter, OrderingFilter, SearchFilter, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter]
)

// The built-in paginations were once named by a `pagination` kind: a filter still setting one would page by nothing.
retireStatic('pagination', 'paginator', 'paginator = new NumberedPages() (for \'page\'), new OffsetPages() (\'offset\') or new CursorPages() (\'cursor\')')
