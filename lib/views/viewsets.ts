// The ready-made viewsets (views layer): compositions of the action, generic and bulk views, as DRF's, and no new code.
import {
  AsyncCreateAPIView, AsyncDestroyAPIView, AsyncListAPIView, AsyncPartialUpdateAPIView, AsyncRetrieveAPIView,
  AsyncUpdateAPIView,
  CreateAPIView, DestroyAPIView, ListAPIView, PartialUpdateAPIView, RetrieveAPIView, UpdateAPIView
} from './actions/action-views.js'
import {
  AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView, AsyncGenericListAPIView, AsyncGenericPartialUpdateAPIView,
  AsyncGenericRetrieveAPIView,
  AsyncGenericUpdateAPIView, GenericCreateAPIView, GenericDestroyAPIView, GenericListAPIView,
  GenericPartialUpdateAPIView, GenericRetrieveAPIView,
  GenericUpdateAPIView
} from './generic/generic-actions.js'
import {
  AsyncGenericBulkCreateAPIView, AsyncGenericBulkDestroyAPIView, AsyncGenericBulkUpdateAPIView,
  AsyncGenericUpdateManyAPIView,
  GenericBulkCreateAPIView, GenericBulkDestroyAPIView, GenericBulkUpdateAPIView, GenericUpdateManyAPIView
} from './bulk/generic-bulk.js'
import { mix, named } from './mixins.js'

// Ready-made viewsets are compositions of the action views, as in DRF: no new code.

/** Every CRUD action, to implement: list, create, retrieve, update, partialUpdate, destroy. */
export const AsyncAPIViewSet = named('AsyncAPIViewSet', mix(AsyncListAPIView, AsyncCreateAPIView, AsyncRetrieveAPIView, AsyncUpdateAPIView, AsyncPartialUpdateAPIView, AsyncDestroyAPIView))
/** Sync counterpart of `AsyncAPIViewSet`. */
export const APIViewSet = named('APIViewSet', mix(ListAPIView, CreateAPIView, RetrieveAPIView, UpdateAPIView, PartialUpdateAPIView, DestroyAPIView))
/** list and retrieve, to implement. */
export const AsyncReadOnlyAPIViewSet = named('AsyncReadOnlyAPIViewSet', mix(AsyncListAPIView, AsyncRetrieveAPIView))
/** Sync counterpart of `AsyncReadOnlyAPIViewSet`. */
export const ReadOnlyAPIViewSet = named('ReadOnlyAPIViewSet', mix(ListAPIView, RetrieveAPIView))
/** list and create, to implement. */
export const AsyncListCreateAPIView = named('AsyncListCreateAPIView', mix(AsyncListAPIView, AsyncCreateAPIView))
/** Sync counterpart of `AsyncListCreateAPIView`. */
export const ListCreateAPIView = named('ListCreateAPIView', mix(ListAPIView, CreateAPIView))
/** retrieve, update, partialUpdate and destroy, to implement. */
export const AsyncRetrieveUpdateDestroyAPIView = named('AsyncRetrieveUpdateDestroyAPIView', mix(AsyncRetrieveAPIView, AsyncUpdateAPIView, AsyncPartialUpdateAPIView, AsyncDestroyAPIView))
/** Sync counterpart of `AsyncRetrieveUpdateDestroyAPIView`. */
export const RetrieveUpdateDestroyAPIView = named('RetrieveUpdateDestroyAPIView', mix(RetrieveAPIView, UpdateAPIView, PartialUpdateAPIView, DestroyAPIView))

/** Every CRUD action over `repository`. */
export const AsyncGenericViewSet = named('AsyncGenericViewSet', mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericRetrieveAPIView, AsyncGenericUpdateAPIView, AsyncGenericPartialUpdateAPIView, AsyncGenericDestroyAPIView))
/** Sync counterpart of `AsyncGenericViewSet`. */
export const GenericViewSet = named('GenericViewSet', mix(GenericListAPIView, GenericCreateAPIView, GenericRetrieveAPIView, GenericUpdateAPIView, GenericPartialUpdateAPIView, GenericDestroyAPIView))
/** list and retrieve over `repository`. */
export const AsyncGenericReadOnlyViewSet = named('AsyncGenericReadOnlyViewSet', mix(AsyncGenericListAPIView, AsyncGenericRetrieveAPIView))
/** Sync counterpart of `AsyncGenericReadOnlyViewSet`. */
export const GenericReadOnlyViewSet = named('GenericReadOnlyViewSet', mix(GenericListAPIView, GenericRetrieveAPIView))
/** list and create over `repository`. */
export const AsyncGenericListCreateAPIView = named('AsyncGenericListCreateAPIView', mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView))
/** Sync counterpart of `AsyncGenericListCreateAPIView`. */
export const GenericListCreateAPIView = named('GenericListCreateAPIView', mix(GenericListAPIView, GenericCreateAPIView))
/** retrieve, update, partialUpdate and destroy over `repository`. */
export const AsyncGenericRetrieveUpdateDestroyAPIView = named('AsyncGenericRetrieveUpdateDestroyAPIView', mix(AsyncGenericRetrieveAPIView, AsyncGenericUpdateAPIView, AsyncGenericPartialUpdateAPIView, AsyncGenericDestroyAPIView))
/** Sync counterpart of `AsyncGenericRetrieveUpdateDestroyAPIView`. */
export const GenericRetrieveUpdateDestroyAPIView = named('GenericRetrieveUpdateDestroyAPIView', mix(GenericRetrieveAPIView, GenericUpdateAPIView, GenericPartialUpdateAPIView, GenericDestroyAPIView))

/** The four bulk actions over `repository` on one route (docs/bulk.md): POST, PUT, PATCH, DELETE on `bulkRoute`. */
export const AsyncBulkAPIViewSet = named('AsyncBulkAPIViewSet', mix(AsyncGenericBulkCreateAPIView, AsyncGenericBulkUpdateAPIView, AsyncGenericUpdateManyAPIView, AsyncGenericBulkDestroyAPIView))
/** Sync counterpart of `AsyncBulkAPIViewSet`. */
export const BulkAPIViewSet = named('BulkAPIViewSet', mix(GenericBulkCreateAPIView, GenericBulkUpdateAPIView, GenericUpdateManyAPIView, GenericBulkDestroyAPIView))
