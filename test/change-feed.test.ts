import tap, { test, type Test } from 'tap'
import http from 'node:http'
import { spawnSync } from 'node:child_process'
import { mkdtempSync, rmSync } from 'node:fs'
import type { AddressInfo } from 'node:net'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { setTimeout as wait } from 'node:timers/promises'
import pg from 'pg'
import { Type } from '@sinclair/typebox'
import { APIView, Events } from '../lib/index.js'
import type { EventStreamContext } from '../lib/types.js'
import {
  MemoryRepository, asyncRepository, type AsyncRepository, type Criteria, type ListQuery, type Repository
} from '../lib/generics.js'
import { RequestValidationError } from '../lib/errors.js'
import { ChangeFeed, EventHub, SlowSubscriber } from '../lib/streams.js'
import { PostgresRepository, SqliteRepository } from '../lib/stores/sql/index.js'
import { build, caught } from './helpers.js'
import { freshDatabase, postgres, type PgServer } from './pg-server.js'
import { openSqlite, type TestDatabase } from './sqlite-driver.js'

// EventHub (fan-out in the process: order, several subscribers, the ends of a subscription, the bound
// of a slow one) and ChangeFeed (the rows of an append-only log after a Last-Event-ID, page by page,
// then live; notify(); a poll that finds what another connection or process wrote) on memory, SQLite
// and PostgreSQL. Then the proof a feed exists for: a client killed at random points a hundred times
// while rows are appended, each time reconnecting with the id of the last complete event it got,
// receives every row exactly once, in order.

/** One row of an append-only log of changes: `seq` grows with each, in the order they commit. */
const Change = Type.Object({ seq: Type.Integer(), text: Type.String() })
interface ChangeT { seq: number, text: string, tenant?: string }

/** Waits (5 ms at a time, at most `ms`) until `done` holds; whether it did. */
async function until (done: () => boolean, ms = 2_000): Promise<boolean> {
  for (const started = Date.now(); !done(); await wait(5)) {
    if (Date.now() - started > ms) return false
  }
  return true
}

/** The next `count` values of an iterator. */
async function take<T> (iterator: AsyncIterator<T>, count: number): Promise<T[]> {
  const out: T[] = []
  for (let i = 0; i < count; i++) {
    const step = await iterator.next()
    if (step.done === true) break
    out.push(step.value)
  }
  return out
}

/** Whether a step comes within `ms`: a row that must not arrive yet. */
async function settlesWithin<T> (step: Promise<T>, ms: number): Promise<boolean> {
  return await Promise.race([step.then(() => true), wait(ms).then(() => false)])
}

const range = (from: number, to: number): number[] => Array.from({ length: to - from + 1 }, (_, i) => from + i)
const seqs = (rows: ChangeT[]): number[] => rows.map((row) => row.seq)
const BY_SEQ = [{ field: 'seq', descending: false }]
const LATER = 'Later than the newest event of this stream'
/** A log of rows 1 to `last`, `c<seq>` each. */
const logOf = (last: number): ChangeT[] => range(1, last).map((seq) => ({ seq, text: `c${seq}` }))

test('EventHub: every subscriber gets every event, in the order published, the same object to each', async (t) => {
  const hub = new EventHub<{ n: number }>()
  const a = hub.subscribe()
  const b = hub.subscribe()
  t.equal(hub.size, 2)
  const events = [1, 2, 3].map((n) => ({ n }))
  for (const event of events) hub.publish(event)
  const [fromA, fromB] = [await take(a, 3), await take(b, 3)]
  t.same(fromA, events)
  const same = fromA.every((event, i) => event === fromB[i] && event === events[i])
  t.ok(same, 'the object published itself: serialized once for all')
  const waiting = a.next()
  hub.publish({ n: 4 })
  t.same(await waiting, { value: { n: 4 }, done: false }, 'a reader that waits gets the event as it is published')
  // Partly read, then more: the queue keeps its order as it is compacted.
  hub.publish({ n: 5 })
  hub.publish({ n: 6 })
  t.same((await a.next()).value, { n: 5 })
  hub.publish({ n: 7 })
  t.same(await take(a, 2), [{ n: 6 }, { n: 7 }])
  t.same(await take(b, 4), [4, 5, 6, 7].map((n) => ({ n })), 'the other reader, at its own pace')
  t.equal(a[Symbol.asyncIterator](), a, 'a subscription is its own iterator, for for-await')
})

test('EventHub: a subscription ends with its signal or its return(), and the hub forgets it', async (t) => {
  const hub = new EventHub<number>()
  const controller = new AbortController()
  const signalled = hub.subscribe({ signal: controller.signal })
  const returned = hub.subscribe()
  const kept = hub.subscribe()
  t.equal(hub.size, 3)
  const waiting = signalled.next()
  controller.abort()
  t.same(await waiting, { value: undefined, done: true }, 'the waiting reader is answered done')
  t.equal(hub.size, 2)
  hub.publish(1)
  t.same(await signalled.next(), { value: undefined, done: true }, 'and gets nothing published after')

  t.same(await returned.next(), { value: 1, done: false })
  const pending = returned.next()
  t.same(await returned.return?.(), { value: undefined, done: true })
  t.same(await pending, { value: undefined, done: true }, 'return() answers a waiting reader done')
  t.equal(hub.size, 1)

  const aborted = new AbortController()
  aborted.abort()
  const late = hub.subscribe({ signal: aborted.signal })
  t.equal(hub.size, 1, 'a subscription whose signal is already aborted is never added')
  t.same(await late.next(), { value: undefined, done: true })

  const seen: number[] = []
  hub.publish(2)
  for await (const n of kept) {
    seen.push(n)
    if (n === 2) break
  }
  t.same(seen, [1, 2])
  t.equal(hub.size, 0, 'leaving a for-await loop returns the iterator')
})

test('EventHub: a subscriber more than maxQueued events behind is ended with SlowSubscriber, no other', async (t) => {
  const hub = new EventHub<number>()
  const slow = hub.subscribe({ maxQueued: 3 })
  const fast = hub.subscribe()
  for (const n of [1, 2, 3]) hub.publish(n)
  t.equal(hub.size, 2, 'three waiting is the bound, not past it')
  hub.publish(4)
  t.equal(hub.size, 1, 'the fourth ends the slow one')
  const message = 'More than 3 events waited for this subscriber: it reads too slowly, and was ended'
  const refusal = { name: 'SlowSubscriber', message }
  t.match(await caught(() => slow.next()), refusal, 'what waited is dropped, and its next read fails')
  t.ok(await caught(() => slow.next()) instanceof SlowSubscriber, 'and every read after')
  t.same(await take(fast, 4), [1, 2, 3, 4])
  await fast.return?.()

  const byDefault = hub.subscribe()
  for (let n = 0; n < 1000; n++) hub.publish(n)
  t.equal(hub.size, 1, 'a thousand may wait by default')
  hub.publish(1000)
  t.equal(hub.size, 0)
  t.ok(await caught(() => byDefault.next()) instanceof SlowSubscriber)
  for (const maxQueued of [0, -1, 1.5, NaN, Infinity]) {
    const message = `maxQueued is a whole number of events from 1, not ${maxQueued}`
    t.throws(() => hub.subscribe({ maxQueued }), { name: 'RangeError', message })
  }
})

test('ChangeFeed: its options are checked', async (t) => {
  const memory = new MemoryRepository<ChangeT>({ idField: 'seq' })
  for (const [name, value] of [['pageSize', 0], ['poll', 1.5], ['maxQueued', -1], ['pageSize', NaN]] as const) {
    t.throws(() => new ChangeFeed(memory, { key: 'seq', [name]: value }),
      { name: 'RangeError', message: `ChangeFeed: ${name} is a whole number from 1, not ${value}` })
  }
  const feed = new ChangeFeed(memory, { key: 'seq' })
  t.equal(feed.idOf({ seq: 42, text: 'x' }), '42', 'a row\'s id is its key as text')
  t.equal(feed.followers, 0)
  feed.notify() // nobody follows: nothing to read
  t.equal(feed.followers, 0)
})

/** A log of changes in some store, as the cases below write it. */
interface FeedStore {
  name: string
  /** The log as the feed reads it. */
  repository: Repository<ChangeT> | AsyncRepository<ChangeT>
  /** Appends rows (`c<seq>`), each in its own transaction, through the connection the feed reads by. */
  append: (count: number) => Promise<void>
  /** Appends a row through another connection, or another process. */
  appendElsewhere: () => Promise<void>
}

type Log = Repository<ChangeT> | AsyncRepository<ChangeT>

/** A repository whose `list` calls are written down: the reads a feed makes. */
function counting (repository: Log, queries: ListQuery[]): AsyncRepository<ChangeT> {
  return {
    ...repository,
    list: async (criteria: Criteria, query?: ListQuery) => {
      if (query !== undefined) queries.push(query)
      return await repository.list(criteria, query)
    }
  } as unknown as AsyncRepository<ChangeT> // a feed calls only list
}

/** What every store runs: catch-up in pages then live, notify(), a poll that finds another's writes, an empty log. */
async function feedCases (t: Test, open: () => Promise<FeedStore>): Promise<void> {
  await t.test('catch-up a page at a time across page boundaries, then live, none twice', async (t) => {
    const store = await open()
    await store.append(25)
    const queries: ListQuery[] = []
    const feed = new ChangeFeed(counting(store.repository, queries), { key: 'seq', pageSize: 10, poll: 60_000 })
    const controller = new AbortController()
    t.teardown(() => { controller.abort() })
    const rows = feed.follow({ after: '3', signal: controller.signal })[Symbol.asyncIterator]()
    const caughtUp = await take(rows, 22)
    t.same(seqs(caughtUp), range(4, 25), 'every row after 3')
    t.same(caughtUp[0], { seq: 4, text: 'c4' }, 'the rows as the store holds them')
    const pages = queries.filter((query) => query.after !== undefined && query.orderBy[0].descending === false)
    t.ok(pages.length >= 3, `read in pages of 10 (${pages.length} reads after a key)`)
    t.ok(pages.every((query) => query.limit === 10))
    t.equal(feed.followers, 1)
    await store.append(2)
    feed.notify()
    t.same(seqs(await take(rows, 2)), [26, 27], 'then each new row, once')
    controller.abort()
    t.same(await rows.next(), { value: undefined, done: true }, 'the signal ends the follow')
    t.equal(feed.followers, 0)
  })

  await t.test('notify() wakes the poller before its poll; a poll finds what another connection wrote', async (t) => {
    const store = await open()
    await store.append(1)
    const idle = new ChangeFeed(store.repository, { key: 'seq', poll: 60_000 })
    const controller = new AbortController()
    t.teardown(() => { controller.abort() })
    const rows = idle.follow({ after: '1', signal: controller.signal })[Symbol.asyncIterator]()
    const next = rows.next()
    await wait(100)
    await store.append(1)
    t.equal(await settlesWithin(next, 300), false, 'a write the feed is not told of waits for the poll (a minute here)')
    idle.notify()
    idle.notify() // while it looks: it looks once more after
    t.same((await next).value?.seq, 2, 'notify() reads it at once')

    const polling = new ChangeFeed(store.repository, { key: 'seq', poll: 50 })
    const others = polling.follow({ after: '2', signal: controller.signal })[Symbol.asyncIterator]()
    const other = others.next()
    await wait(60)
    await store.appendElsewhere()
    t.equal(await settlesWithin(other, 1_500), true, 'the poll finds a row written elsewhere, untold')
    t.same((await other).value?.seq, 3)
  })

  await t.test('a first connection gets what is written from then on; on an empty log, from the first', async (t) => {
    const store = await open()
    const feed = new ChangeFeed(store.repository, { key: 'seq', poll: 60_000 })
    const controller = new AbortController()
    t.teardown(() => { controller.abort() })
    const fromEmpty = feed.follow({ after: undefined, signal: controller.signal })[Symbol.asyncIterator]()
    const first = fromEmpty.next()
    await wait(30)
    await store.append(3)
    feed.notify()
    const steps = await Promise.all([first, fromEmpty.next(), fromEmpty.next()])
    t.same(steps.map((step) => step.value?.seq), [1, 2, 3], 'an empty log: every row, from the first')
    const fromNow = feed.follow({ after: undefined, signal: controller.signal })[Symbol.asyncIterator]()
    const later = fromNow.next()
    await wait(30)
    await store.append(1)
    feed.notify()
    t.same((await later).value?.seq, 4, 'a first connection to a log with rows: the rows after it came')
    t.same((await fromEmpty.next()).value?.seq, 4)
    t.equal(feed.followers, 2, 'two followers, one poller')
  })

  await t.test('a row published while a follower catches up is sent once', async (t) => {
    const store = await open()
    await store.append(2)
    const feed = new ChangeFeed(store.repository, { key: 'seq', poll: 60_000 })
    const controller = new AbortController()
    t.teardown(() => { controller.abort() })
    const ahead = feed.follow({ after: '2', signal: controller.signal })[Symbol.asyncIterator]()
    const aheadFirst = ahead.next()
    // Subscribed, not yet read: the poller publishes row 3 into its queue, and its catch-up reads row 3 too.
    const behind = feed.follow({ after: '1', signal: controller.signal })[Symbol.asyncIterator]()
    await wait(30)
    await store.append(1)
    feed.notify()
    t.same((await aheadFirst).value?.seq, 3)
    await store.append(1)
    feed.notify()
    t.same(seqs(await take(behind, 3)), [2, 3, 4], 'read while catching up, and skipped when it comes live')
  })
}

test('ChangeFeed on a MemoryRepository', async (t) => {
  const memoryStore = (async: boolean) => async (): Promise<FeedStore> => {
    const memory = new MemoryRepository<ChangeT>({ idField: 'seq' })
    const append = async (count: number): Promise<void> => {
      for (let i = 0; i < count; i++) memory.create({ text: `c${memory.count({}) + 1}` })
    }
    const repository = async ? asyncRepository(memory) : memory
    return { name: 'memory', repository, append, appendElsewhere: () => append(1) }
  }
  await t.test('sync', async (t) => { await feedCases(t, memoryStore(false)) })
  await t.test('async', async (t) => { await feedCases(t, memoryStore(true)) })
})

test('ChangeFeed: a malformed id is refused by follow() itself, one past the newest by its first read', async (t) => {
  const memory = new MemoryRepository<ChangeT>({ idField: 'seq', rows: logOf(5) })
  const feed = new ChangeFeed(memory, { key: 'seq', poll: 60_000 })
  const signal = new AbortController().signal
  for (const after of ['', 'abc', '-1', '1.0', '1'.repeat(16), '٣']) {
    const error = await caught(() => feed.follow({ after, signal }))
    t.ok(error instanceof RequestValidationError, `${JSON.stringify(after)}: thrown at once, before the stream opens`)
    t.match(error, { status: 400, errors: [{ detail: 'Not an event id of this stream', parameter: 'last-event-id' }] })
  }
  t.equal(feed.followers, 0, 'a refused follow subscribes nothing')
  const ahead = feed.follow({ after: '6', signal })[Symbol.asyncIterator]()
  t.match(await caught(() => ahead.next()), { status: 400, errors: [{ detail: LATER }] })
  t.equal(feed.followers, 0, 'and leaves nothing behind')
  const empty = new ChangeFeed(new MemoryRepository<ChangeT>({ idField: 'seq' }), { key: 'seq' })
  const none = empty.follow({ after: '0', signal })[Symbol.asyncIterator]()
  t.match(await caught(() => none.next()), { status: 400, errors: [{ detail: 'This stream has no events yet' }] })
  t.same(seqs(await take(feed.follow({ after: '5', signal: AbortSignal.timeout(50) })[Symbol.asyncIterator](), 1)), [],
    'the newest row is a good id: nothing to catch up')
})

test('ChangeFeed: criteria scope the feed, parse reads ids of its own, a failed poll is tried again', async (t) => {
  const memory = new MemoryRepository<ChangeT>({ idField: 'seq' })
  for (const tenant of ['a', 'b', 'a', 'b', 'a']) memory.create({ text: `for ${tenant}`, tenant })
  let failures = 0
  const repository = {
    list: (criteria: Criteria, query?: ListQuery) => {
      if (failures > 0) {
        failures--
        throw new Error('the database is down')
      }
      return memory.list(criteria, query)
    }
  } as unknown as Repository<ChangeT> // a feed calls only list
  const hex = (id: string): unknown => /^[0-9a-f]{1,8}$/.test(id) ? Number.parseInt(id, 16) : undefined
  const feed = new ChangeFeed(repository, { key: 'seq', criteria: { tenant: 'a' }, parse: hex, poll: 30 })
  const controller = new AbortController()
  t.teardown(() => { controller.abort() })
  const rows = feed.follow({ after: '1', signal: controller.signal })[Symbol.asyncIterator]()
  t.same(seqs(await take(rows, 2)), [3, 5], "only the scope's rows")
  const refused = await caught(() => feed.follow({ after: '1z', signal: controller.signal }))
  t.match(refused, { status: 400 }, 'parse refused it')
  const beyond = feed.follow({ after: '5', signal: controller.signal })[Symbol.asyncIterator]()
  memory.create({ text: 'for b', tenant: 'b' }) // row 6: not in the scope
  failures = 2
  memory.create({ text: 'for a', tenant: 'a' }) // row 7
  feed.notify()
  t.same((await rows.next()).value?.seq, 7, 'after two failed reads, a later poll found it')
  t.equal(failures, 0)
  t.same((await beyond.next()).value?.seq, 7, 'the rows after 5 of the scope, row 6 of another not among them')
  memory.create({ text: 'for b', tenant: 'b' }) // row 8
  const ahead = feed.follow({ after: '8', signal: controller.signal })[Symbol.asyncIterator]()
  t.match(await caught(() => ahead.next()), { status: 400, errors: [{ detail: LATER }] },
    "another scope's newest id is past this scope's newest")
})

test('ChangeFeed: a follow aborted while it catches up stops reading', async (t) => {
  const memory = new MemoryRepository<ChangeT>({ idField: 'seq', rows: logOf(50) })
  const queries: ListQuery[] = []
  const feed = new ChangeFeed(counting(memory, queries), { key: 'seq', pageSize: 5, poll: 60_000 })
  const controller = new AbortController()
  const rows = feed.follow({ after: '0', signal: controller.signal })[Symbol.asyncIterator]()
  t.same(seqs(await take(rows, 7)), range(1, 7))
  const reads = queries.length
  controller.abort()
  t.same(seqs(await take(rows, 10)), [8, 9, 10], 'the page under way is sent, then the follow ends')
  t.equal(queries.length, reads, 'no other page is read')
  t.equal(feed.followers, 0)
})

test('ChangeFeed: the first follower of a feed misses no row written while its poller starts', async (t) => {
  const memory = new MemoryRepository<ChangeT>({ idField: 'seq', rows: logOf(5) })
  let slowStart = true
  // An async store whose reads may run in another order than they were asked (a pool of connections):
  // here the poller's first read, of the newest row, waits for a connection while the follower's run.
  const repository = {
    list: async (criteria: Criteria, query: ListQuery) => {
      if (slowStart && query.limit === 1 && query.orderBy[0].descending) {
        slowStart = false
        await wait(60)
      }
      return memory.list(criteria, query)
    }
  } as unknown as AsyncRepository<ChangeT> // a feed calls only list
  const feed = new ChangeFeed(repository, { key: 'seq', poll: 60_000 })
  const controller = new AbortController()
  t.teardown(() => { controller.abort() })
  const rows = feed.follow({ after: '5', signal: controller.signal })[Symbol.asyncIterator]()
  const first = rows.next()
  await wait(20)
  memory.create({ text: 'c6' }) // after the follower read that 5 is the newest, before the poller looks
  await wait(80)
  memory.create({ text: 'c7' })
  feed.notify()
  t.equal((await first).value?.seq, 6, 'row 6 is sent')
})

/** A new database file in a folder of the test's own, in WAL mode (another connection reads while one writes). */
function sqliteFile (t: Test): () => { file: string, db: TestDatabase } {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-feed-'))
  const opened: TestDatabase[] = []
  t.teardown(() => {
    for (const db of opened) db.close()
    rmSync(dir, { recursive: true, force: true })
  })
  let count = 0
  return () => {
    const file = path.join(dir, `log-${++count}.db`)
    const db = openSqlite(file)
    opened.push(db)
    db.exec('PRAGMA journal_mode = WAL')
    db.exec('PRAGMA synchronous = OFF')
    db.exec('CREATE TABLE IF NOT EXISTS changes (seq INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL)')
    return { file, db }
  }
}

/** Appends a row to the SQLite log in `file` from a process of its own (better-sqlite3: any driver's file will do). */
function appendFromAnotherProcess (file: string, text: string): void {
  const script = "const D = require('better-sqlite3'); const db = new D(process.argv[1]); " +
    "db.prepare('INSERT INTO changes (text) VALUES (?)').run(process.argv[2]); db.close()"
  const result = spawnSync(process.execPath, ['-e', script, file, text], { encoding: 'utf8' })
  if (result.status !== 0) throw new Error(`the other process failed: ${result.stderr}`)
}

const SQLITE_LOG = { table: 'changes', columns: ['seq', 'text'], idColumn: 'seq' } as const

test('ChangeFeed on SQLite', async (t) => {
  const newFile = sqliteFile(t)
  await feedCases(t, async () => {
    const { file, db } = newFile()
    let next = 0
    const insert = db.prepare('INSERT INTO changes (text) VALUES (?)')
    return {
      name: 'sqlite',
      repository: new SqliteRepository<ChangeT>(db, SQLITE_LOG),
      append: async (count) => { for (let i = 0; i < count; i++) insert.run(`c${++next}`) },
      appendElsewhere: async () => { appendFromAnotherProcess(file, `c${++next}`) }
    }
  })
})

/** A ChangeFeed's rows as `change` events, each with its key as id. */
function feedView (feed: ChangeFeed<ChangeT>) {
  async function * asEvents (rows: AsyncIterable<ChangeT>) {
    for await (const row of rows) yield { event: 'change' as const, id: feed.idOf(row), data: row }
  }
  return class Log extends APIView {
    @Events('/events', { events: { change: Change } })
    events (_request: unknown, stream: EventStreamContext) {
      return asEvents(feed.follow({ after: stream.lastEventId, signal: stream.signal }))
    }
  }
}

/** The complete events of a stream's text (a block ends with a blank line; a comment is none), as their rows. */
function rowsOf (text: string): ChangeT[] {
  return text.split('\n\n').slice(0, -1).filter((block) => !block.startsWith(':')).map((block) => {
    const [event, id, data] = block.split('\n')
    const row = JSON.parse(data.slice('data: '.length)) as ChangeT
    if (event !== 'event: change' || id !== `id: ${row.seq}`) throw new Error(`no log event: ${JSON.stringify(block)}`)
    return row
  })
}

interface Session { rows: ChangeT[], killed: boolean }

/**
 * One connection resuming after `lastId`: the complete events it received before it was killed, as a
 * client that crashes would have them (the text cut at `cut.bytes`, or whatever came before `cut.ms`),
 * or, uncut, once `enough` says so.
 */
function session (port: number, lastId: string, cut: { bytes: number, ms: number } | undefined,
  enough: (text: string) => boolean): Promise<Session> {
  return new Promise((resolve, reject) => {
    let text = ''
    let settled = false
    const end = (killed: boolean): void => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      request.destroy()
      try {
        resolve({ rows: rowsOf(text), killed })
      } catch (error) {
        reject(error)
      }
    }
    const headers = { 'last-event-id': lastId }
    const request = http.get({ host: '127.0.0.1', port, path: '/log/events', agent: false, headers }, (res) => {
      if (res.statusCode !== 200) reject(new Error(`${res.statusCode} to Last-Event-ID ${lastId}`))
      res.setEncoding('utf8')
      res.on('data', (chunk: string) => {
        if (settled) return
        text += chunk
        if (cut !== undefined && text.length >= cut.bytes) {
          text = text.slice(0, cut.bytes)
          end(true)
        } else if (enough(text)) end(false)
      })
      res.on('error', () => {})
    })
    request.on('error', (error) => { if (!settled) reject(error) })
    const timer = cut === undefined ? undefined : setTimeout(() => { end(true) }, cut.ms)
  })
}

/**
 * The proof: `produce` appends `total` rows at random intervals (telling the feed of some); a client of
 * an Events route over the feed is killed at `kills` random points (mid-event, before the headers,
 * while idle) and reconnects each time with the id of the last complete event it received. What it
 * received, put together, must be the log exactly: every row once, in order.
 */
async function resumeProof (t: Test, repository: Repository<ChangeT> | AsyncRepository<ChangeT>,
  produce: (total: number, notify: () => void) => Promise<void>, produced: () => Promise<ChangeT[]>,
  { total = 2_000, kills = 100 }: { total?: number, kills?: number } = {}): Promise<void> {
  const started = Date.now()
  // Small pages, so that a client that reconnects far behind catches up across several.
  const feed = new ChangeFeed(repository, { key: 'seq', pageSize: 16, poll: 50 })
  const app = await build({ views: [{ view: feedView(feed), prefix: '/log' }] })
  t.teardown(() => app.close())
  await app.listen({ port: 0, host: '127.0.0.1' })
  const { port } = app.server.address() as AddressInfo
  const producing = produce(total, () => { feed.notify() })
  const received: ChangeT[] = []
  // The log had its first row before the client came: "0" is before it, the start of the log.
  let lastId = '0'
  let producerDone = false
  producing.then(() => { producerDone = true }, () => {})
  let killedWhileProducing = 0
  let killed = 0
  let cutMidEvent = 0
  const last = (): number | undefined => received.at(-1)?.seq
  while (killed < kills || last() !== total) {
    const cut = killed < kills
      ? { bytes: 1 + Math.floor(Math.random() * 3_000), ms: Math.floor(Math.random() * 80) }
      : undefined
    const { rows, killed: wasKilled } = await session(port, lastId, cut, (text) => text.includes(`\nid: ${total}\n`))
    received.push(...rows)
    if (rows.length > 0) lastId = feed.idOf(rows[rows.length - 1])
    if (wasKilled) killed++
    if (wasKilled && rows.length > 0) cutMidEvent++
    if (wasKilled && !producerDone) killedWhileProducing++
  }
  await producing
  const log = await produced()
  t.equal(log.length, total, `the producer appended ${total} rows`)
  t.equal(killed, kills, `the client was killed ${kills} times (${cutMidEvent} of them after some events)`)
  t.ok(killedWhileProducing >= kills / 5, `${killedWhileProducing} of them while rows were being appended`)
  t.equal(new Set(received.map((row) => row.seq)).size, received.length, 'no row received twice')
  const mismatch = received.findIndex((row, i) => row.seq !== log[i]?.seq || row.text !== log[i]?.text)
  t.equal(received.length, log.length, `${received.length} rows received, the log's ${log.length}`)
  t.equal(mismatch, -1, 'the rows received, put together, are the log: in order, none missing')
  if (mismatch !== -1) {
    const seen = new Set(received.map((row) => row.seq))
    t.comment(`missed: ${log.filter((row) => !seen.has(row.seq)).map((row) => row.seq).join(', ')}`)
  }
  await app.close()
  t.ok(await until(() => feed.followers === 0), 'no follower left')
  t.comment(`${total} rows, ${kills} kills: ${Date.now() - started} ms`)
}

test('the resume proof on SQLite: killed 100 times while 2,000 rows are appended, a client misses none', async (t) => {
  const { file, db } = sqliteFile(t)()
  // The writer is another connection: the feed finds its rows by polling, or sooner when told.
  const writer = openSqlite(file)
  t.teardown(() => { writer.close() })
  const insert = writer.prepare('INSERT INTO changes (text) VALUES (?)')
  insert.run('c1')
  const produce = async (total: number, notify: () => void): Promise<void> => {
    for (let n = 2; n <= total; n++) {
      insert.run(`c${n}`)
      if (Math.random() < 0.5) notify()
      // Now and then a burst of rows with no pause between them.
      if (Math.random() < 0.8) await wait(Math.random() * 4)
    }
  }
  const repository = new SqliteRepository<ChangeT>(db, SQLITE_LOG)
  await resumeProof(t, repository, produce, async () => repository.list({}, { orderBy: BY_SEQ }))
})

const database = await postgres()
const pgSkip = { skip: 'skip' in database ? database.skip : false }
if ('server' in database) tap.teardown(() => { database.server.stop() })

/** A PostgreSQL database of the test's own, with its pool, and a second connection: another client's. */
async function pgDatabase (t: Test, server: PgServer, name: string): Promise<{ pool: pg.Pool, other: pg.Client }> {
  const { pool } = await freshDatabase(server, name)
  const other = new pg.Client({ connectionString: server.url.replace(/\/postgres$/, `/${name}`) })
  await other.connect()
  t.teardown(async () => {
    await other.end()
    await pool.end()
  })
  return { pool, other }
}

test('ChangeFeed on PostgreSQL', pgSkip, async (t) => {
  if (!('server' in database)) return
  const { pool, other } = await pgDatabase(t, database.server, 'feed_cases')
  let count = 0
  await feedCases(t, async () => {
    const table = `changes_${++count}`
    await pool.query(`CREATE TABLE ${table} (seq INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, text TEXT NOT NULL)`)
    let next = 0
    return {
      name: 'postgres',
      repository: new PostgresRepository<ChangeT>(pool, { ...SQLITE_LOG, table }),
      append: async (rows) => {
        for (let i = 0; i < rows; i++) await pool.query(`INSERT INTO ${table} (text) VALUES ($1)`, [`c${++next}`])
      },
      appendElsewhere: async () => { await other.query(`INSERT INTO ${table} (text) VALUES ($1)`, [`c${++next}`]) }
    }
  })
})

test('the resume proof on PostgreSQL: concurrent writers through the advisory-lock trigger', pgSkip, async (t) => {
  if (!('server' in database)) return
  const { pool, other } = await pgDatabase(t, database.server, 'feed_proof')
  // The pattern of examples/app.ts: the trigger takes a lock held to the commit before it appends,
  // so that the identity numbers the changes in the order they commit, whatever the writers do.
  await pool.query(`
    CREATE TABLE items (id INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, name TEXT NOT NULL);
    CREATE TABLE changes (seq INTEGER GENERATED ALWAYS AS IDENTITY PRIMARY KEY, text TEXT NOT NULL);
    CREATE FUNCTION item_changed() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
      PERFORM pg_advisory_xact_lock(20261130);
      INSERT INTO changes (text) VALUES ('created ' || NEW.name);
      RETURN NEW;
    END $$;
    CREATE TRIGGER items_changed AFTER INSERT ON items FOR EACH ROW EXECUTE FUNCTION item_changed();`)
  const write = async (client: pg.Pool | pg.Client, name: string): Promise<void> => {
    // Each write its own transaction, held open a moment after its change is appended: without the lock,
    // a later number could commit first.
    await client.query(`BEGIN; INSERT INTO items (name) VALUES ('${name}'); SELECT pg_sleep(random() * 0.002); COMMIT`)
  }
  await write(pool, 'w0-0')
  const produce = async (total: number, notify: () => void): Promise<void> => {
    let next = 1
    // Three writers at once: two through the pool the feed reads by, one on a connection of its own.
    await Promise.all([pool, pool, other].map(async (client, writer) => {
      while (next < total) {
        const n = next++
        await write(client, `w${writer}-${n}`)
        if (client === pool && Math.random() < 0.5) notify()
        await wait(Math.random() * 6)
      }
    }))
  }
  const repository = new PostgresRepository<ChangeT>(pool, { ...SQLITE_LOG, table: 'changes' })
  await resumeProof(t, repository, produce, async () => await repository.list({}, { orderBy: BY_SEQ }))
})
