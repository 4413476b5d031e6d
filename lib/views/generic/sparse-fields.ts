// Sparse fieldsets (views layer): `SparseFieldsMixin`, `?fields=`, `?omit=` and `?expand=` on the list and the detail read of a generic view.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, preSerializationHookHandler } from 'fastify'
import { ConfigurationError } from '../../core/configuration-error.js'
import { defineMixin } from '../mixins.js'
import { schemaStatic } from '../../core/typebox-lines.js'
import { isRecord } from '../../core/record.js'
import { fieldSetOf, Fieldsets, fieldsetParameters, rememberFieldSet, sparseSchema, type FieldSet, type RelatedFields } from '../../query/field-set.js'
import { fieldNamesOf } from '../../stores/repository.js'
import { listItemOf } from '../actions/list-create.js'
import { STANDARD_ACTIONS, withSchema, type ActionViewClass } from '../actions/standard.js'
import { extendContribution, type ActionRoute, type RouteContribution, type RouteDefinition, type StandardAction } from '../view.js'
import { GENERIC, type GenericBase } from './generic-view.js'
import { pageSchema } from './generic-list.js'
import { assertServed, embed, keptOf, pickFields, relationMember, relationsOf, type Expansion, type Relation } from './expand.js'

/** The instance members `SparseFieldsMixin` adds (docs/sparse-fields.md). */
export interface SparseFieldsMembers {
  /** The fields and relations this request's `?fields=`, `?omit=` and `?expand=` keep, once read; `undefined` for the whole object. */
  fieldSet: FieldSet | undefined
}

/** Statics of `SparseFieldsMixin`. */
export interface SparseFieldsStatics {
  /** The relations `?expand=` may embed in each object, by name (docs/expand.md); none by default. */
  expand: Readonly<Record<string, Expansion>> | undefined
}

declare module '../mixins.js' {
  // An augmentation repeats the interface's type parameters, used or not.
  // eslint-disable-next-line @typescript-eslint/no-unused-vars
  interface ActionRegistry<M> { sparseFields: SparseFieldsMembers }
}

/** The actions that take the parameters. */
const READS: ReadonlySet<string> = new Set(['list', 'retrieve'])

/** The query parameters the mixin adds: a filter may have none of them. */
const PARAMETERS = ['fields', 'omit', 'expand']

/** A view class with sparse fieldsets, as the mixin reads it. */
type SparseClass = GenericBase & SparseFieldsStatics & { listItemSchema?: unknown, responseSchema?: unknown }

/**
 * Sparse fieldsets and expanded relations for generic views (docs/sparse-fields.md,
 * docs/expand.md): mix it in before the generic actions (after `ConditionalMixin`),
 * `mix(SparseFieldsMixin, AsyncGenericViewSet)`. The list and the detail read take `?fields=` and
 * `?omit=` (and `?expand=` for the relations of `static expand`), answer 400 naming an unknown
 * name, always send the key and the validators' fields, and are documented as the partial object
 * they may send; a SQL repository's list selects only the columns asked for.
 */
export const SparseFieldsMixin = defineMixin<ActionViewClass<'sparseFields', SparseFieldsStatics>, GenericBase>('SparseFieldsMixin', (Base) =>
  class SparseFieldsMixin extends Base {
    static expand: Readonly<Record<string, Expansion>> | undefined = undefined
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
      const query = this.filter == null ? [] : Object.keys(this.filter.querySchema().properties)
      const taken = query.filter((name) => PARAMETERS.includes(name))
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
      const responseSchema = action.name === 'list' ? pageSchema(reads.sent, this.filter) : reads.sent
      return { ...route, options: withSchema(route.options, { querystring }), responseSchema }
    }

    // The parameters are read before the action (after validation: a value too long is a 400 whoever
    // sends it), and the objects sent are cut to them, and given their relations, before they are serialized.
    static override contribute (route: RouteDefinition, method: string): RouteContribution {
      const inherited = super.contribute(route, method)
      if (!route.standard || !READS.has(route.name)) return inherited
      const { item, fieldsets, relations } = readsOf(this, route.name)
      if (route.app !== undefined && relations.size > 0) checkWhenReady(route.app, this, relations)
      const list = route.name === 'list'
      return extendContribution(inherited, {
        beforeAction: [(view, request) => {
          const query = request.query as { fields?: string, omit?: string, expand?: string } // as the route's schema validated it
          const set = fieldsets.read(query.fields, query.omit, query.expand)
          if (set === undefined) return
          ;(view as unknown as SparseFieldsMembers).fieldSet = set // a view of this mixin's class
          rememberFieldSet(request, set)
        }],
        preSerialization: [
          shaping(list ? itemsIn(this, route.responseSchema) : route.envelope, list, relations, aliasesOf(item))
        ]
      })
    }
  }, GENERIC)

/** What a read of a view sends and who chooses among its fields. */
interface Reads {
  /** The object schema the read sends in full. */
  readonly item: TObject
  /** The schema it is documented and serialized with: the partial object, with the relations' members. */
  readonly sent: TObject
  readonly fieldsets: Fieldsets
  readonly relations: ReadonlyMap<string, Relation>
}

const READS_OF = new WeakMap<object, Map<string, Reads>>()

/** The object schema a read sends, its fields with the ones always kept (the key and the validators), and its relations. */
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
    const kept = keptOf(klass)
    const fields = Object.keys(object.properties)
    const relations = relationsOf(klass, klass.expand, fields, fieldNamesOf(klass.repository))
    const related = new Map<string, RelatedFields>()
    for (const [name, relation] of relations) related.set(name, { fieldsets: relation.fieldsets, by: relation.own })
    const fieldsets = new Fieldsets(fields, kept, related)
    const members = Object.fromEntries([...relations].map(([name, relation]) => [name, relationMember(relation)]))
    reads = { item: object, sent: sparseSchema(object, fieldsets.kept, members), fieldsets, relations }
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

/** The applications whose readiness checks a view's relations already: one check per view and application. */
const CHECKED = new WeakMap<object, WeakSet<object>>()

/** Checks the view's relations once `app` is ready, when every view of it is registered (`assertServed`). */
function checkWhenReady (app: FastifyInstance, klass: SparseClass, relations: ReadonlyMap<string, Relation>): void {
  let views = CHECKED.get(app)
  if (views === undefined) CHECKED.set(app, views = new WeakSet())
  if (views.has(klass)) return
  views.add(klass)
  app.addHook('onReady', function checkRelations (done) {
    try {
      assertServed(app, klass, relations)
      done()
    } catch (error) {
      done(error as Error)
    }
  })
}

/** The aliases of an item's members (a member's wire name when it declares `alias`), by field name. */
function aliasesOf (item: TObject): ReadonlyMap<string, string> {
  return new Map(Object.entries(item.properties).flatMap(([name, member]) =>
    typeof member.alias === 'string' ? [[name, member.alias] as const] : []))
}

/**
 * The `preSerialization` hook that cuts each object a read sends to the request's field set and
 * embeds the relations it expands: the object (in `member` of an envelope), or each of a list's
 * (in `member` of its page). Whatever the repository read, only the set is serialized.
 */
function shaping (
  member: string | undefined,
  list: boolean,
  relations: ReadonlyMap<string, Relation>,
  aliases: ReadonlyMap<string, string>
): preSerializationHookHandler<unknown> {
  return (request, reply, payload, done) => {
    const set = fieldSetOf(request)
    if (set === undefined || reply.statusCode >= 300) {
      done(null, payload)
      return
    }
    const holder = member === undefined ? undefined : payload as Record<string, unknown> // the page or envelope the route's schema says
    const sent = holder === undefined ? payload : holder[member as string]
    // A list's page holds an array of objects; a successful detail read, one (a missing one is a 404).
    const objects = list ? sent as Array<Record<string, unknown>> : [sent as Record<string, unknown>]
    // The objects have their wire names by now, an aliased member its alias: it is kept by either name.
    const names = aliases.size === 0 ? set.names : set.names.flatMap((name) => [name, aliases.get(name) ?? name])
    const cut = objects.map((object) => pickFields(object, names))
    const answer = (): unknown => {
      const shaped = list ? cut : cut[0]
      return holder === undefined ? shaped : { ...holder, [member as string]: shaped }
    }
    if (set.expand.size === 0) {
      done(null, answer())
      return
    }
    embed(request, reply, objects, cut, set, relations).then(
      () => { done(null, answer()) },
      (error: Error) => { done(error) }
    )
  }
}
