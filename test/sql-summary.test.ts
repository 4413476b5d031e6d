import { test } from 'tap'
import { SqlSummaries, summarise } from '../lib/telemetry/sql-summary.js'

test('a statement is summarised by its first keyword and the table of its first FROM, INTO or UPDATE outside parentheses', async (t) => {
  const cases: Array<[string, string, string | undefined]> = [
    ['SELECT "id", "name" FROM "items" WHERE "id" = ?', 'SELECT', 'items'],
    ['select id from items', 'SELECT', 'items'],
    // A computed field's subquery names another table first: the statement's own is the one outside parentheses.
    ['SELECT "id", (SELECT COUNT(*) FROM "loans" WHERE "loans"."book_id" = "books"."id") AS "n" FROM "books" JOIN "m" ON 1', 'SELECT', 'books'],
    ['INSERT INTO "items" ("name") VALUES (?) RETURNING "id"', 'INSERT', 'items'],
    ['INSERT INTO items(a, b) VALUES (?, ?)', 'INSERT', 'items'],
    ['UPDATE "items" SET "name" = ? WHERE "id" = ?', 'UPDATE', 'items'],
    ['DELETE FROM "items" WHERE "id" IN (?, ?, ?)', 'DELETE', 'items'],
    ['SELECT * FROM `items`', 'SELECT', 'items'],
    ['SELECT * FROM `my items`', 'SELECT', 'my items'],
    ['SELECT * FROM \'items\'', 'SELECT', 'items'],
    ['SELECT * FROM ', 'SELECT', undefined],
    ['SELECT * FROM public.items', 'SELECT', 'public.items'],
    ['UPDATE "shop"."items" SET "a" = ?', 'UPDATE', 'shop.items'],
    ['SELECT * FROM "shop".items', 'SELECT', 'shop.items'],
    // A string literal is not a keyword, and a table read from a subquery is none of the statement's own.
    ['SELECT \'FROM nowhere\' AS x FROM "y"', 'SELECT', 'y'],
    ['SELECT * FROM (SELECT 1) AS t', 'SELECT', undefined],
    ['BEGIN IMMEDIATE', 'BEGIN', undefined],
    ['SAVEPOINT fv_1', 'SAVEPOINT', undefined],
    ['COMMIT', 'COMMIT', undefined],
    ['SELECT COUNT(*) AS n FROM "items"', 'SELECT', 'items'],
    ['DELETE FROM items', 'DELETE', 'items'],
    // An unterminated quote ends the reading.
    ['SELECT "unterminated FROM items', 'SELECT', undefined]
  ]
  for (const [sql, operation, table] of cases) {
    const summary = summarise(sql)
    t.same(summary, { operation, table, name: table === undefined ? operation : `${operation} ${table}` }, sql)
  }
  t.same(summarise('   '), { operation: 'OTHER', table: undefined, name: 'OTHER' }, 'no keyword: OTHER')
  t.same(summarise('(SELECT 1)'), { operation: 'OTHER', table: undefined, name: 'OTHER' }, 'no leading keyword: OTHER')
})

test('summaries are bounded: texts kept, and distinct summaries made, whatever the statements', async (t) => {
  const summaries = new SqlSummaries()
  const first = summaries.of('SELECT * FROM "items" WHERE "id" = ?')
  t.equal(summaries.of('SELECT * FROM "items" WHERE "id" = ?'), first, 'a text read once is looked up')
  t.equal(summaries.of('SELECT * FROM "items" WHERE "id" IN (?, ?)'), first, 'another text of the same table shares the summary')
  // 5,000 tables: only the first 200 summaries are made; the rest are OTHER.
  const names = new Set<string>()
  for (let i = 0; i < 5000; i++) names.add(summaries.of(`SELECT * FROM "t${i}"`).name)
  t.equal(names.size, 200, 'at most 200 distinct summaries')
  t.ok(names.has('OTHER'), 'past them, OTHER')
  t.equal(summaries.of('SELECT * FROM "items" WHERE "id" = ?').name, 'SELECT items', 'a summary made before the bound is kept after it')
  // A long text of many parentheses and quotes reads in linear time.
  const long = 'SELECT ' + '("a", \'b\'), '.repeat(50_000) + '1 FROM "items"'
  const started = performance.now()
  t.equal(summarise(long).name, 'SELECT items')
  t.ok(performance.now() - started < 2000, 'a 650 KB statement is read in well under two seconds')
})
