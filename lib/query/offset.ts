// Offset pagination (query layer): `offset` and `limit`, a counted window, the `OffsetPage` envelope.
import { Type, type TArray, type TBoolean, type TInteger, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { Awaitable } from '../core/maybe-promise.js'
import { readCounted } from './counted-page.js'
import { classSuffix, envelopePage, pageSizeSchema, type Envelope, type PageBounds, type PageField, type PageQuery, type PageSource, type PageWindow, type Pagination } from './pagination-protocol.js'

/** The `OffsetPage` envelope of offset pagination. */
export type OffsetPageSchema<T extends TSchema> = TObject<{
  items: TArray<T>,
  offset: TInteger,
  limit: TInteger,
  total_items: TInteger,
  has_more: TBoolean
}>

/** An offset page of items, as a value. */
export interface OffsetPageOf<T> { items: T[], offset: number, limit: number, total_items: number, has_more: boolean }

/** The window of an offset: `{ kind: 'offset', offset, limit }`. */
export interface OffsetWindow extends PageWindow { readonly kind: 'offset', readonly offset: number, readonly limit: number }

/** What an offset page knows besides its items, for its envelope. */
export interface OffsetFacts {
  offset: number
  limit: number
  /** The rows matching the criteria and search. */
  total: number
  /** Whether rows follow this window. */
  hasMore: boolean
}

/** The names of the query parameters of offset pagination. */
export interface OffsetNames { offset: string, limit: string }

/**
 * Pages by offset: the rows to skip (0..`maxOffset`) and how many to read (1..`maxPageSize`), over
 * the rows and their total. A subclass says what a page looks like: its type (`page`, of
 * `this['item']`), its members (`envelope`) and their schema (`envelopeSchema`). `OffsetPages` is
 * the one `OffsetLimitFilter` answers with; the parameter names are the constructor's.
 *
 * ```ts
 * interface ArticleList<T> { articles: T[], articlesCount: number }
 * class ArticlePages extends OffsetPagination {
 *   declare readonly page: ArticleList<this['item']>
 *   override readonly suffix = 'List'
 *   envelope (items: unknown[], { total }: OffsetFacts) { return { articles: items, articlesCount: total } }
 *   envelopeSchema (item: TSchema) { return { articles: Type.Array(item), articlesCount: Type.Integer({ minimum: 0 }) } }
 * }
 * ```
 */
export abstract class OffsetPagination implements Pagination<OffsetWindow>, Envelope {
  declare readonly item: unknown
  /** The page of `this['item']` (type only): `declare readonly page: MyPage<this['item']>`. */
  abstract readonly page: unknown
  /** The query parameters' names (default `offset` and `limit`). */
  readonly names: OffsetNames
  /** The page schema's `$id` follows its item's: `Item` + this. */
  readonly suffix: string = classSuffix(this)

  constructor (names: Partial<OffsetNames> = {}) {
    this.names = { offset: 'offset', limit: 'limit', ...names }
  }

  /** The page of `items`, from what the window knows. */
  abstract envelope (items: unknown[], facts: OffsetFacts): this['page']

  /** The members of a page of `item`. */
  abstract envelopeSchema (item: TSchema): TProperties

  parameters (bounds: PageBounds): Record<string, TSchema> {
    return {
      // Bounded by the filter's maxOffset (the rows a store would read to skip them): one beyond is a 400 naming the parameter.
      [this.names.offset]: Type.Integer({ minimum: 0, maximum: bounds.maxOffset, default: 0 }),
      [this.names.limit]: pageSizeSchema(bounds)
    }
  }

  namedFields (): PageField[] {
    return []
  }

  window ({ values, bounds }: PageQuery): OffsetWindow {
    // The values were validated by the schemas of `parameters`: integers in their bounds, or absent.
    const offset = values[this.names.offset] as number | undefined
    const limit = values[this.names.limit] as number | undefined
    return { kind: 'offset', offset: offset ?? 0, limit: limit ?? bounds.pageSize() }
  }

  pageSchema (item: TSchema): TSchema {
    return envelopePage(this, item)
  }

  read (source: PageSource, { offset, limit }: OffsetWindow): Awaitable<unknown> {
    return readCounted(
      source,
      offset,
      limit,
      (items, total) => this.envelope(items, { offset, limit, total, hasMore: offset + items.length < total })
    )
  }
}

/** Offset pagination answering an `OffsetPage`: `{ items, offset, limit, total_items, has_more }`. */
export class OffsetPages extends OffsetPagination {
  declare readonly page: OffsetPageOf<this['item']>
  override readonly suffix: string = 'OffsetPage'

  envelope (items: unknown[], facts: OffsetFacts): OffsetPageOf<unknown> {
    return { items, offset: facts.offset, limit: facts.limit, total_items: facts.total, has_more: facts.hasMore }
  }

  envelopeSchema (item: TSchema): TProperties {
    return {
      items: Type.Array(item),
      offset: Type.Integer({ minimum: 0 }),
      limit: Type.Integer({ minimum: 1 }),
      total_items: Type.Integer({ minimum: 0 }),
      has_more: Type.Boolean()
    }
  }
}

/** The offset pagination of `OffsetLimitFilter`. */
export const offsetPages = new OffsetPages()

/** `OffsetPage(Item)`: named `ItemOffsetPage` when `Item` has an `$id`. Built once per item schema. */
export function OffsetPage<T extends TSchema> (item: T): OffsetPageSchema<T> {
  return envelopePage(offsetPages, item) as OffsetPageSchema<T> // the members OffsetPages.envelopeSchema builds for `item`
}
