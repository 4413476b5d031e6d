/**
 * In-process cost of the default response check (`validateResponse = true`) on a
 * 20-item list whose items carry a `date-time` field, with and without the format:
 * `node build/benchmarks/response-check.js` after `npx tsc -p tsconfig.json`.
 */
import { Type } from '@sinclair/typebox'
import { compileResponseCheck } from '../lib/schema/response-check.js'

const item = (format: boolean) => Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Array(Type.String()),
  updated_at: format ? Type.String({ format: 'date-time' }) : Type.String()
})
const items = Array.from({ length: 20 }, (_, i) => ({ id: i, name: `item ${i}`, price: 1.5, tags: ['a', 'b'], updated_at: new Date(1.7e12 + i * 1000).toISOString() }))

for (const format of [true, false]) {
  const check = compileResponseCheck(Type.Array(item(format)), null)
  for (let i = 0; i < 20_000; i++) check(items)
  const started = process.hrtime.bigint()
  for (let i = 0; i < 100_000; i++) check(items)
  const ns = Number(process.hrtime.bigint() - started) / 100_000
  console.log(`20-item list, updated_at ${format ? 'with' : 'without'} format date-time: ${ns.toFixed(0)} ns per response check`)
}
