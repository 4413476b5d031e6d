// TypeBox schemas shared by the type tests (test/types/*.tst.ts).
import { Type, type Static } from '@sinclair/typebox'

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

/** The Book API of the table of mistakes (mistakes.tst.ts, and test/mistakes.test.ts at run time). */
export const Book = Type.Object({
  id: Type.Integer(),
  title: Type.String(),
  year: Type.Integer(),
  updated_at: Type.String({ format: 'date-time' })
}, { $id: 'Book' })
export const BookIn = Type.Object({ title: Type.String(), year: Type.Integer() })
export const BookParams = Type.Object({ id: Type.Integer() })
export type BookData = Static<typeof Book>
export const dune: BookData = { id: 1, title: 'Dune', year: 1965, updated_at: '2024-01-01T00:00:00.000Z' }
