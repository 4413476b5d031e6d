// The lending library's HTTP API: the views of members, books, reading lists and loans. Every
// read and write goes through a repository (store.ts), who asks through auth.ts; no SQL here.
import { Type, type TSchema } from '@sinclair/typebox'
import { ViewRouter, mix } from 'fastify-views'
import { Conflict, Forbidden } from 'fastify-views/errors'
import {
  AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView, AsyncGenericListAPIView, AsyncGenericPartialUpdateAPIView,
  AsyncGenericRetrieveAPIView,
  AsyncGenericUpdateAPIView, OffsetLimitFilter, OffsetPagination, type OffsetFacts
} from 'fastify-views/generics'
import { ConditionalMixin } from 'fastify-views/conditional'
import type { MemberAuth } from './auth.js'
import { Book, BookIn, Loan, LoanChange, LoanIn, Member, MemberIn, SavedBook, SavedBookIn } from './schemas.js'
import type { LibraryStore } from './store.js'

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 })
const IdParams = Type.Object({ id: Id })

/** How long a loan runs before it is due, unless the borrower changes `due_at`. */
export const LOAN_DAYS = 21

/** The API's own page of books: `{ "books": [...], "booksCount": 12 }`, by `offset` and `limit`. */
interface BookList<T> { books: T[], booksCount: number }

class BookPages extends OffsetPagination {
  declare readonly page: BookList<this['item']>
  override readonly suffix = 'List'
  envelope (items: unknown[], { total }: OffsetFacts) { return { books: items, booksCount: total } }
  envelopeSchema (item: TSchema) { return { books: Type.Array(item), booksCount: Type.Integer({ minimum: 0 }) } }
}

/** `GET /books?genre=classic&author=...&q=...&sort=-year&offset=0&limit=10` */
class BookFilter extends OffsetLimitFilter.with({
  paginator: new BookPages(),
  fields: { author: Type.String({ maxLength: 100 }), genre: Type.String({ pattern: '^[a-z-]{1,40}$', description: 'A genre\'s slug' }) },
  fieldOf: { genre: 'genres.slug' },
  searchFields: ['title'],
  orderingFields: ['title', 'year', 'loans_count'],
  defaultOrdering: ['title'],
  maxPageSize: 50,
  defaultPageSize: 10
}) {}

/** The library's views over its store, `members` telling who asks. Registered under one router (`/`). */
export function libraryViews (store: LibraryStore, members: MemberAuth): ViewRouter {
  /** `/members`: signing up, and reading one's own record. */
  class MemberViews extends mix(AsyncGenericCreateAPIView, AsyncGenericRetrieveAPIView).with({
    responseSchema: Member,
    createSchema: MemberIn,
    detailParams: IdParams,
    envelope: 'member',
    repository: store.members,
    actionDependencies: { retrieve: [members.required] }
  }, {
    getLocation (member) { return this.getDetailUrl(member) },
    checkObjectPermissions (member) {
      if (member.id !== members.member(this.request).id) throw new Forbidden('Members read their own record only.')
    }
  }) {
    static override apiDescription = 'Members of the library. Signing up needs nothing; a member then names themselves with the x-member-id header.'
  }

  /** `/books`: the catalogue, as the member asking sees it; librarians change it. */
  class Books extends mix(
    ConditionalMixin,
    AsyncGenericListAPIView,
    AsyncGenericCreateAPIView,
    AsyncGenericRetrieveAPIView,
    AsyncGenericUpdateAPIView,
    AsyncGenericPartialUpdateAPIView
  ).with({
    responseSchema: Book,
    createSchema: BookIn,
    detailParams: IdParams,
    filter: BookFilter,
    envelope: 'book',
    conditional: { etag: true, lastModifiedField: 'updated_at' },
    repository: store.books,
    unsafeDependencies: [members.required, members.librarian]
  }, {
    // Bound to the computed field's option('reader') in every call: `on_my_list` is the reader's.
    getRepositoryOptions () {
      return { reader: members.reader(this.request)?.id }
    },
    getLocation (book) { return this.getDetailUrl(book) }
  }) {
    static override apiDescription = 'The catalogue. Reads carry an ETag (which depends on who asks: on_my_list is theirs); send If-Match with a change.'
  }

  /** `/reading-list`: the books the member asking saved, saved and unsaved by the book's id. */
  class ReadingList extends mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView).with({
    responseSchema: SavedBook,
    createSchema: SavedBookIn,
    detailParams: Type.Object({ book_id: Id }),
    repository: store.readingList
  }, {
    // Every call is the member's own: the list, the entry created, the entry deleted.
    getKwargs () { return { member_id: members.member(this.request).id } },
    getLocation (saved) { return this.getDetailUrl(saved) }
  }) {
    static override detailRoute = '/:book_id'
    static override apiComponentName = 'SavedBook'
    static override apiDescription = 'The signed-in member\'s reading list: save a book with POST, unsave it with DELETE /reading-list/{book_id}.'
  }

  /** `/members/:memberId/loans`: a member's loans; only they borrow, renew and return. */
  class Loans extends mix(
    AsyncGenericListAPIView,
    AsyncGenericCreateAPIView,
    AsyncGenericRetrieveAPIView,
    AsyncGenericPartialUpdateAPIView,
    AsyncGenericDestroyAPIView
  ).with({
    responseSchema: Loan,
    createSchema: LoanIn,
    partialUpdateSchema: LoanChange,
    detailParams: IdParams,
    prefixParams: Type.Object({ memberId: Id }),
    parent: { repository: store.members, lookup: { id: 'memberId' }, scope: { member_id: 'id' }, name: 'Member' },
    envelope: 'loan',
    repository: store.loans,
    actionDependencies: { create: [members.borrower] }
  }, {
    // A returned loan is kept for the records, and gone for the API.
    getKwargs () { return { returned_at: null } },
    checkObjectPermissions (loan, action) {
      if (action !== 'retrieve' && loan.member_id !== members.member(this.request).id) throw new Forbidden('Only the borrower may change or return a loan.')
    },
    // Lending writes the loan and takes the book off the shelf: both, or neither.
    performCreate (values, options) {
      const now = new Date()
      const due = new Date(now.getTime() + LOAN_DAYS * 86_400_000)
      return store.transaction(async () => {
        const loan = await this.repository.create(
          { ...values, borrowed_at: now.toISOString(), due_at: due.toISOString() },
          options
        )
        if (loan === null) return null
        const book = await store.shelf.update({ id: loan.book_id, available: true }, { available: false })
        if (book === null) throw new Conflict('The book is not available: it is lent.')
        return loan
      })
    },
    // Returning is a soft delete: the loan gets its returned_at (options: the object permission,
    // judged on the row in this write), and the book is back on the shelf.
    performDestroy (criteria, options) {
      return store.transaction(async () => {
        const loan = await this.repository.update(criteria, { returned_at: new Date().toISOString() }, options)
        if (loan === null) return false
        await store.shelf.update({ id: loan.book_id }, { available: true })
        return true
      })
    },
    getLocation (loan) { return this.getDetailUrl(loan) }
  }) {
    static override apiDescription = 'A member\'s loans: any member may look; only the borrower borrows (POST), renews (PATCH due_at) and returns (DELETE).'
  }

  return new ViewRouter({ dependencies: [members.identify] })
    .registerView(MemberViews, { prefix: '/members' })
    .registerView(Books, { prefix: '/books' })
    .registerView(ReadingList, { prefix: '/reading-list', dependencies: [members.required] })
    .registerView(Loans, { prefix: '/members/:memberId/loans', dependencies: [members.required] })
}
