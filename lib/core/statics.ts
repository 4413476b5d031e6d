// Statics set by `.with()` (core layer): a class's statics assigned by name, a group merged into the inherited
// one, a name it does not have refused.
import { ConfigurationError } from './configuration-error.js'
import { meantName } from './names.js'
import { renamedStatic, withStatic } from './static-groups.js'

// Every function has these; none is a static a view or a filter reads.
const FUNCTION_OWN = new Set(['name', 'length', 'prototype'])

/**
 * Sets `statics` as own static properties of `target`, a new subclass of `base`. A name
 * `base` does not have is a typo (`orderingField`, `responseSchemas`) that nothing would
 * ever read: it is refused, naming `owner` (what the user called, `X.with(...)`). A group of
 * statics (`conditional: { etag: true }`) is merged into the one `base` has: `.with()` changes
 * the members it names and keeps the others.
 */
export function assignStatics (target: object, base: { name: string }, statics: object, owner: string): void {
  for (const [key, value] of Object.entries(statics)) {
    const renamed = renamedStatic(base, key)
    if (renamed !== undefined) throw new ConfigurationError('FV_ERR_RENAMED_STATIC', `${owner}: "${key}" ${renamed}`)
    if (!(key in base) || FUNCTION_OWN.has(key)) {
      const meant = meantName(key, staticNames(base))
      throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${owner}: "${key}" is not a static of ${base.name}, so it would never be read` +
        (meant === undefined ? '' : `; did you mean "${meant}"?`))
    }
    const set = withStatic(base, key, value, owner)
    Object.defineProperty(target, key, { value: set, writable: true, enumerable: true, configurable: true })
  }
}

/** The name of a class `.with(...)` made: what it extends and the statics it sets. */
export const withName = (base: { name: string }, statics: object): string => `${base.name}.with(${Object.keys(statics).join(', ')})`

/** Every static `base` has, its own and inherited ones, but those every function has. */
function staticNames (base: object): Set<string> {
  const names = new Set<string>()
  for (let c: object | null = base; c !== null &&
    c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    for (const name of Object.getOwnPropertyNames(c)) if (!FUNCTION_OWN.has(name)) names.add(name)
  }
  return names
}
