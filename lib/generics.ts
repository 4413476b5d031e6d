// The `fastify-views/generics` entry: views over a repository (generic views and viewsets), the
// filters, paginations and pages of their lists, the repository protocol and the in-memory repository.
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export {
  GenericViewMixin, type GenericHooks, type GenericMembers, type GenericMixinBase,
  type WriteSeams, type CreateValues, type UpdateValues, type ObjectOf, type ViewRepository, type KwargsOf,
  type CriteriaOf, type GenericStatics, type FilterArgs
} from './views/generic/generic-view.js'
export {
  AsyncGenericListAPIView, GenericListAPIView, AsyncGenericCreateAPIView, GenericCreateAPIView,
  AsyncGenericRetrieveAPIView,
  GenericRetrieveAPIView, AsyncGenericUpdateAPIView, GenericUpdateAPIView, AsyncGenericPartialUpdateAPIView,
  GenericPartialUpdateAPIView, AsyncGenericDestroyAPIView, GenericDestroyAPIView
} from './views/generic/generic-actions.js'
export type { WriteDescription } from './views/write.js'
export { SoftDeleteMixin, type SoftDeleteOptions, type SoftDeleteStatics, type SoftDeleteMembers, type DeletedMode } from './views/generic/soft-delete.js'
export { SparseFieldsMixin, type SparseFieldsMembers, type SparseFieldsStatics } from './views/generic/sparse-fields.js'
export { MAX_MANY, type Expansion } from './views/generic/expand.js'
export type { FieldSet } from './query/field-set.js'
export type { PerGroup } from './stores/repository.js'
export {
  AsyncGenericViewSet, GenericViewSet, AsyncGenericReadOnlyViewSet, GenericReadOnlyViewSet,
  AsyncGenericListCreateAPIView, GenericListCreateAPIView,
  AsyncGenericRetrieveUpdateDestroyAPIView, GenericRetrieveUpdateDestroyAPIView
} from './views/viewsets.js'
export {
  BaseFilter, OrderingFilter, SearchFilter, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter,
  FILTER_STATICS, type FilterClass, type FilterFields, type FilterOperators, type FilterStaticsInput, type TypedFilter
} from './query/filters.js'
export { composeFilters } from './query/compose-filters.js'
export type { Pagination, PageOf, PageBounds, PageQuery, PageSource, PageWindow } from './query/pagination-protocol.js'
export type { PageSnapshot } from './query/counted-page.js'
export {
  PageNumberPagination, NumberedPages, NumberedPage,
  type NumberedPageSchema, type NumberedPageOf, type NumberedWindow, type NumberedFacts
} from './query/page-number.js'
export { OffsetPagination, OffsetPages, OffsetPage, type OffsetPageSchema, type OffsetPageOf, type OffsetWindow, type OffsetFacts } from './query/offset.js'
export { ListEnvelope, type ListEnvelopeOf, type ListEnvelopeSchema, type WholeListWindow } from './query/list-envelope.js'
export {
  CursorPagination, CursorPages, CursorPage, type CursorPageSchema, type CursorPageOf, type Cursor, type CursorWindow,
  type CursorFacts
} from './query/cursor.js'
export { OPERATORS, splitCriterion, asyncRepository, preconditionOf, distinctOf, type AsyncRepositoryOf, type FieldOf, type Precondition, type Promised, type Repository, type AsyncRepository, type BulkRepository, type AsyncBulkRepository, type Criteria, type RepositoryOptions, type ListQuery, type OrderKey, type Operator } from './stores/repository.js'
export { MemoryRepository, UniqueViolation, type MemoryRepositoryOptions } from './stores/memory.js'
export type { MemoryRelation, MemoryRelationJoin } from './stores/memory-relations.js'
export type { RowOf, FilterFieldNames, UnknownFilterFields, RepositoryItemOf, RepositoryFits } from './views/schema-models.js'
export type { ObjectAction } from './views/generic/object-permissions.js'
