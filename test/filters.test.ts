import { test } from 'tap'
import { Type } from '@sinclair/typebox'
import { APIView } from '../lib/index.js'
import {
  AsyncGenericListAPIView, BaseFilter, CursorPaginationFilter, GenericListAPIView, MemoryRepository, OffsetLimitFilter,
  OrderingFilter, PaginationFilter, SearchFilter, asyncRepository, composeFilters, UniqueViolation, type FilterClass
} from '../lib/generics.js'
import { splitCriterion } from '../lib/generics.js'
import { build, problem } from './helpers.js'
import { OPERATOR_CASES, Product, ProductFilter, SEED_ROWS, type ProductT } from './sql-cases.js'

// The same products, filter and operator table as the SQL stores (test/sql-cases.ts).
const rows: ProductT[] = SEED_ROWS.map(([id, name, price, category, description]) => ({ id, name, price, category, description, tenant: 'a', updated_at: null }))

/** Every HTTP table below runs on both families: the async list over promises, the sync one over values. */
const families = [
  { name: 'async', List: AsyncGenericListAPIView, wrap: (repo: MemoryRepository<ProductT>) => asyncRepository<ProductT, MemoryRepository<ProductT>>(repo) },
  { name: 'sync', List: GenericListAPIView, wrap: (repo: MemoryRepository<ProductT>) => repo }
] as const

/** A generic list of the seed products (a fresh store each) through `filter`. */
function products (family: (typeof families)[number], filter: FilterClass = ProductFilter) {
  return class Products extends (family.List as unknown as typeof APIView) {
    static override responseSchema = Product
    static filter = filter
    static repository = family.wrap(new MemoryRepository<ProductT>({ rows }))
  }
}

const ids = async (app: Awaited<ReturnType<typeof build>>, query: string): Promise<number[]> => {
  const res = await app.inject(`/products?${query}`)
  if (res.statusCode !== 200) throw new Error(`${query}: ${res.statusCode} ${res.body}`)
  return res.json().map((p: ProductT) => p.id)
}

/** Field operators, search and plain fields: the query and the ids it answers, in id order. */
const FIELD_CASES: Array<[string, number[]]> = [
  ['name=Lamp', [1]],
  ['category=light', [1, 2]],
  ['price__eq=45', [4]],
  ['price__ne=45', [1, 2, 3, 5]],
  ['price__lt=25', [2]],
  ['price__le=25', [2, 5]],
  ['price__gt=45', [3]],
  ['price__ge=45', [3, 4]],
  ['price__gt=20&price__lt=50', [1, 4, 5]],
  ['name__in=Desk&name__in=Chair', [3, 4]],
  ['name__in=Desk', [3]],
  ['name__not_in=Desk&name__not_in=Chair', [1, 2, 5]],
  ['category__is_null=true', [5]],
  ['category__is_null=false', [1, 2, 3, 4]],
  ['name__like=La%25', [1, 2]],
  ['name__like=la%25', []],
  ['name__ilike=la%25', [1, 2]],
  ['name__like=L_mp', [1]],
  ['description__like=100%25%20fun_stuff', [5]],
  ['description__like=%25(fun)%25', []],
  ['q=lamp', [1, 4]],
  ['q=LAMP&price__gt=40', [4]],
  ['q=', [1, 2, 3, 4, 5]]
]

/** Ordering: the ids in the order answered. */
const ORDERING_CASES: Array<[string, number[], string?]> = [
  ['sort=price', [2, 5, 1, 4, 3]],
  ['sort=-price', [3, 4, 1, 5, 2]],
  ['sort=category&sort=-price', [3, 4, 1, 2, 5], 'category first, then price descending within it'],
  ['sort=-category&sort=name', [5, 1, 2, 4, 3], 'nulls first descending'],
  ['sort=-price&sort=category', [3, 4, 1, 5, 2], 'a second key does not reorder distinct first keys'],
  ['sort=name&price__gt=20', [4, 3, 5, 1], 'ordering applies to the filtered rows']
]
const BAD_SORTS = ['sort=description', 'sort=id', 'sort=--price', 'sort=price%20', 'sort=', 'sort=price&sort=tenant']

/** Parameters a composed filter takes from its four parts. */
class ByName extends BaseFilter { static override fields = { name: Type.String() } }
class ByPrice extends OrderingFilter {
  static override operatorFields = { price: Type.Number() }
  static override operators = { price: ['gt'] as const }
  static override orderingFields = ['price']
  static override defaultOrdering = ['price']
}
class Text extends SearchFilter { static override searchFields = ['description'] }
class Paged extends PaginationFilter { static override maxPageSize = 2 }
const Composed = composeFilters(ByName, ByPrice, Text, Paged)

/** Composed queries: the ids of the page and its counters. */
const COMPOSED_CASES: Array<[string, number[], { total: number, pages: number, more: boolean, page: number }]> = [
  ['price__gt=20&q=a&sort=-price', [3, 4], { total: 3, pages: 2, more: true, page: 1 }],
  ['price__gt=20&q=a&sort=-price&page=2', [1], { total: 3, pages: 2, more: false, page: 2 }],
  ['price__gt=20&q=a', [1, 4], { total: 3, pages: 2, more: true, page: 1 }],
  ['q=camping', [2], { total: 1, pages: 1, more: false, page: 1 }],
  ['q=camping&name=Desk', [], { total: 0, pages: 0, more: false, page: 1 }],
  ['', [2, 5], { total: 5, pages: 3, more: true, page: 1 }],
  ['page=3&page_size=2', [3], { total: 5, pages: 3, more: false, page: 3 }],
  ['page=9', [], { total: 5, pages: 3, more: false, page: 9 }]
]

for (const family of families) {
  test(`${family.name}: field operators: one row per case`, async (t) => {
    const app = await build({ views: [{ view: products(family), prefix: '/products' }] })
    t.teardown(() => app.close())
    for (const [query, expected] of [...OPERATOR_CASES, ...FIELD_CASES]) t.same(await ids(app, query), expected, query)
  })

  test(`${family.name}: ordering: whitelisted keys, several applied in the order given, nulls last ascending`, async (t) => {
    const app = await build({ views: [{ view: products(family), prefix: '/products' }] })
    t.teardown(() => app.close())
    for (const [query, expected, why] of ORDERING_CASES) t.same(await ids(app, query), expected, why ?? query)
    for (const bad of BAD_SORTS) {
      const body = problem(t, await app.inject(`/products?${bad}`), 400)
      t.equal(body.errors[0].parameter, 'sort', bad)
      t.equal(body.errors[0].in, 'query', bad)
    }
  })

  test(`${family.name}: bad operator values are 400 problems`, async (t) => {
    const app = await build({ views: [{ view: products(family), prefix: '/products' }] })
    t.teardown(() => app.close())
    for (const [query, parameter] of [['price__gt=cheap', 'price__gt'], ['category__is_null=maybe', 'category__is_null'], ['price__lt=1e3', 'price__lt']]) {
      t.equal(problem(t, await app.inject(`/products?${query}`), 400).errors[0].parameter, parameter, query)
    }
  })

  test(`${family.name}: filters compose: fields, operators, ordering, search and pagination at once`, async (t) => {
    const app = await build({ views: [{ view: products(family, Composed), prefix: '/c' }] })
    t.teardown(() => app.close())
    for (const [query, expected, counters] of COMPOSED_CASES) {
      const res = await app.inject(`/c?${query}`)
      t.equal(res.statusCode, 200, query)
      const page = res.json()
      t.same(page.items.map((p: ProductT) => p.id), expected, query)
      t.same({ total: page.total_items, pages: page.total_pages, more: page.has_more, page: page.current_page }, counters, `${query}: counters`)
      t.equal(page.page_size, 2, `${query}: the default page size is capped at maxPageSize`)
    }
    for (const [query, parameter] of [['page_size=3', 'page_size'], ['sort=name', 'sort'], ['price__lt=5', undefined], ['page=0', 'page']] as const) {
      if (parameter === undefined) {
        t.equal((await app.inject(`/c?${query}`)).json().total_items, 5, `${query}: an undeclared operator is not a criterion`)
      } else {
        t.equal(problem(t, await app.inject(`/c?${query}`), 400).errors[0].parameter, parameter, query)
      }
    }
  })
}

test('sort, q and page parameters of a filter that does not declare them are ignored like any undeclared parameter', async (t) => {
  const app = await build({ views: [{ view: products(families[0], ByName), prefix: '/p' }] })
  t.teardown(() => app.close())
  const all = (await app.inject('/p')).json()
  for (const query of ['sort=-price', 'sort=-price&sort=name', 'q=lamp', 'page=2', 'cursor=abc', 'limit=1']) {
    const res = await app.inject(`/p?${query}`)
    t.equal(res.statusCode, 200, query)
    t.same(res.json(), all, `${query}: the same list`)
  }
})

test('composeFilters: parameters add up, one pagination at most, operators need a declared field', async (t) => {
  t.same(Object.keys(Composed.querySchema().properties).sort(), ['name', 'page', 'page_size', 'price__gt', 'q', 'sort'])
  t.equal(Composed.querySchema(), Composed.querySchema(), 'the query schema is built once, at registration, not per request')
  t.same(Object.keys(Composed.criteriaSchema().properties).sort(), ['name', 'price__gt'], 'bulk routes select rows by criteria alone: no sort, search or page')
  // A bound of a composed filter is the smallest of the filters that take such a parameter, whatever else they take.
  class Short extends BaseFilter {
    static override fields = { name: Type.String() }
    static override operators = { name: ['eq', 'like', 'in'] as const }
    static override maxPatternLength = 4
    static override maxListLength = 2
  }
  const bounded = composeFilters(Short, Paged)
  t.same([bounded.maxPatternLength, bounded.maxListLength], [4, 2])
  class Insensitive extends BaseFilter {
    static override fields = { name: Type.String() }
    static override operators = { name: ['ilike'] as const }
    static override maxPatternLength = 3
  }
  t.equal(composeFilters(Insensitive, Paged).maxPatternLength, 3, 'an ilike pattern is bounded like a like one')
  // Without pagination there is no page, so a default page size above the maximum cuts nothing.
  class Unpaged extends BaseFilter {
    static override fields = { name: Type.String() }
    static override defaultPageSize = 500
  }
  t.same(Object.keys(Unpaged.querySchema().properties), ['name'], 'a filter without pages ignores page sizes')
  const app = await build({ views: [{ view: products(families[1], bounded), prefix: '/b' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/b?name__like=Lamp%25'), 400).errors[0].parameter, 'name__like', 'a pattern longer than the declaring filter allows')
  t.equal(problem(t, await app.inject('/b?name__in=a&name__in=b&name__in=c'), 400).errors[0].parameter, 'name__in', 'a list longer than it allows')
  t.equal(composeFilters(ByName).paginator, null, 'composed of filters that do not page, it does not page')
  t.throws(() => composeFilters(Paged, OffsetLimitFilter), { name: 'TypeError', message: /paginate in 2 different ways/ })
  class Broken extends BaseFilter { static override operators = { ghost: ['gt'] as const } }
  t.throws(() => Broken.querySchema(), { name: 'TypeError', message: 'Broken.operators.ghost: declare the field in fields or operatorFields' })
})

test('namedFields: each stored field a filter names, with the static naming it; what sort and q take', async (t) => {
  class Everything extends CursorPaginationFilter {
    static override fields = { name: Type.String() }
    static override operators = { price: ['gt'] as const }
    static override operatorFields = { price: Type.Number() }
    static override orderingFields = ['name', 'price']
    static override defaultOrdering = ['-price']
    static override searchFields = ['description', 'name']
    static override tieBreaker = 'sku'
  }
  // The static is what a registration error names (`Everything.fields names "x"`) when the repository lacks a field.
  t.same(Everything.namedFields(), [
    { field: 'name', static: 'fields' },
    { field: 'price', static: 'operators' },
    { field: 'price', static: 'operatorFields' },
    { field: 'name', static: 'orderingFields' },
    { field: 'price', static: 'orderingFields' },
    { field: 'price', static: 'defaultOrdering' },
    { field: 'description', static: 'searchFields' },
    { field: 'name', static: 'searchFields' },
    { field: 'sku', static: 'tieBreaker' }
  ])
  const { sort, q } = Everything.querySchema().properties
  t.equal(sort.description, 'Sort keys, applied in order; prefix - for descending. One of: name, price.')
  t.equal(q.description, 'Searches description, name.')
})

test('the filter API: asKwargs, withKwargs, ordering, search, window', async (t) => {
  const f = new ProductFilter({ name: 'Lamp', price__gt: 3, sort: ['-price'], q: 'x', unknown: 1 })
  t.same(f.asKwargs(), { name: 'Lamp', price__gt: 3 }, 'only declared criteria, never sort/q/unknown')
  t.same(Object.keys(new ProductFilter({ name: undefined, price__gt: 3 }).asKwargs()), ['price__gt'], 'a criterion without a value is no criterion')
  t.match(CursorPaginationFilter.querySchema().properties.cursor, { pattern: '^[A-Za-z0-9_-]+$', maxLength: 4096, description: 'An opaque cursor from next_page or previous_page.' }, 'a cursor is base64url text of bounded length')
  const scoped = f.withKwargs({ tenant: 't', name: 'forced' })
  t.same(scoped.asKwargs(), { name: 'forced', price__gt: 3, tenant: 't' }, 'merged kwargs win over what the client sent')
  t.same(f.asKwargs(), { name: 'Lamp', price__gt: 3 }, 'withKwargs returns a copy')
  t.ok(scoped instanceof ProductFilter)
  t.same(f.ordering, [{ field: 'price', descending: true }])
  t.same(f.search, { term: 'x', fields: ['name', 'description'] })
  t.same(f.window, { kind: 'none' })
  t.same(new PaginationFilter({}).window, { kind: 'page', page: 1, pageSize: 100 })
  t.same(new OffsetLimitFilter({ offset: 5 }).window, { kind: 'offset', offset: 5, limit: 100 })
  t.same(new CursorPaginationFilter({ page_size: 3 }).window, { kind: 'cursor', pageSize: 3 })
  class Defaulted extends OrderingFilter {
    static override orderingFields = ['name']
    static override defaultOrdering = ['-name']
  }
  t.same(new Defaulted({}).ordering, [{ field: 'name', descending: true }])
  t.same(new Defaulted({}).cursorOrdering(), [{ field: 'name', descending: true }, { field: 'id', descending: false }])
  t.same(new Defaulted({ sort: ['id'] }).cursorOrdering(), [{ field: 'id', descending: false }], 'the tie-breaker is not repeated')
  t.same(Object.keys(new SearchFilter({}).constructor === SearchFilter ? SearchFilter.querySchema().properties : {}), [], 'no search fields, no q')
  t.same(splitCriterion('a__b__in'), ['a__b', 'in'])
  t.same(splitCriterion('snake_case'), ['snake_case', 'eq'])
  t.same(splitCriterion('x__unknown'), ['x__unknown', 'eq'])
})

test('the memory repository: copies in and out, unique fields, keyset seeks', async (t) => {
  const repo = new MemoryRepository<ProductT>({ rows, unique: ['name'] })
  const got = repo.get({ id: 1 }, {})!
  got.name = 'changed outside'
  t.equal(repo.get({ id: 1 }, {})!.name, 'Lamp', 'returned rows are copies')
  t.equal(repo.create({ name: 'Lamp', price: 1 }, {}), null, 'a unique clash makes create return null')
  t.equal(repo.create({ id: 2, name: 'Other', price: 1 }, {}), null, 'so does a primary key clash')
  t.throws(() => repo.update({ id: 2 }, { name: 'Lamp' }, {}), { name: 'UniqueViolation' })
  t.ok(new UniqueViolation() instanceof Error)
  t.equal(repo.update({ id: 99 }, { name: 'x' }, {}), null)
  t.same(repo.create({ name: 'New', price: 1, category: null, description: '' }, {})!.id, 6, 'keys continue after the highest')
  t.same(repo.list({}, { orderBy: [{ field: 'price', descending: false }], after: [25] }, {}).map((r) => r.id), [1, 4, 3], 'strictly after the seek values')
  t.same(repo.list({ category: null }, { orderBy: [] }, {}).map((r) => r.id), [5, 6], 'equality with null matches nulls')
  t.equal(repo.count({ category: 'light' }), 2)
  t.equal(repo.delete({ id: 6 }, {}), true)
  t.equal(repo.delete({ id: 6 }), false)
  const dates = new MemoryRepository({ rows: [{ id: 1, at: new Date('2026-01-02') }, { id: 2, at: new Date('2026-01-01') }] })
  t.same(dates.list({ at__gt: '2026-01-01T12:00:00Z' }).map((r) => r.id), [1], 'dates compare with ISO strings')
  t.same(dates.list({}, { orderBy: [{ field: 'at', descending: false }] }).map((r) => r.id), [2, 1])
  const custom = new MemoryRepository({ idField: 'code', rows: [{ code: 'b' }, { code: 'a' }] })
  t.same(custom.list({}).map((r) => r.code), ['a', 'b'])
})

test('updateMany refuses a value that would repeat a unique field, on one row too', async (t) => {
  const repo = new MemoryRepository<ProductT>({ rows, unique: ['name'] })
  t.throws(() => repo.updateMany({ name: 'Desk' }, { id: 1 }), { name: 'Conflict' })
  t.same(repo.updateMany({ price: 1 }, { id: 1 }).map((r) => r.price), [1], 'other fields update freely')
  t.same(repo.updateMany({ name: 'Lamp' }, { id: 1 }).map((r) => r.name), ['Lamp'], 'a row may keep its own value')
})

test('the memory repository writes batches all or nothing, with indexed unique checks', async (t) => {
  const repo = new MemoryRepository<ProductT>({ rows, unique: ['name'] })
  const before = repo.list({})
  t.throws(() => repo.createMany([{ name: 'A', price: 1 }, { name: 'B', price: 1 }, { name: 'A', price: 2 }]), { name: 'Conflict', message: 'Item 2 clashes with item 0.' })
  t.same(repo.list({}), before, 'a failed createMany leaves no row behind')
  t.equal(repo.createMany([{ name: 'A', price: 1 }])[0].id, 6, 'and gives back the keys it had taken')
  t.throws(() => repo.bulkUpdate([{ id: 1, name: 'Twin', price: 1 }, { id: 2, name: 'Twin', price: 2 }], {}), { name: 'Conflict', message: 'Item 1 clashes with an existing row.' }, 'two items repeating one unique value clash, as row-by-row UPDATEs would')
  t.throws(() => repo.bulkUpdate([{ id: 1, name: 'Fresh', note: 'added' }, { id: 99, name: 'x' }], {}), { name: 'NotFound' })
  t.same(repo.get({ id: 1 }), before[0], 'a failed bulkUpdate restores every row it had changed, added fields removed')
  t.equal(repo.create({ name: 'Lamp', price: 1 }), null, 'the restored row holds its unique value again')
  t.ok(repo.create({ name: 'Fresh', price: 1 }), 'and the value it had taken is free again')
  const nullable = new MemoryRepository({ unique: ['code'], rows: [{ id: 1, code: null }] })
  t.ok(nullable.create({ code: null }), 'a unique field may be null on many rows, as in SQL')
  const moved = new MemoryRepository({ unique: ['code'], rows: [{ id: 1, code: 'a' }] })
  moved.update({ id: 1 }, { id: 7, code: 'b' })
  t.same([moved.get({ id: 1 }), moved.get({ id: 7 })], [null, { id: 7, code: 'b' }], 'an update of the key moves the row')
  t.ok(moved.create({ code: 'a' }), 'and frees its old unique value')
  t.equal(moved.get({ id: 7, code: 'a' }), null, 'a key lookup still checks the other criteria')
})

test('the memory repository compares like a typed database: no cross-kind matches, nulls only match is_null', async (t) => {
  const repo = new MemoryRepository<ProductT>({ rows })
  t.equal(repo.get({ id: 'abc' }), null, "an id of another kind matches no row ('abc' is not 1)")
  t.equal(repo.delete({ id: 'zzz' }), false)
  t.same(repo.list({ category__ne: 'light' }).map((r) => r.id), [3, 4], 'ne leaves nulls out, as SQL <> does')
  t.same(repo.list({ price__gt: '20' }).map((r) => r.id), [], 'a string never compares with a number')
  t.equal(new MemoryRepository({ rows: [{ id: 1, meta: { a: 1 } }] }).get({ meta: { a: 1 } }), null, 'objects are not compared by value')
  t.equal(new MemoryRepository({ rows: [{ id: 1, at: new Date(0) }] }).get({ at: 0 }), null, 'a date never equals a number')
  t.equal(new MemoryRepository({ rows: [{ id: 1, v: Number.NaN }] }).get({ v: Number.NaN }), null, 'NaN equals nothing, as in IEEE 754')
  t.same(repo.list({ category__not_in: ['light', null] }).map((r) => r.id), [], 'NOT IN with a null in the list is never true, as in SQL')
  t.same(repo.list({}, { orderBy: [{ field: 'category', descending: false }] }).map((r) => r.id), [3, 4, 1, 2, 5])
  const mixed = new MemoryRepository({ rows: [{ id: 1, v: 'b' }, { id: 2, v: 3 }, { id: 3, v: 'a' }] })
  t.same(mixed.list({}, { orderBy: [{ field: 'v', descending: false }] }).map((r) => r.id), [2, 3, 1], 'mixed kinds sort by kind, then value')
  t.same(repo.list({}, { orderBy: [], args: [(row: ProductT) => row.price > 40] }).map((r) => r.id), [3, 4], 'function arguments filter list')
  t.equal(repo.count({}, { args: [(row: ProductT) => row.price > 40] }), 2, 'and count')
  const { asyncRepository } = await import('../lib/generics.js')
  t.same(Object.keys(asyncRepository(repo)).sort(), ['atomicPreconditions', 'bulkUpdate', 'count', 'create', 'createMany', 'delete', 'deleteMany', 'distinct', 'filledOnCreate', 'get', 'list', 'listsPerGroup', 'update', 'updateMany'], 'only the public protocol is wrapped, with its declarations')
})

test('an inherited default page size is capped at a lowered maxPageSize; composing keeps both rules', async (t) => {
  const { PaginationFilter, composeFilters, SearchFilter } = await import('../lib/generics.js')
  class Short extends PaginationFilter { static override maxPageSize = 10 }
  t.equal(Short.pageSize(), 10, 'only maxPageSize set: the inherited 100 is capped')
  t.ok(Short.querySchema(), 'and accepted')
  const composed = composeFilters(Short, SearchFilter.with({ searchFields: ['name'] }))
  t.equal(composed.pageSize(), 10, 'composed: the pager\'s capped default')
  t.ok(composed.querySchema())
  class Chosen extends PaginationFilter { static override maxPageSize = 10; static override defaultPageSize = 30 }
  t.throws(() => composeFilters(Chosen).querySchema(), { code: 'FV_ERR_PAGE_SIZE' }, 'a default the pager chose above its maximum, composed or not')
  t.throws(() => Chosen.querySchema(), { code: 'FV_ERR_PAGE_SIZE' })
})

test('a cursor belongs to the sort it was made under: replayed under another sort it is a 400 naming the cursor', async (t) => {
  const app = await build({ views: [{ view: products(families[1], composeFilters(ProductFilter, CursorPaginationFilter)), prefix: '/products' }] })
  t.teardown(() => app.close())
  const cursorOf = async (sort: string): Promise<string> => (await app.inject(`/products?${sort}&page_size=2`)).json().next_page
  for (const [made, replayed] of [['sort=price', 'sort=-price'], ['sort=-price', 'sort=price'], ['sort=-price', 'sort=-name'], ['sort=name', 'sort=price'], ['sort=price', ''], ['', 'sort=-price']]) {
    const cursor = await cursorOf(made)
    const same = await app.inject(`/products?${made}&page_size=2&cursor=${cursor}`)
    t.equal(same.statusCode, 200, `${made || 'no sort'}: its own cursor reads the next page`)
    const res = await app.inject(`/products?${replayed}&page_size=2&cursor=${cursor}`)
    const body = problem(t, res, 400)
    t.same(body.errors, [{ detail: 'Invalid cursor for this ordering', pointer: '#/cursor', in: 'query', parameter: 'cursor' }], `a cursor of ${made || 'no sort'} under ${replayed || 'no sort'}`)
  }
})

test('a cursor filter\'s tieBreaker is a field of the repository, checked at registration', async (t) => {
  const over = (filter: FilterClass) => class Listed extends GenericListAPIView {
    static override responseSchema = Product
    static override filter = filter
    static override repository = new MemoryRepository<ProductT>({ rows }) as never
  }
  await t.rejects(build({ views: [{ view: over(CursorPaginationFilter.with({ tieBreaker: 'uuid' })), prefix: '/p' }] }),
    { code: 'FV_ERR_UNKNOWN_FIELD', message: /^Cannot register Listed: .*\.tieBreaker names "uuid", which neither its responseSchema nor a row of its repository has/ })
  const paged = await build({ views: [{ view: over(PaginationFilter.with({ tieBreaker: 'uuid' })), prefix: '/p' }] })
  t.equal((await paged.inject('/p')).statusCode, 200, 'a filter that pages by number never seeks by it')
  await paged.close()
})

test('a composed filter seeks by its cursor pager\'s tieBreaker', async (t) => {
  // Names are unique here: by name, the rows read Chair, Desk, Gift card, Lamp, Lantern.
  const app = await build({ views: [{ view: products(families[0], composeFilters(ByName, CursorPaginationFilter.with({ tieBreaker: 'name', defaultPageSize: 2 }))), prefix: '/products' }] })
  t.teardown(() => app.close())
  const first = (await app.inject('/products')).json()
  t.same(first.items.map((p: ProductT) => p.id), [4, 3], 'ordered by the tie-breaker, not by id')
  t.same((await app.inject(`/products?cursor=${first.next_page as string}`)).json().items.map((p: ProductT) => p.id), [5, 1], 'and the next page seeks after the last name')
})

test('a composed filter pages by its pager\'s defaultPageSize', async (t) => {
  for (const pager of [
    PaginationFilter.with({ defaultPageSize: 3 }),
    OffsetLimitFilter.with({ defaultPageSize: 3, maxPageSize: 4 }),
    CursorPaginationFilter.with({ defaultPageSize: 3 })
  ]) {
    const app = await build({ views: [{ view: products(families[0], composeFilters(ByName, pager, Text)), prefix: '/products' }] })
    const page = (await app.inject('/products')).json()
    t.equal(page.items.length, 3, `${pager.name}: three items`)
    await app.close()
  }
})

test('fieldOf: a parameter compares a field of another name, and may share its name with a member of the items', async (t) => {
  const Author = Type.Object({ username: Type.String() })
  const Article = Type.Object({ id: Type.Integer(), title: Type.String(), author: Author, author_username: Type.String(), favorited: Type.Boolean() }, { $id: 'Article' })
  const rows = [
    { id: 1, title: 'a', author: { username: 'jake' }, author_username: 'jake', favorited: false },
    { id: 2, title: 'b', author: { username: 'ann' }, author_username: 'ann', favorited: true }
  ]
  class ArticleFilter extends BaseFilter.with({
    fields: { author: Type.String() },
    operators: { author: ['in'] },
    fieldOf: { author: 'author_username' }
  }) {}
  t.same(new ArticleFilter({ author: 'jake', author__in: ['a'] }).asKwargs(), { author_username: 'jake', author_username__in: ['a'] })
  t.same(ArticleFilter.namedFields(), [{ field: 'author_username', static: 'fields' }, { field: 'author_username', static: 'operators' }])
  const Articles = GenericListAPIView.with(
    { responseSchema: Article, filter: ArticleFilter, repository: new MemoryRepository({ rows }) }
  )
  const app = await build({ views: [{ view: Articles, prefix: '/articles' }] })
  t.same((await app.inject('/articles?author=jake')).json().map((a: { id: number }) => a.id), [1], '?author= compares author_username, not the author object')
  t.same((await app.inject('/articles?author__in=ann&author__in=x')).json().map((a: { id: number }) => a.id), [2])
  const tooMany = Array.from({ length: 101 }, (_, i) => `author__in=${i}`).join('&')
  t.match(problem(t, await app.inject(`/articles?${tooMany}`), 400).errors, [{ parameter: 'author__in' }], 'bounded as the parameter it is')
  const doc = ArticleFilter.querySchema().properties
  t.same(Object.keys(doc), ['author', 'author__in'], 'the parameters keep their names in the query schema and the document')

  // The renamed field is what registration holds to the store and the response schema (and the
  // compiler, in .with(): the filter is widened here to reach registration).
  const toWriter: FilterClass = BaseFilter.with({ fields: { author: Type.String() }, fieldOf: { author: 'writer' } })
  const Missing = GenericListAPIView.with({
    responseSchema: Article,
    filter: toWriter,
    repository: new MemoryRepository({ rows })
  })
  await t.rejects(build({ views: [{ view: Missing, prefix: '/articles' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /fields names "writer"/ })
  const Mistyped = GenericListAPIView.with({
    responseSchema: Article,
    filter: BaseFilter.with({ fields: { liked: Type.String() }, fieldOf: { liked: 'favorited' } }),
    repository: new MemoryRepository({ rows })
  })
  await t.rejects(build({ views: [{ view: Mistyped, prefix: '/articles' }] }), {
    code: 'FV_ERR_FILTER_FIELD', message: /fields\.liked takes string, but favorited \(which liked compares\) holds boolean values.*Type\.Boolean\(\)/
  })
})

test('fieldOf: a rename of nothing, a name that is no field, and two parameters that are one criterion are refused', async (t) => {
  class Two extends BaseFilter { static override fields = { a: Type.String(), b: Type.String() } }
  const refused = (statics: Record<string, unknown>, message: RegExp) => t.throws(
    () => Two.with(statics as never).querySchema(),
    { code: 'FV_ERR_FILTER_FIELD', message }
  )
  refused({ fieldOf: { c: 'x' } }, /fieldOf\.c: "c" is not a parameter of its fields or operatorFields \(a, b\)/)
  refused({ fieldOf: { a: '' } }, /fieldOf\.a: the field a parameter compares is a field name; got ""/)
  refused({ fieldOf: { a: 3 } }, /got 3/)
  refused({ fieldOf: { b: 'a' } }, /the parameters "a" and "b" are both the criterion "a"/)
  refused({ operators: { a: ['in'], b: ['in'] }, fieldOf: { a: 'x', b: 'x' } }, /"a" and "b" are both the criterion "x"/)
  refused({ fieldOf: { constructor: 'x' } }, /fieldOf\.constructor: "constructor" is not a parameter/)
  t.throws(() => BaseFilter.with({ fieldOf: { a: 'x' } }).querySchema(), { code: 'FV_ERR_FILTER_FIELD', message: /"a" is not a parameter of its fields or operatorFields \(none\)/ })
  t.same(new (BaseFilter.with({ fields: { constructor: Type.String() } }))({ constructor: 'x' }).asKwargs(), { constructor: 'x' }, 'a parameter named constructor is its own field')
  t.doesNotThrow(() => BaseFilter.with({ fields: { a: Type.String() }, operators: { b: ['in'] }, operatorFields: { b: Type.String() }, fieldOf: { b: 'a' } }).querySchema(),
    'a = and b__in on one field are two criteria')
  const Composed = composeFilters(BaseFilter.with({ fields: { a: Type.String() }, fieldOf: { a: 'x' } }), BaseFilter.with({ fields: { b: Type.String() }, fieldOf: { b: 'y' } }))
  t.same(new Composed({ a: 1, b: 2 }).asKwargs(), { x: 1, y: 2 }, 'composed filters keep each rename')
})
