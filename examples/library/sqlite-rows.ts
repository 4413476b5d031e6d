// WORKAROUND for what the SQL repositories cannot say yet (docs/example-library.md, "What the
// library could not say"): the JSON type of a value SQLite does not have.
import { preconditionOf, type Criteria, type ListQuery, type RepositoryOptions } from 'fastify-views/generics'
import { AsyncSqliteRepository, type SqlTableOptions } from 'fastify-views/sql'

/** Fields SQLite cannot give in their JSON type: booleans (it stores 0 and 1) and JSON arrays (it returns their text). */
export interface Decoding { booleans?: readonly string[], json?: readonly string[] }

/**
 * An `AsyncSqliteRepository` whose rows have their JSON types. SQLite has no boolean and no JSON
 * type, so `available` arrives as 1 and `genres` as the text `["classic"]`, which the response
 * schema refuses; the SQL repositories have no per-field decoding, so this subclass decodes the
 * rows it returns, and the rows a write's checks (If-Match, object permissions) judge.
 */
export class SqliteRows<T extends object> extends AsyncSqliteRepository<T> {
  readonly #decoding: Required<Decoding>

  constructor (db: ConstructorParameters<typeof AsyncSqliteRepository>[0], options: SqlTableOptions<T>, decoding: Decoding = {}) {
    super(db, options)
    this.#decoding = { booleans: [], json: [], ...decoding }
  }

  #decode<R extends object> (row: R): R {
    const fixed: Record<string, unknown> = {}
    for (const field of this.#decoding.booleans) {
      const value: unknown = Reflect.get(row, field)
      if (typeof value === 'number') fixed[field] = value === 1
    }
    for (const field of this.#decoding.json) {
      const value: unknown = Reflect.get(row, field)
      if (typeof value === 'string') fixed[field] = JSON.parse(value)
    }
    return { ...row, ...fixed }
  }

  /** The options of a write, its precondition judging the decoded row. */
  #judged (options: RepositoryOptions | undefined): RepositoryOptions | undefined {
    const precondition = preconditionOf(options)
    if (precondition === undefined) return options
    return { ...options, precondition: (row: unknown) => { precondition(typeof row === 'object' && row !== null ? this.#decode(row) : row) } }
  }

  override async get (criteria: Criteria, options?: RepositoryOptions): Promise<T | null> {
    const row = await super.get(criteria, options)
    return row === null ? null : this.#decode(row)
  }

  override async list (criteria: Criteria, query?: ListQuery, options?: RepositoryOptions): Promise<T[]> {
    return (await super.list(criteria, query, options)).map((row) => this.#decode(row))
  }

  override async listAndCount (criteria: Criteria, query: ListQuery, countQuery: Pick<ListQuery, 'search' | 'args'>, options?: RepositoryOptions): Promise<{ items: T[], total: number }> {
    const { items, total } = await super.listAndCount(criteria, query, countQuery, options)
    return { items: items.map((row) => this.#decode(row)), total }
  }

  override async create (values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    const row = await super.create(values, options)
    return row === null ? null : this.#decode(row)
  }

  override async update (criteria: Criteria, values: Record<string, unknown>, options?: RepositoryOptions): Promise<T | null> {
    const row = await super.update(criteria, values, this.#judged(options))
    return row === null ? null : this.#decode(row)
  }

  override delete (criteria: Criteria, options?: RepositoryOptions): Promise<boolean> {
    return super.delete(criteria, this.#judged(options))
  }
}
