import t0, { test, type Test } from 'tap'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import {
  AsyncGenericListAPIView, BaseFilter, GenericListAPIView, MemoryRepository, type FilterClass
} from '../lib/generics.js'
import { GenericBulkDestroyAPIView } from '../lib/bulk.js'
import { AsyncSqliteRepository, PostgresRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { LIKE_PATTERN } from '../lib/query/operator-schema.js'
import { build, caught, problem } from './helpers.js'
import { openSqlite } from './sqlite-driver.js'
import { freshDatabase, postgres } from './pg-server.js'

// LIKE patterns in filter parameters (issue 53, docs/filters.md#operators): a `\` escapes `%`, `_`
// or `\`, and any other `\` (a trailing one, one before another character) is a 400 naming the
// parameter, from the query's schema, before a store sees it. The same requests on the memory
// store, SQLite (both drivers) and PostgreSQL: the same refusals, byte for byte, and the same rows.

const Book = Type.Object({ id: Type.Integer(), title: Type.String() })
type BookT = Static<typeof Book>

/** 5,000 backslashes: what a pattern of 10,000 (each `\\` one literal `\`) matches. */
const BACKSLASHES = '\\'.repeat(5000)

/** Titles each well-formed case picks among; `a\` is the row PostgreSQL failed on with the pattern `a\`. */
const TITLES = [
  'a%b', 'axb', 'a_', 'ab', 'a\\', 'A\\', 'a\\\\', 'a\\b', 'C:\\dir', 'C:dir', 'café', 'Café', '日本語', '😀 smile',
  'Straße', BACKSLASHES, '%', ''
]
const ROWS: BookT[] = TITLES.map((title, i) => ({ id: i + 1, title }))
const DDL = (key: string): string => `CREATE TABLE books (id ${key} PRIMARY KEY, title TEXT NOT NULL)`
const TABLE = { table: 'books', columns: ['id', 'title'] } as const

/** Both LIKE operators on `title`, in id order; patterns as long as the largest query string a socket takes. */
class TitleFilter extends BaseFilter {
  static override operatorFields = { title: Type.String() }
  static override operators = { title: ['like', 'ilike'] } as const
  static override orderingFields = ['id']
  static override defaultOrdering = ['id']
  static override maxPatternLength = 20_000
}

/** The same filter with the default bound on a pattern's length (100 characters). */
class ShortTitleFilter extends TitleFilter {
  static override maxPatternLength = BaseFilter.maxPatternLength
}

/** A store under test: its app, the reads its list views made, and its repository's own list. */
interface Store {
  name: string
  app: FastifyInstance
  reads: () => number
  list: (criteria: Record<string, unknown>) => unknown
}

/** Counts the reads of `repository`'s list: a refused pattern must reach no store. */
function countReads (repository: { list: (...args: never[]) => unknown }): () => number {
  let reads = 0
  const list = repository.list.bind(repository)
  repository.list = (...args) => { reads++; return list(...args) }
  return () => reads
}

/** The store's app: a list of books under `/books`, and under `/short` with the default bound on a pattern. */
async function listApp (repository: object, async: boolean): Promise<FastifyInstance> {
  // Each store's repository goes to a view of its own family (sync or async), which the compiler cannot tell from `async`.
  const view = (filter: FilterClass) => async
    ? AsyncGenericListAPIView.with({ responseSchema: Book, filter, repository: repository as never })
    : GenericListAPIView.with({ responseSchema: Book, filter, repository: repository as never })
  return build({ views: [{ view: view(TitleFilter), prefix: '/books' }, { view: view(ShortTitleFilter), prefix: '/short' }] })
}

async function memoryStore (): Promise<Store> {
  const repository = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })) })
  const reads = countReads(repository)
  return { name: 'memory', app: await listApp(repository, false), reads, list: (criteria) => repository.list(criteria) }
}

async function sqliteStore (t: Test, driver: 'better-sqlite3' | 'node:sqlite'): Promise<Store> {
  const db = openSqlite(':memory:', { driver })
  t.teardown(() => db.close())
  db.exec(DDL('INTEGER'))
  const insert = db.prepare('INSERT INTO books (id, title) VALUES (?, ?)')
  for (const row of ROWS) insert.run(row.id, row.title)
  const repository = driver === 'better-sqlite3' ? new SqliteRepository<BookT>(db, TABLE) : new AsyncSqliteRepository<BookT>(db, TABLE)
  const reads = countReads(repository)
  const list = (criteria: Record<string, unknown>): unknown => repository.list(criteria)
  return { name: `SQLite (${driver})`, app: await listApp(repository, driver === 'node:sqlite'), reads, list }
}

const started = await postgres()

async function postgresStore (t: Test): Promise<Store | undefined> {
  if (!('server' in started)) return undefined
  const { pool } = await freshDatabase(started.server, `like_${Math.random().toString(36).slice(2, 10)}`)
  t.teardown(() => pool.end())
  await pool.query(DDL('INTEGER'))
  for (const row of ROWS) await pool.query('INSERT INTO books (id, title) VALUES ($1, $2)', [row.id, row.title])
  const repository = new PostgresRepository<BookT>(pool, TABLE)
  const reads = countReads(repository)
  return { name: 'PostgreSQL', app: await listApp(repository, true), reads, list: (criteria) => repository.list(criteria) }
}

/** Every store, each app closed by the test's teardown; PostgreSQL only where it is installed. */
async function stores (t: Test): Promise<Store[]> {
  const all = [await memoryStore(), await sqliteStore(t, 'better-sqlite3'), await sqliteStore(t, 'node:sqlite')]
  const pg = await postgresStore(t)
  if (pg !== undefined) all.push(pg)
  for (const store of all) t.teardown(() => store.app.close())
  return all
}

if ('server' in started) {
  const { server } = started
  t0.teardown(() => { server.stop() })
}

/** One answer: its status and body, as the client reads them. */
interface Answer { status: number, body: string }

/** The answer of every store to `url`, checked to be the first store's, byte for byte; returns it. */
async function sameEverywhere (t: Test, all: Store[], url: string, label: string): Promise<Answer> {
  const answers: Answer[] = []
  for (const store of all) {
    const res = await store.app.inject(url)
    answers.push({ status: res.statusCode, body: res.body })
  }
  for (let i = 1; i < all.length; i++) t.same(answers[i], answers[0], `${label}: ${all[i].name} answers as ${all[0].name}`)
  return answers[0]
}

/** The refusal of a malformed pattern: one entry, naming the parameter. */
const refusal = (parameter: string): Record<string, unknown> => ({
  type: 'about:blank',
  title: 'Bad Request',
  status: 400,
  detail: 'The query string is invalid.',
  instance: '/books',
  errors: [{ detail: `Expected string to match '${LIKE_PATTERN}'`, pointer: `#/${parameter}`, in: 'query', parameter }]
})

const enc = encodeURIComponent

/** Patterns whose `\` escapes nothing it may: [what, query string, the parameter named]. */
const MALFORMED: Array<[string, string, string]> = [
  ['the issue\'s pattern, a trailing %5C', 'title__like=a%5C', 'title__like'],
  ['a trailing \\ sent as it is', 'title__like=a\\', 'title__like'],
  ['a \\ alone', 'title__like=%5C', 'title__like'],
  ['an odd run of \\ at the end', 'title__like=a%5C%5C%5C', 'title__like'],
  ['ilike, a trailing \\', 'title__ilike=%25%5C', 'title__ilike'],
  ['ilike, \\ before a letter', 'title__ilike=%5CA%25', 'title__ilike'],
  ['\\ before a letter (C:\\dir, which would match C:dir)', 'title__like=C:%5Cdir', 'title__like'],
  ['a regular expression\'s \\d', 'title__like=%5Cd%25', 'title__like'],
  ['\\ before a non-ASCII letter', `title__like=${enc('caf\\é')}`, 'title__like'],
  ['\\ before an emoji', `title__like=${enc('%\\😀%')}`, 'title__like'],
  ['\\ before a space', `title__like=${enc('%\\ smile')}`, 'title__like'],
  ['an escaped \\, then a lone one', 'title__like=%5C%5C%5Ca', 'title__like'],
  ['10,001 backslashes, percent-encoded', `title__like=${'%5C'.repeat(10_001)}`, 'title__like'],
  ['9,999 backslashes, then a letter', `title__like=${'\\'.repeat(9_999)}a`, 'title__like'],
  ['19,999 letters and a trailing \\', `title__ilike=${'a'.repeat(19_999)}%5C`, 'title__ilike']
]

/** Well-formed patterns: [what, query string, the titles listed]. */
const WELL_FORMED: Array<[string, string, string[]]> = [
  ['\\% a literal percent', `title__like=${enc('a\\%b')}`, ['a%b']],
  ['\\% alone', `title__like=${enc('\\%')}`, ['%']],
  ['\\_ a literal underscore', `title__like=${enc('a\\_')}`, ['a_']],
  ['_ a wildcard', 'title__like=a_', ['a_', 'ab', 'a\\']],
  ['\\\\ a literal backslash', `title__like=${enc('a\\\\')}`, ['a\\']],
  ['\\\\ a literal backslash, ilike', `title__ilike=${enc('a\\\\')}`, ['a\\', 'A\\']],
  ['\\\\\\\\ two literal backslashes', `title__like=${enc('a\\\\\\\\')}`, ['a\\\\']],
  ['\\\\ between wildcards', `title__like=${enc('%\\\\%')}`, TITLES.filter((title) => title.includes('\\'))],
  ['C:\\\\dir', `title__like=${enc('C:\\\\dir')}`, ['C:\\dir']],
  ['C:\\\\DIR, ilike', `title__ilike=${enc('c:\\\\DIR')}`, ['C:\\dir']],
  ['\\\\ then \\%: a backslash and a percent', `title__like=${enc('%\\\\\\%')}`, []],
  ['% alone', 'title__like=%25', TITLES],
  ['an empty pattern', 'title__like=', ['']],
  ['non-ASCII, like tells case apart', `title__like=${enc('caf%')}`, ['café']],
  ['non-ASCII after a wildcard', `title__like=${enc('%é')}`, ['café', 'Café']],
  ['ASCII case, ilike', `title__ilike=${enc('CAF%')}`, ['café', 'Café']],
  ['CJK', `title__like=${enc('日本%')}`, ['日本語']],
  ['an emoji', `title__ilike=${enc('%😀%')}`, ['😀 smile']],
  ['ß', `title__like=${enc('%ß%')}`, ['Straße']],
  ['10,000 backslashes, percent-encoded: 5,000 literal ones', `title__like=${'%5C'.repeat(10_000)}`, [BACKSLASHES]]
]

test('a malformed LIKE pattern is a 400 naming its parameter, the same body on every store, and no store reads it', async (t) => {
  const all = await stores(t)
  const before = all.map((store) => store.reads())
  for (const [what, query, parameter] of MALFORMED) {
    const answer = await sameEverywhere(t, all, `/books?${query}`, what)
    t.equal(answer.status, 400, `${what}: 400`)
    t.strictSame(JSON.parse(answer.body), refusal(parameter), `${what}: the problem names ${parameter}`)
  }
  t.same(all.map((store) => store.reads()), before, 'no store was asked to read')
  // A refusal is a problem like every other 400 of the query string.
  problem(t, await all[0].app.inject('/books?title__like=a%5C'), 400)
})

test('a well-formed LIKE pattern lists the same rows on every store', async (t) => {
  const all = await stores(t)
  for (const [what, query, titles] of WELL_FORMED) {
    const answer = await sameEverywhere(t, all, `/books?${query}`, what)
    t.equal(answer.status, 200, `${what}: 200`)
    t.same((JSON.parse(answer.body) as BookT[]).map((book) => book.title), titles, `${what}: the rows`)
  }
  t.ok(all.every((store) => store.reads() === WELL_FORMED.length), 'each store read once per request')
})

test('a pattern both too long and malformed: one entry, the bound it passed; within the bound, the pattern', async (t) => {
  const all = await stores(t)
  const long = await sameEverywhere(t, all, `/short?title__like=${'%5C'.repeat(101)}`, 'too long and malformed')
  t.match(JSON.parse(long.body), {
    status: 400,
    errors: [{ detail: 'Expected string length less or equal to 100', pointer: '#/title__like', in: 'query', parameter: 'title__like' }]
  })
  t.equal((JSON.parse(long.body) as { errors: unknown[] }).errors.length, 1, 'one entry for the parameter')
  const short = await sameEverywhere(t, all, '/short?title__ilike=a%5C', 'within the bound, malformed')
  t.strictSame(JSON.parse(short.body), { ...refusal('title__ilike'), instance: '/short' })
  const longest = await sameEverywhere(t, all, `/short?title__like=${'%5C'.repeat(100)}`, '100 backslashes: 50 literal ones')
  t.same([longest.status, JSON.parse(longest.body)], [200, []], 'the longest pattern allowed is served')
})

test('hostile queries: repeated parameters, both operators at once; the same answers on every store', async (t) => {
  const all = await stores(t)
  const before = all.map((store) => store.reads())
  const expectedString = (parameter: string): Record<string, unknown> =>
    ({ detail: 'Expected string', pointer: `#/${parameter}`, in: 'query', parameter })
  const cases: Array<[string, string, unknown[]]> = [
    ['a malformed pattern 5,000 times', Array(5000).fill('title__like=a%5C').join('&'), [expectedString('title__like')]],
    ['a well-formed pattern 5,000 times', Array(5000).fill('title__like=%25').join('&'), [expectedString('title__like')]],
    ['both operators 2,500 times each', Array(2500).fill('title__like=%25&title__ilike=%5C').join('&'),
      [expectedString('title__like'), expectedString('title__ilike')]],
    // Entries come in the order of the query's schema, not of the query string.
    ['both operators, each malformed once', 'title__ilike=%5Cx&title__like=x%5C',
      [refusal('title__like').errors, refusal('title__ilike').errors].flat()]
  ]
  for (const [what, query, errors] of cases) {
    const answer = await sameEverywhere(t, all, `/books?${query}`, what)
    t.equal(answer.status, 400, `${what}: 400`)
    t.strictSame((JSON.parse(answer.body) as { errors: unknown[] }).errors, errors, `${what}: each parameter named once`)
  }
  t.same(all.map((store) => store.reads()), before, 'no store was asked to read')
})

test('a bulk delete selects rows with the same check: a malformed pattern deletes nothing', async (t) => {
  const repository = new MemoryRepository<BookT>({ rows: ROWS.map((row) => ({ ...row })) })
  class Cleanup extends GenericBulkDestroyAPIView {
    static override filter = TitleFilter
    static override repository = repository
  }
  const app = await build({ views: [{ view: Cleanup, prefix: '/books' }] })
  t.teardown(() => app.close())
  const refused = problem(t, await app.inject({ method: 'DELETE', url: '/books/bulk?title__like=a%5C' }), 400)
  t.strictSame(refused, { ...refusal('title__like'), instance: '/books/bulk' }, 'the 400 of the list, naming title__like')
  t.equal(repository.list({}).length, ROWS.length, 'nothing deleted')
  t.equal((await app.inject({ method: 'DELETE', url: `/books/bulk?title__like=${enc('a\\\\')}` })).statusCode, 204, 'a well-formed one deletes')
  t.same(repository.list({}).map((row) => row.title), TITLES.filter((title) => title !== 'a\\'), 'the row it names, alone')
})

/** GET `path` over a real socket: the status and body, whatever answers (Node itself past its header limit). */
function get (port: number, path: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const request = http.get({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      let body = ''
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => { body += chunk })
      res.on('end', () => { resolve({ status: res.statusCode ?? 0, body }) })
    })
    request.on('error', reject)
  })
}

test('over a socket, the largest query string Node takes: a pattern of backslashes, refused when odd, served when even', async (t) => {
  const all = await stores(t)
  const ports: number[] = []
  for (const store of all) {
    await store.app.listen({ port: 0, host: '127.0.0.1' })
    ports.push((store.app.server.address() as AddressInfo).port)
  }
  const path = (n: number): string => `/books?title__like=${'\\'.repeat(n)}`
  // Node refuses a request whose URL and headers pass its limit (16 KiB by default) with a 431,
  // before Fastify sees it: the largest pattern it lets through is found by halving.
  let low = 0
  let high = 20_000
  while (low < high) {
    const mid = Math.ceil((low + high) / 2)
    if ((await get(ports[0], path(mid))).status === 431) high = mid - 1
    else low = mid
  }
  t.ok(low > 16_000 && low < 16_384, `the largest pattern through a socket: ${low} backslashes`)
  const answers = async (n: number): Promise<Answer[]> => Promise.all(ports.map((port) => get(port, path(n))))
  const [odd, even] = low % 2 === 1 ? [low, low - 1] : [low - 1, low]
  for (const answer of await answers(odd)) {
    t.strictSame([answer.status, JSON.parse(answer.body)], [400, refusal('title__like')], `${odd} backslashes: refused, naming title__like`)
  }
  for (const answer of await answers(even)) t.same([answer.status, JSON.parse(answer.body)], [200, []], `${even} backslashes: served`)
  t.same((await answers(low + 1)).map((answer) => answer.status), all.map(() => 431), 'one more: Node\'s 431, the same everywhere')
  t.same((await answers(10_000)).map((answer) => [answer.status, JSON.parse(answer.body)]),
    all.map(() => [200, [{ id: TITLES.indexOf(BACKSLASHES) + 1, title: BACKSLASHES }]]), '10,000 backslashes as they are: 5,000 literal ones')
  t.same((await answers(10_001)).map((answer) => answer.status), all.map(() => 400), '10,001: refused')
})

test('PostgreSQL, given the issue\'s pattern itself, fails only on a row the match reaches the \\ on', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  // Why the query refuses it: the store's answer would depend on the rows (the other stores match
  // nothing, or a literal \\). The stores above include PostgreSQL, so the 400 there is the query's.
  const pg = await postgresStore(t)
  if (pg === undefined) return // skipped where PostgreSQL is not installed
  t.teardown(() => pg.app.close())
  t.match(await caught(() => pg.list({ title__like: 'a\\' })), { statusCode: 400, message: 'A value does not fit its column.' }, 'a\\ reaches the row a\\')
  t.same(await pg.list({ title__like: 'zz\\' }), [], 'zz\\ reaches no row: nothing, and no error')
  t.strictSame(JSON.parse((await pg.app.inject('/books?title__like=a%5C')).body), refusal('title__like'), 'through the filter: the 400 naming the parameter')
})

test('the query schema: what the document shows, what the regular expression takes', async (t) => {
  const like = TitleFilter.querySchema().properties.title__like
  t.match(like, { type: 'string', maxLength: 20_000, pattern: LIKE_PATTERN, description: /\\ escapes %, _ or \\/ })
  t.equal(TitleFilter.criteriaSchema().properties.title__ilike.pattern, LIKE_PATTERN, 'bulk actions select with the same check')
  const Others = BaseFilter.with({ operatorFields: { id: Type.Integer() }, operators: { id: ['in', 'not_in', 'is_null', 'gt'] } })
  t.match(Others.querySchema().properties, {
    id__in: { type: 'array', items: { type: 'integer' }, maxItems: 100 },
    id__not_in: { type: 'array', minItems: 1 },
    id__is_null: { type: 'boolean' },
    id__gt: { type: 'integer' }
  }, 'the other operators take what they did')
  t.notOk(JSON.stringify(Others.querySchema()).includes('pattern'), 'and no pattern')
  const expression = new RegExp(LIKE_PATTERN)
  const cases: Array<[string, boolean]> = [
    ['', true], ['abc', true], ['%_', true], ['\\%', true], ['\\_', true], ['\\\\', true], ['a\\\\\\%b', true],
    ['\\', false], ['a\\', false], ['\\\\\\', false], ['\\a', false], ['\\\\\\a', false], ['%\\', false], ['\\\n', false]
  ]
  t.same(cases.map(([pattern]) => [pattern, expression.test(pattern)]), cases, 'well-formed and malformed patterns')
  const began = performance.now()
  t.notOk(expression.test('\\\\'.repeat(100_000) + '\\'), '200,001 backslashes: refused')
  t.ok(performance.now() - began < 1000, 'in linear time: each step is decided by the character it reads')
})
