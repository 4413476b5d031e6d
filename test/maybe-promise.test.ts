import { test } from 'tap'
import { Type, type Static } from '@sinclair/typebox'
import { APIView, Catch, Get, mix } from '../lib/index.js'
import { AsyncGenericViewSet, MemoryRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { isThenable, then } from '../lib/core/maybe-promise.js'
import { build, problem } from './helpers.js'

/**
 * A thenable as query builders make them: not a `Promise`, settling on a later turn, and
 * its `then` returns nothing, so only a caller that adopts it (`await`) gets the value.
 */
function thenable<T> (run: () => T): PromiseLike<T> {
  return {
    then (resolve, reject) {
      setImmediate(() => {
        try {
          resolve?.(run())
        } catch (error) {
          reject?.(error)
        }
      })
      return undefined as never // a builder's then returns nothing
    }
  }
}

test('the rule: a callable then makes a value waited on, except the one given', async (t) => {
  const reply = { then () {} }
  t.ok(isThenable(Promise.resolve(1)))
  t.ok(isThenable(thenable(() => 1)))
  t.notOk(isThenable(reply, reply), 'the excepted value is not waited on')
  for (const value of [null, undefined, 0, 'then', { then: 1 }, []]) t.notOk(isThenable(value), `not thenable: ${JSON.stringify(value)}`)
  t.equal(then(2, (n) => n * 2), 4, 'a plain value is applied at once')
  t.equal(await then(thenable(() => 2), (n) => n * 2), 4, 'a thenable is adopted, then applied')
  t.equal(then(reply, (r) => r, reply), reply, 'the excepted value is passed as it is')
})

const Item = Type.Object({ id: Type.Integer(), name: Type.String() }, { $id: 'LazyItem' })
type ItemT = Static<typeof Item>

/** The store's methods, each answering through a thenable; it checks preconditions in the same step, as the memory store does. */
function lazyRepository (store: MemoryRepository<ItemT>): Record<string, unknown> {
  const lazy: Record<string, unknown> = { atomicPreconditions: true }
  for (const method of ['create', 'get', 'list', 'count', 'update', 'delete'] as const) {
    lazy[method] = (...args: unknown[]) => thenable(
      () => (store[method] as (...a: unknown[]) => unknown).apply(store, args)
    )
  }
  return lazy
}

test('preconditions read the current object through a thenable repository, not the thenable itself', async (t) => {
  const store = new MemoryRepository<ItemT>({ rows: [{ id: 1, name: 'lamp' }] })
  class Items extends mix(ConditionalMixin, AsyncGenericViewSet)<{ item: ItemT, params: { id: number } }> {
    static override responseSchema = Item
    static override detailParams = Type.Object({ id: Type.Integer() })
    static override conditional = { etag: true }
    static override repository = lazyRepository(store) as never // the protocol's methods, each returning a thenable
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  const etag = (await app.inject('/items/1')).headers.etag as string
  t.match(etag, /^"/, 'GET tags the object')
  const changed = await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'desk' } })
  t.equal(changed.statusCode, 200, 'the tag of the object, not of the thenable, matches If-Match')
  t.equal(changed.json().name, 'desk')
  problem(t, await app.inject({ method: 'PATCH', url: '/items/1', headers: { 'if-match': etag }, payload: { name: 'sofa' } }), 412)
  t.equal(store.get({ id: 1 })?.name, 'desk', 'the stale write changed nothing')
  problem(t, await app.inject({ method: 'DELETE', url: '/items/9', headers: { 'if-match': etag } }), 404)
})

class Unavailable extends Error {}

test('@Catch maps the rejection of a thenable as it maps a rejected promise', async (t) => {
  class Lookups extends APIView {
    @Get('/lookup')
    @Catch(Unavailable, { status: 503, detail: 'The directory is unavailable.' })
    lookup (): PromiseLike<unknown> { return thenable(() => { throw new Unavailable('internal detail') }) }

    @Get('/found')
    @Catch(Unavailable, { status: 503, detail: 'The directory is unavailable.' })
    found (): PromiseLike<unknown> { return thenable(() => 'kept') }

    @Get('/sent')
    @Catch(Unavailable, { status: 503, detail: 'The directory is unavailable.' })
    sent (): unknown { return this.reply.code(202).send({ sent: true }) }
  }
  const app = await build({ views: [Lookups] })
  t.teardown(() => app.close())
  const res = await app.inject('/lookup')
  t.equal(problem(t, res, 503).detail, 'The directory is unavailable.')
  t.notMatch(res.body, /internal detail/, 'the exception text stays on the server')
  t.equal((await app.inject('/found')).body, 'kept', 'a fulfilled thenable is the result')
  const sent = await app.inject('/sent')
  t.same([sent.statusCode, sent.json()], [202, { sent: true }], 'the reply is returned as it is, not waited on')
})
