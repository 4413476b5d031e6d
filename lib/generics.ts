// The `fastify-views/generics` entry: views over a repository (generic views and viewsets), the
// filters and pages of their lists, the repository protocol and the in-memory repository.
export {
  GenericViewMixin, AsyncGenericListAPIView, GenericListAPIView, AsyncGenericCreateAPIView, GenericCreateAPIView, AsyncGenericRetrieveAPIView,
  GenericRetrieveAPIView, AsyncGenericUpdateAPIView, GenericUpdateAPIView, AsyncGenericPartialUpdateAPIView, GenericPartialUpdateAPIView,
  AsyncGenericDestroyAPIView, GenericDestroyAPIView, type GenericHooks, type GenericMembers, type GenericMixinBase, type WriteSeams, type CreateValues, type KwargsOf, type CriteriaOf, type GenericStatics, type FilterArgs, type PageSnapshot
} from './views/generics.js'
export {
  AsyncGenericViewSet, GenericViewSet, AsyncGenericReadOnlyViewSet, GenericReadOnlyViewSet, AsyncGenericListCreateAPIView, GenericListCreateAPIView,
  AsyncGenericRetrieveUpdateDestroyAPIView, GenericRetrieveUpdateDestroyAPIView
} from './views/viewsets.js'
export {
  BaseFilter, OrderingFilter, SearchFilter, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter, composeFilters,
  FILTER_STATICS, type FilterClass, type FilterFields, type FilterOperators, type PaginationKind, type PageWindow, type FilterStaticsInput, type TypedFilter
} from './query/filters.js'
export {
  NumberedPage, OffsetPage, CursorPage,
  type NumberedPageSchema, type OffsetPageSchema, type CursorPageSchema, type NumberedPageOf, type OffsetPageOf, type CursorPageOf, type Cursor
} from './query/pagination.js'
export { OPERATORS, splitCriterion, asyncRepository, preconditionOf, type FieldOf, type Precondition, type Promised, type Repository, type AsyncRepository, type BulkRepository, type AsyncBulkRepository, type Criteria, type RepositoryOptions, type ListQuery, type OrderKey, type Operator } from './stores/repository.js'
export { MemoryRepository, UniqueViolation, type MemoryRepositoryOptions } from './stores/memory.js'
export type { RowOf, FilterFieldNames, UnknownFilterFields, RepositoryItemOf, RepositoryFits } from './views/schema-models.js'
