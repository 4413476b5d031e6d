// The action views (views layer): one mixin per standard action, each family (async, sync) by name.
import { actionMixin, DETAIL, STANDARD_ACTIONS, type ActionViewClass, type CreateStatics, type DetailStatics, type ListStatics, type UpdateStatics } from './standard.js'
import { createMembers, listMembers } from './list-create.js'
import { UPDATE } from './update.js'

/** GET on the prefix: implement `async list(request)`. */
export const AsyncListAPIView = actionMixin<ActionViewClass<'asyncList', ListStatics>>('AsyncListAPIView', STANDARD_ACTIONS.list, [], listMembers)
/** Sync counterpart of `AsyncListAPIView`: `list(request)` returns a value. */
export const ListAPIView = actionMixin<ActionViewClass<'list', ListStatics>>('ListAPIView', STANDARD_ACTIONS.list, [], listMembers)
/** POST on the prefix, 201: implement `async create(request)`; `getLocation(obj)` sets `Location`. */
export const AsyncCreateAPIView = actionMixin<ActionViewClass<'asyncCreate', CreateStatics>>('AsyncCreateAPIView', STANDARD_ACTIONS.create, [], createMembers)
/** Sync counterpart of `AsyncCreateAPIView`. */
export const CreateAPIView = actionMixin<ActionViewClass<'create', CreateStatics>>('CreateAPIView', STANDARD_ACTIONS.create, [], createMembers)
/** GET on the detail route: implement `async retrieve(request)`. */
export const AsyncRetrieveAPIView = actionMixin<ActionViewClass<'asyncRetrieve' | 'detail', DetailStatics>>('AsyncRetrieveAPIView', STANDARD_ACTIONS.retrieve, DETAIL)
/** Sync counterpart of `AsyncRetrieveAPIView`. */
export const RetrieveAPIView = actionMixin<ActionViewClass<'retrieve' | 'detail', DetailStatics>>('RetrieveAPIView', STANDARD_ACTIONS.retrieve, DETAIL)
/** PUT on the detail route: implement `async update(request)`. */
export const AsyncUpdateAPIView = actionMixin<ActionViewClass<'asyncUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('AsyncUpdateAPIView', STANDARD_ACTIONS.update, [...UPDATE, ...DETAIL])
/** Sync counterpart of `AsyncUpdateAPIView`. */
export const UpdateAPIView = actionMixin<ActionViewClass<'update' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('UpdateAPIView', STANDARD_ACTIONS.update, [...UPDATE, ...DETAIL])
/** PATCH on the detail route: implement `async partialUpdate(request)`. */
export const AsyncPartialUpdateAPIView = actionMixin<ActionViewClass<'asyncPartialUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('AsyncPartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, [...UPDATE, ...DETAIL])
/** Sync counterpart of `AsyncPartialUpdateAPIView`. */
export const PartialUpdateAPIView = actionMixin<ActionViewClass<'partialUpdate' | 'detail', DetailStatics & UpdateStatics & Pick<CreateStatics, 'createSchema'>>>('PartialUpdateAPIView', STANDARD_ACTIONS.partialUpdate, [...UPDATE, ...DETAIL])
/** DELETE on the detail route, 204: implement `async destroy(request)`. */
export const AsyncDestroyAPIView = actionMixin<ActionViewClass<'asyncDestroy' | 'detail', DetailStatics>>('AsyncDestroyAPIView', STANDARD_ACTIONS.destroy, DETAIL)
/** Sync counterpart of `AsyncDestroyAPIView`. */
export const DestroyAPIView = actionMixin<ActionViewClass<'destroy' | 'detail', DetailStatics>>('DestroyAPIView', STANDARD_ACTIONS.destroy, DETAIL)
