import { test } from 'tap'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import { Type, type Static } from '@sinclair/typebox'
import views, { APIView, Get, Post, View, ViewRouter, configureApp, mix } from '../lib/index.js'
import { Forbidden, Unauthorized } from '../lib/errors.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { AllowAny, IsAuthenticated, ReadOnly, hasScope, permission, type Authenticator, type Permission } from '../lib/access.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { build, headerAuth, problem } from './helpers.js'

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
const byHeader = { ...headerAuth(READERS, 'reader', (principal) => principal.scopes), scheme: 'readerName' }

const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer(), title: Type.String() }, { $id: 'Loan' })
const LoanIn = Type.Object({ member_id: Type.Integer(), title: Type.String() })
type LoanT = Static<typeof Loan>

const rows = (): LoanT[] => [
  { id: 1, member_id: 1, title: 'Emma' },
  { id: 2, member_id: 1, title: 'Persuasion' },
  { id: 3, member_id: 2, title: 'Dubliners' }
]

const IsLibrarian = permission<unknown, Reader>({ name: 'IsLibrarian', request: (reader) => reader.librarian, message: 'Librarians only.' })
const IsBorrower = permission<LoanT, Reader>({ name: 'IsBorrower', scope: (reader) => ({ member_id: reader.id }) })

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
  t.equal((await app.inject({ method: 'HEAD', url: '/loans/3', headers: { 'x-reader': 'ann' } })).statusCode, 404, 'HEAD as GET')
  t.equal((await app.inject({ method: 'HEAD', url: '/loans/3' })).statusCode, 401)
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
  problem(t, await open.inject({ method: 'DELETE', url: '/open/1' }), 403) // no principal passes ReadOnly on a write: signing in would not help
  problem(t, await open.inject({ method: 'DELETE', url: '/open/1', headers: { 'x-reader': 'ann' } }), 403)
})

test('an object rule no criteria express judges objects, and is refused on a list', async (t) => {
  const NotBorrower = IsBorrower.not()
  const Loans = loansView([NotBorrower])
  await t.rejects(build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] }), { code: 'FV_ERR_PERMISSION' })
})

test('permissions add up across router, registration, route and action; a request-level rule may be async', async (t) => {
  const seen: string[] = []
  const mark = (name: string, pass = true) => permission<unknown, Reader>({
    name,
    request: async () => { seen.push(name); return pass }
  })
  class Echo extends APIView {
    static override permissions = [mark('view')]
    static override actionPermissions = { own: [mark('action')] }
    @Get('/own', { permissions: [mark('route')] }) own () { return { ok: true } }
    @Get('/shut', { permissions: [mark('shut', false)] }) shut () { return { ok: true } }
  }
  const router = new ViewRouter({ prefix: '/api', permissions: [mark('router')] })
    .registerView(Echo, { prefix: '/echo', permissions: [mark('entry')] })
  const app = await build({ auth: { authenticators: [byHeader] }, views: [router] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/api/echo/own', headers: { 'x-reader': 'ann' } })).statusCode, 200)
  t.same(seen, ['router', 'entry', 'route', 'view', 'action'], 'outermost first, and all of them')
  seen.length = 0
  const refused = problem(t, await app.inject({ url: '/api/echo/shut', headers: { 'x-reader': 'ann' } }), 403)
  t.equal(refused.detail, 'You do not have permission to perform this action.')
  t.same(seen, ['router', 'entry', 'shut'], 'the first refusal ends the judgement')
})

test('an object rule no criteria express judges each object a detail action reads or writes', async (t) => {
  const IsAuthor = permission<LoanT, Reader>({
    name: 'IsAuthor', object: (reader, loan) => loan.member_id === reader.id, message: 'Not yours.'
  })
  const repository = new MemoryRepository<LoanT>({ rows: rows() })
  class Loans extends mix(GenericViewSet).with({
    responseSchema: Loan,
    createSchema: LoanIn,
    repository,
    actionPermissions: { retrieve: [IsAuthor], partialUpdate: [IsAuthor], destroy: [IsAuthor.or(IsLibrarian)] }
  }, {
    checkObjectPermissions (loan) {
      if (loan.title === 'Persuasion') throw new Forbidden('The view\'s own check refuses it.')
    }
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/loans/1', headers: { 'x-reader': 'ann' } })).statusCode, 200)
  t.equal(problem(t, await app.inject({ url: '/loans/3', headers: { 'x-reader': 'ann' } }), 403).detail, 'Not yours.')
  t.equal(problem(t, await app.inject({ url: '/loans/2', headers: { 'x-reader': 'ann' } }), 403).detail, 'The view\'s own check refuses it.')
  problem(t, await app.inject({ method: 'PATCH', url: '/loans/3', headers: { 'x-reader': 'ann' }, payload: { title: 'mine' } }), 403)
  t.equal((await repository.get({ id: 3 }))?.title, 'Dubliners', 'the refused write wrote nothing')
  problem(t, await app.inject({ method: 'DELETE', url: '/loans/3', headers: { 'x-reader': 'ann' } }), 403)
  t.equal((await app.inject({ method: 'DELETE', url: '/loans/3', headers: { 'x-reader': 'lib' } })).statusCode, 204)
  t.equal((await app.inject({ url: '/loans', headers: { 'x-reader': 'bob' } })).json().length, 2, 'a list without the rule lists all')
})

test('scopes combine with the view\'s own criteria: both hold, and never widen', async (t) => {
  const InRange = permission<LoanT, Reader>({ name: 'InRange', scope: () => ({ id__ge: 2, id__in: [1, 2, 3], title__like: '%' }) })
  class Loans extends mix(GenericViewSet).with({
    responseSchema: Loan, repository: new MemoryRepository<LoanT>({ rows: rows() }), permissions: [InRange]
  }, {
    getKwargs () {
      const query = this.request.query as Record<string, string>
      return query.kw === 'eq' ? { member_id: 1 } : query.kw === 'ops' ? { id__ge: 3, id__in: [2, 3], title__like: 'D%' } : {}
    }
  }) {}
  const MemberTwo = permission<LoanT, Reader>({ name: 'MemberTwo', scope: () => ({ member_id: 2, member_id__eq: 2 }) })
  class Clash extends mix(GenericViewSet).with({
    responseSchema: Loan, repository: new MemoryRepository<LoanT>({ rows: rows() }), permissions: [MemberTwo]
  }, {
    getKwargs () { return { member_id: 1, member_id__eq: 1 } }
  }) {}
  const app = await build({
    auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }, { view: Clash, prefix: '/clash' }]
  })
  t.teardown(() => app.close())
  const ids = async (url: string) => (await app.inject({ url, headers: { 'x-reader': 'ann' } })).json().map((l: LoanT) => l.id)
  t.same(await ids('/loans'), [2, 3])
  t.same(await ids('/loans?kw=eq'), [2], 'member 1 of the view, id >= 2 of the permission')
  t.same(await ids('/loans?kw=ops'), [], 'the title bound of each holds: neither implies the other, so nothing is selected')
  t.same(await ids('/clash'), [], 'a field both name with other values selects nothing')
})

test('an anonymous rule that judges objects answers an anonymous refusal with a 401', async (t) => {
  const Public = permission<LoanT, Reader>({
    name: 'Public', anonymous: true, object: (reader, loan) => reader !== null || loan.id === 1
  })
  class Loans extends mix(GenericViewSet).with({
    responseSchema: Loan,
    repository: new MemoryRepository<LoanT>({ rows: rows() }),
    actionPermissions: { retrieve: [Public] }
  }) {}
  for (const auth of [{ authenticators: [byHeader] }, undefined]) {
    const app = await build({ auth, views: [{ view: Loans, prefix: '/loans' }] })
    t.equal((await app.inject({ url: '/loans/1' })).statusCode, 200)
    const refused = await app.inject({ url: '/loans/2' })
    problem(t, refused, 401)
    t.equal(refused.headers['www-authenticate'], auth === undefined ? undefined : 'Reader realm="test"', 'the challenges of the application, if it has some')
    t.equal((await app.inject({ url: '/loans/2', headers: { 'x-reader': 'bob' } })).statusCode, auth === undefined ? 401 : 200)
    await app.close()
  }
})

test('the document shows the 401, 403, security and scopes the rules imply, per operation', async (t) => {
  const Loans = loansView([IsAuthenticated, IsBorrower.or(IsLibrarian)])
  class Books extends mix(GenericViewSet).with({
    responseSchema: Type.Object({ id: Type.Integer(), title: Type.String() }, { $id: 'Book' }),
    repository: new MemoryRepository<{ id: number, title: string }>(),
    permissions: [IsLibrarian.or(ReadOnly)],
    actionPermissions: { destroy: [hasScope('books:write').or(hasScope('admin'))] }
  }) {}
  class Open extends APIView {
    @Get('/') ping () { return 'pong' }
  }
  const app = Fastify()
  await app.register(swagger, swaggerOptions({
    info: { title: 'loans', version: '1' },
    components: { securitySchemes: { readerName: { type: 'apiKey', in: 'header', name: 'x-reader', description: 'mine' } } }
  }))
  await app.register(views, {
    auth: { authenticators: [byHeader] },
    views: [{ view: Loans, prefix: '/loans' }, { view: Books, prefix: '/books' }, { view: Open, prefix: '/ping' }]
  })
  await app.ready()
  t.teardown(() => app.close())
  type Operation = { responses: Record<string, { headers?: object }>, security?: unknown }
  type Document = { paths: Record<string, Record<string, Operation>>, components: { securitySchemes: unknown } }
  const document: Document = JSON.parse(JSON.stringify(app.swagger()))
  const op = (path: string, method: string) => document.paths[path][method]
  const statuses = (path: string, method: string) => Object.keys(op(path, method).responses).filter((s) => s === '401' || s === '403')
  t.same(statuses('/loans', 'get'), ['401'], 'a list scoped by criteria refuses no member')
  t.same(statuses('/loans', 'post'), ['401', '403'], 'a create must store a row its author may see')
  t.same(statuses('/loans/{id}', 'get'), ['401'], 'a hidden loan is a 404')
  t.same(statuses('/books', 'get'), ['401'], 'bad credentials, on a route anonymous requests pass')
  t.same(statuses('/books/{id}', 'put'), ['401', '403'])
  t.ok(op('/loans', 'get').responses['401'].headers, 'the 401 documents WWW-Authenticate')
  t.same(op('/loans', 'get').security, [{ readerName: [] }])
  t.same(op('/books', 'get').security, [{ readerName: [] }, {}], 'anonymous requests may read the books')
  t.same(op('/books/{id}', 'delete').security, [{ readerName: ['books:write'] }, { readerName: ['admin'] }])
  t.same(op('/ping', 'get').security, [{ readerName: [] }, {}])
  t.same(document.components.securitySchemes, {
    readerName: { type: 'apiKey', in: 'header', name: 'x-reader', description: 'mine' }
  }, 'the application\'s own scheme wins')
})

test('auth is configured once: the same options again change nothing', async (t) => {
  const app = Fastify()
  const auth = { authenticators: [byHeader] }
  configureApp(app, { auth })
  t.doesNotThrow(() => configureApp(app, { auth }))
  await app.register(views, { configureApp: false, views: [{ view: loansView([IsAuthenticated]), prefix: '/loans' }] })
  t.equal((await app.inject({ url: '/loans', headers: { 'x-reader': 'bob' } })).statusCode, 200)
  await app.close()
  const other = Fastify()
  configureApp(other)
  await other.register(views, { configureApp: false, auth, views: [{ view: loansView([IsAuthenticated]), prefix: '/loans' }] })
  t.equal((await other.inject({ url: '/loans' })).statusCode, 401)
  await other.close()
})

test('compositions judge objects as their parts do', async (t) => {
  const IsAuthor = permission<LoanT, Reader>({
    name: 'IsAuthor', object: (reader, loan) => loan.member_id === reader.id, message: 'Not yours.'
  })
  const ShortTitle = permission<LoanT, Reader>({ name: 'ShortTitle', scope: () => ({ title__like: '____' }), message: 'Too long.' })
  const Odd = permission<LoanT, Reader>({ name: 'Odd', object: (_reader, loan) => loan.id % 2 === 1, message: 'Even.' })
  const Loans = class extends mix(GenericViewSet).with({
    responseSchema: Loan,
    repository: new MemoryRepository<LoanT>({ rows: [...rows(), { id: 4, member_id: 1, title: 'Kim' }] }),
    createSchema: LoanIn,
    permissions: [IsBorrower.and(ShortTitle)],
    actionPermissions: {
      retrieve: [IsAuthor.or(Odd)],
      partialUpdate: [IsAuthor.and(Odd)],
      destroy: [IsAuthor.not(), IsLibrarian.not()]
    }
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const as = (reader: string, method: 'GET' | 'PATCH' | 'DELETE', url: string) =>
    app.inject({ method, url, headers: { 'x-reader': reader }, ...method === 'PATCH' ? { payload: { title: 'Emma' } } : {} })
  t.same((await as('ann', 'GET', '/loans')).json().map((l: LoanT) => l.id), [1], 'both scopes hold: member 1, four letters')
  t.equal((await as('ann', 'GET', '/loans/1')).statusCode, 200)
  problem(t, await as('ann', 'GET', '/loans/4'), 404)
  t.equal((await as('ann', 'PATCH', '/loans/1')).statusCode, 200, 'ann\'s, and odd')
  const create = (payload: object) => app.inject({ method: 'POST', url: '/loans', headers: { 'x-reader': 'ann' }, payload })
  t.equal(problem(t, await create({ member_id: 1, title: 'Persuasion' }), 403).detail, 'Too long.', 'every criterion holds of a create')
  t.equal(problem(t, await create({ member_id: 2, title: 'Emma' }), 403).detail, 'You do not have permission to perform this action.')
  t.equal((await create({ member_id: 1, title: 'Ulys' })).statusCode, 201)
  const refused = problem(t, await as('ann', 'DELETE', '/loans/1'), 403)
  t.equal(refused.detail, 'You do not have permission to perform this action.', 'a negated rule says nothing of why')
  problem(t, await as('lib', 'DELETE', '/loans/1'), 403) // refused on the request, before any row is read
})

test('object rules combined: both, either, neither', async (t) => {
  const IsAuthor = permission<LoanT, Reader>({
    name: 'IsAuthor', object: (reader, loan) => loan.member_id === reader.id, message: 'Not yours.'
  })
  const Odd = permission<LoanT, Reader>({ name: 'Odd', object: (_reader, loan) => loan.id % 2 === 1, message: 'Even.' })
  const Loans = class extends mix(GenericViewSet).with({
    responseSchema: Loan,
    repository: new MemoryRepository<LoanT>({ rows: [...rows(), { id: 4, member_id: 2, title: 'Ulysses' }] }),
    actionPermissions: {
      retrieve: [IsAuthor.or(Odd)], partialUpdate: [IsAuthor.and(Odd)], destroy: [IsAuthor.not().or(Odd)]
    }
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const as = (method: 'GET' | 'PATCH' | 'DELETE', url: string) =>
    app.inject({ method, url, headers: { 'x-reader': 'ann' }, ...method === 'PATCH' ? { payload: { title: 'x' } } : {} })
  t.equal((await as('GET', '/loans/2')).statusCode, 200, 'ann\'s, though even')
  t.equal((await as('GET', '/loans/3')).statusCode, 200, 'odd, though bob\'s')
  t.equal(problem(t, await as('GET', '/loans/4'), 403).detail, 'Not yours.', 'neither: the first rule that says why')
  t.equal(problem(t, await as('PATCH', '/loans/2'), 403).detail, 'Even.', 'the rule that refused says why')
  t.equal(problem(t, await as('PATCH', '/loans/3'), 403).detail, 'Not yours.')
  t.equal((await as('PATCH', '/loans/1')).statusCode, 200)
  t.equal(problem(t, await as('DELETE', '/loans/2'), 403).detail, 'Even.', 'a negated rule says nothing: the other one says why')
  t.equal((await as('DELETE', '/loans/3')).statusCode, 204, 'not ann\'s: the negated rule passes')
})

test('a rule on the request that refuses an anonymous request, on an application without auth, is a bare 401', async (t) => {
  const Closed = permission<unknown, Reader>({ name: 'Closed', anonymous: true, request: () => false })
  const Shut = class extends mix(GenericViewSet).with({
    responseSchema: Loan,
    repository: new MemoryRepository<LoanT>({ rows: rows() }),
    actionPermissions: { retrieve: [Closed] }
  }) {}
  const app = await build({ views: [{ view: Shut, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const refused = await app.inject({ url: '/loans/1' })
  problem(t, refused, 401)
  t.equal(refused.headers['www-authenticate'], undefined)
  t.equal((await app.inject({ url: '/loans' })).statusCode, 200, 'only the action it is given refuses')
})

test('a scope on the field the path names narrows that object, never swaps in another', async (t) => {
  const IsSelf = permission<LoanT, Reader>({ name: 'IsSelf', scope: (reader) => ({ id: reader.id }) })
  const repository = new MemoryRepository<LoanT>({ rows: rows() })
  class Own extends mix(GenericViewSet).with({ responseSchema: Loan, repository, permissions: [IsSelf] }, {
    // The root program's principal is the lending example's member: this test's readers have an id as members do.
    getKwargs () { return { member_id: this.requirePrincipal().id } }
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Own, prefix: '/own' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/own/1', headers: { 'x-reader': 'ann' } })).json().id, 1)
  problem(t, await app.inject({ url: '/own/2', headers: { 'x-reader': 'ann' } }), 404)
  problem(t, await app.inject({ method: 'DELETE', url: '/own/2', headers: { 'x-reader': 'ann' } }), 404)
  t.equal((await repository.get({ id: 1 }))?.id, 1, 'the reader\'s own row is untouched by a write aimed at another')
  problem(t, await app.inject({ url: '/own/2', headers: { 'x-reader': 'bob' } }), 404) // bob is 2, but his loan is 3
})

test('requirePrincipal refuses an anonymous request with the permissions\' 401', async (t) => {
  class Me extends APIView {
    @Get('/') me () { return { id: this.requirePrincipal().id } }
  }
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Me, prefix: '/me' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/me', headers: { 'x-reader': 'bob' } })).json(), { id: 2 })
  const anonymous = await app.inject({ url: '/me' })
  problem(t, anonymous, 401)
  t.equal(anonymous.headers['www-authenticate'], 'Reader realm="test"')
})

test('scopes: every one asked for, and none granted without an authenticator that says', async (t) => {
  const noScopes: Authenticator<Reader> = { ...byHeader, scopesOf: undefined }
  const cases = [[byHeader, 'lib', 200], [byHeader, 'ann', 403], [noScopes, 'lib', 403]] as const
  for (const [authenticator, reader, status] of cases) {
    const view = loansView([hasScope('loans:read', 'loans:write')])
    const app = await build({ auth: { authenticators: [authenticator] }, views: [{ view, prefix: '/loans' }] })
    const res = await app.inject({ url: '/loans', headers: { 'x-reader': reader } })
    t.equal(res.statusCode, status)
    if (status === 403) t.equal(res.json().detail, 'This needs the scopes loans:read, loans:write.')
    await app.close()
  }
})

test('bounds both a view and its permissions set on one field: the narrower holds', async (t) => {
  const Bounds = permission<LoanT, Reader>({ name: 'Bounds', scope: () => ({ id__gt: 1, id__lt: 3, title__ge: 'A' }) })
  class Loans extends mix(GenericViewSet).with({
    responseSchema: Loan, repository: new MemoryRepository<LoanT>({ rows: rows() }), permissions: [Bounds]
  }, {
    getKwargs () {
      const kw = (this.request.query as Record<string, string>).kw
      if (kw === 'wider') return { id__gt: 0, id__lt: 9 }
      if (kw === 'narrower') return { id__gt: 2, id__lt: 2 }
      if (kw === 'same') return { id__gt: 1 }
      return kw === 'mixed' ? { title__ge: 1 } : {}
    }
  }) {}
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Loans, prefix: '/loans' }] })
  t.teardown(() => app.close())
  const ids = async (kw: string) =>
    (await app.inject({ url: `/loans?kw=${kw}`, headers: { 'x-reader': 'ann' } })).json().map((l: LoanT) => l.id)
  t.same(await ids('none'), [2])
  t.same(await ids('wider'), [2], 'the permission\'s bounds are narrower')
  t.same(await ids('narrower'), [], 'the view\'s bounds are narrower')
  t.same(await ids('same'), [2], 'one bound both set is kept once')
  t.same(await ids('mixed'), [], 'bounds of two types imply nothing of each other: nothing is selected')
})

test('a route of a plain View on an application with auth resolves its principal', async (t) => {
  class Plain extends View {
    @Get('/') who () { return { anonymous: this.request.principal === null } }
  }
  const app = await build({ auth: { authenticators: [byHeader] }, views: [{ view: Plain, prefix: '/who' }] })
  t.teardown(() => app.close())
  t.same((await app.inject({ url: '/who' })).json(), { anonymous: true })
  t.same((await app.inject({ url: '/who', headers: { 'x-reader': 'ann' } })).json(), { anonymous: false })
  problem(t, await app.inject({ url: '/who', headers: { 'x-reader': 'nobody' } }), 401)
})

// What registration knows of a composition, as the user meets it: the 401 a rule can answer an
// anonymous request (documented, or refused at registration on an application without auth when
// every anonymous request would be one), the `{}` of the security where anonymous requests may
// pass, the 403 a signed-in principal can get, and the refusal of object rules a list cannot apply.
test('the facts of a composition: who each can refuse, and whether a list can apply it', async (t) => {
  const Flag = permission<unknown, Reader>({ name: 'Flag', request: (reader) => reader.librarian })
  const Open = permission<unknown, Reader>({ name: 'Open', anonymous: true, request: () => true })
  const Mine = IsBorrower
  const Titled = permission<LoanT, Reader>({ name: 'Titled', scope: () => ({ title__ne: '' }) })
  const Check = permission<LoanT, Reader>({ name: 'Check', object: () => true })
  // `nobody`: no request passes, signed in or not: a 403 for all, and no principal needed.
  type Anonymous = 'allow' | 'depends' | 'deny' | 'nobody'
  const cases: Array<[string, Permission<LoanT>, Anonymous, boolean]> = [
    ['AllowAny', AllowAny, 'allow', false],
    ['IsAuthenticated', IsAuthenticated, 'deny', false],
    ['Flag', Flag, 'deny', true],
    ['Open', Open, 'depends', true],
    ['AllowAny.not()', AllowAny.not(), 'nobody', true],
    ['IsAuthenticated.not()', IsAuthenticated.not(), 'allow', true],
    ['Flag.not()', Flag.not(), 'allow', true],
    ['Open.not()', Open.not(), 'depends', true],
    ['IsAuthenticated.and(Flag)', IsAuthenticated.and(Flag), 'deny', true],
    ['AllowAny.and(Open)', AllowAny.and(Open), 'depends', true],
    ['AllowAny.and(AllowAny)', AllowAny.and(AllowAny), 'allow', false],
    ['IsAuthenticated.or(Open)', IsAuthenticated.or(Open), 'depends', false],
    ['Flag.or(AllowAny)', Flag.or(AllowAny), 'allow', false],
    ['Flag.or(IsAuthenticated)', Flag.or(IsAuthenticated), 'deny', false],
    ['Open.or(Flag)', Open.or(Flag), 'depends', true],
    ['Flag.or(Flag)', Flag.or(Flag), 'deny', true],
    ['AllowAny.not().or(AllowAny.not())', AllowAny.not().or(AllowAny.not()), 'nobody', true],
    ['ReadOnly', ReadOnly, 'allow', false]
  ]
  for (const [name, rule, anonymous, refusesSignedIn] of cases) {
    const Items = loansView([rule])
    if (anonymous === 'deny') {
      await t.rejects(build({ views: [{ view: Items, prefix: '/loans' }] }), { code: 'FV_ERR_PERMISSION' }, `${name}: every anonymous request refused`)
    } else {
      const app = Fastify()
      await app.register(swagger, swaggerOptions({ info: { title: name, version: '1' } }))
      await app.register(views, { views: [{ view: Items, prefix: '/loans' }] })
      await app.ready()
      type Listed = { paths: Record<string, Record<string, { responses: object }>> }
      const listed: Listed = JSON.parse(JSON.stringify(app.swagger()))
      const list = listed.paths['/loans'].get.responses
      t.equal('401' in list, anonymous === 'depends', `${name}: a 401 documented only where the rule decides`)
      t.equal('403' in list, refusesSignedIn, `${name}: a 403 documented where a principal can be refused`)
      await app.close()
    }
    const authed = Fastify()
    await authed.register(swagger, swaggerOptions({ info: { title: name, version: '1' } }))
    await authed.register(views, { auth: { authenticators: [byHeader] }, views: [{ view: Items, prefix: '/loans' }] })
    await authed.ready()
    type Secured = { paths: Record<string, Record<string, { security: unknown[] }>> }
    const secured: Secured = JSON.parse(JSON.stringify(authed.swagger()))
    const security = secured.paths['/loans'].get.security
    t.equal(security.some((one) => Object.keys(one as object).length === 0), anonymous !== 'deny' && anonymous !== 'nobody',
      `${name}: {} where anonymous requests may pass`)
    if (anonymous === 'nobody') {
      const refused = await authed.inject({ url: '/loans' })
      t.equal(refused.statusCode, 403, `${name}: a 403 to an anonymous request too, since signing in would not help`)
    }
    await authed.close()
  }
  const lists: Array<[string, Permission<LoanT>, boolean]> = [
    ['Mine', Mine, true],
    ['Mine.and(Titled)', Mine.and(Titled), true],
    ['Mine.or(Flag)', Mine.or(Flag), true],
    ['Flag.or(Mine)', Flag.or(Mine), true],
    ['Check', Check, false],
    ['Mine.not()', Mine.not(), false],
    ['Flag.not().and(Mine)', Flag.not().and(Mine), true],
    ['Mine.or(Titled)', Mine.or(Titled), false],
    ['Mine.and(Check)', Mine.and(Check), false],
    ['Check.and(Mine)', Check.and(Mine), false],
    ['Mine.or(Flag.and(Check))', Mine.or(Flag.and(Check)), false],
    ['Flag.and(Check).or(Mine)', Flag.and(Check).or(Mine), false]
  ]
  for (const [name, rule, listable] of lists) {
    const registering = build({ auth: { authenticators: [byHeader] }, views: [{ view: loansView([rule]), prefix: '/loans' }] })
    if (listable) (await registering).close()
    else await t.rejects(registering, { code: 'FV_ERR_PERMISSION', message: /a list cannot run it/ }, `${name}: refused on a list`)
    if (listable) t.pass(`${name}: a list applies it as criteria`)
  }
})

test('the scopes a composition asks for, one requirement per alternative, the redundant left out', async (t) => {
  const a = hasScope('a')
  const b = hasScope('b')
  const c = hasScope('c')
  const cases: Array<[string, Permission, string[][]]> = [
    ['a', a, [['a']]],
    ['a.and(b)', a.and(b), [['a', 'b']]],
    ['a.or(b)', a.or(b), [['a'], ['b']]],
    ['a.or(b).and(c)', a.or(b).and(c), [['a', 'c'], ['b', 'c']]],
    ['a.or(a.and(b))', a.or(a.and(b)), [['a']]],
    ['a.and(b).or(a)', a.and(b).or(a), [['a']]],
    ['a.or(a)', a.or(a), [['a']]],
    ['a.or(IsAuthenticated)', a.or(IsAuthenticated), [[]]],
    ['a.not()', a.not(), [[]]]
  ]
  for (const [name, rule, sets] of cases) {
    const app = Fastify()
    await app.register(swagger, swaggerOptions({ info: { title: name, version: '1' } }))
    await app.register(views, { auth: { authenticators: [byHeader] }, views: [{ view: loansView([rule]), prefix: '/loans' }] })
    await app.ready()
    type Operation = { security: Array<Record<string, string[]>> }
    type Document = { paths: Record<string, Record<string, Operation>>, components: { securitySchemes: object } }
    const document: Document = JSON.parse(JSON.stringify(app.swagger()))
    const security = document.paths['/loans'].get.security
    t.same(security.filter((one) => 'readerName' in one).map((one) => one.readerName), sets, name)
    t.same(document.components.securitySchemes, { readerName: byHeader.securityScheme }, 'the scheme the authenticator defines')
    await app.close()
  }
})

test('every 401 of an application with auth carries the challenges, a dependency\'s and a plain route\'s too', async (t) => {
  const app = Fastify()
  configureApp(app, { auth: { authenticators: [byHeader] } })
  app.get('/plain', async (_request, reply) => reply.code(401).send({ detail: 'no' }))
  app.get('/own', async (_request, reply) => reply.code(401).header('www-authenticate', 'Custom').send({ detail: 'no' }))
  class Guarded extends APIView {
    static override unsafeDependencies = [() => { throw new Unauthorized() }]
    @Post('/') write () { return {} }
  }
  await app.register(views, { configureApp: false, views: [{ view: Guarded, prefix: '/guarded' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ url: '/plain' })).headers['www-authenticate'], 'Reader realm="test"')
  t.equal((await app.inject({ url: '/own' })).headers['www-authenticate'], 'Custom', 'a challenge of the route\'s own is kept')
  t.equal((await app.inject({ method: 'POST', url: '/guarded' })).headers['www-authenticate'], 'Reader realm="test"')
  t.equal((await app.inject({ url: '/missing' })).headers['www-authenticate'], undefined, 'other answers get none')
})

test('a composition waits for an async rule on either side of and, or and not', async (t) => {
  const slow = (pass: boolean) => permission<unknown, Reader>({ name: `Slow(${String(pass)})`, request: async () => pass, message: 'Slowly refused.' })
  const app = await build({
    auth: { authenticators: [byHeader] },
    views: [
      // The right side of an `and` answers later; so does the right side of an `or` whose left is a scope.
      { view: loansView([IsAuthenticated.and(slow(true)).and(IsBorrower.or(slow(false)))]), prefix: '/scoped' },
      { view: loansView([IsBorrower.or(slow(true))]), prefix: '/all' },
      { view: loansView([IsAuthenticated.and(slow(false))]), prefix: '/shut' },
      { view: loansView([slow(false).not()]), prefix: '/negated' }
    ]
  })
  t.teardown(() => app.close())
  const ids = async (url: string) => (await app.inject({ url, headers: { 'x-reader': 'ann' } })).json().map((l: LoanT) => l.id)
  t.same(await ids('/scoped'), [1, 2], 'the async refusal of the or leaves the scope')
  t.same(await ids('/all'), [1, 2, 3], 'the async pass of the or lets every row through')
  t.equal(problem(t, await app.inject({ url: '/shut', headers: { 'x-reader': 'ann' } }), 403).detail, 'Slowly refused.')
  t.same(await ids('/negated'), [1, 2, 3], 'not() of an async refusal passes')
  problem(t, await app.inject({ url: '/scoped' }), 401)
})
