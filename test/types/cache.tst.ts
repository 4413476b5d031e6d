import { describe, expect, test } from 'tstyche'
import { mix } from '../../lib/index.js'
import { GenericViewSet, MemoryRepository } from '../../lib/generics.js'
import { memoryCache, redisCache, type CacheOptions, type CacheStore, type RedisCacheClient } from '../../lib/cache.js'
import type { Static } from '@sinclair/typebox'
import type { Redis } from 'ioredis'
import { IdParams, Item } from './schemas.js'

// The cache (docs/cache.md): a view's `static cache` is typed, its options checked by the compiler
// where a literal meets the type (`.with`, an annotated static); the stores take what they say.

type ItemData = Static<typeof Item>
const memory = new MemoryRepository<ItemData>({ rows: [] })

describe('static cache', () => {
  test('takes every option through .with and an annotated static', () => {
    const options: CacheOptions = {
      ttl: 60,
      actions: ['list'],
      resource: 'items',
      invalidates: ['shelves'],
      vary: ['accept-language'],
      shared: false,
      maxAge: 5,
      jitter: 0.1,
      idempotency: { ttl: 60, lease: 5 }
    }
    const statics = { responseSchema: Item, detailParams: IdParams, repository: memory, cache: options }
    expect(mix(GenericViewSet).with).type.toBeCallableWith(statics)
    class Items extends mix(GenericViewSet).with({ responseSchema: Item, repository: memory }) {
      static override cache: CacheOptions = { ttl: 60, idempotency: true, invalidates: [Items] }
    }
    expect(Items.cache).type.toBe<CacheOptions>()
  })

  test('refuses a misspelt option and a value of the wrong type', () => {
    const base = { responseSchema: Item, repository: memory }
    expect(mix(GenericViewSet).with).type.not.toBeCallableWith({ ...base, cache: { tll: 60 } })
    expect(mix(GenericViewSet).with).type.not.toBeCallableWith({ ...base, cache: { ttl: '60' } })
    expect({ ttl: 60, idempotency: { ttl: 1, retries: 3 } }).type.not.toBeAssignableTo<CacheOptions>()
    expect({ invalidates: [42] }).type.not.toBeAssignableTo<CacheOptions>()
  })
})

describe('stores', () => {
  test('memoryCache and redisCache are cache stores; redisCache takes an ioredis client', () => {
    expect(memoryCache()).type.toBeAssignableTo<CacheStore>()
    expect(redisCache).type.toBeCallableWith({} as Redis)
    expect<Redis>().type.toBeAssignableTo<RedisCacheClient>()
    expect(redisCache).type.not.toBeCallableWith({ get: async () => null })
    expect(memoryCache).type.not.toBeCallableWith({ maxItems: 10 })
  })
})
