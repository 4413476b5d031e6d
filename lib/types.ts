// The `fastify-views/types` entry: the types of the `fastify-views` entry's views, routes, mixins and
// options, for annotations and declarations (`import type { ViewRequest } from 'fastify-views/types'`).
export type { FastifyViewsOptions, ConfigureAppOptions, ViewEntry } from './plugin.js'
export type {
  ViewClass, StandardAction, ActionRoute, AfterAction, RouteDefinition, BodyMediaType, RouteContribution, BeforeAction
} from './views/view.js'
export type { PatchFormat, PatchTarget } from './views/patch/patch.js'
export type { SerializerOptions } from './views/api-view.js'
export type { ViewRouterOptions } from './registration/router.js'
export type { RegisterViewOptions } from './registration/settings.js'
export type { RouteDecorator, EventsDecorator, EventsOptions, PublicInstance, Raises, RaisesEntry, RaisesPair, ExceptionType } from './views/decorators.js'
export type { EventSchemas, ServerEvent, EventStreamContext, EventStreamSettings, EventStreamLimits, EventRoute, EventRouteMethod } from './routes/events.js'
export type { UnexpectedContent } from './http/media-type.js'
export type { Telemetry, ObservedRoute, RouteObserver } from './routes/telemetry.js'
export type { SqlStatementMessage, BulkBatchMessage } from './core/channels.js'
export type { DeprecationOptions } from './registration/deprecation.js'
export type { ResponseHeadersClass, HeaderFields } from './http/response-headers.js'
export type { ValidationPolicy } from './schema/validation-policy.js'
export type { Schema, StaticOf, TypeBox1Schema } from './core/typebox-lines.js'
export type {
  ViewRequest, BodyOf, RouteSchemas, ResolvedRouteSchemas, ResolvedRouteOptions, HandlerResult, Dependency,
  DependencyFn, DependencyDocs, SecurityRequirement, ResponseDoc, MediaTypeDoc, ResponsesMap,
  ViewRouteOptions, CustomRouteOptions, SharedRouteOptions, RouteDocOptions, MaybePromise
} from './routes/types.js'
export type {
  ViewBase, MixinInfo, ActionNameRegistry, ActionNameOf, ActionDependencies, KeysOf, StaticsOf, MixinClass, MixedClass,
  ActionModels, ActionRegistry, TypedClass, OwnMembers, ViewInstance, ViewMethods, ViewRoutes, StaticsInput,
  StaticGroupRegistry, RetiredStaticRegistry, StaticsWithActions, LastModifiedFieldOf
} from './views/mixins.js'
export type { RouteBuilder, RouteHandler } from './views/route-builder.js'
export type { ModelsOf, TimeFieldOf } from './views/schema-models.js'
export type {
  ListActions, CreateActions, RetrieveActions, UpdateActions, PartialUpdateActions, DestroyActions,
  DetailStatics, ListStatics, CreateStatics, UpdateStatics, PatchOptions, ActionViewClass, ActionRequest, SentReply
} from './views/actions/standard.js'
export type {
  DistinctRepository, AsyncDistinctRepository, DistinctQuery, DistinctValue
} from './stores/repository.js'
