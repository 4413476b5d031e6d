// The SQLite store tests again, over node:sqlite's DatabaseSync instead of better-sqlite3: the
// same conformance cases, lock waits and scale-out, through the same repositories.
process.env.FV_SQLITE_DRIVER = 'node'
await import('./sqlite.test.js')
await import('./sqlite-lock-wait.test.js')
await import('./column-facts.test.js')
await import('./sql-query.test.js')
await import('./row-checks.test.js')
await import('./sql-transaction.test.js')
await import('./sql-decode.test.js')

const { test } = await import('tap')
const { openSqlite } = await import('./sqlite-driver.js')
test('the runs above opened node:sqlite connections', (t) => {
  const db = openSqlite()
  t.ok(db instanceof process.getBuiltinModule('node:sqlite').DatabaseSync)
  db.close()
  t.end()
})
