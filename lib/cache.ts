// The `fastify-views/cache` entry: the application's cache stores, what a view declares of the cache,
// and the store protocol for a kind of your own (docs/cache.md).
// The types entry comes with this one, so that a consumer's declaration emit can name the types of its
// view classes as `fastify-views/types` (without it: TS2742, "cannot be named without a reference to").
import './types.js'
export { memoryCache, MemoryCache, type MemoryCacheOptions } from './stores/cache/memory-cache.js'
export { redisCache, RedisCache, type RedisCacheClient, type RedisCacheOptions } from './stores/cache/redis-cache.js'
export { encodeAnswer, decodeAnswer, type CacheStore, type CacheLookup, type Claim, type StoredAnswer } from './stores/cache/cache-store.js'
export type { CacheOptions, CachedViewClass, IdempotencyOptions } from './stores/cache/cache-options.js'
