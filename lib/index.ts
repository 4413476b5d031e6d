export { views, views as default, configureApp, type FastifyViewsOptions, type ViewEntry } from './plugin.js'
export { View, type ViewClass } from './view.js'
export { APIView, type SerializerOptions } from './api-view.js'
export { ViewRouter, type ViewRouterOptions } from './router.js'
export { registerView, type RegisterViewOptions } from './register.js'
export {
  Get, Post, Put, Patch, Delete, Route, Action, Override, Annotate, Throws, Catch, CatchDefined,
  type RouteDecorator, type Raises, type RaisesEntry
} from './decorators.js'
export * from './errors.js'
export { ConfigurationError, CONFIGURATION_ERRORS, type ConfigurationErrorCode } from './configuration-error.js'
export { problemErrorHandler, problemNotFoundHandler, problemClientErrorHandler, problemFrameworkErrors, PROBLEM_CONTENT_TYPE } from './problem.js'
export { ResponseHeaders, alwaysSent, type ResponseHeadersClass, type HeaderFields } from './response-headers.js'
export { ResponseValidationError } from './response-check.js'
export { RequestValidationError } from './validation.js'
export type {
  ViewRequest, RouteSchemas, HandlerResult, Dependency, DependencyFn, DependencyDocs, SecurityRequirement, ResponseDoc, ResponsesMap,
  ViewRouteOptions, SharedRouteOptions, RouteDocOptions, MaybePromise
} from './types.js'
export { mix, defineMixin, MIXIN, ACTION_KEYS, type MixinInfo, type ActionNameRegistry, type ActionNameOf, type ActionDependencies, type KeysOf, type StaticsOf, type MixinClass, type MixedClass, type ActionModels, type ActionRegistry } from './mixins.js'
export {
  DetailViewMixin, AsyncListAPIView, ListAPIView, AsyncCreateAPIView, CreateAPIView, AsyncRetrieveAPIView, RetrieveAPIView,
  AsyncUpdateAPIView, UpdateAPIView, AsyncPartialUpdateAPIView, PartialUpdateAPIView, AsyncDestroyAPIView, DestroyAPIView,
  type ListActions, type CreateActions, type RetrieveActions, type UpdateActions, type PartialUpdateActions, type DestroyActions,
  type DetailStatics, type ListStatics, type CreateStatics, type UpdateStatics, type ActionViewClass
} from './actions.js'
export { errors, ProblemSchema, ValidationProblemSchema } from './openapi.js'
export { errorClassSchema, ProblemErrorEntrySchema } from './problem-schema.js'
export { typeboxValidatorCompiler } from './validation.js'
export {
  GenericViewMixin, AsyncGenericListAPIView, GenericListAPIView, AsyncGenericCreateAPIView, GenericCreateAPIView, AsyncGenericRetrieveAPIView,
  GenericRetrieveAPIView, AsyncGenericUpdateAPIView, GenericUpdateAPIView, AsyncGenericPartialUpdateAPIView, GenericPartialUpdateAPIView,
  AsyncGenericDestroyAPIView, GenericDestroyAPIView, type GenericHooks, type GenericMembers, type GenericStatics, type FilterArgs, type PageSnapshot
} from './generics.js'
export * from './viewsets.js'
export {
  BaseFilter, OrderingFilter, SearchFilter, PaginationFilter, OffsetLimitFilter, CursorPaginationFilter, composeFilters,
  type FilterClass, type FilterFields, type FilterOperators, type PaginationKind, type PageWindow
} from './filters.js'
export {
  NumberedPage, OffsetPage, CursorPage,
  type NumberedPageSchema, type OffsetPageSchema, type CursorPageSchema, type NumberedPageOf, type OffsetPageOf, type CursorPageOf, type Cursor
} from './pagination.js'
export { OPERATORS, splitCriterion, asyncRepository, preconditionOf, type Precondition, type Promised, type Repository, type AsyncRepository, type BulkRepository, type AsyncBulkRepository, type Criteria, type RepositoryOptions, type ListQuery, type OrderKey, type Operator } from './repository.js'
export { MemoryRepository, UniqueViolation, type MemoryRepositoryOptions } from './memory.js'
export {
  AsyncBulkCreateAPIView, BulkCreateAPIView, AsyncBulkUpdateAPIView, BulkUpdateAPIView, AsyncUpdateManyAPIView, UpdateManyAPIView,
  AsyncBulkDestroyAPIView, BulkDestroyAPIView, AsyncGenericBulkCreateAPIView, GenericBulkCreateAPIView, AsyncGenericBulkUpdateAPIView,
  GenericBulkUpdateAPIView, AsyncGenericUpdateManyAPIView, GenericUpdateManyAPIView, AsyncGenericBulkDestroyAPIView, GenericBulkDestroyAPIView,
  type BulkStatics, type BulkHooks, type BulkModels, type GenericBulkMembers, type WithAsyncBulkRepositoryMixin, type WithBulkRepositoryMixin,
  type BulkCreateActions, type BulkUpdateActions, type UpdateManyActions, type BulkDestroyActions
} from './bulk.js'
export { ConditionalMixin, type ConditionalMembers, type ConditionalStatics } from './conditional.js'
export { etagOf, isNotModified, failsPrecondition, type Validators } from './preconditions.js'
