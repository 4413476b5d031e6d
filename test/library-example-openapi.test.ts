import { readFileSync } from 'node:fs'
import { test } from 'tap'
import { Validator } from '@seriousme/openapi-schema-validator'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { buildApp } from '../examples/library/app.js'

// The lending library example's OpenAPI document, as its clients and their CI read it: valid
// OpenAPI 3.1, and no error or warning from redocly's recommended ruleset. And its views as a
// reader of the example sees them: no SQL, no type assertion.

test('the library\'s document is valid OpenAPI 3.1 and passes redocly\'s recommended ruleset', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  await app.ready()
  const document = JSON.parse(JSON.stringify(app.swagger()))
  t.same(await new Validator().validate(document), { valid: true })
  t.same(Object.keys(document.paths), ['/members', '/members/{id}', '/books', '/books/{id}', '/reading-list', '/reading-list/{book_id}', '/members/{memberId}/loans', '/members/{memberId}/loans/{id}'])
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`), [], 'no errors, no warnings')

  const books = document.paths['/books']
  t.same(Object.keys(document.components.schemas.BookList.properties), ['books', 'booksCount'], 'the page of books is the API\'s own')
  t.match(books.get.parameters.find((p: { name: string }) => p.name === 'limit').schema, { maximum: 50, default: 10 })
  t.same(books.post.security, [{ memberId: [] }], 'writes name the member header')
  t.match(books.post.responses, { 401: {}, 403: {} })
  t.same(document.paths['/books/{id}'].get.responses['200'].content['application/json'].schema.required, ['book'], 'a single book travels in its envelope')
  const loans = document.paths['/members/{memberId}/loans/{id}']
  t.match(loans.delete.responses, { 403: {}, 404: {} }, 'the object permission and the missing parent are documented')
  t.notOk(document.paths['/members/{memberId}/loans'].get.responses['403'], 'listing loans is open to members')
})

test('the library\'s views hold no SQL and no type assertion', async (t) => {
  const source = readFileSync(new URL('../examples/library/views.ts', import.meta.url), 'utf8')
  const code = source.split('\n').filter((line) => !/^\s*(\/\/|\/?\*)/.test(line)).join('\n')
  t.same(code.match(/\b(SELECT|INSERT|UPDATE|DELETE FROM|JOIN|WHERE)\b|sql`|\.query\(|\.exec\(|\.prepare\(/g), null, 'no SQL')
  t.same(code.match(/\bas (?!const\b)[A-Za-z{[(]|\w!\.|\w!\)/g), null, 'no casts, no non-null assertions')
})
