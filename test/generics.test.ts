import { test } from 'tap'
import { documentedSchema } from '../lib/openapi/swagger.js'
import { Type, type Static } from '@sinclair/typebox'
import type { FastifyRequest } from 'fastify'
import {
  APIView, AsyncAPIViewSet, APIViewSet, AsyncReadOnlyAPIViewSet, ReadOnlyAPIViewSet, AsyncListCreateAPIView,
  ListCreateAPIView, AsyncRetrieveUpdateDestroyAPIView, RetrieveUpdateDestroyAPIView
} from '../lib/index.js'
import { Conflict } from '../lib/errors.js'
import {
  AsyncGenericCreateAPIView, AsyncGenericListAPIView, AsyncGenericReadOnlyViewSet, AsyncGenericViewSet,
  CursorPaginationFilter, GenericListAPIView, GenericReadOnlyViewSet, GenericViewSet, MemoryRepository,
  OffsetLimitFilter, PaginationFilter, asyncRepository, AsyncGenericListCreateAPIView, GenericListCreateAPIView,
  AsyncGenericRetrieveUpdateDestroyAPIView, GenericRetrieveUpdateDestroyAPIView, BaseFilter, OrderingFilter,
  SearchFilter, composeFilters, type Criteria, type ListQuery, type NumberedPageOf, type RepositoryOptions
} from '../lib/generics.js'
import { build, expectActions, problem } from './helpers.js'

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), tenant: Type.String() }, { $id: 'Item' })
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
/** The body of a view whose getKwargs does not give the tenant: the client names it. */
const TenantItemIn = Type.Object({ ...ItemIn.properties, tenant: Type.String() })
const IdParams = Type.Object({ id: Type.Integer() })
type ItemT = Static<typeof Item>

function seed (): MemoryRepository<ItemT> {
  return new MemoryRepository<ItemT>({
    unique: ['name'],
    rows: [
      { id: 1, name: 'apple', price: 3, tenant: 'a' },
      { id: 2, name: 'banana', price: 1, tenant: 'a' },
      { id: 3, name: 'cherry', price: 5, tenant: 'b' }
    ]
  })
}

/** The same table runs on the async family (promises from the repository) and the sync one (values). */
const families = [
  {
    name: 'async',
    ViewSet: AsyncGenericViewSet,
    List: AsyncGenericListAPIView,
    wrap: (repo: MemoryRepository<ItemT>) => asyncRepository<ItemT, MemoryRepository<ItemT>>(repo),
    ReadOnly: AsyncGenericReadOnlyViewSet,
    ListCreate: AsyncGenericListCreateAPIView,
    RetrieveUpdateDestroy: AsyncGenericRetrieveUpdateDestroyAPIView
  },
  {
    name: 'sync',
    ViewSet: GenericViewSet,
    List: GenericListAPIView,
    wrap: (repo: MemoryRepository<ItemT>) => repo,
    ReadOnly: GenericReadOnlyViewSet,
    ListCreate: GenericListCreateAPIView,
    RetrieveUpdateDestroy: GenericRetrieveUpdateDestroyAPIView
  }
] as const
type Family = (typeof families)[number]

/** The ready-made generic viewsets of each family, with the actions each composes. */
const VIEWSETS: Array<{ name: string, Base: (f: Family) => unknown, actions: string[] }> = [
  { name: 'full viewset', Base: (f) => f.ViewSet, actions: ['list', 'create', 'retrieve', 'update', 'partialUpdate', 'destroy'] },
  { name: 'read-only viewset', Base: (f) => f.ReadOnly, actions: ['list', 'retrieve'] },
  { name: 'list-create view', Base: (f) => f.ListCreate, actions: ['list', 'create'] },
  { name: 'retrieve-update-destroy view', Base: (f) => f.RetrieveUpdateDestroy, actions: ['retrieve', 'update', 'partialUpdate', 'destroy'] }
]

function tenantView (family: Family, repo: MemoryRepository<ItemT>) {
  class Items extends (family.ViewSet as unknown as typeof APIView) {
    static override responseSchema = Item
    static createSchema = ItemIn
    static detailParams = IdParams
    static repository = family.wrap(repo)
    // Tenant scoping: every read, write and create is limited to the caller's tenant.
    getKwargs (): Criteria { return { tenant: this.request.headers['x-tenant'] } }
    getLocation (item: ItemT) { return `/items/${item.id}` }
  }
  return Items
}

/** A memory repository that records the criteria of every call, to show what getKwargs merged in. */
class Recording extends MemoryRepository<ItemT> {
  readonly calls: Array<[string, Criteria]> = []
  override list (criteria: Criteria, query?: ListQuery, options?: RepositoryOptions) { this.calls.push(['list', criteria]); return super.list(criteria, query, options) }
  override count (criteria: Criteria, query?: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions) { this.calls.push(['count', criteria]); return super.count(criteria, query, options) }
  override get (criteria: Criteria, options?: RepositoryOptions) { this.calls.push(['get', criteria]); return super.get(criteria, options) }
  override update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions) { this.calls.push(['update', criteria]); return super.update(criteria, values, options) }
  override delete (criteria: Criteria, options?: RepositoryOptions) { this.calls.push(['delete', criteria]); return super.delete(criteria, options) }
}

/** Filters that declare `tenant` themselves: one class, and the same parameters composed from four. */
const TENANT_OPERATORS = ['ne', 'in', 'not_in', 'like'] as const
class TenantScoped extends BaseFilter {
  static override fields = { tenant: Type.String(), name: Type.String() }
  static override operators = { tenant: TENANT_OPERATORS }
  static override orderingFields = ['name']
  static override searchFields = ['name', 'tenant']
}
class TenantOps extends BaseFilter {
  static override fields = { tenant: Type.String() }
  static override operators = { tenant: TENANT_OPERATORS }
}
class ByName extends OrderingFilter {
  static override fields = { name: Type.String() }
  static override orderingFields = ['name']
}
class NameOrTenant extends SearchFilter { static override searchFields = ['name', 'tenant'] }
const ComposedTenant = composeFilters(TenantOps, ByName, NameOrTenant, PaginationFilter)

/**
 * A client of tenant a asks for b's rows every way the filters allow. `getKwargs` is merged through
 * `filter.withKwargs`: its `tenant` replaces the client's `tenant`, and the client's operator keys stay
 * beside it, so they can only narrow a's rows. The criteria column is what reaches `repository.list`.
 */
const TENANT_LIST: Array<[query: string, ids: number[], criteria: Criteria]> = [
  ['', [1, 2], { tenant: 'a' }],
  ['tenant=a', [1, 2], { tenant: 'a' }],
  ['tenant=b', [1, 2], { tenant: 'a' }],
  ['tenant=', [1, 2], { tenant: 'a' }],
  ['tenant__ne=a', [], { tenant: 'a', tenant__ne: 'a' }],
  ['tenant__ne=b', [1, 2], { tenant: 'a', tenant__ne: 'b' }],
  ['tenant__in=b', [], { tenant: 'a', tenant__in: ['b'] }],
  ['tenant__in=a&tenant__in=b', [1, 2], { tenant: 'a', tenant__in: ['a', 'b'] }],
  ['tenant__not_in=a', [], { tenant: 'a', tenant__not_in: ['a'] }],
  ['tenant__not_in=b', [1, 2], { tenant: 'a', tenant__not_in: ['b'] }],
  ['tenant__like=%25', [1, 2], { tenant: 'a', tenant__like: '%' }],
  ['tenant__like=b', [], { tenant: 'a', tenant__like: 'b' }],
  ['tenant=b&tenant__ne=a', [], { tenant: 'a', tenant__ne: 'a' }],
  ['tenant=b&tenant__in=b', [], { tenant: 'a', tenant__in: ['b'] }],
  ['name=cherry', [], { tenant: 'a', name: 'cherry' }],
  ['name=cherry&tenant=b', [], { tenant: 'a', name: 'cherry' }],
  ['q=cherry', [], { tenant: 'a' }],
  ['q=b', [2], { tenant: 'a' }],
  ['q=b&tenant=b', [2], { tenant: 'a' }],
  ['sort=-name&tenant__ne=b', [2, 1], { tenant: 'a', tenant__ne: 'b' }]
]

/** Bad list and detail input, one row each: the URL, where the bad value sits, and the parameter it names. */
const cursor = (wire: unknown) => '/c?cursor=' + Buffer.from(JSON.stringify(wire)).toString('base64url')
const BAD_INPUT: Array<[url: string, where: 'query' | 'path', parameter: string, method?: 'GET' | 'PUT' | 'PATCH' | 'DELETE']> = [
  ['/p?page=0', 'query', 'page'],
  ['/p?page=-1', 'query', 'page'],
  ['/p?page=1.5', 'query', 'page'],
  ['/p?page_size=51', 'query', 'page_size'],
  ['/p?page_size=0', 'query', 'page_size'],
  ['/o?limit=0', 'query', 'limit'],
  ['/o?offset=-1', 'query', 'offset'],
  ['/o?limit=1e3', 'query', 'limit'],
  ['/o?limit=10.5', 'query', 'limit'],
  ['/o?limit=101', 'query', 'limit'],
  ['/o?offset=abc', 'query', 'offset'],
  ['/p?sort=price', 'query', 'sort'],
  ['/p?sort=-price', 'query', 'sort'],
  ['/p?sort=name&sort=name', 'query', 'sort'],
  ['/c?sort=price', 'query', 'sort'],
  ['/c?cursor=not*base64', 'query', 'cursor'],
  ['/c?cursor=bm90LWpzb24', 'query', 'cursor'],
  [cursor({ d: 'n', o: ['-name', 'id'], v: ['x', 1] }), 'query', 'cursor'],
  [cursor({ d: 'n', o: ['name', 'id'], v: ['x'] }), 'query', 'cursor'],
  [cursor({ d: 'x', o: ['name', 'id'], v: ['x', 1] }), 'query', 'cursor'],
  [cursor({ d: 'n', o: ['name', 'id'], v: [{}, 1] }), 'query', 'cursor'],
  ['/c?cursor=' + Buffer.from('null').toString('base64url'), 'query', 'cursor'],
  [cursor({ d: 'n', o: 'name,id', v: ['x', 1] }), 'query', 'cursor'],
  [cursor({ d: 'p', o: ['name', 'id'], v: 'x' }), 'query', 'cursor'],
  ['/d/abc', 'path', 'id'],
  ['/d/1.5', 'path', 'id'],
  ['/d/1e3', 'path', 'id'],
  ['/d/abc', 'path', 'id', 'PUT'],
  ['/d/1.5', 'path', 'id', 'PATCH'],
  ['/d/abc', 'path', 'id', 'DELETE']
]

for (const family of families) {
  test(`${family.name}: a generic viewset does CRUD over the repository`, async (t) => {
    const repo = seed()
    const app = await build({ views: [{ view: tenantView(family, repo), prefix: '/items' }] })
    t.teardown(() => app.close())
    const a = { 'x-tenant': 'a' }

    t.same((await app.inject({ url: '/items', headers: a })).json().map((i: ItemT) => i.name), ['apple', 'banana'])
    t.same((await app.inject({ url: '/items/1', headers: a })).json(), { id: 1, name: 'apple', price: 3, tenant: 'a' })

    const created = await app.inject({ method: 'POST', url: '/items', headers: a, payload: { name: 'date', price: 2 } })
    t.equal(created.statusCode, 201)
    t.same(created.json(), { id: 4, name: 'date', price: 2, tenant: 'a' }, 'getKwargs is merged into created values')
    t.equal(created.headers.location, '/items/4')
    t.equal(problem(t, await app.inject({ method: 'POST', url: '/items', headers: a, payload: { name: 'apple', price: 1 } }), 409).title, 'Conflict', 'create returning null is a 409')

    const put = await app.inject({ method: 'PUT', url: '/items/2', headers: a, payload: { name: 'blueberry', price: 7 } })
    t.same(put.json(), { id: 2, name: 'blueberry', price: 7, tenant: 'a' })
    const patch = await app.inject({ method: 'PATCH', url: '/items/2', headers: a, payload: { price: 8 } })
    t.same(patch.json(), { id: 2, name: 'blueberry', price: 8, tenant: 'a' }, 'partial update changes only the fields sent')
    t.same((await app.inject({ method: 'PATCH', url: '/items/2', headers: a, payload: {} })).json().price, 8, 'an empty PATCH changes nothing')
    problem(t, await app.inject({ method: 'PATCH', url: '/items/2', headers: a, payload: { tenant: 'b' } }), 400)

    t.equal((await app.inject({ method: 'DELETE', url: '/items/4', headers: a })).statusCode, 204)
    problem(t, await app.inject({ method: 'DELETE', url: '/items/4', headers: a }), 404)
    problem(t, await app.inject({ method: 'PUT', url: '/items/99', headers: a, payload: { name: 'x', price: 1 } }), 404)
    problem(t, await app.inject({ method: 'PATCH', url: '/items/99', headers: a, payload: {} }), 404)
    problem(t, await app.inject({ url: '/items/99', headers: a }), 404)
  })

  test(`${family.name}: one tenant never reads or changes another's rows`, async (t) => {
    const repo = seed()
    const app = await build({ views: [{ view: tenantView(family, repo), prefix: '/items' }] })
    t.teardown(() => app.close())
    const b = { 'x-tenant': 'b' }
    t.same((await app.inject({ url: '/items', headers: b })).json().map((i: ItemT) => i.id), [3])
    problem(t, await app.inject({ url: '/items/1', headers: b }), 404)
    problem(t, await app.inject({ method: 'PUT', url: '/items/1', headers: b, payload: { name: 'stolen', price: 0 } }), 404)
    problem(t, await app.inject({ method: 'PATCH', url: '/items/1', headers: b, payload: { price: 0 } }), 404)
    problem(t, await app.inject({ method: 'DELETE', url: '/items/1', headers: b }), 404)
    t.same(repo.get({ id: 1 }, {}), { id: 1, name: 'apple', price: 3, tenant: 'a' }, "tenant a's row is untouched")
    const created = await app.inject({ method: 'POST', url: '/items', headers: b, payload: { name: 'elder', price: 4 } })
    t.equal(created.json().tenant, 'b', 'a created row belongs to its creator')
  })

  test(`${family.name}: list pages follow the filter`, async (t) => {
    const repo = new MemoryRepository<ItemT>({ rows: Array.from({ length: 25 }, (_, i) => ({ id: i + 1, name: `item-${String(i + 1).padStart(2, '0')}`, price: (i * 7) % 10, tenant: 'a' })) })
    class Pages extends PaginationFilter {
      static override maxPageSize = 10
      static override defaultPageSize = 10
      static override fields = { name: Type.String() }
      static override orderingFields = ['name', 'price']
    }
    class Offsets extends OffsetLimitFilter { static override maxPageSize = 10 }
    class Cursors extends CursorPaginationFilter {
      static override maxPageSize = 10
      static override orderingFields = ['price', 'name']
    }
    const view = (filter: unknown) => class extends (family.List as unknown as typeof APIView) {
      static override responseSchema = Item
      static filter = filter
      static repository = family.wrap(repo)
    }
    const app = await build({
      views: [
        { view: view(Pages), prefix: '/paged' },
        { view: view(Offsets), prefix: '/offset' },
        { view: view(Cursors), prefix: '/cursor' },
        { view: view(null), prefix: '/all' }
      ]
    })
    t.teardown(() => app.close())

    t.equal((await app.inject('/all')).json().length, 25, 'no filter: a plain array')

    const page = (await app.inject('/paged?page=3')).json()
    t.same(
      { ...page, items: page.items.map((i: ItemT) => i.id) },
      { items: [21, 22, 23, 24, 25], current_page: 3, page_size: 10, total_pages: 3, total_items: 25, has_more: false }
    )
    const first = (await app.inject('/paged?page_size=4&sort=-price&sort=name')).json()
    t.same(first.items.map((i: ItemT) => [i.price, i.name]), [[9, 'item-08'], [9, 'item-18'], [8, 'item-05'], [8, 'item-15']], 'several sort keys, applied in the order given')
    t.equal(first.has_more, true)
    t.equal((await app.inject('/paged?name=item-07')).json().total_items, 1)

    const offset = (await app.inject('/offset?offset=20&limit=10')).json()
    t.same(
      { ...offset, items: offset.items.length },
      { items: 5, offset: 20, limit: 10, total_items: 25, has_more: false }
    )
    t.same((await app.inject('/offset')).json().limit, 10, 'the default limit')

    // Walk all pages forward by cursor, then back again: every row once, in order.
    const seen: number[] = []
    let url: string | null = '/cursor?page_size=7&sort=-price'
    let lastPage: any
    while (url !== null) {
      const res = await app.inject(url)
      t.equal(res.statusCode, 200)
      lastPage = res.json()
      seen.push(...lastPage.items.map((i: ItemT) => i.id))
      url = lastPage.next_page === null ? null : `/cursor?page_size=7&sort=-price&cursor=${lastPage.next_page}`
    }
    const expected = repo.list({}, { orderBy: [{ field: 'price', descending: true }, { field: 'id', descending: false }] }, {}).map((i) => i.id)
    t.same(seen, expected, 'forward pages cover every row once, in order')
    const back: number[] = []
    let previous: string | null = lastPage.previous_page
    back.unshift(...lastPage.items.map((i: ItemT) => i.id))
    while (previous !== null) {
      const res = (await app.inject(`/cursor?page_size=7&sort=-price&cursor=${previous}`)).json()
      back.unshift(...res.items.map((i: ItemT) => i.id))
      previous = res.previous_page
    }
    t.same(back, expected, 'backward pages cover every row once, in order')
    const start = (await app.inject('/cursor?page_size=7&sort=-price')).json()
    t.equal(start.previous_page, null, 'no previous page on the first page')
  })

  test(`${family.name}: the ready-made generic viewsets answer their verbs over the repository, and only theirs`, async (t) => {
    for (const { name, Base, actions } of VIEWSETS) {
      const repo = seed()
      class Composed extends (Base(family) as typeof APIView) {
        static override responseSchema = Item
        static createSchema = ItemIn
        static detailParams = IdParams
        static repository = family.wrap(repo)
        getKwargs (): Criteria { return { tenant: 'a' } }
      }
      const app = await build({ views: [{ view: Composed, prefix: '/v' }] })
      t.teardown(() => app.close())
      const res = await expectActions(t, app, '/v', actions)
      const has = (action: string) => actions.includes(action)
      if (has('list')) t.same(res.list.json().map((i: ItemT) => i.id), [1, 2], `${name}: list, scoped`)
      if (has('create')) t.same(res.create.json(), { id: 4, name: 'created', price: 1, tenant: 'a' }, `${name}: create`)
      if (has('retrieve')) t.same(res.retrieve.json(), { id: 1, name: 'apple', price: 3, tenant: 'a' }, `${name}: retrieve before the writes`)
      if (has('update')) t.same(res.update.json(), { id: 1, name: 'put', price: 2, tenant: 'a' }, `${name}: update`)
      if (has('partialUpdate')) t.same(res.partialUpdate.json(), { id: 1, name: 'put', price: 7, tenant: 'a' }, `${name}: partialUpdate keeps the name`)
      t.same(repo.list({}).map((i) => i.id), [1, ...(has('destroy') ? [] : [2]), 3, ...(has('create') ? [4] : [])], `${name}: the rows left`)
      t.same(repo.get({ id: 1 }), has('update') ? { id: 1, name: 'put', price: 7, tenant: 'a' } : { id: 1, name: 'apple', price: 3, tenant: 'a' }, `${name}: row 1`)
    }
  })

  test(`${family.name}: a filter declaring tenant never widens or moves getKwargs' tenant`, async (t) => {
    const repo = new Recording({ unique: ['name'], rows: seed().list({}) })
    const view = (filter: unknown) => class extends (family.ViewSet as unknown as typeof APIView) {
      static override responseSchema = Item
      static createSchema = ItemIn
      static detailParams = IdParams
      static filter = filter
      static repository = family.wrap(repo)
      getKwargs (): Criteria { return { tenant: 'a' } }
    }
    const app = await build({ views: [{ view: view(TenantScoped), prefix: '/plain' }, { view: view(ComposedTenant), prefix: '/composed' }] })
    t.teardown(() => app.close())
    const cherry = repo.get({ id: 3 })

    for (const [query, expected, criteria] of TENANT_LIST) {
      const plain = await app.inject(`/plain?${query}`)
      t.equal(plain.statusCode, 200, `plain ?${query}`)
      t.same(plain.json().map((i: ItemT) => i.id), expected, `plain ?${query}`)
      t.same(repo.calls.at(-1), ['list', criteria], `plain ?${query}: the criteria reaching list`)
      const composed = await app.inject(`/composed?${query}`)
      t.equal(composed.statusCode, 200, `composed ?${query}`)
      const page = composed.json()
      t.same(page.items.map((i: ItemT) => i.id), expected, `composed ?${query}`)
      t.equal(page.total_items, expected.length, `composed ?${query}: count is scoped too`)
      t.same(repo.calls.slice(-2), [['list', criteria], ['count', criteria]], `composed ?${query}: the criteria reaching list and count`)
    }

    for (const prefix of ['/plain', '/composed']) {
      for (const suffix of ['', '?tenant=b', '?tenant__in=b']) {
        const url = `${prefix}/3${suffix}`
        problem(t, await app.inject(url), 404)
        t.same(repo.calls.at(-1), ['get', { id: 3, tenant: 'a' }], `GET ${url}: the path id, scoped to a`)
        problem(t, await app.inject({ method: 'PUT', url, payload: { name: 'stolen', price: 0 } }), 404)
        t.same(repo.calls.at(-1), ['update', { id: 3, tenant: 'a' }], `PUT ${url}`)
        problem(t, await app.inject({ method: 'PATCH', url, payload: { price: 0 } }), 404)
        t.same(repo.calls.at(-1), ['update', { id: 3, tenant: 'a' }], `PATCH ${url}`)
        problem(t, await app.inject({ method: 'DELETE', url }), 404)
        t.same(repo.calls.at(-1), ['delete', { id: 3, tenant: 'a' }], `DELETE ${url}`)
      }
      problem(t, await app.inject({ method: 'PATCH', url: `${prefix}/1`, payload: { tenant: 'b' } }), 400)
      problem(t, await app.inject({ method: 'PUT', url: `${prefix}/1`, payload: { name: 'apple', price: 3, tenant: 'b' } }), 400)
      t.equal((await app.inject({ method: 'PATCH', url: `${prefix}/1?tenant=b`, payload: { price: 4 } })).json().tenant, 'a', 'a row of a stays with a')
    }
    const created = await app.inject({ method: 'POST', url: '/plain?tenant=b', payload: { name: 'date', price: 2 } })
    t.equal(created.statusCode, 201)
    t.equal(created.json().tenant, 'a', 'a created row belongs to a, whatever the query says')
    t.same(repo.get({ id: 3 }), cherry, "b's row is untouched")
    t.same(repo.list({ tenant: 'b' }).map((i) => i.id), [3], 'and still the only row of b')
  })

  test(`${family.name}: bad list and detail input: each a 400 problem naming the parameter`, async (t) => {
    class Pages extends PaginationFilter {
      static override maxPageSize = 50
      static override orderingFields = ['name']
    }
    class Offsets extends OffsetLimitFilter {}
    class Cursors extends CursorPaginationFilter { static override orderingFields = ['name'] }
    const repo = seed()
    const list = (filter: unknown) => class extends (family.List as unknown as typeof APIView) {
      static override responseSchema = Item
      static filter = filter
      static repository = family.wrap(repo)
    }
    class Detail extends (family.ViewSet as unknown as typeof APIView) {
      static override responseSchema = Item
      static createSchema = TenantItemIn
      static detailParams = IdParams
      static repository = family.wrap(repo)
    }
    const app = await build({
      views: [{ view: list(Pages), prefix: '/p' }, { view: list(Offsets), prefix: '/o' }, { view: list(Cursors), prefix: '/c' }, { view: Detail, prefix: '/d' }]
    })
    t.teardown(() => app.close())
    for (const [url, where, parameter, method = 'GET'] of BAD_INPUT) {
      const payload = method === 'PUT' || method === 'PATCH' ? { name: 'x', price: 1 } : undefined
      const body = problem(t, await app.inject({ method, url, payload }), 400)
      t.equal(body.errors.length, 1, `${method} ${url}: one error`)
      t.match(body.errors[0], { in: where, parameter, pointer: new RegExp(`^#/${parameter}(/|$)`) }, `${method} ${url} names ${parameter}`)
      t.equal(typeof body.errors[0].detail, 'string')
    }
    t.same(repo.list({}).map((i) => i.id), [1, 2, 3], 'no bad request changed a row')
    // The good neighbours of the bad rows answer 200.
    for (const url of ['/p?page=1&page_size=50&sort=-name', '/o?offset=0&limit=100', '/c?page_size=1&sort=name', '/d/1']) {
      t.equal((await app.inject(url)).statusCode, 200, url)
    }
  })
}

test('a generic view without a repository is refused at registration; a getter may supply it', async (t) => {
  class Missing extends AsyncGenericListAPIView { static override responseSchema = Item }
  await t.rejects(build({ views: [Missing] }), { name: 'TypeError', message: 'Cannot register Missing: set its static repository or override its repository getter' })

  const repo = asyncRepository<ItemT, MemoryRepository<ItemT>>(seed())
  class FromServer extends AsyncGenericListAPIView<{ item: ItemT }> {
    static override responseSchema = Item
    override get repository () { return repo }
  }
  const app = await build({ views: [{ view: FromServer, prefix: '' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/')).json().length, 3)
})

test('repository options and resolveFilter reach the repository', async (t) => {
  const calls: unknown[] = []
  const repo = seed()
  const spy = {
    list: (
      criteria: Criteria,
      query: unknown,
      options: unknown
    ) => { calls.push({ criteria, query, options }); return repo.list(criteria, query as never, {}) },
    count: () => 0,
    create: (values: Record<string, unknown>, options: unknown) => { calls.push({ values, options }); return null }
  }
  class Names extends PaginationFilter { static override fields = { name: Type.String() } }
  class Spied extends AsyncGenericListCreateAPIView {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override filter = Names
    static override repository = spy as never
    static override repositoryOptions = { batch: 10 }
    override getRepositoryOptions (action: string) { return { ...Spied.repositoryOptions, action } }
    override resolveFilter (filter: InstanceType<typeof Names>) { return { args: ['raw-sql'], kwargs: filter.asKwargs() } }
  }
  const app = await build({ views: [{ view: Spied, prefix: '' }] })
  t.teardown(() => app.close())
  await app.inject('/?name=apple&page_size=5')
  t.match(calls[0], { criteria: { name: 'apple' }, query: { args: ['raw-sql'], offset: 0, limit: 5 }, options: { batch: 10, action: 'list' } })
  const res = await app.inject({ method: 'POST', url: '/', payload: { name: 'x', price: 1 } })
  t.equal(res.statusCode, 409)
  t.match(calls[1], { values: { name: 'x', price: 1 }, options: { batch: 10, action: 'create' } })
  t.ok(Conflict)
})

test('viewsets are compositions with the expected actions', async (t) => {
  const names = (
    cls: { standardActions: () => Array<{ name: string }> }
  ) => cls.standardActions().map((a) => a.name).sort()
  const all = ['create', 'destroy', 'list', 'partialUpdate', 'retrieve', 'update']
  for (const cls of [AsyncAPIViewSet, APIViewSet, AsyncGenericViewSet, GenericViewSet]) {
    t.same(
      names(cls),
      all,
      cls.name
    )
  }
  for (const cls of [AsyncReadOnlyAPIViewSet, ReadOnlyAPIViewSet, AsyncGenericReadOnlyViewSet, GenericReadOnlyViewSet]) t.same(names(cls), ['list', 'retrieve'], cls.name)
  for (const cls of [AsyncListCreateAPIView, ListCreateAPIView, AsyncGenericListCreateAPIView, GenericListCreateAPIView]) t.same(names(cls), ['create', 'list'], cls.name)
  for (const cls of [
    AsyncRetrieveUpdateDestroyAPIView,
    RetrieveUpdateDestroyAPIView,
    AsyncGenericRetrieveUpdateDestroyAPIView,
    GenericRetrieveUpdateDestroyAPIView
  ]) {
    t.same(names(cls), ['destroy', 'partialUpdate', 'retrieve', 'update'], cls.name)
  }
  t.equal(AsyncGenericViewSet.name, 'AsyncGenericViewSet')
})

test('typed generic views: the repository is typed by the item', async (t) => {
  const repo = asyncRepository<ItemT, MemoryRepository<ItemT>>(seed())
  class Typed extends AsyncGenericCreateAPIView<{ item: ItemT }> {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override repository = repo
    async total (_request: FastifyRequest) {
      const first: ItemT | null = await this.repository.get({ id: 1 }, {})
      return first?.name
    }
  }
  t.equal(Typed.name, 'Typed')
})

test('cursors carry dates as ISO strings; a list with an open response schema serializes as JSON', async (t) => {
  const rows = [1, 2, 3].map((id) => ({ id, at: new Date(Date.UTC(2026, 0, id)) }))
  class Dated extends CursorPaginationFilter { static override orderingFields = ['at'] }
  class Events extends GenericListAPIView {
    static override responseSchema = Type.Object({}, { additionalProperties: true })
    static override filter = Dated
    static override repository = new MemoryRepository({ rows }) as never
  }
  const app = await build({ views: [{ view: Events, prefix: '' }] })
  t.teardown(() => app.close())
  const first = (await app.inject('/?page_size=2&sort=at')).json()
  t.same(first.items.map((i: { id: number }) => i.id), [1, 2])
  const decoded = JSON.parse(Buffer.from(first.next_page, 'base64url').toString())
  t.same(decoded.v, ['2026-01-02T00:00:00.000Z', 2])
  t.same((await app.inject(`/?page_size=2&sort=at&cursor=${first.next_page}`)).json().items.map((i: { id: number }) => i.id), [3])
})

test('asyncRepository turns a synchronous throw into a rejected promise', async (t) => {
  const repo = asyncRepository<unknown, { get: () => never }>({ get () { throw new Error('sync failure') } })
  await t.rejects(repo.get({}, {}), { message: 'sync failure' })
})

test('cursor pages walk a nullable sort column, nulls included', async (t) => {
  const rows = [{ id: 1, rank: 2 }, { id: 2, rank: null }, { id: 3, rank: 1 }, { id: 4, rank: null }]
  class ByRank extends CursorPaginationFilter { static override orderingFields = ['rank'] }
  class Ranked extends GenericListAPIView {
    static override responseSchema = Type.Object({}, { additionalProperties: true })
    static override filter = ByRank
    static override repository = new MemoryRepository({ rows }) as never
  }
  const app = await build({ views: [{ view: Ranked, prefix: '' }] })
  t.teardown(() => app.close())
  const seen: number[] = []
  let url: string | null = '/?page_size=1&sort=rank'
  while (url !== null) {
    const page: { items: Array<{ id: number }>, next_page: string | null } = (await app.inject(url)).json()
    seen.push(...page.items.map((i: { id: number }) => i.id))
    url = page.next_page === null ? null : `/?page_size=1&sort=rank&cursor=${page.next_page}`
  }
  t.same(seen, [3, 1, 2, 4], 'values ascending, then the nulls, each once')
})

test('decodeCursor refuses anything that is not a cursor of this ordering', async (t) => {
  const { decodeCursor, encodeCursor } = await import('../lib/query/cursor.js')
  const enc = (wire: unknown) => Buffer.from(JSON.stringify(wire)).toString('base64url')
  const ordering = ['name', 'id']
  t.same(decodeCursor(encodeCursor({ direction: 'previous', values: [null, 2] }, ordering), ordering), { direction: 'previous', values: [null, 2] })
  for (const wire of [null, 5, { d: 'x' }, { d: 'n', o: 'name,id', v: [1, 2] }, { d: 'n', o: ['id'], v: [1, 2] }, { d: 'n', o: ordering, v: 'x' },
    { d: 'n', o: ordering, v: [1] }, { d: 'n', o: ordering, v: [[1], 2] }]) {
    t.equal(decodeCursor(enc(wire), ordering), undefined, JSON.stringify(wire))
  }
  t.equal(decodeCursor('%%%', ordering), undefined)
})

test('a detail id of the wrong kind is a 404, not the first row', async (t) => {
  class Loose extends GenericViewSet {
    static override responseSchema = Item
    static override createSchema = TenantItemIn
    static override repository = seed() as never
  }
  const app = await build({ views: [{ view: Loose, prefix: '' }] })
  t.teardown(() => app.close())
  problem(t, await app.inject('/abc'), 404)
  problem(t, await app.inject({ method: 'DELETE', url: '/zzz' }), 404)
  t.equal((await app.inject('/')).json().length, 3, 'nothing was deleted')
})

test('a unique clash on update is a 409 problem, and documented', async (t) => {
  class Unique extends GenericViewSet {
    static override responseSchema = Item
    static override createSchema = TenantItemIn
    static override updateSchema = ItemIn
    static override detailParams = IdParams
    static override repository = seed() as never
  }
  const app = await build({ views: [{ view: Unique, prefix: '' }] })
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject({ method: 'PATCH', url: '/1', payload: { name: 'banana' } }), 409).title, 'Conflict')
  t.equal(problem(t, await app.inject({ method: 'PUT', url: '/1', payload: { name: 'banana', price: 1 } }), 409).title, 'Conflict')
  const routes = (await import('../lib/registration/register.js')).buildViewRoutes(Unique)
  for (const action of ['update', 'partialUpdate']) {
    t.ok(documentedSchema(routes.find((r) => r.config?.action === action)!.schema as { response: Record<string, unknown> }).response['409'], `${action} documents 409`)
  }
})

test('an async repository that hands back thenables (a query builder), not promises, serves every generic action', async (t) => {
  const store = seed()
  const thenable = <T>(value: T): PromiseLike<T> => ({
    then: (resolve, reject) => Promise.resolve(value).then(resolve, reject)
  })
  const lazy: Record<string, (...args: unknown[]) => PromiseLike<unknown>> = {}
  for (const method of ['create', 'get', 'list', 'count', 'update', 'delete'] as const) {
    lazy[method] = (...args: unknown[]) => thenable((store[method] as (...a: unknown[]) => unknown).apply(store, args))
  }
  class Items extends AsyncGenericViewSet<{ item: ItemT, create: Static<typeof ItemIn>, params: { id: number } }> {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override detailParams = IdParams
    static override filter = PaginationFilter
    static override repository = lazy as never
    override getKwargs (action?: string): Criteria { return action === 'create' ? { tenant: 'a' } : {} }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/items?page_size=2')).json().items.map((i: ItemT) => i.id), [1, 2], 'list and count')
  t.same((await app.inject('/items/3')).json(), { id: 3, name: 'cherry', price: 5, tenant: 'b' }, 'retrieve')
  problem(t, await app.inject('/items/9'), 404)
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'date', price: 2 } })
  t.same([created.statusCode, created.json().name], [201, 'date'], 'create')
  t.same((await app.inject({ method: 'PATCH', url: '/items/1', payload: { price: 4 } })).json().price, 4, 'partial update')
  t.equal((await app.inject({ method: 'DELETE', url: '/items/2' })).statusCode, 204, 'destroy')
  problem(t, await app.inject({ method: 'DELETE', url: '/items/2' }), 404)
})

test('a paginated list override is typed as its page, and isReply tells it from a reply answered by hand', async (t) => {
  class Pages extends PaginationFilter {}
  class Items extends GenericListAPIView<{ item: ItemT, list: NumberedPageOf<ItemT> }> {
    static override responseSchema = Item
    static override repository = seed()
    static override filter = Pages

    override list (request: FastifyRequest) {
      if (request.headers['x-by-hand'] !== undefined) return this.reply.code(204).send()
      const page = super.list(request)
      if (this.isReply(page)) return page
      return { ...page, items: page.items.map((item) => ({ ...item, name: item.name.toUpperCase() })) }
    }
  }
  class Probe extends GenericListAPIView<{ item: ItemT }> {
    static override responseSchema = Item
    static override repository = seed()
    override list (request: FastifyRequest) {
      const rows = super.list(request)
      return this.isReply(this.reply) && !this.isReply(rows) ? rows : []
    }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }, { view: Probe, prefix: '/probe' }] })
  const page = (await app.inject('/items?page_size=2')).json()
  t.same(page.items.map((i: ItemT) => i.name), ['APPLE', 'BANANA'], 'the page items, changed')
  t.equal(page.total_items, 3)
  t.equal((await app.inject({ url: '/items', headers: { 'x-by-hand': '1' } })).statusCode, 204, 'a reply answered by hand is passed through')
  t.equal((await app.inject('/probe')).json().length, 3, 'the reply is a reply, the rows are not')
})

test('generic actions are real methods of named classes: what a debugger or a stack trace shows', async (t) => {
  const { GenericViewSet, AsyncGenericViewSet } = await import('../lib/generics.js')
  for (const ViewSet of [GenericViewSet, AsyncGenericViewSet]) {
    for (const [action, owner] of [['list', 'GenericList'], ['create', 'GenericCreate'], ['retrieve', 'GenericRetrieve'], ['update', 'GenericUpdate'], ['partialUpdate', 'GenericPartialUpdate'], ['destroy', 'GenericDestroy']]) {
      let proto: object | null = ViewSet.prototype
      while (proto !== null && !Object.hasOwn(proto, action)) proto = Object.getPrototypeOf(proto)
      const method = (proto as Record<string, { name: string }>)[action]
      t.equal(method.name, action, `${action} is named`)
      t.equal((proto as { constructor: { name: string } }).constructor.name, owner, `${action} is a method of ${owner}`)
    }
  }
})

test('an action of yours that maps its body says so (mappingActions); the library\'s own, and an override that says nothing, are held to the table', async (t) => {
  const Database = (await import('better-sqlite3')).default
  const { SqliteRepository } = await import('../lib/stores/sql/index.js')
  const { GenericCreateAPIView, GenericListAPIView } = await import('../lib/generics.js')
  const { mix } = await import('../lib/index.js')
  const db = new Database(':memory:')
  db.exec('CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT NOT NULL, password_hash TEXT NOT NULL)')
  const users = new SqliteRepository<{ id: number, name: string, password_hash: string }>(db, { table: 'users', columns: ['id', 'name', 'password_hash'] })
  const statics = {
    responseSchema: Type.Object({ id: Type.Integer(), name: Type.String() }),
    createSchema: Type.Object({ name: Type.String(), password: Type.String() }),
    repository: users
  }
  const mapped = {
    create (request: { body: { name: string, password: string } }) {
      const { name, password } = request.body
      return users.create({ name, password_hash: `hashed:${password}` }, {})
    }
  }
  // Overriding the action alone says nothing of what it writes: refused, with the declaration that fixes it.
  class Silent extends mix(GenericListAPIView, GenericCreateAPIView).with(statics, mapped) {}
  await t.rejects(build({ views: [{ view: Silent, prefix: '/users' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /the body of create has "password".*static override mappingActions = \['create'\]/ })
  class Users extends mix(GenericListAPIView, GenericCreateAPIView).with({ ...statics, mappingActions: ['create'] }, mapped) {}
  const app = await build({ views: [{ view: Users, prefix: '/users' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/users', payload: { name: 'ada', password: 'secret' } })
  t.same(created.json(), { id: 1, name: 'ada' })
  t.equal(db.prepare('SELECT password_hash FROM users').pluck().get(), 'hashed:secret')
  // A full viewset's update takes the same body (updateSchema defaults to createSchema) and writes it as it is.
  class Everything extends GenericViewSet.with(statics, { create () { return null } }) {}
  await t.rejects(build({ views: [{ view: Everything, prefix: '/users' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /the body of create, partialUpdate, update has "password"/ })
})

test('MemoryRepository touchField stamps every create and update, as touchColumn does in SQL, and a view may require it', async (t) => {
  const OLD = '2020-01-01T00:00:00.000Z'
  const Stamped = Type.Object({ id: Type.Integer(), name: Type.String(), updated_at: Type.String({ format: 'date-time' }) })
  type StampedT = Static<typeof Stamped>
  const store = new MemoryRepository<StampedT>({ touchField: 'updated_at', rows: [{ id: 1, name: 'a', updated_at: OLD }, { id: 2, name: 'b', updated_at: OLD }] })
  const fresh = (row: { updated_at?: unknown } | null | undefined): boolean => typeof row?.updated_at === 'string' && row.updated_at > OLD
  t.equal(store.get({ id: 1 })?.updated_at, OLD, 'seeded rows keep their stamp')
  t.ok(fresh(store.create({ name: 'c' })), 'create')
  t.ok(fresh(store.create({ name: 'd', updated_at: OLD })), 'create: the stamp wins over a given value')
  t.ok(fresh(store.update({ id: 1 }, { name: 'a2' })), 'update')
  t.ok(store.createMany([{ name: 'e' }, { name: 'f' }]).every(fresh), 'createMany')
  t.ok(store.updateMany({ name: 'b2' }, { id: 2 }).every(fresh), 'updateMany')
  store.bulkUpdate([{ id: 1, name: 'a3' }])
  t.ok(fresh(store.get({ id: 1 })), 'bulkUpdate')
  t.same(store.filledOnCreate, ['id', 'updated_at'], 'a create fills the key and the stamp')

  class Items extends GenericViewSet.with(
    {
      responseSchema: Stamped,
      createSchema: Type.Object({ name: Type.String() }),
      detailParams: IdParams,
      repository: store
    }
  ) {}
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'g' } })
  t.equal(created.statusCode, 201, 'registered: the store fills what the body does not')
  t.ok(fresh(created.json()), 'and the answer carries the stamp')
})

test('getObject: the one read of an object, for a route of the view\'s own too, within the parent and the scope', async (t) => {
  const { Action } = await import('../lib/index.js')
  const { NotFound } = await import('../lib/errors.js')
  const Row = Type.Object({ id: Type.Integer(), name: Type.String(), tenant: Type.String() })
  const store = new MemoryRepository<Static<typeof Row>>({ rows: [{ id: 1, name: 'mine', tenant: 'a' }, { id: 2, name: 'theirs', tenant: 'b' }] })
  const reads: string[] = []
  const statics = { responseSchema: Row, detailParams: Type.Object({ id: Type.Integer() }), repository: store }
  class Items extends GenericViewSet.with(statics, {
    getKwargs () { return { tenant: 'a' } }
  }) {
    @Action('touch', { detail: true, methods: ['POST'], schema: { params: Type.Object({ id: Type.Integer() }) }, responseSchema: Row, statusCode: 200 })
    touch () {
      // The route's own action by default: what the route config names.
      const object = this.getObject()
      if (object === null) throw new NotFound('No such item here.')
      reads.push(this.request.routeOptions.config.action ?? '')
      return object
    }
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ method: 'POST', url: '/items/1/touch' })).json(), { id: 1, name: 'mine', tenant: 'a' }, 'the object the path names, in the scope')
  t.equal(problem(t, await app.inject({ method: 'POST', url: '/items/2/touch' }), 404).detail, 'No such item here.', 'another tenant\'s object is not there')
  t.same(reads, ['touch'])

  // A route of the application's own names no action: the view reads by the path, in its scope all the same.
  const own = (await import('fastify')).default()
  own.get('/own/:id', { schema: { params: Type.Object({ id: Type.Integer() }) } }, (request, reply) => new Items(request, reply).getObject() ?? { missing: true })
  t.teardown(() => own.close())
  t.same((await own.inject({ url: '/own/1' })).json(), { id: 1, name: 'mine', tenant: 'a' }, 'an application route reads the object through the view')
  t.same((await own.inject({ url: '/own/2' })).json(), { missing: true }, 'and not another tenant\'s')
})
