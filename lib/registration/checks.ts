// Configuration checks (registration layer): the mistakes a view class can hold, refused when it is registered, each naming the view and the fix.
import type { FastifyInstance } from 'fastify'
import { View, type ViewClass, type CollectedRoute } from '../views/view.js'
import { APIView } from '../views/api-view.js'
import { MIXIN } from '../views/mixins.js'
import { getRouteMeta } from '../routes/route-meta.js'
import { ConfigurationError } from '../core/configuration-error.js'
import { columnFactsOf, fieldNamesOf, filledOnCreateOf, readOnlyFieldsOf, type ColumnFacts } from '../stores/repository.js'
import { schemaStatic } from '../core/typebox-lines.js'
import { addsNoKwargs, mapsItself, scopeFieldsOf } from '../views/generic/generic-view.js'
import { misspeltMember, misspeltSentence } from '../core/names.js'
import { assertStaticGroups } from '../core/static-groups.js'
import { acceptedTypes, fits, overlap } from '../schema/json-types.js'
import { fieldComparedBy, type FilterClass } from '../query/filters.js'
import { isArrayNode, namedOf, requiredOf, type SchemaNode } from '../core/schema-node.js'

/** A view class as the checks read it: the statics of generic views, which other views do not have. */
type CheckedView = ViewClass & {
  repository?: unknown,
  filter?: FilterClass | null,
  actionDependencies?: Record<string, unknown>
  actionPermissions?: Record<string, unknown>
  actionThrottles?: Record<string, unknown>
}

/** The response schema of a view, as a schema node. */
const responseOf = (klass: ViewClass): SchemaNode | undefined => schemaStatic(klass, 'responseSchema')

// Mistakes of configuration refused when a view is registered, each naming the view.

/**
 * A view over a repository sends what the store returns: without a response schema the
 * serializer would send every field of the row, so such a view must say which fields
 * clients may see. Routes that declare their own schema, and empty answers, need none.
 */
export function assertStoredObjectsSchema (klass: ViewClass, routes: CollectedRoute[]): void {
  if (!('repository' in klass)) return
  const bare = routes.filter(
    (r) => r.standard && !r.emptyBody && r.status !== 204 && r.responseSchema === undefined
  ).map((r) => r.name)
  if (bare.length === 0) return
  throw new ConfigurationError('FV_ERR_NO_RESPONSE_SCHEMA', `Cannot register ${klass.name}: ${bare.join(', ')} send${bare.length === 1 ? 's' : ''} stored objects but ${bare.length === 1 ? 'has' : 'have'} no response schema. ` +
    'Set static responseSchema to the fields clients may see (to send every stored field deliberately: Type.Object({}, { additionalProperties: true })).')
}

/** The static that turns an action's body off, for the actions that have one. */
const BODY_SWITCH: Record<string, string> = { create: 'returnOnCreate = false', update: 'returnOnUpdate = false', partialUpdate: 'returnOnUpdate = false', bulkCreate: 'returnOnCreate = false', updateMany: 'returnOnUpdate = false' }

/**
 * 204 No Content has no content (RFC 9110 §15.3.5): a route that answers it but declares or
 * sends a body would have that body dropped on the way out, silently. Refused, with the fix.
 */
export function assertNoContentHasNoBody (klass: ViewClass, routes: CollectedRoute[]): void {
  for (const route of routes) {
    if (route.status !== 204) continue
    if (route.standard && !route.emptyBody && route.responseSchema !== undefined) {
      const off = BODY_SWITCH[route.name]
      throw new ConfigurationError('FV_ERR_NO_CONTENT_BODY', `Cannot register ${klass.name}: ${route.name} answers 204 No Content, which has no body, but it would send ` +
        `one (its responseSchema). ${off === undefined ? 'Leave its statusCode as it was' : `Set ${off} to answer without one, or answer with another status`}`)
    }
    if (!route.standard && route.options.responseSchema !== undefined) {
      throw new ConfigurationError('FV_ERR_NO_CONTENT_BODY', `Cannot register ${klass.name}: ${klass.name}.${route.name} declares a responseSchema but answers 204 No Content, ` +
        'which has no body: drop the responseSchema, or answer 200')
    }
  }
}

/** Whether a route writes its body to the repository as it is: the library's action says so, and the view does not say it maps it. */
const writesBodyAsIs = (klass: CheckedView, route: CollectedRoute): boolean =>
  route.store?.writesBody === true && !mapsItself(klass, route.name)

/** Whether a route sends the stored rows as they are: the library's action says so, and the view does not say it maps them. */
const sendsStoredRows = (klass: CheckedView, route: CollectedRoute): boolean =>
  route.store?.sendsRows === true && !mapsItself(klass, route.name)

/** The members of a body schema: an object's properties, or those of an array's items (a bulk body). */
function bodyMembers (body: SchemaNode): string[] {
  const node = isArrayNode(body) ? body.items : body
  return Object.keys(namedOf(node.properties))
}

/**
 * The library's write actions hand their body to the repository as it is: over a repository with
 * fixed fields (the columns of a SQL table), a body member it has no field for would fail on the
 * first request (`no column "isbn"`). Refused here, naming the action, the member and the fields.
 * An action of the user's own may map its body (a `password` into a `password_hash`): not checked.
 */
export function assertBodiesFitRepository (klass: CheckedView, routes: CollectedRoute[]): void {
  const repository = klass.repository
  const fields = fieldNamesOf(repository)
  if (fields === undefined) return
  const readOnly = readOnlyFieldsOf(repository) ?? []
  const actions: string[] = []
  const unknown = new Set<string>()
  /** Read-only members, and the actions whose bodies have them. */
  const computed = new Map<string, string[]>()
  for (const route of routes) {
    const body = route.options.schema?.body
    if (body === undefined || !writesBodyAsIs(klass, route)) continue
    const members = bodyMembers(body)
    // A field the repository computes (a count, a joined name) is read, never written: the write would fail on the first request.
    for (const member of members.filter((m) => readOnly.includes(m))) {
      computed.set(
        member,
        [...computed.get(member) ?? [], route.name]
      )
    }
    const foreign = members.filter((member) => !fields.includes(member))
    if (foreign.length === 0) continue
    actions.push(route.name)
    for (const member of foreign) unknown.add(member)
  }
  if (computed.size > 0) {
    const names = [...new Set([...computed.values()].flat())].sort()
    const listed = [...computed.keys()].map((m) => JSON.stringify(m)).join(', ')
    const them = computed.size === 1 ? 'it' : 'them'
    throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${klass.name}: the body of ${names.join(', ')} has ${listed}, ` +
      `which its repository computes: read-only, never written. Leave ${them} out of the body schema (Type.Omit(Schema, [${listed}])), ` +
      `or, if ${names.length === 1 ? names[0] : 'those actions'} (or a write seam: performCreate, performUpdate) maps the body to the table's columns, say so: ` +
      `static override mappingActions = [${names.map((name) => `'${name}'`).join(', ')}]`)
  }
  if (actions.length === 0) return
  const members = [...unknown]
  throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${klass.name}: the body of ${actions.sort().join(', ')} has ${members.map((m) => JSON.stringify(m)).join(', ')}, ` +
    `which its repository does not have (its fields: ${fields.join(', ')}). Remove ${members.length === 1 ? 'it' : 'them'} from the body schema, add the ` +
    `column to the repository's columns, or, if ${actions.length === 1 ? actions[0] : 'those actions'} (or a write seam: performCreate, performUpdate) maps the body, ` +
    `say so: static override mappingActions = [${actions.map((name) => `'${name}'`).join(', ')}]`)
}

const CREATES = new Set(['create', 'bulkCreate'])

/**
 * Over a store that keeps exactly what a create gives it (a `MemoryRepository`: the body, and its
 * key), a member the response schema requires and the body may leave out would be stored missing,
 * and every answer sending that row would fail: the create's own (a 500 after the write) and every
 * read after it. Refused when the library's create writes the body as it is and `getKwargs` adds
 * nothing; a create of your own, or kwargs that fill the member, are not checked.
 */
export function assertCreatesFitResponse (klass: CheckedView, routes: CollectedRoute[]): void {
  const filled = filledOnCreateOf(klass.repository)
  const required = requiredOf(responseOf(klass))
  if (filled === undefined || required.length === 0 || !addsNoKwargs(klass)) return
  for (const route of routes) {
    const body = route.options.schema?.body
    const stored = writesBodyAsIs(klass, route) && sendsStoredRows(klass, route)
    if (!CREATES.has(route.name) || body === undefined || !stored) continue
    const item = isArrayNode(body) ? body.items : body
    const given = new Set([...requiredOf(item), ...filled, ...scopeFieldsOf(klass)])
    const missing = required.filter((name) => !given.has(name))
    if (missing.length === 0) continue
    const names = missing.map((name) => JSON.stringify(name)).join(', ')
    const them = missing.length === 1 ? 'it' : 'them'
    throw new ConfigurationError('FV_ERR_SCHEMA_COLUMNS', `Cannot register ${klass.name}: its responseSchema requires ${names}, which the body of ${route.name} ` +
      `may leave out, and its repository stores only what the body gives (and ${filled.join(', ')}): the row would be stored without ${them}, ` +
      `and every answer sending it would fail. Require ${names} in the body schema, make ${them} optional in responseSchema, ` +
      `have the store fill ${them} (MemoryRepository's touchField for a time), give ${them} in getKwargs, or, if ${route.name} gives ${them} (a create of ` +
      `its own, a performCreate or performBulkCreate that maps the values), say so: static override mappingActions = ['${route.name}']`)
  }
}

const TYPE_OF: Record<string, string> = {
  integer: 'Type.Integer()', number: 'Type.Number()', string: 'Type.String()', boolean: 'Type.Boolean()', array: 'Type.Array(...)', object: 'Type.Object(...)'
}

/**
 * A filter's parameter is matched with stored values as the query string validated it:
 * `?price=30` under `Type.String()` is the string '30', which equals no number a store holds, so
 * every list is empty without a word; `q` looks for a substring of text, which a number never
 * holds. Refused when the view knows what the field holds: from its table (the SQL column
 * facts) or else its response schema.
 */
export function assertFilterFitsFields (klass: CheckedView): void {
  const { filter, repository } = klass
  if (filter == null) return
  const facts = columnFactsOf(repository)
  const properties = responseOf(klass)?.properties
  const held = (field: string): Set<string> | undefined => {
    const kind = facts?.get(field)?.kind
    if (kind !== undefined) return new Set([kind])
    const property = properties?.[field]
    return property === undefined ? undefined : acceptedTypes(property)
  }
  const shown = (types: Set<string>): string => [...types].filter((type) => type !== 'null').join(' or ')
  const problems: string[] = []
  for (const where of ['fields', 'operatorFields'] as const) {
    for (const [name, schema] of Object.entries(filter[where])) {
      const field = fieldComparedBy(filter, name)
      // A field that holds only null (or anything) has no value to compare.
      const stored = [...held(field) ?? []].filter((type) => type !== 'null')
      const wanted = acceptedTypes(schema)
      if (stored.length === 0 || wanted === undefined || overlap(wanted, new Set(stored))) continue
      const compares = field === name ? name : `${field} (which ${name} compares)`
      problems.push(`${filter.name}.${where}.${name} takes ${shown(wanted)}, but ${compares} holds ${stored.join(' or ')} values, so no value a client sends would ` +
        `match a row: declare it as ${TYPE_OF[stored[0]]}`)
    }
  }
  for (const name of filter.searchFields) {
    const stored = held(name)
    if (stored === undefined || stored.has('string')) continue
    problems.push(`${filter.name}.searchFields names ${name}, which holds ${shown(stored)} values, and q looks for text, so it would never match there: ` +
      'drop it from searchFields, and filter it through fields or operators')
  }
  if (problems.length === 0) return
  throw new ConfigurationError('FV_ERR_FILTER_FIELD', `Cannot register ${klass.name}: ${problems.join('; ')}`)
}

/**
 * The library's actions send the rows their repository returns as they are, so the response
 * schema must describe every row the table can hold: a column that may be NULL where the schema
 * wants a value, or a column of numbers where it wants strings, would fail every answer that sends
 * such a row (a 500), though the store says so in advance (`columnFacts` of the SQL repositories).
 */
export function assertResponseFitsColumns (klass: CheckedView, routes: CollectedRoute[]): void {
  const facts = columnFactsOf(klass.repository)
  if (facts === undefined) return
  const listItem = schemaStatic(klass, 'listItemSchema')
  // A list of summaries sends its rows through listItemSchema; the other actions through responseSchema.
  const sentBy = (route: CollectedRoute): string =>
    route.name === 'list' && listItem !== undefined ? 'listItemSchema' : 'responseSchema'
  for (const key of ['responseSchema', 'listItemSchema'] as const) {
    const properties = schemaStatic(klass, key)?.properties
    const senders = routes.filter((route) => sentBy(route) === key && sendsStoredRows(klass, route))
      .map((route) => route.name)
    if (properties !== undefined && senders.length > 0) assertFitsColumns(klass, key, properties, facts, senders)
  }
}

function assertFitsColumns (klass: CheckedView, key: string, properties: Record<string, SchemaNode>,
  facts: ReadonlyMap<string, ColumnFacts>, senders: string[]): void {
  const problems: string[] = []
  for (const [name, property] of Object.entries(properties)) {
    const column = facts.get(name)
    const accepted = column === undefined ? undefined : acceptedTypes(property)
    if (column === undefined || accepted === undefined) continue
    if (column.nullable && !accepted.has('null')) problems.push(`"${name}" may be NULL in the table, and the schema does not accept null`)
    if (column.kind !== undefined && !fits(column.kind, accepted)) problems.push(`"${name}" holds ${column.kind} values, and the schema wants ${[...accepted].join(' or ')}`)
  }
  if (problems.length === 0) return
  throw new ConfigurationError('FV_ERR_SCHEMA_COLUMNS', `Cannot register ${klass.name}: its ${key} does not describe every row of its table: ${problems.join('; ')}. ` +
    `A row like that would fail every answer of ${senders.join(', ')}, which send the rows as they are. Make the schema accept what the column holds ` +
    '(Type.Union([Type.String(), Type.Null()]) for a column that may be NULL), or change the column (NOT NULL, its type); if those actions of yours map ' +
    `the rows, say so: static override mappingActions = [${senders.map((name) => `'${name}'`).join(', ')}]`)
}

/** A misspelt `actionDependencies`, `actionPermissions` or `actionThrottles` key would leave the action it meant unguarded: refuse it. */
export function assertDependencyKeys (statics: CheckedView, routes: CollectedRoute[]): void {
  const known = new Set(routes.map((r) => r.name))
  for (const name of ['actionDependencies', 'actionPermissions', 'actionThrottles'] as const) {
    const declared = statics[name]
    if (declared === undefined) continue
    const unknown = Object.keys(declared).filter((key) => !known.has(key))
    if (unknown.length === 0) continue
    throw new ConfigurationError('FV_ERR_UNKNOWN_ACTION', `Cannot register ${statics.name}: ${name} names ${unknown.map((k) => JSON.stringify(k)).join(', ')}, ` +
      `which ${unknown.length === 1 ? 'is not an action' : 'are not actions'} of this view; its actions are ${[...known].sort().join(', ')}`)
  }
}

/** A class the library made: `View`, `APIView`, or one built by `mix`, a mixin or `.with()`. */
function isLibraryClass (cls: object): boolean {
  return cls === View || cls === APIView || Object.hasOwn(cls, MIXIN)
}

/**
 * A static a group replaced (`etag`, now `conditional: { etag }`), or a group member the group
 * does not have: refused before any other check, whose message would only describe what follows
 * from it (a conditional view that turns nothing on).
 */
export function assertCurrentStatics (klass: ViewClass): void {
  assertStaticGroups(klass, isLibraryClass, `Cannot register ${klass.name}: `)
}

/**
 * A member of the user's own classes whose name is near a member the view inherits
 * (`getKwarg` for `getKwargs`, `reponseSchema` for `responseSchema`, `unsafeDependency` for
 * `unsafeDependencies`, `response_schema`; `core/names.ts` says what is near) replaces
 * nothing: the inherited one still runs, or its default stays. When that member scopes rows
 * or sets a schema, the mistake widens access or leaks fields without a sign, and no compiler
 * sees it (a new name needs no `override`). Refused, naming both. Route methods and names
 * starting with `_` are new members by intent.
 */
export function assertNoNearMisses (klass: ViewClass): void {
  const found = misspeltMember(klass, isLibraryClass, (value) => typeof value === 'function' && getRouteMeta(value) !== undefined)
  if (found === undefined) return
  throw new ConfigurationError('FV_ERR_MISSPELT_MEMBER', `Cannot register ${klass.name}: ${misspeltSentence(found)}`)
}

/**
 * A required path parameter of a route's params schema that its URL does not have (`bookId` for
 * `/books/:id`) could never be sent: every request would be a 400. Refused at registration, where
 * the whole URL is known: the application's and the router's prefixes, the view's, the route's
 * path (`/articles/:slug/comments/:id` names `slug` in the prefix).
 */
export function assertParamsInPath (klass: ViewClass, route: CollectedRoute, url: string): void {
  const params: SchemaNode | undefined = route.options.schema?.params
  const required = params?.required
  if (!Array.isArray(required)) return
  const inPath = new Set([...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]))
  const missing = required.find((name) => !inPath.has(name))
  if (missing === undefined) return
  const fromDetailParams = route.standard && route.options.schema?.params === schemaStatic(klass, 'detailParams')
  throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', fromDetailParams
    ? `Cannot register ${klass.name}: its detailParams requires "${missing}", which the path of ${route.name} (${url}) does not have: ` +
      `set detailRoute to name it (\`/:${missing}\`), or name it in the prefix`
    : `Cannot register ${klass.name}: the params schema of ${klass.name}.${route.name} requires "${missing}", which its path (${url}) does not have: ` +
      `name it in the path (\`/:${missing}\`), or give the schema the names the path has (${[...inPath].join(', ') || 'none'})`)
}

/**
 * A view with standard actions registered with no prefix at all would serve them at the root
 * of its context (`GET /`, `DELETE /:id`), which is seldom what was meant: a prefix must be
 * given, `''` to mean the root.
 */
export function assertPrefix (
  app: FastifyInstance,
  klass: ViewClass,
  options: { prefix?: string },
  router: { prefix: string } | undefined
): void {
  if (options.prefix !== undefined || (router?.prefix ?? '') !== '' || app.prefix !== '' || klass.standardActions().length === 0) return
  const actions = [...new Set(klass.standardActions().map((action) => action.name))]
  throw new ConfigurationError('FV_ERR_NO_PREFIX', `Cannot register ${klass.name}: it has no prefix, so its actions (${actions.join(', ')}) would be served at the root ` +
    `of the application. Register it as { view: ${klass.name}, prefix: '/items' } (or prefix: '' to serve it at the root on purpose)`)
}
