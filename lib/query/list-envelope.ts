// The envelope-only list (query layer): every matching row in one named member (`{ "comments": [...] }`), no paging parameters.
import { Type, type TArray, type TObject, type TProperties, type TSchema } from '@sinclair/typebox'
import type { Awaitable } from '../core/maybe-promise.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { pageName, type Envelope, type PageField, type PageSource, type PageWindow, type Pagination } from './pagination-protocol.js'

/** The window of a list that does not page: every row the criteria select. */
export interface WholeListWindow extends PageWindow { readonly kind: 'all' }

/** A list of `T` in the member `N`: `{ comments: Comment[] }`. */
export type ListEnvelopeOf<N extends string, T> = { [K in N]: T[] }

/** The schema of `ListEnvelopeOf<N, Static<T>>`. */
export type ListEnvelopeSchema<N extends string, T extends TSchema> = TObject<{ [K in N]: TArray<T> }>

const WHOLE: WholeListWindow = { kind: 'all' }

const pages = new Map<string, WeakMap<TSchema, TObject>>()

// A member name is a JSON member the client reads by name; an empty one, or one a JavaScript
// object has already (`__proto__`), would not be the member it names.
const NAME = /^[A-Za-z_$][\w$-]*$/

/**
 * Sends the list inside a named member, as some APIs do (`GET /articles/x/comments` answers
 * `{ "comments": [...] }`), and reads it as a list without a pagination does: every row the
 * criteria select, in the filter's ordering, no query parameters of its own. A filter names it:
 * `filter: BaseFilter.with({ paginator: new ListEnvelope('comments') })`; a view's single-object
 * `envelope` (`'comment'`) is independent of it.
 */
export class ListEnvelope<N extends string = string> implements Pagination<WholeListWindow>, Envelope {
  declare readonly item: unknown
  declare readonly page: ListEnvelopeOf<N, this['item']>
  /** The member the items travel in. */
  readonly member: N
  readonly suffix: string

  /** `member`: the name of the list on the wire; `suffix`: the page schema is named `<item $id><suffix>` (default `List`). */
  constructor (member: N, suffix = 'List') {
    if (!NAME.test(member) || member === '__proto__') {
      throw new ConfigurationError('FV_ERR_ENVELOPE', `new ListEnvelope(${JSON.stringify(member)}): the member's name must be a name ` +
        '(letters, digits, _, $ and -, not starting with a digit), such as \'comments\'')
    }
    this.member = member
    this.suffix = suffix
  }

  parameters (): Record<string, TSchema> {
    return {}
  }

  namedFields (): PageField[] {
    return []
  }

  window (): WholeListWindow {
    return WHOLE
  }

  envelopeSchema (item: TSchema): TProperties {
    return { [this.member]: Type.Array(item) }
  }

  pageSchema (item: TSchema): TSchema {
    // Built once per member, suffix and item: two filters naming `new ListEnvelope('comments')` share one schema.
    const key = `${this.suffix}/${this.member}`
    let byItem = pages.get(key)
    if (byItem === undefined) pages.set(key, byItem = new WeakMap())
    let page = byItem.get(item)
    if (page === undefined) byItem.set(item, page = Type.Object(this.envelopeSchema(item), pageName(item, this.suffix)))
    return page
  }

  read ({ repository, criteria, query, options }: PageSource): Awaitable<unknown> {
    const listed = repository.list(criteria, query, options)
    return listed instanceof Promise ? listed.then((items) => this.wrap(items)) : this.wrap(listed)
  }

  private wrap (items: unknown[]): ListEnvelopeOf<N, unknown> {
    return { [this.member]: items } as ListEnvelopeOf<N, unknown> // the one member this class names
  }
}
