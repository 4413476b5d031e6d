// The pagination protocol (query layer): what a filter's pagination declares, and how a generic list reads a page through it.
import { Type, type TInteger, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { Awaitable } from '../core/maybe-promise.js'
import type { AsyncRepository, Criteria, ListQuery, OrderKey, Repository, RepositoryOptions } from '../stores/repository.js'

/** The statics of a filter that bound its pages: `maxPageSize`, `defaultPageSize` (through `pageSize()`), `tieBreaker`. */
export interface PageBounds {
  /** The filter's name, for messages. */
  readonly name: string
  /** The largest page a client may ask for. */
  readonly maxPageSize: number
  /** The most rows a page may skip (`offset`, `(page - 1) × page_size`). */
  readonly maxOffset: number
  /** The unique field that makes an ordering total (a cursor's last key), or the fields that do together (a key of several). */
  readonly tieBreaker: string | readonly string[]
  /** The page size when the client sends none: `defaultPageSize`, capped at `maxPageSize`. */
  pageSize (): number
}

/** The window of rows one request asks for, in the terms of its pagination (`{ kind: 'offset', offset, limit }`). */
export interface PageWindow {
  /** Names the window's shape: `'page'`, `'offset'`, `'cursor'` for the built-in paginations, `'none'` without one. */
  readonly kind: string
}

/** What a pagination reads a window from: one request's validated query, its filter's bounds and ordering. */
export interface PageQuery {
  /** The validated query parameters. */
  readonly values: Readonly<Record<string, unknown>>
  readonly bounds: PageBounds
  /** The sort keys the request asked for (or the filter's `defaultOrdering`). */
  readonly ordering: readonly OrderKey[]
}

/** What a pagination reads a page from: the repository and everything of the list but its window. */
export interface PageSource {
  readonly repository: Repository<unknown> | AsyncRepository<unknown>
  /** The criteria of the filter, with the view's `getKwargs('list')`. */
  readonly criteria: Criteria
  /** The list query without a window: `orderBy`, `search`, `args`. */
  readonly query: ListQuery
  /** The view's `getRepositoryOptions('list')`. */
  readonly options: RepositoryOptions
  readonly bounds: PageBounds
}

/** A stored field a pagination reads by, with the static of the filter that names it (checked at registration). */
export interface PageField { field: string, static: string }

/**
 * How a list pages (docs/filters.md#pagination): its query parameters, the window of a request,
 * how that window is read from a repository, and the page it answers, as a schema and as a type.
 * A filter names one in its `paginator` static; `null` lists everything as an array.
 *
 * `item` and `page` are types only, never set at run time: `page` is the page of `this['item']`,
 * so `PageOf<P, Article>` is what a list of articles answers through `P`. A class declares them
 * with `declare readonly page: ArticleList<this['item']>`.
 */
export interface Pagination<W extends PageWindow = PageWindow> {
  /** The item type of a page (type only). */
  readonly item?: unknown
  /** The page of `this['item']` (type only). */
  readonly page?: unknown
  /** The query parameters it reads, by name, each schema bounded; built once per filter, at registration. */
  parameters (bounds: PageBounds): Record<string, TSchema>
  /** The stored fields it reads by (a cursor's tie-breaker), checked against the repository at registration. */
  namedFields (bounds: PageBounds): PageField[]
  /** The window one request asks for; throws the 400 of a value the schema could not refuse (a foreign cursor). */
  window (query: PageQuery): W
  /** The schema of a page of `item`: named `<$id><suffix>` when `item` has an `$id`, built once per item schema. */
  pageSchema (item: TSchema): TSchema
  /** Reads the page of `window` (with the repository's `listAndCount` when it counts, so page and total agree). */
  read (source: PageSource, window: W): Awaitable<unknown>
}

/** The page a list of `T` answers through the pagination `P`: `PageOf<OffsetPages, Article>` is `OffsetPageOf<Article>`. */
export type PageOf<P extends Pagination, T> = (P & { readonly item: T })['page']

/** The schema of a page size (`page_size`, `limit`): 1 to `maxPageSize`, the capped default page size when left out. */
export function pageSizeSchema (bounds: PageBounds): TInteger {
  return Type.Integer({ minimum: 1, maximum: bounds.maxPageSize, default: bounds.pageSize() })
}

/** A pagination whose pages are objects: the members for an item schema, and the name the page takes after its item's. */
export interface Envelope {
  /** The members of a page of `item`: `{ articles: Type.Array(item), articlesCount: Type.Integer() }`. */
  envelopeSchema (item: TSchema): TProperties
  /** The page schema's `$id` is the item's followed by this (`Article` + `List`); default: the class name. */
  readonly suffix: string
}

/** The default `suffix` of a pagination: its class name (`ArticlePages`), or `Page` for a class without one. */
export const classSuffix = (pagination: object): string => pagination.constructor.name || 'Page'

const envelopes = new WeakMap<object, WeakMap<TSchema, TObject>>()

/**
 * The page schema of an envelope for `item`: named `<$id><suffix>` when the item has an `$id`, and
 * built once per class and item schema, as the document and the serializer need one object per name.
 */
export function envelopePage (envelope: Envelope, item: TSchema): TObject {
  const key = envelope.constructor
  let cache = envelopes.get(key)
  if (cache === undefined) envelopes.set(key, cache = new WeakMap())
  let schema = cache.get(item)
  if (schema === undefined) {
    cache.set(
      item,
      schema = Type.Object(envelope.envelopeSchema(item), pageName(item, envelope.suffix))
    )
  }
  return schema
}

/** `{ $id: 'ItemOffsetPage' }` for an item named `Item`; nothing for an item without a name (the page is documented inline). */
export function pageName (item: TSchema, suffix: string): { $id?: string } {
  return typeof item.$id === 'string' ? { $id: `${item.$id}${suffix}` } : {}
}
