import { test } from 'tap'
import Database from 'better-sqlite3'
import { Type, type Static } from '@sinclair/typebox'
import {
  AsyncGenericViewSet, BaseFilter, GenericListAPIView, MemoryRepository, OffsetLimitFilter, PaginationFilter,
  SearchFilter, asyncRepository, composeFilters
} from '../lib/generics.js'
import { SqliteRepository } from '../lib/stores/sql/index.js'
import { buildApp, Health } from '../examples/app.js'
import { build, problem } from './helpers.js'
import { hostileQueries, random } from './hostile-cases.js'

test('query keys named like Object.prototype members are not fields', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 3 } })
  for (const key of ['constructor', 'toString', 'valueOf', 'hasOwnProperty', '__proto__', 'isPrototypeOf']) {
    const res = await app.inject(`/items?${key}=1`)
    t.equal(res.statusCode, 200, `GET /items?${key}=1 is served, the key ignored like any undeclared one`)
    t.equal(res.json().total_items, 1)
  }
  const bulk = await app.inject({ method: 'PATCH', url: '/items/bulk?name=lamp&valueOf=1', payload: { price: 4 } })
  t.equal(bulk.statusCode, 200, 'a bulk update selects by the declared filter alone')
  t.equal((await app.inject('/items/1')).json().price, 4)
})

test('q on a filter without search fields is ignored; pages and offsets beyond what a store can address are 400s naming them', async (t) => {
  class Plain extends BaseFilter {
    static override fields = { name: Type.String() }
  }
  class Offsets extends OffsetLimitFilter {}
  const rows = new MemoryRepository({ rows: [{ id: 1, name: 'lamp' }] })
  class Items extends GenericListAPIView {
    static override responseSchema = Type.Object({ id: Type.Integer(), name: Type.String() })
    static override repository = rows as never
    static override filter = Plain
  }
  class Windows extends GenericListAPIView {
    static override responseSchema = Type.Object({ id: Type.Integer(), name: Type.String() })
    static override repository = rows as never
    static override filter = Offsets
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }, { view: Windows, prefix: '/windows' }] })
  t.teardown(() => app.close())
  t.same((await app.inject('/items?q=lamp')).json(), [{ id: 1, name: 'lamp' }], 'q is not a parameter here: ignored')
  const offset = problem(t, await app.inject('/windows?offset=9007199254740993'), 400)
  t.equal(offset.errors[0].parameter, 'offset', 'an offset past the exact integers is a 400 naming offset')

  const example = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => example.close())
  const page = problem(t, await example.inject('/items?page=9007199254740991'), 400)
  t.equal(page.errors[0].parameter, 'page', 'a page whose offset no store can address is a 400 naming page')
  const deep = problem(t, await example.inject('/items?page=1000000'), 400)
  t.equal(deep.errors[0].parameter, 'page', 'a page skipping more than maxOffset rows is a 400 naming page')
  t.equal((await example.inject('/items?page=101&page_size=100')).statusCode, 200, 'the deepest page maxOffset allows is an empty page')
  const past = problem(t, await example.inject('/items?page=102&page_size=100'), 400).errors[0]
  t.equal(past.parameter, 'page', 'one more is not')
  t.equal(past.detail, 'Must be at most 101 with page_size 100: a deeper page skips more than 10000 rows. ' +
    'Narrow the list with filters, or page it with a cursor')
})

test('a URL the router cannot decode is a problem (frameworkErrors)', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const res = await app.inject('/items/%')
  t.equal(problem(t, res, 400).status, 400)
  t.notMatch(res.body, /FST_ERR/, 'no framework error code in the body')
})

test('seeded hostile query strings on SQLite: no 5xx, every 4xx a problem', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  for (let i = 0; i < 5; i++) await app.inject({ method: 'POST', url: '/items', payload: { name: `lamp ${i}`, price: i } })
  await hostileQueries(t, app, 1200)
})

const Row = Type.Object({ id: Type.Integer(), name: Type.String(), price: Type.Number(), description: Type.String() })
type RowT = Static<typeof Row>

/** Filters with every bounded parameter: a search, LIKE patterns, lists and two ordering fields. */
class Bounded extends PaginationFilter {
  static override fields = { name: Type.String() }
  static override operatorFields = { description: Type.String() }
  static override operators = { name: ['in', 'not_in', 'like', 'ilike'], description: ['like', 'ilike'] } as const
  static override orderingFields = ['name', 'price']
  static override searchFields = ['name', 'description']
}

const WORDS = ['lamp', 'desk', 'chair', 'oak', 'walnut', 'brass', 'shade', 'linen', 'matte', 'black', 'white', 'table', 'stool', 'shelf', 'drawer', 'a', 'the', 'with', 'and']

/** `count` rows whose descriptions are `length` characters of words. */
function longRows (count: number, length: number): RowT[] {
  const next = random(1)
  const text = (n: number): string => {
    let s = ''
    while (s.length < n) s += WORDS[Math.floor(next() * WORDS.length)] + ' '
    return s.slice(0, n)
  }
  return Array.from({ length: count }, (_, i) => ({ id: i + 1, name: text(40), price: i, description: text(length) }))
}

/** A list and a health route over `rows`, in the memory store or in SQLite (in memory). */
async function boundedApp (store: 'memory' | 'sqlite', rows: RowT[], filter: typeof BaseFilter = Bounded) {
  let repository: unknown
  if (store === 'memory') repository = asyncRepository(new MemoryRepository<RowT>({ rows }))
  else {
    const db = new Database(':memory:')
    db.exec('CREATE TABLE rows (id INTEGER PRIMARY KEY, name TEXT NOT NULL, price REAL NOT NULL, description TEXT NOT NULL)')
    const insert = db.prepare('INSERT INTO rows (id, name, price, description) VALUES (?, ?, ?, ?)')
    db.transaction(() => { for (const row of rows) insert.run(row.id, row.name, row.price, row.description) })()
    repository = asyncRepository(new SqliteRepository<RowT>(db, { table: 'rows', columns: ['id', 'name', 'price', 'description'] }))
  }
  class Rows extends AsyncGenericViewSet {
    static override responseSchema = Row
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter = filter
    static override repository = repository as never
  }
  return build({ views: [{ view: Rows, prefix: '/rows' }, { view: Health, prefix: '/health' }] })
}

const repeat = (name: string, value: string, times: number): string => Array.from({ length: times }, () => `${name}=${encodeURIComponent(value)}`).join('&')

for (const store of ['memory', 'sqlite'] as const) {
  test(`${store}: q, LIKE patterns, lists and sort are bounded; one past a bound is a 400 naming the parameter, the bound itself is served`, async (t) => {
    const app = await boundedApp(store, longRows(5, 200))
    t.teardown(() => app.close())
    const { maxSearchLength, maxPatternLength, maxListLength } = Bounded
    t.same([maxSearchLength, maxPatternLength, maxListLength], [100, 100, 100], 'the defaults')
    const cases: Array<[string, string, string, string]> = [
      ['q', `q=${'a'.repeat(maxSearchLength + 1)}`, `q=${'a'.repeat(maxSearchLength)}`, `Expected string length less or equal to ${maxSearchLength}`],
      ['name__like', `name__like=${'%25'.repeat(maxPatternLength + 1)}`, `name__like=${'%25'.repeat(maxPatternLength)}`, `Expected string length less or equal to ${maxPatternLength}`],
      ['description__ilike', `description__ilike=${'_'.repeat(maxPatternLength + 1)}`, `description__ilike=%25${'_'.repeat(maxPatternLength - 1)}`, `Expected string length less or equal to ${maxPatternLength}`],
      ['name__in', repeat('name__in', 'lamp', maxListLength + 1), repeat('name__in', 'lamp', maxListLength), `Expected array length to be less or equal to ${maxListLength}`],
      ['name__not_in', repeat('name__not_in', 'lamp', maxListLength + 1), repeat('name__not_in', 'lamp', maxListLength), `Expected array length to be less or equal to ${maxListLength}`],
      ['sort', 'sort=name&sort=-price&sort=name', 'sort=name&sort=-price', 'Expected array length to be less or equal to 2'],
      ['sort', repeat('sort', 'price', 5000), 'sort=-price', 'Expected array length to be less or equal to 2']
    ]
    for (const [parameter, over, at, detail] of cases) {
      const body = problem(t, await app.inject(`/rows?${over}`), 400)
      t.match(body.errors[0], { parameter, in: 'query', pointer: `#/${parameter}`, detail }, `${parameter} past its bound: a 400 naming it`)
      const res = await app.inject(`/rows?${at}`)
      t.equal(res.statusCode, 200, `${parameter} at its bound is served`)
    }
    const found = (await app.inject(`/rows?q=${encodeURIComponent((await app.inject('/rows/1')).json().description.slice(0, maxSearchLength))}`)).json()
    t.same(found.items.map((row: RowT) => row.id), [1], 'a search of the longest term finds its row')
  })
}

test('the example API on SQLite: sort takes at most one key per ordering field', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const body = problem(t, await app.inject(`/items?${repeat('sort', 'name', 3000)}`), 400)
  t.match(body.errors[0], { parameter: 'sort', pointer: '#/sort', detail: 'Expected array length to be less or equal to 2' })
  t.equal((await app.inject('/items?sort=-price&sort=name')).statusCode, 200)
  t.equal((await app.inject(`/items?name=${'a'.repeat(1000)}`)).statusCode, 200, 'a plain field is bounded by its own schema, if at all')
})

test('bounds set by a filter\'s statics, and carried through composeFilters', async (t) => {
  const Small = Bounded.with({ maxSearchLength: 5, maxPatternLength: 4, maxListLength: 2 })
  const schema = Small.querySchema().properties
  t.same([
    schema.q.maxLength,
    schema.name__like.maxLength,
    schema.description__ilike.maxLength,
    schema.name__in.maxItems,
    schema.sort.maxItems
  ], [5, 4, 4, 2, 2],
  'what the document shows: maxLength and maxItems')
  const app = await boundedApp('memory', longRows(3, 50), Small)
  t.teardown(() => app.close())
  t.equal(problem(t, await app.inject('/rows?q=abcdef'), 400).errors[0].parameter, 'q')
  t.equal((await app.inject('/rows?q=abcde')).statusCode, 200)
  t.equal(problem(t, await app.inject('/rows?name__in=a&name__in=b&name__in=c'), 400).errors[0].parameter, 'name__in')

  class Searches extends SearchFilter { static override searchFields = ['name'] }
  class ShortSearch extends SearchFilter {
    static override searchFields = ['description']
    static override maxSearchLength = 20
  }
  class Patterns extends BaseFilter {
    static override fields = { name: Type.String() }
    static override operators = { name: ['like'] } as const
    static override maxPatternLength = 30
  }
  class Lists extends BaseFilter {
    static override fields = { price: Type.Number() }
    static override operators = { price: ['not_in'] } as const
    static override maxListLength = 7
  }
  class Generous extends PaginationFilter {
    static override maxSearchLength = 1000
    static override maxPatternLength = 1000
    static override maxListLength = 1000
  }
  const composed = composeFilters(Searches, ShortSearch, Patterns, Lists, Generous)
  t.same([composed.maxSearchLength, composed.maxPatternLength, composed.maxListLength], [20, 30, 7],
    'the smallest bound among the filters with such parameters; one without them (Generous) does not loosen it')
  const properties = composed.querySchema().properties
  t.same([properties.q.maxLength, properties.name__like.maxLength, properties.price__not_in.maxItems], [20, 30, 7])
  t.same([composeFilters(Generous).maxSearchLength, composeFilters(Generous).maxListLength], [100, 100], 'no filter with the parameter: the default')
})

test('SQLite, thousands of rows of long text: 8 requests with the longest q and LIKE patterns allowed at once, and /health still answers within a second', async (t) => {
  const rows = 3000
  const length = 2000
  const app = await boundedApp('sqlite', longRows(rows, length))
  t.teardown(() => app.close())
  const { maxSearchLength, maxPatternLength } = Bounded
  // Wildcards cost SQLite nothing extra (it gives up on a `%` that cannot match); what it pays
  // for is a run of literal characters after a `%`, compared at each position that starts it.
  const urls = [
    `/rows?q=${'a'.repeat(maxSearchLength - 1)}z`,
    `/rows?description__like=${encodeURIComponent('%' + 'a'.repeat(maxPatternLength - 2) + '%')}`,
    `/rows?description__ilike=${encodeURIComponent('%_'.repeat(maxPatternLength / 2))}`,
    `/rows?name__like=${encodeURIComponent('%a'.repeat(maxPatternLength / 2))}&q=${'e'.repeat(maxSearchLength)}`
  ]
  const alone: string[] = []
  for (const url of urls) {
    const started = performance.now()
    t.equal((await app.inject(url)).statusCode, 200, `${url.slice(0, 40)}...: served`)
    alone.push(`${(performance.now() - started).toFixed(0)} ms`)
  }
  const started = performance.now()
  const answered: number[] = []
  const requests = Array.from(
    { length: 8 },
    (_, i) => app.inject(urls[i % urls.length]).then(
      (res) => { answered.push(performance.now() - started); return res.statusCode }
    )
  )
  const health = app.inject('/health').then((res) => ({ status: res.statusCode, ms: performance.now() - started }))
  t.same(await Promise.all(requests), Array(8).fill(200), 'all 8 answer')
  const { status, ms } = await health
  t.equal(status, 200)
  t.ok(ms < 1000, `/health answered in ${ms.toFixed(0)} ms, under a second`)
  t.comment(`${rows} rows of ${length} characters on SQLite; one request each: ${alone.join(', ')}; 8 at once: the last answered after ${Math.max(...answered).toFixed(0)} ms, /health after ${ms.toFixed(0)} ms`)
})
