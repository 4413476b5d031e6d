import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { BaseFilter } from '../lib/index.js'

export const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  category: Type.Union([Type.String(), Type.Null()]),
  description: Type.String(),
  tenant: Type.String(),
  updated_at: Type.Union([Type.String(), Type.Null()])
}, { $id: 'Product' })
export type ProductT = Static<typeof Product>
export const ProductIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number(), category: Type.Optional(Type.Union([Type.String(), Type.Null()])), description: Type.Optional(Type.String()) })
export const Columns = ['id', 'name', 'price', 'category', 'description', 'tenant', 'updated_at']
export const TableOptions = { table: 'products', columns: Columns, touchColumn: 'updated_at', optionKeys: ['batch_size'], scopeFields: ['tenant'] }

/** The table both stores test against; `id` is declared by each dialect. */
export const createTable = (id: string): string => `CREATE TABLE products (
  id ${id} PRIMARY KEY,
  name TEXT NOT NULL UNIQUE,
  price REAL NOT NULL CHECK (price >= 0),
  category TEXT,
  description TEXT NOT NULL DEFAULT '',
  tenant TEXT NOT NULL DEFAULT 'a',
  updated_at TEXT
)`
export const SEED_ROWS: Array<[number, string, number, string | null, string]> = [[1, 'Lamp', 30, 'light', 'A desk lamp'], [2, 'Lantern', 12, 'light', 'For camping'], [3, 'Desk', 120, 'furniture', 'Oak'],
  [4, 'Chair', 45, 'furniture', 'With a lamp holder'], [5, 'Gift card', 25, null, '100% fun_stuff']]

export class ProductFilter extends BaseFilter {
  static override fields = { name: Type.String(), category: Type.String() }
  static override operatorFields = { price: Type.Number(), description: Type.String() }
  static override operators = {
    price: ['eq', 'ne', 'lt', 'le', 'gt', 'ge'] as const,
    name: ['in', 'not_in', 'like', 'ilike'] as const,
    category: ['is_null'] as const,
    description: ['like'] as const
  }

  static override orderingFields = ['name', 'price', 'category']
  static override searchFields = ['name', 'description']
}

/** One row per operator case, the same answers on every store (the in-memory one included). */
export const OPERATOR_CASES: Array<[string, number[]]> = [
  ['name=Lamp', [1]], ['category=light', [1, 2]], ['price__eq=45', [4]], ['price__ne=45', [1, 2, 3, 5]], ['price__lt=25', [2]], ['price__le=25', [2, 5]],
  ['price__gt=45', [3]], ['price__ge=45', [3, 4]], ['name__in=Desk&name__in=Chair', [3, 4]], ['name__not_in=Desk&name__not_in=Chair', [1, 2, 5]],
  ['category__is_null=true', [5]], ['category__is_null=false', [1, 2, 3, 4]], ['name__like=La%25', [1, 2]], ['name__like=la%25', []], ['name__ilike=la%25', [1, 2]],
  ['name__like=L_mp', [1]], ['description__like=100%25%20fun_stuff', [5]], ['q=lamp', [1, 4]], ['q=LAMP&price__gt=40', [4]], ['q=100%25', [5]], ['q=_', [5]],
  ['description__like=100%5C%25%20fun%5C_stuff', [5]], ['name__like=Gift%5C_card', []], ['name__in=Desk', [3]],
  ['sort=price', [2, 5, 1, 4, 3]], ['sort=-price', [3, 4, 1, 5, 2]], ['sort=category&sort=-price', [3, 4, 1, 2, 5]], ['sort=-category&sort=name', [5, 1, 2, 4, 3]]
]

/**
 * 200 bulk requests, each with one item that only the database refuses (a CHECK or
 * UNIQUE constraint) at a random position: every one is a 409 and leaves every row as it was.
 */
export async function randomRollbacks (t: Test, app: FastifyInstance, snapshot: () => Promise<string>, query: (sql: string) => Promise<Array<Record<string, unknown>>>): Promise<void> {
  let seed = 7
  const random = (n: number): number => { seed = (seed * 1103515245 + 12345) % 2 ** 31; return seed % n }
  let refused = 0
  for (let round = 0; round < 200; round++) {
    const before = await snapshot()
    const size = 2 + random(20)
    const bad = random(size)
    const taken = String((await query('SELECT name FROM products WHERE id = 3'))[0].name)
    let res
    if (round % 3 === 0) {
      const items = Array.from({ length: size }, (_, i) => ({ name: `r${round}-${i}`, price: i === bad ? -1 : i }))
      res = await app.inject({ method: 'POST', url: '/products/bulk', payload: items })
    } else if (round % 3 === 1) {
      const items = Array.from({ length: size }, (_, i) => ({ name: i === bad ? taken : `r${round}-${i}`, price: i }))
      res = await app.inject({ method: 'POST', url: '/products/bulk', payload: items })
    } else {
      const rows = (await query('SELECT id FROM products WHERE id <> 3 ORDER BY id LIMIT 4')).map((r) => Number(r.id))
      const items = rows.map((id, i) => ({ id, name: i === bad % rows.length ? taken : `renamed-${round}-${id}`, price: 1 }))
      res = await app.inject({ method: 'PUT', url: '/products/bulk', payload: items })
    }
    if (res.statusCode === 409) refused++
    else t.fail(`round ${round}: ${res.statusCode} ${res.body}`)
    if (await snapshot() !== before) t.fail(`round ${round}: the table changed`)
  }
  t.equal(refused, 200, 'every batch failed inside the database, and every one left the table as it was')
}
