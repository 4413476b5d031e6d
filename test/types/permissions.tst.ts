import { describe, expect, test } from 'tstyche'
import type { FastifyRequest } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { APIView, mix } from '../../lib/index.js'
import { IsAuthenticated, ReadOnly, hasScope, permission, type Permission } from '../../lib/access.js'
import { GenericViewSet, MemoryRepository } from '../../lib/generics.js'

interface Member { id: number, librarian: boolean }
declare module '../../lib/access.js' {
  interface PrincipalTypes { principal: Member }
}

const Loan = Type.Object({ id: Type.Integer(), member_id: Type.Integer() })
type LoanT = Static<typeof Loan>
const Book = Type.Object({ id: Type.Integer(), title: Type.String() })
type BookT = Static<typeof Book>

const IsLibrarian = permission({ name: 'IsLibrarian', request: (member) => member.librarian })
const IsBorrower = permission<LoanT>({ name: 'IsBorrower', scope: (member) => ({ member_id: member.id }) })
const OwnsBook = permission<BookT>({ name: 'OwnsBook', object: (member, book) => book.id === member.id })

describe('rules are typed by the principal declared once, and by their rows', () => {
  test('a rule gets the principal, not null; an anonymous rule gets null too', () => {
    permission({ name: 'a', request: (member) => { expect(member).type.toBe<Member>(); return true } })
    permission({ name: 'b', anonymous: true, request: (member) => { expect(member).type.toBe<Member | null>(); return true } })
  })

  test('a scope names the fields of its rows, with operators', () => {
    expect(permission<LoanT>).type.toBeCallableWith({ name: 'x', scope: (m: Member) => ({ member_id__in: [m.id] }) })
    expect(permission<LoanT>).type.not.toBeCallableWith({ name: 'x', scope: (m: Member) => ({ memberId: m.id }) })
  })

  test('the principal of a request and of a view', () => {
    expect<FastifyRequest['principal']>().type.toBe<Member | null | undefined>()
    expect<APIView['principal']>().type.toBe<Member | null>()
  })

  test('composition keeps the rows', () => {
    expect(IsBorrower.or(IsLibrarian)).type.toBe<Permission<LoanT>>()
    expect(IsAuthenticated.and(hasScope('loans:read')).not()).type.toBe<Permission>()
  })
})

describe('a view takes the permissions of its rows', () => {
  const repository = new MemoryRepository<LoanT>()
  test('rules over its rows, or over none, compile', () => {
    expect(mix(GenericViewSet).with).type.toBeCallableWith({
      responseSchema: Loan, repository, permissions: [IsAuthenticated, IsBorrower.or(IsLibrarian), ReadOnly]
    })
    expect(mix(GenericViewSet).with).type.toBeCallableWith({
      responseSchema: Loan, repository, actionPermissions: { destroy: [IsLibrarian], list: [IsBorrower] }
    })
  })
  test('a rule over other rows does not', () => {
    expect(mix(GenericViewSet).with).type.not.toBeCallableWith({
      responseSchema: Loan, repository, permissions: [OwnsBook]
    })
    expect(mix(GenericViewSet).with).type.not.toBeCallableWith({
      responseSchema: Loan, repository, actionPermissions: { retrieve: [OwnsBook] }
    })
  })
  test('actionPermissions names the actions of the view', () => {
    expect(mix(GenericViewSet).with).type.not.toBeCallableWith({
      responseSchema: Loan, repository, actionPermissions: { destory: [IsLibrarian] }
    })
  })
})
