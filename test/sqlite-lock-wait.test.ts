import { test, type Test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { BUSY_ERROR, inTransaction, openSqlite, pragma, scalar, type TestDatabase } from './sqlite-driver.js'
import { Conflict, PreconditionFailed, ServiceUnavailable } from '../lib/errors.js'
import { AsyncSqliteRepository, translateError } from '../lib/stores/sql/index.js'
import { buildApp } from '../examples/app.js'
import { problem } from './helpers.js'

/**
 * A call of `AsyncSqliteRepository` that meets another connection's lock waits for it off the
 * event loop, between whole attempts, and answers 503 only when its budget is spent. Two
 * connections to one file stand for two processes: SQLite locks the file, not the process.
 */

interface Row { id: number, name: string, price: number }

/** A fresh file with a table, and a second connection to it: the other process. */
function files (t: Test): { file: string, other: TestDatabase, open: () => TestDatabase } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-lock-'))
  const file = path.join(dir, 'shop.db')
  const opened: TestDatabase[] = []
  const open = (): TestDatabase => {
    const db = openSqlite(file)
    opened.push(db)
    return db
  }
  const other = open()
  other.exec('PRAGMA journal_mode = WAL')
  other.exec('CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE, price REAL NOT NULL CHECK (price >= 0))')
  other.exec("INSERT INTO items (id, name, price) VALUES (1, 'lamp', 10)")
  t.teardown(() => {
    for (const db of opened) { if (inTransaction(db)) db.exec('ROLLBACK'); db.close() }
    rmSync(dir, { recursive: true, force: true })
  })
  return { file, other, open }
}

const TABLE = { table: 'items', columns: ['id', 'name', 'price'] } as const

/** Holds the other connection's write lock now, and releases it (committing) after `ms`. */
function holdLock (other: TestDatabase, ms: number, meanwhile?: () => void): Promise<number> {
  other.exec('BEGIN IMMEDIATE')
  meanwhile?.()
  return new Promise((resolve) => setTimeout(() => { other.exec('COMMIT'); resolve(performance.now()) }, ms))
}

/** Counts event-loop turns while `work` runs and reports the longest gap between two of them. */
async function ticking<R> (work: Promise<R>): Promise<{ value: R, ticks: number, longestGap: number }> {
  let ticks = 0
  let last = performance.now()
  let longestGap = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longestGap = Math.max(longestGap, now - last)
    last = now
    ticks++
  }, 5)
  try {
    const value = await work
    return { value, ticks, longestGap: Math.max(longestGap, performance.now() - last) }
  } finally {
    clearInterval(timer)
  }
}

test('a write meeting another connection\'s lock waits off the event loop and succeeds once the lock is released', async (t) => {
  const { other, open } = files(t)
  const db = open()
  const items = new AsyncSqliteRepository<Row>(db, TABLE)
  t.equal(pragma(db, 'busy_timeout'), 0, 'each attempt gives up at once: the connection\'s busy timeout is 0')
  t.equal(items.lockTimeout, 5000, 'the default budget')
  const spare = open()
  for (const lockTimeout of [-1, Number.NaN, Infinity]) {
    t.throws(() => new AsyncSqliteRepository<Row>(spare, TABLE, { lockTimeout }), {
      code: 'FV_ERR_SQL_OPTION',
      message: `AsyncSqliteRepository of "items": lockTimeout must be a finite, non-negative number of milliseconds; got ${lockTimeout} (number). ` +
        'Give it in milliseconds: { lockTimeout: 5000 }'
    }, `a budget of ${lockTimeout} is refused`)
  }
  t.throws(() => new AsyncSqliteRepository(spare, { table: 'items; --', columns: ['id'] }), { code: 'FV_ERR_SQL_NAME' })
  t.equal(pragma(spare, 'busy_timeout'), 5000, 'and a refused repository leaves the connection as it was')
  const started = performance.now()
  // Held long enough that a loop blocked for it stands out from the pauses a loaded machine makes anyway (265 ms seen in CI).
  const released = holdLock(other, 800)
  const { value, ticks, longestGap } = await ticking(items.create({ name: 'desk', price: 20 }))
  const answered = performance.now()
  t.match(value, { name: 'desk', price: 20 }, 'the write succeeded')
  t.ok(answered >= await released, `answered after the lock was released (${Math.round(answered - started)} ms)`)
  t.ok(answered - started < 3000, 'and soon after')
  t.ok(ticks >= 10, `the event loop kept turning while the write waited (${ticks} ticks of 5 ms)`)
  t.ok(longestGap < 500, `the longest the loop stood still was ${Math.round(longestGap)} ms, not the 800 ms the lock was held`)
  t.same(other.prepare('SELECT name FROM items ORDER BY id').all(), [{ name: 'lamp' }, { name: 'desk' }], 'written once')
})

test('a bulk call and a conditional write run again whole: the precondition judges the row as the other connection left it', async (t) => {
  const { other, open } = files(t)
  const items = new AsyncSqliteRepository<Row>(open(), TABLE)
  const seen: unknown[] = []
  // Price 10 is the version the client read; the other connection changes it under its lock.
  const precondition = (current: unknown): void => {
    seen.push(current)
    if ((current as Row).price !== 10) throw new PreconditionFailed('The item has changed.')
  }
  const released = holdLock(other, 200, () => other.exec('UPDATE items SET price = 11 WHERE id = 1'))
  const [update, bulk] = await Promise.allSettled([
    items.update({ id: 1 }, { name: 'lamp', price: 12 }, { precondition }),
    items.createMany([{ name: 'chair', price: 1 }, { name: 'table', price: 2 }])
  ])
  await released
  t.ok(update.status === 'rejected' && update.reason instanceof PreconditionFailed, 'the write is refused: 412')
  t.same(seen, [{ id: 1, name: 'lamp', price: 11 }], 'the precondition ran once, on the row as committed by the other connection')
  t.ok(bulk.status === 'fulfilled' && bulk.value.length === 2, 'the bulk create waited, then inserted both items')
  t.same(other.prepare('SELECT name, price FROM items ORDER BY id').all(), [{ name: 'lamp', price: 11 }, { name: 'chair', price: 1 }, { name: 'table', price: 2 }])
})

test('a lock held past the budget: 503 with Retry-After, nothing written, the loop free meanwhile', async (t) => {
  const { other, open } = files(t)
  const items = new AsyncSqliteRepository<Row>(open(), TABLE, { lockTimeout: 250 })
  other.exec('BEGIN IMMEDIATE')
  const started = performance.now()
  const { value: error, longestGap } = await ticking(items.createMany([{ name: 'chair', price: 1 }]).then(() => null, (e: unknown) => e))
  const elapsed = performance.now() - started
  t.ok(error instanceof ServiceUnavailable, 'a 503')
  t.same((error as ServiceUnavailable).headers, { 'retry-after': 1 }, 'with Retry-After')
  t.match((error as ServiceUnavailable).cause, BUSY_ERROR, 'the driver\'s error is its cause')
  t.ok(elapsed >= 250 && elapsed < 1000, `after the budget (${Math.round(elapsed)} ms)`)
  t.ok(longestGap < 150, `the loop stood still at most ${Math.round(longestGap)} ms`)
  other.exec('ROLLBACK')
  t.equal(scalar(other, 'SELECT COUNT(*) AS n FROM items'), 1, 'nothing written')

  const impatient = new AsyncSqliteRepository<Row>(open(), TABLE, { lockTimeout: 0 })
  other.exec('BEGIN IMMEDIATE')
  const at = performance.now()
  await t.rejects(impatient.delete({ id: 1 }), ServiceUnavailable, 'lockTimeout 0: the first busy answer is the 503')
  t.ok(performance.now() - at < 100, 'at once')
  other.exec('ROLLBACK')
})

test('the attempts of a call: one with lockTimeout 0; a wait between two that doubles up to 50 ms', async (t) => {
  const { other, open } = files(t)
  const db = open()
  let begins = 0
  // The connection as the repository uses it, counting the transactions it tries to begin.
  const counted = {
    prepare: (sql: string) => db.prepare(sql),
    exec: (sql: string) => { if (sql === 'BEGIN IMMEDIATE') begins++; db.exec(sql) }
  }
  other.exec('BEGIN IMMEDIATE')
  const impatient = new AsyncSqliteRepository<Row>(counted, TABLE, { lockTimeout: 0 })
  await t.rejects(impatient.transaction(() => null), ServiceUnavailable)
  t.equal(begins, 1, 'lockTimeout 0: one attempt, not a second after a wait of nothing')
  begins = 0
  const patient = new AsyncSqliteRepository<Row>(counted, TABLE, { lockTimeout: 300 })
  await t.rejects(patient.transaction(() => null), ServiceUnavailable)
  // 1-2, 2-4, 4-8, 8-16, 16-32 ms, then 25-50 ms: at most about 18 attempts in 300 ms, each a
  // statement on the connection; a wait that shrank instead would make hundreds.
  t.ok(begins > 1 && begins <= 25, `${begins} attempts in 300 ms`)
  other.exec('ROLLBACK')
})

test('only a busy database is waited for: other failures answer at once', async (t) => {
  const { other, open } = files(t)
  const items = new AsyncSqliteRepository<Row>(open(), TABLE)
  let calls = 0
  await t.rejects(items.update({ id: 1 }, { price: -1 }), Conflict, 'a CHECK failure is a 409 at the first attempt')
  const unavailable = new ServiceUnavailable('Elsewhere.')
  await t.rejects(items.delete({ id: 1 }, { precondition: () => { calls++; throw unavailable } }), unavailable, 'a 503 of another kind is not retried')
  t.equal(calls, 1)
  await t.rejects(items.list({ ghost: 1 }), { code: 'FV_ERR_SQL_NAME' }, 'nor a mistake')
  t.equal(scalar(other, 'SELECT price FROM items'), 10)
})

test('AsyncSqliteRepository: the whole protocol, the declarations the views read, and SQLite\'s extended busy codes', async (t) => {
  const { open } = files(t)
  const items = new AsyncSqliteRepository<Row>(open(), { ...TABLE, optionKeys: ['batch_size'] })
  t.equal(items.atomicPreconditions, true)
  t.same(items.fieldNames, ['id', 'name', 'price'])
  t.equal(items.builder.table, '"items"', 'the builder of its SQL')
  t.same(await items.get({ id: 1 }), { id: 1, name: 'lamp', price: 10 })
  t.equal(await items.create({ name: 'lamp', price: 1 }), null, 'a unique clash on create is null')
  t.same(await items.createMany([{ name: 'desk', price: 20 }, { name: 'chair', price: 5 }]), [{ id: 2, name: 'desk', price: 20 }, { id: 3, name: 'chair', price: 5 }])
  t.same((await items.list({ price__ge: 10 })).map((r) => r.id), [1, 2])
  t.same(await items.listAndCount({}, { orderBy: [{ field: 'price', descending: true }], limit: 1 }, {}), { items: [{ id: 2, name: 'desk', price: 20 }], total: 3 })
  t.equal(await items.count({ price__lt: 10 }), 1)
  t.same(await items.update({ id: 3 }, { price: 6 }), { id: 3, name: 'chair', price: 6 })
  t.same((await items.updateMany({ price: 7 }, { name__in: ['chair', 'desk'], batch_size: 10 })).map((r) => r.price), [7, 7])
  await items.bulkUpdate([{ id: 2, name: 'desk', price: 21 }])
  await items.deleteMany({ name: 'chair' })
  t.equal(await items.delete({ id: 1 }), true)
  t.same(await items.list({}), [{ id: 2, name: 'desk', price: 21 }])
  for (const code of ['SQLITE_BUSY', 'SQLITE_BUSY_SNAPSHOT', 'SQLITE_BUSY_RECOVERY', 'SQLITE_LOCKED_SHAREDCACHE']) {
    t.ok(translateError(Object.assign(new Error(code), { code })) instanceof ServiceUnavailable, `${code} is a 503, not a 500`)
  }
})

test('the example on SQLite: a write waits for another process\'s lock while /health and reads answer; past the budget, a 503 problem', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-busy-'))
  const file = path.join(dir, 'shop.db')
  const app = await buildApp({ databaseUrl: `sqlite:${file}`, sqliteLockTimeout: 400 })
  // The example's driver: another copy of SQLite in this process would not see its locks.
  const other = openSqlite(file, { driver: 'node:sqlite' })
  t.teardown(async () => { await app.close(); if (inTransaction(other)) other.exec('ROLLBACK'); other.close(); rmSync(dir, { recursive: true, force: true }) })
  t.equal((await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 1 } })).statusCode, 201)

  const released = holdLock(other, 250)
  const started = performance.now()
  const write = app.inject({ method: 'POST', url: '/items', payload: { name: 'desk', price: 2 } }).then((r) => ({ r, at: performance.now() }))
  const [health, read] = await Promise.all([app.inject('/health'), app.inject('/items/1')].map((p) => p.then((r) => ({ r, at: performance.now() }))))
  t.equal(health.r.statusCode, 200, '/health answers while the write waits')
  t.ok(health.at - started < 150, `within ${Math.round(health.at - started)} ms`)
  t.equal(read.r.statusCode, 200, 'and so does a read (WAL: readers do not wait for the writer)')
  t.ok(read.at - started < 150, `within ${Math.round(read.at - started)} ms`)
  const written = await write
  t.equal(written.r.statusCode, 201, 'the write succeeds once the lock is released')
  t.ok(written.at >= await released, `after ${Math.round(written.at - started)} ms`)

  other.exec('BEGIN IMMEDIATE')
  const at = performance.now()
  const refused = await app.inject({ method: 'PUT', url: '/items/1', payload: { name: 'lamp', price: 3 } })
  t.equal(problem(t, refused, 503).detail, 'The database is unavailable; try again shortly.', 'a lock held past the budget: 503')
  t.equal(refused.headers['retry-after'], '1')
  t.ok(performance.now() - at >= 400, 'after the budget')
  other.exec('ROLLBACK')
  t.equal((await app.inject('/items/1')).json().price, 1, 'nothing written')
})
