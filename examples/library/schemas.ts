// The lending library's API models: what clients send and receive (TypeBox schemas), and the
// rows the repositories hold. Shared by the views (views.ts) and the stores (store.ts).
import { Type, type Static } from '@sinclair/typebox'

const Key = (description: string) => Type.Integer({ minimum: 1, maximum: 2147483647, description })
const Time = (description: string) => Type.String({ format: 'date-time', description })

export const Member = Type.Object({
  id: Key('Assigned by the server; what the x-member-id header carries.'),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  email: Type.String({ format: 'email', maxLength: 200 }),
  librarian: Type.Boolean({ description: 'Librarians add and edit books.' }),
  joined_at: Time('When the member signed up.')
}, { $id: 'Member', examples: [{ id: 1, name: 'Ada Lovelace', email: 'ada@example.org', librarian: false, joined_at: '2026-01-05T09:00:00.000Z' }] })
export type Member = Static<typeof Member>
/** A member as stored: `deleted_at` is set when a librarian deletes the member (a soft delete: the API no longer shows them, a librarian may restore them). */
export type MemberRow = Member & { deleted_at: string | null }

export const MemberIn = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 100 }),
  email: Type.String({ format: 'email', maxLength: 200 })
}, { $id: 'MemberIn', examples: [{ name: 'Ada Lovelace', email: 'ada@example.org' }] })

export const Book = Type.Object({
  id: Key('Assigned by the server.'),
  title: Type.String({ minLength: 1, maxLength: 200 }),
  author: Type.String({ minLength: 1, maxLength: 100 }),
  year: Type.Union([Type.Integer({ minimum: -3000, maximum: 3000 }), Type.Null()], { description: 'Year of first publication, when known.' }),
  available: Type.Boolean({ description: 'Whether the book is on the shelf: false while it is lent.' }),
  genres: Type.Array(Type.String(), { description: 'The slugs of its genres, in alphabetical order.' }),
  on_my_list: Type.Boolean({ description: 'Whether the member asking (x-member-id) saved it to their reading list; false without one.' }),
  loans_count: Type.Integer({ minimum: 0, description: 'How often it was lent, returned loans included.' }),
  updated_at: Time('Set by the server on every change; the Last-Modified of the book.')
}, {
  $id: 'Book',
  examples: [{ id: 4, title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', year: 1969, available: true, genres: ['science-fiction'], on_my_list: false, loans_count: 0, updated_at: '2026-01-05T09:00:00.000Z' }]
})
export type Book = Static<typeof Book>

/** A book's place on the shelf: what lending and returning write. */
export type Shelf = Pick<Book, 'id' | 'available' | 'updated_at'>

export const BookIn = Type.Object({
  title: Type.String({ minLength: 1, maxLength: 200 }),
  author: Type.String({ minLength: 1, maxLength: 100 }),
  year: Type.Union([Type.Integer({ minimum: -3000, maximum: 3000 }), Type.Null()])
}, { $id: 'BookIn', examples: [{ title: 'Middlemarch', author: 'George Eliot', year: 1871 }] })

export const SavedBook = Type.Object({
  id: Key('Assigned by the server.'),
  book_id: Key('The book saved.'),
  title: Type.String(),
  author: Type.String(),
  saved_at: Time('When it was saved.')
}, { $id: 'SavedBook', examples: [{ id: 1, book_id: 3, title: 'Dune', author: 'Frank Herbert', saved_at: '2026-01-05T09:00:00.000Z' }] })
export type SavedBook = Static<typeof SavedBook>
/** A reading-list entry as stored: its member, whom the response does not repeat. */
export type SavedBookRow = SavedBook & { member_id: number }

export const SavedBookIn = Type.Object({ book_id: Key('The book to save.') }, { $id: 'SavedBookIn', examples: [{ book_id: 4 }] })

export const Loan = Type.Object({
  id: Key('Assigned by the server.'),
  member_id: Key('The borrower.'),
  book_id: Key('The book lent.'),
  title: Type.String({ description: 'The title of the book lent.' }),
  borrowed_at: Time('When the book was lent.'),
  due_at: Time('When it is due back; the borrower may change it.'),
  updated_at: Time('Set by the server on every change.')
}, {
  $id: 'Loan',
  examples: [{ id: 1, member_id: 2, book_id: 3, title: 'Dune', borrowed_at: '2026-01-05T09:00:00.000Z', due_at: '2026-01-26T09:00:00.000Z', updated_at: '2026-01-05T09:00:00.000Z' }]
})
export type Loan = Static<typeof Loan>
/** A loan as stored: `returned_at` is set when the book comes back (a soft delete: the API no longer shows the loan). */
export type LoanRow = Loan & { returned_at: string | null }

export const LoanIn = Type.Object({ book_id: Key('The book to borrow: it must be available.') }, { $id: 'LoanIn', examples: [{ book_id: 4 }] })
export const LoanChange = Type.Object({ due_at: Time('The new due date.') }, { $id: 'LoanChange', examples: [{ due_at: '2026-02-16T09:00:00.000Z' }] })
