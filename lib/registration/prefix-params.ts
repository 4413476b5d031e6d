// A nested view's prefix parameters (registration layer): `prefixParams` checked against the prefix it is registered under, and added to every route's params.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'
import { schemaStatic } from '../core/typebox-lines.js'
import { ConfigurationError } from '../core/configuration-error.js'
import type { ResolvedRouteOptions } from '../routes/types.js'
import type { ViewClass } from '../views/view.js'

// The path parameters of a nested view's prefix (`/members/:memberId/loans`): declared once with
// `prefixParams`, validated on every route of the view like its own parameters, and checked at
// registration against the prefix the view is really registered under (the application's, a
// router's and its own), so that a renamed segment cannot leave a lookup reading `undefined`.

const merged = new WeakMap<TSchema, WeakMap<TSchema, TObject>>()

const isObject = (schema: TSchema | undefined): schema is TObject => schema?.type === 'object' && typeof schema.properties === 'object'

/** The params schema of a route with the view's `prefixParams` joined in (built once per pair of schemas). */
export function withPrefixParams (klass: ViewClass, options: ResolvedRouteOptions): ResolvedRouteOptions {
  const prefix = schemaStatic(klass, 'prefixParams')
  if (prefix === undefined) return options
  const own = options.schema?.params
  // Joined property by property: a schema of another form (a union) could not say which of its
  // members the prefix's parameters join, and left alone the prefix's would go unvalidated.
  if (!isObject(prefix) || (own !== undefined && !isObject(own))) {
    throw new ConfigurationError('FV_ERR_PREFIX_PARAMS', `Cannot register ${klass.name}: its prefixParams and the params schema of each of its routes must be ` +
      'Type.Object schemas, so that the prefix\'s parameters join each route\'s')
  }
  let params: TObject = prefix
  if (own !== undefined) {
    let byOwn = merged.get(prefix)
    if (byOwn === undefined) merged.set(prefix, byOwn = new WeakMap())
    params = byOwn.get(own) ?? Type.Object({ ...prefix.properties, ...own.properties })
    byOwn.set(own, params)
  }
  return { ...options, schema: { ...options.schema, params } }
}

/**
 * A view declaring `prefixParams` must be registered under a prefix naming each of them, and
 * must declare every parameter its prefix names: one the schema leaves out would reach the view
 * unvalidated, one the prefix lacks would never be sent.
 */
export function assertPrefixParams (klass: ViewClass, prefix: string): void {
  const schema = schemaStatic(klass, 'prefixParams')
  // The `parent` static of a nested view (views/parent.ts), which other views do not have.
  const parent = (klass as { parent?: { lookup?: Record<string, string> } }).parent
  if (schema === undefined && parent === undefined) return
  const inPrefix = [...prefix.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1])
  const declared = Object.keys(schema?.properties ?? {})
  const undeclared = inPrefix.filter((name) => !declared.includes(name))
  const absent = declared.filter((name) => !inPrefix.includes(name))
  const unread = Object.values(parent?.lookup ?? {}).filter((name) => !declared.includes(name))
  const problem = absent.length > 0
    ? `its prefixParams declares ${absent.map((n) => `"${n}"`).join(', ')}, which its prefix (${prefix}) does not name: register it under a prefix with :${absent[0]}`
    : undeclared.length > 0
      ? `its prefix (${prefix}) names ${undeclared.map((n) => `:${n}`).join(', ')}, which its prefixParams does not declare: add ${undeclared.map((n) => `${n}: Type.String()`).join(', ')} (or its real type) to prefixParams`
      : unread.length > 0
        ? `its parent.lookup reads ${unread.map((n) => `"${n}"`).join(', ')}, which its prefixParams does not declare: name a parameter of the prefix`
        : undefined
  if (problem !== undefined) throw new ConfigurationError('FV_ERR_PREFIX_PARAMS', `Cannot register ${klass.name}: ${problem}`)
}
