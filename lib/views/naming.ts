// The names of a resource (views layer): its component name, its plural, the operationIds, summaries and tags its routes are documented with.
import type { TSchema } from '@sinclair/typebox'
import type { ViewClass } from './view.js'

// The naming statics live on APIView; a plain View class may have them or not.
interface Named { apiComponentName?: string, apiPluralName?: string, responseSchema?: TSchema }

/**
 * The name of a view's resource: `apiComponentName`, else the `$id` or `title` of its
 * response schema, else the class name without a View/APIView/ViewSet suffix.
 */
export function componentName (klass: ViewClass): string {
  const named = klass as ViewClass & Named
  if (typeof named.apiComponentName === 'string' && named.apiComponentName !== '') return named.apiComponentName
  const schema = named.responseSchema
  if (typeof schema?.$id === 'string') return schema.$id
  if (typeof schema?.title === 'string') return schema.title
  return klass.name.replace(/(APIView|ViewSet|View)$/, '') || klass.name
}

// Nouns whose plural is the word itself: a resource named after one reads the same in both.
const UNCOUNTABLE = new Set(['health', 'information', 'info', 'equipment', 'news', 'data', 'metadata', 'series', 'species',
  'feedback', 'software', 'hardware', 'media', 'settings', 'config', 'configuration', 'inventory', 'stock', 'staff', 'audio', 'analytics',
  'metrics', 'sheep', 'fish', 'deer', 'aircraft', 'money', 'rice', 'traffic', 'weather', 'progress', 'research', 'evidence', 'advice'])
// A Map, not an object literal: a resource named `Constructor` must not find Object.prototype's.
const IRREGULAR = new Map(Object.entries({
  person: 'people',
  child: 'children',
  man: 'men',
  woman: 'women',
  mouse: 'mice',
  goose: 'geese',
  tooth: 'teeth',
  foot: 'feet',
  ox: 'oxen',
  datum: 'data',
  criterion: 'criteria',
  phenomenon: 'phenomena',
  index: 'indexes',
  matrix: 'matrices',
  vertex: 'vertices',
  leaf: 'leaves',
  knife: 'knives',
  life: 'lives',
  wife: 'wives',
  half: 'halves',
  shelf: 'shelves',
  wolf: 'wolves',
  thief: 'thieves',
  loaf: 'loaves',
  calf: 'calves',
  hero: 'heroes',
  potato: 'potatoes',
  tomato: 'tomatoes',
  echo: 'echoes',
  veto: 'vetoes',
  analysis: 'analyses',
  basis: 'bases',
  crisis: 'crises',
  thesis: 'theses',
  diagnosis: 'diagnoses',
  axis: 'axes',
  quiz: 'quizzes'
}))
const IRREGULAR_PLURALS = new Set(IRREGULAR.values())
// Singular nouns that end in a lone `s`: not already plural.
const SINGULAR_IN_S = /(ss|us|is|ics|ias|bus|gas|lens|atlas|canvas|alias)$/

/** The last word of an identifier (`OrderItem` -> `Item`, `order_item` -> `item`), and what precedes it. */
function splitLastWord (name: string): [string, string] {
  const match = /^(.*?)([A-Z]?[a-z0-9]+|[A-Z]+)$/.exec(name)
  return match === null ? ['', name] : [match[1], match[2]]
}

function withCaseOf (word: string, replacement: string): string {
  if (word === word.toUpperCase() && word.length > 1) return replacement.toUpperCase()
  return word.charAt(0) === word.charAt(0).toUpperCase()
    ? replacement.charAt(0).toUpperCase() + replacement.slice(1)
    : replacement
}

/**
 * The plural of a resource name, on its last word: `Item` -> `Items`, `Category` ->
 * `Categories`, `OrderItem` -> `OrderItems`, `Person` -> `People`, `Address` ->
 * `Addresses`. A name that is already plural (`Items`) or uncountable (`Health`,
 * `Data`, `News`) is kept. `apiPluralName` overrides it per view.
 */
export function plural (name: string): string {
  const [head, word] = splitLastWord(name)
  const lower = word.toLowerCase()
  if (UNCOUNTABLE.has(lower)) return name
  const irregular = IRREGULAR.get(lower)
  if (irregular !== undefined) return head + withCaseOf(word, irregular)
  if (IRREGULAR_PLURALS.has(lower)) return name
  if (/s$/.test(lower) && !SINGULAR_IN_S.test(lower)) return name
  // Suffixes are lower case, also after an acronym (`APIs`, `URLs`).
  if (/[^aeiou]y$/.test(lower)) return head + word.slice(0, -1) + 'ies'
  if (/(s|x|z|ch|sh)$/.test(lower)) return head + word + 'es'
  return head + word + 's'
}

/** The plural resource name of a view: `apiPluralName`, else `plural()` of its resource name. */
export function pluralName (klass: ViewClass): string {
  const own = (klass as ViewClass & Named).apiPluralName
  return typeof own === 'string' && own !== '' ? own : plural(componentName(klass))
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

// What each standard action does, for API readers: `{}` is the resource, `{+}` its plural.
const STANDARD_DESCRIPTIONS: Record<string, string> = {
  list: 'Returns the {+}.',
  create: 'Creates one {} from the request body.',
  retrieve: 'Returns the {} the path names; 404 when there is none.',
  update: 'Replaces the {} the path names with the request body; 404 when there is none.',
  partialUpdate: 'Changes the fields the request body sends of the {} the path names; 404 when there is none.',
  destroy: 'Deletes the {} the path names; 404 when there is none.',
  bulkCreate: 'Creates every {} of the request body, all or nothing: when one item is refused, none is created.',
  bulkUpdate: 'Replaces every {} of the request body, each found by its key, all or nothing: when one item is refused, none is changed.'
}

/** The default description of a standard action, or `undefined` (custom routes, actions that describe themselves). */
export function descriptionOf (klass: ViewClass, action: string): string | undefined {
  return STANDARD_DESCRIPTIONS[action]?.replace('{+}', pluralName(klass)).replace('{}', componentName(klass))
}

/** Collection-level actions name the resource in the plural. */
const PLURAL_ACTIONS = new Set(['list', 'bulkCreate', 'bulkUpdate', 'updateMany', 'bulkDelete'])

/**
 * The operationId of an action: the action name followed by the resource name,
 * plural for collection actions (`listItems`, `retrieveItem`, `bulkCreateItems`),
 * singular for detail routes; custom routes follow the same rule with their method
 * name (`statsItems`, `historyItem`). A route with several methods appends the method.
 */
export function operationIdOf (
  klass: ViewClass,
  action: string,
  options: { detail: boolean, standard: boolean, method?: string }
): string {
  const name = componentName(klass)
  const collection = options.standard ? PLURAL_ACTIONS.has(action) : !options.detail
  const resource = collection ? pluralName(klass) : name
  // A custom route named after its resource (`health` on `Health`) is named once: `health`, not `healthHealth`.
  const named = !options.standard && (action.toLowerCase() === name.toLowerCase() ||
    action.toLowerCase() === resource.toLowerCase())
  const base = named ? action : action + capitalize(resource)
  return options.method === undefined ? base : base + capitalize(options.method.toLowerCase())
}

/** The summary of an action: `List Items`, `Retrieve Item`, or the humanized method name. */
export function summaryOf (klass: ViewClass, action: string, standard: boolean): string {
  const template = standard ? STANDARD_SUMMARIES[action] : undefined
  if (template === undefined) return humanize(action)
  return template.replace('{+}', pluralName(klass)).replace('{}', componentName(klass))
}

/** The default tag of a view's routes: its resource name in the plural. */
export function tagOf (klass: ViewClass): string {
  return pluralName(klass)
}
