// The `fastify-views/bulk` entry: all-or-nothing bulk views (create, update, update-many, destroy)
// and their viewsets, over a bulk repository.
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export {
  AsyncGenericBulkCreateAPIView, GenericBulkCreateAPIView, AsyncGenericBulkUpdateAPIView, GenericBulkUpdateAPIView,
  AsyncGenericUpdateManyAPIView, GenericUpdateManyAPIView, AsyncGenericBulkDestroyAPIView, GenericBulkDestroyAPIView
} from './views/bulk/generic-bulk.js'
export {
  AsyncBulkCreateAPIView, BulkCreateAPIView, AsyncBulkUpdateAPIView, BulkUpdateAPIView, AsyncUpdateManyAPIView,
  UpdateManyAPIView, AsyncBulkDestroyAPIView, BulkDestroyAPIView,
  type BulkStatics, type BulkHooks, type BulkModels, type GenericBulkMembers, type WithAsyncBulkRepositoryMixin,
  type WithBulkRepositoryMixin,
  type BulkCreateActions, type BulkUpdateActions, type UpdateManyActions, type BulkDestroyActions
} from './views/bulk/bulk-views.js'
export { AsyncBulkAPIViewSet, BulkAPIViewSet } from './views/viewsets.js'
export { BULK_BATCHES } from './core/channels.js'
