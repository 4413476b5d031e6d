import type { TSchema } from '@sinclair/typebox'
import type { ViewClass } from './view.js'

interface Named { apiComponentName?: string, responseSchema?: TSchema }

/**
 * The name of a view's resource: `apiComponentName`, else the `$id` or `title` of its
 * response schema, else the class name without a View/APIView/ViewSet suffix.
 */
export function componentName (klass: ViewClass): string {
  const named = klass as ViewClass & Named
  if (typeof named.apiComponentName === 'string' && named.apiComponentName !== '') return named.apiComponentName
  const schema = named.responseSchema as (TSchema & { $id?: unknown, title?: unknown }) | undefined
  if (typeof schema?.$id === 'string') return schema.$id
  if (typeof schema?.title === 'string') return schema.title
  return klass.name.replace(/(APIView|ViewSet|View)$/, '') || klass.name
}

/** `Item` -> `Items`, `Category` -> `Categories`, `Box` -> `Boxes`: English enough for identifiers. */
export function plural (name: string): string {
  if (/[^aeiou]y$/i.test(name)) return name.slice(0, -1) + 'ies'
  if (/(s|x|z|ch|sh)$/i.test(name)) return name + 'es'
  return name + 's'
}

/** `statsSummary` -> `Stats summary`. */
export function humanize (name: string): string {
  const words = name.replace(/([a-z0-9])([A-Z])/g, '$1 $2').replace(/[_-]+/g, ' ').toLowerCase()
  return words.charAt(0).toUpperCase() + words.slice(1)
}

const capitalize = (s: string): string => s.charAt(0).toUpperCase() + s.slice(1)

/** Summaries of the standard actions, by action name; `{}` is the resource name. */
const STANDARD_SUMMARIES: Record<string, string> = {
  list: 'List {+}',
  create: 'Create {}',
  retrieve: 'Retrieve {}',
  update: 'Replace {}',
  partialUpdate: 'Update {} partially',
  destroy: 'Delete {}',
  bulkCreate: 'Create {+} in bulk',
  bulkUpdate: 'Replace {+} in bulk',
  updateMany: 'Update the {+} a filter selects',
  bulkDelete: 'Delete the {+} a filter selects'
}

/** Collection-level actions name the resource in the plural. */
const PLURAL_ACTIONS = new Set(['list', 'bulkCreate', 'bulkUpdate', 'updateMany', 'bulkDelete'])

/**
 * The operationId of an action: the action name followed by the resource name,
 * plural for collection actions (`listItems`, `retrieveItem`, `bulkCreateItems`),
 * singular for detail routes; custom routes follow the same rule with their method
 * name (`statsItems`, `historyItem`). A route with several methods appends the method.
 */
export function operationIdOf (klass: ViewClass, action: string, options: { detail: boolean, standard: boolean, method?: string }): string {
  const name = componentName(klass)
  const collection = options.standard ? PLURAL_ACTIONS.has(action) : !options.detail
  const base = action + capitalize(collection ? plural(name) : name)
  return options.method === undefined ? base : base + capitalize(options.method.toLowerCase())
}

/** The summary of an action: `List Items`, `Retrieve Item`, or the humanized method name. */
export function summaryOf (klass: ViewClass, action: string, standard: boolean): string {
  const template = standard ? STANDARD_SUMMARIES[action] : undefined
  if (template === undefined) return humanize(action)
  const name = componentName(klass)
  return template.replace('{+}', plural(name)).replace('{}', name)
}

/** The default tag of a view's routes: its resource name in the plural. */
export function tagOf (klass: ViewClass): string {
  return plural(componentName(klass))
}
