// TypeBox schemas shared by the type tests (test/types/*.tst.ts).
import { Type } from '@sinclair/typebox'

/** `/:id` with an integer id: `req.params.id` is a number. */
export const IdParams = Type.Object({ id: Type.Integer() })
/** The same route parameter typed as a string: a handler expecting it on an integer route is wrong. */
export const StringIdParams = Type.Object({ id: Type.String() })
export const ListQuery = Type.Object({
  page: Type.Integer({ minimum: 1 }),
  search: Type.Optional(Type.String())
})
export const ItemBody = Type.Object({
  name: Type.String(),
  price: Type.Number(),
  tags: Type.Optional(Type.Array(Type.String()))
})
export const OtherBody = Type.Object({ title: Type.String() })
export const TokenHeaders = Type.Object({
  'x-token': Type.String(),
  'x-trace': Type.Optional(Type.String())
})
export const Item = Type.Object({ id: Type.Integer(), name: Type.String() })
