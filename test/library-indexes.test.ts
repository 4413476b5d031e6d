// Every query the lending library's lists run reads its joined and related tables through an index: each
// list, each filter and each sort of the example's document is requested, the statements heard on the
// library's SQL channel, and SQLite's plan of each read. A join or subquery that scans another table
// costs every request that table's size (issue: a sort by loans_count took seconds on 20,000 books).
import { test } from 'tap'
import { tracingChannel } from 'node:diagnostics_channel'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { buildApp } from '../examples/library/app.js'
import { summarise } from '../lib/telemetry/sql-summary.js'

interface Parameter {
  name: string
  in: string
  schema: {
    type?: string
    enum?: unknown[]
    items?: { enum?: unknown[], anyOf?: Array<{ enum?: unknown[] }> }
    anyOf?: Array<{ type?: string }>
  }
}

/** A value of the schema's type a request can send: the first of an enum, 1, true, or a word. */
function sample (schema: Parameter['schema']): string[] {
  const type = schema.type ?? schema.anyOf?.find((member) => member.type !== 'null')?.type
  if (type === 'array') {
    const choices = schema.items?.enum ?? schema.items?.anyOf?.flatMap((member) => member.enum ?? [])
    return choices === undefined || choices.length === 0 ? ['1'] : choices.map(String)
  }
  if (schema.enum !== undefined) return schema.enum.map(String)
  if (type === 'integer' || type === 'number') return ['1']
  if (type === 'boolean') return ['true']
  return ['a']
}

test('every read of the library\'s lists uses an index for each table but its own', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-library-indexes-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const file = path.join(dir, 'library.db')
  const app = await buildApp({ databaseUrl: `sqlite:${file}`, logger: false })
  t.teardown(() => app.close())
  await app.ready()

  const statements = new Set<string>()
  const channel = tracingChannel<object, { sql: string }>('fastify-views:sql')
  const heard = {
    start: (message: { sql: string }) => { if (/^\s*SELECT/i.test(message.sql)) statements.add(message.sql) },
    end () {},
    asyncStart () {},
    asyncEnd () {},
    error () {}
  }
  channel.subscribe(heard)
  t.teardown(() => { channel.unsubscribe(heard) })

  const document = app.swagger() as { paths: Record<string, Record<string, { parameters?: Parameter[] }>> }
  let requests = 0
  for (const [route, operations] of Object.entries(document.paths)) {
    const get = operations.get
    if (get === undefined) continue
    const url = route.replace(/\{[^}]+\}/g, '1')
    const queries = ['']
    for (const parameter of get.parameters ?? []) {
      if (parameter.in !== 'query') continue
      for (const value of sample(parameter.schema)) queries.push(`${parameter.name}=${encodeURIComponent(value)}`)
    }
    for (const query of queries) {
      // The librarian sees every member's records: each route reads what it can.
      const res = await app.inject({ url: query === '' ? url : `${url}?${query}`, headers: { 'x-member-id': '3' } })
      t.ok(res.statusCode < 500, `${url}?${query}: ${res.statusCode}`)
      requests++
    }
  }
  t.ok(requests > 20, `${requests} requests made`)
  t.ok(statements.size > 20, `${statements.size} distinct reads heard`)

  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  const db = new DatabaseSync(file, { readOnly: true })
  t.teardown(() => { db.close() })
  const unindexed: string[] = []
  for (const sql of statements) {
    const own = summarise(sql).table
    const values = Array.from({ length: (sql.match(/\?/g) ?? []).length }, () => null)
    const plan = db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...values) as Array<{ detail: string }>
    for (const { detail } of plan) {
      // `SCAN <table> [AS alias]`: every row of it read. The statement's own table may be (a list reads it); no other.
      const scanned = /^SCAN (\S+)/.exec(detail)?.[1]
      if (scanned !== undefined && scanned !== own && !/^CONSTANT ROW|^\(/.test(scanned)) unindexed.push(`${detail}\n    in ${sql}`)
    }
  }
  t.same([...new Set(unindexed)], [], 'no read scans a table other than its own')
})
