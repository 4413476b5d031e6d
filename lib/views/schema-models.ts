import type { Static, TSchema } from '@sinclair/typebox'
import type { PaginationKind } from '../query/filters.js'
import type { CursorPageOf, NumberedPageOf, OffsetPageOf } from '../query/pagination.js'

/** The one model a schema static gives, under the model's name; nothing when the static is absent. */
type From<C, K extends string, Model extends string> = C extends { readonly [P in K]: infer T extends TSchema } ? { [P in Model]: Static<T> } : unknown

/** `update` is typed by `updateSchema`, or by `createSchema`, which it defaults to. */
type UpdateModel<C> = C extends { readonly updateSchema: infer T extends TSchema } ? { update: Static<T> }
  : C extends { readonly createSchema: infer T extends TSchema } ? { update: Static<T> } : unknown

/** `partialUpdate` is typed by `partialUpdateSchema`, or is the update body with every member optional. */
type PartialUpdateModel<C> = C extends { readonly partialUpdateSchema: infer T extends TSchema } ? { partialUpdate: Static<T> }
  : UpdateModel<C> extends { update: infer U } ? { partialUpdate: Partial<U> } : unknown

/** The page a list answers for each pagination kind of its filter. */
interface PageOf<T> { page: NumberedPageOf<T>, offset: OffsetPageOf<T>, cursor: CursorPageOf<T>, none: T[] }

/** What `list` returns: the page its filter's pagination makes, or the array of items. */
type ListModel<C> = C extends { readonly responseSchema: infer T extends TSchema }
  ? C extends { readonly filter: { readonly pagination: infer K extends PaginationKind } } ? { list: PageOf<Static<T>>[K] } : unknown
  : unknown

/**
 * The item types of a view, read from the schemas given to `.with({...})`: `item` from
 * `responseSchema`, `create` from `createSchema`, `update` from `updateSchema` (default
 * `createSchema`), `partialUpdate` from `partialUpdateSchema` (default: the update body,
 * every member optional), `bulkUpdate` from `bulkUpdateSchema`, `params` from `detailParams`,
 * and `list` from the filter's pagination. A schema left out leaves its model at the default.
 */
export type ModelsOf<C> =
  From<C, 'responseSchema', 'item'> & From<C, 'createSchema', 'create'> & UpdateModel<C> & PartialUpdateModel<C> &
  From<C, 'bulkUpdateSchema', 'bulkUpdate'> & From<C, 'detailParams', 'params'> & ListModel<C>
