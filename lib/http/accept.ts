// Content negotiation (http layer): the media type of an answer chosen from those a route offers by the
// request's Accept header (RFC 9110 §12.5.1), its cost bounded whatever the header holds.

/** At most this many media ranges of an Accept header are read: a longer list changes no choice a real client makes. */
const MAX_RANGES = 64

/** One media range of an Accept header: type, subtype, parameters (lower-cased) and its weight. */
interface Range { type: string, subtype: string, params: ReadonlyMap<string, string>, q: number }

/** One offer: what a route can send, parsed once. */
export interface Offer {
  readonly mediaType: string
  readonly type: string
  readonly subtype: string
  readonly params: ReadonlyMap<string, string>
}

function parseParams (parts: readonly string[]): Map<string, string> {
  const params = new Map<string, string>()
  for (const part of parts) {
    const at = part.indexOf('=')
    if (at <= 0) continue
    params.set(part.slice(0, at).trim().toLowerCase(), part.slice(at + 1).trim().replace(/^"(.*)"$/, '$1').toLowerCase())
  }
  return params
}

/** What a route offers, in its order of preference: the first wins a tie. */
export function offers (mediaTypes: readonly string[]): Offer[] {
  return mediaTypes.map((mediaType) => {
    const [full = '', ...rest] = mediaType.split(';')
    const [type = '', subtype = ''] = full.trim().toLowerCase().split('/')
    return { mediaType, type, subtype, params: parseParams(rest) }
  })
}

/** A weight as RFC 9110 §12.4.2 writes it: 0 to 1, at most three decimals. */
const QVALUE = /^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/

function parseAccept (header: string): Range[] {
  const ranges: Range[] = []
  let start = 0
  // Every element counts toward the bound, a malformed one too: the cost stays bounded whatever the header holds.
  for (let read = 0; start <= header.length && read < MAX_RANGES; read++) {
    let end = header.indexOf(',', start)
    if (end === -1) end = header.length
    const [full = '', ...rest] = header.slice(start, end).split(';', 16)
    start = end + 1
    const slash = full.indexOf('/')
    if (slash <= 0) continue
    const params = parseParams(rest)
    const weight = params.get('q')
    params.delete('q')
    // A charset says how text is encoded, not which format: `application/x-ndjson; charset=utf-8` asks for NDJSON.
    params.delete('charset')
    if (weight !== undefined && !QVALUE.test(weight)) continue
    const q = weight === undefined ? 1 : Number(weight)
    const type = full.slice(0, slash).trim().toLowerCase()
    ranges.push({ type, subtype: full.slice(slash + 1).trim().toLowerCase(), params, q })
  }
  return ranges
}

/** How closely a range names an offer: -1 when it does not match it; more for a type, more again for each parameter it requires. */
function specificity (range: Range, offer: Offer): number {
  if (range.type === '*') return range.subtype === '*' && offerHasNoParams(offer) ? 0 : -1
  if (range.type !== offer.type) return -1
  if (range.subtype === '*') return offerHasNoParams(offer) ? 1 : -1
  if (range.subtype !== offer.subtype) return -1
  for (const [name, value] of range.params) {
    if (offer.params.get(name) !== value) return -1
  }
  // An offer's parameters that the range leaves out must be asked for: `application/json` is the page, not the streamed array.
  for (const name of offer.params.keys()) {
    if (!range.params.has(name)) return -1
  }
  return 2 + range.params.size
}

const offerHasNoParams = (offer: Offer): boolean => offer.params.size === 0

/**
 * The offer the request prefers: for each, the weight of the most specific range that names it;
 * the heaviest wins, the earlier offer on a tie. No Accept: the first. `undefined`: the client
 * accepts none of them (the caller answers with its default, as Fastify does, or a 406).
 */
export function negotiate (accept: string | undefined, choices: readonly Offer[]): Offer | undefined {
  if (accept === undefined || accept === '') return choices[0]
  const ranges = parseAccept(accept)
  if (ranges.length === 0) return choices[0]
  let best: Offer | undefined
  let bestQ = 0
  for (const offer of choices) {
    let chosen = -1
    let q = 0
    for (const range of ranges) {
      const score = specificity(range, offer)
      if (score > chosen) {
        chosen = score
        q = range.q
      }
    }
    if (q > bestQ) {
      best = offer
      bestQ = q
    }
  }
  return best
}
