// Expanded relations (views layer): the objects of another view embedded in each object a read sends (`?expand=`), one read per relation per page.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import { ConfigurationError } from '../../core/configuration-error.js'
import { isRecord } from '../../core/record.js'
import { schemaStatic } from '../../core/typebox-lines.js'
import { allOf, compileAccess, Denied, keepRule, type CompiledAccess, type ObjectRule } from '../../access/access-rule.js'
import { refusal } from '../../access/authenticator.js'
import { APIError, Forbidden } from '../../http/errors.js'
import { judges } from './object-permissions.js'
import { registeredPermissions } from '../../access/registered-permissions.js'
import type { Permission } from '../../access/permission.js'
import { Fieldsets, sparseSchema, type FieldSet } from '../../query/field-set.js'
import { fieldNamesOf, keyFieldsOf, listsPerGroup, selectable, type Criteria, type ListQuery } from '../../stores/repository.js'
import { listItemOf } from '../actions/list-create.js'
import type { GenericView } from './generic-view.js'

/**
 * One relation a view's reads may embed (docs/expand.md): the generic view whose objects are
 * embedded, how an object finds them, and for a to-many relation how many at most.
 * `static expand = { book: { view: Books, on: { id: 'book_id' } }, loans: { view: BookLoans, on: { book_id: 'id' }, many: 20 } }`.
 */
export interface Expansion {
  /** A generic view registered in the same application: its repository reads the objects, its permissions and scope judge them, its schema shapes them. */
  readonly view: abstract new (...args: never[]) => object
  /** `{ <field of the related objects>: <field of this view's objects> }`, one pair: `{ id: 'book_id' }` (a loan's book), `{ book_id: 'id' }` (a book's loans). */
  readonly on: Readonly<Record<string, string>>
  /** A to-many relation: at most this many objects in each (the first by the related key); unset, a to-one relation, the related field its key. */
  readonly many?: number | undefined
}

/** The most objects a to-many relation embeds in each object: a page of 100 objects then reads at most 10,000 related rows. */
export const MAX_MANY = 100

/** An expansion as registration resolved it. */
export interface Relation {
  readonly name: string
  /** The related view, constructed per request with it. */
  readonly view: new (request: FastifyRequest, reply: FastifyReply) => GenericView
  /** The field of the related objects, and the field of this view's objects it equals. */
  readonly related: string
  readonly own: string
  readonly many: number | undefined
  /** The related view's action whose permissions and scope the read passes: its detail read for one object, its list for many. */
  readonly action: 'retrieve' | 'list'
  /** The related objects' schema, and the fields a request may choose among them. */
  readonly item: TObject
  readonly fieldsets: Fieldsets
  /** The related repository's key: a to-many read's order. */
  readonly key: readonly string[]
}

/** A generic view class as expansions read it. */
interface RelatedClass {
  readonly name: string
  readonly repository?: unknown
  readonly parent?: unknown
  readonly responseSchema?: unknown
  readonly listItemSchema?: unknown
  readonly prototype: object
}

/**
 * The fields a view's reads always send, whatever a request names: its repository's key (`id` when
 * it does not say), its detail route's parameters, and the validators of `ConditionalMixin` (read as
 * the static it sets: generic views import no optional feature).
 */
export function keptOf (klass: object): string[] {
  // A view class: its statics, where it has them.
  const statics = klass as { repository?: unknown, detailParams?: unknown, conditional?: unknown }
  const { repository, detailParams, conditional } = statics
  const detail = isRecord(detailParams) ? detailParams.properties : undefined
  const validators = isRecord(conditional) ? [conditional.versionField, conditional.lastModifiedField] : []
  return [...keyFieldsOf(repository) ?? ['id'], ...isRecord(detail) ? Object.keys(detail) : [], ...validators]
    .filter((name): name is string => typeof name === 'string')
}

/** Refuses an expansion that would not hold (FV_ERR_EXPAND). */
function refuse (klass: { name: string }, why: string): never {
  throw new ConfigurationError('FV_ERR_EXPAND', `Cannot register ${klass.name}: ${why} (docs/expand.md)`)
}

/**
 * The relations of a view's `expand`, checked: each names a generic view that is not nested, one
 * pair of fields its repository and this view's have (a to-one relation's related field its key),
 * a bound of a to-many one from 1 to `MAX_MANY` over a repository that reads each group at once.
 * `fields`: the fields of the view's own objects; `stored`: the fields of its repository, if fixed.
 */
export function relationsOf (
  klass: { name: string }, expand: unknown, fields: readonly string[], stored: readonly string[] | undefined
): Map<string, Relation> {
  const relations = new Map<string, Relation>()
  if (expand === undefined) return relations
  if (!isRecord(expand)) refuse(klass, 'expand must map each relation\'s name to { view, on, many? }')
  for (const [name, declared] of Object.entries(expand)) {
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) refuse(klass, `expand names a relation ${JSON.stringify(name)}: a relation's name is a plain identifier`)
    if (fields.includes(name)) refuse(klass, `expand.${name} has the name of a field of its objects; name the relation otherwise`)
    relations.set(name, relationOf(klass, name, declared, stored))
  }
  return relations
}

function relationOf (
  klass: { name: string }, name: string, declared: unknown, stored: readonly string[] | undefined
): Relation {
  const where = `expand.${name}`
  const { view, on, many } = isRecord(declared) ? declared : refuse(klass, `${where} must be { view, on, many? }`)
  const Related = view as RelatedClass
  if (typeof view !== 'function' || typeof Reflect.get(Related.prototype, 'getScopeKwargs') !== 'function') {
    refuse(klass, `${where}.view must be a generic view (AsyncGenericRetrieveAPIView, a generic viewset, ...): its repository reads what is embedded`)
  }
  if (Related.parent !== undefined) refuse(klass, `${where}.view ${Related.name} is nested under a parent, which a read of another view cannot name; embed the objects of a view that is not nested`)
  const pairs = isRecord(on) ? Object.entries(on) : []
  if (pairs.length !== 1 || typeof pairs[0][1] !== 'string') refuse(klass, `${where}.on must be one pair { <field of ${Related.name}'s objects>: <field of this view's objects> }`)
  const [related, own] = pairs[0] as [string, string]
  if (stored !== undefined && !stored.includes(own)) refuse(klass, `${where}.on names "${own}", which is no field of its repository (its fields: ${stored.join(', ')})`)
  const relatedStored = fieldNamesOf(Related.repository)
  if (relatedStored !== undefined && !relatedStored.includes(related)) {
    refuse(klass, `${where}.on names "${related}", which is no field of ${Related.name}'s repository (its fields: ${relatedStored.join(', ')})`)
  }
  const key = keyFieldsOf(Related.repository) ?? ['id']
  if (many === undefined && (key.length !== 1 || key[0] !== related)) {
    refuse(klass, `${where} is a relation to one object, found by "${related}", which is not the key of ${Related.name}'s repository (${key.join(', ')}): ` +
      'on names the key for a relation to one, or give many: n for a relation to several')
  }
  if (many !== undefined && (typeof many !== 'number' || !Number.isInteger(many) || many < 1 || many > MAX_MANY)) {
    refuse(klass, `${where}.many must be an integer from 1 to ${MAX_MANY}, the most objects embedded in each; got ${JSON.stringify(many)}`)
  }
  if (many !== undefined && Related.repository !== undefined && !listsPerGroup(Related.repository)) {
    refuse(klass, `${where} embeds several objects of ${Related.name}, whose repository does not declare listsPerGroup: true, so they could not be read in one statement (docs/repositories.md, "Grouped reads")`)
  }
  const action = many === undefined ? 'retrieve' : 'list'
  const item = action === 'list' ? listItemOf(Related as never) : schemaStatic(Related as never, 'responseSchema') // a view class with the list statics
  if (item?.type !== 'object' || !isRecord(item.properties)) refuse(klass, `${where}: ${Related.name}'s ${action} sends no object schema to embed`)
  const object = item as TObject // an object schema, just checked
  return {
    name,
    view: view as Relation['view'], // a generic view class, constructed with a request and a reply as every view is
    related,
    own,
    many,
    action,
    item: object,
    fieldsets: new Fieldsets(Object.keys(object.properties), [...keptOf(Related), related]),
    key
  }
}

/** The member a relation adds to the objects that embed it: its object or `null`, or a list of them; present only when expanded. */
export function relationMember (relation: Relation): TSchema {
  const item = sparseSchema(relation.item, relation.fieldsets.kept)
  const description = `Embedded with expand=${relation.name}: ${relation.many === undefined ? 'the related object, or null when there is none the client may see' : `at most ${relation.many} related objects`}.`
  return Type.Optional(relation.many === undefined
    ? Type.Union([item, Type.Null()], { description })
    : Type.Array(item, { maxItems: relation.many, description }))
}

/**
 * Checks, once the application is ready, that every relation's view serves its action in the
 * application: its permissions there are what an expansion must pass. An expansion of a view
 * that is registered nowhere would embed objects no route lets anyone read.
 */
export function assertServed (
  app: FastifyInstance, klass: { name: string }, relations: ReadonlyMap<string, Relation>
): void {
  for (const relation of relations.values()) {
    if (registeredPermissions(app, relation.view, relation.action) === undefined) {
      refuse(klass, `expand.${relation.name} embeds the objects of ${relation.view.name}, which serves no ${relation.action} in this application; ` +
        'register it (its permissions judge what the expansion shows)')
    }
  }
}

/** The related view's permissions as one judge, compiled once per server. */
const COMPILED = new WeakMap<object, WeakMap<Relation, CompiledAccess | null>>()

function accessOf (request: FastifyRequest, relation: Relation): CompiledAccess | undefined {
  let byRelation = COMPILED.get(request.server.server)
  if (byRelation === undefined) COMPILED.set(request.server.server, byRelation = new WeakMap())
  let compiled = byRelation.get(relation)
  if (compiled === undefined) {
    // Recorded: the application checked, when it became ready, that the view serves the action (assertServed).
    const registered = registeredPermissions(request.server, relation.view, relation.action)
    const permissions = registered as ReadonlyArray<Permission<never>>
    const node = allOf(permissions)
    compiled = node === undefined ? null : compileAccess(node, 'GET', permissions.map(String).join(', '))
    byRelation.set(relation, compiled)
  }
  return compiled ?? undefined
}

/**
 * Embeds each relation a request expands in the objects sent (`out`, cut copies of `objects`):
 * one read of the related view's repository per relation, within that view's scope and its
 * permissions as the request is judged by them (a 403, or a 401 for an anonymous request, when
 * they refuse it; objects their rule refuses are left out), each related object cut to its set.
 */
export async function embed (
  request: FastifyRequest, reply: FastifyReply, objects: ReadonlyArray<Record<string, unknown>>,
  out: Array<Record<string, unknown>>, set: FieldSet, relations: ReadonlyMap<string, Relation>
): Promise<void> {
  for (const [name, nested] of set.expand) {
    const relation = relations.get(name) as Relation // the set's relations are the view's, as Fieldsets read them
    const rows = await relatedRows(request, reply, relation, objects, nested)
    const groups = new Map<unknown, Array<Record<string, unknown>>>()
    for (const row of rows) {
      const value = row[relation.related]
      const group = groups.get(value)
      if (group === undefined) groups.set(value, [row])
      else group.push(row)
    }
    const cut = (row: Record<string, unknown>): Record<string, unknown> =>
      nested === undefined ? row : pickFields(row, nested.names)
    for (let i = 0; i < objects.length; i++) {
      const found = groups.get(objects[i][relation.own]) ?? []
      out[i][name] = relation.many === undefined ? (found.length === 0 ? null : cut(found[0])) : found.map(cut)
    }
  }
}

/** How many values one read of related rows names at most: a page larger than this reads its relation in several. */
const VALUES_PER_READ = 1000

/**
 * The related objects of `objects`, read as the related view reads them, and judged by its
 * permissions: a rule's criteria narrow the read, its object test and the view's own
 * `checkObjectPermissions` (on its detail read) leave out what they refuse, each judging the whole
 * row, so such a read selects every field.
 */
async function relatedRows (
  request: FastifyRequest, reply: FastifyReply, relation: Relation,
  objects: ReadonlyArray<Record<string, unknown>>, nested: FieldSet | undefined
): Promise<Array<Record<string, unknown>>> {
  // The related view reads with a request of its own, derived from this one: the same principal,
  // headers and query, judged by the related view's permissions rather than by this route's.
  const derived = Object.create(request) as FastifyRequest
  let rule: ObjectRule | undefined
  const compiled = accessOf(request, relation)
  if (compiled !== undefined) {
    const verdict = await compiled.judge(request.principal ?? null, request)
    if (verdict instanceof Denied) {
      // A 401 says that authenticating may help (RFC 9110 §15.5.2); where no principal passes, it would not.
      const message = verdict.message ?? `You may not read ${relation.name}.`
      throw compiled.signedIn === 'deny' ? new Forbidden(message) : refusal(request, message)
    }
    if (verdict !== true) rule = verdict
  }
  keepRule(derived, rule)
  const owned = objects.map((object) => object[relation.own])
  const values: unknown[] = [...new Set(owned.filter((value) => value !== null && value !== undefined))]
  if (values.length === 0) return []
  const Related = relation.view
  const view = new Related(derived, reply)
  const checks = judges(Related, relation.action)
  const scope: Criteria = view.getScopeKwargs(relation.action)
  const judged = (rule !== undefined && !rule.exact) || checks
  const reads = nested?.reads
  const asked = reads === undefined || judged ? undefined : [...new Set([...reads, relation.related])]
  const narrowed = asked === undefined ? undefined : selectable(asked, view.repository)
  const query: ListQuery = {
    orderBy: relation.key.map((field) => ({ field, descending: false })),
    ...narrowed === undefined ? {} : { fields: narrowed },
    ...relation.many === undefined ? {} : { perGroup: { field: relation.related, limit: relation.many } }
  }
  const options = view.getRepositoryOptions(relation.action)
  const rows: Array<Record<string, unknown>> = []
  // The related field among the values: a criterion of its own beside the scope's, which may name the field too.
  const among = `${relation.related}__in`
  const scoped = scope[among]
  const wanted = Array.isArray(scoped) ? values.filter((value) => scoped.includes(value)) : values
  for (let at = 0; at < wanted.length; at += VALUES_PER_READ) {
    const criteria: Criteria = { ...scope, [among]: wanted.slice(at, at + VALUES_PER_READ) }
    // A generic view's repository, of either family: its rows are objects.
    const listed: unknown = await view.repository.list(criteria, query, options)
    rows.push(...listed as Array<Record<string, unknown>>)
  }
  return judged ? rows.filter((row) => visible(view, rule, checks, row, relation.action)) : rows
}

/** Whether the related view would let the client read `row`: its rule's object test, then its own check of objects. */
function visible (
  view: GenericView, rule: ObjectRule | undefined, checks: boolean, row: Record<string, unknown>, action: string
): boolean {
  if (rule !== undefined && !rule.exact && !rule.test(row)) return false
  if (!checks) return true
  try {
    view.checkObjectPermissions(row, action)
    return true
  } catch (error) {
    // A refusal (a 403, a 404) hides the object; anything else is a fault of the check.
    if (error instanceof APIError && error.status < 500) return false
    throw error
  }
}

/** The members of `object` named in `names` that it has. */
export function pickFields (object: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  const picked: Record<string, unknown> = {}
  for (const name of names) {
    const value = object[name]
    if (value !== undefined) picked[name] = value
  }
  return picked
}
