import t from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { openSqlite } from './sqlite-driver.js'
import { startExample, stopExamples, type ExampleProcess } from './example-process.js'

/**
 * Two processes of the example server (`examples/server.ts`) over one SQLite file, as deployed,
 * under concurrent writes over real HTTP: a write that meets the other process's lock waits for
 * it without failing, and every write is in the file afterwards. Meanwhile a third writer, this
 * test standing for a batch job, holds the write lock for 150 ms at a time: longer than any
 * short busy timeout, far shorter than the repository's budget.
 */
const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-sqlite-scale-'))
const file = path.join(dir, 'shop.db')
t.teardown(async () => {
  await stopExamples()
  rmSync(dir, { recursive: true, force: true })
})

/**
 * Clients per server, the rounds each runs (about 3.5 writes a round) and the items of its bulk
 * writes; the variables make a heavier run for measurement.
 */
const CLIENTS = Number(process.env.SQLITE_SCALE_CLIENTS ?? 16)
const ROUNDS = Number(process.env.SQLITE_SCALE_ROUNDS ?? 28)
const BULK = Number(process.env.SQLITE_SCALE_BULK ?? 5)

interface Row { name: string, price: number }

/** How long the batch job holds the write lock each time, and how long it then leaves it (ms). */
const JOB_HOLD = 150
const JOB_GAP = 350

t.test('two example servers over one SQLite file: thousands of concurrent writes, no 503, every write in the file', async (t) => {
  // Started together, as a supervisor would: both create the table and turn on WAL at once.
  const servers = await Promise.all([startExample('A', { DATABASE_URL: `sqlite:${file}` }), startExample('B', { DATABASE_URL: `sqlite:${file}` })])
  const statuses = new Map<number, number>()
  const unexpected: string[] = []
  let writes = 0
  const send = async (
    server: ExampleProcess,
    method: string,
    url: string,
    expected: number,
    body?: unknown,
    headers: Record<string, string> = {}
  ): Promise<Response> => {
    const response = await fetch(server.url + url, {
      method,
      headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body: JSON.stringify(body) })
    })
    writes++
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1)
    if (response.status !== expected) unexpected.push(`${server.name} ${method} ${url}: ${response.status} ${await response.text()}`)
    return response
  }

  /** One client's writes through one server; the rows it leaves, by id. */
  const client = async (server: ExampleProcess, c: number): Promise<Map<number, Row>> => {
    const rows = new Map<number, Row>()
    for (let i = 0; i < ROUNDS; i++) {
      const name = `${server.name}${c}-${i}`
      const created = await send(server, 'POST', '/items', 201, { name, price: i })
      if (created.status !== 201) continue
      const { id } = await created.json() as { id: number }
      rows.set(id, { name, price: i })
      const put = await send(server, 'PUT', `/items/${id}`, 200, { name, price: i + 0.5 })
      if (put.status !== 200) continue
      rows.set(id, { name, price: i + 0.5 })
      // A conditional write: its check and its write are one transaction.
      const patch = await send(server, 'PATCH', `/items/${id}`, 200, { price: i + 0.25 }, { 'if-match': put.headers.get('etag')! })
      if (patch.status === 200) rows.set(id, { name, price: i + 0.25 })
      if (i % 3 === 0 && (await send(server, 'DELETE', `/items/${id}`, 204)).status === 204) rows.delete(id)
      if (i % 10 === 0) {
        const bulk = await send(server, 'POST', '/items/bulk', 201, Array.from({ length: BULK }, (_, k) => ({ name: `${name}-bulk`, price: k })))
        if (bulk.status !== 201) continue
        const ids = (await bulk.json() as Array<{ id: number, price: number }>).map(({ id, price }) => { rows.set(id, { name: `${name}-bulk`, price }); return id })
        const query = `/items/bulk?name=${encodeURIComponent(`${name}-bulk`)}`
        if (i % 20 === 0) {
          if ((await send(server, 'DELETE', query, 204)).status === 204) for (const id of ids) rows.delete(id)
        } else if ((await send(server, 'PATCH', query, 200, { price: 1 })).status === 200) {
          for (const id of ids) rows.set(id, { name: `${name}-bulk`, price: 1 })
        }
      }
    }
    return rows
  }

  const job = openSqlite(file)
  t.teardown(() => job.close())
  const jobRows = new Map<number, Row>()
  const done = new AbortController()
  const batchJob = (async () => {
    const insert = job.prepare('INSERT INTO items (name, price, updated_at) VALUES (?, ?, ?) RETURNING id')
    for (let n = 0; !done.signal.aborted; n++) {
      job.exec('BEGIN IMMEDIATE')
      const { id } = insert.get(`job-${n}`, n, new Date().toISOString()) as { id: number }
      await new Promise((resolve) => setTimeout(resolve, JOB_HOLD))
      job.exec('COMMIT')
      jobRows.set(id, { name: `job-${n}`, price: n })
      await new Promise((resolve) => setTimeout(resolve, JOB_GAP))
    }
  })()

  const started = performance.now()
  const results = await Promise.all(
    servers.flatMap((server) => Array.from({ length: CLIENTS }, (_, c) => client(server, c)))
  )
  const elapsed = performance.now() - started
  done.abort()
  await batchJob
  results.push(jobRows)

  t.comment(`${writes} writes from ${servers.length} × ${CLIENTS} clients in ${(elapsed / 1000).toFixed(1)} s (${Math.round(writes / elapsed * 1000)}/s), the job holding the lock ${jobRows.size} times; statuses ${JSON.stringify(Object.fromEntries(statuses))}`)
  t.ok(writes >= 3000, `${writes} writes`)
  t.equal(statuses.get(503) ?? 0, 0, 'no write answered 503')
  t.same(unexpected.slice(0, 10), [], 'every write answered its success status')

  const db = openSqlite(file, { readonly: true })
  t.teardown(() => db.close())
  const stored = new Map((db.prepare('SELECT id, name, price FROM items').all() as Array<{ id: number } & Row>).map(({ id, ...row }) => [id, row]))
  const expected = new Map(results.flatMap((rows) => [...rows]))
  t.equal(stored.size, expected.size, `${expected.size} rows, as the clients left them`)
  t.same(Object.fromEntries(stored), Object.fromEntries(expected), 'every row as its last write left it, and no other')
})
