import Database from 'better-sqlite3'
import Fastify, { type FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { configureApp, mix, views } from '../../lib/index.js'
import { GenericListAPIView, SparseFieldsMixin } from '../../lib/generics.js'
import { SqliteRepository, type SqlTableOptions } from '../../lib/stores/sql/index.js'
import type { Scenario } from './types.js'

const PREFIX = '/sparse'

/** The item as the list sends it whole: its columns, and how many orders point at it (computed). */
const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  description: Type.String(),
  price: Type.Number(),
  updated_at: Type.String({ format: 'date-time' }),
  orders_count: Type.Integer()
})
type Item = Static<typeof Item>
/** What `?fields=id,name` sends of each item, as the hand-written narrow route's schema says it. */
const ItemName = Type.Object({ id: Type.Integer(), name: Type.String() })

/** Rows of `items`, every one in every answer; rows of `orders`, spread evenly over the items. */
const ROWS = 20
const ORDERS = 2000
const FIELDS = 'id,name'

const ORDERS_COUNT = 'SELECT COUNT(*) FROM orders o WHERE o.item_id = items.id'
const TABLE = {
  table: 'items',
  columns: ['id', 'name', 'description', 'price', 'updated_at'],
  computed: { orders_count: ORDERS_COUNT }
} satisfies SqlTableOptions<Item>

/** About 200 characters of text, different for each item. */
const description = (n: number): string =>
  `Item ${n}: ${'a sturdy, well-made thing for everyday use, sold by the piece and shipped within two days; '.repeat(3)}`.slice(0, 200)

/**
 * An in-memory SQLite database: `items` (20 rows; NOT NULL, so that the response schema, which
 * takes no null, describes every row: FV_ERR_SCHEMA_COLUMNS otherwise) and `orders` (2,000 rows,
 * 100 per item) with an index on `orders(item_id)`, which each item's count reads.
 */
function openDatabase (): Database.Database {
  const db = new Database(':memory:')
  db.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL, price REAL NOT NULL, updated_at TEXT NOT NULL)')
  db.exec('CREATE TABLE orders (id INTEGER PRIMARY KEY, item_id INTEGER NOT NULL REFERENCES items (id))')
  db.exec('CREATE INDEX orders_item_id ON orders (item_id)')
  const insertItem = db.prepare('INSERT INTO items (id, name, description, price, updated_at) VALUES (?, ?, ?, ?, ?)')
  const insertOrder = db.prepare('INSERT INTO orders (id, item_id) VALUES (?, ?)')
  db.transaction(() => {
    for (let i = 0; i < ROWS; i++) {
      const price = Math.round((4.99 + i * 1.25) * 100) / 100
      insertItem.run(i + 1, `Item ${i + 1}`, description(i + 1), price, new Date(Date.UTC(2026, 0, 1 + i, 10, 0, 0, 500)).toISOString())
    }
    for (let i = 0; i < ORDERS; i++) insertOrder.run(i + 1, (i % ROWS) + 1)
  })()
  return db
}

/** Every route of the scenario, on `app`, over `db`: each variant in a context of its own. */
async function registerRoutes (app: FastifyInstance, db: Database.Database): Promise<void> {
  // Hand-written: prepared statements, the whole row with its count, or the two columns asked for.
  const selectAll = db.prepare(`SELECT id, name, description, price, updated_at, (${ORDERS_COUNT}) AS orders_count FROM items ORDER BY id`)
  const selectNames = db.prepare('SELECT id, name FROM items ORDER BY id')
  await app.register(async (scope) => {
    scope.get(`${PREFIX}/baseline/items`, { schema: { response: { 200: Type.Array(Item) } } }, async function listItems () {
      return selectAll.all()
    })
  })
  await app.register(async (scope) => {
    scope.get(`${PREFIX}/baseline-fields/items`, { schema: { response: { 200: Type.Array(ItemName) } } }, async function listItemNames () {
      return selectNames.all()
    })
  })

  const repository = new SqliteRepository<Item>(db, TABLE)
  // No response check: the hand-written routes do not check theirs either.
  class Items extends mix(SparseFieldsMixin, GenericListAPIView).with({ responseSchema: Item, repository }) {
    static override validateResponse = false
  }
  class PlainItems extends GenericListAPIView.with({ responseSchema: Item, repository }) {
    static override validateResponse = false
  }
  // configureApp: false: the app around is configured already.
  const served = [[Items, 'views'], [Items, 'views-fields'], [PlainItems, 'views-plain']] as const
  for (const [view, variant] of served) {
    await app.register(async (scope) => {
      await scope.register(views, { configureApp: false, views: [{ view, prefix: `${PREFIX}/${variant}/items` }] })
    })
  }
}

/**
 * The request of a variant: the whole list, or `?fields=id,name` for the narrow ones (`views-fields`, and
 * `baseline-fields`, whose route ignores it: the same request bytes, parsed the same, on both sides).
 */
const requestOf = (variant: string, fields = variant.endsWith('-fields')) => ({
  method: 'GET' as const,
  path: `${PREFIX}/${variant}/items${fields ? `?fields=${FIELDS}` : ''}`
})

/**
 * Once, before the scenario's routes are served: `views` and `views-plain` answer the same status,
 * headers (but `date`) and body bytes as `baseline`, and `views-fields` the same as `baseline-fields`.
 */
async function assertSameAnswers (db: Database.Database): Promise<void> {
  const probe = configureApp(Fastify({ logger: false }))
  await probe.register(async (scope) => { await registerRoutes(scope, db) })
  await probe.ready()
  try {
    const answer = async (variant: string) => {
      const { method, path } = requestOf(variant)
      const response = await probe.inject({ method, url: path })
      const { date: _date, ...headers } = response.headers
      const { statusCode: status, body } = response
      return { text: JSON.stringify({ status, headers, body }), body }
    }
    const pairs = [['baseline', ['views', 'views-plain']], ['baseline-fields', ['views-fields']]] as const
    for (const [reference, variants] of pairs) {
      const expected = await answer(reference)
      const rows = JSON.parse(expected.body) as Array<Record<string, unknown>>
      if (!expected.text.includes('"status":200') || rows.length !== ROWS || rows.some((row, i) => row.id !== i + 1)) {
        throw new Error(`sparse-list: ${reference} answered ${expected.text.slice(0, 300)}`)
      }
      for (const variant of variants) {
        const got = await answer(variant)
        if (got.text !== expected.text) throw new Error(`sparse-list: ${variant} answers otherwise than ${reference}\n  ${reference}: ${expected.text}\n  ${variant}: ${got.text}`)
      }
    }
  } finally {
    await probe.close()
  }
}

/** GET a list of 20 SQLite rows whole, or `?fields=id,name`: what sparse fieldsets cost and save. */
export const sparseList: Scenario = {
  name: 'sparse-list',
  description: `GET the whole list of ${ROWS} rows of an in-memory SQLite table (descriptions of 200 characters) with a computed ` +
    `orders_count (a COUNT subquery over ${ORDERS.toLocaleString('en-US')} orders, indexed by item), no filter: ` +
    `whole, or ?fields=${FIELDS} through SparseFieldsMixin, against hand-written routes running the same prepared SELECTs`,
  rounds: 4,
  duration: 1.5,
  warmup: 1,
  async register (app: FastifyInstance) {
    const db = openDatabase()
    await assertSameAnswers(db)
    await registerRoutes(app, db)
  },
  baseline: {
    name: 'baseline',
    label: 'hand-written Fastify route running a prepared SELECT of every column and the COUNT subquery, response schema Type.Array(Item)',
    request: requestOf('baseline')
  },
  variants: [
    {
      name: 'baseline-fields',
      label: 'hand-written Fastify route running a prepared SELECT id, name FROM items ORDER BY id, response schema of id and name ' +
        `(asked with the same ?fields=${FIELDS}, which it ignores)`,
      request: requestOf('baseline-fields'),
      sameBodyAsBaseline: false
    },
    {
      name: 'views',
      label: 'mix(SparseFieldsMixin, GenericListAPIView) over SqliteRepository with the computed count, ' +
        'no parameter: the whole list (validateResponse = false)',
      request: requestOf('views')
    },
    {
      name: 'views-fields',
      label: `the same view with ?fields=${FIELDS}: two columns read, no count computed, each row cut`,
      request: requestOf('views-fields'),
      sameBodyAsBaseline: false
    },
    {
      name: 'views-plain',
      label: 'GenericListAPIView without the mixin, the whole list: what the mixin costs a request that names no field',
      request: requestOf('views-plain')
    }
  ],
  // Every target is stated against another variant: the narrow routes do less than the baseline.
  ratioTarget: null,
  comparisons: [
    { subject: 'views', reference: 'views-plain', label: 'what the mixin costs a request that names no field', informational: true },
    { subject: 'views-fields', reference: 'views', label: `what ?fields=${FIELDS} saves on the same view`, informational: true },
    { subject: 'views-fields', reference: 'baseline-fields', label: 'the narrow list against the hand-written narrow SELECT', informational: true },
    { subject: 'views-plain', reference: 'baseline', label: 'the plain view against the hand-written route', informational: true }
  ]
}
