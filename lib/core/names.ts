/**
 * Which known name a mistyped one was meant to be: the rule behind the "did you mean" of
 * configuration errors and the near-miss check of class bodies.
 */

/** A name without case, underscores or hyphens: `response_schema`, `ResponseSchema` and `responseSchema` read alike. */
const plain = (name: string): string => name.toLowerCase().replace(/[_-]/g, '')

/** A plain name without a plural ending: `dependencies` and `dependency`, `fields` and `field`, `searches` and `search`. */
function singular (name: string): string {
  if (name.endsWith('ies')) return name.slice(0, -3) + 'y'
  if (/(?:s|x|z|ch|sh)es$/.test(name)) return name.slice(0, -2)
  if (name.endsWith('s') && !name.endsWith('ss')) return name.slice(0, -1)
  return name
}

/** The edit distance of two strings (a character added, dropped, changed, or two neighbours swapped), stopping past `limit`. */
function distance (a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1
  let before: number[] = []
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j)
  for (let i = 1; i <= a.length; i++) {
    const row = [i]
    let best = i
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1
      let d = Math.min(previous[j] + 1, row[j - 1] + 1, previous[j - 1] + cost)
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) d = Math.min(d, before[j - 2] + 1)
      row.push(d)
      best = Math.min(best, d)
    }
    if (best > limit) return limit + 1
    before = previous
    previous = row
  }
  return previous[b.length]
}

/**
 * How far apart two names are as a user would mistype them, or `undefined` when they are not
 * near: the same name in another case or with underscores (`response_schema`), singular for
 * plural (`unsafeDependency`), or a few characters off: one edit under ten characters, two from
 * ten on. Names under four characters are too short to tell a typo from another word.
 */
export function nameDistance (typed: string, known: string): number | undefined {
  if (typed.length < 4 || known.length < 4 || typed === known) return undefined
  const a = plain(typed)
  const b = plain(known)
  if (a === b || singular(a) === singular(b)) return 0
  const limit = Math.min(a.length, b.length) >= 10 ? 2 : 1
  const d = distance(a, b, limit)
  return d <= limit ? d : undefined
}

/** The known name `typed` was most likely meant to be (the nearest; the first listed on a tie), or `undefined`. */
export function meantName (typed: string, known: Iterable<string>): string | undefined {
  let meant: string | undefined
  let nearest = Number.POSITIVE_INFINITY
  for (const name of known) {
    const d = nameDistance(typed, name)
    if (d !== undefined && d < nearest) {
      meant = name
      nearest = d
    }
  }
  return meant
}

/** A name without underscores and hyphens, in lower case: the form `nameDistance` compares. */
type Plain<S extends string> = S extends `${infer A}_${infer B}` ? Plain<`${A}${B}`> : S extends `${infer A}-${infer B}` ? Plain<`${A}${B}`> : Lowercase<S>

/** A plain name without a plural ending, as `singular` reads it. */
type Singular<S extends string> = S extends `${infer Stem}ies` ? `${Stem}y` : S extends `${infer Stem}s` ? (S extends `${string}ss` ? S : Stem) : S

/**
 * Whether two plain names are one edit apart (a character added, dropped or changed, or two
 * neighbours swapped), read a character at a time: `nameDistance`'s first step, for the
 * compiler. Both equal is not an edit.
 */
type OneEdit<A extends string, B extends string> =
  A extends `${infer a}${infer ra}`
    ? B extends `${infer b}${infer rb}`
      ? a extends b
        ? OneEdit<ra, rb>
        : ra extends rb ? true : ra extends B ? true : A extends rb ? true
          : ra extends `${b}${infer rest}` ? (rb extends `${a}${rest}` ? true : false) : false
      : ra extends '' ? true : false
    : B extends `${string}${infer rb}` ? (rb extends '' ? true : false) : false

/**
 * The known names a mistyped one was probably meant to be, as far as the compiler can tell: the
 * same name in another case or with underscores, singular for plural, or one edit away in a name
 * of four characters or more (`nameDistance` allows two from ten on). `never` when none is near.
 */
export type MeantNameOf<P extends string, Known extends string> = Known extends unknown
  ? (P extends Known ? never
      : Singular<Plain<P>> extends Singular<Plain<Known>> ? Known
        : P extends `${string}${string}${string}${string}${string}` ? (OneEdit<Plain<P>, Plain<Known>> extends true ? Known : never) : never)
  : never

/** `; did you mean "responseSchema"?` when a known name is near, else nothing: the end of a compiler message. */
export type DidYouMean<P extends string, Known extends string> = [MeantNameOf<P, Known>] extends [never] ? '' : `: did you mean ${MeantNameOf<P, Known>}?`

/** A class as the near-miss check reads it: its name, its statics and its prototype's members. */
export interface ClassLike { readonly name: string, readonly prototype: object }

/** A member found by `misspeltMember`, and the sentence that says so. */
export interface MisspeltMember { shown: string, meant: string }

/** What FV_ERR_MISSPELT_MEMBER says of a member: the name it meant, and the two ways out. */
export const misspeltSentence = ({ shown, meant }: MisspeltMember): string =>
  `${shown} looks like a misspelling of ${meant}, which it does not replace (the inherited ${meant} still applies); rename it ${meant}, or give it a name of its own`

/** Names every class has, never a misspelling of anything. */
const BUILT_IN = new Set(['length', 'name', 'prototype', 'constructor', 'arguments', 'caller'])

/** The user's own classes of `klass`: itself and its ancestors below the first class `isLibrary` accepts. */
export function ownClasses<C extends object> (klass: C, isLibrary: (cls: object) => boolean): C[] {
  const own: C[] = []
  for (let c = klass; !isLibrary(c); c = Object.getPrototypeOf(c)) own.push(c) // every class checked extends a library class before Function.prototype
  return own
}

/** The first library class of `klass`, given its own classes: the one above them, or the class itself. */
export const libraryClassOf = <C extends object>(klass: C, own: readonly C[]): C =>
  own.length === 0 ? klass : Object.getPrototypeOf(own[own.length - 1]) // the class a class extends

/**
 * The first member of the user's own classes (those below the first class `isLibrary` accepts)
 * whose name is near a member inherited from the library but is not that member: it replaces
 * nothing, so the inherited one still applies (`static orderingField` leaves `orderingFields`
 * empty). `shown` is `Class.member` or `Class.prototype.member`. Names starting with `_`, and
 * those `isOwn` accepts (route methods of a view), are new members by intent.
 */
export function misspeltMember (
  klass: ClassLike,
  isLibrary: (cls: object) => boolean,
  isOwn: (value: unknown) => boolean = () => false
): MisspeltMember | undefined {
  const own = ownClasses(klass, isLibrary)
  const base = libraryClassOf(klass, own)
  const inherited = new Set<string>()
  for (let c: object = base; c !== Function.prototype; c = Object.getPrototypeOf(c)) {
    for (const key of Object.getOwnPropertyNames(c)) inherited.add(key)
    for (let p: object = (c as ClassLike).prototype; p !== Object.prototype; p = Object.getPrototypeOf(p)) { // classes up to Function.prototype
      for (const key of Object.getOwnPropertyNames(p)) inherited.add(key)
    }
  }
  for (const cls of own) {
    const members = [
      ...Object.getOwnPropertyNames(cls).map((name) => ({ name, shown: `${cls.name}.${name}`, value: Object.getOwnPropertyDescriptor(cls, name)?.value as unknown })),
      ...Object.getOwnPropertyNames(cls.prototype).map((name) => ({ name, shown: `${cls.name}.prototype.${name}`, value: Object.getOwnPropertyDescriptor(cls.prototype, name)?.value as unknown }))
    ]
    for (const { name, shown, value } of members) {
      if (BUILT_IN.has(name) || inherited.has(name) || name.startsWith('_') || isOwn(value)) continue
      const meant = meantName(name, inherited)
      if (meant !== undefined) return { shown, meant }
    }
  }
  return undefined
}
