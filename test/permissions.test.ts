import { test } from 'tap'
import type { FastifyRequest } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { AllowAny, IsAuthenticated, ReadOnly, hasScope, mix, permission } from '../lib/index.js'
import type { Authenticator } from '../lib/types.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { build, problem } from './helpers.js'

// Permissions (docs/permissions.md): request-level checks answered 401 for anonymous requests and
// 403 for signed-in ones; object rules as criteria scope lists, counts and detail reads (a hidden
// row is a 404), and hold of what a create stores; object rules no criteria express judge each object.

interface Reader { id: number, librarian: boolean, scopes: string[] }

const READERS: Record<string, Reader> = {
  ann: { id: 1, librarian: false, scopes: ['loans:read'] },
  bob: { id: 2, librarian: false, scopes: [] },
  lib: { id: 9, librarian: true, scopes: ['loans:read', 'loans:write'] }
}

/** `x-reader: ann` names a reader; an unknown name is refused. */
const byHeader: Authenticator = {
  scheme: 'readerName',
  securityScheme: { type: 'apiKey', in: 'header', name: 'x-reader' },
  challenge: 'Reader realm="test"',
  authenticate (request: FastifyRequest) {
    const name = request.headers['x-reader']
    if (name === undefined) return undefined
    return typeof name === 'string' && Object.hasOwn(READERS, name) ? READERS[name] : null
  },
  scopesOf: (principal) => (principal as Reader).scopes
}

const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer(), title: Type.String() }, { $id: 'Loan' })
const LoanIn = Type.Object({ member_id: Type.Integer(), title: Type.String() })
type LoanT = Static<typeof Loan>

const rows = (): LoanT[] => [
  { id: 1, member_id: 1, title: 'Emma' },
  { id: 2, member_id: 1, title: 'Persuasion' },
  { id: 3, member_id: 2, title: 'Dubliners' }
]

const IsLibrarian = permission({ name: 'IsLibrarian', request: (reader) => (reader as Reader).librarian, message: 'Librarians only.' })
const IsBorrower = permission<LoanT>({ name: 'IsBorrower', scope: (reader) => ({ member_id: (reader as Reader).id }) })

function loansView (permissions: unknown[], repository = new MemoryRepository<LoanT>({ rows: rows() })) {
  return class Loans extends mix(GenericViewSet).with({
    responseSchema: Loan,
    createSchema: LoanIn,
    repository,
    permissions: permissions as never
  }) {}
}

test('a scope lists, counts and reads only the rows the reader may see; a librarian sees all', async (t) => {
  const Loans = loansView([IsAuthenticated, IsBorrower.or(IsLibrarian)])
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const list = async (who: string) => (await app.inject({ url: '/loans', headers: { 'x-reader': who } })).json()
  t.same((await list('ann')).map((l: LoanT) => l.id), [1, 2])
  t.same((await list('bob')).map((l: LoanT) => l.id), [3])
  t.same((await list('lib')).map((l: LoanT) => l.id), [1, 2, 3])
  const anonymous = await app.inject({ url: '/loans' })
  problem(t, anonymous, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Reader realm="test"')
  problem(t, await app.inject({ url: '/loans/3', headers: { 'x-reader': 'ann' } }), 404)
  t.equal((await app.inject({ url: '/loans/3', headers: { 'x-reader': 'bob' } })).statusCode, 200)
  problem(t, await app.inject({ method: 'DELETE', url: '/loans/3', headers: { 'x-reader': 'ann' } }), 404)
  problem(t, await app.inject({ method: 'PATCH', url: '/loans/3', headers: { 'x-reader': 'ann' }, payload: { title: 'x' } }), 404)
  // What a create stores must be a row its author may see.
  problem(t, await app.inject({ method: 'POST', url: '/loans', headers: { 'x-reader': 'ann' }, payload: { member_id: 2, title: 'x' } }), 403)
  t.equal((await app.inject({ method: 'POST', url: '/loans', headers: { 'x-reader': 'ann' }, payload: { member_id: 1, title: 'x' } })).statusCode, 201)
  t.equal((await app.inject({ method: 'POST', url: '/loans', headers: { 'x-reader': 'lib' }, payload: { member_id: 2, title: 'y' } })).statusCode, 201)
  problem(t, await app.inject({ url: '/loans', headers: { 'x-reader': 'nobody' } }), 401)
})

test('request-level rules: 403 for a signed-in reader, 401 for anonymous; ReadOnly decided per method; scopes', async (t) => {
  const Loans = loansView([IsAuthenticated.or(ReadOnly), hasScope('loans:read')])
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/loans', headers: { 'x-reader': 'ann' } })).statusCode, 200)
  const body = problem(t, await app.inject({ url: '/loans', headers: { 'x-reader': 'bob' } }), 403)
  t.match(body.detail, /loans:read/)
  problem(t, await app.inject({ url: '/loans' }), 401)
  const Open = loansView([AllowAny, ReadOnly])
  const open = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Open, prefix: '/open' }] })
  t.teardown(() => open.close())
  t.equal((await open.inject({ url: '/open' })).statusCode, 200)
  problem(t, await open.inject({ method: 'DELETE', url: '/open/1' }), 401)
  problem(t, await open.inject({ method: 'DELETE', url: '/open/1', headers: { 'x-reader': 'ann' } }), 403)
})

test('an object rule no criteria express judges objects, and is refused on a list', async (t) => {
  const NotBorrower = IsBorrower.not()
  const Loans = loansView([NotBorrower])
  await t.rejects(build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] }), { code: 'FV_ERR_PERMISSION' })
})
