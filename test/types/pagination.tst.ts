import { Type, type Static, type TSchema } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import {
  AsyncGenericListAPIView, BaseFilter, CursorPages, CursorPagination, GenericListAPIView, MemoryRepository,
  NumberedPages, OffsetLimitFilter, OffsetPages, OffsetPagination,
  PageNumberPagination, PaginationFilter, asyncRepository, composeFilters,
  type CursorFacts, type CursorPageOf, type NumberedFacts, type NumberedPageOf, type OffsetFacts, type OffsetPageOf,
  type PageOf, type Pagination, ListEnvelope, type ListEnvelopeOf
} from '../../lib/generics.js'
import { Item } from './schemas.js'

// A pagination's `page` is written in terms of `this['item']` (docs/filters.md#your-own-page), so
// `PageOf<P, T>` is the page of `T`, and a view's `.with({ filter })` types its list as that page.

type ItemData = Static<typeof Item>
const item: ItemData = { id: 1, name: 'a' }
const memory = new MemoryRepository<ItemData>({ rows: [item] })
const asyncMemory = asyncRepository<ItemData, MemoryRepository<ItemData>>(memory)

interface ArticleList<T> { articles: T[], articlesCount: number }

class ArticlePages extends OffsetPagination {
  declare readonly page: ArticleList<this['item']>
  envelope (items: unknown[], { total }: OffsetFacts) { return { articles: items, articlesCount: total } }
  envelopeSchema (item: TSchema) { return { articles: Type.Array(item), articlesCount: Type.Integer({ minimum: 0 }) } }
}

interface DataPage<T> { data: T[], page: number }

class DataPages extends PageNumberPagination {
  declare readonly page: DataPage<this['item']>
  envelope (items: unknown[], { page }: NumberedFacts) { return { data: items, page } }
  envelopeSchema (item: TSchema) { return { data: Type.Array(item), page: Type.Integer() } }
}

interface Feed<T> { data: T[], next: string | null }

class FeedPages extends CursorPagination {
  declare readonly page: Feed<this['item']>
  envelope (items: unknown[], { next }: CursorFacts) { return { data: items, next } }
  envelopeSchema (item: TSchema) { return { data: Type.Array(item), next: Type.Union([Type.String(), Type.Null()]) } }
}

const ArticleFilter = OffsetLimitFilter.with({ paginator: new ArticlePages(), maxPageSize: 1000, defaultPageSize: 20 })

describe('PageOf: the page of an item type', () => {
  test('a pagination of your own answers its own page of the item', () => {
    expect<PageOf<ArticlePages, ItemData>>().type.toBe<ArticleList<ItemData>>()
    expect<PageOf<DataPages, string>>().type.toBe<DataPage<string>>()
    expect<PageOf<FeedPages, ItemData>>().type.toBe<Feed<ItemData>>()
  })

  test('the built-ins answer the pages of the original library', () => {
    expect<PageOf<NumberedPages, ItemData>>().type.toBe<NumberedPageOf<ItemData>>()
    expect<PageOf<OffsetPages, ItemData>>().type.toBe<OffsetPageOf<ItemData>>()
    expect<PageOf<CursorPages, ItemData>>().type.toBe<CursorPageOf<ItemData>>()
  })

  test('a pagination the types cannot tell pages into unknown', () => {
    expect<PageOf<Pagination, ItemData>>().type.toBe<unknown>()
  })
})

describe('a pagination class', () => {
  test('every built-in and every class of your own is a Pagination', () => {
    expect(new ArticlePages()).type.toBeAssignableTo<Pagination>()
    expect(new FeedPages({ cursor: 'after' })).type.toBeAssignableTo<Pagination>()
    expect(new NumberedPages({ pageSize: 'per_page' })).type.toBeAssignableTo<Pagination>()
    expect({ page: 1 }).type.not.toBeAssignableTo<Pagination>()
  })

  test('its parameters are renamed by name, and only the names it has', () => {
    expect(OffsetPages).type.toBeConstructableWith({ offset: 'skip', limit: 'take' })
    expect(OffsetPages).type.not.toBeConstructableWith({ page: 'p' })
    expect(NumberedPages).type.toBeConstructableWith({ page: 'p' })
    expect(CursorPages).type.not.toBeConstructableWith({ cursor: 1 })
  })

  test('the mechanisms are abstract: a class of your own says what a page is', () => {
    expect(OffsetPagination).type.not.toBeConstructableWith()
    expect(PageNumberPagination).type.not.toBeConstructableWith()
    expect(ArticlePages).type.toBeConstructableWith()
  })

  test('its envelope must build the page it declares', () => {
    expect<(items: unknown[], facts: OffsetFacts) => ArticleList<unknown>>().type.toBeAssignableTo<ArticlePages['envelope']>()
    expect<(items: unknown[], facts: OffsetFacts) => { article: unknown[], articlesCount: number }>().type.not.toBeAssignableTo<ArticlePages['envelope']>()
    expect<(items: unknown[], facts: OffsetFacts) => OffsetPageOf<unknown>>().type.not.toBeAssignableTo<ArticlePages['envelope']>()
  })

  test('a class that does not declare its page does not compile', () => {
    // No matcher takes a class body: TS2653, an abstract member (`page`) that a class expression does not implement.
    expect(class extends OffsetPagination {
      envelope (items: unknown[], { total }: OffsetFacts) { return { articles: items, articlesCount: total } }
      envelopeSchema (item: TSchema) { return { articles: Type.Array(item) } }
    }).type.toRaiseError(2653)
  })
})

describe('a filter names its pagination', () => {
  test('.with({ paginator }) takes any pagination, on any filter, and nothing else', () => {
    expect(OffsetLimitFilter.with).type.toBeCallableWith({ paginator: new ArticlePages() })
    expect(PaginationFilter.with).type.toBeCallableWith({ paginator: new FeedPages(), maxPageSize: 10 })
    expect(BaseFilter.with).type.toBeCallableWith({ paginator: null })
    expect(BaseFilter.with).type.not.toBeCallableWith({ paginator: 'offset' })
    expect(BaseFilter.with).type.not.toBeCallableWith({ paginator: { page: 1 } })
  })

  test('a class body sets it over BaseFilter; over a named filter, only a pagination of the same page', () => {
    expect(class extends BaseFilter { static override paginator = new ArticlePages() }).type.not.toRaiseError()
    expect(new ArticlePages()).type.toBeAssignableTo<typeof BaseFilter.paginator>()
    expect(new ArticlePages()).type.not.toBeAssignableTo<typeof OffsetLimitFilter.paginator>()
    expect(new OffsetPages({ limit: 'take' })).type.toBeAssignableTo<typeof OffsetLimitFilter.paginator>()
  })

  test('the named filters declare the type of their own pagination', () => {
    expect(PaginationFilter.paginator).type.toBe<NumberedPages>()
    expect(OffsetLimitFilter.paginator).type.toBe<OffsetPages>()
    expect(BaseFilter.paginator).type.toBe<Pagination | null>()
  })
})

describe('a view\'s list is typed by its filter\'s pagination', () => {
  test('a filter .with() a pagination of your own: the list answers its page', () => {
    const Articles = AsyncGenericListAPIView.with(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory }
    )
    expect<ReturnType<InstanceType<typeof Articles>['list']>>().type.toBe<Promise<ArticleList<ItemData> | FastifyReply>>()
    class Named extends OffsetLimitFilter.with({ paginator: new ArticlePages() }) {}
    const Sync = GenericListAPIView.with({ responseSchema: Item, filter: Named, repository: memory })
    expect<ReturnType<InstanceType<typeof Sync>['list']>>().type.toBe<ArticleList<ItemData> | FastifyReply>()
  })

  test('a class body filter over BaseFilter: the list answers its page', () => {
    class Feeds extends BaseFilter { static override paginator = new FeedPages() }
    const Listed = AsyncGenericListAPIView.with({ responseSchema: Item, filter: Feeds, repository: asyncMemory })
    expect<ReturnType<InstanceType<typeof Listed>['list']>>().type.toBe<Promise<Feed<ItemData> | FastifyReply>>()
  })

  test('a list override in .with() must answer the page, not another envelope', () => {
    expect(AsyncGenericListAPIView.with).type.toBeCallableWith(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory },
      { async list () { return { articles: [item], articlesCount: 1 } } }
    )
    expect(AsyncGenericListAPIView.with).type.not.toBeCallableWith(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory },
      { async list () { return { items: [item], offset: 0, limit: 20, total_items: 1, has_more: false } } }
    )
    expect(AsyncGenericListAPIView.with).type.not.toBeCallableWith(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory },
      { async list () { return { articles: [{ id: '1' }], articlesCount: 1 } } }
    )
    expect(AsyncGenericListAPIView.with).type.not.toBeCallableWith(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory },
      { async list () { return [item] } }
    )
  })

  test('an override in the class body calls the generic list and gets the page', () => {
    expect(class extends AsyncGenericListAPIView.with(
      { responseSchema: Item, filter: ArticleFilter, repository: asyncMemory }
    ) {
      override async list (request: FastifyRequest) {
        const page = await super.list(request)
        if (this.isReply(page)) return page
        expect(page.articles).type.toBe<ItemData[]>()
        return { ...page, articlesCount: page.articles.length }
      }
    }).type.not.toRaiseError()
  })

  test('.with() on a filter that already paginates: the pagination it was given wins', () => {
    const Listed = GenericListAPIView.with(
      { responseSchema: Item, filter: PaginationFilter.with({ paginator: new DataPages() }), repository: memory }
    )
    expect<ReturnType<InstanceType<typeof Listed>['list']>>().type.toBe<DataPage<ItemData> | FastifyReply>()
  })

  test('a composed filter, whose pagination the types cannot tell: the union of the built-in pages, as before', () => {
    const Listed = GenericListAPIView.with(
      { responseSchema: Item, filter: composeFilters(ArticleFilter), repository: memory }
    )
    expect<ReturnType<InstanceType<typeof Listed>['list']>>().type.toBe<
      NumberedPageOf<ItemData> | OffsetPageOf<ItemData> | CursorPageOf<ItemData> | ItemData[] | FastifyReply
    >()
  })
})

describe('ListEnvelope: a list in one named member', () => {
  test('its page is the member holding the items, by the literal name it was given', () => {
    expect<PageOf<ListEnvelope<'comments'>, ItemData>>().type.toBe<ListEnvelopeOf<'comments', ItemData>>()
    expect<ListEnvelopeOf<'comments', ItemData>>().type.toBe<{ comments: ItemData[] }>()
    expect(new ListEnvelope('comments').member).type.toBe<'comments'>()
  })

  test('a view given it types its list as that member, and refuses another', () => {
    const Listed = GenericListAPIView.with(
      { responseSchema: Item, filter: BaseFilter.with({ paginator: new ListEnvelope('comments') }), repository: memory }
    )
    expect<ReturnType<InstanceType<typeof Listed>['list']>>().type.toBe<{ comments: ItemData[] } | FastifyReply>()
    expect(class extends AsyncGenericListAPIView.with(
      { responseSchema: Item, filter: BaseFilter.with({ paginator: new ListEnvelope('comments') }), repository: asyncMemory }
    ) {
      override async list () { return { comment: [item] } }
    }).type.toRaiseError()
  })
})

describe('listItemSchema: a list of summaries beside the full object', () => {
  const Summary = Type.Object({ id: Type.Integer() })

  test('the list is typed by the summary, one object by the response schema', () => {
    const Listed = GenericListAPIView.with({ responseSchema: Item, listItemSchema: Summary, repository: memory })
    expect<ReturnType<InstanceType<typeof Listed>['list']>>().type.toBe<Array<{ id: number }> | FastifyReply>()
    const Paged = GenericListAPIView.with(
      { responseSchema: Item, listItemSchema: Summary, filter: PaginationFilter, repository: memory }
    )
    expect<ReturnType<InstanceType<typeof Paged>['list']>>().type.toBe<NumberedPageOf<{ id: number }> | FastifyReply>()
  })

  test('a list of .with() methods must answer summaries', () => {
    expect(AsyncGenericListAPIView.with({ responseSchema: Item, listItemSchema: Summary, repository: asyncMemory }, {
      async list () { return [{ id: 1 }] }
    })).type.not.toRaiseError()
    expect(AsyncGenericListAPIView.with({ responseSchema: Item, listItemSchema: Summary, repository: asyncMemory }, {
      async list () { return [{ name: 'a' }] }
    })).type.toRaiseError()
  })
})
