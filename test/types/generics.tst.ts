import { Type, type Static } from '@sinclair/typebox'
import type { FastifyReply, FastifyRequest } from 'fastify'
import { describe, expect, test } from 'tstyche'
import type { Schema } from '../../lib/types.js'
import {
  AsyncGenericListAPIView, AsyncGenericReadOnlyViewSet, AsyncGenericRetrieveAPIView, AsyncGenericViewSet, BaseFilter,
  CursorPage, CursorPaginationFilter, GenericListAPIView, GenericReadOnlyViewSet, GenericViewSet, MemoryRepository,
  NumberedPage, OffsetLimitFilter, OffsetPage, OrderingFilter, PaginationFilter, SearchFilter, asyncRepository,
  composeFilters, type AsyncRepository, type Criteria, type CriteriaOf, type KwargsOf, type CursorPageOf,
  type FilterArgs, type FilterClass, type NumberedPageOf, type NumberedPageSchema, type OffsetPageOf, type OrderKey,
  type PageWindow, type Repository, type RepositoryOptions, type Pagination, NumberedPages, OffsetPages
} from '../../lib/generics.js'
import { Item, ItemBody } from './schemas.js'

type ItemData = Static<typeof Item>
type Other = { slug: string }
const repo = new MemoryRepository<ItemData>({ rows: [{ id: 1, name: 'a' }] })

type AsyncItems = InstanceType<typeof AsyncGenericViewSet<{ item: ItemData }>>
type SyncItems = InstanceType<typeof GenericViewSet<{ item: ItemData }>>
declare const asyncView: AsyncItems
declare const syncView: SyncItems

describe('the repository of a generic view', () => {
  test('the async family reads an AsyncRepository<Item>, the sync family a Repository<Item>', () => {
    expect(asyncView.repository).type.toBe<AsyncRepository<ItemData>>()
    expect(syncView.repository).type.toBe<Repository<ItemData>>()
    expect(asyncView.repository.get({ id: 1 }, {})).type.toBe<Promise<ItemData | null>>()
    expect(syncView.repository.list({}, { orderBy: [] }, {})).type.toBe<ItemData[]>()
    expect<InstanceType<typeof AsyncGenericListAPIView<{ item: ItemData }>>['repository']>().type.toBe<AsyncRepository<ItemData>>()
    expect<InstanceType<typeof GenericReadOnlyViewSet<{ item: ItemData }>>['repository']>().type.toBe<Repository<ItemData>>()
  })

  test('the repository getter may be overridden with one of the right family and item', () => {
    expect(class extends AsyncGenericViewSet<{ item: ItemData }> {
      override get repository () { return asyncRepository<ItemData, MemoryRepository<ItemData>>(repo) }
    }).type.not.toRaiseError()

    expect(class extends GenericViewSet<{ item: ItemData }> {
      override get repository () { return repo }
    }).type.not.toRaiseError()

    // An overriding getter fails to compile when what it returns is not assignable to the base's `repository`.
    expect(asyncRepository<ItemData, MemoryRepository<ItemData>>(repo)).type.toBeAssignableTo<AsyncItems['repository']>()
    expect(repo).type.not.toBeAssignableTo<AsyncItems['repository']>()

    expect(repo).type.toBeAssignableTo<SyncItems['repository']>()
    expect<MemoryRepository<Other>>().type.not.toBeAssignableTo<SyncItems['repository']>()
  })
})

describe('the hooks of a generic view', () => {
  test('getKwargs, getRepositoryOptions, getFilter, resolveFilter and getFilterArgs have the documented types', () => {
    expect(asyncView.getKwargs).type.toBe<(action?: string) => Criteria>()
    expect(asyncView.getRepositoryOptions).type.toBe<(action: string) => RepositoryOptions>()
    expect(asyncView.getFilter).type.toBe<(request: FastifyRequest) => BaseFilter | undefined>()
    expect(asyncView.resolveFilter).type.toBe<(filter: BaseFilter) => FilterArgs>()
    expect(asyncView.getFilterArgs).type.toBe<(filter: BaseFilter | undefined, action?: string) => FilterArgs>()
    expect(syncView.getKwargs).type.toBe<(action?: string) => Criteria>()
    expect(syncView.getFilterArgs).type.toBe<(filter: BaseFilter | undefined, action?: string) => FilterArgs>()
    expect<FilterArgs>().type.toBe<{ args: unknown[], kwargs: Criteria }>()
  })

  test('the hooks are overridable with their types', () => {
    expect(class extends AsyncGenericViewSet<{ item: ItemData }> {
      override getKwargs (): Criteria { return { tenant: this.request.headers['x-tenant'] } }
      override getRepositoryOptions (action: string): RepositoryOptions { return { action } }
      override resolveFilter (filter: BaseFilter): FilterArgs { return { args: ['raw sql'], kwargs: filter.asKwargs() } }
    }).type.not.toRaiseError()

    // An override fails to compile when its type is not assignable to the base method's.
    expect<() => Criteria>().type.toBeAssignableTo<SyncItems['getKwargs']>()
    expect<() => string>().type.not.toBeAssignableTo<SyncItems['getKwargs']>()

    expect<(filter: BaseFilter) => FilterArgs>().type.toBeAssignableTo<SyncItems['resolveFilter']>()
    expect<(filter: BaseFilter) => Criteria>().type.not.toBeAssignableTo<SyncItems['resolveFilter']>()
  })
})

describe('the statics of a generic view', () => {
  test('repository, filter and repositoryOptions', () => {
    expect(AsyncGenericViewSet.repository).type.toBe<AsyncRepository<unknown> | undefined>()
    expect(GenericViewSet.repository).type.toBe<Repository<unknown> | undefined>()
    expect(AsyncGenericListAPIView.filter).type.toBe<FilterClass | null>()
    expect(GenericViewSet.repositoryOptions).type.toBe<RepositoryOptions>()
    expect(AsyncGenericReadOnlyViewSet.detailParams).type.toBe<Schema>()
    expect(AsyncGenericListAPIView).type.not.toHaveProperty('detailParams')
    expect(AsyncGenericRetrieveAPIView).type.not.toHaveProperty('createSchema')
  })

  test('a static repository must follow the family', () => {
    expect(class extends AsyncGenericViewSet<{ item: ItemData }> {
      static override repository = asyncRepository<ItemData, MemoryRepository<ItemData>>(repo)
      static override filter = PaginationFilter
      static override repositoryOptions = { batch_size: 10 }
      static override createSchema = ItemBody
    }).type.not.toRaiseError()

    expect(class extends GenericViewSet<{ item: ItemData }> {
      static override repository = repo
      static override filter = composeFilters(OrderingFilter, SearchFilter)
    }).type.not.toRaiseError()

    // `static override x = value` fails to compile when the type of value is not assignable to the base's static.
    expect(
      asyncRepository<ItemData, MemoryRepository<ItemData>>(repo)
    ).type.toBeAssignableTo<typeof AsyncGenericViewSet.repository>()
    expect(repo).type.not.toBeAssignableTo<typeof AsyncGenericViewSet.repository>()

    expect(PaginationFilter).type.toBeAssignableTo<typeof GenericViewSet.filter>()
    expect(class {}).type.not.toBeAssignableTo<typeof GenericViewSet.filter>()
  })

  test('a static repository of other items is an error', () => {
    // Statics cannot see the class's type argument: `repository` is `Repository<unknown>`,
    // so any repository of the family fits. A documented limit (docs/generics.md): override the
    // `repository` getter to have it checked against the item type.
    expect.fail<MemoryRepository<Other>>().type.not.toBeAssignableTo<typeof GenericViewSet.repository>()
  })

  test('a list over a paginating filter is typed by { list }', () => {
    expect(class extends AsyncGenericListAPIView<{ item: ItemData, list: NumberedPageOf<ItemData> }> {
      static override filter = PaginationFilter
      override async list (request: FastifyRequest) {
        const page = await super.list(request)
        return page
      }
    }).type.not.toRaiseError()
    expect<ReturnType<InstanceType<typeof GenericListAPIView<{ item: ItemData, list: OffsetPageOf<ItemData> }>>['list']>>()
      .type.toBe<OffsetPageOf<ItemData> | FastifyReply>()
  })
})

describe('repositories', () => {
  test('MemoryRepository is a sync Repository, not an AsyncRepository', () => {
    expect<MemoryRepository<ItemData>>().type.toBeAssignableTo<Repository<ItemData>>()
    expect<MemoryRepository<ItemData>>().type.not.toBeAssignableTo<AsyncRepository<ItemData>>()
    expect<MemoryRepository<ItemData>>().type.not.toBeAssignableTo<Repository<Other>>()
  })

  test('asyncRepository makes a sync repository an AsyncRepository', () => {
    const wrapped = asyncRepository<ItemData, MemoryRepository<ItemData>>(repo)
    expect(wrapped).type.toBeAssignableTo<AsyncRepository<ItemData>>()
    expect(wrapped).type.not.toBeAssignableTo<Repository<ItemData>>()
    expect(wrapped.get({ id: 1 }, {})).type.toBe<Promise<ItemData | null>>()
    expect(wrapped.createMany([{ name: 'b' }], {})).type.toBe<Promise<ItemData[]>>()
  })

  test('MemoryRepository options are typed by the item', () => {
    expect(MemoryRepository<ItemData>).type.toBeConstructableWith({ rows: [{ id: 1, name: 'a' }], unique: ['name'], idField: 'id' })
    expect(MemoryRepository<ItemData>).type.not.toBeConstructableWith({ rows: [{ slug: 'a' }] })
    expect(MemoryRepository<ItemData>).type.not.toBeConstructableWith({ unique: 'name' })
  })
})

describe('pages', () => {
  test('NumberedPage(Item) has the numbered wire fields', () => {
    const Page = NumberedPage(Item)
    expect(Page).type.toBe<NumberedPageSchema<typeof Item>>()
    expect<Static<typeof Page>>().type.toBe<{
      items: ItemData[],
      current_page: number,
      page_size: number,
      total_pages: number,
      total_items: number,
      has_more: boolean
    }>()
    expect<NumberedPageOf<ItemData>>().type.toBeAssignableTo<Static<typeof Page>>()
  })

  test('OffsetPage(Item) has the offset wire fields', () => {
    const Page = OffsetPage(Item)
    expect<Static<typeof Page>>().type.toBe<{
      items: ItemData[],
      offset: number,
      limit: number,
      total_items: number,
      has_more: boolean
    }>()
    expect<Static<typeof Page>>().type.not.toHaveProperty('current_page')
    expect<OffsetPageOf<ItemData>>().type.toBeAssignableTo<Static<typeof Page>>()
  })

  test('CursorPage(Item) has nullable cursors', () => {
    const Page = CursorPage(Item)
    expect<Static<typeof Page>>().type.toBe<{
      items: ItemData[],
      next_page: string | null,
      previous_page: string | null
    }>()
    expect<Static<typeof Page>['next_page']>().type.toBe<string | null>()
    expect<Static<typeof Page>>().type.not.toHaveProperty('total_items')
    expect<CursorPageOf<ItemData>>().type.toBeAssignableTo<Static<typeof Page>>()
  })

  test('pages take schemas only', () => {
    expect(NumberedPage).type.not.toBeCallableWith({ id: 1 })
    expect(CursorPage).type.not.toBeCallableWith('Item')
  })
})

describe('filters', () => {
  test('the paginator is a static, typed as its own pagination on the named filters; the old pagination kind is gone', () => {
    expect(PaginationFilter.paginator).type.toBe<NumberedPages>()
    expect(OffsetLimitFilter.paginator).type.toBe<OffsetPages>()
    expect(BaseFilter.paginator).type.toBe<Pagination | null>()
    expect(CursorPaginationFilter).type.toBeAssignableTo<FilterClass>()
    expect(BaseFilter).type.not.toHaveProperty('pagination')
    expect(BaseFilter.with).type.not.toBeCallableWith({ pagination: 'page' })
  })

  test('composeFilters returns a filter class', () => {
    const F = composeFilters(OrderingFilter, SearchFilter, PaginationFilter)
    expect(F).type.toBe<FilterClass>()
    expect(new F({}).asKwargs()).type.toBe<Criteria>()
    expect(new F({}).window).type.toBe<PageWindow>()
    expect(new F({}).ordering).type.toBe<OrderKey[]>()
    expect(composeFilters).type.not.toBeCallableWith(class {})
    expect(composeFilters).type.not.toBeCallableWith('page')
  })

  test('filter statics are typed', () => {
    expect(class extends PaginationFilter {
      static override fields = { name: Type.String() }
      static override operators = { price: ['gt', 'le'] as const }
      static override operatorFields = { price: Type.Number() }
      static override orderingFields = ['name', 'price']
      static override maxPageSize = 10
    }).type.not.toRaiseError()

    // `static override x = value` fails to compile when the type of value is not assignable to the base's static.
    expect({ price: ['gt', 'le'] as const }).type.toBeAssignableTo<typeof BaseFilter.operators>()
    expect({ price: ['between'] as const }).type.not.toBeAssignableTo<typeof BaseFilter.operators>()

    expect(new OffsetPages()).type.toBeAssignableTo<typeof BaseFilter.paginator>()
    expect('offset' as const).type.not.toBeAssignableTo<typeof BaseFilter.paginator>()
  })

  test('operators without `as const` are refused (the JSDoc example of BaseFilter omits it)', () => {
    // The initializer is not contextually typed by the base class: `['gt', 'le']` is `string[]`.
    const unannotated = { price: ['gt', 'le'] }
    expect(unannotated).type.toBe<{ price: string[] }>()
    expect(unannotated).type.not.toBeAssignableTo<typeof BaseFilter.operators>()
  })
})

describe('a repository called from a view of your own', () => {
  test('the query and the options may be left out, as the concrete repositories allow', () => {
    const rows = asyncRepository(new MemoryRepository<Static<typeof Item>>())
    expect(class extends AsyncGenericViewSet.with({ responseSchema: Item, repository: rows }, {
      async list () {
        const total = await this.repository.count({ name: 'lamp' }, {})
        const all = await this.repository.list({})
        const one = await this.repository.get({ id: 1 })
        return total > 0 && one !== null ? all : []
      }
    }) {}).type.not.toRaiseError()
    const sync = new MemoryRepository<Static<typeof Item>>()
    expect(sync.count({})).type.toBe<number>()
    expect((sync as Repository<Static<typeof Item>>).count({})).type.toBe<number>()
  })
})

describe('MemoryRepository options name fields of the rows', () => {
  test('unique, idField and scopeFields take the row\'s keys when rows are typed, any name when they are not', () => {
    expect(new MemoryRepository<ItemData>({ unique: ['name'], idField: 'id', scopeFields: ['name'] })).type.not.toRaiseError()
    expect(new MemoryRepository<ItemData>({ unique: ['names'] })).type.toRaiseError('Did you mean \'"name"\'?')
    expect(new MemoryRepository<ItemData>({ idField: 'key' })).type.toRaiseError('Type \'"key"\' is not assignable')
    expect(new MemoryRepository({ unique: ['anything'] })).type.not.toRaiseError()
  })
})

describe('getKwargs scopes by the fields of the repository\'s rows', () => {
  type Row = ItemData & { tenant_id: number }
  const rows = asyncRepository(new MemoryRepository<Row>())

  test('a field of the rows, hidden or shown, or one with an operator, is accepted', () => {
    expect(AsyncGenericViewSet.with).type.toBeCallableWith(
      { responseSchema: Item, repository: rows },
      { getKwargs () { return { tenant_id: 1 } } }
    )
    expect(AsyncGenericViewSet.with).type.toBeCallableWith({ responseSchema: Item, repository: rows }, { getKwargs () { return { name__in: ['a'] } } })
    expect(AsyncGenericViewSet.with).type.toBeCallableWith(
      { responseSchema: Item, repository: rows },
      { getKwargs () { return {} } }
    )
  })

  test('an answer naming no field of the rows (a misspelt column) is refused, naming the rows', () => {
    expect(
      AsyncGenericViewSet.with({ responseSchema: Item, repository: rows }, { getKwargs () { return { tenant: 1 } } })
    )
      .type.toRaiseError("Type '{ tenant: number; }' has no properties in common with type 'CriteriaOf<")
  })

  test('rows typed as any record, or no repository, leave the criteria open', () => {
    const records = asyncRepository(new MemoryRepository<Record<string, unknown>>())
    expect(AsyncGenericViewSet.with).type.toBeCallableWith(
      { responseSchema: Item, repository: records },
      { getKwargs () { return { tenant: 1 } } }
    )
    expect(AsyncGenericViewSet.with).type.toBeCallableWith(
      { responseSchema: Item },
      { getKwargs () { return { tenant: 1 } } }
    )
    expect<KwargsOf<{ item: ItemData }>>().type.toBe<Criteria>()
    expect<KwargsOf<{ row: Row }>>().type.toBe<CriteriaOf<Row>>()
  })
})

describe('objectPermissionActions', () => {
  test('names actions on named objects only', () => {
    expect(GenericViewSet.with({ responseSchema: Item, repository: repo, objectPermissionActions: ['update', 'destroy'] })).type.not.toRaiseError()
    expect(GenericViewSet.with({ responseSchema: Item, repository: repo, objectPermissionActions: ['delete'] })).type.toRaiseError("'\"delete\"'")
    expect(GenericViewSet.with({ responseSchema: Item, repository: repo, objectPermissionActions: ['create'] })).type.toRaiseError("'\"create\"'")
  })
})
