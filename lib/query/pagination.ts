// The built-in paginations by the names filters gave them before `paginator` (query layer): `pagination: 'page'` still works.
import type { PageOf, Pagination } from './pagination-protocol.js'
import { numberedPages, type NumberedPages } from './page-number.js'
import { offsetPages, type OffsetPages } from './offset.js'
import { cursorPages, type CursorPages } from './cursor.js'

// The cursor codec lived here before each pagination had a file of its own.
export { encodeCursor, decodeCursor } from './cursor.js'

/**
 * How a filter named its pagination before the protocol: `'page'`, `'offset'` and `'cursor'` name
 * the built-in paginations, `'none'` none.
 * @deprecated Set a filter's `paginator` instead (`NumberedPages`, `OffsetPages`, `CursorPages`, or your own).
 */
export type PaginationKind = 'none' | 'page' | 'offset' | 'cursor'

/** The pagination each kind names. */
interface Kinds { page: NumberedPages, offset: OffsetPages, cursor: CursorPages }

const KINDS = new Map<string, Pagination>([['page', numberedPages], ['offset', offsetPages], ['cursor', cursorPages]])

/** The built-in pagination a kind names; none for `'none'` or a name that is not a kind. */
export function paginationOfKind (kind: string): Pagination | undefined {
  return KINDS.get(kind)
}

/** How messages name a pagination: a built-in by its kind (`page`), another by its class (`ArticlePages`). */
export function paginationName (pagination: Pagination): string {
  for (const [kind, builtIn] of KINDS) if (builtIn === pagination) return kind
  return pagination.constructor.name
}

/** The page a list of `T` answers under the pagination kind `K`: a union for a union of kinds, an array for `'none'`. */
export type PageOfKind<K, T> = K extends keyof Kinds ? PageOf<Kinds[K], T> : T[]
