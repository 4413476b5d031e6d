import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { AsyncGenericViewSet, type AsyncRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { build, problem } from './helpers.js'

// Conditional writes compared in the write itself (`versionField`), the same cases on every store.

export const VersionedItem = Type.Object({
  id: Type.Integer(),
  name: Type.String({ minLength: 1 }),
  price: Type.Number(),
  version: Type.Integer()
})
export type VersionedItemT = Static<typeof VersionedItem>
const ItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number() })

/** The SQL of the table the cases use; `id` as the dialect declares an integer key. */
export const versionedTable = (id: string, real = 'REAL'): string =>
  `CREATE TABLE items (id ${id}, name TEXT NOT NULL, price ${real} NOT NULL, version INTEGER NOT NULL)`

/** SQL table options of the cases: `version` kept by the store. */
export const VersionedTableOptions = { table: 'items', columns: ['id', 'name', 'price', 'version'], versionColumn: 'version' } as const

/** `/items`: every CRUD action, ETags from `version`, over `repository`. */
export async function versionedApp (repository: AsyncRepository<VersionedItemT>): Promise<FastifyInstance> {
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet).with({
    responseSchema: VersionedItem,
    createSchema: ItemIn,
    updateSchema: ItemIn,
    detailParams: Type.Object({ id: Type.Integer() }),
    conditional: { etag: true, versionField: 'version' },
    repository
  }) {}
  return await build({ views: [{ view: Items, prefix: '/items' }] })
}

/** The ETag `versionedApp` sends for version `n`, given one it sent for another version. */
const atVersion = (etag: string, n: number): string => etag.replace(/\.\d+"$/, `.${n}"`)

/**
 * What a client sees of a view with `versionField`: version tags on reads and writes, a matching
 * If-Match writes, a stale one is a 412 that changes nothing, a missing object a 404, an invalid
 * body with a stale tag a 412 (preconditions before content), `*` and If-Unmodified-Since as before.
 */
export async function versionedOverHttp (t: Test, app: FastifyInstance): Promise<void> {
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 10 } })
  t.equal(created.statusCode, 201)
  const id = created.json<VersionedItemT>().id
  t.equal(created.json().version, 1, 'a create is version 1')

  const read = await app.inject(`/items/${id}`)
  const etag = read.headers.etag as string
  t.match(etag, /^"[A-Za-z0-9_-]{8}\.1"$/, 'the ETag names the representation and version 1')
  t.equal((await app.inject(`/items/${id}`)).headers.etag, etag, 'the same version, the same tag')
  const notModified = await app.inject({ url: `/items/${id}`, headers: { 'if-none-match': etag } })
  t.equal(notModified.statusCode, 304, 'If-None-Match with the version tag: 304')
  t.equal(notModified.body, '')
  t.equal(notModified.headers.etag, etag, 'the 304 carries the tag')
  const head = await app.inject({ method: 'HEAD', url: `/items/${id}`, headers: { 'if-none-match': `W/${etag}` } })
  t.equal(head.statusCode, 304, 'HEAD, a weak copy of the tag: 304')
  const list = await app.inject('/items')
  t.match(list.headers.etag, /^"[A-Za-z0-9_-]{27}"$/, 'a list has no version: its body is hashed')

  const put = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': etag }, payload: { name: 'desk lamp', price: 12 } })
  t.equal(put.statusCode, 200, 'a matching If-Match writes')
  t.equal(put.json().version, 2, 'the store added one to the version')
  t.equal(put.headers.etag, atVersion(etag, 2), 'the answer carries the new version\'s tag')
  t.equal((await app.inject(`/items/${id}`)).headers.etag, put.headers.etag, 'the tag a GET sends next')

  const stale = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': etag }, payload: { name: 'stale', price: 1 } })
  t.equal(problem(t, stale, 412).title, 'Precondition Failed', 'the version read before: 412')
  t.equal((await app.inject(`/items/${id}`)).json().name, 'desk lamp', 'and nothing was written')
  const staleInvalid = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': etag }, payload: { name: '' } })
  problem(t, staleInvalid, 412)
  t.pass('a stale tag with an invalid body: 412, preconditions come before the content (RFC 9110 §13.2.1)')
  const currentInvalid = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': put.headers.etag as string }, payload: { name: '' } })
  problem(t, currentInvalid, 400)
  const future = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': atVersion(etag, 7) }, payload: { name: 'future', price: 1 } })
  problem(t, future, 412)
  const foreign = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': '"abcdefgh.2"' }, payload: { name: 'foreign', price: 1 } })
  problem(t, foreign, 412)
  t.pass('a version of another representation never matches')
  const missing = await app.inject({ method: 'PUT', url: '/items/999999', headers: { 'if-match': atVersion(etag, 1) }, payload: { name: 'ghost', price: 1 } })
  problem(t, missing, 404)
  t.pass('no such item: 404, the action\'s answer wins over the precondition')

  const patched = await app.inject({ method: 'PATCH', url: `/items/${id}`, headers: { 'if-match': put.headers.etag as string }, payload: { price: 15 } })
  t.equal(patched.statusCode, 200, 'PATCH with the current tag')
  t.same([patched.json().name, patched.json().price, patched.json().version], ['desk lamp', 15, 3])
  const stalePatch = await app.inject({ method: 'PATCH', url: `/items/${id}`, headers: { 'if-match': put.headers.etag as string }, payload: { price: 16 } })
  problem(t, stalePatch, 412)

  const patchTag = patched.headers.etag as string
  t.equal(patchTag, atVersion(etag, 3))
  const jsonPatch = await app.inject({
    method: 'PATCH',
    url: `/items/${id}`,
    headers: { 'if-match': patchTag, 'content-type': 'application/json-patch+json' },
    payload: [{ op: 'test', path: '/price', value: 15 }, { op: 'replace', path: '/name', value: 'patched lamp' }]
  })
  t.equal(jsonPatch.statusCode, 200, 'a JSON Patch with the current tag')
  t.same([jsonPatch.json().name, jsonPatch.json().version], ['patched lamp', 4])
  const staleJsonPatch = await app.inject({
    method: 'PATCH',
    url: `/items/${id}`,
    headers: { 'if-match': patchTag, 'content-type': 'application/json-patch+json' },
    payload: [{ op: 'replace', path: '/name', value: 'stale patch' }]
  })
  problem(t, staleJsonPatch, 412)
  const merged = await app.inject({
    method: 'PATCH', url: `/items/${id}`, headers: { 'if-match': jsonPatch.headers.etag as string, 'content-type': 'application/merge-patch+json' }, payload: { price: 15.5 }
  })
  t.same([merged.statusCode, merged.json().price, merged.json().version], [200, 15.5, 5], 'a merge patch with the current tag')
  problem(t, await app.inject({
    method: 'PATCH', url: `/items/${id}`, headers: { 'if-match': patchTag, 'content-type': 'application/merge-patch+json' }, payload: { price: 1 }
  }), 412)

  const versionSent = await app.inject({ method: 'PATCH', url: `/items/${id}`, payload: { price: 17, version: 1 } })
  t.equal(versionSent.statusCode, 400, 'the version is not a member the client writes')

  const star = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': '*' }, payload: { name: 'starred', price: 1 } })
  t.equal(star.statusCode, 200, 'If-Match: * on an existing item')
  t.equal(star.json().version, 6)
  const list2 = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': `"nope", ${star.headers.etag as string}` }, payload: { name: 'listed', price: 1 } })
  t.equal(list2.statusCode, 200, 'a list naming the current tag matches')
  t.equal(list2.json().version, 7)
  const both = await app.inject({ method: 'PUT', url: `/items/${id}`, headers: { 'if-match': star.headers.etag as string, 'if-none-match': '*' }, payload: { name: 'both', price: 1 } })
  problem(t, both, 412)
  t.pass('If-None-Match: * beside a stale If-Match: 412')

  const staleDelete = await app.inject({ method: 'DELETE', url: `/items/${id}`, headers: { 'if-match': etag } })
  problem(t, staleDelete, 412)
  const current = (await app.inject(`/items/${id}`)).headers.etag as string
  const deleted = await app.inject({ method: 'DELETE', url: `/items/${id}`, headers: { 'if-match': current } })
  t.equal(deleted.statusCode, 204, 'DELETE with the current tag')
  const again = await app.inject({ method: 'DELETE', url: `/items/${id}`, headers: { 'if-match': current } })
  problem(t, again, 404)
}
