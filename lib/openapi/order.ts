/** The declared order of standard actions; custom routes come after them. */
const ACTION_RANK = ['list', 'create', 'retrieve', 'update', 'partialUpdate', 'destroy', 'bulkCreate', 'bulkUpdate', 'updateMany', 'bulkDelete']
const METHOD_RANK = ['get', 'head', 'post', 'put', 'patch', 'delete', 'options', 'trace']

const rank = (list: string[], name: string): number => {
  const at = list.indexOf(name)
  return at === -1 ? list.length : at
}

/** A Fastify path as a document names it: `/items/:id` -> `/items/{id}`. */
const documentPath = (url: string): string => url.replace(/:([A-Za-z0-9_]+)/g, '{$1}')

type Operations = Record<string, unknown>
/** A top-level tag of a document. */
export interface DocumentTag { name: string, description?: string }

/**
 * The order of one document's paths. Fastify needs a view's routes most specific first
 * (`/items/bulk` before `/items/:id`), and the generator lists paths in that order; a
 * reader expects a resource as its view declares it: list and create, then the detail
 * actions, then bulk, then custom routes. Routes are noted while the document is
 * generated; paths no view route noted (the application's own) keep their place after.
 */
export class DocumentOrder {
  readonly #views = new Map<string, number>()
  readonly #paths = new Map<string, { view: number, action: number }>()
  readonly #tags = new Map<string, DocumentTag>()

  /** Notes a view's tag: the document lists its tags in view order, with their descriptions. */
  noteTag (tag: DocumentTag): void {
    const known = this.#tags.get(tag.name)
    if (known === undefined || (known.description === undefined &&
      tag.description !== undefined)) this.#tags.set(tag.name, tag)
  }

  /** Notes one operation of a view route. */
  note (url: string, view: string | undefined, action: string | undefined): void {
    if (view === undefined || action === undefined) return
    let index = this.#views.get(view)
    if (index === undefined) this.#views.set(view, index = this.#views.size)
    const path = documentPath(url)
    const known = this.#paths.get(path)
    const here = { view: index, action: rank(ACTION_RANK, action) }
    if (known === undefined || here.view < known.view || (here.view === known.view &&
      here.action < known.action)) this.#paths.set(path, here)
  }

  /**
   * Reorders the document's paths, and each path's methods (GET, POST, PUT, PATCH, DELETE),
   * adds the views' tags after the ones the document declares itself, then starts afresh.
   */
  apply (document: { paths: Record<string, Operations>, tags?: DocumentTag[] }): void {
    const declared = document.tags ?? []
    const added = [...this.#tags.values()].filter((tag) => !declared.some((own) => own.name === tag.name))
    if (added.length > 0) document.tags = [...declared, ...added]
    const entries = Object.entries(document.paths).map(
      ([path, operations], index) => ({ path, operations, index, at: this.#paths.get(path) })
    )
    entries.sort(
      (a, b) => (a.at?.view ?? Infinity) - (b.at?.view ?? Infinity) ||
        (a.at?.action ?? Infinity) - (b.at?.action ?? Infinity) || a.index - b.index
    )
    const ordered: Record<string, Operations> = {}
    for (const { path, operations } of entries) {
      ordered[path] = Object.fromEntries(
        Object.entries(operations).sort(([a], [b]) => rank(METHOD_RANK, a) - rank(METHOD_RANK, b))
      )
    }
    document.paths = ordered
    this.#views.clear()
    this.#paths.clear()
    this.#tags.clear()
  }
}
