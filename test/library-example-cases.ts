// The lending library example (examples/library) through HTTP, as its clients use it: the same
// cases on every database (test/library-example.test.ts runs them on SQLite and PostgreSQL).
import type { Test } from 'tap'
import type { FastifyInstance, LightMyRequestResponse } from 'fastify'
import { problem } from './helpers.js'

/** Reads the database behind the app directly: `SELECT` only, to see what the API wrote. */
export type Query = (sql: string) => Promise<Array<Record<string, unknown>>>

/** A library app on a freshly seeded database, and a way to read that database. */
export type OpenLibrary = () => Promise<{ app: FastifyInstance, query: Query }>

const ADA = { 'x-member-id': '1' }
const GRACE = { 'x-member-id': '2' }
const MELVIL = { 'x-member-id': '3' } // the librarian

/** What every 401 carries (RFC 9110 §11.6.1): where to send the member id. */
const CHALLENGE = 'ApiKey realm="library", header="x-member-id"'

/** A 401, with the challenge that tells the client how to authenticate. */
function unauthorized (t: Test, res: LightMyRequestResponse, challenge = CHALLENGE): Record<string, any> {
  t.equal(res.headers['www-authenticate'], challenge, 'WWW-Authenticate')
  return problem(t, res, 401)
}

interface BookT {
  id: number,
  title: string,
  author: string,
  year: number | null,
  available: boolean,
  genres: string[],
  on_my_list: boolean,
  loans_count: number,
  updated_at: string
}
interface BookList { books: BookT[], booksCount: number }

const titles = (res: LightMyRequestResponse): string[] => res.json<BookList>().books.map((b) => b.title)

/** Every case, each on a fresh library. */
export async function libraryCases (t: Test, open: OpenLibrary): Promise<void> {
  await t.test('members: a librarian deletes a member (kept, gone for the API) and restores them; a clash on restore is a 409', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    problem(t, await app.inject({ method: 'DELETE', url: '/members/1', headers: GRACE }), 403)
    unauthorized(t, await app.inject({ method: 'DELETE', url: '/members/1' }))
    t.equal((await app.inject({ method: 'DELETE', url: '/members/1', headers: MELVIL })).statusCode, 204)
    const [row] = await query('SELECT deleted_at FROM members WHERE id = 1')
    t.match(row, { deleted_at: /^\d{4}-\d\d-\d\dT/ }, 'kept, stamped')
    problem(t, await app.inject({ url: '/members/1', headers: MELVIL }), 404)
    problem(t, await app.inject({ method: 'DELETE', url: '/members/1', headers: MELVIL }), 404)
    unauthorized(t, await app.inject({ url: '/books', headers: ADA }), `${CHALLENGE}, error="invalid_token"`)
    t.equal((await app.inject({ url: '/members/1?deleted=include', headers: MELVIL })).json().member.name, 'Ada Lovelace', 'a librarian reads a deleted member')
    problem(t, await app.inject({ url: '/members/2?deleted=include', headers: GRACE }), 403)
    problem(t, await app.inject({ url: '/members/1?deleted=everything', headers: MELVIL }), 400)
    problem(t, await app.inject({ method: 'POST', url: '/members/1/restore', headers: GRACE }), 403)
    const restored = await app.inject({ method: 'POST', url: '/members/1/restore', headers: MELVIL })
    t.equal(restored.statusCode, 200)
    t.equal(restored.json().member.name, 'Ada Lovelace', 'the member, in the envelope')
    t.equal((await app.inject({ url: '/members/1', headers: ADA })).statusCode, 200, 'she is back, and signs in again')
    problem(t, await app.inject({ method: 'POST', url: '/members/1/restore', headers: MELVIL }), 409)
    problem(t, await app.inject({ method: 'POST', url: '/members/99/restore', headers: MELVIL }), 404)
    // A deleted member's address is free; restoring them would then give it to two members.
    t.equal((await app.inject({ method: 'DELETE', url: '/members/2', headers: MELVIL })).statusCode, 204)
    const again = await app.inject({ method: 'POST', url: '/members', payload: { member: { name: 'Grace', email: 'grace@example.org' } } })
    t.equal(again.statusCode, 201, 'the address of a deleted member signs up again')
    problem(t, await app.inject({ method: 'POST', url: '/members/2/restore', headers: MELVIL }), 409)
  })

  await t.test('members: sign-up in an envelope, one\'s own record (a librarian\'s: anyone\'s), 401 without a known member', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const signed = await app.inject({ method: 'POST', url: '/members', payload: { member: { name: 'Jane Eyre', email: 'jane@example.org' } } })
    t.equal(signed.statusCode, 201, 'signing up needs no member')
    const member = signed.json().member
    t.match(member, { id: 4, name: 'Jane Eyre', email: 'jane@example.org', librarian: false, joined_at: /^\d{4}-\d\d-\d\dT/ })
    t.same(Object.keys(signed.json()), ['member'], 'the answer is the envelope, nothing else')
    t.equal(signed.headers.location, `/members/${member.id}`)
    t.match(problem(t, await app.inject({ method: 'POST', url: '/members', payload: { name: 'Jane Eyre', email: 'x@example.org' } }), 400).errors, [{ pointer: '#/member' }],
      'a body outside its envelope is refused')
    problem(t, await app.inject({ method: 'POST', url: '/members', payload: { member: { name: 'Jane', email: 'jane@example.org' } } }), 409)
    problem(t, await app.inject({ method: 'POST', url: '/members', payload: { member: { name: 'Jane', email: 'jane@example.org', librarian: true } } }), 400)
    const own = await app.inject({ url: `/members/${member.id}`, headers: { 'x-member-id': String(member.id) } })
    t.same(own.json(), { member })
    // IsSelf's scope narrows the path's id: another id selects nothing.
    const other = await app.inject({ url: '/members/2', headers: ADA })
    t.equal(other.statusCode, 404, 'another member\'s record is not there for her')
    t.not(other.json().member?.id, 2, 'never another member\'s record')
    t.equal((await app.inject({ url: '/members/2', headers: MELVIL })).json().member.name, 'Grace Hopper', 'a librarian reads any member\'s')
    problem(t, await app.inject({ url: '/members/99', headers: MELVIL }), 404)
    unauthorized(t, await app.inject('/members/1'))
    for (const header of ['999', 'abc', '0', '1 ', '01', '-1', '2147483648', '99999999999', '']) {
      const refused = unauthorized(t, await app.inject({ url: '/books', headers: { 'x-member-id': header } }), `${CHALLENGE}, error="invalid_token"`)
      t.match(refused.detail, /names no member/, `x-member-id: ${JSON.stringify(header)}: refused, not taken for anonymous`)
    }
    const twice = await app.inject({ url: '/books', headers: { 'x-member-id': ['1', '2'] } })
    t.equal(twice.statusCode, 401, 'two ids are no id')
  })

  await t.test('books: filters, search, ordering, the API\'s own page shape and its cap', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const first = await app.inject('/books')
    t.equal(first.statusCode, 200)
    t.same(Object.keys(first.json()), ['books', 'booksCount'], 'the page is { books, booksCount }')
    t.equal(first.json().booksCount, 8)
    t.same(titles(first), ['A Wizard of Earthsea', 'Dune', 'Emma', 'Frankenstein', 'Pride and Prejudice', 'The Hound of the Baskervilles', 'The Left Hand of Darkness', 'The Moonstone'],
      'ordered by title by default, ten a page')
    const dune = first.json().books[1]
    t.same(dune, { id: 3, title: 'Dune', author: 'Frank Herbert', year: 1965, available: false, genres: ['science-fiction'], on_my_list: false, loans_count: 1, updated_at: '2026-01-05T09:00:00.000Z' },
      'booleans, a list of genres and a count, whatever the database')
    const classics = await app.inject('/books?genre=classic&sort=-year')
    t.same(titles(classics), ['The Hound of the Baskervilles', 'The Moonstone', 'Frankenstein', 'Emma', 'Pride and Prejudice'], 'the books of a genre, many-to-many')
    t.equal(classics.json().booksCount, 5)
    t.same(classics.json().books[0].genres, ['classic', 'mystery'], 'each with all its genres')
    t.same(titles(await app.inject('/books?genre=poetry')), [])
    t.same(titles(await app.inject('/books?author=Jane%20Austen&sort=-title')), ['Pride and Prejudice', 'Emma'])
    t.same(titles(await app.inject('/books?q=OF')), ['A Wizard of Earthsea', 'The Hound of the Baskervilles', 'The Left Hand of Darkness'], 'search in titles, any case')
    t.same(titles(await app.inject('/books?genre=classic&q=the')), ['The Hound of the Baskervilles', 'The Moonstone'], 'filter and search together')
    t.same(titles(await app.inject('/books?sort=-loans_count&sort=title&limit=2')), ['Dune', 'Frankenstein'], 'ordered by a count')
    const page = (await app.inject('/books?offset=6&limit=5')).json()
    t.same([page.books.map((b: BookT) => b.id), page.booksCount], [[4, 8], 8], 'a window and the total of every row')
    t.equal((await app.inject('/books?limit=50')).statusCode, 200, 'up to the cap')
    const capped = problem(t, await app.inject('/books?limit=51'), 400)
    t.same(capped.errors.map((e: { parameter: string }) => e.parameter), ['limit'], 'past the cap: a 400 naming limit')
    t.match(capped.errors[0].detail, /less or equal to 50/)
    problem(t, await app.inject('/books?sort=author'), 400)
    problem(t, await app.inject('/books?genre=Not%20a%20slug'), 400)
  })

  await t.test('books: on_my_list is the reader\'s own, in lists, reads and ETags', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const saved = async (headers: Record<string, string>) => (await app.inject({ url: '/books?limit=50', headers })).json().books.filter((b: BookT) => b.on_my_list).map((b: BookT) => b.id)
    t.same(await saved(ADA), [5, 3], 'Ada saved Earthsea and Dune')
    t.same(await saved(GRACE), [5], 'Grace, Earthsea')
    t.same(await saved({}), [], 'nobody: nothing')
    const asAda = await app.inject({ url: '/books/3', headers: ADA })
    const asGrace = await app.inject({ url: '/books/3', headers: GRACE })
    t.equal(asAda.json().book.on_my_list, true)
    t.equal(asGrace.json().book.on_my_list, false)
    t.not(asAda.headers.etag, asGrace.headers.etag, 'two readers, two representations, two tags')
    t.equal((await app.inject({ url: '/books/3', headers: { ...ADA, 'if-none-match': String(asAda.headers.etag) } })).statusCode, 304)
    t.equal((await app.inject({ url: '/books/3', headers: { ...GRACE, 'if-none-match': String(asAda.headers.etag) } })).statusCode, 200, 'Ada\'s tag is not Grace\'s copy')
    t.same((await app.inject({ url: '/books?sort=title&limit=50', headers: GRACE })).json().books.map((b: BookT) => b.on_my_list ? 1 : 0), [1, 0, 0, 0, 0, 0, 0, 0])
  })

  await t.test('books: ?fields= and ?omit= send part of each book, with its key and its Last-Modified; its own ETag', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const listed = await app.inject('/books?fields=title&sort=-loans_count&sort=title&limit=3')
    t.same(listed.json(), {
      books: [
        { id: 3, title: 'Dune', updated_at: '2026-01-05T09:00:00.000Z' },
        { id: 7, title: 'Frankenstein', updated_at: '2026-01-05T09:00:00.000Z' },
        { id: 5, title: 'A Wizard of Earthsea', updated_at: '2026-01-05T09:00:00.000Z' }
      ],
      booksCount: 8
    }, 'ordered by a count it does not send; the page is the API\'s own')
    const genres = (await app.inject('/books?genre=classic&omit=title,author,year,available,on_my_list,loans_count,updated_at&limit=1')).json()
    t.same(genres.books, [{ id: 2, genres: ['classic', 'romance'], updated_at: '2026-01-05T09:00:00.000Z' }], 'a filter by a relation, the set chosen by omit')
    const part = await app.inject({ url: '/books/3?fields=on_my_list', headers: ADA })
    t.same(part.json(), { book: { id: 3, on_my_list: true, updated_at: '2026-01-05T09:00:00.000Z' } }, 'in its envelope, the reader\'s own')
    const whole = await app.inject({ url: '/books/3', headers: MELVIL })
    t.not(part.headers.etag, whole.headers.etag, 'another representation, another tag')
    t.equal((await app.inject({ url: '/books/3?fields=on_my_list', headers: { ...ADA, 'if-none-match': String(part.headers.etag) } })).statusCode, 304)
    const partial = String((await app.inject({ url: '/books/3?fields=title', headers: MELVIL })).headers.etag)
    problem(t, await app.inject({ method: 'PATCH', url: '/books/3', headers: { ...MELVIL, 'if-match': partial }, payload: { book: { year: 1966 } } }), 412)
    const patched = await app.inject({ method: 'PATCH', url: '/books/3', headers: { ...MELVIL, 'if-match': String(whole.headers.etag) }, payload: { book: { year: 1966 } } })
    t.equal(patched.statusCode, 200, 'the whole book\'s tag is the one a write compares')
    const unknown = problem(t, await app.inject('/books?fields=title,isbn'), 400)
    t.same(unknown.errors, [{
      detail: 'Unknown field "isbn"; the fields are id, title, author, year, available, genres, on_my_list, loans_count, updated_at',
      pointer: '#/fields',
      in: 'query',
      parameter: 'fields'
    }])
  })

  await t.test('books: single objects in an envelope, changed by librarians with If-Match', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const read = await app.inject({ url: '/books/4', headers: MELVIL })
    t.same(Object.keys(read.json()), ['book'])
    const etag = String(read.headers.etag)
    const change = { title: 'The Left Hand of Darkness', author: 'Ursula K. Le Guin', year: 1969 }
    unauthorized(t, await app.inject({ method: 'PUT', url: '/books/4', payload: { book: change } }))
    unauthorized(t, await app.inject({ method: 'POST', url: '/books', payload: { book: change } }))
    t.match(problem(t, await app.inject({ method: 'PUT', url: '/books/4', headers: { ...ADA, 'if-match': etag }, payload: { book: change } }), 403).detail, /librarians/)
    t.match(problem(t, await app.inject({ method: 'PATCH', url: '/books/4', headers: { ...ADA, 'if-match': etag }, payload: { book: { year: 1 } } }), 403).detail, /librarians/)
    t.match(problem(t, await app.inject({ method: 'POST', url: '/books', headers: ADA, payload: { book: change } }), 403).detail, /librarians/)
    t.equal((await app.inject({ url: '/books?limit=50' })).json().booksCount, 8, 'members changed nothing')
    const put = await app.inject({ method: 'PUT', url: '/books/4', headers: { ...MELVIL, 'if-match': etag }, payload: { book: { ...change, year: 1970 } } })
    t.equal(put.statusCode, 200)
    t.match(put.json(), { book: { id: 4, year: 1970, genres: ['science-fiction'], available: true } })
    t.not(put.json().book.updated_at, '2026-01-05T09:00:00.000Z', 'stamped')
    problem(t, await app.inject({ method: 'PUT', url: '/books/4', headers: { ...MELVIL, 'if-match': etag }, payload: { book: change } }), 412)
    problem(t, await app.inject({ method: 'PATCH', url: '/books/4', headers: { ...MELVIL, 'if-match': etag }, payload: { book: { year: 1 } } }), 412)
    problem(t, await app.inject({ method: 'PATCH', url: '/books/4', headers: { ...MELVIL, 'if-unmodified-since': 'Mon, 05 Jan 2026 09:00:00 GMT' }, payload: { book: { year: 1 } } }), 412)
    t.equal((await app.inject({ url: '/books/4' })).json().book.year, 1970, 'the stale writes wrote nothing')
    const fresh = String((await app.inject({ url: '/books/4', headers: MELVIL })).headers.etag)
    const patched = await app.inject({ method: 'PATCH', url: '/books/4', headers: { ...MELVIL, 'if-match': fresh }, payload: { book: { year: 1969 } } })
    t.equal(patched.json().book.year, 1969)
    const created = await app.inject({ method: 'POST', url: '/books', headers: MELVIL, payload: { book: { title: 'Middlemarch', author: 'George Eliot', year: 1871 } } })
    t.equal(created.statusCode, 201)
    t.match(created.json(), { book: { id: 9, title: 'Middlemarch', available: true, genres: [], on_my_list: false, loans_count: 0 } })
    t.equal(created.headers.location, '/books/9')
    problem(t, await app.inject({ method: 'POST', url: '/books', headers: MELVIL, payload: { book: { ...change, loans_count: 3 } } }), 400)
    problem(t, await app.inject('/books/99'), 404)
  })

  await t.test('loans: ?expand=book embeds each loan\'s book, read once for the page, as /books shows it to the member asking', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const lent = await app.inject({ method: 'POST', url: '/members/1/loans', headers: ADA, payload: { loan: { book_id: 5 } } })
    t.equal(lent.statusCode, 201, lent.body)
    const mine = (await app.inject({ url: '/members/1/loans?expand=book&fields=due_at,book.title,book.on_my_list', headers: ADA })).json()
    t.same(mine.map((loan: Record<string, unknown>) => Object.keys(loan)), [['id', 'due_at', 'book']], 'the loan\'s fields asked for, and its book')
    t.same(mine[0].book, { id: 5, title: 'A Wizard of Earthsea', on_my_list: true, updated_at: mine[0].book.updated_at }, 'on Ada\'s list: the book as she reads it')
    const graces = (await app.inject({ url: '/members/2/loans?expand=book', headers: MELVIL })).json()
    type LoanWithBook = { id: number, book_id: number, book: { id: number, on_my_list: boolean } }
    t.same(graces.map((loan: LoanWithBook) => [loan.id, loan.book_id, loan.book.id, loan.book.on_my_list]),
      [[1, 3, 3, false]], 'a librarian reads Grace\'s loan with its book, as the librarian sees it')
    t.same(graces[0].book.genres, ['science-fiction'], 'every field of the book without fields=book.…')
    const one = (await app.inject({ url: '/members/2/loans/1?expand=book&fields=book.author', headers: GRACE })).json()
    t.same(one, { loan: { id: 1, member_id: 2, book_id: 3, title: 'Dune', borrowed_at: '2026-01-05T09:00:00.000Z', due_at: '2026-01-26T09:00:00.000Z', updated_at: '2026-01-05T09:00:00.000Z', book: { id: 3, author: 'Frank Herbert', updated_at: '2026-01-05T09:00:00.000Z' } } },
      'one loan, in its envelope, with its book')
    t.same((await app.inject({ url: '/members/2/loans?expand=book', headers: ADA })).json(), [], 'another member\'s loans: none, and no book read')
    const unknown = problem(t, await app.inject({ url: '/members/2/loans?expand=member', headers: GRACE }), 400)
    t.same(unknown.errors, [{ detail: 'Unknown relation "member"; the relations are book', pointer: '#/expand', in: 'query', parameter: 'expand' }])
    const notExpanded = problem(t, await app.inject({ url: '/members/2/loans?fields=book.title', headers: GRACE }), 400)
    t.equal(notExpanded.errors[0].parameter, 'fields', 'a field of a book the request does not expand')
    problem(t, await app.inject({ url: '/members/2/loans?expand=book.loans', headers: GRACE }), 400)
  })

  await t.test('reading list: the signed-in member saves and unsaves books', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    unauthorized(t, await app.inject('/reading-list'))
    unauthorized(t, await app.inject({ method: 'POST', url: '/reading-list', payload: { book_id: 1 } }))
    unauthorized(t, await app.inject({ method: 'DELETE', url: '/reading-list/3' }))
    t.same((await app.inject({ url: '/reading-list', headers: ADA })).json().map((s: { title: string }) => s.title), ['Dune', 'A Wizard of Earthsea'])
    const saved = await app.inject({ method: 'POST', url: '/reading-list', headers: GRACE, payload: { book_id: 1 } })
    t.equal(saved.statusCode, 201)
    t.match(saved.json(), { book_id: 1, title: 'Pride and Prejudice', author: 'Jane Austen' })
    t.notOk('member_id' in saved.json(), 'the member is the one asking, not shown')
    t.equal(saved.headers.location, '/reading-list/1')
    t.equal((await app.inject({ url: '/books/1', headers: GRACE })).json().book.on_my_list, true, 'on Grace\'s list')
    t.equal((await app.inject({ url: '/books/1', headers: ADA })).json().book.on_my_list, false, 'not on Ada\'s')
    problem(t, await app.inject({ method: 'POST', url: '/reading-list', headers: GRACE, payload: { book_id: 1 } }), 409)
    problem(t, await app.inject({ method: 'POST', url: '/reading-list', headers: GRACE, payload: { book_id: 1, member_id: 1 } }), 400)
    problem(t, await app.inject({ method: 'DELETE', url: '/reading-list/1', headers: ADA }), 404)
    t.equal((await app.inject({ method: 'DELETE', url: '/reading-list/1', headers: GRACE })).statusCode, 204)
    t.equal((await app.inject({ url: '/books/1', headers: GRACE })).json().book.on_my_list, false)
    problem(t, await app.inject({ method: 'DELETE', url: '/reading-list/1', headers: GRACE }), 404)
  })

  await t.test('loans: nested under their member, 404 without one; a member sees her own, a librarian all', async (t) => {
    const { app } = await open()
    t.teardown(() => app.close())
    const listed = async (headers: Record<string, string>, member: number) =>
      (await app.inject({ url: `/members/${member}/loans`, headers })).json().map((l: { id: number, title: string }) => [l.id, l.title])
    unauthorized(t, await app.inject('/members/2/loans'))
    unauthorized(t, await app.inject('/members/2/loans/1'))
    t.same(await listed(GRACE, 2), [[1, 'Dune']], 'Grace\'s own; the returned loan is not listed')
    t.same(await listed(ADA, 2), [], 'not Ada\'s: her scope and the member\'s in the path select nothing together')
    t.same(await listed(MELVIL, 2), [[1, 'Dune']], 'a librarian sees every member\'s')
    t.same(await listed(ADA, 1), [], 'Ada returned hers')
    t.equal(problem(t, await app.inject({ url: '/members/99/loans', headers: ADA }), 404).detail, 'Member does not exist')
    t.equal(problem(t, await app.inject({ url: '/members/99/loans/1', headers: ADA }), 404).detail, 'Member does not exist')
    problem(t, await app.inject({ url: '/members/1/loans/1', headers: ADA }), 404)
    t.equal(problem(t, await app.inject({ url: '/members/2/loans/1', headers: ADA }), 404).detail, 'Loan does not exist', 'another member\'s loan is not there for her')
    t.same((await app.inject({ url: '/members/2/loans/1', headers: GRACE })).json(), (await app.inject({ url: '/members/2/loans/1', headers: MELVIL })).json(),
      'the borrower and a librarian read the same loan')
    t.same(Object.keys((await app.inject({ url: '/members/2/loans/1', headers: GRACE })).json()), ['loan'])
    problem(t, await app.inject({ url: '/members/x/loans', headers: ADA }), 400)
    problem(t, await app.inject({ url: '/members/1/loans/2', headers: ADA }), 404) // returned: gone for the API
  })

  await t.test('loans: lending writes the loan and takes the book off the shelf in one transaction', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const lend = (headers: Record<string, string>, member: number, book: number) =>
      app.inject({ method: 'POST', url: `/members/${member}/loans`, headers, payload: { loan: { book_id: book } } })
    const loans = async () => Number((await query('SELECT COUNT(*) AS n FROM loans'))[0].n)
    const created = await lend(ADA, 1, 4)
    t.equal(created.statusCode, 201)
    const loan = created.json().loan
    t.match(loan, { member_id: 1, book_id: 4, title: 'The Left Hand of Darkness', borrowed_at: /^\d{4}-/, due_at: /^\d{4}-/ })
    t.equal(new Date(loan.due_at).getTime() - new Date(loan.borrowed_at).getTime(), 21 * 86_400_000, 'due in three weeks')
    t.equal(created.headers.location, `/members/1/loans/${loan.id}`)
    t.equal((await app.inject('/books/4')).json().book.available, false, 'off the shelf')
    t.equal((await app.inject('/books/4')).json().book.loans_count, 1)
    const before = await loans()
    t.match(problem(t, await lend(GRACE, 2, 4), 409).detail, /not available/, 'a lent book cannot be lent again')
    t.equal(await loans(), before, 'the loan written first was rolled back with the failed book write')
    t.match(problem(t, await lend(ADA, 2, 1), 403).detail, /for themselves/, 'nobody borrows for another member: the loan would not be hers')
    t.equal(await loans(), before, 'nothing written')
    t.equal((await app.inject('/books/1')).json().book.available, true)
    problem(t, await lend(ADA, 1, 99), 409)
    t.equal(await loans(), before, 'a book that does not exist: nothing written')
    problem(t, await app.inject({ method: 'POST', url: '/members/1/loans', headers: ADA, payload: { loan: { book_id: 1, member_id: 2 } } }), 400)
    problem(t, await lend(ADA, 99, 1), 404)
    const forGrace = await lend(MELVIL, 2, 1)
    t.equal(forGrace.statusCode, 201, 'a librarian lends to any member')
    t.match(forGrace.json().loan, { member_id: 2, book_id: 1 })
    t.equal((await app.inject({ url: '/members/2/loans', headers: GRACE })).json().length, 2, 'and the loan is Grace\'s')
    const race = await Promise.all([lend(ADA, 1, 8), lend(GRACE, 2, 8), lend(ADA, 1, 8), lend(GRACE, 2, 8)])
    t.same(race.map((res) => res.statusCode).sort(), [201, 409, 409, 409], 'one book lent at once to four: one loan')
    t.same(await query('SELECT member_id FROM loans WHERE book_id = 8'), [{ member_id: race.find((res) => res.statusCode === 201)?.json().loan.member_id }])
  })

  await t.test('loans: the borrower or a librarian renews and returns; another member finds nothing; a return is a soft delete', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const renew = (due: string) => ({ loan: { due_at: due } })
    const untouched = [{ due_at: '2026-01-26T09:00:00.000Z', returned_at: null }]
    t.equal(problem(t, await app.inject({ method: 'PATCH', url: '/members/2/loans/1', headers: ADA, payload: renew('2026-02-16T09:00:00.000Z') }), 404).detail, 'Loan does not exist')
    problem(t, await app.inject({ method: 'DELETE', url: '/members/2/loans/1', headers: ADA }), 404)
    problem(t, await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: ADA, payload: renew('2026-02-16T09:00:00.000Z') }), 404) // under her own id neither
    unauthorized(t, await app.inject({ method: 'DELETE', url: '/members/2/loans/1' }))
    t.same(await query('SELECT due_at, returned_at FROM loans WHERE id = 1'), untouched, 'nothing written')
    const renewed = await app.inject({ method: 'PATCH', url: '/members/2/loans/1', headers: GRACE, payload: renew('2026-02-16T09:00:00.000Z') })
    t.equal(renewed.statusCode, 200)
    t.equal(renewed.json().loan.due_at, '2026-02-16T09:00:00.000Z')
    const extended = await app.inject({ method: 'PATCH', url: '/members/2/loans/1', headers: MELVIL, payload: renew('2026-03-02T09:00:00.000Z') })
    t.equal(extended.json().loan.due_at, '2026-03-02T09:00:00.000Z', 'a librarian renews any loan')
    problem(t, await app.inject({ method: 'PATCH', url: '/members/2/loans/1', headers: GRACE, payload: { loan: { due_at: 'soon' } } }), 400)
    t.equal((await app.inject({ method: 'DELETE', url: '/members/2/loans/1', headers: GRACE })).statusCode, 204)
    const [row] = await query('SELECT member_id, book_id, returned_at FROM loans WHERE id = 1')
    t.match(row, { member_id: 2, book_id: 3, returned_at: /^\d{4}-\d\d-\d\dT/ }, 'kept, marked returned')
    t.equal((await app.inject('/books/3')).json().book.available, true, 'back on the shelf')
    problem(t, await app.inject({ url: '/members/2/loans/1', headers: GRACE }), 404)
    problem(t, await app.inject({ method: 'DELETE', url: '/members/2/loans/1', headers: GRACE }), 404) // returned once
    t.same((await app.inject({ url: '/members/2/loans', headers: GRACE })).json(), [])
    const lent = (await app.inject({ method: 'POST', url: '/members/1/loans', headers: ADA, payload: { loan: { book_id: 4 } } })).json().loan
    t.equal((await app.inject({ method: 'DELETE', url: `/members/1/loans/${lent.id}`, headers: MELVIL })).statusCode, 204, 'a librarian takes any book back')
    t.equal((await app.inject('/books/4')).json().book.available, true)
  })

  await t.test('writes are throttled per member: 60 a minute, then a 429; reads, and other members, are not held back', async (t) => {
    const { app, query } = await open()
    t.teardown(() => app.close())
    const first = await app.inject({ method: 'PATCH', url: '/members/1/loans/999', headers: ADA, payload: { loan: { due_at: '2026-02-16T09:00:00.000Z' } } })
    problem(t, first, 404)
    t.same([first.headers['x-ratelimit-limit'], first.headers['x-ratelimit-remaining']], ['60', '59'], 'a write that finds nothing still counts')
    for (let n = 2; n <= 60; n++) await app.inject({ method: 'DELETE', url: '/reading-list/999', headers: ADA })
    const refused = await app.inject({ method: 'POST', url: '/reading-list', headers: ADA, payload: { book_id: 1 } })
    problem(t, refused, 429)
    t.ok(Number(refused.headers['retry-after']) >= 1, 'Retry-After')
    t.same(await query('SELECT book_id FROM reading_list WHERE member_id = 1 ORDER BY book_id'), [{ book_id: 3 }, { book_id: 5 }], 'nothing written')
    problem(t, await app.inject({ method: 'POST', url: '/members/1/loans', headers: ADA, payload: { loan: { book_id: 4 } } }), 429) // one budget for every write
    t.equal((await app.inject({ url: '/reading-list', headers: ADA })).statusCode, 200, 'reads are not throttled')
    t.equal((await app.inject({ method: 'POST', url: '/reading-list', headers: GRACE, payload: { book_id: 1 } })).statusCode, 201, 'Grace has her own budget')
    t.equal((await app.inject({ method: 'POST', url: '/members', payload: { member: { name: 'Jane Eyre', email: 'jane@example.org' } } })).statusCode, 201,
      'a sign-up is counted by its address, not as Ada')
  })
}
