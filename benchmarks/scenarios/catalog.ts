import { Type, type Static } from '@sinclair/typebox'
import { asyncRepository, MemoryRepository } from '../../lib/generics.js'

/** The rows of the generic-view scenarios: `{ id, name, price, updated_at (date-time) }`. */
export const Product = Type.Object({
  id: Type.Integer(),
  name: Type.String(),
  price: Type.Number(),
  updated_at: Type.String({ format: 'date-time' })
})
export type Product = Static<typeof Product>

export const ProductList = Type.Array(Product)

/** The path parameters of every detail route: an integer id (coerced from the path). */
export const IdParams = Type.Object({ id: Type.Integer() })

/** 20 products, ids 1-20, each modified on its own day of January 2026. */
export function products (count = 20): Product[] {
  return Array.from({ length: count }, (_, i) => ({
    id: i + 1,
    name: `Product ${i + 1}`,
    price: Math.round((4.99 + i * 1.25) * 100) / 100,
    updated_at: new Date(Date.UTC(2026, 0, 1 + (i % 28), 10, 0, 0, 500)).toISOString()
  }))
}

/**
 * A fresh in-memory repository of `products()`, seen through the async protocol
 * (`asyncRepository`), as the async generic views use it. Each scenario makes its own.
 */
export function productRepository (count = 20) {
  return asyncRepository<Product, MemoryRepository<Product>>(new MemoryRepository<Product>({ rows: products(count) }))
}

/** The id every detail scenario requests. */
export const DETAIL_ID = 7
