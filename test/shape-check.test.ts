import { test } from 'tap'
import { Type, type TSchema } from '@sinclair/typebox'
import { TypeCompiler } from '@sinclair/typebox/compiler'
import { compileShapeCheck } from '../lib/schema/shape-check.js'
import { shapeSchema } from '../lib/schema/serialization.js'

// The shape check compiles to plain loops and must decide exactly what TypeBox's check decides:
// every schema below is checked against every value, by both.

const VALUES: unknown[] = [
  undefined, null, true, false, 0, 1, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '', 'a', 'x', [], [1], ['a'], [null], [[1]], {},
  { id: 1 }, { id: '1' }, { id: 1, name: 'a' }, { id: 1, name: 'a', tags: [] }, { id: 1, name: 'a', tags: ['t', 1] }, { id: 1, name: 'a', tags: ['t'] },
  { id: 1, name: null }, { id: 1, name: 'a', extra: true }, { id: undefined, name: 'a' }, { name: 'a' }, { kind: 'a' }, { kind: 'b' }, { kind: 2 },
  { meta: undefined }, {}, [{ id: 1, name: 'a' }], [{ id: 1, name: 'a' }, { id: 'x', name: 'b' }], [{ id: 1 }], new Date(0),
  Object.create({ id: 1, name: 'inherited' })
]

const Item = Type.Object({ id: Type.Integer(), name: Type.String(), tags: Type.Optional(Type.Array(Type.String())) })
const SUPPORTED: Record<string, TSchema> = {
  string: Type.String(),
  number: Type.Number(),
  integer: Type.Integer(),
  boolean: Type.Boolean(),
  null: Type.Null(),
  unknown: Type.Unknown(),
  any: Type.Any(),
  'literal string': Type.Literal('a'),
  'literal number': Type.Literal(1),
  'literal boolean': Type.Literal(true),
  'nullable string': Type.Union([Type.String(), Type.Null()]),
  enum: Type.Union([Type.Literal('a'), Type.Literal('b')]),
  'array of integers': Type.Array(Type.Integer()),
  'array of arrays': Type.Array(Type.Array(Type.Number())),
  item: Item,
  'list of items': Type.Array(Item),
  'object with a nullable field': Type.Object({ id: Type.Integer(), name: Type.Union([Type.String(), Type.Null()]) }),
  'object with a required unknown': Type.Object({ meta: Type.Unknown() }),
  'object with an optional unknown': Type.Object({ meta: Type.Optional(Type.Unknown()) }),
  'object with a literal field': Type.Object({ kind: Type.Literal('a') }),
  'empty object': Type.Object({}),
  'annotated, with bounds removed': shapeSchema(Type.Object({ id: Type.Integer({ minimum: 1, description: 'The id' }), name: Type.String({ format: 'email', title: 'Name' }) }, { $id: 'Annotated' })),
  'a union of objects': Type.Union([Type.Object({ kind: Type.Literal('a') }), Type.Object({ kind: Type.Literal('b'), id: Type.Optional(Type.Integer()) })])
}

test('every supported schema decides every value as TypeBox does', async (t) => {
  for (const [name, schema] of Object.entries(SUPPORTED)) {
    const fast = compileShapeCheck(schema)
    if (fast === undefined) {
      t.fail(`${name}: should compile`)
      continue
    }
    const typebox = TypeCompiler.Compile(schema)
    const disagreements = VALUES.filter((value) => fast(value) !== typebox.Check(value))
    t.same(disagreements, [], `${name}: the same answer for all ${VALUES.length} values`)
  }
})

test('a schema with anything else is left to TypeBox', async (t) => {
  const unsupported: Record<string, TSchema> = {
    'a closed object': Type.Object({ id: Type.Integer() }, { additionalProperties: false }),
    'a bound': Type.String({ minLength: 1 }),
    'a reference': Type.Ref('Item'),
    'an intersection': Type.Intersect([Type.Object({ a: Type.String() }), Type.Object({ b: Type.String() })]),
    'a date': Type.Date(),
    'a raw schema without a kind': Type.Unsafe<string>({ type: 'string' }),
    'a record': Type.Record(Type.String(), Type.Number()),
    'a union with an unsupported member': Type.Union([Type.String(), Type.Date()]),
    'an array of unsupported items': Type.Array(Type.Date()),
    'an object with an unsupported property': Type.Object({ at: Type.Date() })
  }
  for (const [name, schema] of Object.entries(unsupported)) t.equal(compileShapeCheck(schema), undefined, name)
})
