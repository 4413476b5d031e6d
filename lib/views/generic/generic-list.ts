// The generic list action (views layer): reads through the view's filter and its pagination, and documents the page it answers.
import { Type, type TSchema } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import { withSchema } from '../actions/standard.js'
import { listItemOf, listMembers } from '../actions/list-create.js'
import { paginationOf, type BaseFilter, type FilterClass } from '../../query/filters.js'
import type { ViewBase } from '../mixins.js'
import { selectable, type AsyncRepository, type Criteria, type ListQuery, type Repository, type RepositoryOptions } from '../../stores/repository.js'
import type { ActionRoute, StandardAction } from '../view.js'
import { loadParent } from './parent.js'
import { then } from '../../core/maybe-promise.js'
import { mapsItself } from './generic-view.js'

/** What the generic list (and its stream, streamed-list.ts) needs of its view: the hooks and the repository of a generic view (generic-view.ts). */
export interface ListingView {
  readonly request: FastifyRequest
  readonly repository: Repository<unknown> | AsyncRepository<unknown>
  getFilter (request: FastifyRequest): BaseFilter | undefined
  getFilterArgs (filter: BaseFilter | undefined, action?: string): { args: unknown[], kwargs: Criteria }
  getRepositoryOptions (action: string): RepositoryOptions
  /** The fields this request keeps (`SparseFieldsMixin`), which the repository may select alone; `undefined` for every field. */
  readonly fieldSet?: { readonly reads: readonly string[] | undefined } | undefined
}

/** A base with the `filter` static of generic views. */
type ListBase = ViewBase & { filter: FilterClass | null }

/** The generic `list`: a nested view's parent first, then through the filter, its pagination reading and shaping the page. */
function genericList (view: ListingView, request: FastifyRequest): unknown {
  return then(loadParent(view), () => listPage(view, request))
}

function listPage (view: ListingView, request: FastifyRequest): unknown {
  const filter = view.getFilter(request)
  const { args, kwargs } = view.getFilterArgs(filter, 'list')
  const options = view.getRepositoryOptions('list')
  const repository = view.repository
  const query: ListQuery = { orderBy: filter?.ordering ?? [] }
  if (filter?.search !== undefined) query.search = filter.search
  if (args.length > 0) query.args = args
  // The rows are cut to the set before they are sent whatever the repository reads; one that maps them (mappingActions) reads them whole.
  const reads = view.fieldSet?.reads
  if (reads !== undefined && !mapsItself(view.constructor, 'list')) query.fields = selectable(reads, repository)
  if (filter === undefined) return repository.list(kwargs, query, options)
  // The filter of this request may be of another class than the view's (an overridden getFilter): its own pagination reads.
  const Filter = filter.constructor as FilterClass // every filter is an instance of a BaseFilter class
  const pagination = paginationOf(Filter)
  if (pagination === undefined) return repository.list(kwargs, query, options)
  return pagination.read({ repository, criteria: kwargs, query, options, bounds: Filter }, filter.window)
}

/** The list response of a generic view comes from its filter's pagination, whatever `responseSchemaAsList` says. */
export function pageSchema (item: TSchema | undefined, filter: FilterClass | null): TSchema | undefined {
  if (item === undefined) return undefined
  const pagination = filter == null ? undefined : paginationOf(filter)
  return pagination === undefined ? Type.Array(item) : pagination.pageSchema(item)
}

/** The library's own `list` methods: a view whose `list` is one of them reads its list as `listRows` does. */
const GENERIC_LISTS = new WeakSet<object>()

/** Whether a view's `list` is the generic one, not a method of its own (a streamed list reads as the generic one does). */
export const isGenericList = (method: unknown): boolean => typeof method === 'function' && GENERIC_LISTS.has(method)

/**
 * The generic list of a base with a `filter` static: the query parameters are the filter's, and the
 * response the page its pagination shapes. A real method of a named class, so that a stack trace
 * or a debugger stepping into `super.list(request)` lands in `GenericList.list`.
 */
export const genericListClass = <B extends ListBase>(Base: B): ViewBase => {
  const cls = class GenericList extends listMembers(Base) {
    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (action.name !== 'list') return route
      const options = this.filter == null
        ? route.options
        : withSchema(
          route.options,
          { querystring: this.filter.querySchema() }
        )
      return { ...route, options, responseSchema: pageSchema(listItemOf(this), this.filter) }
    }

    list (this: ListingView, request: FastifyRequest): unknown { return genericList(this, request) }
  }
  GENERIC_LISTS.add(cls.prototype.list)
  return cls
}
