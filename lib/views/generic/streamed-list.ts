// Streamed lists (views layer): the rows of a generic list read page by page along its total order, so
// that a list of any length is sent in bounded memory.
import { totalOrdering } from '../../query/cursor.js'
import { keyFieldsOf, selectable, type ListQuery } from '../../stores/repository.js'
import { loadParent } from './parent.js'
import { mapsItself } from './generic-view.js'
import type { ListingView } from './generic-list.js'

/**
 * The rows of the list this request asks for: the filter's criteria, search and order, the view's
 * scope and its permissions' criteria (`getFilterArgs`, as the paged list), read `pageSize` at a time
 * after the last row sent (a keyset seek along the order and its tie-breaker), so no page is skipped
 * however deep. The query's page parameters do not apply: the stream is the whole list.
 */
export async function * listRows (view: ListingView, pageSize: number): AsyncGenerator<unknown[]> {
  await loadParent(view)
  const filter = view.getFilter(view.request)
  const { args, kwargs } = view.getFilterArgs(filter, 'list')
  const options = view.getRepositoryOptions('list')
  const repository = view.repository
  // Made total by the repository's key, which no two rows share; a filter's tie-breaker (the cursor pages')
  // is the key only when the filter names it, and a store without a declared key is ordered by it.
  const key = keyFieldsOf(repository)
  const orderBy = key !== undefined || filter === undefined ? totalOrdering(filter?.ordering ?? [], key ?? ['id']) : filter.cursorOrdering()
  const query: ListQuery = { orderBy, limit: pageSize }
  if (filter?.search !== undefined) query.search = filter.search
  if (args.length > 0) query.args = args
  const reads = view.fieldSet?.reads
  if (reads !== undefined && !mapsItself(view.constructor, 'list')) query.fields = selectable(reads, repository)
  for (;;) {
    // A store that reads synchronously (SQLite) would hold the event loop for the whole stream while the
    // socket takes every page at once: each page waits for the loop's turn, so other requests are served between.
    await new Promise<void>((resolve) => { setImmediate(resolve) })
    const rows = await repository.list(kwargs, query, options)
    if (rows.length > 0) yield rows
    if (rows.length < pageSize) return
    const last = rows[rows.length - 1] as Record<string, unknown>
    query.after = orderBy.map(({ field }) => last[field])
  }
}
