import { test } from 'tap'
import { readFile, mkdtemp, rm } from 'node:fs/promises'
import net from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Database from 'better-sqlite3'
import { TIMEOUTS, buildApp } from '../examples/app.js'

/**
 * The example's time-outs over real sockets: a client that trickles its body or its headers, or
 * sends nothing, is answered 408 and cut; an idle keep-alive connection is closed; the server
 * serves others meanwhile. The values are made short through buildApp's options so that the
 * test takes seconds; the example's own values are checked against docs/deployment.md.
 */

/** The short values of the test: the whole request in 2 s, its headers in 1 s, checked every 250 ms. */
const SHORT = {
  requestTimeout: 2000,
  keepAliveTimeout: 1000,
  http: { headersTimeout: 1000, connectionsCheckingInterval: 250 }
}
/** Lateness allowed on a loaded machine, on top of the time-out and the checking interval. */
const SLACK = 1000
/** Node keeps an idle keep-alive socket one second longer than it advertises (HTTP_SERVER_KEEP_ALIVE_TIMEOUT_BUFFER). */
const KEEP_ALIVE_BUFFER = 1000

interface Outcome { closedAfter: number, received: string }

/**
 * Connects, writes `first`, then `next` every `every` ms (at most `times` times) while the socket
 * is open; resolves when the server closes it, with what the server sent and when, counted from
 * the connection.
 */
async function client (
  port: number,
  first: string,
  next: string | null,
  every = 700,
  times = Infinity
): Promise<Outcome> {
  return await new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1')
    const started = performance.now()
    let received = ''
    let timer: NodeJS.Timeout | undefined
    socket.once('connect', () => {
      if (first !== '') socket.write(first)
      let sent = 0
      if (next !== null) timer = setInterval(() => { if (socket.writable && sent++ < times) socket.write(next) }, every)
    })
    socket.on('data', (chunk) => { received += chunk.toString() })
    socket.on('error', () => {})
    socket.once('close', () => { clearInterval(timer); resolve({ closedAfter: performance.now() - started, received }) })
  })
}

/** Asserts a raw HTTP answer is the 408 problem document, sent with `Connection: close`. */
function is408 (received: string): boolean {
  const [head, body] = received.split('\r\n\r\n')
  return /^HTTP\/1\.1 408 Request Timeout\r\n/.test(head) &&
    /\r\nContent-Type: application\/problem\+json/i.test(head) && /\r\nConnection: close/i.test(head) &&
    JSON.parse(body).status === 408
}

test('slow clients are answered 408 and cut within the time-out and the checking interval, while /health answers', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', ...SHORT })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as net.AddressInfo
  t.equal(app.server.requestTimeout, 2000, 'the options override the example\'s values')
  t.equal(app.server.headersTimeout, 1000)

  const requestBound = SHORT.requestTimeout + SHORT.http.connectionsCheckingInterval + SLACK
  const headersBound = SHORT.http.headersTimeout + SHORT.http.connectionsCheckingInterval + SLACK
  const bodies = Array.from({ length: 50 }, () => client(port, 'POST /items HTTP/1.1\r\nHost: shop\r\nContent-Type: application/json\r\nContent-Length: 1000000\r\n\r\n{', ' '))
  const headers = Array.from({ length: 50 }, (_, i) => client(port, 'GET /health HTTP/1.1\r\nHost: shop\r\n', `X-Slow-${i}: y\r\n`))
  const silent = Array.from({ length: 10 }, () => client(port, '', null))
  // A GET answered before the content it announced finished arriving (a 200: a GET's content is
  // never read, within bodyLimit it is discarded after the answer): the time-out cuts it without a second answer.
  const answeredEarly = client(port, 'GET /health HTTP/1.1\r\nHost: shop\r\nContent-Length: 1000000\r\n\r\n', ' ')

  // While 110 sockets trickle, other clients are served at once.
  const probes: number[] = []
  const statuses: number[] = []
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 250))
    const started = performance.now()
    statuses.push((await fetch(`http://127.0.0.1:${port}/health`)).status)
    probes.push(performance.now() - started)
  }
  t.same(statuses, [200, 200, 200, 200, 200], '/health is served meanwhile')
  t.ok(Math.max(...probes) < 500, `/health answered in ${probes.map((p) => Math.round(p)).join(', ')} ms while the slow clients held their sockets`)

  const slowBodies = await Promise.all(bodies)
  t.ok(slowBodies.every((o) => o.closedAfter >= SHORT.requestTimeout - 50 && o.closedAfter <= requestBound),
    `50 trickled bodies cut after ${Math.round(Math.min(...slowBodies.map((o) => o.closedAfter)))}-${Math.round(Math.max(...slowBodies.map((o) => o.closedAfter)))} ms (requestTimeout ${SHORT.requestTimeout} + checks every ${SHORT.http.connectionsCheckingInterval})`)
  t.ok(slowBodies.every((o) => is408(o.received)), 'each answered with the 408 problem, Connection: close')

  const slowHeaders = await Promise.all(headers)
  t.ok(slowHeaders.every((o) => o.closedAfter >= SHORT.http.headersTimeout - 50 && o.closedAfter <= headersBound),
    `50 trickled headers cut after ${Math.round(Math.min(...slowHeaders.map((o) => o.closedAfter)))}-${Math.round(Math.max(...slowHeaders.map((o) => o.closedAfter)))} ms (headersTimeout ${SHORT.http.headersTimeout})`)
  t.ok(slowHeaders.every((o) => is408(o.received)), 'each answered with the 408 problem')

  const early = await answeredEarly
  t.equal(early.received.match(/HTTP\/1\.1 \d{3}/g)?.join(), 'HTTP/1.1 200', 'a request answered before its body arrived gets that answer alone, no 408 after it')
  t.ok(early.closedAfter <= requestBound, 'and is cut by the same time-out')

  const quiet = await Promise.all(silent)
  t.ok(quiet.every((o) => o.closedAfter <= headersBound && is408(o.received)), 'a connection that sends nothing is answered 408 and cut by headersTimeout too')
})

test('an idle keep-alive connection is closed after keepAliveTimeout; a request on it before then is served', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', ...SHORT })
  await app.listen({ port: 0, host: '127.0.0.1' })
  t.teardown(() => app.close())
  const { port } = app.server.address() as net.AddressInfo
  const request = 'GET /health HTTP/1.1\r\nHost: shop\r\n\r\n'

  const idle = await Promise.all(Array.from({ length: 10 }, () => client(port, request, null)))
  for (const { received } of idle) {
    t.match(received, /^HTTP\/1\.1 200 OK\r\n[^]*\r\nKeep-Alive: timeout=1\r\n/, 'answered, keep-alive advertised')
    t.notMatch(received, /408/, 'and closed without a 408: nothing was pending')
  }
  const closed = idle.map((o) => o.closedAfter)
  t.ok(closed.every((ms) => ms >= SHORT.keepAliveTimeout && ms <= SHORT.keepAliveTimeout + KEEP_ALIVE_BUFFER + SLACK),
    `10 idle connections closed after ${Math.round(Math.min(...closed))}-${Math.round(Math.max(...closed))} ms (keepAliveTimeout ${SHORT.keepAliveTimeout}, and Node's one second)`)

  // Two requests half a time-out apart share one connection.
  const reused = await client(port, request, request, SHORT.keepAliveTimeout / 2, 1)
  t.equal((reused.received.match(/HTTP\/1\.1 200 OK/g) ?? []).length, 2, 'a connection in use is kept')
  t.ok(reused.closedAfter >= SHORT.keepAliveTimeout * 1.5, 'and closed a time-out after its last request')
})

test('requestTimeout bounds receiving the request, not answering it: a write waiting 2.5 s for a SQLite lock succeeds', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'fastify-views-timeouts-'))
  const file = path.join(dir, 'shop.db')
  const app = await buildApp({ databaseUrl: `sqlite:${file}`, ...SHORT })
  await app.listen({ port: 0, host: '127.0.0.1' })
  const other = new Database(file)
  t.teardown(async () => { await app.close(); if (other.inTransaction) other.exec('ROLLBACK'); other.close(); await rm(dir, { recursive: true, force: true }) })
  const { port } = app.server.address() as net.AddressInfo
  other.exec('BEGIN IMMEDIATE')
  const release = setTimeout(() => other.exec('COMMIT'), 2500)
  t.teardown(() => clearTimeout(release))
  const started = performance.now()
  const created = await fetch(`http://127.0.0.1:${port}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'lamp', price: 1 }) })
  t.equal(created.status, 201, `created after ${Math.round(performance.now() - started)} ms, past requestTimeout (${SHORT.requestTimeout} ms)`)
})

test('the example\'s time-outs are the values docs/deployment.md gives', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const server = app.server as typeof app.server & { connectionsCheckingInterval: number }
  t.same({
    headersTimeout: server.headersTimeout,
    requestTimeout: server.requestTimeout,
    connectionsCheckingInterval: server.connectionsCheckingInterval,
    keepAliveTimeout: server.keepAliveTimeout
  }, TIMEOUTS, 'the server runs with TIMEOUTS')
  t.same(
    TIMEOUTS,
    { headersTimeout: 10_000, requestTimeout: 30_000, connectionsCheckingInterval: 1_000, keepAliveTimeout: 72_000 }
  )
  t.equal(server.timeout, 0, 'no socket inactivity time-out (connectionTimeout): a slow answer is not cut')

  const docs = await readFile(new URL('../docs/deployment.md', import.meta.url), 'utf8')
  for (const [name, ms] of Object.entries(TIMEOUTS)) {
    const row = docs.split('\n').find((line) => line.startsWith(`| \`${name}\` |`))
    t.ok(row, `docs/deployment.md has a row for ${name}`)
    t.match(row, ` | ${ms / 1000} s |`, `and gives ${ms / 1000} s`)
  }
})
