// Page-number pagination (query layer): `page` and `page_size`, a counted window, the `NumberedPage` envelope.
import { Type, type TArray, type TBoolean, type TInteger, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { Awaitable } from '../core/maybe-promise.js'
import { RequestValidationError } from '../http/errors.js'
import { readCounted } from './counted-page.js'
import { classSuffix, envelopePage, pageSizeSchema, type Envelope, type PageBounds, type PageField, type PageQuery, type PageSource, type PageWindow, type Pagination } from './pagination-protocol.js'

/** The `NumberedPage` envelope of page-number pagination (wire names from the original library). */
export type NumberedPageSchema<T extends TSchema> = TObject<{
  items: TArray<T>,
  current_page: TInteger,
  page_size: TInteger,
  total_pages: TInteger,
  total_items: TInteger,
  has_more: TBoolean
}>

/** A numbered page of items, as a value. */
export interface NumberedPageOf<T> {
  items: T[],
  current_page: number,
  page_size: number,
  total_pages: number,
  total_items: number,
  has_more: boolean
}

/** The window of a page number: `{ kind: 'page', page, pageSize }`. */
export interface NumberedWindow extends PageWindow { readonly kind: 'page', readonly page: number, readonly pageSize: number }

/** What a numbered page knows besides its items, for its envelope. */
export interface NumberedFacts {
  /** The page asked for, from 1 (also past the end, with no items). */
  page: number
  pageSize: number
  /** The rows matching the criteria and search. */
  total: number
  /** `ceil(total / pageSize)`; 0 without rows. */
  totalPages: number
  /** Whether rows follow this page. */
  hasMore: boolean
}

/** The names of the query parameters of page-number pagination. */
export interface PageNumberNames { page: string, pageSize: string }

/**
 * Pages by number: a page (from 1) and a page size (1..`maxPageSize`), over the rows and their
 * total. A subclass says what a page looks like: its type (`page`, of `this['item']`), its
 * members (`envelope`) and their schema (`envelopeSchema`). `NumberedPages` is the one
 * `PaginationFilter` answers with; the parameter names are the constructor's.
 */
export abstract class PageNumberPagination implements Pagination<NumberedWindow>, Envelope {
  declare readonly item: unknown
  /** The page of `this['item']` (type only): `declare readonly page: MyPage<this['item']>`. */
  abstract readonly page: unknown
  /** The query parameters' names (default `page` and `page_size`). */
  readonly names: PageNumberNames
  /** The page schema's `$id` follows its item's: `Item` + this. */
  readonly suffix: string = classSuffix(this)

  constructor (names: Partial<PageNumberNames> = {}) {
    this.names = { page: 'page', pageSize: 'page_size', ...names }
  }

  /** The page of `items`, from what the window knows. */
  abstract envelope (items: unknown[], facts: NumberedFacts): this['page']

  /** The members of a page of `item`. */
  abstract envelopeSchema (item: TSchema): TProperties

  parameters (bounds: PageBounds): Record<string, TSchema> {
    return {
      // Bounded so that the rows a page skips stay within the filter's maxOffset at the smallest page
      // size (and an exact integer): beyond, a 400 naming the parameter. A larger page_size reaches
      // maxOffset sooner, which `window` checks.
      [this.names.page]: Type.Integer({
        minimum: 1,
        maximum: Math.min(Math.floor(Number.MAX_SAFE_INTEGER / bounds.maxPageSize), bounds.maxOffset + 1),
        default: 1
      }),
      [this.names.pageSize]: pageSizeSchema(bounds)
    }
  }

  namedFields (): PageField[] {
    return []
  }

  window ({ values, bounds }: PageQuery): NumberedWindow {
    // The values were validated by the schemas of `parameters`: integers in their bounds, or absent.
    const page = values[this.names.page] as number | undefined ?? 1
    const pageSize = values[this.names.pageSize] as number | undefined ?? bounds.pageSize()
    if ((page - 1) * pageSize > bounds.maxOffset) {
      const parameter = this.names.page
      const last = Math.floor(bounds.maxOffset / pageSize) + 1
      throw new RequestValidationError('The query string is invalid.', {
        errors: [{
          detail: `Must be at most ${last} with ${this.names.pageSize} ${pageSize}: a deeper page skips more than ${bounds.maxOffset} rows. ` +
            'Narrow the list with filters, or page it with a cursor',
          pointer: `#/${parameter}`,
          in: 'query',
          parameter
        }]
      })
    }
    return { kind: 'page', page, pageSize }
  }

  pageSchema (item: TSchema): TSchema {
    return envelopePage(this, item)
  }

  read (source: PageSource, { page, pageSize }: NumberedWindow): Awaitable<unknown> {
    const offset = (page - 1) * pageSize
    return readCounted(source, offset, pageSize, (items, total) =>
      this.envelope(items, {
        page,
        pageSize,
        total,
        totalPages: Math.ceil(total / pageSize),
        hasMore: offset + items.length < total
      }))
  }
}

/** Page-number pagination answering a `NumberedPage`: `{ items, current_page, page_size, total_pages, total_items, has_more }`. */
export class NumberedPages extends PageNumberPagination {
  declare readonly page: NumberedPageOf<this['item']>
  override readonly suffix: string = 'NumberedPage'

  envelope (items: unknown[], facts: NumberedFacts): NumberedPageOf<unknown> {
    return {
      items,
      current_page: facts.page,
      page_size: facts.pageSize,
      total_pages: facts.totalPages,
      total_items: facts.total,
      has_more: facts.hasMore
    }
  }

  envelopeSchema (item: TSchema): TProperties {
    return {
      items: Type.Array(item),
      current_page: Type.Integer({ minimum: 1 }),
      page_size: Type.Integer({ minimum: 1 }),
      total_pages: Type.Integer({ minimum: 0 }),
      total_items: Type.Integer({ minimum: 0 }),
      has_more: Type.Boolean()
    }
  }
}

/** The page-number pagination of `PaginationFilter`. */
export const numberedPages = new NumberedPages()

/** `NumberedPage(Item)`: the envelope schema, named `ItemNumberedPage` when `Item` has an `$id`. Built once per item schema. */
export function NumberedPage<T extends TSchema> (item: T): NumberedPageSchema<T> {
  return envelopePage(numberedPages, item) as NumberedPageSchema<T> // the members NumberedPages.envelopeSchema builds for `item`
}
