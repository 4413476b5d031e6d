// Conditional requests (http layer): RFC 9110 §13 evaluation of If-Match, If-None-Match, If-Modified-Since and If-Unmodified-Since, ETags and HTTP-dates.
import crypto from 'node:crypto'

/** One entity-tag of a conditional header (RFC 9110 section 8.8.3). */
export interface EntityTag { weak: boolean, opaque: string }

const TAG = /^\s*(W\/)?("[\x21\x23-\x7e\x80-\xff]*")\s*(?:,|$)/

/**
 * Parses an `If-Match` / `If-None-Match` value: `*`, or a list of entity-tags. An
 * invalid member (unquoted, bad characters) makes the rest unreadable, so parsing
 * stops there; what was read still counts (RFC 9110 section 13.1: a recipient must
 * not match a tag it could not parse).
 */
export function parseEntityTags (header: string): '*' | EntityTag[] {
  if (header.trim() === '*') return '*'
  const tags: EntityTag[] = []
  let rest = header
  for (;;) {
    const match = TAG.exec(rest)
    if (match === null) return tags
    tags.push({ weak: match[1] !== undefined, opaque: match[2] })
    rest = rest.slice(match[0].length)
    if (rest.trim() === '') return tags
  }
}

/**
 * The server's own tag (one tag, as `etagOf` or the application wrote it) split into its
 * weakness and opaque part without the list parser. A client's tags are parsed strictly, so
 * a server tag with characters no valid tag has can never equal one of them.
 */
function ownTag (etag: string): EntityTag | undefined {
  const weak = etag.startsWith('W/')
  const opaque = weak ? etag.slice(2) : etag
  return opaque.length >= 2 && opaque.charCodeAt(0) === 34 && opaque.charCodeAt(opaque.length - 1) === 34
    ? { weak, opaque }
    : undefined
}

/** Weak comparison (RFC 9110 section 8.8.3.2): opaque tags equal, whatever their weakness. */
export function weakMatch (tags: '*' | EntityTag[], etag: string): boolean {
  if (tags === '*') return true
  const current = ownTag(etag)
  return current !== undefined && tags.some((t) => t.opaque === current.opaque)
}

/** Strong comparison: neither tag weak, opaque tags equal. If-Match uses it (RFC 9110 section 13.1.1). */
export function strongMatch (tags: '*' | EntityTag[], etag: string): boolean {
  if (tags === '*') return true
  const current = ownTag(etag)
  return current !== undefined && !current.weak && tags.some((t) => !t.weak && t.opaque === current.opaque)
}

const MONTHS: Record<string, number> = {
  Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11
}
const IMF_FIXDATE = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun), (\d\d) ([A-Z][a-z]{2}) (\d{4}) (\d\d):(\d\d):(\d\d) GMT$/
const RFC850 = /^(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday), (\d\d)-([A-Z][a-z]{2})-(\d\d) (\d\d):(\d\d):(\d\d) GMT$/
const ASCTIME = /^(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) ([A-Z][a-z]{2}) ([ \d]\d) (\d\d):(\d\d):(\d\d) (\d{4})$/

function utc (year: number, month: string, day: number, h: string, m: string, s: string): number | undefined {
  const mon = MONTHS[month]
  if (mon === undefined) return undefined
  const time = Date.UTC(year, mon, day, Number(h), Number(m), Number(s))
  const check = new Date(time)
  // 31 Feb and 25:00 are not dates: Date.UTC would roll them over.
  return check.getUTCDate() === day && check.getUTCHours() === Number(h) && Number(m) < 60 && Number(s) < 61
    ? time
    : undefined
}

/**
 * Parses an HTTP-date in any of the three formats a recipient must accept (RFC 9110
 * section 5.6.7): IMF-fixdate, RFC 850 (two-digit years within 50 years of `now`), and
 * asctime. Anything else is `undefined`, and the header is then ignored.
 */
export function parseHttpDate (value: string, now = Date.now()): number | undefined {
  let m = IMF_FIXDATE.exec(value)
  if (m !== null) return utc(Number(m[3]), m[2], Number(m[1]), m[4], m[5], m[6])
  m = RFC850.exec(value)
  if (m !== null) {
    // The year of these two digits from now - 49 to now + 50: a year more than 50 years ahead is
    // the most recent past one with the same two digits, and one in the next century may be ahead.
    const current = new Date(now).getUTCFullYear()
    let year = Math.floor(current / 100) * 100 + Number(m[3])
    if (year > current + 50) year -= 100
    else if (year <= current - 50) year += 100
    return utc(year, m[2], Number(m[1]), m[4], m[5], m[6])
  }
  m = ASCTIME.exec(value)
  if (m !== null) return utc(Number(m[6]), m[1], Number(m[2].trim()), m[3], m[4], m[5])
  return undefined
}

/** A resource's last modification, truncated to the second an HTTP-date can say. */
export function toSeconds (value: Date | string | number): number | undefined {
  const time = value instanceof Date ? value.getTime() : typeof value === 'number' ? value : Date.parse(value)
  return Number.isNaN(time) ? undefined : Math.floor(time / 1000)
}

/** `Last-Modified` value: IMF-fixdate, the format a sender must generate; `undefined` for an unreadable date. */
export function httpDate (value: Date | string | number): string | undefined {
  const seconds = toSeconds(value)
  return seconds === undefined ? undefined : new Date(seconds * 1000).toUTCString()
}

const hash: (data: string | Buffer) => string = typeof (crypto as { hash?: unknown }).hash === 'function'
  // Node boundary: crypto.hash exists from Node 21.7 / 20.12, newer than the @types/node the package supports.
  ? (data) => (crypto as unknown as { hash: (alg: string, data: string | Buffer, enc: string) => string }).hash('sha1', data, 'base64url')
  : /* c8 ignore next */ (data) => crypto.createHash('sha1').update(data).digest('base64url')

/**
 * The strong ETag of a serialized body: a quoted SHA-1 in base64url. Identical bytes
 * give identical tags on every instance, with no state to share.
 */
export function etagOf (payload: string | Buffer): string {
  return `"${hash(payload)}"`
}

/** What the current representation of a resource is validated by. */
export interface Validators {
  etag?: string
  lastModified?: Date | string | number
}

/** Outcome of the conditional GET/HEAD evaluation: serve the body, or answer 304. */
export function isNotModified (headers: Record<string, string | string[] | undefined>, current: Validators): boolean {
  const inm = headers['if-none-match']
  // If-None-Match, when present, decides alone (RFC 9110 section 13.2.2 step 3). A client sends
  // back the one tag it holds, which is read without parsing a list when it is the current one.
  if (typeof inm === 'string') {
    const etag = current.etag
    if (etag === undefined) return false
    return (inm === etag && ownTag(etag) !== undefined) || weakMatch(parseEntityTags(inm), etag)
  }
  const ims = headers['if-modified-since']
  if (typeof ims !== 'string' || current.lastModified === undefined) return false
  const since = parseHttpDate(ims)
  const modified = toSeconds(current.lastModified)
  return since !== undefined && modified !== undefined && modified <= Math.floor(since / 1000)
}

/**
 * Whether an `If-Match` value names a version: at least one strong entity-tag. `*` matches
 * any version, and a weak tag never matches under the strong comparison If-Match uses (RFC 9110
 * sections 8.8.1 and 13.1.1), so neither says which representation the client read.
 */
export function namesStrongTag (header: string | string[] | undefined): boolean {
  if (typeof header !== 'string') return false
  const tags = parseEntityTags(header)
  return tags !== '*' && tags.some((tag) => !tag.weak)
}

/**
 * Whether the preconditions of an unsafe request fail against the current validators
 * (RFC 9110 section 13.2.2 steps 1, 2 and 3): If-Match (strong), else
 * If-Unmodified-Since, then If-None-Match, which fails on any match.
 *
 * If-Unmodified-Since compares to the second, so two changes within one second look alike
 * (RFC 9110 section 8.8.2.2). A representation last modified within the current second of
 * `now` (or later, by this clock) is therefore treated as modified: the write that replaces a
 * version this way is stamped in a later second than that version, so a second client holding
 * the same date is refused (docs/conditional.md, "If-Unmodified-Since and the one-second clock").
 */
export function failsPrecondition (
  headers: Record<string, string | string[] | undefined>,
  current: Validators,
  now = Date.now()
): boolean {
  const im = headers['if-match']
  if (typeof im === 'string') {
    if (current.etag === undefined) return parseEntityTags(im) !== '*'
    if (!strongMatch(parseEntityTags(im), current.etag)) return true
  } else {
    const ius = headers['if-unmodified-since']
    const since = typeof ius === 'string' ? parseHttpDate(ius) : undefined
    const modified = current.lastModified === undefined ? undefined : toSeconds(current.lastModified)
    if (since !== undefined && modified !== undefined &&
      (modified > Math.floor(since / 1000) || modified >= Math.floor(now / 1000))) return true
  }
  const inm = headers['if-none-match']
  if (typeof inm === 'string') {
    const tags = parseEntityTags(inm)
    if (tags === '*' || (current.etag !== undefined && weakMatch(tags, current.etag))) return true
  }
  return false
}
