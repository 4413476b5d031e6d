import { test } from 'tap'
import { Type, type Static } from '@sinclair/typebox'
import { Forbidden } from '../lib/errors.js'
import { AsyncGenericViewSet, GenericViewMixin, GenericViewSet, MemoryRepository, asyncRepository, type Criteria, type GenericMixinBase, type RepositoryOptions } from '../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { defineMixin, mix } from '../lib/index.js'
import type { ActionViewClass } from '../lib/types.js'
import { build, problem } from './helpers.js'
import Fastify from 'fastify'
import swagger from '@fastify/swagger'
import views from '../lib/index.js'
import type { FastifyViewsOptions } from '../lib/types.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'

/** The OpenAPI document of an application, as a client reads it. */
async function documented (options: FastifyViewsOptions): Promise<any> {
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 'Library', version: '1.0.0' } }))
  await app.register(views, options)
  await app.ready()
  return JSON.parse(JSON.stringify(app.swagger()))
}

// Nested resources, object permissions and write seams through HTTP: loans nested under
// members (`/members/:memberId/loans/:id`), changed only by the member who holds them.

const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer(), book: Type.String(), returned_at: Type.Optional(Type.Union([Type.String(), Type.Null()])) }, { $id: 'Loan' })
const LoanIn = Type.Object({ book: Type.String({ minLength: 1 }) })
const MemberParams = Type.Object({ memberId: Type.Integer({ minimum: 1 }) })
const LoanParams = Type.Object({ id: Type.Integer({ minimum: 1 }) })
interface MemberT { id: number, name: string }
type LoanT = Static<typeof Loan>

function stores (): { members: MemoryRepository<MemberT>, loans: MemoryRepository<LoanT> } {
  return {
    members: new MemoryRepository<MemberT>({ rows: [{ id: 1, name: 'Ada' }, { id: 2, name: 'Grace' }] }),
    loans: new MemoryRepository<LoanT>({
      rows: [
        { id: 1, member_id: 1, book: 'Dune', returned_at: null },
        { id: 2, member_id: 1, book: 'Emma', returned_at: null },
        { id: 3, member_id: 2, book: 'Ulysses', returned_at: null }
      ]
    })
  }
}

/** The member a request acts for (a stand-in for authentication). */
const actor = (headers: Record<string, unknown>): number => Number(headers['x-member'])

const families = [
  { name: 'sync', ViewSet: GenericViewSet, wrap: <T>(repo: MemoryRepository<T & object>) => repo },
  { name: 'async', ViewSet: AsyncGenericViewSet, wrap: <T>(repo: MemoryRepository<T & object>) => asyncRepository<T, MemoryRepository<T & object>>(repo) }
] as const

for (const family of families) {
  function loanViews (repos: ReturnType<typeof stores>) {
    const repository = family.wrap(repos.loans) as any
    return (family.ViewSet as typeof GenericViewSet).with({
      responseSchema: Loan,
      createSchema: LoanIn,
      detailParams: LoanParams,
      prefixParams: MemberParams,
      repository,
      parent: { repository: family.wrap(repos.members), lookup: { id: 'memberId' }, scope: { member_id: 'id' }, name: 'Member' }
    }, {
      checkObjectPermissions (loan, action) {
        if (action !== 'retrieve' && loan.member_id !== actor(this.request.headers)) throw new Forbidden('Only the member holding a loan may change it.')
      }
    })
  }

  test(`${family.name}: a nested view is scoped to its parent and answers 404 without one`, async (t) => {
    const repos = stores()
    const app = await build({ views: [{ view: loanViews(repos), prefix: '/members/:memberId/loans' }] })
    const list = await app.inject({ method: 'GET', url: '/members/1/loans' })
    t.equal(list.statusCode, 200)
    t.same(list.json().map((l: LoanT) => l.id), [1, 2], 'only the parent\'s children')
    const other = await app.inject({ method: 'GET', url: '/members/2/loans/1' })
    t.equal(other.statusCode, 404, 'another parent\'s child is not found')
    problem(t, await app.inject({ method: 'GET', url: '/members/9/loans' }), 404)
    t.match(problem(t, await app.inject({ method: 'GET', url: '/members/9/loans/1' }), 404).detail, /Member does not exist/)
    problem(t, await app.inject({ method: 'GET', url: '/members/abc/loans' }), 400)
    const created = await app.inject({ method: 'POST', url: '/members/2/loans', headers: { 'x-member': '2' }, payload: { book: 'Middlemarch' } })
    t.equal(created.statusCode, 201)
    t.equal(created.json().member_id, 2, 'a create is given the parent\'s key')
    const posted = await app.inject({ method: 'POST', url: '/members/2/loans', payload: { book: 'Emma', member_id: 1 } })
    t.equal(posted.statusCode, 400, 'the parent key is not the client\'s to send')
    t.equal((await app.inject({ method: 'POST', url: '/members/7/loans', payload: { book: 'Emma' } })).statusCode, 404, 'no child without its parent')
    t.equal(repos.loans.list({ member_id: 7 }).length, 0)
    const doc = await documented({ views: [{ view: loanViews(stores()), prefix: '/members/:memberId/loans' }] })
    const listOp = doc.paths['/members/{memberId}/loans'].get
    t.ok(listOp.responses['404'], 'the missing parent is documented on the list')
    t.same(listOp.parameters.map((p: { name: string, in: string }) => `${p.in}:${p.name}`), ['path:memberId'])
    const detail = doc.paths['/members/{memberId}/loans/{id}']
    t.same(detail.get.parameters.map((p: { name: string }) => p.name).sort(), ['id', 'memberId'])
    t.ok(detail.delete.responses['403'], 'the object permission is documented where it applies')
    t.notOk(detail.get.responses['403'] === undefined, 'retrieve is judged too')
    t.notOk(listOp.responses['403'], 'not on the list')
    for (const method of ['put', 'patch', 'delete', 'get']) t.ok(detail[method].responses['403'], `${method}: documented`)
    t.notOk(doc.paths['/members/{memberId}/loans'].post.responses['403'], 'not on a create')
  })

  test(`${family.name}: object permissions refuse with 403 and write nothing`, async (t) => {
    const repos = stores()
    const app = await build({ views: [{ view: loanViews(repos), prefix: '/members/:memberId/loans' }] })
    const denied = await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: { 'x-member': '2' }, payload: { book: 'Stolen' } })
    t.match(problem(t, denied, 403).detail, /Only the member/)
    t.equal(repos.loans.get({ id: 1 })?.book, 'Dune', 'nothing written')
    problem(t, await app.inject({ method: 'PUT', url: '/members/1/loans/1', headers: { 'x-member': '2' }, payload: { book: 'Stolen' } }), 403)
    problem(t, await app.inject({ method: 'DELETE', url: '/members/1/loans/1', headers: { 'x-member': '2' } }), 403)
    t.ok(repos.loans.get({ id: 1 }), 'not deleted')
    const merge = await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: { 'x-member': '2', 'content-type': 'application/merge-patch+json' }, payload: { book: 'Stolen' } })
    problem(t, merge, 403)
    const allowed = await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: { 'x-member': '1' }, payload: { book: 'Dune Messiah' } })
    t.equal(allowed.statusCode, 200)
    t.equal(allowed.json().book, 'Dune Messiah')
    t.equal((await app.inject({ method: 'DELETE', url: '/members/1/loans/2', headers: { 'x-member': '1' } })).statusCode, 204)
  })
}

test('an object permission judges the row inside the write, after a conditional read', async (t) => {
  const repos = stores()
  const View = mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Loan,
    createSchema: Type.Object({ ...LoanIn.properties, member_id: Type.Integer() }),
    detailParams: LoanParams,
    conditional: { etag: true, requests: true },
    repository: repos.loans
  }, {
    checkObjectPermissions (loan) {
      if (loan.member_id !== actor(this.request.headers)) throw new Forbidden()
    }
  })
  const app = await build({ views: [{ view: View, prefix: '/loans' }] })
  const read = await app.inject({ method: 'GET', url: '/loans/3', headers: { 'x-member': '2' } })
  const etag = String(read.headers.etag)
  // A client that may not read the loan learns nothing of it from a conditional request.
  problem(t, await app.inject({ method: 'GET', url: '/loans/3', headers: { 'x-member': '1', 'if-none-match': etag } }), 403)
  problem(t, await app.inject({ method: 'PATCH', url: '/loans/3', headers: { 'x-member': '1', 'if-match': '"stale"' }, payload: { book: 'x' } }), 403)
  t.equal((await app.inject({ method: 'GET', url: '/loans/3', headers: { 'x-member': '2', 'if-none-match': etag } })).statusCode, 304)
  problem(t, await app.inject({ method: 'PATCH', url: '/loans/3', headers: { 'x-member': '2', 'if-match': '"stale"' }, payload: { book: 'x' } }), 412)
  t.equal((await app.inject({ method: 'PATCH', url: '/loans/3', headers: { 'x-member': '2', 'if-match': etag }, payload: { book: 'Finnegans Wake' } })).statusCode, 200)
})

test('bulk writes judge every row they change, and one refused row writes nothing', async (t) => {
  for (const [name, Bulk, wrap] of [['sync', BulkAPIViewSet, (r: MemoryRepository<LoanT>) => r], ['async', AsyncBulkAPIViewSet, asyncRepository]] as const) {
    const repos = stores()
    const View = (Bulk as typeof BulkAPIViewSet).with({
      responseSchema: Loan,
      createSchema: Type.Object({ ...LoanIn.properties, member_id: Type.Integer() }),
      updateSchema: Type.Object({ book: Type.String() }),
      bulkUpdateSchema: Type.Object({ id: Type.Integer(), book: Type.String() }),
      filter: null,
      allowUnfiltered: true,

      repository: wrap(repos.loans) as any
    }, {
      checkObjectPermissions (loan: LoanT) {
        if (loan.member_id !== actor(this.request.headers)) throw new Forbidden()
      }
    })
    const app = await build({ views: [{ view: View, prefix: '/loans' }] })
    const bulk = (await documented({ views: [{ view: View, prefix: '/loans' }] })).paths['/loans/bulk']
    t.same(['put', 'patch', 'delete', 'post'].map((method) => bulk[method].responses['403'] !== undefined), [true, true, true, false], `${name}: 403 documented on the bulk writes that change rows`)
    problem(t, await app.inject({ method: 'PUT', url: '/loans/bulk', headers: { 'x-member': '1' }, payload: [{ id: 1, book: 'a' }, { id: 3, book: 'b' }] }), 403)
    t.equal(repos.loans.get({ id: 1 })?.book, 'Dune', `${name}: bulk PUT wrote nothing`)
    problem(t, await app.inject({ method: 'PATCH', url: '/loans/bulk', headers: { 'x-member': '1' }, payload: { book: 'c' } }), 403)
    t.equal(repos.loans.get({ id: 2 })?.book, 'Emma', `${name}: PATCH wrote nothing`)
    problem(t, await app.inject({ method: 'DELETE', url: '/loans/bulk', headers: { 'x-member': '1' } }), 403)
    t.equal(repos.loans.list({}).length, 3, `${name}: DELETE deleted nothing`)
    t.equal((await app.inject({ method: 'PUT', url: '/loans/bulk', headers: { 'x-member': '1' }, payload: [{ id: 1, book: 'a' }, { id: 2, book: 'b' }] })).statusCode, 204)
    t.equal(repos.loans.get({ id: 2 })?.book, 'b')
  }
})

test('write seams: a soft delete replaces performDestroy and keeps the atomic precondition', async (t) => {
  const repos = stores()
  const SoftDeleted = mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Loan,
    createSchema: Type.Object({ ...LoanIn.properties, member_id: Type.Integer() }),
    detailParams: LoanParams,
    conditional: { etag: true, requests: true },
    repository: repos.loans
  }, {
    // Returned loans are gone for the API, kept for the records.
    getKwargs () { return { returned_at: null } },
    performDestroy (criteria: Criteria, options: RepositoryOptions) {
      return this.repository.update(criteria, { returned_at: '2026-11-26T00:00:00.000Z' }, options) !== null
    }
  })
  const app = await build({ views: [{ view: SoftDeleted, prefix: '/loans' }] })
  const etag = String((await app.inject({ method: 'GET', url: '/loans/1' })).headers.etag)
  problem(t, await app.inject({ method: 'DELETE', url: '/loans/1', headers: { 'if-match': '"other"' } }), 412)
  t.equal(repos.loans.get({ id: 1 })?.returned_at, null, 'the precondition still guards the replaced write')
  t.equal((await app.inject({ method: 'DELETE', url: '/loans/1', headers: { 'if-match': etag } })).statusCode, 204)
  t.equal(repos.loans.get({ id: 1 })?.returned_at, '2026-11-26T00:00:00.000Z', 'kept, marked')
  t.equal((await app.inject({ method: 'GET', url: '/loans/1' })).statusCode, 404, 'gone for the API')
  t.equal((await app.inject({ method: 'DELETE', url: '/loans/1' })).statusCode, 404)
  t.same((await app.inject({ method: 'GET', url: '/loans' })).json().map((l: LoanT) => l.id), [2, 3])
})

test('write seams: performCreate writes related rows and may map the body', async (t) => {
  const repos = stores()
  const audit: string[] = []
  const View = GenericViewSet.with({
    responseSchema: Loan,
    // `title` is not a column: the seam maps it, and the view says so, so the registration check leaves the body alone.
    createSchema: Type.Object({ title: Type.String() }),
    detailParams: LoanParams,
    repository: repos.loans,
    mappingActions: ['create']
  }, {
    performCreate (values, options) {
      const loan = this.repository.create({ member_id: 1, book: values.title, returned_at: null }, options)
      if (loan !== null) audit.push(`lent ${loan.book}`)
      return loan
    }
  })
  const app = await build({ views: [{ view: View, prefix: '/loans' }] })
  const res = await app.inject({ method: 'POST', url: '/loans', payload: { title: 'Persuasion' } })
  t.equal(res.statusCode, 201)
  t.equal(res.json().book, 'Persuasion')
  t.same(audit, ['lent Persuasion'])
})

test('a nested view is checked against the prefix it is registered under', async (t) => {
  const repos = stores()
  const View = GenericViewSet.with({
    responseSchema: Loan,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    repository: repos.loans,
    parent: { repository: repos.members, lookup: { id: 'memberId' }, scope: { member_id: 'id' } }
  })
  await t.rejects(build({ views: [{ view: View, prefix: '/members/:member/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /prefixParams declares "memberId", which its prefix/ })
  const Undeclared = GenericViewSet.with(
    { responseSchema: Loan, detailParams: LoanParams, prefixParams: Type.Object({}), repository: repos.loans }
  )
  await t.rejects(build({ views: [{ view: Undeclared, prefix: '/members/:memberId/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /names :memberId, which its prefixParams does not declare/ })
  const Unread = GenericViewSet.with({
    responseSchema: Loan,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    repository: repos.loans,
    parent: { repository: repos.members, lookup: { id: 'member' }, scope: { member_id: 'id' } }
  })
  await t.rejects(build({ views: [{ view: Unread, prefix: '/members/:memberId/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /parent.lookup reads "member"/ })
  const app = await build({ views: [{ view: View, prefix: '/loans' }] }, {}).catch((error: Error) => error)
  t.match(app, { code: 'FV_ERR_PREFIX_PARAMS' }, 'a prefix without the parameter')
  const atApp = await build({ views: [{ view: View, prefix: '/members/:memberId/loans' }] })
  t.equal((await atApp.inject({ method: 'GET', url: '/members/2/loans/3' })).json().book, 'Ulysses', 'the parent is read with the validated parameter (an integer)')
})

test('object permissions need a repository that judges the row in the write', async (t) => {
  const loose = {
    get: () => null,
    list: () => [],
    count: () => 0,
    create: () => null,
    update: () => null,
    delete: () => false
  }
  const View = GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: loose }, {
    checkObjectPermissions () { throw new Forbidden() }
  })
  await t.rejects(build({ views: [{ view: View, prefix: '/loans' }] }), { code: 'FV_ERR_NOT_ATOMIC', message: /checkObjectPermissions/ })
})

test('Location knows the whole prefix: the application\'s, the parent\'s and the view\'s', async (t) => {
  const repos = stores()
  const View = GenericViewSet.with({
    responseSchema: Loan,
    createSchema: LoanIn,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    repository: repos.loans,
    parent: { repository: repos.members, lookup: { id: 'memberId' }, scope: { member_id: 'id' } }
  }, {
    getLocation (loan) { return this.getDetailUrl(loan) }
  })
  const app = Fastify()
  await app.register(async (api) => { await api.register(views, { views: [{ view: View, prefix: '/members/:memberId/loans' }] }) }, { prefix: '/api' })
  const res = await app.inject({ method: 'POST', url: '/api/members/2/loans', payload: { book: 'Emma' } })
  t.equal(res.statusCode, 201)
  t.equal(res.headers.location, `/api/members/2/loans/${res.json().id}`)
  t.equal((await app.inject({ method: 'GET', url: String(res.headers.location) })).json().book, 'Emma', 'the link leads to the object')
  // A link to a field the object lacks is the view's mistake, named in the log, never a broken URL.
  const Broken = GenericViewSet.with({
    responseSchema: Loan,
    createSchema: Type.Object({ ...LoanIn.properties, member_id: Type.Integer() }),
    detailParams: LoanParams,
    repository: stores().loans
  }, {
    getLocation () { return this.getDetailUrl({}) }
  })
  const broken = await build({ views: [{ view: Broken, prefix: '/loans' }] })
  const answer = await broken.inject({ method: 'POST', url: '/loans', payload: { book: 'Emma', member_id: 1 } })
  problem(t, answer, 500)
  t.notOk(answer.headers.location)
})

/** Soft deletes as a mixin of the user's own over generic views (docs/generics.md, "Write seams"; the library's own is SoftDeleteMixin). */
interface SoftDeleteStatics { deletedField: string }
const SoftDeleteMixin = defineMixin<ActionViewClass<'generic', SoftDeleteStatics>, GenericMixinBase>('SoftDeleteMixin', (Base) => {
  return class SoftDelete extends Base {
    static deletedField = 'deleted_at'
    // Deleted rows are gone for every action of the view, whatever the view's own getKwargs scopes by.
    override getScopeKwargs (action?: string): Criteria {
      return { ...super.getScopeKwargs(action), [(this.constructor as typeof SoftDelete).deletedField]: null } // a view instance's class
    }

    // The options carry the If-Match precondition and the object permission: still part of this write.
    override performDestroy (criteria: Criteria, options: RepositoryOptions): boolean {
      const field = (this.constructor as typeof SoftDelete).deletedField // a view instance's class
      return this.repository.update(criteria, { [field]: new Date().toISOString() }, options) !== null
    }
  }
}, [GenericViewMixin])

test('a soft-delete mixin: written once, mixed into any generic view', async (t) => {
  const repos = stores()
  const Loans = mix(SoftDeleteMixin, GenericViewSet).with({ responseSchema: Loan, createSchema: LoanIn, detailParams: LoanParams, deletedField: 'returned_at', repository: repos.loans }, {
    getKwargs () { return { member_id: 1 } }
  })
  const app = await build({ views: [{ view: Loans, prefix: '/loans' }] })
  t.equal((await app.inject({ method: 'DELETE', url: '/loans/2' })).statusCode, 204)
  t.type(repos.loans.get({ id: 2 })?.returned_at, 'string', 'marked, not removed')
  t.same((await app.inject({ method: 'GET', url: '/loans' })).json().map((l: LoanT) => l.id), [1], 'the view\'s own scope and the mixin\'s apply together')
  t.equal((await app.inject({ method: 'GET', url: '/loans/2' })).statusCode, 404)
  t.equal((await app.inject({ method: 'GET', url: '/loans/3' })).statusCode, 404, 'another member\'s loan stays out of scope')
})

test('a route of the view\'s own on a nested view reads the parent first', async (t) => {
  const repos = stores()
  const View = GenericViewSet.with({
    responseSchema: Loan,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    repository: repos.loans,
    parent: { repository: repos.members, lookup: { id: 'memberId' }, scope: { member_id: 'id' }, name: 'Member' }
  }, {}, (route) => ({
    count: route.get('/count', { responseSchema: Type.Object({ member: Type.String(), loans: Type.Integer() }) }, function () {
      return { member: (this.getParent() as MemberT).name, loans: this.repository.count(this.getScopeKwargs('count')) }
    })
  }))
  const app = await build({ views: [{ view: View, prefix: '/members/:memberId/loans' }] })
  t.same((await app.inject({ method: 'GET', url: '/members/1/loans/count' })).json(), { member: 'Ada', loans: 2 })
  t.match(problem(t, await app.inject({ method: 'GET', url: '/members/5/loans/count' }), 404).detail, /Member does not exist/)
})

test('a view without object permissions documents no 403, and reads its parent once per request', async (t) => {
  const repos = stores()
  let parentReads = 0
  const members = {
    get: (criteria: Criteria) => { parentReads++; return criteria.id === 9 ? undefined : repos.members.get(criteria) }
  }
  const View = mix(ConditionalMixin, GenericViewSet).with({
    responseSchema: Loan,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    conditional: { etag: true, requests: true },
    repository: repos.loans,
    parent: { repository: members, lookup: { id: 'memberId' }, scope: { member_id: 'id' } }
  })
  const doc = await documented({ views: [{ view: View, prefix: '/members/:memberId/loans' }] })
  t.notOk(doc.paths['/members/{memberId}/loans/{id}'].get.responses['403'], 'nothing can refuse an object')
  const app = await build({ views: [{ view: View, prefix: '/members/:memberId/loans' }] })
  const etag = String((await app.inject('/members/1/loans/1')).headers.etag)
  parentReads = 0
  t.equal((await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: { 'if-match': etag }, payload: { book: 'Dune II' } })).statusCode, 200)
  t.equal(parentReads, 1, 'the precondition\'s read and the write share the parent')
  t.match(problem(t, await app.inject('/members/9/loans'), 404).detail, /^Parent does not exist/, 'a store answering undefined has no parent either; the default name')
  const Plain = GenericViewSet.with({
    responseSchema: Loan,
    detailParams: LoanParams,
    repository: repos.loans
  }, {}, (route) => ({
    parentOf: route.get('/parent', { responseSchema: Type.Object({ none: Type.Boolean() }) }, function () { return { none: this.getParent() === undefined } })
  }))
  const plain = await build({ views: [{ view: Plain, prefix: '/loans' }] })
  t.same((await plain.inject('/loans/parent')).json(), { none: true }, 'no parent: getParent() is undefined')
})

test('what a nested view\'s declarations must be', async (t) => {
  const repos = stores()
  const NotObject = GenericViewSet.with(
    { responseSchema: Loan, detailParams: LoanParams, prefixParams: Type.String() as never, repository: repos.loans }
  )
  await t.rejects(build({ views: [{ view: NotObject, prefix: '/members/:memberId/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /must be Type\.Object schemas/ })
  const UnionParams = GenericViewSet.with(
    {
      responseSchema: Loan,
      detailParams: Type.Union([LoanParams, Type.Object({ code: Type.String() })]) as never,
      prefixParams: MemberParams,
      repository: repos.loans
    }
  )
  await t.rejects(build({ views: [{ view: UnionParams, prefix: '/members/:memberId/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /params schema of each of its routes/ })
  const Undeclared = GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: repos.loans, parent: { repository: repos.members, lookup: { id: 'memberId' }, scope: { member_id: 'id' } } })
  await t.rejects(build({ views: [{ view: Undeclared, prefix: '/members/:memberId/loans' }] }), { code: 'FV_ERR_PREFIX_PARAMS', message: /names :memberId, which its prefixParams does not declare/ })
})

test('getDetailUrl from a view made by hand in a plain route: the path without a prefix', async (t) => {
  const View = GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: stores().loans })
  const app = Fastify()
  app.get('/plain', (request, reply) => ({ url: new View(request, reply).getDetailUrl({ id: 7 }) }))
  t.same((await app.inject('/plain')).json(), { url: '/7' })
})

test('a repository naming its fields without read-only ones: a body member it lacks is refused', async (t) => {
  const store = stores().loans
  const named = Object.assign(Object.create(store) as MemoryRepository<LoanT>, { fieldNames: ['id', 'member_id', 'book'] })
  const View = GenericViewSet.with(
    {
      responseSchema: Loan,
      createSchema: Type.Object({ book: Type.String(), member_id: Type.Integer(), shelf: Type.String() }),
      detailParams: LoanParams,
      repository: named
    }
  )
  await t.rejects(build({ views: [{ view: View, prefix: '/loans' }] }), { code: 'FV_ERR_UNKNOWN_FIELD', message: /"shelf"/ })
})

test('an async nested view with conditional requests reads its parent before the precondition', async (t) => {
  const repos = stores()
  const View = mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: Loan,
    detailParams: LoanParams,
    prefixParams: MemberParams,
    conditional: { etag: true },
    repository: asyncRepository<LoanT, MemoryRepository<LoanT>>(repos.loans),
    parent: { repository: asyncRepository<MemberT, MemoryRepository<MemberT>>(repos.members), lookup: { id: 'memberId' }, scope: { member_id: 'id' }, name: 'Member' }
  })
  const app = await build({ views: [{ view: View, prefix: '/members/:memberId/loans' }] })
  const etag = String((await app.inject('/members/1/loans/1')).headers.etag)
  t.equal((await app.inject({ method: 'PATCH', url: '/members/1/loans/1', headers: { 'if-match': etag }, payload: { book: 'x' } })).statusCode, 200)
  t.match(problem(t, await app.inject({ method: 'PATCH', url: '/members/8/loans/1', headers: { 'if-match': etag }, payload: { book: 'x' } }), 404).detail, /Member does not exist/)
  t.equal((await app.inject({ method: 'PATCH', url: '/members/2/loans/1', headers: { 'if-match': etag }, payload: { book: 'x' } })).statusCode, 404, 'another member\'s loan: not found, whatever the tag')
})

test('objectPermissionActions: only the actions named are judged, and only they document the 403', async (t) => {
  const repos = stores()
  let judged: string[] = []
  const View = mix(ConditionalMixin, BulkAPIViewSet, GenericViewSet).with({
    responseSchema: Loan,
    createSchema: Type.Object({ ...LoanIn.properties, member_id: Type.Integer() }),
    detailParams: LoanParams,
    updateSchema: LoanIn,
    bulkUpdateSchema: Loan,
    filter: null,
    conditional: { etag: true },
    repository: repos.loans,
    objectPermissionActions: ['update', 'partialUpdate', 'destroy']
  }, {
    checkObjectPermissions (loan, action) {
      judged.push(action)
      if (loan.member_id !== actor(this.request.headers)) throw new Forbidden('Only the borrower may change a loan.')
    }
  })
  const doc = await documented({ views: [{ view: View, prefix: '/loans' }] })
  const detail = doc.paths['/loans/{id}']
  t.same(['get', 'put', 'patch', 'delete'].filter((method) => detail[method].responses['403'] !== undefined), ['put', 'patch', 'delete'], 'the 403 where an object is judged')
  t.notOk(doc.paths['/loans/bulk'].put.responses['403'], 'a bulk update judges nothing here')
  const app = await build({ views: [{ view: View, prefix: '/loans' }] })
  const etag = String((await app.inject({ url: '/loans/3', headers: { 'x-member': '1' } })).headers.etag)
  t.equal((await app.inject({ url: '/loans/3', headers: { 'x-member': '1', 'if-none-match': etag } })).statusCode, 304, 'a read is not judged, conditional or not')
  t.same(judged, [], 'checkObjectPermissions was not called on retrieve')
  problem(t, await app.inject({ method: 'DELETE', url: '/loans/3', headers: { 'x-member': '1' } }), 403)
  t.same(judged, ['destroy'])
  judged = []
  t.equal((await app.inject({ method: 'PUT', url: '/loans/bulk', headers: { 'x-member': '1' }, payload: [{ id: 3, member_id: 2, book: 'Ulysses' }] })).statusCode, 204, 'bulkUpdate is not judged')
  t.same(judged, [])
  t.equal((await app.inject({ method: 'DELETE', url: '/loans/3', headers: { 'x-member': '2' } })).statusCode, 204)

  const Typo = GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: repos.loans, objectPermissionActions: ['delete' as 'destroy'] }, {
    checkObjectPermissions () { throw new Forbidden() }
  })
  await t.rejects(build({ views: [{ view: Typo, prefix: '/loans' }] }), { code: 'FV_ERR_UNKNOWN_ACTION', message: /^Cannot register .*: objectPermissionActions names "delete", which is not an action on objects the client names \(retrieve, update/ })
  const loose = {
    get: () => null,
    list: () => [],
    count: () => 0,
    create: () => null,
    update: () => null,
    delete: () => false
  }
  const ReadOnly = GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: loose, objectPermissionActions: ['retrieve'] }, {
    checkObjectPermissions () { throw new Forbidden() }
  })
  const readOnly = await build({ views: [{ view: ReadOnly, prefix: '/loans' }] })
  problem(t, await readOnly.inject('/loans/1'), 404) // judging reads only needs no atomic writes
  // A check of the user's that builds on the library's (which allows everything) calls it as any override does.
  class Stricter extends GenericViewSet.with({ responseSchema: Loan, detailParams: LoanParams, repository: repos.loans, objectPermissionActions: ['retrieve'] }) {
    override checkObjectPermissions (loan: LoanT, action: string): void {
      super.checkObjectPermissions(loan, action)
      if (loan.member_id !== actor(this.request.headers)) throw new Forbidden()
    }
  }
  const stricter = await build({ views: [{ view: Stricter, prefix: '/loans' }] })
  problem(t, await stricter.inject({ url: '/loans/1', headers: { 'x-member': '2' } }), 403)
  t.equal((await stricter.inject({ url: '/loans/1', headers: { 'x-member': '1' } })).statusCode, 200)
})
