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
  t.same(Object.keys(document.paths), ['/members', '/members/{id}', '/members/{id}/restore', '/books', '/books/{id}', '/reading-list', '/reading-list/{book_id}', '/members/{memberId}/loans', '/members/{memberId}/loans/{id}'])
  const config = await createConfig({ extends: ['recommended'] })
  const problems = await lintFromString({ source: JSON.stringify(document), absoluteRef: 'openapi.json', config })
  t.same(problems.map((p) => `${p.severity} ${p.ruleId}: ${p.message} at ${p.location[0]?.pointer ?? ''}`), [], 'no errors, no warnings')

  const books = document.paths['/books']
  t.same(Object.keys(document.components.schemas.BookFieldsetList.properties), ['books', 'booksCount'], 'the page of books is the API\'s own')
  t.match(books.get.parameters.find((p: { name: string }) => p.name === 'limit').schema, { maximum: 50, default: 10 })
  t.same(document.paths['/books/{id}'].get.responses['200'].content['application/json'].schema.required, ['book'], 'a single book travels in its envelope')

  // What the rules of auth.ts imply, operation by operation: who may call it anonymously (its
  // security lists `{}`), whether a signed-in member can be refused (403), and whether it is a write (429).
  t.same(document.components.securitySchemes, { memberId: { type: 'apiKey', in: 'header', name: 'x-member-id', description: 'The id of the member asking.' } })
  const rules: Record<string, { anonymous: boolean, forbidden: boolean, throttled: boolean }> = {
    'POST /members': { anonymous: true, forbidden: false, throttled: true }, // AllowAny
    // IsSelf.or(IsLibrarian): another's record is a 404; ?deleted= is for librarians (a 403 for anyone else).
    'GET /members/{id}': { anonymous: false, forbidden: true, throttled: false },
    'DELETE /members/{id}': { anonymous: false, forbidden: true, throttled: true }, // IsLibrarian
    'POST /members/{id}/restore': { anonymous: false, forbidden: true, throttled: true },
    'GET /books': { anonymous: true, forbidden: false, throttled: false }, // ReadOnly.or(IsLibrarian)
    'POST /books': { anonymous: false, forbidden: true, throttled: true },
    'GET /books/{id}': { anonymous: true, forbidden: false, throttled: false },
    'PUT /books/{id}': { anonymous: false, forbidden: true, throttled: true },
    'PATCH /books/{id}': { anonymous: false, forbidden: true, throttled: true },
    'GET /reading-list': { anonymous: false, forbidden: false, throttled: false }, // IsAuthenticated
    'POST /reading-list': { anonymous: false, forbidden: false, throttled: true },
    'DELETE /reading-list/{book_id}': { anonymous: false, forbidden: false, throttled: true },
    'GET /members/{memberId}/loans': { anonymous: false, forbidden: false, throttled: false }, // IsAuthenticated, IsBorrower.or(IsLibrarian)
    'POST /members/{memberId}/loans': { anonymous: false, forbidden: true, throttled: true }, // a loan made must be the member's own
    'GET /members/{memberId}/loans/{id}': { anonymous: false, forbidden: false, throttled: false }, // another's loan is a 404
    'PATCH /members/{memberId}/loans/{id}': { anonymous: false, forbidden: false, throttled: true },
    'DELETE /members/{memberId}/loans/{id}': { anonymous: false, forbidden: false, throttled: true }
  }
  const documented: typeof rules = {}
  type Operation = { security: object[], responses: Record<string, { headers?: Record<string, unknown> }> }
  for (const [route, operations] of Object.entries<Record<string, Operation>>(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const key = `${method.toUpperCase()} ${route}`
      // Every operation answers 401 to an x-member-id that names nobody, with its challenge.
      t.ok(operation.responses['401']?.headers?.['www-authenticate'], `${key}: a 401 with WWW-Authenticate`)
      t.same(operation.security.filter((requirement) => Object.keys(requirement).length > 0), [{ memberId: [] }], `${key}: the member header`)
      documented[key] = {
        anonymous: operation.security.some((requirement) => Object.keys(requirement).length === 0),
        forbidden: '403' in operation.responses,
        throttled: '429' in operation.responses
      }
    }
  }
  t.same(documented, rules, 'each operation documents what its rules imply, nothing more')
})

test('the library\'s views hold no SQL and no type assertion', async (t) => {
  const source = readFileSync(new URL('../examples/library/views.ts', import.meta.url), 'utf8')
  const code = source.split('\n').filter((line) => !/^\s*(\/\/|\/?\*)/.test(line)).join('\n')
  t.same(code.match(/\b(SELECT|INSERT|UPDATE|DELETE FROM|JOIN|WHERE)\b|sql`|\.query\(|\.exec\(|\.prepare\(/g), null, 'no SQL')
  t.same(code.match(/\bas (?!const\b)[A-Za-z{[(]|\w!\.|\w!\)/g), null, 'no casts, no non-null assertions')
})
