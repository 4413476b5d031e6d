// Composed filters (query layer): several filters as one, their parameters added up, one pagination at most, the smallest bounds.
import type { Operator } from '../stores/repository.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { assertNoMisspeltStatic, BaseFilter, paginationOf, setsDefaultPageSize, type FilterClass, type FilterFields, type FilterOperators } from './filters.js'

const usesOperator = (filter: FilterClass, ops: readonly Operator[]): boolean => Object.values(filter.operators).some(
  (list) => list.some((op) => ops.includes(op))
)

/**
 * A bound of a composed filter: the smallest of the filters whose parameters it bounds
 * (those that search, or take patterns or lists), so that no parameter accepts more than
 * the filter that declared it allows; the default when none of them has such parameters.
 */
function smallest (
  filters: FilterClass[],
  uses: (filter: FilterClass) => boolean,
  bound: (filter: FilterClass) => number
): number {
  const bounds = filters.filter(uses).map(bound)
  return bounds.length === 0 ? bound(BaseFilter) : Math.min(...bounds)
}

/**
 * Combines filters into one: fields, operators, ordering and search fields add up,
 * and at most one of them may paginate.
 */
export function composeFilters (...filters: FilterClass[]): FilterClass {
  for (const filter of filters) assertNoMisspeltStatic(filter)
  const paging = [...new Set(filters.map(paginationOf).filter((p) => p !== undefined))]
  if (paging.length > 1) {
    throw new ConfigurationError('FV_ERR_FILTER_PAGINATION', `composeFilters: ${filters.map((f) => f.name).join(', ')} paginate in ${paging.length} different ways ` +
      `(${paging.map((p) => p.constructor.name).join(', ')}), and a list has one kind of page. Compose at most one paginating filter with the others`)
  }
  const pager = filters.find((f) => paginationOf(f) !== undefined)
  const maxSearchLength = smallest(filters, (f) => f.searchFields.length > 0, (f) => f.maxSearchLength)
  const maxPatternLength = smallest(filters, (f) => usesOperator(f, ['like', 'ilike']), (f) => f.maxPatternLength)
  const maxListLength = smallest(filters, (f) => usesOperator(f, ['in', 'not_in']), (f) => f.maxListLength)
  return class ComposedFilter extends BaseFilter {
    static override fields = filters.reduce<FilterFields>((all, f) => ({ ...all, ...f.fields }), {})
    static override operators = filters.reduce<FilterOperators>((all, f) => ({ ...all, ...f.operators }), {})
    static override operatorFields = filters.reduce<FilterFields>((all, f) => ({ ...all, ...f.operatorFields }), {})
    static override fieldOf = filters.reduce<Record<string, string>>((all, f) => ({ ...all, ...f.fieldOf }), {})
    static override orderingFields = [...new Set(filters.flatMap((f) => f.orderingFields))]
    static override defaultOrdering = filters.find((f) => f.defaultOrdering.length > 0)?.defaultOrdering ?? []
    static override searchFields = [...new Set(filters.flatMap((f) => f.searchFields))]
    static override paginator = paging[0] ?? null
    static override maxPageSize = pager?.maxPageSize ?? BaseFilter.maxPageSize
    static override maxOffset = pager?.maxOffset ?? BaseFilter.maxOffset
    // The pager's own choice, checked against its maxPageSize; an inherited default, already capped.
    static override defaultPageSize = pager === undefined
      ? BaseFilter.defaultPageSize
      : setsDefaultPageSize(pager) ? pager.defaultPageSize : pager.pageSize()

    static override tieBreaker = pager?.tieBreaker ?? BaseFilter.tieBreaker
    static override maxSearchLength = maxSearchLength
    static override maxPatternLength = maxPatternLength
    static override maxListLength = maxListLength
  }
}
