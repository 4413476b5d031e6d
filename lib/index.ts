// The `fastify-views` entry: what a first app needs. Views and their actions, decorators, errors
// and problem+json, the plugin and its router, mixins. Views over a repository and their filters
// are `fastify-views/generics`, bulk views `fastify-views/bulk`, conditional requests
// `fastify-views/conditional`, the SQL repositories `fastify-views/sql`, the OpenAPI options
// `fastify-views/swagger`.
export { views, views as default, configureApp, type FastifyViewsOptions, type ConfigureAppOptions, type ViewEntry } from './plugin.js'
export { View, type ViewClass, type StandardAction, type ActionRoute, type AfterAction, type RouteDefinition, type BodyMediaType, type RouteContribution, type BeforeAction, extendContribution } from './views/view.js'
export { JsonPatchOperation, type PatchFormat, type PatchTarget } from './views/patch/patch.js'
export { APIView, type SerializerOptions } from './views/api-view.js'
export { ViewRouter, type ViewRouterOptions } from './registration/router.js'
export { registerView, type RegisterViewOptions } from './registration/register.js'
export {
  Get, Post, Put, Patch, Delete, Route, Action, Override, Annotate, Throws, Catch, CatchDefined,
  type RouteDecorator, type Raises, type RaisesEntry, type RaisesPair, type ExceptionType
} from './views/decorators.js'
export * from './http/errors.js'
export { ConfigurationError, CONFIGURATION_ERRORS, type ConfigurationErrorCode } from './core/configuration-error.js'
export {
  ErrorFormat, problemFormat, PROBLEM_FORMAT, problemErrorHandler, problemNotFoundHandler, problemClientErrorHandler,
  problemFrameworkErrors,
  type ErrorFormatOptions, type ValidationStatus
} from './http/error-format.js'
export { PROBLEM_CONTENT_TYPE } from './http/problem.js'
export type { UnexpectedContent } from './http/media-type.js'
export type { DeprecationOptions } from './registration/deprecation.js'
export { ResponseHeaders, alwaysSent, type ResponseHeadersClass, type HeaderFields } from './http/response-headers.js'
export { ResponseValidationError } from './schema/response-check.js'
export type { ValidationPolicy } from './schema/validation-policy.js'
export { toTypeBox, type Schema, type StaticOf, type TypeBox1Schema } from './core/typebox-lines.js'
export type {
  ViewRequest, BodyOf, RouteSchemas, ResolvedRouteSchemas, ResolvedRouteOptions, HandlerResult, Dependency,
  DependencyFn, DependencyDocs, SecurityRequirement, ResponseDoc, ResponsesMap,
  ViewRouteOptions, SharedRouteOptions, RouteDocOptions, MaybePromise
} from './routes/types.js'
export { mix, defineMixin, MIXIN, ACTION_KEYS, type ViewBase, type MixinInfo, type ActionNameRegistry, type ActionNameOf, type ActionDependencies, type KeysOf, type StaticsOf, type MixinClass, type MixedClass, type ActionModels, type ActionRegistry, type TypedClass, type OwnMembers, type ViewInstance, type ViewMethods, type ViewRoutes, type StaticsInput, type StaticsWithActions, type LastModifiedFieldOf } from './views/mixins.js'
export type { RouteBuilder, RouteHandler } from './views/route-builder.js'
export type { ModelsOf, TimeFieldOf } from './views/schema-models.js'
export {
  AsyncAPIViewSet, APIViewSet, AsyncReadOnlyAPIViewSet, ReadOnlyAPIViewSet, AsyncListCreateAPIView, ListCreateAPIView,
  AsyncRetrieveUpdateDestroyAPIView, RetrieveUpdateDestroyAPIView
} from './views/viewsets.js'
export {
  DetailViewMixin,
  type ListActions, type CreateActions, type RetrieveActions, type UpdateActions, type PartialUpdateActions,
  type DestroyActions,
  type DetailStatics, type ListStatics, type CreateStatics, type UpdateStatics, type ActionViewClass,
  type ActionRequest, type SentReply
} from './views/actions/standard.js'
export {
  AsyncListAPIView, ListAPIView, AsyncCreateAPIView, CreateAPIView, AsyncRetrieveAPIView, RetrieveAPIView,
  AsyncUpdateAPIView, UpdateAPIView, AsyncPartialUpdateAPIView, PartialUpdateAPIView, AsyncDestroyAPIView,
  DestroyAPIView
} from './views/actions/action-views.js'
export { errors, ProblemSchema, ValidationProblemSchema } from './openapi/operation.js'
export { errorClassSchema, ProblemErrorEntrySchema } from './http/problem-schema.js'
export { typeboxValidatorCompiler } from './schema/validation.js'
