/**
 * In-process cost of the response check on a 20-item and a 1,000-item list whose items
 * carry a `date-time` field: the default shape check, and `strictResponse` (formats included);
 * then the default check of the page `list-1000` answers (1,000 products).
 * `node build/benchmarks/response-check.js` after `npx tsc -p tsconfig.json`.
 */
import { Type } from '@sinclair/typebox'
import { compileResponseCheck } from '../lib/schema/response-check.js'
import { ProductList, products } from './scenarios/catalog.js'

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String({ format: 'date-time' })
})
const list = (length: number) => Array.from({ length }, (_, i) => ({ id: i, name: `item ${i}`, price: 1.5, tags: ['a', 'b'], updated_at: new Date(1.7e12 + i * 1000).toISOString() }))

for (const length of [20, 1000]) {
  const items = list(length)
  // About the same number of items checked whatever the length.
  const calls = Math.round(2_000_000 / length)
  for (const strict of [false, true]) {
    const check = compileResponseCheck(Type.Array(Item), null, strict)
    for (let i = 0; i < calls / 5; i++) check(items)
    const started = process.hrtime.bigint()
    for (let i = 0; i < calls; i++) check(items)
    const ns = Number(process.hrtime.bigint() - started) / calls
    console.log(`${length}-item list, updated_at with format date-time, ${strict ? 'strictResponse' : 'default shape check'}: ${ns.toFixed(0)} ns per response check`)
  }
}

{
  const page = products(1000)
  const check = compileResponseCheck(ProductList, null, false)
  for (let i = 0; i < 400; i++) check(page)
  const started = process.hrtime.bigint()
  for (let i = 0; i < 2000; i++) check(page)
  console.log(`list-1000's page (1,000 products), default shape check: ${(Number(process.hrtime.bigint() - started) / 2000).toFixed(0)} ns per response check`)
}
