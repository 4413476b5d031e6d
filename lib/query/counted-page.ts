// A window of rows and the total it belongs to (query layer): what numbered and offset pages read.
import { then, type Awaitable } from '../core/maybe-promise.js'
import type { Criteria, ListQuery, RepositoryOptions } from '../stores/repository.js'
import type { PageSource } from './pagination-protocol.js'

/**
 * An optional repository method: a page and the total it belongs to, read in one snapshot.
 * A pagination that counts (numbered and offset pages) calls it instead of `list` then `count`.
 */
export interface PageSnapshot<T = unknown> {
  listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options: RepositoryOptions): Awaitable<{ items: T[], total: number }>
}

/** `shape` of the rows of the window `offset`, `limit` and of the number of rows matching the list without it. */
export function readCounted (
  source: PageSource,
  offset: number,
  limit: number,
  shape: (items: unknown[], total: number) => unknown
): Awaitable<unknown> {
  const { repository: repo, criteria, query, options } = source
  const windowed: ListQuery = { ...query, offset, limit }
  // A repository that can read the page and its total in one snapshot does, so that they agree under concurrent writes.
  const snapshot = repo as Partial<PageSnapshot>
  if (typeof snapshot.listAndCount === 'function') return then(snapshot.listAndCount(criteria, windowed, query, options), ({ items, total }) => shape(items, total))
  return then(
    repo.list(criteria, windowed, options),
    (items) => then(repo.count(criteria, query, options), (total) => shape(items, total))
  )
}
