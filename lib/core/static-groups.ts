// Statics that belong together (core layer): a feature's options set as one object static (`patch`,
// `conditional`), the defaults of the members left out, and the flat names a group replaced, each
// refused with its new spelling rather than silently never read.
import { ConfigurationError } from './configuration-error.js'
import { libraryClassOf, meantName, ownClasses } from './names.js'

/** A group of statics: the object static it is, and its members with their defaults. */
export interface StaticGroup<T extends object> {
  /** The static that holds the group (`conditional`). */
  readonly name: string
  /** Every member, at its default. */
  readonly defaults: Readonly<T>
  /** The group as `klass` holds it, each member it leaves out at its default. */
  of: (klass: object) => Readonly<T>
}

/** Where a retired static went: the static a class must have for the old name to matter, and the new spelling. */
interface Retired { readonly owner: string, readonly spelling: string }

const GROUPS = new Map<string, StaticGroup<object>>()
const RETIRED = new Map<string, Retired>()

/**
 * Declares the group `name` with its members' `defaults`, and the flat statics it replaces
 * (`{ etag: 'etag' }`: the old `etag` is now `conditional: { etag }`). Called once per feature, at import.
 */
export function defineStaticGroup<T extends object> (
  name: string,
  defaults: T,
  replaces: Readonly<Record<string, keyof T & string>> = {}
): StaticGroup<T> {
  const group: StaticGroup<T> = {
    name,
    defaults,
    of: (klass) => ({ ...defaults, ...(klass as Record<string, Partial<T> | undefined>)[name] }) // a class holding the group has it as its static `name`
  }
  GROUPS.set(name, group)
  for (const [old, member] of Object.entries(replaces)) retireStatic(old, name, `${name}: { ${member} }`)
  return group
}

/** Records that the static `old` of classes with the static `owner` is now written `spelling`. */
export function retireStatic (old: string, owner: string, spelling: string): void {
  RETIRED.set(old, { owner, spelling })
}

/** What `.with()` sets for `key`: a group's members merged into the ones `base` inherits (each checked), anything else as given. */
export function withStatic (base: object, key: string, value: unknown, owner: string): unknown {
  const group = GROUPS.get(key)
  if (group === undefined) return value
  assertMembers(group, value, `${owner}: ${key}`)
  return { ...(base as Record<string, object | undefined>)[key], ...(value as object) } // assertMembers refused anything but an object
}

/** What to say of the static `key` when a group of `base` replaced it: `is now conditional: { etag }, and ...`. */
export function renamedStatic (base: object, key: string): string | undefined {
  const retired = RETIRED.get(key)
  return retired !== undefined && retired.owner in base ? `is now ${retired.spelling}, and the old name is no longer read (CHANGELOG.md, "Upgrading")` : undefined
}

/** What to say of the static `key` when it is near a name a group of `base` replaced (`requirePrecondition`). */
function nearRenamed (base: object, key: string): string | undefined {
  const names = new Set([...RETIRED].filter(([, retired]) => retired.owner in base).map(([old]) => old))
  const meant = meantName(key, names)
  return meant === undefined ? undefined : `looks like ${meant}, which ${renamedStatic(base, meant)}`
}

/**
 * At registration: a static of the user's own classes (those below the first class `isLibrary`
 * accepts) that a group replaced would never be read (`static etag = true` on a conditional view),
 * and a group holding a member it does not have (`conditional = { etagg: true }`) would leave
 * the one meant at its default. Both refused, naming the class and the spelling, after `prefix`
 * (`Cannot register Items: `).
 */
export function assertStaticGroups (klass: object & { name: string }, isLibrary: (cls: object) => boolean, prefix = ''): void {
  const own = ownClasses(klass, isLibrary)
  // A static the first library class has is the library's, near a retired name or not.
  const library = libraryClassOf(klass, own)
  for (const cls of own) {
    for (const key of Object.getOwnPropertyNames(cls)) {
      const renamed = renamedStatic(klass, key) ?? (key in library ? undefined : nearRenamed(klass, key))
      if (renamed !== undefined) {
        throw new ConfigurationError('FV_ERR_RENAMED_STATIC', `${prefix}${cls.name}.${key} ${renamed}`)
      }
    }
  }
  for (const group of GROUPS.values()) {
    if (group.name in klass) assertMembers(group, (klass as Record<string, unknown>)[group.name], `${prefix}${klass.name}.${group.name}`) // read by the name `in` found
  }
}

/** A group's value is an object of its own members; an unknown one is a typo that leaves the meant one at its default. */
function assertMembers (group: StaticGroup<object>, value: unknown, shown: string): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${shown} is a group of options, an object such as { ${Object.keys(group.defaults).join(', ')} }, not ${JSON.stringify(value) ?? String(value)}`)
  }
  const members = Object.keys(group.defaults)
  for (const key of Object.keys(value)) {
    if (members.includes(key)) continue
    const meant = meantName(key, new Set(members))
    throw new ConfigurationError('FV_ERR_UNKNOWN_STATIC', `${shown}: "${key}" is not one of its options (${members.join(', ')}), so it would never be read` +
      (meant === undefined ? '' : `; did you mean "${meant}"?`))
  }
}
