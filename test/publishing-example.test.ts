import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { test } from 'tap'
import pg from 'pg'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { buildApp } from '../examples/publishing/app.js'
import { publishingCases } from './publishing-example-cases.js'
import { postgres } from './pg-server.js'

// The publishing example on each database it runs on, through HTTP: the same cases, a fresh seeded
// site for each (a new SQLite file, a new PostgreSQL database). Then its document, and its views
// as a reader of the example sees them.

test('the publishing API on SQLite (node:sqlite)', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-publishing-'))
  t.teardown(() => rmSync(dir, { recursive: true, force: true }))
  const { DatabaseSync } = process.getBuiltinModule('node:sqlite')
  let n = 0
  await publishingCases(t, async () => {
    const file = path.join(dir, `publishing-${++n}.db`)
    const app = await buildApp({ databaseUrl: `sqlite:${file}` })
    // A connection of the same driver as the app's (one SQLite per process sees the other's locks).
    const db = new DatabaseSync(file, { timeout: 5000 })
    app.addHook('onClose', () => { db.close() })
    return {
      app,
      query: async (sql) => db.prepare(sql).all(),
      forbidTag: async (tag) => {
        db.exec(`CREATE TRIGGER forbid_tag BEFORE INSERT ON article_tags WHEN NEW.tag = '${tag}' BEGIN SELECT RAISE(ABORT, 'forbidden tag'); END`)
      }
    }
  })
})

const started = await postgres()

test('the publishing API on PostgreSQL', { skip: 'skip' in started ? started.skip : false }, async (t) => {
  if (!('server' in started)) return
  const { server } = started
  const admin = new pg.Pool({ connectionString: server.url, max: 1 })
  // An idle client that meets the server's shutdown is reported on its pool: heard, as the app's pools hear it.
  admin.on('error', () => {})
  t.teardown(async () => { await admin.end(); server.stop() })
  let n = 0
  await publishingCases(t, async () => {
    const name = `publishing_${++n}`
    await admin.query(`CREATE DATABASE ${name}`)
    const url = server.url.replace(/\/postgres$/, `/${name}`)
    const app = await buildApp({ databaseUrl: url })
    const reader = new pg.Pool({ connectionString: url, max: 1 })
    reader.on('error', () => {})
    app.addHook('onClose', async () => { await reader.end() })
    return {
      app,
      query: async (sql) => (await reader.query(sql)).rows,
      forbidTag: async (tag) => {
        await reader.query(`CREATE FUNCTION forbid_tag() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN
          IF NEW.tag = '${tag}' THEN RAISE EXCEPTION 'forbidden tag' USING ERRCODE = 'check_violation'; END IF; RETURN NEW; END $$`)
        await reader.query('CREATE TRIGGER forbid_tag BEFORE INSERT ON article_tags FOR EACH ROW EXECUTE FUNCTION forbid_tag()')
      }
    }
  })
})

test('the publishing API refuses a DATABASE_URL it cannot serve', async (t) => {
  await t.rejects(buildApp({ databaseUrl: 'mysql://localhost/publishing' }), { message: 'DATABASE_URL must be sqlite:<path> or postgres://...' })
})

test('the publishing document is valid OpenAPI 3.1 and passes redocly\'s recommended ruleset', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const ui = await app.inject('/docs/')
  t.equal(ui.statusCode, 200)
  t.match(ui.body, /swagger-ui/i)
  const document = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(document), { valid: true })
  t.same(Object.keys(document.paths), [
    '/users', '/user', '/profiles/{username}', '/profiles/{username}/follow', '/articles', '/articles/{slug}', '/articles/{slug}/favorite',
    '/feed', '/articles/{slug}/comments', '/articles/{slug}/comments/{id}', '/tags'
  ])
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`), [], 'no errors, no warnings')

  const { schemas } = document.components
  t.same(Object.keys(schemas.ArticleSummaryList.properties), ['articles', 'articlesCount'], 'the page of articles is the API\'s own')
  t.notOk('body' in schemas.ArticleSummary.properties, 'a list item is a summary')
  t.ok('body' in schemas.Article.properties)
  t.same(Object.keys(schemas.CommentList.properties), ['comments'])
  type Operation = { responses: Record<string, { content: Record<string, { schema: Record<string, unknown> }> }> }
  const json = (operation: Operation, status: number) => operation.responses[status].content['application/json'].schema
  const articles = document.paths['/articles']
  t.same(json(articles.get, 200), { $ref: '#/components/schemas/ArticleSummaryList' })
  t.same(json(document.paths['/articles/{slug}'].get, 200), { type: 'object', required: ['article'], properties: { article: { $ref: '#/components/schemas/Article' } } })
  t.same(json(document.paths['/articles/{slug}/favorite'].post, 200).required, ['article'], 'a route of the view\'s own, in the envelope')
  t.same(json(document.paths['/profiles/{username}/follow'].delete, 200).required, ['profile'])
  t.same(json(document.paths['/tags'].get, 200), { $ref: '#/components/schemas/TagList' })
  t.same(articles.post.security, [{ token: [] }], 'writes name the token')
  t.same(Object.keys(articles.post.responses).sort(), ['201', '400', '401', '413', '415', '422'], 'a conflict is documented as the 422 it is sent as')
  t.same(json(articles.post, 422), { $ref: '#/components/schemas/ErrorBody' })
  t.match(document.paths['/articles/{slug}'].patch.responses, { 401: {}, 403: {}, 404: {}, 422: {} })
  t.notOk(document.paths['/articles/{slug}'].get.responses['403'], 'reading an article is open to all')
  t.match(document.paths['/articles/{slug}/favorite'].post.responses, { 401: {}, 404: {} })
  t.match(document.paths['/articles/{slug}/comments'].get.responses, { 404: {} }, 'the missing article')
  t.match(document.paths['/articles/{slug}/comments/{id}'].delete.responses, { 403: {}, 404: {} })
  t.same(document.paths['/feed'].get.security, [{ token: [] }])
  const paths: Record<string, Record<string, { responses: object }>> = document.paths
  const operations = Object.values(paths).flatMap((item) => Object.values(item))
  const statuses = operations.flatMap((operation) => Object.keys(operation.responses))
  t.notOk(statuses.includes('409'), 'no 409 anywhere: this format sends conflicts as 422')
})

test('the publishing example\'s views hold no SQL, no lookup of their own; the example holds no cast', async (t) => {
  // Each file's code: its comment lines left out, and (for the casts) the text of its strings.
  const code = (file: string): string => readFileSync(new URL(`../examples/publishing/${file}`, import.meta.url), 'utf8')
    .split('\n').filter((line) => !/^\s*(\/\/|\/?\*)/.test(line)).join('\n')
  const STRINGS = /'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g
  const views = code('views.ts')
  t.same(views.match(/\b(SELECT|INSERT|UPDATE|DELETE FROM|JOIN|WHERE|EXISTS)\b|sql`|\.query\(|\.exec\(|\.prepare\(/g), null, 'no SQL')
  t.same(views.match(/\bNotFound\b|\bgetObject\(|\.get\(\{/g), null, 'no lookup and 404 by hand: getObjectOr404 and the nested parent do it')
  for (const file of readdirSync(new URL('../examples/publishing/', import.meta.url))) {
    t.same(code(file).replace(STRINGS, "''").match(/\bas\s+[A-Za-z{[(]|\w!\.|\w!\)|\w!\[/g), null, `${file}: no casts (as const neither), no non-null assertions`)
  }
})
