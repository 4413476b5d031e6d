export { views, views as default, configureApp, type FastifyViewsOptions, type ViewEntry } from './plugin.js'
export { View, type ViewClass, type StandardAction, type ActionRoute, type AfterAction, type RouteDefinition, type BodyMediaType } from './views/view.js'
export { JsonPatchOperation, type PatchFormat, type PatchTarget } from './views/patch.js'
export { APIView, type SerializerOptions } from './views/api-view.js'
export { ViewRouter, type ViewRouterOptions } from './registration/router.js'
export { registerView, type RegisterViewOptions } from './registration/register.js'
export {
  Get, Post, Put, Patch, Delete, Route, Action, Override, Annotate, Throws, Catch, CatchDefined,
  type RouteDecorator, type Raises, type RaisesEntry
} from './views/decorators.js'
export * from './http/errors.js'
export { ConfigurationError, CONFIGURATION_ERRORS, type ConfigurationErrorCode } from './core/configuration-error.js'
export { problemErrorHandler, problemNotFoundHandler, problemClientErrorHandler, problemFrameworkErrors, PROBLEM_CONTENT_TYPE } from './http/problem.js'
export { ResponseHeaders, alwaysSent, type ResponseHeadersClass, type HeaderFields } from './http/response-headers.js'
export { ResponseValidationError } from './schema/response-check.js'
export { RequestValidationError } from './schema/validation.js'
export { toTypeBox, type Schema, type StaticOf, type TypeBox1Schema } from './core/typebox-lines.js'
export type {
  ViewRequest, RouteSchemas, ResolvedRouteSchemas, ResolvedRouteOptions, HandlerResult, Dependency, DependencyFn, DependencyDocs, SecurityRequirement, ResponseDoc, ResponsesMap,
  ViewRouteOptions, SharedRouteOptions, RouteDocOptions, MaybePromise
} from './routes/types.js'
export { mix, defineMixin, MIXIN, ACTION_KEYS, type ViewBase, type MixinInfo, type ActionNameRegistry, type ActionNameOf, type ActionDependencies, type KeysOf, type StaticsOf, type MixinClass, type MixedClass, type ActionModels, type ActionRegistry, type TypedClass, type ViewInstance, type ViewMethods, type ViewRoutes, type StaticsInput, type StaticsWithActions, type LastModifiedFieldOf } from './views/mixins.js'
export type { RouteBuilder, RouteHandler } from './views/route-builder.js'
export type { ModelsOf, RowOf, FilterFieldNames, UnknownFilterFields, RepositoryItemOf, RepositoryFits, TimeFieldOf } from './views/schema-models.js'
export {
  DetailViewMixin, AsyncListAPIView, ListAPIView, AsyncCreateAPIView, CreateAPIView, AsyncRetrieveAPIView, RetrieveAPIView,
  AsyncUpdateAPIView, UpdateAPIView, AsyncPartialUpdateAPIView, PartialUpdateAPIView, AsyncDestroyAPIView, DestroyAPIView,
  type ListActions, type CreateActions, type RetrieveActions, type UpdateActions, type PartialUpdateActions, type DestroyActions,
  type DetailStatics, type ListStatics, type CreateStatics, type UpdateStatics, type ActionViewClass, type ActionRequest, type SentReply
} from './views/actions.js'
export { errors, ProblemSchema, ValidationProblemSchema } from './openapi/operation.js'
export { errorClassSchema, ProblemErrorEntrySchema } from './openapi/problem-schema.js'
export { typeboxValidatorCompiler } from './schema/validation.js'
export {
  GenericViewMixin, AsyncGenericListAPIView, GenericListAPIView, AsyncGenericCreateAPIView, GenericCreateAPIView, AsyncGenericRetrieveAPIView,
  GenericRetrieveAPIView, AsyncGenericUpdateAPIView, GenericUpdateAPIView, AsyncGenericPartialUpdateAPIView, GenericPartialUpdateAPIView,
  AsyncGenericDestroyAPIView, GenericDestroyAPIView, type GenericHooks, type GenericMembers, type KwargsOf, type CriteriaOf, type GenericStatics, type FilterArgs, type PageSnapshot
} from './views/generics.js'
export * from './views/viewsets.js'
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
export {
  AsyncBulkCreateAPIView, BulkCreateAPIView, AsyncBulkUpdateAPIView, BulkUpdateAPIView, AsyncUpdateManyAPIView, UpdateManyAPIView,
  AsyncBulkDestroyAPIView, BulkDestroyAPIView, AsyncGenericBulkCreateAPIView, GenericBulkCreateAPIView, AsyncGenericBulkUpdateAPIView,
  GenericBulkUpdateAPIView, AsyncGenericUpdateManyAPIView, GenericUpdateManyAPIView, AsyncGenericBulkDestroyAPIView, GenericBulkDestroyAPIView,
  type BulkStatics, type BulkHooks, type BulkModels, type GenericBulkMembers, type WithAsyncBulkRepositoryMixin, type WithBulkRepositoryMixin,
  type BulkCreateActions, type BulkUpdateActions, type UpdateManyActions, type BulkDestroyActions
} from './views/bulk.js'
export { ConditionalMixin, type ConditionalMembers, type ConditionalStatics } from './views/conditional.js'
export { etagOf, isNotModified, failsPrecondition, type Validators } from './http/preconditions.js'
