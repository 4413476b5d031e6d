// Sparse fieldsets (views layer): `SparseFieldsMixin`, `?fields=` and `?omit=` on the list and the detail read of a generic view.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { preSerializationHookHandler } from 'fastify'
import { ConfigurationError } from '../../core/configuration-error.js'
import { defineMixin } from '../mixins.js'
import { schemaStatic } from '../../core/typebox-lines.js'
import { isRecord } from '../../core/record.js'
import { fieldSetOf, Fieldsets, fieldsetParameters, rememberFieldSet, sparseSchema, type FieldSet } from '../../query/field-set.js'
import { keyFieldsOf } from '../../stores/repository.js'
import { listItemOf } from '../actions/list-create.js'
import { STANDARD_ACTIONS, withSchema, type ActionViewClass } from '../actions/standard.js'
import { extendContribution, type ActionRoute, type RouteContribution, type RouteDefinition, type StandardAction } from '../view.js'
import { GENERIC, type GenericBase } from './generic-view.js'
import { pageSchema } from './generic-list.js'

/** The instance members `SparseFieldsMixin` adds (docs/sparse-fields.md). */
export interface SparseFieldsMembers {
  /** The fields this request's `?fields=` and `?omit=` keep, once read; `undefined` for the whole object. */
  fieldSet: FieldSet | undefined
}

declare module '../mixins.js' {
  // An augmentation repeats the interface's type parameters, used or not.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ActionRegistry<M> { sparseFields: SparseFieldsMembers }
}

/** The actions that take `?fields=` and `?omit=`. */
const READS: ReadonlySet<string> = new Set(['list', 'retrieve'])

/** A view class with sparse fieldsets, as the mixin reads it. */
type SparseClass = GenericBase & {
  listItemSchema?: unknown
  responseSchema?: unknown
  detailParams?: unknown
  conditional?: { versionField?: string | undefined, lastModifiedField?: string | undefined }
}

/**
 * Sparse fieldsets for generic views (docs/sparse-fields.md): mix it in before the generic actions
 * (after `ConditionalMixin`), `mix(SparseFieldsMixin, AsyncGenericViewSet)`. The list and the
 * detail read take `?fields=` and `?omit=`, answer 400 naming an unknown field, always send the key
 * and the validators' fields, and are documented as the partial object they may send; a SQL
 * repository's list selects only the columns asked for.
 */
export const SparseFieldsMixin = defineMixin<ActionViewClass<'sparseFields', object>, GenericBase>('SparseFieldsMixin', (Base) =>
  class SparseFieldsMixin extends Base {
    declare fieldSet: FieldSet | undefined

    static override assertRegistrable (): void {
      super.assertRegistrable()
      for (const action of this.standardActions()) {
        if (!READS.has(action.name)) continue
        // A list or detail read of an action view is the user's: its rows and the page it shapes are its own.
        if (action === STANDARD_ACTIONS[action.name as 'list' | 'retrieve']) {
          refuse(this, `its ${action.name} is an action you write (${action.name} of an action view, not of a generic one): use the generic views (AsyncGenericListAPIView, ...)`)
        }
        readsOf(this, action.name)
      }
      const taken = this.filter == null ? [] : Object.keys(this.filter.querySchema().properties).filter((name) => name === 'fields' || name === 'omit')
      if (taken.length > 0) refuse(this, `its filter has a parameter "${taken[0]}", a name of the sparse fieldsets' parameters; rename the filter's`)
    }

    // The list and the detail read take the parameters, and send the partial object.
    static override getActionRoute (action: StandardAction): ActionRoute {
      const route = super.getActionRoute(action)
      if (!READS.has(action.name)) return route
      const reads = readsOf(this, action.name)
      const query = route.options.schema?.querystring as TObject | undefined // a filter's query schema is an object
      const parameters = fieldsetParameters(reads.fieldsets)
      const querystring = query === undefined
        ? Type.Object(parameters)
        : { ...query, properties: { ...query.properties, ...parameters } }
      // The detail read's envelope, if any, is put around it when the route is collected.
      const item = sparseSchema(reads.item, reads.fieldsets.kept)
      const responseSchema = action.name === 'list' ? pageSchema(item, this.filter) : item
      return { ...route, options: withSchema(route.options, { querystring }), responseSchema }
    }

    // The parameters are read before the action (after validation: a value too long is a 400 whoever
    // sends it), and the objects sent are cut to them before they are serialized.
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      if (!route.standard || !READS.has(route.name)) return inherited
      const { fieldsets } = readsOf(this, route.name)
      const items = route.name === 'list' ? itemsIn(this, route.responseSchema) : undefined
      return extendContribution(inherited, {
        beforeAction: [(view, request) => {
          const query = request.query as { fields?: string, omit?: string } // as the route's schema validated it
          const set = fieldsets.read(query.fields, query.omit)
          if (set === undefined) return
          ;(view as unknown as SparseFieldsMembers).fieldSet = set // a view of this mixin's class
          rememberFieldSet(request, set)
        }],
        preSerialization: [picking(route.name === 'list' ? items : route.envelope, route.name === 'list')]
      })
    }
  }, GENERIC)

/** What a read of a view sends and who chooses among its fields. */
interface Reads { readonly item: TObject, readonly fieldsets: Fieldsets }

const READS_OF = new WeakMap<object, Map<string, Reads>>()

/** The object schema a read sends, and its fields with the ones always kept: the key and the validators. */
function readsOf (klass: SparseClass, action: string): Reads {
  let byAction = READS_OF.get(klass)
  if (byAction === undefined) READS_OF.set(klass, byAction = new Map())
  let reads = byAction.get(action)
  if (reads === undefined) {
    const item: TSchema | undefined = action === 'list' ? listItemOf(klass as never) : schemaStatic(klass as never, 'responseSchema') // a view class with the list statics
    if (item?.type !== 'object' || !isRecord(item.properties)) {
      refuse(klass, `its ${action} sends ${item === undefined ? 'no schema' : 'a schema that is not one object'}: sparse fieldsets choose among the properties of an object. ` +
        `Give the view an object ${action === 'list' ? 'listItemSchema or ' : ''}responseSchema, or leave SparseFieldsMixin out`)
    }
    const object = item as TObject // an object schema, just checked
    // The validators' fields of ConditionalMixin, when it is mixed in (read as the static it sets: generic views import no optional feature).
    const { versionField, lastModifiedField } = klass.conditional ?? {}
    const detail = isRecord(klass.detailParams) ? klass.detailParams.properties : undefined
    const params = isRecord(detail) ? Object.keys(detail) : []
    const kept = [...(keyFieldsOf(klass.repository) ?? ['id']), ...params, versionField, lastModifiedField].filter((name): name is string => name !== undefined)
    reads = { item: object, fieldsets: new Fieldsets(Object.keys(object.properties), kept) }
    byAction.set(action, reads)
  }
  return reads
}

/** Where a list's page holds its objects: the page itself (an array), or the member that is an array of them. */
function itemsIn (klass: SparseClass, page: TSchema | undefined): string | undefined {
  if (page?.type === 'array') return undefined
  const found = Object.entries((page as TObject).properties).find(([, member]) => member.type === 'array')
  if (found === undefined) refuse(klass, 'its list\'s page holds its objects in no member that is an array of them')
  return found[0]
}

/** Refuses a view whose sparse fieldsets would not hold (FV_ERR_SPARSE_FIELDS). */
function refuse (klass: { name: string }, why: string): never {
  throw new ConfigurationError('FV_ERR_SPARSE_FIELDS', `Cannot register ${klass.name}: ${why} (docs/sparse-fields.md)`)
}

/**
 * The `preSerialization` hook that cuts each object a read sends to the request's field set: the
 * object (in `member` of an envelope), or each of a list's (in `member` of its page). Whatever the
 * repository read, only the set is serialized.
 */
function picking (member: string | undefined, list: boolean): preSerializationHookHandler<unknown> {
  return (request, reply, payload, done) => {
    const set = fieldSetOf(request)
    if (set === undefined || reply.statusCode >= 300) {
      done(null, payload)
      return
    }
    const pick = (object: unknown): unknown => isRecord(object) ? pickFields(object, set.names) : object
    const holder = member === undefined ? undefined : payload as Record<string, unknown> // the page or envelope the route's schema says
    const sent = holder === undefined ? payload : holder[member as string]
    const cut = list ? (sent as unknown[]).map(pick) : pick(sent) // a list's page holds an array
    done(null, holder === undefined ? cut : { ...holder, [member as string]: cut })
  }
}

/** The members of `object` named in `names` that it has. */
function pickFields (object: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {}
  for (const name of names) {
    const value = object[name]
    if (value !== undefined) picked[name] = value
  }
  return picked
}
