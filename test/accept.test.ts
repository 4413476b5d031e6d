import { test } from 'tap'
import { performance } from 'node:perf_hooks'
import { negotiate, offers } from '../lib/http/accept.js'

// Content negotiation (lib/http/accept.ts, RFC 9110 §12.5.1): the offer an Accept header prefers
// among those a route makes, as a streamed list makes them (its page first, then NDJSON, JSONL and
// the streamed array). q-values decide, the more specific range names an offer's weight, a tie goes
// to the earlier offer; malformed ranges are skipped, not fatal; and whatever the header holds, its
// cost is bounded: at most 64 ranges are weighed, each with at most 15 parameters.

const PAGE = 'application/json'
const NDJSON = 'application/x-ndjson'
const JSONL = 'application/jsonl'
const ARRAY = 'application/json; stream=array'
const LIST = offers([PAGE, NDJSON, JSONL, ARRAY])

/** The media type `accept` chooses among the list's offers; `undefined` when it accepts none. */
const chosen = (accept: string | undefined, choices = LIST): string | undefined => negotiate(accept, choices)?.mediaType

test('offers: each media type parsed once, its parameters lower-cased and unquoted', async (t) => {
  t.same(offers(['Application/JSON; Stream="Array"; charset=UTF-8']), [{
    mediaType: 'Application/JSON; Stream="Array"; charset=UTF-8',
    type: 'application',
    subtype: 'json',
    params: new Map([['stream', 'array'], ['charset', 'utf-8']])
  }], 'the media type kept as given, to send; the rest compared case-insensitively')
  t.same(offers(['text/plain; broken;=x']).map((o) => [...o.params]), [[]], 'a parameter without a name or a value is none')
  t.same(offers(['']).map((o) => [o.type, o.subtype]), [['', '']], 'an empty offer matches no range that names a type')
})

test('no preference: no header, an empty one, or one with no readable range is the first offer', async (t) => {
  for (const accept of [undefined, '', ';;;', ',,,', '/json', ' ; q=1', 'json']) t.equal(chosen(accept), PAGE, JSON.stringify(accept))
  t.equal(negotiate(NDJSON, []), undefined, 'no offers, nothing chosen')
  t.equal(negotiate(undefined, []), undefined)
})

test('one range: the offer it names; wildcards name only offers without parameters', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    [PAGE, PAGE],
    [NDJSON, NDJSON],
    [JSONL, JSONL],
    [ARRAY, ARRAY],
    // The page is not the streamed array: an offer's parameter must be asked for.
    ['application/json; stream=other', undefined],
    ['application/json;stream="array"', ARRAY],
    ['APPLICATION/JSON ;  STREAM = ARRAY', ARRAY],
    ['  application/x-ndjson  ', NDJSON],
    ['*/*', PAGE],
    ['application/*', PAGE],
    ['*/json', undefined],
    ['text/*', undefined],
    ['text/html', undefined],
    ['application/', undefined],
    ['application/xml', undefined],
    // A range's parameter the offer lacks: the streamed forms are offered without a charset.
    ['application/x-ndjson; charset=utf-8', NDJSON]
  ]
  for (const [accept, expected] of cases) t.equal(chosen(accept), expected, accept)
})

test('q-values: the heaviest offer wins; a tie goes to the earlier offer (page, ndjson, jsonl, array)', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    [`${PAGE}, ${NDJSON}`, PAGE],
    [`${NDJSON}, ${PAGE}`, PAGE],
    [`${PAGE};q=0.5, ${NDJSON}`, NDJSON],
    [`${NDJSON};q=0.9, ${JSONL}`, JSONL],
    [`${JSONL}, ${NDJSON}`, NDJSON],
    [`${ARRAY}, ${JSONL}`, JSONL],
    [`${ARRAY};q=1, ${NDJSON};q=0.999`, ARRAY],
    [`${ARRAY}; q=0.5, ${NDJSON}; q=0.4`, ARRAY],
    [`*/*;q=0.1, ${NDJSON}`, NDJSON],
    [`*/*;q=0.8, ${PAGE};q=0.9`, PAGE],
    // "Anything but JSON": the page weighs 0 by its own range, the NDJSON forms 1 by the wildcard.
    [`*/*, ${PAGE};q=0`, NDJSON],
    [`application/*, ${PAGE};q=0, ${NDJSON};q=0`, JSONL],
    // A wildcard never names the streamed array, which has a parameter.
    [`application/*, ${PAGE};q=0, ${NDJSON};q=0, ${JSONL};q=0`, undefined],
    [`*/*, ${PAGE};q=0, ${NDJSON};q=0, ${JSONL};q=0`, undefined],
    [`${PAGE};q=0`, undefined],
    [`${NDJSON};q=0, ${PAGE};q=0`, undefined],
    // The most specific range gives the weight, wherever it is in the list.
    [`${NDJSON};q=0.2, application/*;q=0.9`, PAGE],
    // The first of two equally specific ranges for one offer gives it its weight.
    [`${NDJSON};q=0.1, ${NDJSON};q=0.9, ${PAGE};q=0.5`, PAGE],
    // A repeated parameter: the last one counts.
    [`${NDJSON};q=0.1;q=1, ${PAGE};q=0.5`, NDJSON]
  ]
  for (const [accept, expected] of cases) t.equal(chosen(accept), expected, accept)
})

test('malformed ranges are skipped, the rest of the header still counts', async (t) => {
  const cases: Array<[string, string | undefined]> = [
    [`;;;, ${NDJSON}`, NDJSON],
    [`/json, ${NDJSON}`, NDJSON],
    [`${NDJSON};q=abc`, PAGE],
    [`${NDJSON};q=2`, PAGE],
    [`${NDJSON};q=-0.5`, PAGE],
    [`${NDJSON};q=NaN, ${JSONL};q=0.5`, JSONL],
    [`${NDJSON};q=2, ${JSONL};q=0.5`, JSONL],
    [`${NDJSON};;;q=0.5;=;x, ${PAGE};q=0.4`, NDJSON],
    // A blank before the `=` of a nameless parameter makes it a parameter named '' that no offer has.
    [`${NDJSON}; =x`, undefined],
    // A quoted comma splits the range: its halves are malformed, the next range is read.
    [`application/json; stream="a,b", ${NDJSON}`, NDJSON],
    ['application/x-ndjson;q', NDJSON]
  ]
  for (const [accept, expected] of cases) t.equal(chosen(accept), expected, accept)
})

test('a q that is no qvalue (RFC 9110 §12.4.2: 0 to 1, at most three decimals) leaves its range out', async (t) => {
  t.equal(chosen(`${NDJSON};q=, ${JSONL};q=0.001`), JSONL, 'an empty q')
  t.equal(chosen(`${PAGE};q=0.5, ${NDJSON};q=0x1`), PAGE, 'a hexadecimal q')
  t.equal(chosen(`${PAGE};q=0.5, ${NDJSON};q=1e-1`), PAGE, 'an exponent')
  t.equal(chosen(`${PAGE};q=0.5, ${NDJSON};q=0.0001`), PAGE, 'four decimals')
  t.equal(chosen(`${PAGE};q=0.5, ${NDJSON};q=1.000`), NDJSON, 'three zero decimals of 1 are a qvalue')
  t.equal(chosen(`${PAGE};q=0.5, ${NDJSON};q=1.001`), PAGE, 'above 1')
})

test('at most 64 ranges are weighed: a streamed type after them is ignored', async (t) => {
  const html = Array.from({ length: 64 }, () => 'text/html').join(', ')
  t.equal(chosen(`${html}, ${NDJSON}`), undefined, 'the 65th range is not read: the 64 read accept no offer')
  t.equal(chosen(`${html.split(', ').slice(1).join(', ')}, ${NDJSON}`), NDJSON, 'the 64th is')
  // Malformed ranges count too: what a header costs is bounded by the 64 elements read, whatever they hold.
  t.equal(chosen(`${Array.from({ length: 100 }, () => '/x').join(',')}, ${NDJSON}`), PAGE,
    'the 65th element is not read, and the 64 read name nothing: as if there were no Accept')
  t.equal(chosen(`${Array.from({ length: 63 }, () => '/x').join(',')}, ${NDJSON}`), NDJSON, 'the 64th element is read')
  const params = (n: number): string => Array.from({ length: n }, (_, i) => `;p${i}=v`).join('')
  // Each of these parameters is one the offer lacks: a range that names it matches nothing.
  t.equal(chosen(`application/json${params(15)};stream=array`), undefined,
    'a parameter past the 15th of a range is not read (here `stream`): what is read names no offer')
  // The weight as the 15th parameter is read; as the 16th it is not, and the range weighs 1.
  t.equal(chosen(`application/json${';stream=array'.repeat(14)};q=0`), undefined, 'the 15th is read')
  t.equal(chosen(`application/json${';stream=array'.repeat(15)};q=0`), ARRAY, 'the 16th is not')
})

test('hostile headers of 16 KB, Node\'s limit for all of a request\'s headers, cost well under 50 ms', async (t) => {
  const size = 16_384
  const fill = (unit: string, head = ''): string => (head + unit.repeat(Math.ceil(size / unit.length))).slice(0, size)
  const ranges = fill(',a/b;q=0.5', NDJSON)
  const parameters = fill(';p=v', 'application/json')
  // Ranges that are skipped are not counted among the 64: each is read, so these cost the most.
  const commas = fill(',')
  const slashes = fill('/x,')
  const weights = fill('a/b;q=9,')
  const semicolons = fill(';', 'x/y')
  const quotes = fill('"', 'application/json; stream="')
  for (const [name, accept] of Object.entries({ ranges, parameters, commas, slashes, weights, semicolons, quotes })) {
    const start = performance.now()
    for (let i = 0; i < 10; i++) negotiate(accept, LIST)
    const each = (performance.now() - start) / 10
    t.ok(each < 50, `${name} (${accept.length} characters): ${each.toFixed(2)} ms a negotiation`)
  }
  t.equal(chosen(ranges), NDJSON, 'the first range of the long list is read')
  t.equal(chosen(weights), PAGE, 'no readable range: the first offer')
})
