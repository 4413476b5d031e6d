// The lending library's HTTP API: the views of members, books, reading lists and loans. Every
// read and write goes through a repository (store.ts), who may do what is a rule of auth.ts; no SQL here.
import { Type, type TSchema } from '@sinclair/typebox'
import { ViewRouter, mix } from 'fastify-views'
import { AllowAny, IsAuthenticated, ReadOnly, type Throttle } from 'fastify-views/access'
import { Conflict } from 'fastify-views/errors'
import {
  AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView, AsyncGenericListAPIView, AsyncGenericPartialUpdateAPIView,
  AsyncGenericRetrieveAPIView,
  AsyncGenericUpdateAPIView, OffsetLimitFilter, OffsetPagination, SoftDeleteMixin, SparseFieldsMixin, type OffsetFacts
} from 'fastify-views/generics'
import { ConditionalMixin } from 'fastify-views/conditional'
import { IsBorrower, IsLibrarian, IsSelf } from './auth.js'
import { Book, BookIn, Loan, LoanChange, LoanIn, Member, MemberIn, SavedBook, SavedBookIn } from './schemas.js'
import type { LibraryStore } from './store.js'

const Id = Type.Integer({ minimum: 1, maximum: 2147483647 })
const IdParams = Type.Object({ id: Id })

/** How long a loan runs before it is due, unless the borrower changes `due_at`. */
export const LOAN_DAYS = 21

/**
 * Every write of the API, counted per member (anonymous sign-ups by address): one budget that
 * every instance shares when the app is given a Redis store (app.ts).
 */
export const WRITES: Throttle = { scope: 'writes', rate: '60/minute' }

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

/** The library's views over its store. Registered under one router (`/`). */
export function libraryViews (store: LibraryStore): ViewRouter {
  /**
   * `/members`: signing up, and reading one's own record (a librarian reads anyone's). Librarians
   * delete members (kept, stamped deleted_at: gone for the API) and restore them.
   */
  class MemberViews extends mix(
    SoftDeleteMixin,
    AsyncGenericCreateAPIView,
    AsyncGenericRetrieveAPIView,
    AsyncGenericDestroyAPIView
  ).with({
    responseSchema: Member,
    createSchema: MemberIn,
    detailParams: IdParams,
    envelope: 'member',
    repository: store.members,
    // Librarians may also read deleted members: GET /members/{id}?deleted=include.
    softDelete: { field: 'deleted_at', deleted: IsLibrarian },
    actionPermissions: {
      create: [AllowAny],
      retrieve: [IsSelf.or(IsLibrarian)],
      destroy: [IsLibrarian],
      restore: [IsLibrarian]
    },
    actionThrottles: { create: [WRITES], destroy: [WRITES], restore: [WRITES] }
  }, {
    getLocation (member) { return this.getDetailUrl(member) }
  }) {
    static override apiDescription = 'Members of the library. Signing up needs nothing; a member then names themselves with the x-member-id header. ' +
      'Librarians delete members (DELETE) and restore them (POST /members/{id}/restore).'
  }

  /** `/books`: the catalogue, as the member asking sees it; librarians change it. */
  class Books extends mix(
    ConditionalMixin,
    SparseFieldsMixin,
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
    permissions: [ReadOnly.or(IsLibrarian)],
    actionThrottles: { create: [WRITES], update: [WRITES], partialUpdate: [WRITES] }
  }, {
    // Bound to the computed field's option('reader') in every call: `on_my_list` is the reader's, nobody's when anonymous.
    getRepositoryOptions () {
      return { reader: this.principal?.id }
    },
    getLocation (book) { return this.getDetailUrl(book) }
  }) {
    static override apiDescription = 'The catalogue. Reads carry an ETag (which depends on who asks: on_my_list is theirs); send If-Match with a change. ' +
      'Ask for some fields only with ?fields=id,title (or leave some out with ?omit=): the others are neither read nor sent.'
  }

  /** `/reading-list`: the books the member asking saved, saved and unsaved by the book's id. */
  class ReadingList extends mix(AsyncGenericListAPIView, AsyncGenericCreateAPIView, AsyncGenericDestroyAPIView).with({
    responseSchema: SavedBook,
    createSchema: SavedBookIn,
    detailParams: Type.Object({ book_id: Id }),
    repository: store.readingList,
    permissions: [IsAuthenticated],
    actionThrottles: { create: [WRITES], destroy: [WRITES] }
  }, {
    // Every call is the member's own: the list, the entry created, the entry deleted.
    getKwargs () { return { member_id: this.requirePrincipal().id } },
    getLocation (saved) { return this.getDetailUrl(saved) }
  }) {
    static override detailRoute = '/:book_id'
    static override apiComponentName = 'SavedBook'
    static override apiDescription = 'The signed-in member\'s reading list: save a book with POST, unsave it with DELETE /reading-list/{book_id}.'
  }

  /** `/members/:memberId/loans`: a member's loans, which only they and the librarians see, make, renew and return. */
  class Loans extends mix(
    SparseFieldsMixin,
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
    // ?expand=book: each loan's book, read once for the page, as /books shows it to the member asking.
    expand: { book: { view: Books, on: { id: 'book_id' } } },
    repository: store.loans,
    permissions: [IsAuthenticated, IsBorrower.or(IsLibrarian)],
    actionThrottles: { create: [WRITES], partialUpdate: [WRITES], destroy: [WRITES] }
  }, {
    // A returned loan is kept for the records, and gone for the API.
    getKwargs () { return { returned_at: null } },
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
    // Returning is a soft delete: the loan gets its returned_at (criteria and options: the loan as
    // the permissions scope it, judged in this write), and the book is back on the shelf.
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
    static override apiDescription = 'A member\'s loans, which only the borrower and the librarians see: borrow (POST), renew (PATCH due_at) and return (DELETE).'
  }

  return new ViewRouter()
    .registerView(MemberViews, { prefix: '/members' })
    .registerView(Books, { prefix: '/books' })
    .registerView(ReadingList, { prefix: '/reading-list' })
    .registerView(Loans, { prefix: '/members/:memberId/loans' })
}
