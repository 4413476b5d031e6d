import http, { type ClientRequest, type IncomingHttpHeaders, type IncomingMessage } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Test } from 'tap'
import type { FastifyInstance } from 'fastify'
import { Validator } from '@seriousme/openapi-schema-validator'
import { NASTY } from './sql-cases.js'

/** Every operation of the example's `/items`, as a user would try them in Swagger UI. */
export async function exerciseItems (t: Test, app: FastifyInstance): Promise<void> {
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'Lamp', price: 30 } })
  t.equal(created.statusCode, 201)
  const item = created.json()
  t.equal(created.headers.location, `/items/${item.id}`)
  t.match(item, { name: 'Lamp', price: 30, updated_at: /^\d{4}-\d\d-\d\dT/ })

  const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'Desk', price: 120 }, { name: 'Chair', price: 45 }, { name: 'Chair', price: 50 }] })
  t.equal(bulk.statusCode, 201)
  const page = (await app.inject('/items?page_size=2&sort=-price')).json()
  t.same({ names: page.items.map((i: { name: string }) => i.name), total: page.total_items, pages: page.total_pages, more: page.has_more }, { names: ['Desk', 'Chair'], total: 4, pages: 2, more: true })
  t.equal((await app.inject('/items?name=Chair')).json().total_items, 2)

  const one = await app.inject(`/items/${item.id}`)
  t.same(one.json(), item)
  t.ok(one.headers.etag)
  t.equal(one.headers['last-modified'], new Date(new Date(item.updated_at).setMilliseconds(0)).toUTCString())
  t.equal((await app.inject({ url: `/items/${item.id}`, headers: { 'if-none-match': one.headers.etag as string } })).statusCode, 304)
  t.equal((await app.inject({ url: `/items/${item.id}`, headers: { 'if-modified-since': one.headers['last-modified'] as string } })).statusCode, 304)
  const put = await app.inject({ method: 'PUT', url: `/items/${item.id}`, headers: { 'if-match': one.headers.etag as string }, payload: { name: 'Lamp', price: 25 } })
  t.equal(put.json().price, 25)
  t.equal((await app.inject({ method: 'PUT', url: `/items/${item.id}`, headers: { 'if-match': one.headers.etag as string }, payload: { name: 'Lamp', price: 20 } })).statusCode, 412)
  t.equal((await app.inject({ method: 'PATCH', url: `/items/${item.id}`, payload: { name: 'Desk lamp' } })).json().name, 'Desk lamp')
  t.equal((await app.inject({ method: 'PATCH', url: '/items/bulk?name=Chair', payload: { price: 40 } })).json().length, 2)
  const ids = bulk.json().map((i: { id: number }) => i.id)
  t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: ids[0], name: 'Oak desk', price: 130 }] })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk?name=Chair' })).statusCode, 204)
  t.equal((await app.inject({ method: 'DELETE', url: `/items/${item.id}` })).statusCode, 204)
  t.equal((await app.inject(`/items/${item.id}`)).statusCode, 404)
  t.same((await app.inject('/items')).json().items.map((i: { name: string }) => i.name), ['Oak desk'])
  for (const bad of [{ name: '', price: 1 }, { name: 'x', price: -1 }, { name: 'x'.repeat(101), price: 1 }, { name: 'x' }]) {
    const res = await app.inject({ method: 'POST', url: '/items', payload: bad })
    t.equal(res.statusCode, 400)
    t.match(res.headers['content-type'], /^application\/problem\+json/)
  }
  t.equal((await app.inject({ method: 'DELETE', url: '/items/bulk' })).statusCode, 400, 'a filterless DELETE is refused')
  t.same((await app.inject('/health')).json(), { status: 'ok' })
}

export async function checkDocs (t: Test, app: FastifyInstance): Promise<void> {
  const ui = await app.inject('/docs/')
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/i)
  const doc = (await app.inject('/docs/json')).json()
  t.same(Object.keys(doc.paths).sort(), ['/health', '/items', '/items/bulk', '/items/events', '/items/{id}'])
  t.same(await new Validator().validate(doc), { valid: true })
  // The list in each form it is sent as; each line of NDJSON described by x-itemSchema.
  const list = doc.paths['/items'].get.responses['200'].content
  t.same(Object.keys(list), ['application/json', 'application/x-ndjson', 'application/jsonl', 'application/json; stream=array'])
  // As the page's items: the key always sent, the rest left out by ?fields= or ?omit=.
  t.same(list['application/x-ndjson']['x-itemSchema'].required, ['id'])
  // The events: one schema of an event a name, its data the item or its id.
  const events = doc.paths['/items/events'].get
  t.same(Object.keys(events.responses['200'].content), ['text/event-stream'])
  const kinds = events.responses['200'].content['text/event-stream']['x-itemSchema'].anyOf
  t.same(kinds.map((kind: any) => [kind.properties.event.enum[0], Object.keys(kind.properties.data.properties)]),
    [['created', ['id', 'name', 'price', 'updated_at']], ['updated', ['id', 'name', 'price', 'updated_at']], ['deleted', ['id']]])
  t.ok(events.responses['400'], 'the 400 of a Last-Event-ID the stream cannot read')
  t.ok(events.parameters.some((p: { name: string, in: string }) => p.name === 'last-event-id' && p.in === 'header'), 'the header, documented')
  t.notOk(events.responses['304'], 'no 304 nor validators: every read of a stream is new')
  t.notOk(events.parameters.some((p: { name: string }) => p.name === 'if-none-match'), 'no If-None-Match')
}

/**
 * Every string of `NASTY` as an item name through the example's `/items`: created, read,
 * filtered by `name`, written by PUT and PATCH, by bulk POST and PUT, and selected by the
 * `name` filter of bulk PATCH and DELETE. Each is stored and matched literally; the
 * items that were there before are left as they were.
 */
export async function literalItems (t: Test, app: FastifyInstance): Promise<void> {
  const all = async () => (await app.inject('/items?page_size=100&sort=name')).json()
  const before = await all()
  const byName = async (name: string) => (await app.inject(`/items?name=${encodeURIComponent(name)}&page_size=100`)).json()
  const enc = encodeURIComponent
  const ids: number[] = []
  for (const s of NASTY) {
    const label = JSON.stringify(s)
    const created = await app.inject({ method: 'POST', url: '/items', payload: { name: s, price: 1 } })
    t.equal(created.statusCode, 201, `POST ${label}`)
    const item = created.json()
    ids.push(item.id)
    t.equal(item.name, s, `${label}: stored as sent`)
    t.equal((await app.inject(`/items/${item.id}`)).json().name, s, `${label}: read back`)
    t.same((await byName(s)).items.map((i: { id: number }) => i.id), [item.id], `${label}: ?name= matches it alone`)
    t.equal((await app.inject({ method: 'PUT', url: `/items/${item.id}`, payload: { name: `${s}#put`, price: 2 } })).json().name, `${s}#put`, `${label}: PUT`)
    t.equal((await app.inject({ method: 'PATCH', url: `/items/${item.id}`, payload: { name: s } })).json().name, s, `${label}: PATCH`)
    const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: `${s}#1`, price: 1 }, { name: `${s}#1`, price: 2 }] })
    t.same(bulk.json().map((i: { name: string }) => i.name), [`${s}#1`, `${s}#1`], `${label}: bulk POST`)
    const [b1, b2] = bulk.json().map((i: { id: number }) => i.id)
    t.equal((await app.inject({ method: 'PUT', url: '/items/bulk', payload: [{ id: b1, name: `${s}#2`, price: 3 }] })).statusCode, 204, `${label}: bulk PUT`)
    const patched = await app.inject({ method: 'PATCH', url: `/items/bulk?name=${enc(`${s}#1`)}`, payload: { price: 5 } })
    t.same(patched.json().map((i: { id: number, name: string, price: number }) => [i.id, i.name, i.price]), [[b2, `${s}#1`, 5]], `${label}: bulk PATCH by name`)
    t.equal((await byName(`${s}#2`)).items[0]?.id, b1)
    for (const name of [`${s}#1`, `${s}#2`]) t.equal((await app.inject({ method: 'DELETE', url: `/items/bulk?name=${enc(name)}` })).statusCode, 204, `${label}: bulk DELETE by name`)
    t.equal((await byName(`${s}#1`)).total_items + (await byName(`${s}#2`)).total_items, 0, `${label}: the bulk rows are gone`)
  }
  const after = await all()
  t.equal(after.total_items, before.total_items + NASTY.length, 'the table is intact: the items before, one per string')
  t.same([...after.items.filter((i: { id: number }) => !ids.includes(i.id))], before.items, 'the items before are as they were')
  const names = new Map(after.items.map((i: { id: number, name: string }) => [i.id, i.name]))
  t.same(ids.map((id) => names.get(id)), NASTY, 'each name stored exactly as sent')
  for (const s of NASTY) t.equal((await app.inject({ method: 'DELETE', url: `/items/bulk?name=${enc(s)}` })).statusCode, 204)
  t.equal((await all()).total_items, before.total_items, 'and deleted by name, one by one')
}

/** The address of `app`, listening on a port the system picks (once). */
async function addressOf (app: FastifyInstance): Promise<string> {
  if (!app.server.listening) await app.listen({ port: 0, host: '127.0.0.1' })
  return `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`
}

/** One server-sent event as a client reads it: its name, its id, its data parsed. */
export interface ReadEvent { event: string, id: string, data: any }

/** An open `GET /items/events`: its status and headers, the next `n` events (comments skipped), and how to leave. */
export interface OpenEvents {
  status: number
  headers: IncomingHttpHeaders
  next: (n: number) => Promise<ReadEvent[]>
  close: () => void
}

/**
 * A GET over a connection of its own (no keep-alive: nothing is left open for the app's close to
 * wait on), resolved with the response as soon as its headers arrive.
 */
async function request (
  app: FastifyInstance, path: string, headers: Record<string, string>
): Promise<{ req: ClientRequest, res: IncomingMessage }> {
  const base = new URL(await addressOf(app))
  return await new Promise((resolve, reject) => {
    const req = http.get({ host: base.hostname, port: base.port, path, headers, agent: false }, (res) => {
      resolve({ req, res })
    })
    req.on('error', reject)
  })
}

/** A GET's status, headers and whole body, as text. */
export async function getText (
  app: FastifyInstance, path: string, accept: string
): Promise<{ status: number, headers: IncomingHttpHeaders, body: string }> {
  const { res } = await request(app, path, { accept })
  res.setEncoding('utf8')
  let body = ''
  for await (const chunk of res) body += chunk as string
  return { status: res.statusCode ?? 0, headers: res.headers, body }
}

/**
 * Opens `/items/events` as a browser's EventSource would (with `Last-Event-ID` when it reconnects).
 * `next(n)` waits at most 10 s for `n` more events, and rejects rather than hang.
 */
export async function openEvents (app: FastifyInstance, headers: Record<string, string> = {}): Promise<OpenEvents> {
  const { req, res } = await request(app, '/items/events', { accept: 'text/event-stream', ...headers })
  res.setEncoding('utf8')
  let text = ''
  let ended: string | undefined
  const ready: ReadEvent[] = []
  let wake = (): void => {}
  res.on('data', (chunk: string) => {
    text += chunk
    for (let end = text.indexOf('\n\n'); end !== -1; end = text.indexOf('\n\n')) {
      const block = text.slice(0, end)
      text = text.slice(end + 2)
      const fields = new Map<string, string>()
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue
        const colon = line.indexOf(': ')
        fields.set(line.slice(0, colon), line.slice(colon + 2))
      }
      if (fields.size === 0) continue
      ready.push({ event: fields.get('event') ?? 'message', id: fields.get('id') ?? '', data: JSON.parse(fields.get('data') ?? 'null') })
    }
    wake()
  })
  res.on('close', () => { ended = res.complete ? 'the stream ended' : 'the stream was cut'; wake() })
  const next = async (n: number): Promise<ReadEvent[]> => {
    const deadline = Date.now() + 10_000
    while (ready.length < n) {
      if (ended !== undefined) throw new Error(`${ended} after ${JSON.stringify(ready)}`)
      if (Date.now() > deadline) throw new Error(`no ${n} events within 10 s: ${JSON.stringify(ready)}`)
      await new Promise<void>((resolve) => { wake = resolve; setTimeout(resolve, 100) })
    }
    return ready.splice(0, n)
  }
  return { status: res.statusCode ?? 0, headers: res.headers, next, close: () => { req.destroy() } }
}

/** Each event's id is a whole number greater than the one before (the `seq` of the change log). */
function increasing (events: ReadEvent[], after = 0): boolean {
  let last = after
  for (const { id } of events) {
    if (!/^\d+$/.test(id) || Number(id) <= last) return false
    last = Number(id)
  }
  return true
}

/**
 * `GET /items/events` over a socket: each write of an item through the API arrives as `created`,
 * `updated` or `deleted` with a growing id; a client that reconnects with `Last-Event-ID` gets
 * exactly what it missed, then what comes; an id that is malformed, or later than the newest event,
 * is a 400 before the stream opens.
 */
export async function checkItemEvents (t: Test, app: FastifyInstance): Promise<void> {
  const live = await openEvents(app)
  t.teardown(live.close)
  t.equal(live.status, 200)
  t.equal(live.headers['content-type'], 'text/event-stream; charset=utf-8')
  t.equal(live.headers['cache-control'], 'no-cache')
  const created = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'Watched', price: 1 } })).json()
  const patched = (await app.inject({ method: 'PATCH', url: `/items/${created.id}`, payload: { price: 2 } })).json()
  t.equal((await app.inject({ method: 'DELETE', url: `/items/${created.id}` })).statusCode, 204)
  const seen = await live.next(3)
  t.same(seen.map((e) => [e.event, e.data]), [['created', created], ['updated', patched], ['deleted', { id: created.id }]],
    'each write, as it committed: the item, then its id')
  t.ok(increasing(seen), `ids grow: ${seen.map((e) => e.id).join(', ')}`)
  const bulk = await app.inject({ method: 'POST', url: '/items/bulk', payload: [{ name: 'Pair 1', price: 5 }, { name: 'Pair 2', price: 6 }] })
  const pair = await live.next(2)
  t.same(pair.map((e) => [e.event, e.data]), bulk.json().map((item: unknown) => ['created', item]), 'a bulk write: an event a row, in order')
  t.ok(increasing(pair, Number(seen[2].id)))
  live.close()

  // Away: what is written meanwhile is waiting for the client when it comes back.
  const missed = [
    (await app.inject({ method: 'POST', url: '/items', payload: { name: 'Missed', price: 3 } })).json(),
    (await app.inject({ method: 'PATCH', url: '/items/bulk?name=Pair 1', payload: { price: 9 } })).json()[0]
  ]
  const back = await openEvents(app, { 'last-event-id': pair[1].id })
  t.teardown(back.close)
  const replayed = await back.next(2)
  t.same(replayed.map((e) => [e.event, e.data]), [['created', missed[0]], ['updated', missed[1]]], 'exactly what was missed')
  t.ok(increasing(replayed, Number(pair[1].id)))
  const after = (await app.inject({ method: 'POST', url: '/items', payload: { name: 'After', price: 4 } })).json()
  t.same((await back.next(1)).map((e) => [e.event, e.data]), [['created', after]], 'then what comes, live')
  back.close()
  const fromStart = await openEvents(app, { 'last-event-id': seen[0].id })
  t.teardown(fromStart.close)
  t.same((await fromStart.next(7)).map((e) => e.event), ['updated', 'deleted', 'created', 'created', 'created', 'updated', 'created'],
    'from an older id, everything after it, once')
  fromStart.close()

  // The list's conditional requests do not apply to the events (however the document describes them).
  const conditional = await openEvents(app, { 'if-none-match': '*' })
  t.teardown(conditional.close)
  t.same([conditional.status, conditional.headers.etag], [200, undefined], 'If-None-Match: * is no 304, and no ETag is sent')
  conditional.close()

  // The newest event is `After`'s, the one after the last replayed.
  const newest = Number(replayed[1].id) + 1
  for (const id of ['abc', '-1', '1.5', '0x10', '1e3', '9'.repeat(16), String(newest + 1)]) {
    const refused = await app.inject({ url: '/items/events', headers: { 'last-event-id': id } })
    t.equal(refused.statusCode, 400, `Last-Event-ID ${JSON.stringify(id)}: 400`)
    t.match(refused.headers['content-type'], /^application\/problem\+json/)
    t.match(refused.json(), { detail: 'The Last-Event-ID header is invalid.', errors: [{ in: 'header', parameter: 'last-event-id' }] })
  }
}

/**
 * `GET /items` as NDJSON and as a streamed array over a socket: every item once, in the list's order,
 * with its filters.
 */
export async function checkStreamedItems (t: Test, app: FastifyInstance): Promise<void> {
  // More than the example's 1,000 rows a read: the stream reads three times.
  for (let batch = 0; batch < 3; batch++) {
    const payload = Array.from({ length: 900 }, (_, i) => ({ name: `Bulk ${i % 10}`, price: (batch * 900 + i) % 7 }))
    t.equal((await app.inject({ method: 'POST', url: '/items/bulk', payload })).statusCode, 201)
  }
  const pages: Array<{ id: number, name: string, price: number }> = []
  for (let page = 1; ; page++) {
    const body = (await app.inject(`/items?page_size=100&page=${page}`)).json()
    pages.push(...body.items)
    if (body.has_more !== true) break
  }
  t.ok(pages.length >= 2700)
  const ndjson = await getText(app, '/items', 'application/x-ndjson')
  t.equal(ndjson.headers['content-type'], 'application/x-ndjson; charset=utf-8')
  t.equal(ndjson.headers.vary, 'Accept')
  t.equal(ndjson.headers.etag, undefined, 'no ETag: the body is not known before it is sent')
  const lines = ndjson.body.split('\n')
  t.equal(lines.pop(), '', 'every line ended')
  t.same(lines.map((line) => JSON.parse(line)), pages, 'every item, as the pages send them, in their order')
  const array = await getText(app, '/items?sort=-price&name=Bulk%203', 'application/json; stream=array')
  const dear = pages.filter((i) => i.name === 'Bulk 3').sort((a, b) => b.price - a.price || a.id - b.id)
  t.same(JSON.parse(array.body), dear, 'a filter and a sort: the same rows, ties by id')
  const fields = await getText(app, '/items?fields=name&name=Bulk%205', 'application/jsonl')
  t.same(fields.body.split('\n').filter(Boolean).map((line) => Object.keys(JSON.parse(line))), pages.filter((i) => i.name === 'Bulk 5').map(() => ['id', 'name', 'updated_at']),
    '?fields= cuts each line: the key and the validator are kept')
}
