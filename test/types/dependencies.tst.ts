import { describe, expect, test } from 'tstyche'
import { APIView, ListAPIView, mix } from '../../lib/index.js'
import type { Dependency } from '../../lib/types.js'
import { Unauthorized } from '../../lib/errors.js'
import { AsyncGenericViewSet, GenericViewSet } from '../../lib/generics.js'
import { AsyncBulkAPIViewSet, BulkAPIViewSet } from '../../lib/bulk.js'

const authenticate: Dependency = { onRequest: () => {}, errors: [Unauthorized], security: [{ bearerAuth: [] }] }

describe('actionDependencies keys are the actions of the view', () => {
  test('the standard and bulk action names compile', () => {
    expect(class extends mix(BulkAPIViewSet, GenericViewSet) {
      static override actionDependencies = {
        create: [authenticate],
        destroy: [authenticate],
        bulkCreate: [authenticate],
        bulkDelete: [authenticate]
      }
    }).type.not.toRaiseError()
    expect(class extends mix(AsyncBulkAPIViewSet, AsyncGenericViewSet) {
      static override actionDependencies = {
        partialUpdate: [authenticate],
        updateMany: [authenticate],
        bulkUpdate: [authenticate]
      }
    }).type.not.toRaiseError()
  })

  // `static override actionDependencies = keys` fails to compile when the type of `keys` (an
  // initializer is not contextually typed by the base class) is not assignable to the base's static.
  const onDestroy = { destroy: [authenticate] }
  const onBulkCreate = { bulkCreate: [authenticate] }

  test('a misspelt key is a compile error', () => {
    const misspelt = { destory: [authenticate] }
    expect(onDestroy).type.toBeAssignableTo<typeof GenericViewSet.actionDependencies>()
    expect(misspelt).type.not.toBeAssignableTo<typeof GenericViewSet.actionDependencies>()
  })

  test('an action the class does not have is a compile error', () => {
    expect(onDestroy).type.not.toBeAssignableTo<typeof ListAPIView.actionDependencies>()
    expect({ list: [authenticate] }).type.toBeAssignableTo<typeof ListAPIView.actionDependencies>()
    expect(onBulkCreate).type.not.toBeAssignableTo<typeof GenericViewSet.actionDependencies>()
    expect(onBulkCreate).type.toBeAssignableTo<typeof BulkAPIViewSet.actionDependencies>()
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
