import { describe, expect, test } from 'tstyche'
import {
  APIView, AsyncBulkAPIViewSet, AsyncGenericViewSet, BulkAPIViewSet, GenericViewSet, ListAPIView, Unauthorized, mix, type Dependency
} from '../../lib/index.js'

const authenticate: Dependency = { onRequest: () => {}, errors: [Unauthorized], security: [{ bearerAuth: [] }] }

describe('actionDependencies keys are the actions of the view', () => {
  test('the standard and bulk action names compile', () => {
    expect(class extends mix(BulkAPIViewSet, GenericViewSet) {
      static override actionDependencies = { create: [authenticate], destroy: [authenticate], bulkCreate: [authenticate], bulkDelete: [authenticate] }
    }).type.not.toRaiseError()
    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet) {
      static override actionDependencies = { partialUpdate: [authenticate], updateMany: [authenticate], bulkUpdate: [authenticate] }
    }).type.not.toRaiseError()
  })

  test('a misspelt key is a compile error', () => {
    expect(class extends GenericViewSet {
      static override actionDependencies = { destory: [authenticate] }
    }).type.toRaiseError('has no properties in common')
  })

  test('an action the class does not have is a compile error', () => {
    expect(class extends ListAPIView {
      static override actionDependencies = { destroy: [authenticate] }
    }).type.toRaiseError('has no properties in common')
    expect(class extends GenericViewSet {
      static override actionDependencies = { bulkCreate: [authenticate] }
    }).type.toRaiseError('has no properties in common')
  })

  test('a plain APIView names its decorated routes freely', () => {
    expect(class extends APIView {
      static override actionDependencies = { remove: [authenticate] }
    }).type.not.toRaiseError()
  })

  test('unsafeDependencies takes dependencies of every form', () => {
    expect(class extends GenericViewSet {
      static override unsafeDependencies = [authenticate, () => {}, { preHandler: () => {} }]
    }).type.not.toRaiseError()
  })
})
