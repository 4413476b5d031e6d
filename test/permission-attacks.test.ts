import t0, { test, type Test } from 'tap'
import Fastify, { type FastifyInstance, type FastifyRequest, type InjectOptions, type LightMyRequestResponse } from 'fastify'
import pg from 'pg'
import { Type, type Static } from '@sinclair/typebox'
import views, { mix } from '../lib/index.js'
import { IsAuthenticated, hasScope, permission, type Authenticator } from '../lib/access.js'
import { AsyncGenericViewSet, CursorPaginationFilter, GenericViewSet, MemoryRepository, OffsetLimitFilter } from '../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin, type ConditionalOptions } from '../lib/conditional.js'
import { PostgresRepository, SqliteRepository, type SqlTableOptions } from '../lib/stores/sql/index.js'
import { driver, openSqlite } from './sqlite-driver.js'
import { postgres, type PgServer } from './pg-server.js'

// Permissions under attack (docs/security.md, "Permissions under attack"): a viewset with every
// mixin (conditional, the four bulk verbs, the six CRUD actions, three patch formats, a cursor list
// and a counted one), scoped by `IsOwner.or(IsAdmin)`, attacked on every route it serves by an
// anonymous client, by a reader against another reader's rows, by a reader without the write scope,
// and 24 times at once, on memory, SQLite and PostgreSQL. Every answer about a row the reader may
// not see is compared byte for byte with the answer about a row that does not exist, the store is
// compared whole before and after each attack, and the 404 of a hidden row is timed against the 404
// of a missing one.

interface Reader { id: number, admin: boolean, scopes: string[] }

const READERS: Record<string, Reader> = {
  alice: { id: 1, admin: false, scopes: ['items:write'] },
  bob: { id: 2, admin: false, scopes: ['items:write'] },
  eve: { id: 3, admin: false, scopes: [] },
  root: { id: 9, admin: true, scopes: ['items:write'] }
}

const CHALLENGE = 'Reader realm="attacks"'

/** `x-reader: bob` names a reader; a name nobody has is refused (a 401), no header is anonymous. */
const byHeader: Authenticator<Reader> = {
  scheme: 'readerName',
  securityScheme: { type: 'apiKey', in: 'header', name: 'x-reader' },
  challenge: CHALLENGE,
  authenticate (request: FastifyRequest) {
    const name = request.headers['x-reader']
    if (name === undefined) return undefined
    return typeof name === 'string' && Object.hasOwn(READERS, name) ? READERS[name] : null
  },
  scopesOf: (reader) => reader.scopes
}

const Item = Type.Object({
  id: Type.Integer(), owner_id: Type.Integer(), title: Type.String(), note: Type.String(), version: Type.Integer()
}, { $id: 'Item' })
const ItemIn = Type.Object({ owner_id: Type.Integer(), title: Type.String({ minLength: 1 }), note: Type.String() })
const ItemPut = Type.Object({ id: Type.Integer(), ...ItemIn.properties })
type ItemT = Static<typeof Item>

/** Alice's rows, bob's, eve's; no row 7 or 9. Root, the admin, owns none. */
const SEED: readonly ItemT[] = [
  { id: 1, owner_id: 1, title: 'a1', note: 'alice', version: 1 },
  { id: 2, owner_id: 1, title: 'a2', note: 'alice', version: 1 },
  { id: 3, owner_id: 2, title: 'b1', note: 'bob', version: 1 },
  { id: 4, owner_id: 2, title: 'b2', note: 'bob', version: 1 },
  { id: 5, owner_id: 1, title: 'a3', note: 'alice', version: 1 },
  { id: 6, owner_id: 2, title: 'b3', note: 'bob', version: 1 },
  { id: 8, owner_id: 3, title: 'e1', note: 'eve', version: 1 }
]
const visibleTo = (reader: Reader): number[] =>
  SEED.filter((row) => reader.admin || row.owner_id === reader.id).map((row) => row.id)

const IsOwner = permission<ItemT, Reader>({ name: 'IsOwner', scope: (reader) => ({ owner_id: reader.id }) })
const IsAdmin = permission<unknown, Reader>({ name: 'IsAdmin', request: (reader) => reader.admin, message: 'Admins only.' })
const WRITES = ['create', 'update', 'partialUpdate', 'destroy', 'bulkCreate', 'bulkUpdate', 'updateMany', 'bulkDelete'] as const

const FILTERING = {
  fields: { title: Type.String(), owner_id: Type.Integer(), id: Type.Integer() },
  operators: { id: ['in', 'gt'] },
  orderingFields: ['title', 'id'],
  searchFields: ['title', 'note'],
  defaultPageSize: 2
} as const
class CursorFilter extends CursorPaginationFilter.with(FILTERING) {}
class CountFilter extends OffsetLimitFilter.with(FILTERING) {}

const SyncBase = mix(ConditionalMixin, BulkAPIViewSet, GenericViewSet)

/** One store the attacks are served from: its repository, the whole of it as the database holds it, and the seed put back. */
interface Store {
  name: string
  family: 'sync' | 'async'
  repository: unknown
  dump: () => Promise<string>
  reset: () => Promise<void>
  close: () => Promise<void>
}

/**
 * The viewset with every mixin over a store, three times: `/items` lists by cursor, `/counted` by offset
 * with its total, and `/versioned` makes its ETags from the stored version and compares it in the write.
 */
function viewsOver (store: Store) {
  const Base = store.family === 'sync' ? SyncBase : mix(ConditionalMixin, AsyncBulkAPIViewSet, AsyncGenericViewSet)
  class Items extends (Base as typeof SyncBase) {
    static override responseSchema = Item
    static override createSchema = ItemIn
    static override updateSchema = ItemIn
    static override bulkUpdateSchema = ItemPut
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override filter: (typeof SyncBase)['filter'] = CursorFilter
    static override conditional: ConditionalOptions = { etag: true }
    static override patch = { formats: ['json', 'merge-patch', 'json-patch'] as const }
    static override repository = store.repository as never
    static override permissions = [IsAuthenticated, IsOwner.or(IsAdmin)]
    static override actionPermissions = Object.fromEntries(WRITES.map((action) => [action, [hasScope('items:write')]]))
  }
  class CountedItems extends Items {
    static override filter = CountFilter
  }
  class VersionedItems extends Items {
    static override conditional = { etag: true, versionField: 'version' }
  }
  return [{ view: Items, prefix: '/items' }, { view: CountedItems, prefix: '/counted' }, { view: VersionedItems, prefix: '/versioned' }]
}

/** A route as Fastify registered it. */
interface Route { method: string, url: string }

/** The app over a store, and every route it registered (HEAD included), as `onRoute` saw them. */
async function serve (store: Store): Promise<{ app: FastifyInstance, routes: Route[] }> {
  const app = Fastify({ logger: false })
  const routes: Route[] = []
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url })
  })
  await app.register(views, { auth: { authenticators: [byHeader] }, views: viewsOver(store) })
  await app.ready()
  return { app, routes }
}

// The stores.

const COLUMNS = ['id', 'owner_id', 'title', 'note', 'version'] as const
const TABLE = { table: 'items', columns: COLUMNS, versionColumn: 'version' } satisfies SqlTableOptions<ItemT>
const INSERT = 'INSERT INTO items (id, owner_id, title, note, version) VALUES '
const COLUMN_TYPES = 'owner_id INTEGER NOT NULL, title TEXT NOT NULL, note TEXT NOT NULL, version INTEGER NOT NULL DEFAULT 1'

function memoryStore (): Store {
  const repository = new MemoryRepository<ItemT>({ rows: SEED.map((row) => ({ ...row })), versionField: 'version' })
  return {
    name: 'memory',
    family: 'sync',
    repository,
    dump: async () => JSON.stringify(repository.list({}).sort((a, b) => a.id - b.id)),
    reset: async () => {
      repository.deleteMany({})
      repository.createMany(SEED.map((row) => ({ ...row })))
    },
    close: async () => {}
  }
}

function sqliteStore (): Store {
  const db = openSqlite(':memory:')
  db.exec(`CREATE TABLE items (id INTEGER PRIMARY KEY, ${COLUMN_TYPES})`)
  const insert = db.prepare(`${INSERT}(?, ?, ?, ?, ?)`)
  const seed = (): void => {
    db.exec('DELETE FROM items')
    for (const row of SEED) insert.run(row.id, row.owner_id, row.title, row.note, row.version)
  }
  seed()
  return {
    name: 'SQLite',
    family: 'sync',
    repository: new SqliteRepository<ItemT>(db, TABLE),
    dump: async () => JSON.stringify(db.prepare('SELECT * FROM items ORDER BY id').all()),
    reset: async () => { seed() },
    close: async () => { db.close() }
  }
}

async function postgresStore (server: PgServer): Promise<Store> {
  const pool = new pg.Pool({ connectionString: server.url, max: 4 })
  pool.on('error', () => {})
  await pool.query('DROP TABLE IF EXISTS items')
  await pool.query(`CREATE TABLE items (id INTEGER GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, ${COLUMN_TYPES})`)
  const reset = async (): Promise<void> => {
    await pool.query('DELETE FROM items')
    for (const row of SEED) await pool.query(`${INSERT}($1, $2, $3, $4, $5)`, [row.id, row.owner_id, row.title, row.note, row.version])
    await pool.query("SELECT setval(pg_get_serial_sequence('items', 'id'), 100)")
  }
  await reset()
  return {
    name: 'PostgreSQL',
    family: 'async',
    repository: new PostgresRepository<ItemT>(pool, TABLE),
    dump: async () => JSON.stringify((await pool.query('SELECT * FROM items ORDER BY id')).rows),
    reset,
    close: async () => { await pool.end() }
  }
}

// The attacks.

/**
 * What an attack names: a row the attacker may not see, or one that does not exist. Each of their
 * values is as long as the other's, so that their answers compare byte for byte, lengths included.
 */
interface Target { id: number, title: string, owner: number }

/** Alice's row 1, as bob names it. */
const HIDDEN: Target = { id: 1, title: 'a1', owner: 1 }
/** No row has id 7, title 'zz' or owner 7. */
const MISSING: Target = { id: 7, title: 'zz', owner: 7 }
/** Eve's own row, which she may read but, without the write scope, not change. */
const OWN_EVE: Target = { id: 8, title: 'e1', owner: 3 }

/** One request of an attack, made for a target; `route` is the route it reaches, as Fastify names it. */
interface Attack {
  kind: string
  name: string
  route: string
  /** The status both answer; -1: any that reveals nothing (a path variant). */
  status: number
  request: (target: Target) => InjectOptions
}

const PREFIXES = ['/items', '/counted', '/versioned'] as const
const JSON_PATCH = 'application/json-patch+json'
const MERGE_PATCH = 'application/merge-patch+json'
const LONG_AGO = 'Sat, 01 Jan 2000 00:00:00 GMT'

/** The conditional headers a write is sent with: none, alice's real ETag, `*`, a stale tag, and the dates. */
function writeConditions (etag: string): Array<[string, Record<string, string>]> {
  return [
    ['no condition', {}],
    ['If-Match: alice\'s ETag', { 'if-match': etag }],
    ['If-Match: *', { 'if-match': '*' }],
    ['If-Match: a stale tag', { 'if-match': '"stale"' }],
    ['If-None-Match: *', { 'if-none-match': '*' }],
    ['If-None-Match: alice\'s ETag', { 'if-none-match': etag }],
    ['If-Unmodified-Since', { 'if-unmodified-since': LONG_AGO }]
  ]
}

/** The conditional headers a read is sent with. */
function readConditions (etag: string): Array<[string, Record<string, string>]> {
  return [
    ['no condition', {}],
    ['If-None-Match: alice\'s ETag', { 'if-none-match': etag }],
    ['If-None-Match: *', { 'if-none-match': '*' }],
    ['If-Modified-Since', { 'if-modified-since': 'Fri, 01 Jan 2100 00:00:00 GMT' }],
    ['If-Match: alice\'s ETag', { 'if-match': etag }]
  ]
}

/** The same path, spelt otherwise: each must answer the hidden row as it answers the missing one. */
function pathVariants (prefix: string): Array<[string, (id: number) => string]> {
  const encodedFirst = `/%${prefix.charCodeAt(1).toString(16)}${prefix.slice(2)}`
  return [
    ['canonical', (id) => `${prefix}/${id}`],
    ['trailing slash', (id) => `${prefix}/${id}/`],
    ['leading zero', (id) => `${prefix}/0${id}`],
    ['percent-encoded id', (id) => `${prefix}/%3${id}`],
    ['percent-encoded prefix', (id) => `${encodedFirst}/${id}`],
    ['duplicate slash', (id) => `/${prefix}/${id}`],
    ['upper case', (id) => `${prefix.toUpperCase()}/${id}`],
    ['decimal id', (id) => `${prefix}/${id}.0`],
    ['signed id', (id) => `${prefix}/+${id}`],
    ['the owner in the query', (id) => `${prefix}/${id}?owner_id=2`],
    ['another id in the query', (id) => `${prefix}/${id}?id=3`]
  ]
}

/** The selections bulk PATCH and DELETE are sent with: each selects the target and nothing else of what exists. */
const selections = (target: Target): string[] => [
  `title=${target.title}`,
  `id=${target.id}`,
  `id__in=${target.id}`,
  `owner_id=${target.owner}`,
  `id__in=${target.id}&id__in=${target.id === HIDDEN.id ? 2 : 9}`,
  `title=${target.title}&id__gt=0`
]

/** The list queries that name the target: bob is answered alike for the hidden row and the missing one. */
const LIST_QUERIES: Array<[string, (x: Target) => string]> = [
  ['title=', (x) => x.title],
  ['id=', (x) => String(x.id)],
  ['id__in=', (x) => String(x.id)],
  ['q=', (x) => x.title],
  ['owner_id=', (x) => String(x.owner)],
  ['sort=title&title=', (x) => x.title]
]

/** The bodies of PATCH on one row, by media type: each would change alice's row, or give it to bob. */
const PATCHES: Array<[string, string, (x: Target) => string]> = [
  ['JSON', 'application/json', () => '{"title":"taken"}'],
  ['JSON, the owner', 'application/json', () => '{"owner_id":2}'],
  ['merge patch', MERGE_PATCH, () => '{"title":"taken","note":null}'],
  ['JSON Patch', JSON_PATCH, () => '[{"op":"replace","path":"/owner_id","value":2}]'],
  ['JSON Patch test of the title', JSON_PATCH, (x) => JSON.stringify([{ op: 'test', path: '/title', value: x.title }, { op: 'replace', path: '/title', value: 'taken' }])],
  ['JSON Patch copy', JSON_PATCH, () => '[{"op":"copy","from":"/title","path":"/note"}]']
]

/**
 * Every request bob sends against alice's rows (and, the same, against rows that do not exist),
 * on each registration, with the status each must answer. `etags` are alice's real ETags of row 1,
 * by prefix.
 */
function bobAttacks (etags: Record<string, string>): Attack[] {
  const out: Attack[] = []
  const add = (kind: string, route: string, name: string, status: number,
    request: (x: Target) => InjectOptions): void => {
    out.push({ kind, route, name, status, request: (x) => ({ ...request(x), headers: { 'x-reader': 'bob', ...request(x).headers } }) })
  }
  for (const p of PREFIXES) {
    const etag = etags[p]
    for (const [cond, headers] of readConditions(etag)) {
      for (const method of ['GET', 'HEAD'] as const) {
        add('detail read', `${method} ${p}/:id`, `${method} ${p}/:id, ${cond}`, 404, (x) => ({ method, url: `${p}/${x.id}`, headers }))
      }
    }
    for (const [variant, url] of pathVariants(p)) {
      for (const method of ['GET', 'HEAD', 'DELETE'] as const) {
        add('path variant', `${method} ${p}/:id`, `${method} ${p}/:id, ${variant}`, -1, (x) => ({ method, url: url(x.id) }))
      }
    }
    for (const [cond, headers] of writeConditions(etag)) {
      const item = { owner_id: 2, title: 'taken', note: '' }
      add('detail write', `PUT ${p}/:id`, `PUT ${p}/:id, ${cond}`, 404, (x) => ({ method: 'PUT', url: `${p}/${x.id}`, headers, payload: item }))
      add('detail write', `DELETE ${p}/:id`, `DELETE ${p}/:id, ${cond}`, 404, (x) => ({ method: 'DELETE', url: `${p}/${x.id}`, headers }))
      for (const [format, type, body] of PATCHES) {
        add('detail write', `PATCH ${p}/:id`, `PATCH ${p}/:id (${format}), ${cond}`, 404,
          (x) => ({ method: 'PATCH', url: `${p}/${x.id}`, headers: { ...headers, 'content-type': type }, payload: body(x) }))
      }
    }
    for (const [n, selection] of ['title', 'id', 'id__in', 'owner_id', 'id__in twice', 'title and id__gt'].entries()) {
      const url = (x: Target): string => `${p}/bulk?${selections(x)[n]}`
      add('bulk', `PATCH ${p}/bulk`, `PATCH ${p}/bulk selecting by ${selection}`, 200, (x) => ({ method: 'PATCH', url: url(x), payload: { note: 'taken' } }))
      add('bulk', `DELETE ${p}/bulk`, `DELETE ${p}/bulk selecting by ${selection}`, 204, (x) => ({ method: 'DELETE', url: url(x) }))
    }
    const put = (items: (x: Target) => unknown[]) => (x: Target): InjectOptions => ({ method: 'PUT', url: `${p}/bulk`, payload: items(x) })
    add('bulk', `PUT ${p}/bulk`, `PUT ${p}/bulk naming the row`, 404, put((x) => [{ id: x.id, owner_id: 2, title: 'taken', note: '' }]))
    add('bulk', `PUT ${p}/bulk`, `PUT ${p}/bulk naming the row with its owner`, 404, put((x) => [{ id: x.id, owner_id: x.owner, title: 'taken', note: '' }]))
    add('bulk', `PUT ${p}/bulk`, `PUT ${p}/bulk naming one of bob's rows and the row`, 404,
      put((x) => [{ id: 3, owner_id: 2, title: 'b1', note: 'bob' }, { id: x.id, owner_id: 2, title: 'taken', note: '' }]))
    const planted = (x: Target): Record<string, unknown> => ({ owner_id: x.owner, title: 'planted', note: '' })
    add('create', `POST ${p}`, `POST ${p} for the owner`, 403, (x) => ({ method: 'POST', url: p, payload: planted(x) }))
    add('create', `POST ${p}/bulk`, `POST ${p}/bulk for the owner`, 403, (x) => ({ method: 'POST', url: `${p}/bulk`, payload: [planted(x)] }))
    add('create', `POST ${p}/bulk`, `POST ${p}/bulk for bob and the owner`, 403,
      (x) => ({ method: 'POST', url: `${p}/bulk`, payload: [{ owner_id: 2, title: 'mine', note: '' }, planted(x)] }))
    for (const [query, value] of LIST_QUERIES) {
      for (const method of ['GET', 'HEAD'] as const) {
        add('list filter', `${method} ${p}`, `${method} ${p}?${query}<target>`, 200, (x) => ({ method, url: `${p}?${query}${value(x)}` }))
      }
    }
    for (const path of [(x: Target) => `${p}/${x.id}`, () => p, () => `${p}/bulk`]) {
      add('OPTIONS', '', `OPTIONS ${path(MISSING)}`, 204, (x) => ({ method: 'OPTIONS', url: path(x) }))
    }
  }
  return out
}

/** A request for every route the app registered, as a route names it, with a body of the shape it takes. */
function requestFor (route: Route, target: Target, headers: Record<string, string>): InjectOptions {
  const url = route.url.replace(':id', String(target.id))
  const bulk = route.url.endsWith('/bulk')
  const method = route.method as InjectOptions['method']
  const item = { owner_id: target.owner, title: 'x', note: '' }
  switch (route.method) {
    case 'POST': return { method, url, headers, payload: bulk ? [item] : item }
    case 'PUT': return { method, url, headers, payload: bulk ? [{ id: target.id, ...item }] : item }
    case 'PATCH': return bulk ? { method, url: `${url}?title=${target.title}`, headers, payload: { note: 'x' } } : { method, url, headers, payload: { note: 'x' } }
    case 'DELETE': return { method, url: bulk ? `${url}?title=${target.title}` : url, headers }
    default: return { method, url: route.url.includes(':id') ? url : `${url}?title=${target.title}`, headers }
  }
}

// Comparing answers.

/** An answer as it can be compared with another's. */
interface Comparable { status: number, headers: Record<string, unknown>, body: string }

/**
 * An answer as it can be compared with another: its status, its headers but the date, and its
 * body with the URL it was asked by (which a problem's `instance` and a route 404 repeat) left out.
 */
function comparable (res: LightMyRequestResponse, request: InjectOptions): Comparable {
  const { date: _date, ...headers } = res.headers
  const url = String(request.url)
  const path = url.split('?')[0]
  // A bulk PUT's 404 names the key it was sent ("Item 0: no row has id 7."): the hidden row's and the missing one's differ there only.
  const body = res.body.split(url).join('<url>').split(path).join('<path>').replace(/no row has [^."]*/g, 'no row has <key>')
  return { status: res.statusCode, headers: { ...headers, 'content-length': undefined }, body }
}

/** Sends a request, its answer made comparable. */
const send = async (app: FastifyInstance, request: InjectOptions): Promise<Comparable> =>
  comparable(await app.inject(request), request)

/** How many requests of each kind were sent, and how many met every assertion. */
type Tally = Map<string, { sent: number, passed: number }>

function count (tally: Tally, kind: string, requests: number, passed: boolean): void {
  const entry = tally.get(kind) ?? { sent: 0, passed: 0 }
  entry.sent += requests
  if (passed) entry.passed += requests
  tally.set(kind, entry)
}

/** Statuses that would tell the attacker something of a hidden row, or that a write happened. */
const REVEALING = new Set([200, 201, 204, 304, 403, 409, 412, 422])

/**
 * Sends an attack against the hidden row and against the missing one: both answer its status
 * (a path variant: one that reveals nothing), the same bytes, and the store is as it was. A store
 * an attack changed is put back, so that the next attack starts from the seed.
 */
async function attack (t: Test, app: FastifyInstance, store: Store, tally: Tally, one: Attack,
  hidden = HIDDEN): Promise<Comparable> {
  const before = await store.dump()
  const onHidden = await send(app, one.request(hidden))
  const onMissing = await send(app, one.request(MISSING))
  const after = await store.dump()
  const checks = [
    one.status === -1
      ? t.notOk(REVEALING.has(onHidden.status), `${one.name}: ${onHidden.status} reveals nothing`)
      : t.equal(onHidden.status, one.status, `${one.name}: ${one.status}`),
    t.same(onHidden, onMissing, `${one.name}: the hidden row is answered as the missing one`),
    t.equal(after, before, `${one.name}: nothing changed`)
  ]
  if (after !== before) await store.reset()
  count(tally, one.kind, 2, checks.every(Boolean))
  return onHidden
}

// Lists, counts and cursor pages.

const reader = (name: string): Record<string, string> => ({ 'x-reader': name })

interface CursorPageT { items: ItemT[], next_page: string | null, previous_page: string | null }
interface OffsetPageT { items: ItemT[], total_items: number }

interface Walk { ids: number[], cursors: string[], requests: number }

/**
 * Every id a cursor walk from `url` reaches, following `next_page` to the end, as `who`; the
 * cursors it was given on the way; how many pages it read.
 */
async function walk (app: FastifyInstance, who: string, url: string): Promise<Walk> {
  const ids: number[] = []
  const cursors: string[] = []
  let next: string | null = url
  let requests = 0
  for (; next !== null && requests < 50; requests++) {
    const page: CursorPageT = (await app.inject({ url: next, headers: reader(who) })).json<CursorPageT>()
    ids.push(...page.items.map((row) => row.id))
    if (page.next_page !== null) cursors.push(page.next_page)
    if (page.previous_page !== null) cursors.push(page.previous_page)
    next = page.next_page === null ? null : `/items?page_size=1&cursor=${page.next_page}${url.includes('sort=') ? '&sort=-title' : ''}`
  }
  return { ids, cursors, requests }
}

async function listsCountsAndCursors (t: Test, app: FastifyInstance, tally: Tally): Promise<void> {
  const sorted = (ids: number[]): number[] => [...ids].sort((a, b) => a - b)
  const cursorsOf: Record<string, string[]> = {}
  for (const [name, who] of Object.entries(READERS)) {
    const visible = visibleTo(who)
    const byId = await walk(app, name, '/items?page_size=1')
    const byTitle = await walk(app, name, '/items?page_size=1&sort=-title')
    cursorsOf[name] = [...byId.cursors, ...byTitle.cursors]
    const counted = (await app.inject({ url: '/counted?limit=1', headers: reader(name) })).json<OffsetPageT>()
    const offsets = await Promise.all(visible.map(async (_, offset) =>
      (await app.inject({ url: `/counted?limit=1&offset=${offset}`, headers: reader(name) })).json<OffsetPageT>().items[0]?.id))
    const whole = (await app.inject({ url: '/counted?limit=100', headers: reader(name) })).json<OffsetPageT>()
    const ok = [
      t.same(byId.ids, visible, `${name}: cursor pages by id list each visible row once, nothing else`),
      t.same(sorted(byTitle.ids), visible, `${name}: cursor pages by -title too`),
      t.equal(counted.total_items, visible.length, `${name}: the count is of visible rows`),
      t.same(sorted(offsets), visible, `${name}: offset pages list each visible row`),
      t.same(whole.items.map((row) => row.id), visible, `${name}: one page of everything`),
      t.equal(whole.total_items, visible.length)
    ]
    count(tally, 'list, count and cursor pages', byId.requests + byTitle.requests + 2 + offsets.length, ok.every(Boolean))
  }
  // Cursors minted by alice's session and by the admin's, replayed by bob: his rows only.
  const bobs = visibleTo(READERS.bob)
  const forged = Buffer.from(JSON.stringify({ d: 'n', o: ['id'], v: [0] })).toString('base64url')
  const foreign = [...cursorsOf.alice, ...cursorsOf.root, forged]
  let replays = 0
  let replayed = true
  for (const cursor of foreign) {
    const sort = JSON.parse(Buffer.from(cursor, 'base64url').toString()).o[0] === '-title' ? '&sort=-title' : ''
    for (const size of [1, 100]) {
      const res = await app.inject({ url: `/items?page_size=${size}&cursor=${cursor}${sort}`, headers: reader('bob') })
      replays++
      const page = res.json<CursorPageT>()
      replayed = t.equal(res.statusCode, 200, 'a foreign cursor is read as bob\'s') && replayed
      replayed = t.ok(page.items.every((row) => bobs.includes(row.id)), `cursor ${cursor} replayed by bob: his rows only`) && replayed
    }
  }
  count(tally, 'foreign cursors replayed', replays, replayed)
  // Bob sends alice's list ETag: his list is not hers, so a 200 with his rows, never a 304.
  const alicesList = await app.inject({ url: '/items', headers: reader('alice') })
  const conditional = await app.inject({ url: '/items', headers: { ...reader('bob'), 'if-none-match': String(alicesList.headers.etag) } })
  const head = await app.inject({ method: 'HEAD', url: '/counted?limit=100', headers: reader('bob') })
  const get = await app.inject({ url: '/counted?limit=100', headers: reader('bob') })
  count(tally, 'list, count and cursor pages', 4, [
    t.equal(conditional.statusCode, 200, 'alice\'s list ETag is not bob\'s'),
    t.ok(conditional.json<CursorPageT>().items.every((row) => row.owner_id === 2)),
    t.equal(head.headers['content-length'], get.headers['content-length'], 'HEAD measures bob\'s list, as GET sends it')
  ].every(Boolean))
}

// Timing.

/** Median and 90th percentile of durations in nanoseconds, in microseconds. */
function stats (ns: bigint[]): { median: number, p90: number } {
  const sorted = ns.map(Number).sort((a, b) => a - b)
  const at = (q: number): number => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] / 1000
  return { median: at(0.5), p90: at(0.9) }
}

/** `n` requests for the hidden row and `n` for the missing one, interleaved (the order swapped every pair), after a warm-up. */
async function time404 (app: FastifyInstance, method: 'GET' | 'DELETE', n: number): Promise<{ hidden: { median: number, p90: number }, missing: { median: number, p90: number }, statuses: Set<number> }> {
  const statuses = new Set<number>()
  const one = async (target: Target): Promise<bigint> => {
    const start = process.hrtime.bigint()
    const res = await app.inject({ method, url: `/items/${target.id}`, headers: reader('bob') })
    const took = process.hrtime.bigint() - start
    statuses.add(res.statusCode)
    return took
  }
  for (let i = 0; i < 200; i++) { await one(HIDDEN); await one(MISSING) }
  const hidden: bigint[] = []
  const missing: bigint[] = []
  for (let i = 0; i < n; i++) {
    if (i % 2 === 0) {
      hidden.push(await one(HIDDEN))
      missing.push(await one(MISSING))
    } else {
      missing.push(await one(MISSING))
      hidden.push(await one(HIDDEN))
    }
  }
  return { hidden: stats(hidden), missing: stats(missing), statuses }
}

const TIMED = 2000
const fixed = (us: number): string => us.toFixed(1)

// The run, per store.

async function attackStore (t: Test, store: Store): Promise<void> {
  const { app, routes } = await serve(store)
  t.teardown(async () => { await app.close(); await store.close() })
  const tally: Tally = new Map()
  const seed = await store.dump()
  const etags = Object.fromEntries(await Promise.all(PREFIXES.map(async (p) =>
    [p, String((await app.inject({ url: `${p}/1`, headers: reader('alice') })).headers.etag)])))
  const etag = etags['/items']

  await t.test('the attacks are aimed: alice reads her row and its ETag is current for her', async (t) => {
    for (const p of PREFIXES) {
      t.match(etags[p], /^"/, `${p}: alice's row has a strong ETag`)
      t.equal((await app.inject({ url: `${p}/1`, headers: { ...reader('alice'), 'if-none-match': etags[p] } })).statusCode, 304, `${p}: her If-None-Match is a 304`)
    }
    t.match(etags['/versioned'], /\.1"$/, 'the version tag names version 1')
    t.equal((await app.inject({ url: '/counted/1', headers: reader('root') })).statusCode, 200, 'the admin reads it')
    for (const [variant, url] of pathVariants('/items')) {
      const alice = await app.inject({ url: url(1), headers: reader('alice') })
      const bob = await app.inject({ url: url(1), headers: reader('bob') })
      if (alice.statusCode === 200) t.equal(bob.statusCode, 404, `${variant}: the path alice reads her row by is a 404 to bob`)
      else t.equal(bob.statusCode, alice.statusCode, `${variant}: answered alike to both (${alice.statusCode})`)
    }
    const served = PREFIXES.flatMap((p) => ['GET', 'HEAD', 'POST'].map((m) => `${m} ${p}`).concat(
      ['GET', 'HEAD', 'PUT', 'PATCH', 'DELETE'].map((m) => `${m} ${p}/:id`), ['POST', 'PUT', 'PATCH', 'DELETE'].map((m) => `${m} ${p}/bulk`)))
    t.same(routes.map((r) => `${r.method} ${r.url}`).sort(), served.sort(), 'the routes attacked: every route of the viewset with every mixin, on each registration')
  })

  await t.test('anonymous, and credentials naming nobody: a 401 with the challenge on every route, nothing changed', async (t) => {
    for (const route of routes) {
      for (const [who, headers] of [['anonymous', {}], ['unknown reader', { 'x-reader': 'mallory' }], ['anonymous with alice\'s ETag', { 'if-none-match': etag, 'if-match': etag }]] as const) {
        const one: Attack = { kind: 'anonymous', name: `${who}: ${route.method} ${route.url}`, route: '', status: 401, request: (x) => requestFor(route, x, headers) }
        const answer = await attack(t, app, store, tally, one)
        t.equal(answer.headers['www-authenticate'], CHALLENGE, `${one.name}: the challenge`)
      }
    }
    // OPTIONS answers what the path takes, the same to anyone, for a hidden row as for a missing one.
    for (const path of PREFIXES.flatMap((p) => [`${p}/:id`, p, `${p}/bulk`])) {
      const answers = await Promise.all(['', 'alice', 'bob', 'eve'].flatMap((who) => [HIDDEN, MISSING].map(async (x) =>
        send(app, { method: 'OPTIONS', url: path.replace(':id', String(x.id)), headers: who === '' ? {} : reader(who) }))))
      const same = answers.every((answer) => t.same(answer, answers[0], `OPTIONS ${path}: the same answer to everyone`))
      count(tally, 'OPTIONS', answers.length, t.equal(answers[0].status, 204) && same)
    }
  })

  const attacks = bobAttacks(etags)
  const reference = new Map<string, Comparable>()

  await t.test('bob against alice\'s rows: every route, each condition, path, media type and selection answers as for a missing row, nothing changed', async (t) => {
    const covered = new Set(attacks.map((one) => one.route))
    for (const route of routes) t.ok(covered.has(`${route.method} ${route.url}`), `${route.method} ${route.url} is attacked`)
    for (const one of attacks) reference.set(one.name, await attack(t, app, store, tally, one))
  })

  await t.test('eve, without the write scope: a 403 on every write, for her own row as for a hidden or a missing one; reads as bob\'s', async (t) => {
    for (const route of routes) {
      const write = !['GET', 'HEAD'].includes(route.method)
      const one: Attack = { kind: 'missing scope', name: `eve: ${route.method} ${route.url}`, route: '', status: write ? 403 : route.url.includes(':id') ? 404 : 200, request: (x) => requestFor(route, x, reader('eve')) }
      await attack(t, app, store, tally, one)
      if (write) await attack(t, app, store, tally, { ...one, name: `${one.name}, her own row` }, OWN_EVE)
    }
  })

  await t.test('bob cannot give his row to alice: a write that stores a row outside his scope is refused, as a create that would is', async (t) => {
    const gifts: Array<[string, InjectOptions]> = [
      ['PUT', { method: 'PUT', url: '/items/3', payload: { owner_id: 1, title: 'b1', note: 'bob' } }],
      ['PATCH (JSON)', { method: 'PATCH', url: '/items/3', payload: { owner_id: 1 } }],
      ['PATCH (merge patch)', { method: 'PATCH', url: '/items/3', headers: { 'content-type': MERGE_PATCH }, payload: '{"owner_id":1}' }],
      ['PATCH (JSON Patch)', { method: 'PATCH', url: '/items/3', headers: { 'content-type': JSON_PATCH }, payload: '[{"op":"replace","path":"/owner_id","value":1}]' }],
      ['bulk PATCH', { method: 'PATCH', url: '/items/bulk?title=b1', payload: { owner_id: 1 } }]
    ]
    for (const [name, request] of gifts) {
      const res = await app.inject({ ...request, headers: { ...request.headers, ...reader('bob') } })
      const after = await store.dump()
      count(tally, 'a row given away', 1, [
        t.equal(res.statusCode, 403, `${name} of bob's row 3 with alice as its owner: a 403, as POST with her as the owner is`),
        t.equal(after, seed, `${name}: nothing changed`)
      ].every(Boolean))
      if (after !== seed) await store.reset()
    }
    const admin = await app.inject({ method: 'PATCH', url: '/items/3', headers: reader('root'), payload: { owner_id: 1 } })
    t.equal(admin.statusCode, 200, 'the admin, whom no scope narrows, may give it')
    await store.reset()
  })

  await t.test('a list, its count and its cursor pages never include a row the reader may not see', async (t) => {
    await listsCountsAndCursors(t, app, tally)
  })

  await t.test('24 concurrent copies of each of bob\'s attacks: the answers it had alone, nothing changed', async (t) => {
    t.equal(await store.dump(), seed, 'the seed, before')
    for (const one of attacks) {
      const alone = JSON.stringify(reference.get(one.name))
      const answers = await Promise.all(Array.from({ length: 24 }, async () =>
        Promise.all([send(app, one.request(HIDDEN)), send(app, one.request(MISSING))])))
      const otherwise = answers.flat().filter((answer) => JSON.stringify(answer) !== alone)
      const after = await store.dump()
      const ok = [
        t.equal(otherwise.length, 0, `${one.name}: the 48 answers are the one it had alone (${reference.get(one.name)?.status})` +
          (otherwise.length === 0 ? '' : `; ${otherwise.length} were not: ${[...new Set(otherwise.map((answer) => answer.status))].join(', ')}`)),
        t.equal(after, seed, `${one.name}: nothing changed`)
      ]
      if (after !== seed) await store.reset()
      count(tally, '24 concurrent copies', 48, ok.every(Boolean))
    }
  })

  await t.test(`the 404 of a hidden row takes as long as a missing row's (${TIMED} of each, interleaved)`, async (t) => {
    for (const method of ['GET', 'DELETE'] as const) {
      const { hidden, missing, statuses } = await time404(app, method, TIMED)
      t.same([...statuses], [404], `${method}: every timed request was a 404`)
      const gap = Math.abs(hidden.median - missing.median)
      t.ok(gap <= Math.max(0.25 * missing.median, 50), `${method}: medians ${fixed(hidden.median)} µs and ${fixed(missing.median)} µs are within 25% or 50 µs`)
      t.comment(`timing ${store.name} ${method} /items/:id as bob: hidden median ${fixed(hidden.median)} µs p90 ${fixed(hidden.p90)} µs; missing median ${fixed(missing.median)} µs p90 ${fixed(missing.p90)} µs`)
    }
    t.equal(await store.dump(), seed, 'nothing changed')
  })

  for (const [kind, { sent, passed }] of tally) t.comment(`tally ${store.name} ${kind}: ${passed}/${sent} requests passed`)
}

test('memory', async (t) => { await attackStore(t, memoryStore()) })

test(`SQLite (${driver})`, async (t) => { await attackStore(t, sqliteStore()) })

const started = await postgres()
// Stopped by the run, not by its test: a run that filters the test out (`--grep`) stops it too.
if ('server' in started) t0.teardown(() => { started.server.stop() })

test('PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if ('server' in started) await attackStore(t, await postgresStore(started.server))
})
