// The models of a typed view (views layer): the item types `.with({...})` reads from its schemas, its filter and its repository.
import type { Schema, StaticOf } from '../core/typebox-lines.js'
import type { FILTER_STATICS } from '../query/filters.js'
import type { PageOf, Pagination } from '../query/pagination-protocol.js'
import type { NumberedPages } from '../query/page-number.js'
import type { OffsetPages } from '../query/offset.js'
import type { CursorPages } from '../query/cursor.js'

/** The one model a schema static gives, under the model's name; nothing when the static is absent. */
type From<C, K extends string, Model extends string> =
  C extends { readonly [P in K]: infer T extends Schema } ? { [P in Model]: StaticOf<T> } : unknown

/** `update` is typed by `updateSchema`, or by `createSchema`, which it defaults to. */
type UpdateModel<C> = C extends { readonly updateSchema: infer T extends Schema } ? { update: StaticOf<T> }
  : C extends { readonly createSchema: infer T extends Schema } ? { update: StaticOf<T> } : unknown

/** `partialUpdate` is typed by `partialUpdateSchema`, or is the update body with every member optional. */
type PartialUpdateModel<C> = C extends { readonly partialUpdateSchema: infer T extends Schema }
  ? { partialUpdate: StaticOf<T> }
  : UpdateModel<C> extends { update: infer U } ? { partialUpdate: Partial<U> } : unknown

/**
 * What `list` returns: the page its filter's pagination makes, the `responseSchema` itself when
 * `responseSchemaAsList` is false (an envelope), or the array of items, each of `listItemSchema`
 * when it is given (a summary) and else of `responseSchema`.
 */
type ListModel<C> = C extends { readonly responseSchema: infer T extends Schema }
  ? C extends { readonly responseSchemaAsList: false } ? { list: StaticOf<T> }
    : C extends { readonly filter: infer F extends Filtering }
      ? { list: ListPage<F, ListItem<C, T>> }
      : C extends { readonly listItemSchema: infer L extends Schema } ? { list: Array<StaticOf<L>> } : unknown
  : unknown

/** The item of a list: `listItemSchema`'s when it is given, else `responseSchema`'s (`T`). */
type ListItem<C, T extends Schema> =
  C extends { readonly listItemSchema: infer L extends Schema } ? StaticOf<L> : StaticOf<T>

/** What a filter says of its pages: its paginator. */
type Filtering = { readonly paginator: unknown }

/** The page of a list through a filter whose pagination the types cannot tell (`Pagination | null`): a built-in page, or an array. */
type AnyBuiltInPage<T> = PageOf<NumberedPages, T> | PageOf<OffsetPages, T> | PageOf<CursorPages, T> | T[]

/**
 * The page a list of `T` answers through the filter `F`: the page of its `paginator` (the one its
 * `.with()` set, or the type of its static); an array when it is `null`; where the type says only
 * that it may be null (a composed filter), any of the built-in pages or an array.
 */
type ListPage<F extends Filtering, T> = FilterStatic<F, 'paginator'> extends infer P
  ? [P] extends [null] ? T[]
      : null extends P ? AnyBuiltInPage<T>
        : P extends Pagination ? PageOf<P, T> : unknown
  : never

/** The static `K` of a filter: the one its `.with({...})` set, else its declared type. */
type FilterStatic<F extends Record<K, unknown>, K extends string> = F extends { readonly [FILTER_STATICS]?: infer C }
  ? (C extends { readonly [P in K]: infer V } ? V : F[K])
  : F[K]

/**
 * The item types of a view, read from the schemas given to `.with({...})`: `item` from
 * `responseSchema`, `create` from `createSchema`, `update` from `updateSchema` (default
 * `createSchema`), `partialUpdate` from `partialUpdateSchema` (default: the update body,
 * every member optional), `bulkUpdate` from `bulkUpdateSchema`, `params` from `detailParams`,
 * `list` from the filter's pagination, and `row` and `repository` from the repository's type. A
 * schema left out leaves its model at the default.
 */
export type ModelsOf<C> =
  From<C, 'responseSchema', 'item'> & From<C, 'createSchema', 'create'> & UpdateModel<C> & PartialUpdateModel<C> &
  From<C, 'bulkUpdateSchema', 'bulkUpdate'> & ParamsModel<C> & From<C, 'prefixParams', 'prefixParams'> & ListModel<C> & RowModel<C> &
  RepositoryModel<C>

/**
 * `repository` is the repository's own type (`SqliteRepository<Row>`), with what it has beyond the
 * protocol (`transaction`); none for a repository typed `any`, or left unset.
 */
type RepositoryModel<C> = C extends { readonly repository: infer R }
  ? 0 extends 1 & R ? unknown : [R] extends [undefined] ? unknown : { repository: R }
  : unknown

/** `params` of detail routes: `detailParams` joined with the prefix's `prefixParams` (a nested view), as the route validates them. */
type ParamsModel<C> = C extends { readonly detailParams: infer D extends Schema }
  ? C extends { readonly prefixParams: infer P extends Schema } ? { params: StaticOf<P> & StaticOf<D> } : {
    params: StaticOf<D>
  }
  : C extends { readonly prefixParams: infer P extends Schema } ? { params: StaticOf<P> & { id: string } } : unknown

/**
 * `row` is the item type of the repository, when its type names its fields: what `getKwargs` may
 * scope by. Rows typed as any record, or a repository whose type does not say, give none, since a
 * hidden column (a tenant) is then as likely as a misspelt one.
 */
type RowModel<C> = unknown extends RepositoryItemOf<C> ? unknown
  : string extends keyof RepositoryItemOf<C> ? unknown
    : { row: RepositoryItemOf<C> }

/**
 * The stored rows of a view: the item type of its repository, or the item `responseSchema`
 * gives when the repository does not say (`Repository<unknown>`); `never` when neither is known.
 */
export type RowOf<C> = C extends { readonly repository: { list (...args: never[]): infer R } }
  ? Awaited<R> extends ReadonlyArray<infer T> ? (unknown extends T ? ItemOf<C> : T) : ItemOf<C>
  : ItemOf<C>

type ItemOf<C> = C extends { readonly responseSchema: infer T extends Schema } ? StaticOf<T> : never

/** The item type of a view's `repository`, or `unknown` when it has none or its type does not say. */
export type RepositoryItemOf<C> = C extends { readonly repository: { list (...args: never[]): infer R } }
  ? Awaited<R> extends ReadonlyArray<infer T> ? T : unknown
  : unknown

/**
 * Whether a view's repository holds the items its `responseSchema` describes: its rows may have
 * more fields (a hidden column), never other ones. True when either type is not known.
 */
export type RepositoryFits<C> = C extends { readonly responseSchema: infer T extends Schema }
  ? unknown extends RepositoryItemOf<C> ? true
    : string extends keyof RepositoryItemOf<C> ? true // rows typed as any record (`Record<string, unknown>`) say nothing
      : RepositoryItemOf<C> extends StaticOf<T> ? true : false
  : true

/**
 * What `softDelete.field` may be in `.with()`: a field of the repository's rows that may hold null,
 * when the repository's type names their fields; otherwise what the static declares (any name,
 * checked at registration).
 */
export type NullableFieldOf<C, Declared> = unknown extends RepositoryItemOf<C> ? Declared
  : string extends keyof RepositoryItemOf<C> ? Declared
    : NullableKeys<RepositoryItemOf<C>>

/** The keys of `R` whose values may be null. */
type NullableKeys<R> = { [K in keyof R]-?: null extends R[K] ? K : never }[keyof R] & string

/** The fields of the item `responseSchema` gives that can hold a time: a string (date-time) or a `Date`. */
export type TimeFieldOf<C> = C extends { readonly responseSchema: infer T extends Schema }
  ? { [K in keyof StaticOf<T>]-?: NonNullable<StaticOf<T>[K]> extends string | Date ? K : never }[keyof StaticOf<T>] &
    string
  : never

/** The literal members of a list of names, or none when its type says only `string`. */
type Literals<A> = A extends ReadonlyArray<infer E extends string> ? (string extends E ? never : E) : never
/** The literal keys of a record of fields, or none when its type says only `string`. */
type LiteralKeys<O> = string extends keyof O ? never : keyof O & string

/**
 * Every field a filter's `.with()` names: fields, operators, operatorFields (each as the field it
 * compares, its `fieldOf`), orderingFields, defaultOrdering (without `-`), searchFields.
 */
export type FilterFieldNames<F> = F extends { readonly [FILTER_STATICS]?: infer C }
  ? C extends object
    ? Compared<LiteralKeys<Get<C, 'fields'>> | LiteralKeys<Get<C, 'operators'>> | LiteralKeys<Get<C, 'operatorFields'>>,
      Get<C, 'fieldOf'>> | Literals<Get<C, 'orderingFields'>> | Literals<Get<C, 'searchFields'>> |
      (Literals<Get<C, 'defaultOrdering'>> extends infer O ? O extends `-${infer N}` ? N : O : never)
    : never
  : never

/** A parameter's name as the field it compares: renamed by a `fieldOf` record `M`, when there is one. */
type Compared<K, M> = [M] extends [never] ? K : K extends keyof M ? M[K] & string : K

type Get<C, K extends string> = C extends { readonly [P in K]: infer T } ? T : never

/**
 * The fields a view's filter names that its rows do not have: the typo a compiler error points
 * at. Empty when the rows or the filter's names are not known to the types.
 */
export type UnknownFilterFields<C> = C extends { readonly filter: infer F }
  // A relation path (`tags.tag`) names related rows, not the rows' own fields: checked at registration.
  ? [RowOf<C>] extends [never] ? never : Exclude<FilterFieldNames<F>, keyof RowOf<C> | `${string}.${string}`>
  : never
