import { test } from 'tap'
import { PostgresRepository, translateError } from '../lib/stores/sql/index.js'
import { Conflict, ServiceUnavailable } from '../lib/errors.js'
import type { PgPool, PgPoolClient, PgQueryResult } from '../lib/stores/sql/index.js'

/** A pool whose queries fail with the given codes, one per call, then succeed. */
function failingPool (codes: string[]): { pool: PgPool, calls: () => number, destroyed: () => number } {
  let calls = 0
  let destroyed = 0
  const client: PgPoolClient = {
    async query (): Promise<PgQueryResult> {
      const code = codes[calls++]
      if (code !== undefined) throw Object.assign(new Error(`failed with ${code}`), { code })
      return { rows: [{ id: 1 }], rowCount: 1 }
    },
    on () { return client },
    off () { return client },
    release (destroy?: boolean) { if (destroy === true) destroyed++ }
  }
  return { pool: { connect: async () => client }, calls: () => calls, destroyed: () => destroyed }
}

test('a deadlock or serialization failure is run again, at most three times in all, then a 503 with Retry-After', async (t) => {
  const once = failingPool(['40P01'])
  t.same(await new PostgresRepository(once.pool, { table: 't', columns: ['id'] }).get({ id: 1 }), { id: 1 }, 'the second attempt answers')
  t.equal(once.calls(), 2)
  t.equal(once.destroyed(), 0, 'a connection whose transaction lost is kept')

  const always = failingPool(['40001', '40001', '40001', '40001'])
  const error = await new PostgresRepository(always.pool, { table: 't', columns: ['id'] }).get({ id: 1 }).catch((e: unknown) => e)
  t.ok(error instanceof ServiceUnavailable, 'after the last attempt: 503')
  t.same((error as ServiceUnavailable).headers, { 'retry-after': 1 })
  t.equal(always.calls(), 3, 'three attempts in all')

  const broken = failingPool(['08006'])
  await t.rejects(new PostgresRepository(broken.pool, { table: 't', columns: ['id'] }).get({ id: 1 }), ServiceUnavailable)
  t.equal(broken.calls(), 1, 'a lost connection is not retried')
  t.equal(broken.destroyed(), 1, 'and its client is destroyed')
})

test('every "database unavailable" code is a 503', async (t) => {
  for (const code of ['53300', '53100', '53200', '08001', '55P03', '57014', 'SQLITE_BUSY', 'SQLITE_LOCKED', '40P01', '40001']) {
    t.ok(translateError(Object.assign(new Error(code), { code })) instanceof ServiceUnavailable, code)
  }
  const other = Object.assign(new Error('x'), { code: '42601' })
  t.equal(translateError(other), other, 'a syntax error stays what it is')
})

test('each driver code to its answer, whole codes only; the driver\'s error kept as the cause', async (t) => {
  const { isBusy } = await import('../lib/stores/sql/errors.js')
  const { BadRequest } = await import('../lib/http/errors.js')
  const raised = (code: unknown): Error => Object.assign(new Error(String(code)), { code })
  const answers: Array<[unknown, unknown]> = [
    ['ECONNREFUSED', ServiceUnavailable], ['ECONNRESET', ServiceUnavailable], ['ETIMEDOUT', ServiceUnavailable], ['EPIPE', ServiceUnavailable],
    ['57P01', ServiceUnavailable], ['57P02', ServiceUnavailable], ['57P03', ServiceUnavailable], ['SQLITE_BUSY_SNAPSHOT', ServiceUnavailable],
    ['SQLITE_LOCKED_SHAREDCACHE', ServiceUnavailable],
    ['23505', Conflict], ['23503', Conflict], ['SQLITE_CONSTRAINT_CHECK', Conflict], ['22003', BadRequest], ['22P02', BadRequest],
    // Longer codes that start like one are not it.
    ['235031', undefined], ['220031', undefined], ['083001', undefined], ['X08001', undefined], ['XSQLITE_BUSY', undefined],
    ['X23505', undefined], ['X22003', undefined], ['XSQLITE_CONSTRAINT', undefined],
    [23505, undefined], [22003, undefined], [8001, undefined]
  ]
  for (const [code, answer] of answers) {
    const error = raised(code)
    const translated = translateError(error)
    if (answer === undefined) t.equal(translated, error, `${typeof code} ${String(code)}: left as it is`)
    else t.ok(translated instanceof (answer as typeof Conflict) && (translated as Error).cause === error, `${String(code)}: ${(answer as typeof Conflict).name}, caused by the driver's error`)
  }
  t.same([isBusy(raised('SQLITE_BUSY')), isBusy(raised('SQLITE_BUSY_TIMEOUT')), isBusy(raised('SQLITE_BUSY_X1')), isBusy(raised('SQLITE_LOCKED')), isBusy(raised(5)),
    isBusy(raised('XSQLITE_BUSY'))], [true, true, false, false, false, false], 'busy: SQLITE_BUSY and its extended names only')
  t.same(['23505', '23514', '22003'].map((code) => (translateError(raised(code)) as { detail?: string }).detail), [
    'A row with the same unique value already exists.', 'The database refused the change: a constraint failed.', 'A value does not fit its column.'
  ], 'each says what happened')
  t.same([translateError(undefined), translateError(null)], [undefined, null], 'a throw of nothing stays nothing')
})

test('the one-statement calls (get, a plain update) and the operations keep one rule for retries and clients', async (t) => {
  const table = { table: 't', columns: ['id', 'name'] }
  const calls: Array<[string, (repository: PostgresRepository) => Promise<unknown>]> = [
    ['get', async (r) => await r.get({ id: 1 })],
    ['update', async (r) => await r.update({ id: 1 }, { name: 'x' })],
    ['list', async (r) => await r.list({})],
    ['delete', async (r) => await r.delete({ id: 1 })]
  ]
  for (const [name, call] of calls) {
    const once = failingPool(['40P01'])
    await call(new PostgresRepository(once.pool, table))
    t.same([once.calls(), once.destroyed()], [2, 0], `${name}: a deadlock is run again, its client kept`)
    const always = failingPool(['40001', '40001', '40001', '40001'])
    await t.rejects(call(new PostgresRepository(always.pool, table)), ServiceUnavailable, `${name}: 503 after the last attempt`)
    t.equal(always.calls(), 3, `${name}: three attempts in all`)
    const broken = failingPool(['08006'])
    await t.rejects(call(new PostgresRepository(broken.pool, table)), ServiceUnavailable)
    t.same([broken.calls(), broken.destroyed()], [1, 1], `${name}: a lost connection is not retried, its client destroyed`)
    const duplicate = failingPool(['23505'])
    await t.rejects(call(new PostgresRepository(duplicate.pool, table)), Conflict)
    t.same([duplicate.calls(), duplicate.destroyed()], [1, 0], `${name}: a refused statement is a 409, its client kept`)
  }
  const failingConnect: PgPool = { connect: async () => { throw Object.assign(new Error('refused'), { code: 'ECONNREFUSED' }) } }
  await t.rejects(new PostgresRepository(failingConnect, table).get({ id: 1 }), ServiceUnavailable, 'a pool that cannot connect: 503')
  await t.rejects(new PostgresRepository(failingConnect, table).update({ id: 1 }, { name: 'x' }), ServiceUnavailable)

  // A name the table lacks is refused by the builder: as a rejected promise, as every call here answers.
  const pending = new PostgresRepository(failingPool([]).pool, table).get({ nope: 1 })
  t.ok(pending instanceof Promise, 'get returns a promise')
  await t.rejects(pending, { code: 'FV_ERR_SQL_NAME' })
  await t.rejects(new PostgresRepository(failingPool([]).pool, table).update({ id: 1 }, { nope: 1 }), { code: 'FV_ERR_SQL_NAME' })
})

test('a checked-out client: its error listener removed when it goes back, and a client that reported an error is closed', async (t) => {
  const table = { table: 't', columns: ['id', 'name'] }
  for (const [name, call] of [
    ['get', async (r: PostgresRepository) => await r.get({ id: 1 })],
    ['update', async (r: PostgresRepository) => await r.update({ id: 1 }, { name: 'x' })],
    ['list', async (r: PostgresRepository) => await r.list({})]
  ] as const) {
    const listeners = new Map<string, Set<unknown>>()
    let failNext = false
    let refuse = false
    let destroyed = 0
    const client: PgPoolClient = {
      async query (): Promise<PgQueryResult> {
        if (refuse) throw Object.assign(new Error('duplicate key'), { code: '23505' })
        // A connection that fails after the answer: pg reports it on the client, the query still resolves.
        if (failNext) for (const listener of listeners.get('error') ?? []) (listener as () => void)()
        return { rows: [{ id: 1, name: 'x' }], rowCount: 1 }
      },
      on (event: string, listener: unknown) {
        listeners.set(event, (listeners.get(event) ?? new Set()).add(listener))
        return client
      },
      off (event: string, listener: unknown) { listeners.get(event)?.delete(listener); return client },
      release (destroy?: boolean) { if (destroy === true) destroyed++ }
    }
    const repository = new PostgresRepository({ connect: async () => client }, table)
    for (let i = 0; i < 3; i++) await call(repository)
    t.same([...listeners.values()].map((set) => set.size), [0], `${name}: no listener left on the pooled client`)
    refuse = true
    await t.rejects(async () => { await call(repository) }, Conflict)
    refuse = false
    t.same([...listeners.values()].map((set) => set.size), [0], `${name}: nor after a refused statement, whose client is kept`)
    t.equal(destroyed, 0, `${name}: a healthy client goes back to the pool`)
    failNext = true
    await call(repository)
    t.equal(destroyed, 1, `${name}: a client that reported an error is closed, not returned`)
  }
})

test('inside a transaction a detail read runs as the operations do, a savepoint of its own, and finds nothing as null', async (t) => {
  const log: string[] = []
  const client: PgPoolClient = {
    async query (sql: string): Promise<PgQueryResult> { log.push(sql); return { rows: [], rowCount: 0 } },
    on () { return client },
    off () { return client },
    release () {}
  }
  const repository = new PostgresRepository({ connect: async () => client }, { table: 't', columns: ['id'] })
  t.equal(await repository.transaction(async () => await repository.get({ id: 2 })), null)
  t.same(log, ['BEGIN', 'SAVEPOINT fastify_views', 'SELECT "id" FROM "t" WHERE "id" = $1', 'RELEASE SAVEPOINT fastify_views', 'COMMIT'])
})

test('a one-statement read or update answers null when no row matches, and decodes the row it finds', async (t) => {
  let rows: Array<Record<string, unknown>> = []
  const client: PgPoolClient = {
    async query (): Promise<PgQueryResult> { return { rows, rowCount: rows.length } },
    on () { return client },
    off () { return client },
    release () {}
  }
  const repository = new PostgresRepository({ connect: async () => client }, { table: 't', columns: ['id', 'tags'], decode: { tags: 'json' } })
  t.equal(await repository.get({ id: 1 }), null, 'a miss is null, as the repository contract says')
  t.equal(await repository.update({ id: 1 }, { tags: '[]' }), null)
  rows = [{ id: 1, tags: '["a"]' }]
  t.same(await repository.get({ id: 1 }), { id: 1, tags: ['a'] }, 'the declared JSON text decoded')
  rows = [{ id: 1, tags: '["b"]' }]
  t.same(await repository.update({ id: 1 }, { tags: '["b"]' }), { id: 1, tags: ['b'] })
})

test('a transaction whose work throws a value that is not an error: the same value rejects, and its client goes back', async (t) => {
  const released: Array<boolean | undefined> = []
  const client: PgPoolClient = {
    async query (): Promise<PgQueryResult> { return { rows: [], rowCount: 0 } },
    on () { return client },
    off () { return client },
    release (destroy?: boolean) { released.push(destroy) }
  }
  const repository = new PostgresRepository({ connect: async () => client }, { table: 't', columns: ['id'] })
  const thrown = await repository.transaction(async () => {
    // eslint-disable-next-line no-throw-literal -- what a careless caller may throw
    throw undefined
  }).then(() => 'resolved', (error: unknown) => ({ error }))
  t.same(thrown, { error: undefined }, 'rejects with undefined itself')
  t.same(released, [false], 'rolled back, and the healthy client returned to the pool')
})
