import { test, type Test } from 'tap'
import { spawnSync } from 'node:child_process'
import { randomBytes, randomInt } from 'node:crypto'
import { tracingChannel } from 'node:diagnostics_channel'
import http, { type ClientRequest, type IncomingMessage } from 'node:http'
import net, { type AddressInfo } from 'node:net'
import { setTimeout as wait } from 'node:timers/promises'
import Fastify, { type FastifyInstance } from 'fastify'
import client from 'prom-client'
import { metrics as otelGlobal, type Attributes, type Meter } from '@opentelemetry/api'
import { DataPointType, MeterProvider, MetricReader, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics'
import { Type } from '@sinclair/typebox'
import views, { APIView, Get, configureApp } from '../lib/index.js'
import { ConfigurationError } from '../lib/errors.js'
import { prometheusMetrics, type PrometheusMetrics } from '../lib/prometheus.js'
import { otelMetrics } from '../lib/opentelemetry.js'
import type { Telemetry } from '../lib/routes/telemetry.js'
import { buildApp } from '../examples/app.js'
import { telemetryFromEnvironment } from '../examples/telemetry.js'

// Metrics of view routes (prometheusMetrics, otelMetrics): on the example app, the /metrics text in the
// exposition format (checked by promtool and by a strict parser of this file), request counts by route and
// status class, cache hits and misses, open event streams over a real socket, SQL statement durations; the
// same through an OpenTelemetry MeterProvider; labels that no request can multiply (random paths, ids,
// queries, methods); /metrics flooded while the API serves; two apps on one registry; option mistakes; the
// example's METRICS and TRACING; a meter that throws.
//
// Timing bounds are generous on purpose (seconds, not milliseconds): the suite runs two files at a time
// on a 2-core CI machine, and what they guard against is a hang or starvation, not slowness.

/** The name of the library's SQL statements' tracing channel (`tracing:fastify-views:sql:start`...). */
const SQL_CHANNEL = 'fastify-views:sql'
const sqlChannel = tracingChannel(SQL_CHANNEL)

// ---------------------------------------------------------------------------------------------------
// The exposition format: a strict parser (every line accounted for), and promtool when it is installed.

interface Sample { name: string, labels: Record<string, string>, value: number }
interface Exposition { text: string, samples: Sample[], types: Map<string, string> }

const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*/
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*/
const NUMBER = /^(?:[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?Inf|NaN)$/
const TYPES = ['counter', 'gauge', 'histogram', 'summary', 'untyped']
const HISTOGRAM_PARTS = ['_bucket', '_sum', '_count']

const seriesKey = (name: string, labels: Record<string, string>): string =>
  `${name}${JSON.stringify(Object.entries(labels).sort(([a], [b]) => a < b ? -1 : 1))}`

/**
 * Parses text format 0.0.4 as Prometheus reads it, and refuses what it would refuse or misread: a line
 * that is neither a comment nor a sample, a malformed label or escape, a value that is no number, a sample
 * of no declared family, a family split in two, a series given twice, a histogram whose buckets do not
 * add up to its count, a text without its final line feed.
 */
function parseExposition (text: string): Exposition {
  if (text !== '' && !text.endsWith('\n')) throw new Error('the text does not end with a line feed')
  const lines = text.split('\n').slice(0, -1)
  const types = new Map<string, string>()
  const helps = new Set<string>()
  const samples: Sample[] = []
  const series = new Set<string>()
  const finished = new Set<string>()
  let current: string | undefined
  let n = 0
  const fail = (why: string): never => { throw new Error(`line ${n + 1}: ${why}: ${JSON.stringify(lines[n])}`) }
  const enter = (family: string): void => {
    if (family === current) return
    if (finished.has(family)) fail(`the lines of ${family} are not together`)
    if (current !== undefined) finished.add(current)
    current = family
  }
  const familyOf = (name: string): string | undefined => {
    if (types.has(name)) return name
    const part = HISTOGRAM_PARTS.find((suffix) => name.endsWith(suffix))
    const base = part === undefined ? undefined : name.slice(0, -part.length)
    return base !== undefined && (types.get(base) === 'histogram' || types.get(base) === 'summary') ? base : undefined
  }
  for (; n < lines.length; n++) {
    const line = lines[n]
    if (line === '') continue
    if (line.startsWith('#')) {
      const meta = /^# (HELP|TYPE) (\S+)(?: (.*))?$/.exec(line)
      if (meta === null) continue // a plain comment
      const [, kind, name, rest = ''] = meta
      if (METRIC_NAME.exec(name)?.[0] !== name) fail('not a metric name')
      enter(name)
      if (kind === 'HELP') {
        if (helps.has(name)) fail('a second HELP')
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) fail('an escape HELP cannot have')
        helps.add(name)
      } else {
        if (types.has(name)) fail('a second TYPE')
        if (!TYPES.includes(rest)) fail('an unknown type')
        if (samples.some((sample) => familyOf(sample.name) === name)) fail('a TYPE after its samples')
        types.set(name, rest)
      }
      continue
    }
    const name = METRIC_NAME.exec(line)?.[0] ?? fail('not a sample')
    let i = name.length
    const labels: Record<string, string> = {}
    if (line[i] === '{') {
      i++
      while (line[i] !== '}') {
        const label = LABEL_NAME.exec(line.slice(i))?.[0] ?? fail('not a label name')
        i += label.length
        if (line.slice(i, i + 2) !== '="') fail('a label without ="')
        i += 2
        let value = ''
        for (;;) {
          const c = line[i] ?? fail('an unterminated label value')
          if (c === '"') break
          if (c === '\\') {
            const escaped = ({ '\\': '\\', '"': '"', n: '\n' } as Record<string, string>)[line[i + 1]] ?? fail('an unknown escape')
            value += escaped
            i += 2
          } else {
            value += c
            i++
          }
        }
        i++
        if (Object.hasOwn(labels, label)) fail(`label ${label} twice`)
        labels[label] = value
        if (line[i] === ',') i++
        else if (line[i] !== '}') fail('labels not separated by a comma')
      }
      i++
    }
    const tail = /^ (\S+)(?: -?\d+)?$/.exec(line.slice(i)) ?? fail('no value')
    if (!NUMBER.test(tail[1])) fail('a value that is not a number')
    const family = familyOf(name) ?? fail('a sample of no declared family')
    enter(family)
    const type = types.get(family)
    if (type === 'histogram') {
      if (name === family) fail('a histogram sample without _bucket, _sum or _count')
      if ((name === `${family}_bucket`) !== Object.hasOwn(labels, 'le')) fail('le on a sample that is not a bucket, or a bucket without le')
    } else if (name !== family) fail(`a sample named otherwise than its ${type ?? 'untyped'} family`)
    const key = seriesKey(name, labels)
    if (series.has(key)) fail('a series given twice')
    series.add(key)
    samples.push({ name, labels, value: Number(tail[1].replace(/Inf$/, 'Infinity')) })
  }
  checkHistograms(samples, types)
  return { text, samples, types }
}

/** Every histogram series: buckets that only grow with `le`, a +Inf bucket equal to its `_count`, and a `_sum`. */
function checkHistograms (samples: Sample[], types: Map<string, string>): void {
  for (const [family, type] of types) {
    if (type !== 'histogram') continue
    const buckets = new Map<string, Array<[number, number]>>()
    for (const { name, labels, value } of samples) {
      if (name !== `${family}_bucket`) continue
      const { le, ...rest } = labels
      const key = seriesKey(family, rest)
      buckets.set(key, [...buckets.get(key) ?? [], [Number(le.replace(/Inf$/, 'Infinity')), value]])
    }
    for (const [key, points] of buckets) {
      points.sort(([a], [b]) => a - b)
      if (points.some(([, count], i) => i > 0 && count < points[i - 1][1])) throw new Error(`${key}: buckets that shrink`)
      const [le, total] = points[points.length - 1]
      const labels = Object.fromEntries(JSON.parse(key.slice(family.length)) as Array<[string, string]>)
      const count = valueOf(samples, `${family}_count`, labels)
      if (le !== Infinity || total !== count) throw new Error(`${key}: the +Inf bucket (${total}) is not the count (${count})`)
      if (valueOf(samples, `${family}_sum`, labels) === undefined) throw new Error(`${key}: no _sum`)
    }
  }
}

/** The value of the one sample with this name and exactly these labels; `undefined` when there is none. */
function valueOf (samples: Sample[], name: string, labels: Record<string, string>): number | undefined {
  const key = seriesKey(name, labels)
  const found = samples.filter((sample) => seriesKey(sample.name, sample.labels) === key)
  if (found.length > 1) throw new Error(`${key} twice`)
  return found[0]?.value
}

/** Every series of the text, as Prometheus would store it (a bucket is a series of its own). */
const seriesOf = (exposition: Exposition): string[] => exposition.samples.map((s) => seriesKey(s.name, s.labels)).sort()

let promtoolFound: boolean | undefined
/** `promtool check metrics < text`: its exit code and what it printed, or `undefined` when it is not installed. */
function promtool (text: string): { status: number | null, output: string } | undefined {
  if (promtoolFound === false) return undefined
  const run = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8', timeout: 30_000 })
  if (run.error !== undefined && 'code' in run.error && run.error.code === 'ENOENT') {
    promtoolFound = false
    return undefined
  }
  if (run.error !== undefined) throw run.error
  promtoolFound = true
  return { status: run.status, output: `${run.stdout}${run.stderr}`.trim() }
}

/**
 * The text is valid: the strict parser above reads it (always), and promtool accepts it. promtool exits 1
 * for text it cannot parse and 3 for lint problems (no HELP, a counter without `_total`...): the library
 * writes every metric with its HELP and its conventional name, so anything but 0 is a failure. Without
 * promtool on the machine (CI installs it: .ci/run), the parser's verdict stands, and the test says so.
 */
function checkText (t: Test, text: string, what: string): Exposition {
  const exposition = parseExposition(text)
  const checked = promtool(text)
  if (checked === undefined) t.comment(`promtool is not installed: ${what} checked by this file's parser only`)
  else t.equal(checked.status, 0, `promtool check metrics accepts ${what}${checked.output === '' ? '' : `: ${checked.output}`}`)
  return exposition
}

/** GET /metrics: 200 in the exposition format's media type, its text valid. */
async function scrape (t: Test, app: FastifyInstance, what = 'the /metrics text'): Promise<Exposition> {
  const res = await app.inject('/metrics')
  t.equal(res.statusCode, 200, 'GET /metrics answers 200')
  t.equal(res.headers['content-type'], 'text/plain; version=0.0.4; charset=utf-8', 'in the exposition format\'s media type')
  return checkText(t, res.body, what)
}

test('the parser of this file refuses what Prometheus would misread (it stands in for promtool where promtool is missing)', async (t) => {
  const HEAD = '# HELP x An x.\n# TYPE x gauge\n'
  // [what, text, what the parser says, whether promtool refuses it as unparsable too (exit 1; 3 is only lint)]
  const bad: Array<[string, string, RegExp, boolean]> = [
    ['an unterminated label value', `${HEAD}x{a="b} 1\n`, /unterminated label value|no value/, true],
    ['a value that is not a number', `${HEAD}x{a="b"} one\n`, /not a number/, true],
    ['an unknown escape', `${HEAD}x{a="\\t"} 1\n`, /unknown escape/, true],
    ['no final line feed', `${HEAD}x 1`, /line feed/, false],
    ['a series twice', `${HEAD}x{a="1"} 1\nx{a="1"} 2\n`, /twice/, false],
    ['a family split in two', `${HEAD}# HELP y A y.\n# TYPE y gauge\ny 1\nx 2\n`, /not together/, false],
    ['a sample of no family', 'z 1\n', /no declared family/, false],
    ['a histogram whose +Inf bucket is not its count',
      '# HELP h An h.\n# TYPE h histogram\nh_bucket{le="1"} 1\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 3\n', /not the count/, false]
  ]
  for (const [what, text, why, unparsable] of bad) {
    t.throws(() => parseExposition(text), { message: why }, what)
    const checked = unparsable ? promtool(text) : undefined
    if (checked !== undefined) t.equal(checked.status, 1, `promtool cannot parse it either: ${what}`)
  }
  const good = `${HEAD}x{a="q\\"uote\\\\ and \\n"} -1.5e3\nx 1 1700000000000\n# a comment\n\n`
  t.same(parseExposition(good).samples, [{ name: 'x', labels: { a: 'q"uote\\ and \n' }, value: -1500 }, { name: 'x', labels: {}, value: 1 }])
})

// ---------------------------------------------------------------------------------------------------
// The example, and what a client does to it over a real socket.

interface ExampleOptions {
  cacheUrl?: string
  metrics?: PrometheusMetrics
  telemetry?: Telemetry[]
  logger?: object | false
}

/** The example on SQLite in memory, observed by `metrics` (served on /metrics) or `telemetry`; closed by the test's teardown. */
async function example (t: Test, options: ExampleOptions = {}): Promise<FastifyInstance> {
  const { cacheUrl, metrics, telemetry = metrics === undefined ? [] : [metrics], logger = false } = options
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', logger, cacheUrl, telemetry: { telemetry, metrics } })
  t.teardown(() => app.close())
  return app
}

async function listening (app: FastifyInstance): Promise<number> {
  await app.listen({ port: 0, host: '127.0.0.1' })
  return (app.server.address() as AddressInfo).port
}

/** An open `GET /items/events` on a connection of its own; `leave()` closes it as a client that goes away. */
async function openEvents (port: number): Promise<{ status: number, leave: () => void }> {
  const { req, res } = await new Promise<{ req: ClientRequest, res: IncomingMessage }>((resolve, reject) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/items/events', headers: { accept: 'text/event-stream' }, agent: false },
      (res) => { resolve({ req, res }) })
    req.on('error', reject)
  })
  res.on('error', () => {})
  res.resume()
  return { status: res.statusCode ?? 0, leave: () => { req.destroy() } }
}

/** Waits (20 ms at a time, at most `ms`) until `done` holds; whether it did. */
async function until (done: () => Promise<boolean> | boolean, ms = 10_000): Promise<boolean> {
  for (const started = Date.now(); !(await done()); await wait(20)) {
    if (Date.now() - started > ms) return false
  }
  return true
}

const LIST = { view: 'Items', action: 'list', method: 'GET' }
const RETRIEVE = { view: 'Items', action: 'retrieve', method: 'GET' }
const EVENTS = { view: 'Items', action: 'events' }
/** The labels of a cache lookup: the route's view and action, and the result (no method: reads only). */
const lookup = ({ view, action }: { view: string, action: string }, result: 'hit' | 'miss') => ({ view, action, result })
const REQUESTS = 'fastify_views_request_duration_seconds_count'
const LOOKUPS = 'fastify_views_cache_lookups_total'
const STREAMS = 'fastify_views_event_streams_open'
const STATEMENTS = 'fastify_views_sql_statement_duration_seconds_count'
const SELECT_ITEMS = { database: 'sqlite', operation: 'SELECT', table: 'items' }

/** The sum of every sample of `name` (every label set). */
const total = (exposition: Exposition, name: string): number =>
  exposition.samples.filter((sample) => sample.name === name).reduce((sum, sample) => sum + sample.value, 0)

test('the example with METRICS=prometheus: /metrics in the exposition format, counts that move with requests, cache, streams and SQL', async (t) => {
  const metrics = prometheusMetrics()
  const app = await example(t, { cacheUrl: 'memory', metrics })
  const port = await listening(app)

  const empty = await scrape(t, app, 'the text before any request')
  t.same([...empty.types], [
    ['fastify_views_request_duration_seconds', 'histogram'],
    ['fastify_views_cache_lookups_total', 'counter'],
    ['fastify_views_event_streams_open', 'gauge'],
    ['fastify_views_sql_statement_duration_seconds', 'histogram']
  ], 'the four metrics, each with its type, before anything is recorded')
  t.equal(total(empty, REQUESTS), 0)

  // Requests: N reads of the list, one series by view, action, method and status class.
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 3 } })).statusCode, 201)
  const N = 7
  for (let i = 0; i < N; i++) t.equal((await app.inject('/items?page_size=5')).statusCode, 200)
  let now = await scrape(t, app)
  t.equal(valueOf(now.samples, REQUESTS, { ...LIST, status_class: '2xx' }), N, `${N} lists: count ${N}`)
  t.equal(valueOf(now.samples, REQUESTS, { view: 'Items', action: 'create', method: 'POST', status_class: '2xx' }), 1, 'the create')
  t.equal(valueOf(now.samples, LOOKUPS, lookup(LIST, 'miss')), 1, 'the first list read missed the cache')
  t.equal(valueOf(now.samples, LOOKUPS, lookup(LIST, 'hit')), N - 1, 'and the others hit it')
  const sum = valueOf(now.samples, 'fastify_views_request_duration_seconds_sum', { ...LIST, status_class: '2xx' }) ?? -1
  t.ok(sum > 0 && sum < N * 30, `the durations are seconds, not milliseconds: ${sum} s for ${N} requests`)
  t.same([...new Set(now.samples.filter((sample) => sample.name === REQUESTS).map((sample) => sample.labels.view))], ['Items'],
    'GET /metrics, not a view route, is not counted')

  // A HEAD is its GET's operation; a 404 of a view route counts under 4xx.
  t.equal((await app.inject({ method: 'HEAD', url: '/items?page_size=5' })).statusCode, 200)
  t.equal((await app.inject('/items/999')).statusCode, 404)
  now = await scrape(t, app)
  t.equal(valueOf(now.samples, REQUESTS, { ...LIST, status_class: '2xx' }), N + 1, 'a HEAD counts as the GET it is')
  t.notOk(now.samples.some((sample) => sample.labels.method === 'HEAD'), 'and makes no series of its own')
  t.equal(valueOf(now.samples, REQUESTS, { ...RETRIEVE, status_class: '4xx' }), 1, 'GET /items/999: one 4xx')
  t.equal(valueOf(now.samples, REQUESTS, { ...RETRIEVE, status_class: '2xx' }), undefined, 'and no 2xx')

  // Cache lookups of one item: MISS, then HIT.
  const before = { miss: valueOf(now.samples, LOOKUPS, lookup(RETRIEVE, 'miss')) ?? 0, hit: valueOf(now.samples, LOOKUPS, lookup(RETRIEVE, 'hit')) ?? 0 }
  const first = await app.inject('/items/1')
  const again = await app.inject('/items/1')
  t.same([first.statusCode, first.headers['x-cache'], again.statusCode, again.headers['x-cache']], [200, 'MISS', 200, 'HIT'])
  now = await scrape(t, app)
  t.equal(valueOf(now.samples, LOOKUPS, lookup(RETRIEVE, 'miss')), before.miss + 1, 'the first read of /items/1: a miss')
  t.equal(valueOf(now.samples, LOOKUPS, lookup(RETRIEVE, 'hit')), before.hit + 1, 'the second: a hit')

  // SQL statements: SELECT on items, counted as the cache misses read.
  const selects = valueOf(now.samples, STATEMENTS, SELECT_ITEMS) ?? 0
  t.ok(selects > 0, `SELECT items is recorded (${selects})`)
  for (let page = 1; page <= 3; page++) t.equal((await app.inject(`/items?page=${page}&page_size=2`)).headers['x-cache'], 'MISS')
  now = await scrape(t, app)
  t.ok((valueOf(now.samples, STATEMENTS, SELECT_ITEMS) ?? 0) >= selects + 3, 'three uncached reads: at least three more SELECTs')
  t.ok((valueOf(now.samples, STATEMENTS, { database: 'sqlite', operation: 'INSERT', table: 'items' }) ?? 0) >= 1, 'the create\'s INSERT')
  t.notOk(now.samples.some((sample) => sample.labels.table !== undefined && /\?|\d|\s/.test(sample.labels.table)),
    'a table label is a table\'s name, never a statement or a value')

  // An event stream over a real socket: open while the client reads, closed once it leaves.
  t.equal(valueOf(now.samples, STREAMS, EVENTS) ?? 0, 0, 'no stream open yet')
  const stream = await openEvents(port)
  t.equal(stream.status, 200)
  now = await scrape(t, app, 'the text with a stream open')
  t.equal(valueOf(now.samples, STREAMS, EVENTS), 1, 'one stream open')
  const second = await openEvents(port)
  t.equal(valueOf((await scrape(t, app)).samples, STREAMS, EVENTS), 2, 'two')
  stream.leave()
  second.leave()
  let last: Exposition = now
  t.ok(await until(async () => valueOf((last = await scrape(t, app)).samples, STREAMS, EVENTS) === 0), 'back to 0 once the clients left')
  t.equal(valueOf(last.samples, REQUESTS, { ...EVENTS, method: 'GET', status_class: '2xx' }), 2, 'each stream a request, counted when it ended')

  // The application closing with a stream open ends it: the gauge does not stay at 1.
  await openEvents(port)
  t.equal(valueOf((await scrape(t, app)).samples, STREAMS, EVENTS), 1)
  await app.close()
  const closed = checkText(t, await metrics.registry.metrics(), 'the registry\'s text after the app closed')
  t.equal(valueOf(closed.samples, STREAMS, EVENTS), 0, 'the stream the app closed is no longer open')
})

// ---------------------------------------------------------------------------------------------------
// OpenTelemetry.

/** A reader collected on demand: what an exporter would be sent. */
class CollectingReader extends MetricReader {
  protected override async onShutdown (): Promise<void> {}
  protected override async onForceFlush (): Promise<void> {}
  async metrics (): Promise<MetricData[]> {
    const { resourceMetrics, errors } = await this.collect()
    if (errors.length > 0) throw new AggregateError(errors)
    return resourceMetrics.scopeMetrics.flatMap((scope) => scope.metrics)
  }
}

/** The data points of instrument `name` whose attributes include `attributes`. */
type Point = { attributes: Attributes, value: unknown }
function points (all: MetricData[], name: string, attributes: Attributes = {}): Point[] {
  const metric = all.find((each) => each.descriptor.name === name)
  if (metric === undefined) return []
  return (metric.dataPoints as Point[])
    .filter((point) => Object.entries(attributes).every(([key, value]) => point.attributes[key] === value))
}
const countOf = (all: MetricData[], name: string, attributes: Attributes): number =>
  points(all, name, attributes).reduce((sum, point) => sum + (point.value as Histogram).count, 0)
const sumOf = (all: MetricData[], name: string, attributes: Attributes): number =>
  points(all, name, attributes).reduce((sum, point) => sum + (point.value as number), 0)

const OTEL_LIST = { 'fastify_views.view': 'Items', 'fastify_views.action': 'list', 'http.request.method': 'GET', 'http.route': '/items' }
const OTEL_RETRIEVE = { 'fastify_views.view': 'Items', 'fastify_views.action': 'retrieve', 'http.request.method': 'GET', 'http.route': '/items/:id' }
const OTEL_EVENTS = { 'fastify_views.view': 'Items', 'fastify_views.action': 'events', 'http.request.method': 'GET', 'http.route': '/items/events' }

test('otelMetrics through an SDK MeterProvider: the four instruments, their attributes, values that move', async (t) => {
  const reader = new CollectingReader()
  const provider = new MeterProvider({ readers: [reader] })
  t.teardown(() => provider.shutdown())
  const app = await example(t, { cacheUrl: 'memory', telemetry: [otelMetrics({ meter: provider.getMeter('shop') })] })
  const port = await listening(app)

  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 3 } })).statusCode, 201)
  for (let i = 0; i < 4; i++) t.equal((await app.inject('/items')).statusCode, 200)
  t.equal((await app.inject('/items/999')).statusCode, 404)
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'MISS')
  t.equal((await app.inject('/items/1')).headers['x-cache'], 'HIT')
  let all = await reader.metrics()

  const byName = new Map(all.map((metric) => [metric.descriptor.name, metric]))
  const duration = byName.get('fastify_views.request.duration')
  t.match(duration, { descriptor: { unit: 's' }, dataPointType: DataPointType.HISTOGRAM }, 'request duration: a histogram in seconds')
  t.match(byName.get('fastify_views.cache.lookups'), { dataPointType: DataPointType.SUM, isMonotonic: true }, 'cache lookups: a counter')
  t.match(byName.get('db.client.operation.duration'), { descriptor: { unit: 's' }, dataPointType: DataPointType.HISTOGRAM }, 'statements: a histogram in seconds')
  const lists = points(all, 'fastify_views.request.duration', { ...OTEL_LIST, 'fastify_views.status_class': '2xx' })
  t.equal(lists.length, 1, 'one data point for the list\'s 2xx')
  const { boundaries } = (lists[0].value as { buckets: { boundaries: number[] } }).buckets
  t.same(boundaries.slice(0, 4), [0.005, 0.01, 0.025, 0.05],
    'boundaries in seconds, as the semantic conventions advise, not the SDK\'s default made for milliseconds')
  t.same(Object.keys(lists[0].attributes).sort(),
    ['fastify_views.action', 'fastify_views.status_class', 'fastify_views.view', 'http.request.method', 'http.route'], 'with exactly the route\'s attributes')
  t.equal((lists[0].value as Histogram).count, 4, 'four lists')
  const seconds = (lists[0].value as Histogram).sum ?? -1
  t.ok(seconds > 0 && seconds < 120, `in seconds (${seconds})`)
  t.equal(countOf(all, 'fastify_views.request.duration', { ...OTEL_RETRIEVE, 'fastify_views.status_class': '4xx' }), 1, 'the 404: one 4xx')
  t.equal(sumOf(all, 'fastify_views.cache.lookups', { ...OTEL_LIST, 'fastify_views.cache.result': 'miss' }), 1, 'list: one miss')
  t.equal(sumOf(all, 'fastify_views.cache.lookups', { ...OTEL_LIST, 'fastify_views.cache.result': 'hit' }), 3, 'and three hits')
  t.equal(sumOf(all, 'fastify_views.cache.lookups', { ...OTEL_RETRIEVE, 'fastify_views.cache.result': 'hit' }), 1, '/items/1 again: a hit')
  const selects = points(all, 'db.client.operation.duration', { 'db.operation.name': 'SELECT', 'db.collection.name': 'items' })
  t.equal(selects.length, 1, 'SELECT on items: one data point')
  t.same(selects[0].attributes, { 'db.system.name': 'sqlite', 'db.operation.name': 'SELECT', 'db.collection.name': 'items' },
    'with the semantic conventions\' attributes')
  const selected = (selects[0].value as Histogram).count
  t.same(points(all, 'db.client.operation.duration', { 'db.operation.name': 'BEGIN' }).map((point) => point.attributes),
    [{ 'db.system.name': 'sqlite', 'db.operation.name': 'BEGIN' }], 'a statement of no table has no db.collection.name')

  t.equal((await app.inject('/items?page=2')).statusCode, 200)
  const stream = await openEvents(port)
  t.equal(stream.status, 200)
  all = await reader.metrics()
  t.ok(countOf(all, 'db.client.operation.duration', { 'db.operation.name': 'SELECT', 'db.collection.name': 'items' }) > selected,
    'an uncached read: more SELECTs')
  t.match(all.find((metric) => metric.descriptor.name === 'fastify_views.event_streams.open'), { dataPointType: DataPointType.SUM, isMonotonic: false },
    'open streams: an up-down counter')
  t.equal(sumOf(all, 'fastify_views.event_streams.open', OTEL_EVENTS), 1, 'one stream open')
  stream.leave()
  t.ok(await until(async () => sumOf(await reader.metrics(), 'fastify_views.event_streams.open', OTEL_EVENTS) === 0), 'none once the client left')
  t.equal(countOf(await reader.metrics(), 'fastify_views.request.duration', { ...OTEL_EVENTS, 'fastify_views.status_class': '2xx' }), 1,
    'and the stream\'s request recorded')
})

test('otelMetrics() without a meter records with the global MeterProvider\'s', async (t) => {
  const reader = new CollectingReader()
  const provider = new MeterProvider({ readers: [reader] })
  t.ok(otelGlobal.setGlobalMeterProvider(provider))
  t.teardown(async () => {
    otelGlobal.disable()
    await provider.shutdown()
  })
  const app = await example(t, { telemetry: [otelMetrics()] })
  t.equal((await app.inject('/items')).statusCode, 200)
  const all = await reader.metrics()
  t.equal(countOf(all, 'fastify_views.request.duration', { ...OTEL_LIST, 'fastify_views.status_class': '2xx' }), 1)
  t.same(all.map((metric) => metric.descriptor.name).sort(), ['db.client.operation.duration', 'fastify_views.request.duration'],
    'what was recorded: no cache on this app, no stream open')
})

// ---------------------------------------------------------------------------------------------------
// Adversaries.

/** A string no label of the application's could hold by chance, remembered in `tokens`. */
const randomToken = (tokens: string[]): string => {
  const token = `zq${randomBytes(6).toString('hex')}`
  tokens.push(token)
  return token
}
/** A valid id no row has: the rows are few, and numbered from 1. */
const absentId = (): number => randomInt(1_000_000, 2_147_483_647)

/** Methods Node's parser and Fastify's router know, beyond a view's own. */
const METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'PROPFIND', 'PROPPATCH', 'MKCOL', 'COPY', 'MOVE',
  'LOCK', 'UNLOCK', 'TRACE', 'SEARCH', 'REPORT', 'MKCALENDAR'] as const
type Method = typeof METHODS[number]
const WITHOUT_BODY = new Set<Method>(['GET', 'HEAD', 'OPTIONS', 'TRACE', 'DELETE'])

/** Every shape of hostile request: kind `k` of them, with fresh random values each time it is asked. */
function hostile (tokens: string[], k: number, method: Method): { method: Method, url: string, payload?: object } {
  const token = (): string => randomToken(tokens)
  const body = WITHOUT_BODY.has(method) ? {} : { payload: { name: token(), price: 1 } }
  const urls = [
    () => `/${token()}/${token()}`, // no route: the not-found handler
    () => `/items/${absentId()}`, // a valid id that no row has: 404
    () => `/items/${token()}`, // an invalid id: 400
    () => `/items?${token()}=1`, // a query parameter of no filter
    () => `/items?name=${token()}`, // a filter's value
    () => `/items?sort=${token()}`, // a value the filter refuses
    () => `/items/${token()}/${token()}?${token()}=${token()}`
  ]
  return { method, url: urls[k % urls.length](), ...body }
}

test('no request makes a series: random paths, ids, queries, bodies and methods leave the registry\'s series as they were', async (t) => {
  const metrics = prometheusMetrics()
  const app = await example(t, { cacheUrl: 'memory', metrics })
  const tokens: string[] = []
  // Every shape with every method once: each status class and action a hostile request can reach now has its series.
  for (const method of METHODS) {
    for (let k = 0; k < 7; k++) await app.inject(hostile(tokens, k, method))
  }
  const warmed = await scrape(t, app, 'the text after every shape of request')
  const before = seriesOf(warmed)
  const requestsBefore = total(warmed, REQUESTS)

  const ROUNDS = 2_000
  const statuses = new Map<number, number>()
  for (let i = 0; i < ROUNDS; i++) {
    const res = await app.inject(hostile(tokens, i, METHODS[randomInt(METHODS.length)]))
    statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1)
  }
  t.notOk([...statuses.keys()].some((status) => status >= 500), `no 5xx among ${ROUNDS}: ${JSON.stringify([...statuses])}`)
  // Methods Node's parser refuses, over a real socket: answered 400 before any route, never a series.
  const port = await listening(app)
  for (let i = 0; i < 20; i++) {
    const answer = await rawRequest(port, `${randomToken(tokens).toUpperCase()} /items HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`)
    if (!answer.startsWith('HTTP/1.1 400')) t.fail(`an unknown method: ${answer.split('\r\n')[0]}`)
  }

  const after = await scrape(t, app, `the text after ${ROUNDS} hostile requests`)
  t.same(seriesOf(after), before, `the same ${before.length} series before and after ${tokens.length} random values`)
  // Only view routes are observed: a 404 of no route and a 405 are not (about a sixth of these are a view's).
  t.ok(total(after, REQUESTS) >= requestsBefore + ROUNDS / 20, `the view routes' requests were counted (${total(after, REQUESTS) - requestsBefore} more)`)
  const labelValues = new Set(after.samples.flatMap((sample) => Object.values(sample.labels)))
  const leaked = [...labelValues].filter((value) => tokens.some((token) => value.toLowerCase().includes(token)))
  t.same(leaked, [], `no label value holds a random value (${labelValues.size} distinct values in all)`)
  t.ok(labelValues.size < 100, `label values: the routes', the status classes', the buckets' (${[...labelValues].sort().join(' ')})`)
})

/** Sends `text` on a connection of its own and resolves with all the server answered before it closed. */
async function rawRequest (port: number, text: string): Promise<string> {
  return await new Promise((resolve, reject) => {
    let answer = ''
    const socket = net.connect(port, '127.0.0.1', () => { socket.end(text) })
    socket.setEncoding('utf8')
    socket.on('data', (chunk: string) => { answer += chunk })
    socket.on('close', () => { resolve(answer) })
    socket.on('error', reject)
    socket.setTimeout(10_000, () => { socket.destroy(new Error('no answer within 10 s')) })
  })
}

test('statements an application makes without end (a table per tenant) are summarised into a bounded number of series', async (t) => {
  const metrics = prometheusMetrics()
  const app = Fastify({ logger: false })
  configureApp(app, { telemetry: metrics })
  t.teardown(() => app.close())
  for (let i = 0; i < 400; i++) sqlChannel.traceSync(() => {}, { sql: `SELECT * FROM "tenant_${i}" WHERE "id" = ?`, database: 'sqlite' })
  // The texts remembered are bounded too: past 1,000 they are forgotten, and read again.
  for (let i = 0; i < 1_200; i++) sqlChannel.traceSync(() => {}, { sql: `SELECT * FROM "tenant_1" WHERE "id" = ? LIMIT ${i}`, database: 'sqlite' })
  const exposition = checkText(t, await metrics.registry.metrics(), 'the text after 1,600 distinct statements')
  const statements = exposition.samples.filter((sample) => sample.name === STATEMENTS)
  const tables = new Set(statements.map((sample) => sample.labels.table))
  t.ok(tables.size <= 201, `at most 200 summaries and OTHER: ${tables.size} table values`)
  t.equal(valueOf(exposition.samples, STATEMENTS, { database: 'sqlite', operation: 'OTHER', table: '' }), 200,
    'the 200 statements past the bound counted as OTHER')
  t.equal(valueOf(exposition.samples, STATEMENTS, { database: 'sqlite', operation: 'SELECT', table: 'tenant_1' }), 1_201,
    'the same summary, whatever the text and however many texts were seen')
})

test('the summaries of statements: operation and table as a reader of the SQL sees them, postgres named as OpenTelemetry names it', async (t) => {
  const metrics = prometheusMetrics()
  const app = Fastify({ logger: false })
  configureApp(app, { telemetry: metrics })
  t.teardown(() => app.close())
  const cases: Array<[string, string, string, string]> = [
    ['select id from items', 'sqlite', 'SELECT', 'items'],
    ['  INSERT INTO `orders` (a) VALUES (?)', 'sqlite', 'INSERT', 'orders'],
    ['UPDATE "line items" SET "n" = ? WHERE "id" = ?', 'postgres', 'UPDATE', 'line items'],
    ['DELETE FROM public.items WHERE id = $1', 'postgres', 'DELETE', 'public.items'],
    ['SELECT \'FROM x\' FROM items', 'sqlite', 'SELECT', 'items'],
    ['SELECT count(*) FROM (SELECT id FROM items) AS t', 'sqlite', 'SELECT', ''],
    ['SELECT * FROM items', 'sqlite', 'SELECT', 'items'],
    ['SELECT "unterminated FROM items', 'sqlite', 'SELECT', ''],
    ['SAVEPOINT sp_1', 'sqlite', 'SAVEPOINT', ''],
    ['-- a comment first', 'sqlite', 'OTHER', '']
  ]
  for (const [sql, database] of cases) sqlChannel.traceSync(() => {}, { sql, database })
  // A statement whose driver answers later is timed until its promise settles, rejected or not.
  await sqlChannel.traceSync(async () => { await wait(30) }, { sql: 'SELECT * FROM slow', database: 'sqlite' })
  await sqlChannel.traceSync(async () => { throw new Error('refused') }, { sql: 'SELECT * FROM refused', database: 'sqlite' }).catch(() => {})
  t.throws(() => sqlChannel.traceSync(() => { throw new Error('at once') }, { sql: 'SELECT * FROM thrown', database: 'sqlite' }))
  // An end without its start (a statement under way when the telemetry attached) is not recorded.
  sqlChannel.end.publish({ sql: 'SELECT * FROM unstarted', database: 'sqlite' })
  const exposition = checkText(t, await metrics.registry.metrics(), 'the text of the statements\' summaries')
  // Statements of one summary share a series: the count of each is how many of the cases it summarises.
  const expected = new Map<string, { labels: Record<string, string>, texts: string[] }>()
  for (const [sql, database, operation, table] of cases) {
    const labels = { database: database === 'postgres' ? 'postgresql' : database, operation, table }
    const key = JSON.stringify(labels)
    expected.set(key, { labels, texts: [...expected.get(key)?.texts ?? [], sql] })
  }
  for (const [key, { labels, texts }] of expected) {
    t.equal(valueOf(exposition.samples, STATEMENTS, labels), texts.length, `${texts.map((text) => JSON.stringify(text)).join(', ')}: ${key}`)
  }
  const slow = valueOf(exposition.samples, 'fastify_views_sql_statement_duration_seconds_sum', { database: 'sqlite', operation: 'SELECT', table: 'slow' }) ?? 0
  t.ok(slow >= 0.02, `the slow statement timed until its promise settled: ${slow} s`)
  t.equal(valueOf(exposition.samples, STATEMENTS, { database: 'sqlite', operation: 'SELECT', table: 'refused' }), 1, 'a rejected one too')
  t.equal(valueOf(exposition.samples, STATEMENTS, { database: 'sqlite', operation: 'SELECT', table: 'thrown' }), 1, 'and one that threw')
  t.equal(valueOf(exposition.samples, STATEMENTS, { database: 'sqlite', operation: 'SELECT', table: 'unstarted' }), undefined)
})

test('/metrics flooded while the API serves over a real socket: every API request answered, right and in time; the text stays valid', async (t) => {
  const metrics = prometheusMetrics()
  const app = await example(t, { cacheUrl: 'memory', metrics })
  const port = await listening(app)
  const base = `http://127.0.0.1:${port}`
  const seeded = await fetch(`${base}/items/bulk`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(Array.from({ length: 40 }, (_, i) => ({ name: `Seed ${i}`, price: i })))
  })
  t.equal(seeded.status, 201)

  // 200 scrapes and 120 API requests, interleaved, all in flight at once.
  type Outcome = { kind: 'metrics' | 'api', ok: boolean, ms: number, detail: string, text?: string }
  const timed = async (kind: Outcome['kind'], run: () => Promise<{ ok: boolean, detail: string, text?: string }>): Promise<Outcome> => {
    const started = Date.now()
    const result = await run().catch((error: unknown) => ({ ok: false, detail: String(error) }))
    return { kind, ...result, ms: Date.now() - started }
  }
  const scrapeOnce = () => timed('metrics', async () => {
    const res = await fetch(`${base}/metrics`)
    const text = await res.text()
    return { ok: res.status === 200 && res.headers.get('content-type') === client.Registry.PROMETHEUS_CONTENT_TYPE, detail: `${res.status}`, text }
  })
  let lists = 0
  let calls = 0
  const api = () => timed('api', async () => {
    const i = calls++
    if (i % 6 === 5) {
      const res = await fetch(`${base}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: `Flood ${i}`, price: 1000 + i }) })
      const body = await res.json() as { name?: string }
      return { ok: res.status === 201 && body.name === `Flood ${i}`, detail: `POST ${res.status} ${JSON.stringify(body)}` }
    }
    if (i % 6 === 4) {
      const id = 1 + (i % 40)
      const res = await fetch(`${base}/items/${id}`)
      const body = await res.json() as { id?: number }
      return { ok: res.status === 200 && body.id === id, detail: `GET /items/${id} ${res.status}` }
    }
    lists++
    const page = 1 + (i % 8)
    const res = await fetch(`${base}/items?page_size=5&page=${page}&sort=price`)
    const body = await res.json() as { items?: Array<{ price: number }> }
    const prices = body.items?.map((item) => item.price) ?? []
    return { ok: res.status === 200 && prices.length === 5 && prices.every((price, k) => price === (page - 1) * 5 + k), detail: `GET page ${page} ${res.status} ${JSON.stringify(prices)}` }
  })
  const started = Date.now()
  const runs: Array<Promise<Outcome>> = []
  for (let i = 0; i < 200; i++) {
    runs.push(scrapeOnce())
    if (i % 5 < 3) runs.push(api())
  }
  const outcomes = await Promise.all(runs)
  const elapsed = Date.now() - started
  const apiOutcomes = outcomes.filter((outcome) => outcome.kind === 'api')
  const scrapes = outcomes.filter((outcome) => outcome.kind === 'metrics')
  t.equal(apiOutcomes.length, 120)
  t.same(apiOutcomes.filter((outcome) => !outcome.ok).map((outcome) => outcome.detail), [], 'every API request answered right')
  t.same(scrapes.filter((outcome) => !outcome.ok).map((outcome) => outcome.detail), [], 'every scrape answered 200 in the exposition format')
  // A bound for a hang or starvation, not a measure: 320 requests at once take well under a second here.
  const slowest = Math.max(...apiOutcomes.map((outcome) => outcome.ms))
  t.ok(slowest < 20_000, `the slowest API request took ${slowest} ms (all ${outcomes.length} in ${elapsed} ms)`)
  for (const outcome of scrapes) parseExposition(outcome.text ?? '')
  t.pass('each of the 200 texts parses')
  const final = checkText(t, (await scrapeOnce()).text ?? '', 'the text after the flood')
  t.equal(valueOf(final.samples, REQUESTS, { ...LIST, status_class: '2xx' }), lists, `the ${lists} lists, each counted once`)
  t.equal(valueOf(final.samples, REQUESTS, { view: 'Items', action: 'create', method: 'POST', status_class: '2xx' }), 20, 'the 20 creates')
})

// ---------------------------------------------------------------------------------------------------
// Two applications, one registry.

/** Counts the statements published on the library's channel, independently of any telemetry. */
function statementCounter (): { count: () => number, stop: () => void } {
  let ended = 0
  const subscribers = { start () {}, end () { ended++ }, asyncStart () {}, asyncEnd () {}, error () {} }
  sqlChannel.subscribe(subscribers)
  return { count: () => ended, stop: () => { sqlChannel.unsubscribe(subscribers) } }
}

test('two apps with one prometheusMetrics(): counts add up; once both have closed, statements are no longer heard', async (t) => {
  t.equal(sqlChannel.hasSubscribers, false, 'before: nothing listens to the statements')
  const metrics = prometheusMetrics()
  const one = await example(t, { metrics })
  const two = await example(t, { metrics })
  t.equal(sqlChannel.hasSubscribers, true, 'the telemetry listens while an app uses it')
  const counted = statementCounter()
  for (let i = 0; i < 3; i++) t.equal((await one.inject('/items')).statusCode, 200)
  for (let i = 0; i < 2; i++) t.equal((await two.inject('/items')).statusCode, 200)
  counted.stop()
  let now = await scrape(t, one)
  t.equal(valueOf(now.samples, REQUESTS, { ...LIST, status_class: '2xx' }), 5, '3 lists on one app, 2 on the other: 5')
  t.equal(total(now, STATEMENTS), counted.count(), `each of the ${counted.count()} statements recorded once`)
  t.equal((await two.inject('/metrics')).body, now.text, 'both apps answer the same text')

  await one.close()
  t.equal(sqlChannel.hasSubscribers, true, 'one app closed: the other still records its statements')
  const statements = total(now, STATEMENTS)
  t.equal((await two.inject('/items?page=2')).statusCode, 200)
  now = await scrape(t, two)
  t.ok(total(now, STATEMENTS) > statements, 'the remaining app\'s statements')
  await two.close()
  t.equal(sqlChannel.hasSubscribers, false, 'both closed: nothing listens any more')
  sqlChannel.traceSync(() => {}, { sql: 'SELECT * FROM items', database: 'sqlite' })
  const closed = parseExposition(await metrics.registry.metrics())
  t.equal(total(closed, STATEMENTS), total(now, STATEMENTS), 'a statement after both closed is not recorded')
})

test('a telemetry\'s subscription is given back by its last user only, whatever a user gives back twice', async (t) => {
  const metrics = prometheusMetrics()
  const attach = metrics.attach
  if (attach === undefined) return t.fail('prometheusMetrics() has attach')
  t.equal(sqlChannel.hasSubscribers, false)
  const first = attach()
  const second = attach()
  first()
  first()
  t.equal(sqlChannel.hasSubscribers, true, 'one user gave it back twice: the other still has it')
  sqlChannel.traceSync(() => {}, { sql: 'SELECT * FROM items', database: 'sqlite' })
  second()
  t.equal(sqlChannel.hasSubscribers, false, 'the last user gave it back')
  sqlChannel.traceSync(() => {}, { sql: 'SELECT * FROM items', database: 'sqlite' })
  t.equal(valueOf(parseExposition(await metrics.registry.metrics()).samples, STATEMENTS, SELECT_ITEMS), 1, 'the statement heard meanwhile, once')
})

test('two apps each with prometheusMetrics() on prom-client\'s default register: no "already registered", requests add up', async (t) => {
  t.teardown(() => { client.register.clear() })
  const one = prometheusMetrics({ registry: client.register })
  const two = prometheusMetrics({ registry: client.register })
  const first = await example(t, { metrics: one })
  const second = await example(t, { metrics: two })
  for (let i = 0; i < 3; i++) t.equal((await first.inject('/items')).statusCode, 200)
  for (let i = 0; i < 4; i++) t.equal((await second.inject('/items')).statusCode, 200)
  const now = await scrape(t, second)
  t.equal(valueOf(now.samples, REQUESTS, { ...LIST, status_class: '2xx' }), 7, 'one series, 3 + 4')
  t.equal(now.types.size, 4, 'each metric once in the text')
  t.equal((await first.inject('/metrics')).body, now.text, 'both handlers answer the one registry')
  await first.close()
  await second.close()
  t.equal(sqlChannel.hasSubscribers, false, 'both closed: nothing listens to the statements')
})

test('two apps each with prometheusMetrics() on one registry: each statement recorded once', async (t) => {
  const registry = new client.Registry()
  const one = prometheusMetrics({ registry })
  const two = prometheusMetrics({ registry })
  const first = await example(t, { metrics: one })
  const second = await example(t, { metrics: two })
  const counted = statementCounter()
  t.equal((await first.inject('/items')).statusCode, 200)
  t.equal((await second.inject('/items')).statusCode, 200)
  counted.stop()
  const now = parseExposition(await registry.metrics())
  t.equal(valueOf(now.samples, REQUESTS, { ...LIST, status_class: '2xx' }), 2, 'the requests add up')
  t.equal(total(now, STATEMENTS), counted.count(), `the ${counted.count()} statements of two lists, each once`)
})

test('a registry\'s metrics made with other buckets are kept: a second prometheusMetrics() counts in them', async (t) => {
  const registry = new client.Registry()
  const one = prometheusMetrics({ registry, prefix: 'shop_', buckets: [0.5, 5] })
  const two = prometheusMetrics({ registry, prefix: 'shop_' })
  t.equal(one.registry, two.registry)
  const app = await example(t, { metrics: two })
  t.equal((await app.inject('/items')).statusCode, 200)
  const now = await scrape(t, app)
  t.same(now.samples.filter((sample) => sample.name === 'shop_request_duration_seconds_bucket').map((sample) => sample.labels.le), ['0.5', '5', '+Inf'],
    'the first one\'s buckets, under its prefix')
  t.equal(valueOf(now.samples, 'shop_request_duration_seconds_count', { ...LIST, status_class: '2xx' }), 1)
  t.notOk(now.samples.some((sample) => sample.name.startsWith('fastify_views_')), 'nothing under the default prefix')
})

// ---------------------------------------------------------------------------------------------------
// Mistakes.

/** What `act` threw, as a ConfigurationError FV_ERR_TELEMETRY with exactly `message`. */
async function refused (t: Test, what: string, act: () => unknown, message: string): Promise<void> {
  let thrown: unknown
  try {
    await act()
  } catch (error) {
    thrown = error
  }
  t.ok(thrown instanceof ConfigurationError, `${what}: a ConfigurationError`)
  t.match(thrown, { code: 'FV_ERR_TELEMETRY' }, `${what}: FV_ERR_TELEMETRY`)
  t.equal((thrown as Error | undefined)?.message, message, `${what}: the message names the mistake and the fix`)
}

test('option mistakes: each refused with FV_ERR_TELEMETRY and a message naming the option and the fix', async (t) => {
  const meter = new MeterProvider().getMeter('shop')
  /** An app closed by the test's teardown: a telemetry it took is given back. */
  const fresh = (): FastifyInstance => {
    const app = Fastify({ logger: false })
    t.teardown(() => app.close())
    return app
  }
  await refused(t, 'prometheusMetrics({ prefx })', () => prometheusMetrics({ prefx: 'x' } as never),
    'fastify-views: prometheusMetrics has no option "prefx"; it takes registry, prefix, buckets')
  await refused(t, 'prometheusMetrics with a right option and two wrong ones', () => prometheusMetrics({ prefix: 'a_', bucket: [1], Registry: null } as never),
    'fastify-views: prometheusMetrics has no option "bucket", "Registry"; it takes registry, prefix, buckets')
  await refused(t, 'prometheusMetrics(null)', () => prometheusMetrics(null as never),
    'fastify-views: prometheusMetrics(options) takes an object of options, not null')
  await refused(t, 'otelMetrics({ metre })', () => otelMetrics({ metre: meter } as never),
    'fastify-views: otelMetrics has no option "metre"; it takes meter')
  await refused(t, 'otelMetrics(42)', () => otelMetrics(42 as never),
    'fastify-views: otelMetrics(options) takes an object of options, not 42')
  await refused(t, 'configureApp with {} as the telemetry', () => configureApp(fresh(), { telemetry: {} as never }),
    'fastify-views: telemetry is not a telemetry (an object with observe(route)): give otelTracing(), otelMetrics(), prometheusMetrics() or an object of your own')
  await refused(t, 'configureApp with a list holding the factory itself', () => configureApp(fresh(), { telemetry: [prometheusMetrics(), prometheusMetrics as never] }),
    'fastify-views: telemetry[1] is not a telemetry (an object with observe(route)): give otelTracing(), otelMetrics(), prometheusMetrics() or an object of your own')
  const SECOND = 'fastify-views: the application was configured with one telemetry and is now given another; give it once, ' +
    'in the first configureApp(app, { telemetry }) or the plugin\'s telemetry (a list for several)'
  await refused(t, 'configureApp twice with two telemetries', () => {
    const app = fresh()
    configureApp(app, { telemetry: prometheusMetrics() })
    configureApp(app, { telemetry: prometheusMetrics() })
  }, SECOND)
  await refused(t, 'the plugin\'s telemetry after configureApp\'s', async () => {
    const app = fresh()
    configureApp(app, { telemetry: prometheusMetrics() })
    await app.register(views, { telemetry: otelMetrics({ meter }), views: [] })
  }, SECOND)
  await refused(t, 'a list, then a shorter one', () => {
    const app = fresh()
    const metrics = prometheusMetrics()
    configureApp(app, { telemetry: [metrics, otelMetrics({ meter })] })
    configureApp(app, { telemetry: [metrics] })
  }, SECOND)

  // The same telemetry again (once more, or as the same list) is no mistake.
  const metrics = prometheusMetrics()
  const other = otelMetrics({ meter })
  const app = fresh()
  configureApp(app, { telemetry: metrics })
  t.doesNotThrow(() => configureApp(app, { telemetry: metrics }), 'the same telemetry again')
  t.doesNotThrow(() => configureApp(app, { telemetry: [metrics] }), 'as a list of it')
  const listed = fresh()
  configureApp(listed, { telemetry: [metrics, other] })
  t.doesNotThrow(() => configureApp(listed, { telemetry: [metrics, other] }), 'the same list again')
})

class Ping extends APIView {
  @Get('/', { responseSchema: Type.Object({ pong: Type.Boolean() }) })
  ping () { return { pong: true } }
}

test('the plugin\'s telemetry option observes its views, with or without configureApp', async (t) => {
  for (const configured of [true, false]) {
    const metrics = prometheusMetrics()
    const app = Fastify({ logger: false })
    t.teardown(() => app.close())
    if (!configured) configureApp(app)
    await app.register(views, { telemetry: metrics, views: [{ view: Ping, prefix: '/ping' }], ...configured ? {} : { configureApp: false } })
    app.get('/metrics', metrics.handler)
    t.equal((await app.inject('/ping')).statusCode, 200)
    const now = await scrape(t, app)
    t.equal(valueOf(now.samples, REQUESTS, { view: 'Ping', action: 'ping', method: 'GET', status_class: '2xx' }), 1,
      `configureApp: ${String(configured)}: the view's request counted`)
  }
})

// ---------------------------------------------------------------------------------------------------
// The example's environment.

test('telemetryFromEnvironment: METRICS=prometheus gives /metrics; a value it does not know is refused, naming it', async (t) => {
  const none = await telemetryFromEnvironment({})
  t.same([none.telemetry, none.metrics, none.http], [[], undefined, undefined], 'neither set: no telemetry')
  await none.shutdown()
  const prometheus = await telemetryFromEnvironment({ METRICS: 'prometheus' })
  const { metrics, telemetry } = prometheus
  t.ok(metrics !== undefined && telemetry.length === 1 && telemetry[0] === metrics,
    'METRICS=prometheus: the Prometheus metrics, its only telemetry')
  t.equal(prometheus.http, undefined, 'and no tracing')
  t.type(prometheus.metrics?.handler, 'function')
  await t.rejects(telemetryFromEnvironment({ METRICS: 'prom' }), { message: 'METRICS must be prometheus, not prom' })
  await t.rejects(telemetryFromEnvironment({ METRICS: '' }), { message: 'METRICS must be prometheus, not ' }, 'an empty METRICS is a mistake too')
  await t.rejects(telemetryFromEnvironment({ TRACING: 'foo' }), { message: 'TRACING must be console or otlp, not foo' })
  await t.rejects(telemetryFromEnvironment({ METRICS: 'prometheus', TRACING: 'OTLP' }), { message: 'TRACING must be console or otlp, not OTLP' },
    'refused even beside a right METRICS')

  // What the environment gave serves /metrics on the example.
  const app = await example(t, { metrics: prometheus.metrics })
  t.equal((await app.inject('/items')).statusCode, 200)
  t.equal(valueOf((await scrape(t, app)).samples, REQUESTS, { ...LIST, status_class: '2xx' }), 1)
  const plain = await example(t)
  t.equal((await plain.inject('/metrics')).statusCode, 404, 'without METRICS, no /metrics')
})

// ---------------------------------------------------------------------------------------------------
// Instruments that fail.

test('a meter whose instruments throw: every request still answered, the failure reported once', async (t) => {
  const boom = (): never => { throw new Error('the meter is down') }
  const meter = {
    createHistogram: () => ({ record: boom }),
    createCounter: () => ({ add: boom }),
    createUpDownCounter: () => ({ add: boom })
  } as unknown as Meter
  const logs: Array<Record<string, any>> = []
  const logger = { level: 'warn', stream: { write: (line: string) => { logs.push(JSON.parse(line)) } } }
  const warnings: Error[] = []
  const onWarning = (warning: Error): void => { if (warning.name === 'FastifyViewsTelemetryWarning') warnings.push(warning) }
  process.on('warning', onWarning)
  t.teardown(() => { process.off('warning', onWarning) })
  const app = await example(t, { cacheUrl: 'memory', telemetry: [otelMetrics({ meter })], logger })
  const port = await listening(app)

  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 3 } })
  t.equal(created.statusCode, 201)
  for (let i = 0; i < 5; i++) {
    const res = await app.inject('/items')
    t.same([res.statusCode, res.json().items.length], [200, 1], `list ${i + 1} answered`)
  }
  t.same((await app.inject('/items/1')).json(), created.json(), 'a read answered')
  t.equal((await app.inject('/items/999')).statusCode, 404)
  const stream = await openEvents(port)
  t.equal(stream.status, 200, 'an event stream opens')
  stream.leave()
  const health = await fetch(`http://127.0.0.1:${port}/health`)
  t.same([health.status, await health.json()], [200, { status: 'ok' }], 'the server is up after all of it')
  await wait(50) // process warnings are emitted on the next tick
  const reports = [...logs.map((entry) => String(entry.msg)), ...warnings.map((warning) => warning.message)]
  t.equal(reports.length, 1, `one report for every failure within a minute: ${JSON.stringify(reports)}`)
  t.match(reports[0], /^fastify-views: otelMetrics threw; what it observes goes unrecorded \(reported once a minute\)/)
})

test('a registry holding another metric under one of the names is refused when the metrics are made', async (t) => {
  for (const [name, make] of [
    ['fastify_views_request_duration_seconds', (registry: client.Registry) => new client.Histogram({ name: 'fastify_views_request_duration_seconds', help: 'someone else\'s', labelNames: ['route'], registers: [registry] })],
    ['fastify_views_cache_lookups_total', (registry: client.Registry) => new client.Gauge({ name: 'fastify_views_cache_lookups_total', help: 'someone else\'s', labelNames: ['view', 'action', 'result'], registers: [registry] })],
    ['fastify_views_event_streams_open', (registry: client.Registry) => new client.Gauge({ name: 'fastify_views_event_streams_open', help: 'someone else\'s, of no label', registers: [registry] })]
  ] as const) {
    const registry = new client.Registry()
    make(registry)
    t.throws(() => prometheusMetrics({ registry }), {
      code: 'FV_ERR_TELEMETRY',
      message: new RegExp(`^fastify-views: prometheusMetrics: the registry already has a metric ${name} that is not the library's \\(\\w+ of labels [\\w, ]+\\); give another prefix, or another registry$`)
    }, name)
    t.doesNotThrow(() => prometheusMetrics({ registry, prefix: 'shop_' }), 'another prefix')
  }
})
