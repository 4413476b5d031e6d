/**
 * In-process cost of the response check on a 20-item list whose items carry a
 * `date-time` field: the default shape check, and `strictResponse` (formats included).
 * `node build/benchmarks/response-check.js` after `npx tsc -p tsconfig.json`.
 */
import { Type } from '@sinclair/typebox'
import { compileResponseCheck } from '../lib/schema/response-check.js'

const Item = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Array(Type.String()),
  updated_at: Type.String({ format: 'date-time' })
})
const items = Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item ${i}`, price: 1.5, tags: ['a', 'b'], updated_at: new Date(1.7e12 + i * 1000).toISOString() }))

for (const strict of [false, true]) {
  const check = compileResponseCheck(Type.Array(Item), null, strict)
  for (let i = 0; i < 20_000; i++) check(items)
  const started = process.hrtime.bigint()
  for (let i = 0; i < 100_000; i++) check(items)
  const ns = Number(process.hrtime.bigint() - started) / 100_000
  console.log(`20-item list, updated_at with format date-time, ${strict ? 'strictResponse' : 'default shape check'}: ${ns.toFixed(0)} ns per response check`)
}
