// A third database, MySQL-shaped, run without a MySQL server: what one needs, and that it is enough.
//
// What a database of one's own takes, and nothing more (docs/repositories.md, "A database of your own"):
//
//  1. A `Dialect` object (lib/stores/sql/dialect.ts), every member:
//     SQL text        quote, placeholders, value, like, ilike, contains, order, offsetWithoutLimit, firstRow
//     transactions    beginWrite, beginRead, lockRows
//     writes' rows    returning: the ` RETURNING ...` clause, or `undefined` (as here): the operations
//                     then read written rows back by key, in the write's transaction
//     errors          errorKind: unique, constraint, value, busy, transient, unavailable
//     columns         columnsOf (the lookup statement), columnFact (one of its rows as column facts)
//  2. A runner for its driver, where neither of the library's fits:
//     a pool answering with promises: `AsyncRunner` = database, connect, query, release, listen, unlisten
//     (`query` reports `insertId` where the dialect has no RETURNING);
//     one connection answering synchronously: `SyncRunner` = connection, run, row, once, exec,
//     inTransaction, and optionally failFast.
//  3. Nothing else. The repository is the family's class over the two, `new AsyncSqlRepository(dialect,
//     runner, options)` (`SqlRepository` for a synchronous driver); the builder, the operations, the
//     error translation and the column lookup are the ones SQLite and PostgreSQL run, unchanged, and
//     no code in lib/ is this database's. The last test checks that what differs per database
//     lives in the dialect files (and the runners of the two drivers the library ships) only.
import { test } from 'tap'
import { readdirSync, readFileSync } from 'node:fs'
import { Conflict, NotFound, ServiceUnavailable } from '../lib/errors.js'
import { BadRequest } from '../lib/http/errors.js'
import type { FieldKind } from '../lib/stores/repository.js'
import { AsyncSqlRepository, SqlBuilder, translateError, type AsyncRunner, type Dialect, type ErrorKind } from '../lib/stores/sql/index.js'

type Row = Record<string, unknown>

/** MySQL's error numbers (`errno`) by what they mean. */
const MYSQL_ERRORS: Record<number, ErrorKind> = {
  1062: 'unique', // ER_DUP_ENTRY
  1451: 'constraint', // ER_ROW_IS_REFERENCED_2: a foreign key's parent row
  1452: 'constraint', // ER_NO_REFERENCED_ROW_2: a foreign key's missing parent
  1048: 'constraint', // ER_BAD_NULL_ERROR
  3819: 'constraint', // ER_CHECK_CONSTRAINT_VIOLATED
  1264: 'value', // ER_WARN_DATA_OUT_OF_RANGE (strict mode)
  1366: 'value', // ER_TRUNCATED_WRONG_VALUE_FOR_FIELD
  1213: 'transient', // ER_LOCK_DEADLOCK: the transaction was rolled back whole
  1205: 'unavailable', // ER_LOCK_WAIT_TIMEOUT: the server waited innodb_lock_wait_timeout already
  1040: 'unavailable' // ER_CON_COUNT_ERROR: too many connections
}

/** The JSON type mysql2 gives values of a MySQL data type; DECIMAL and BIGINT (strings by default) and dates are not said. */
const MYSQL_KINDS: Record<string, FieldKind> = { int: 'integer', smallint: 'integer', mediumint: 'integer', tinyint: 'integer', float: 'number', double: 'number', varchar: 'string', char: 'string', text: 'string' }

/** A MySQL-shaped dialect: every member of `Dialect`. */
const mysqlDialect: Dialect = {
  name: 'mysql',
  quote: (name) => `\`${name}\``,
  placeholders: (sql) => sql,
  // The driver binds booleans and dates itself.
  value: (value) => value,
  // LIKE follows the column's collation, case-insensitive as a rule: a case-sensitive match compares
  // bytes. `\` is LIKE's escape character already.
  like: (expression, pattern, bind) => `${expression()} LIKE BINARY ${bind(pattern)}`,
  ilike: (expression, pattern, bind) => `${expression()} LIKE ${bind(pattern)}`,
  // LOCATE(substring, string): the term comes first in the text, so it is written, and bound, first.
  contains: (text, term) => `LOCATE(${term()}, ${text()}) > 0`,
  // No NULLS FIRST / LAST, and nulls sort first ascending: order by whether the value is null first.
  order: (expression, descending) => descending
    ? `${expression()} IS NULL DESC, ${expression()} DESC`
    : `${expression()} IS NULL, ${expression()} ASC`,
  beginWrite: 'START TRANSACTION',
  beginRead: 'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
  // The library locks only rows it is about to write: FOR UPDATE, never LOCK IN SHARE MODE.
  lockRows: () => ' FOR UPDATE',
  offsetWithoutLimit: ' LIMIT 18446744073709551615',
  // MySQL refuses a subquery on the table an UPDATE or DELETE writes (error 1093), and takes ORDER BY and LIMIT there instead.
  firstRow: (_table, id, where) => `${where} ORDER BY ${id} LIMIT 1`,
  returning: () => undefined,
  errorKind: (error) => {
    const { errno, code } = (error ?? {}) as { errno?: unknown, code?: unknown }
    if (typeof errno === 'number' && MYSQL_ERRORS[errno] !== undefined) return MYSQL_ERRORS[errno]
    return code === 'ECONNREFUSED' || code === 'PROTOCOL_CONNECTION_LOST' ? 'unavailable' : undefined
  },
  // MySQL 8 names information_schema's columns in capitals: aliased, so that the rows' keys are known.
  columnsOf: (table) => ({
    sql: 'SELECT column_name AS name, is_nullable AS nullable, data_type AS type FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ?',
    params: [table],
    returns: 'rows'
  }),
  columnFact: (row) => [String(row.name), { nullable: row.nullable === 'YES', kind: MYSQL_KINDS[String(row.type)] }]
}

/** What mysql2 answers: rows for a SELECT, a header for anything else. */
interface Header { affectedRows: number, insertId: number }
/** A mysql2-shaped pooled connection (`mysql2/promise`): `query` answers `[result, fields]`. */
interface MysqlConnection {
  query (sql: string, values?: unknown[]): Promise<[Row[] | Header, unknown]>
  on (event: 'error', listener: (error: Error) => void): void
  off (event: 'error', listener: (error: Error) => void): void
  release (): void
  destroy (): void
}
interface MysqlPool { getConnection (): Promise<MysqlConnection> }

/** The runner of a mysql2-shaped pool: the six functions of `AsyncRunner`, written by the application. */
function mysqlRunner (pool: MysqlPool): AsyncRunner<MysqlConnection> {
  return {
    database: pool,
    connect: async () => await pool.getConnection(),
    async query (connection, sql, params) {
      const [result] = await connection.query(sql, params)
      if (Array.isArray(result)) return { rows: result, rowCount: result.length }
      // A write's header: the rows it matched (with the FOUND_ROWS client flag, which the
      // application keeps on), and the AUTO_INCREMENT key an INSERT generated (0 for none).
      return { rows: [], rowCount: result.affectedRows, insertId: result.insertId === 0 ? undefined : result.insertId }
    },
    release: (connection, destroy) => { if (destroy) connection.destroy(); else connection.release() },
    listen: (connection, onError) => { connection.on('error', onError) },
    unlisten: (connection, onError) => { connection.off('error', onError) }
  }
}

type Answer = Row[] | Header | Error

/**
 * A MySQL server of scripted answers: every statement is logged with its values; transaction
 * statements answer an empty header, any other takes the next answer of the script.
 */
interface Server {
  pool: MysqlPool
  /** Answers for the statements to come, in order. */
  script: (...answers: Answer[]) => void
  statements: () => Array<[string, unknown[]]>
  destroyed: () => number
}

function scriptedServer (): Server {
  let log: Array<[string, unknown[]]> = []
  const answers: Answer[] = []
  let destroyed = 0
  const connection: MysqlConnection = {
    async query (sql, values = []) {
      log.push([sql, values])
      if (/^(START TRANSACTION|COMMIT|ROLLBACK|SAVEPOINT|RELEASE SAVEPOINT)/.test(sql)) return [{ affectedRows: 0, insertId: 0 }, undefined]
      const answer = answers.shift()
      if (answer === undefined) throw new Error(`no answer scripted for ${sql}`)
      if (answer instanceof Error) throw answer
      return [answer, undefined]
    },
    on () {},
    off () {},
    release () {},
    destroy () { destroyed++ }
  }
  return {
    pool: { getConnection: async () => connection },
    script: (...more) => { answers.push(...more) },
    // The statements since the last call, their touch timestamps as 'now'.
    statements: () => {
      const seen = log.map(([sql, values]): [string, unknown[]] => [sql, values.map((v) => typeof v === 'string' && /^\d{4}-\d\d-\d\dT/.test(v) ? 'now' : v)])
      log = []
      return seen
    },
    destroyed: () => destroyed
  }
}

const failure = (errno: number): Error => Object.assign(new Error(`MySQL error ${errno}`), { errno })

interface Item { id: number, name: string, price: number | null, updated_at: string }
const OPTIONS = { table: 'items', columns: ['id', 'name', 'price', 'updated_at'], touchColumn: 'updated_at' } as const
const SELECT = 'SELECT `id`, `name`, `price`, `updated_at` FROM `items`'
const lamp = { id: 7, name: 'Lamp', price: 30, updated_at: 'then' }

function items (): { repository: AsyncSqlRepository<Item>, server: Server } {
  const server = scriptedServer()
  return { repository: new AsyncSqlRepository<Item>(mysqlDialect, mysqlRunner(server.pool), OPTIONS), server }
}

test('list, count and get: MySQL text, values bound in text order', async (t) => {
  const { repository, server } = items()
  server.script([lamp])
  t.same(await repository.list({ name__like: 'La%', price__ilike: '3%', price__gt: 10 }, {
    orderBy: [{ field: 'price', descending: true }], search: { term: 'LA', fields: ['name'] }, limit: 20, offset: 40
  }), [lamp])
  server.script([lamp])
  await repository.list({}, { orderBy: [{ field: 'name', descending: false }, { field: 'id', descending: false }], after: ['Desk', 3], offset: 5 })
  server.script([{ n: 2 }])
  t.equal(await repository.count({ name__in: ['Lamp', 'Desk'] }), 2)
  server.script([lamp], [])
  t.same(await repository.get({ id: 7 }), lamp)
  t.equal(await repository.get({ name: 'Chair' }), null)
  t.same(server.statements(), [
    [`${SELECT} WHERE \`name\` LIKE BINARY ? AND \`price\` LIKE ? AND \`price\` > ? AND (LOCATE(?, lower(\`name\`)) > 0) ` +
      'ORDER BY `price` IS NULL DESC, `price` DESC, `id` IS NULL, `id` ASC LIMIT 20 OFFSET 40', ['La%', '3%', 10, 'la']],
    [`${SELECT} WHERE (((\`name\` > ? OR \`name\` IS NULL)) OR (\`name\` = ? AND \`id\` > ?)) ` +
      'ORDER BY `name` IS NULL, `name` ASC, `id` IS NULL, `id` ASC LIMIT 18446744073709551615 OFFSET 5', ['Desk', 'Desk', 3]],
    ['SELECT COUNT(*) AS n FROM `items` WHERE `name` IN (?, ?)', ['Lamp', 'Desk']],
    [`${SELECT} WHERE \`id\` = ?`, [7]],
    [`${SELECT} WHERE \`name\` = ? ORDER BY \`id\` IS NULL, \`id\` ASC LIMIT 1`, ['Chair']]
  ])
  server.script([lamp], [{ n: 1 }])
  t.same(await repository.listAndCount({}, { orderBy: [], limit: 1 }, {}), { items: [lamp], total: 1 })
  t.same(server.statements().map(([sql]) => sql), [
    'START TRANSACTION WITH CONSISTENT SNAPSHOT, READ ONLY',
    `${SELECT} ORDER BY \`id\` IS NULL, \`id\` ASC LIMIT 1`,
    'SELECT COUNT(*) AS n FROM `items`',
    'COMMIT'
  ], 'a page and its total in one snapshot')
})

test('create without RETURNING: the INSERT, then the row read back by the key the server generated, in one transaction', async (t) => {
  const { repository, server } = items()
  server.script({ affectedRows: 1, insertId: 7 }, [lamp])
  t.same(await repository.create({ name: 'Lamp', price: 30 }), lamp)
  t.same(server.statements(), [
    ['START TRANSACTION', []],
    ['INSERT INTO `items` (`name`, `price`, `updated_at`) VALUES (?, ?, ?)', ['Lamp', 30, 'now']],
    [`${SELECT} WHERE \`id\` = ?`, [7]],
    ['COMMIT', []]
  ])
  server.script({ affectedRows: 1, insertId: 0 }, [{ ...lamp, id: 12 }])
  t.same(await repository.create({ id: 12, name: 'Lamp', price: 30 }), { ...lamp, id: 12 }, 'a key the values set is the key read back')
  t.same(server.statements()[2], [`${SELECT} WHERE \`id\` = ?`, [12]])
  server.script(failure(1062))
  t.equal(await repository.create({ name: 'Lamp', price: 30 }), null, 'a duplicate (1062): null, as on every database')
  t.same(server.statements().map(([sql]) => sql.split(' ')[0]), ['START', 'INSERT', 'ROLLBACK'])
})

test('update and delete: the row locked FOR UPDATE, written by key, read back', async (t) => {
  const { repository, server } = items()
  server.script([lamp], { affectedRows: 1, insertId: 0 }, [{ ...lamp, price: 25 }])
  t.same(await repository.update({ id: 7 }, { price: 25 }), { ...lamp, price: 25 })
  t.same(server.statements(), [
    ['START TRANSACTION', []],
    [`${SELECT} WHERE \`id\` = ? FOR UPDATE`, [7]],
    ['UPDATE `items` SET `price` = ?, `updated_at` = ? WHERE `id` = ?', [25, 'now', 7]],
    [`${SELECT} WHERE \`id\` = ?`, [7]],
    ['COMMIT', []]
  ])
  server.script([])
  t.equal(await repository.update({ id: 99 }, { price: 1 }), null, 'no row: null, nothing written')
  t.same(server.statements().map(([sql]) => sql.split(' ')[0]), ['START', 'SELECT', 'COMMIT'])
  server.script([lamp], failure(1452))
  await t.rejects(repository.update({ id: 7 }, { price: 1 }), Conflict, 'a missing parent row (1452): 409')
  t.same(server.statements().map(([sql]) => sql.split(' ')[0]), ['START', 'SELECT', 'UPDATE', 'ROLLBACK'])

  server.script({ affectedRows: 1, insertId: 0 }, { affectedRows: 0, insertId: 0 })
  t.equal(await repository.delete({ id: 7 }), true)
  t.equal(await repository.delete({ name: 'Desk' }), false)
  t.same(server.statements(), [
    ['DELETE FROM `items` WHERE `id` = ?', [7]],
    ['DELETE FROM `items` WHERE `name` = ? ORDER BY `id` LIMIT 1', ['Desk']]
  ], 'the first row by key: ORDER BY and LIMIT, where MySQL refuses the scalar subquery')
  server.script(failure(1451))
  const refused = await repository.delete({ id: 7 }).catch((error: unknown) => error)
  t.match(refused, { statusCode: 409, detail: 'The database refused the change: a constraint failed.' }, 'a row still referenced (1451): 409')
})

test('bulk calls: one transaction each, rows read back by key', async (t) => {
  const { repository, server } = items()
  const desk = { id: 8, name: 'Desk', price: 90, updated_at: 'then' }
  server.script({ affectedRows: 1, insertId: 7 }, { affectedRows: 1, insertId: 8 }, [desk, lamp])
  t.same(await repository.createMany([{ name: 'Lamp', price: 30 }, { name: 'Desk', price: 90 }]), [lamp, desk], 'in the order sent')
  t.same(server.statements(), [
    ['START TRANSACTION', []],
    ['INSERT INTO `items` (`name`, `price`, `updated_at`) VALUES (?, ?, ?)', ['Lamp', 30, 'now']],
    ['INSERT INTO `items` (`name`, `price`, `updated_at`) VALUES (?, ?, ?)', ['Desk', 90, 'now']],
    [`${SELECT} WHERE \`id\` IN (?, ?) ORDER BY \`id\` IS NULL, \`id\` ASC`, [7, 8]],
    ['COMMIT', []]
  ])

  server.script([lamp, desk], { affectedRows: 2, insertId: 0 }, [lamp, desk])
  t.same(await repository.updateMany({ price: 10 }, { price__gt: 5 }), [lamp, desk])
  t.same(server.statements(), [
    ['START TRANSACTION', []],
    [`${SELECT} WHERE \`price\` > ? ORDER BY \`id\` IS NULL, \`id\` ASC FOR UPDATE`, [5]],
    ['UPDATE `items` SET `price` = ?, `updated_at` = ? WHERE `id` IN (?, ?)', [10, 'now', 7, 8]],
    [`${SELECT} WHERE \`id\` IN (?, ?) ORDER BY \`id\` IS NULL, \`id\` ASC`, [7, 8]],
    ['COMMIT', []]
  ])

  server.script({ affectedRows: 1, insertId: 0 }, { affectedRows: 1, insertId: 0 })
  await repository.bulkUpdate([{ id: 8, name: 'Desk', price: 1 }, { id: 7, name: 'Lamp', price: 2 }])
  t.same(server.statements(), [
    ['START TRANSACTION', []],
    ['UPDATE `items` SET `name` = ?, `price` = ?, `updated_at` = ? WHERE `id` = ?', ['Lamp', 2, 'now', 7]],
    ['UPDATE `items` SET `name` = ?, `price` = ?, `updated_at` = ? WHERE `id` = ?', ['Desk', 1, 'now', 8]],
    ['COMMIT', []]
  ], 'in key order')
  server.script({ affectedRows: 0, insertId: 0 })
  await t.rejects(repository.bulkUpdate([{ id: 99, name: 'Gone', price: 1 }]), NotFound, 'an item that matches no row (a header of 0 rows): 404')
  t.same(server.statements().map(([sql]) => sql.split(' ')[0]), ['START', 'UPDATE', 'ROLLBACK'])

  server.script({ affectedRows: 2, insertId: 0 })
  await repository.deleteMany({ name__in: ['Lamp', 'Desk'] })
  t.same(server.statements(), [['DELETE FROM `items` WHERE `name` IN (?, ?)', ['Lamp', 'Desk']]], 'one statement')
})

test('transactions across calls: savepoints in the transaction, one connection', async (t) => {
  const { repository, server } = items()
  server.script({ affectedRows: 1, insertId: 7 }, [lamp], { affectedRows: 2, insertId: 0 })
  t.same(await repository.transaction(async () => {
    const created = await repository.create({ name: 'Lamp', price: 30 })
    await repository.deleteMany({ price__lt: 1 })
    return created
  }), lamp)
  t.same(server.statements().map(([sql]) => sql), [
    'START TRANSACTION',
    'SAVEPOINT fastify_views', 'SAVEPOINT fastify_views',
    'INSERT INTO `items` (`name`, `price`, `updated_at`) VALUES (?, ?, ?)',
    `${SELECT} WHERE \`id\` = ?`,
    'RELEASE SAVEPOINT fastify_views', 'RELEASE SAVEPOINT fastify_views',
    'SAVEPOINT fastify_views', 'DELETE FROM `items` WHERE `price` < ?', 'RELEASE SAVEPOINT fastify_views',
    'COMMIT'
  ])
})

test('MySQL\'s error numbers as the library\'s problems', async (t) => {
  const answers: Array<[number, unknown]> = [
    [1062, Conflict], [1451, Conflict], [1452, Conflict], [1048, Conflict], [3819, Conflict],
    [1264, BadRequest], [1366, BadRequest],
    [1213, ServiceUnavailable], [1205, ServiceUnavailable], [1040, ServiceUnavailable], [1064, undefined]
  ]
  for (const [errno, answer] of answers) {
    const error = failure(errno)
    const translated = translateError(error, mysqlDialect)
    if (answer === undefined) t.equal(translated, error, `${errno}: left as it is (a syntax error)`)
    else t.ok(translated instanceof (answer as typeof Conflict) && (translated as Error).cause === error, `${errno}: ${(answer as typeof Conflict).name}`)
  }
  t.match(translateError(failure(1062), mysqlDialect), { detail: 'A row with the same unique value already exists.' })
  t.match(translateError(failure(1205), mysqlDialect), { statusCode: 503, headers: { 'retry-after': 1 } }, 'a lock wait timeout: 503, Retry-After')
  t.ok(translateError(Object.assign(new Error('gone'), { code: 'PROTOCOL_CONNECTION_LOST' }), mysqlDialect) instanceof ServiceUnavailable)

  const { repository, server } = items()
  server.script(failure(1213), failure(1213), [lamp])
  t.same(await repository.list({}), [lamp], 'a deadlock (1213) rolled the transaction back: run again, here the third attempt answers')
  t.equal(server.statements().length, 3)
  server.script(failure(1205))
  await t.rejects(repository.get({ id: 7 }), ServiceUnavailable, 'a lock wait timeout: 503')
  t.equal(server.destroyed(), 1, 'and the connection is closed, as after any failure but a lost race')
})

test('the columns, from information_schema of the current database', async (t) => {
  const { repository, server } = items()
  t.equal(repository.columnFacts, undefined, 'unknown until described')
  server.script([
    { name: 'id', nullable: 'NO', type: 'int' }, { name: 'name', nullable: 'NO', type: 'varchar' },
    { name: 'price', nullable: 'YES', type: 'decimal' }, { name: 'updated_at', nullable: 'YES', type: 'varchar' }
  ])
  await repository.describeColumns()
  t.same(server.statements(), [[mysqlDialect.columnsOf('items').sql, ['items']]])
  t.match(mysqlDialect.columnsOf('items').sql, /information_schema\.columns WHERE table_schema = DATABASE\(\) AND table_name = \?$/)
  t.same([...(repository.columnFacts ?? [])], [
    ['id', { nullable: false, kind: 'integer' }], ['name', { nullable: false, kind: 'string' }],
    ['price', { nullable: true, kind: undefined }], ['updated_at', { nullable: true, kind: 'string' }]
  ])
})

test('the builder alone writes MySQL too', async (t) => {
  const builder = new SqlBuilder(mysqlDialect, OPTIONS)
  t.equal(builder.readsBack, true, 'a table whose writes return nothing reads them back')
  t.same(builder.insert({ name: 'x', price: 1 }).returns, 'count', 'an INSERT asks for its count (and key), not rows')
  t.same(builder.update({ name: 'x' }, { price: 1 }, true).sql, 'UPDATE `items` SET `price` = ?, `updated_at` = ? WHERE `name` = ? ORDER BY `id` LIMIT 1')
  t.same(builder.select({ name__in: [], price__not_in: [] }, { orderBy: [] }).sql, `${SELECT} WHERE FALSE AND \`price\` IS NOT NULL ORDER BY \`id\` IS NULL, \`id\` ASC`)
})

test('what differs per database is in the dialect files only', async (t) => {
  const dir = 'lib/stores/sql'
  // Every module but the dialects and the runners of SQLite's and PostgreSQL's drivers.
  const own = new Set(['sqlite-dialect.ts', 'postgres-dialect.ts', 'values.ts', 'drivers.ts', 'sqlite.ts', 'sqlite-async.ts', 'postgres.ts'])
  const shared = readdirSync(dir).filter((file) => file.endsWith('.ts') && !own.has(file))
  t.ok(shared.includes('builder.ts') && shared.includes('operations.ts') && shared.includes('errors.ts') && shared.includes('columns.ts'), 'the shared modules are read')
  // Code only: comments may say what a database does.
  const code = (file: string): string => readFileSync(`${dir}/${file}`, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '')
  const specific = /RETURNING|PRAGMA|information_schema|NULLS (FIRST|LAST)|SQLITE_|ILIKE|\b(23505|40P01|40001)\b|\.name === '(sqlite|postgres)'/
  t.same(shared.filter((file) => specific.test(code(file))), [], 'no module but a dialect writes a database\'s own SQL, codes, or asks a database\'s name')
})
