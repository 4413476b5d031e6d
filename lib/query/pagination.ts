import { Type, type TArray, type TBoolean, type TInteger, type TNull, type TObject, type TSchema, type TString, type TUnion } from '@sinclair/typebox'

/** The `NumberedPage` envelope of page-number pagination (wire names from the original library). */
export type NumberedPageSchema<T extends TSchema> = TObject<{
  items: TArray<T>, current_page: TInteger, page_size: TInteger, total_pages: TInteger, total_items: TInteger, has_more: TBoolean
}>
/** The `OffsetPage` envelope of offset pagination. */
export type OffsetPageSchema<T extends TSchema> = TObject<{ items: TArray<T>, offset: TInteger, limit: TInteger, total_items: TInteger, has_more: TBoolean }>
/** The `CursorPage` envelope of keyset pagination: opaque cursors, `null` at either end. */
export type CursorPageSchema<T extends TSchema> = TObject<{ items: TArray<T>, next_page: TUnion<[TString, TNull]>, previous_page: TUnion<[TString, TNull]> }>

/** A numbered page of items, as a value. */
export interface NumberedPageOf<T> { items: T[], current_page: number, page_size: number, total_pages: number, total_items: number, has_more: boolean }
/** An offset page of items, as a value. */
export interface OffsetPageOf<T> { items: T[], offset: number, limit: number, total_items: number, has_more: boolean }
/** A cursor page of items, as a value. */
export interface CursorPageOf<T> { items: T[], next_page: string | null, previous_page: string | null }

const caches = { numbered: new WeakMap<TSchema, TSchema>(), offset: new WeakMap<TSchema, TSchema>(), cursor: new WeakMap<TSchema, TSchema>() }

function pageId (item: TSchema, suffix: string): { $id?: string } {
  return typeof item.$id === 'string' ? { $id: `${item.$id}${suffix}` } : {}
}

function cached<T extends TSchema> (cache: WeakMap<TSchema, TSchema>, item: TSchema, build: () => T): T {
  let schema = cache.get(item)
  if (schema === undefined) cache.set(item, schema = build())
  return schema as T
}

/** `NumberedPage(Item)`: the envelope schema, named `ItemNumberedPage` when `Item` has an `$id`. Built once per item schema. */
export function NumberedPage<T extends TSchema> (item: T): NumberedPageSchema<T> {
  return cached(caches.numbered, item, () => Type.Object({
    items: Type.Array(item),
    current_page: Type.Integer({ minimum: 1 }),
    page_size: Type.Integer({ minimum: 1 }),
    total_pages: Type.Integer({ minimum: 0 }),
    total_items: Type.Integer({ minimum: 0 }),
    has_more: Type.Boolean()
  }, pageId(item, 'NumberedPage')))
}

/** `OffsetPage(Item)`: named `ItemOffsetPage` when `Item` has an `$id`. */
export function OffsetPage<T extends TSchema> (item: T): OffsetPageSchema<T> {
  return cached(caches.offset, item, () => Type.Object({
    items: Type.Array(item),
    offset: Type.Integer({ minimum: 0 }),
    limit: Type.Integer({ minimum: 1 }),
    total_items: Type.Integer({ minimum: 0 }),
    has_more: Type.Boolean()
  }, pageId(item, 'OffsetPage')))
}

/** `CursorPage(Item)`: named `ItemCursorPage` when `Item` has an `$id`. */
export function CursorPage<T extends TSchema> (item: T): CursorPageSchema<T> {
  return cached(caches.cursor, item, () => Type.Object({
    items: Type.Array(item),
    next_page: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page; null on the last one.' }),
    previous_page: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the previous page; null on the first one.' })
  }, pageId(item, 'CursorPage')))
}

/** A decoded cursor: which way to read, from which key values. */
export interface Cursor { direction: 'next' | 'previous', values: unknown[] }

interface CursorWire { d: 'n' | 'p', o: string[], v: unknown[] }

/**
 * Encodes a cursor: base64url JSON of the direction, the ordering it belongs to and
 * the key values of the boundary row. Opaque to clients; stateless for servers.
 */
export function encodeCursor (cursor: Cursor, ordering: string[]): string {
  const wire: CursorWire = { d: cursor.direction === 'next' ? 'n' : 'p', o: ordering, v: cursor.values }
  return Buffer.from(JSON.stringify(wire)).toString('base64url')
}

/** Decodes a cursor; `undefined` when it is not one of ours or belongs to another ordering. */
export function decodeCursor (raw: string, ordering: string[]): Cursor | undefined {
  let wire: Partial<CursorWire>
  try {
    wire = JSON.parse(Buffer.from(raw, 'base64url').toString('utf8'))
  } catch {
    return undefined
  }
  if (typeof wire !== 'object' || wire === null || (wire.d !== 'n' && wire.d !== 'p')) return undefined
  if (!Array.isArray(wire.o) || wire.o.join(',') !== ordering.join(',')) return undefined
  if (!Array.isArray(wire.v) || wire.v.length !== ordering.length) return undefined
  if (!wire.v.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) return undefined
  return { direction: wire.d === 'n' ? 'next' : 'previous', values: wire.v }
}
