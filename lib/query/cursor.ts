// Keyset pagination (query layer): an opaque `cursor` and `page_size`, seeks after a row, the `CursorPage` envelope.
import { Type, type TArray, type TNull, type TObject, type TProperties, type TSchema, type TString, type TUnion } from '@sinclair/typebox'
import { then, type Awaitable } from '../core/maybe-promise.js'
import { RequestValidationError } from '../http/errors.js'
import type { ListQuery, OrderKey } from '../stores/repository.js'
import { classSuffix, envelopePage, pageSizeSchema, type Envelope, type PageBounds, type PageField, type PageQuery, type PageSource, type PageWindow, type Pagination } from './pagination-protocol.js'

/** The `CursorPage` envelope of keyset pagination: opaque cursors, `null` at either end. */
export type CursorPageSchema<T extends TSchema> = TObject<{
  items: TArray<T>,
  next_page: TUnion<[TString, TNull]>,
  previous_page: TUnion<[TString, TNull]>
}>

/** A cursor page of items, as a value. */
export interface CursorPageOf<T> { items: T[], next_page: string | null, previous_page: string | null }

/**
 * A decoded cursor: which way to read, from which key values. No values: from the edge of the
 * list that way starts at (the first page reading `next`, the last reading `previous`), the cursor
 * an empty page leads back by, as it has no row to point past.
 */
export interface Cursor { direction: 'next' | 'previous', values: unknown[] }

/** The window of a cursor: `{ kind: 'cursor', pageSize, cursor? }`; no cursor: the first page. */
export interface CursorWindow extends PageWindow { readonly kind: 'cursor', readonly pageSize: number, readonly cursor?: Cursor }

/** What a cursor page knows besides its items, for its envelope: the cursors of its neighbours. */
export interface CursorFacts {
  /** The cursor of the next page; `null` on the last one. */
  next: string | null
  /** The cursor of the previous page; `null` on the first one. */
  previous: string | null
}

/** The names of the query parameters of keyset pagination. */
export interface CursorNames { cursor: string, pageSize: string }

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
  // One value per key of the ordering, or none: an edge of the list (`Cursor`).
  if (!Array.isArray(wire.v) || (wire.v.length !== ordering.length && wire.v.length !== 0)) return undefined
  if (!wire.v.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v))) return undefined
  return { direction: wire.d === 'n' ? 'next' : 'previous', values: wire.v }
}

/** `{ field: 'price', descending: true }` -> `-price`. */
export function orderToken (key: OrderKey): string {
  return key.descending ? `-${key.field}` : key.field
}

/** The fields of a tie-breaker: one, or a key's several. */
export const tieBreakerFields = (tieBreaker: string | readonly string[]): readonly string[] => typeof tieBreaker === 'string' ? [tieBreaker] : tieBreaker

/** The ordering a cursor seeks along: the sort keys, then each tie-breaker field they lack, so that the order is total. */
export function totalOrdering (ordering: readonly OrderKey[], tieBreaker: string | readonly string[]): OrderKey[] {
  const missing = tieBreakerFields(tieBreaker).filter((field) => !ordering.some((k) => k.field === field))
  return [...ordering, ...missing.map((field) => ({ field, descending: false }))]
}

/** What `partialKeyTieBreaker` reads of a filter: its name, its tie-breaker, and the fields it names (its pagination's among them). */
interface TieBreaking {
  readonly name: string
  readonly tieBreaker: string | readonly string[]
  namedFields (): ReadonlyArray<{ field: string, static: string }>
}

/**
 * Why a filter's cursor pages would skip or repeat rows of a store keyed by several fields: its
 * tie-breaker names some of them but not all, so rows sharing those tie (two favourites of one
 * article). `undefined` when its pages are not cursors, or it names the whole key, or none of it (a
 * field unique by itself). A list scoped to one value of the other fields would be total, but
 * registration cannot see a scope; naming the whole key costs nothing there.
 */
export function partialKeyTieBreaker (filter: TieBreaking, key: readonly string[] | undefined): string | undefined {
  if (key === undefined || !filter.namedFields().some((named) => named.static === 'tieBreaker')) return undefined
  const fields = tieBreakerFields(filter.tieBreaker)
  const missing = key.filter((field) => !fields.includes(field))
  if (missing.length === 0 || missing.length === key.length) return undefined
  const quoted = (names: readonly string[]): string => names.map((name) => `'${name}'`).join(', ')
  return `${filter.name}.tieBreaker is ${quoted(fields)}, part of its repository's key (${key.join(', ')}): rows that differ only in ` +
    `${missing.join(', ')} tie, and a cursor would skip or repeat them. Name the whole key: tieBreaker: [${quoted([...fields, ...missing])}]`
}

/** The values of a row's ordering keys, as a cursor holds them (a date as its ISO text). */
const keysOf = (item: unknown, ordering: OrderKey[]): unknown[] =>
  ordering.map(({ field }) => {
    const value = (item as Record<string, unknown>)[field] // a row the repository listed: an object, read by its sort keys' names
    return value instanceof Date ? value.toISOString() : value
  })

const reversed = (ordering: OrderKey[]): OrderKey[] => ordering.map(
  (k) => ({ field: k.field, descending: !k.descending })
)

/**
 * Pages by keyset: the client follows the cursors of a page, and the repository seeks to the rows
 * after the last one seen (docs/filters.md#cursor-pages). A subclass says what a page looks
 * like: its type (`page`, of `this['item']`), its members (`envelope`) and their schema
 * (`envelopeSchema`). `CursorPages` is the one `CursorPaginationFilter` answers with.
 */
export abstract class CursorPagination implements Pagination<CursorWindow>, Envelope {
  declare readonly item: unknown
  /** The page of `this['item']` (type only): `declare readonly page: MyPage<this['item']>`. */
  abstract readonly page: unknown
  /** The query parameters' names (default `cursor` and `page_size`). */
  readonly names: CursorNames
  /** The page schema's `$id` follows its item's: `Item` + this. */
  readonly suffix: string = classSuffix(this)
  /** What the document says of the cursor parameter. */
  readonly cursorDescription: string = 'An opaque cursor from a page of this list.'

  constructor (names: Partial<CursorNames> = {}) {
    this.names = { cursor: 'cursor', pageSize: 'page_size', ...names }
  }

  /** The page of `items`, with the cursors of its neighbours. */
  abstract envelope (items: unknown[], facts: CursorFacts): this['page']

  /** The members of a page of `item`. */
  abstract envelopeSchema (item: TSchema): TProperties

  parameters (bounds: PageBounds): Record<string, TSchema> {
    return {
      [this.names.cursor]: Type.String({ pattern: '^[A-Za-z0-9_-]+$', maxLength: 4096, description: this.cursorDescription }),
      [this.names.pageSize]: pageSizeSchema(bounds)
    }
  }

  namedFields (bounds: PageBounds): PageField[] {
    return tieBreakerFields(bounds.tieBreaker).map((field) => ({ field, static: 'tieBreaker' }))
  }

  /** The window of a request. An invalid or foreign cursor is a 400 naming the cursor parameter. */
  window ({ values, bounds, ordering }: PageQuery): CursorWindow {
    // The values were validated by the schemas of `parameters`: an integer in its bounds, base64url text, or absent.
    const pageSize = (values[this.names.pageSize] as number | undefined) ?? bounds.pageSize()
    const raw = values[this.names.cursor]
    if (typeof raw !== 'string') return { kind: 'cursor', pageSize }
    const cursor = decodeCursor(raw, totalOrdering(ordering, bounds.tieBreaker).map(orderToken))
    if (cursor === undefined) {
      const parameter = this.names.cursor
      throw new RequestValidationError('The query string is invalid.', { errors: [{ detail: 'Invalid cursor for this ordering', pointer: `#/${parameter}`, in: 'query', parameter }] })
    }
    return { kind: 'cursor', pageSize, cursor }
  }

  pageSchema (item: TSchema): TSchema {
    return envelopePage(this, item)
  }

  /** Reads one row more than asked for, to learn whether another page follows. */
  read (source: PageSource, { cursor, pageSize }: CursorWindow): Awaitable<unknown> {
    const { repository: repo, criteria, options } = source
    const ordering = totalOrdering(source.query.orderBy, source.bounds.tieBreaker)
    const backwards = cursor?.direction === 'previous'
    const query: ListQuery = {
      ...source.query,
      orderBy: backwards ? reversed(ordering) : ordering,
      limit: pageSize + 1
    }
    // A cursor without values reads from an edge, as the first page does: no seek.
    const bounded = cursor !== undefined && cursor.values.length > 0
    if (bounded) query.after = cursor.values
    return then(repo.list(criteria, query, options), (rows) => {
      const read = rows.slice(0, pageSize)
      const items = backwards ? [...read].reverse() : read
      return this.envelope(items, neighbours(read, { backwards, bounded, more: rows.length > pageSize, ordering }))
    })
  }
}

/** How a page was read, for the cursors of its neighbours. */
interface PageRead {
  /** Whether the rows were read towards the start (a `previous` cursor). */
  readonly backwards: boolean
  /** Whether the read began after a boundary row (a cursor with values), rather than at an edge of the list. */
  readonly bounded: boolean
  /** Whether a row beyond the page came back: another page lies ahead. */
  readonly more: boolean
  readonly ordering: OrderKey[]
}

/**
 * The cursors of a page, from its rows in the order they were read. Ahead (the way it was read)
 * lies a page when a row beyond it came back, reached past the page's farthest row. Behind lies
 * one when the read began after a boundary row, reached past the nearest row; an empty page has
 * none, so its way back is the edge it faces: behind an empty previous page the first page, behind
 * an empty next page the last one, whichever rows are there by then.
 */
function neighbours (read: readonly unknown[], { backwards, bounded, more, ordering }: PageRead): CursorFacts {
  const tokens = ordering.map(orderToken)
  const [ahead, behind]: [Cursor['direction'], Cursor['direction']] = backwards ? ['previous', 'next'] : ['next', 'previous']
  const past = (direction: Cursor['direction'], row: unknown): string =>
    encodeCursor({ direction, values: row === undefined ? [] : keysOf(row, ordering) }, tokens)
  const forth = more ? past(ahead, read[read.length - 1]) : null
  const back = bounded ? past(behind, read[0]) : null
  return backwards ? { next: back, previous: forth } : { next: forth, previous: back }
}

/** Keyset pagination answering a `CursorPage`: `{ items, next_page, previous_page }`. */
export class CursorPages extends CursorPagination {
  declare readonly page: CursorPageOf<this['item']>
  override readonly suffix: string = 'CursorPage'
  override readonly cursorDescription: string = 'An opaque cursor from next_page or previous_page.'

  envelope (items: unknown[], facts: CursorFacts): CursorPageOf<unknown> {
    return { items, next_page: facts.next, previous_page: facts.previous }
  }

  envelopeSchema (item: TSchema): TProperties {
    return {
      items: Type.Array(item),
      next_page: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the next page; null on the last one.' }),
      previous_page: Type.Union([Type.String(), Type.Null()], { description: 'Cursor of the previous page; null on the first one.' })
    }
  }
}

/** The keyset pagination of `CursorPaginationFilter`. */
export const cursorPages = new CursorPages()

/** `CursorPage(Item)`: named `ItemCursorPage` when `Item` has an `$id`. Built once per item schema. */
export function CursorPage<T extends TSchema> (item: T): CursorPageSchema<T> {
  return envelopePage(cursorPages, item) as CursorPageSchema<T> // the members CursorPages.envelopeSchema builds for `item`
}
