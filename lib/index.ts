// The `fastify-views` entry: what a first app needs. The plugin and its router, the views, their
// actions and viewsets, the decorators, mixins. Their types are `fastify-views/types`, the errors and
// error formats `fastify-views/errors`, views over a repository and their filters
// `fastify-views/generics`, bulk views `fastify-views/bulk`, conditional requests
// `fastify-views/conditional`, the SQL repositories `fastify-views/sql`, the OpenAPI options
// `fastify-views/swagger`.
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export { views, views as default, configureApp } from './plugin.js'
export { ViewRouter } from './registration/router.js'
export { registerView } from './registration/register.js'
export { View, extendContribution } from './views/view.js'
export { APIView } from './views/api-view.js'
export { DetailViewMixin } from './views/actions/standard.js'
export {
  AsyncListAPIView, ListAPIView, AsyncCreateAPIView, CreateAPIView, AsyncRetrieveAPIView, RetrieveAPIView,
  AsyncUpdateAPIView, UpdateAPIView, AsyncPartialUpdateAPIView, PartialUpdateAPIView, AsyncDestroyAPIView,
  DestroyAPIView
} from './views/actions/action-views.js'
export {
  AsyncAPIViewSet, APIViewSet, AsyncReadOnlyAPIViewSet, ReadOnlyAPIViewSet, AsyncListCreateAPIView, ListCreateAPIView,
  AsyncRetrieveUpdateDestroyAPIView, RetrieveUpdateDestroyAPIView
} from './views/viewsets.js'
export { Get, Post, Put, Patch, Delete, Route, Action, Events, Override, Annotate, Throws, Catch, CatchDefined } from './views/decorators.js'
export { mix, defineMixin, MIXIN, ACTION_KEYS } from './views/mixins.js'
export { ResponseHeaders, alwaysSent } from './http/response-headers.js'
export { JsonPatchOperation } from './views/patch/patch.js'
export { toTypeBox } from './core/typebox-lines.js'
export { typeboxValidatorCompiler } from './schema/validation.js'
