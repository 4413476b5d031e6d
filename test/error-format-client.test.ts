import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { promisify } from 'node:util'
import Fastify from 'fastify'
import { Type } from '@sinclair/typebox'
import { configureApp, ViewRouter, views } from '../lib/index.js'
import { ErrorFormat, PROBLEM_FORMAT, problemFormat } from '../lib/errors.js'
import { Articles, buildApp, conduitErrors } from '../examples/error-format/app.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '..')
// Inside the repository, so that the generated client resolves openapi-fetch from node_modules.
const work = path.join(root, 'build', 'error-format-client')
// tap's loader options are for this process, not for the tools it starts.
const env = { ...process.env, NODE_OPTIONS: '' }
// docs/error-formats.md shows this app, what it answers, its document and its client: each shown figure is checked here.
const page = readFileSync(path.join(root, 'docs', 'error-formats.md'), 'utf8')

type Doc = {
  components: { schemas: Record<string, unknown> },
  paths: Record<string, Record<string, { responses: Record<string, { content?: unknown }> }>>
}

/** The page's client, written as it is to the generated client's directory, compiled with tsc --strict and run. */
const CLIENT = `import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

type GenericErrorModel = components['schemas']['GenericErrorModel']
type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false

// The documented body of a 422 and of a 404 is the format's.
type Invalid = paths['/articles']['post']['responses'][422]['content']['application/json']
type Missing = paths['/articles/{slug}']['get']['responses'][404]['content']['application/json']
export const invalidBody: Same<Invalid, { errors: { body: string[] } }> = true
export const missingBody: Same<Missing, { errors: { body: string[] } }> = true
// @ts-expect-error: GET /articles validates nothing, so it answers no 422
export type ListInvalid = paths['/articles']['get']['responses'][422]

export async function tryArticles (baseUrl: string) {
  const client = createClient<paths>({ baseUrl })
  // A string, as the type asks, but an empty one: 422.
  const created = await client.POST('/articles', { body: { title: '', body: 'Hello' } })
  // No article has this slug: 404.
  const missing = await client.GET('/articles/{slug}', { params: { path: { slug: 'nowhere' } } })
  // \`error\` is the format's body whatever the error status, on both operations.
  const exact: Same<typeof created.error | typeof missing.error, GenericErrorModel | undefined> = true
  return {
    exact,
    created: { status: created.response.status, errors: created.error?.errors.body },
    missing: { status: missing.response.status, errors: missing.error?.errors.body }
  }
}
`

/** A request of the page's table, sent over HTTP; `raw` for one Node cannot parse. */
interface Case {
  name: string,
  status: number,
  body: unknown,
  method?: string,
  url?: string,
  json?: unknown,
  payload?: string,
  type?: string,
  raw?: string
}

const CASES: Case[] = [
  { name: 'a new article', method: 'POST', url: '/articles', json: { title: 'Welcome', body: 'Hello' }, status: 201, body: { slug: 'welcome', title: 'Welcome', body: 'Hello' } },
  { name: 'the same title again', method: 'POST', url: '/articles', json: { title: 'Welcome', body: 'Again' }, status: 422, body: { errors: { body: ['The request conflicts with the current state of the resource.'] } } },
  { name: 'an empty title', method: 'POST', url: '/articles', json: { title: '', body: 'Hello' }, status: 422, body: { errors: { body: ['title: Expected string length greater or equal to 1'] } } },
  { name: 'no body member', method: 'POST', url: '/articles', json: { title: 'Welcome' }, status: 422, body: { errors: { body: ['body: Expected required property'] } } },
  { name: 'a member the schema does not have', method: 'POST', url: '/articles', json: { title: 'Welcome', body: 'Hello', tags: [] }, status: 422, body: { errors: { body: ['tags: Unexpected property'] } } },
  { name: 'no content', method: 'POST', url: '/articles', status: 422, body: { errors: { body: ['request body: Expected object'] } } },
  { name: 'a body that is not JSON', method: 'POST', url: '/articles', payload: '{"title":', type: 'application/json', status: 400, body: { errors: { body: ['Body is not valid JSON but content-type is set to \'application/json\''] } } },
  { name: 'an empty body declared as JSON', method: 'POST', url: '/articles', payload: '', type: 'application/json', status: 400, body: { errors: { body: ['Body cannot be empty when content-type is set to \'application/json\''] } } },
  { name: 'another media type', method: 'POST', url: '/articles', payload: 'Hello', type: 'text/plain', status: 415, body: { errors: { body: ['This route takes application/json, not text/plain.'] } } },
  { name: 'a slug no article has', method: 'GET', url: '/articles/nowhere', status: 404, body: { errors: { body: ['Article does not exist'] } } },
  { name: 'a slug that cannot be one', method: 'GET', url: '/articles/Not%20a%20slug', status: 422, body: { errors: { body: ['slug: Expected string to match \'^[a-z0-9-]+$\''] } } },
  { name: 'an unknown route', method: 'GET', url: '/nowhere', status: 404, body: { errors: { body: ['Route GET /nowhere not found.'] } } },
  { name: 'a URL the router cannot decode', method: 'GET', url: '/articles/%', status: 400, body: { errors: { body: ['\'/articles/%\' is not a valid url component'] } } },
  { name: 'a request Node cannot parse', raw: 'GET /articles HTTP/1.1\r\nHost: localhost\r\nContent-Length: abc\r\n\r\n', status: 400, body: { errors: { body: ['The request could not be parsed.'] } } }
]

/** Sends bytes as they are and reads the whole answer, which Node closes. */
async function rawRequest (port: number, bytes: string): Promise<{ status: number, type: string, body: unknown }> {
  const answer = await new Promise<string>((resolve, reject) => {
    let text = ''
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes))
    socket.setEncoding('utf8').on('data', (chunk: string) => { text += chunk }).on('close', () => resolve(text)).on('error', reject)
  })
  const [head, body] = answer.split('\r\n\r\n')
  return { status: Number(head.split(' ')[1]), type: /content-type: ([^\r]+)/i.exec(head)?.[1] ?? '', body: JSON.parse(body) }
}

test('the page shows examples/error-format/app.ts as it is', async (t) => {
  const source = readFileSync(path.join(root, 'examples', 'error-format', 'app.ts'), 'utf8')
  t.ok(page.includes('```ts\n' + source + '```'))
})

test('the Conduit error format: what each request gets, the document, and a generated client typed with its body', async (t) => {
  const app = await buildApp()
  t.teardown(() => app.close())
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const port = (app.server.address() as net.AddressInfo).port

  for (const c of CASES) {
    let got: { status: number, type: string, body: unknown }
    if (c.raw !== undefined) got = await rawRequest(port, c.raw)
    else {
      const headers = c.json !== undefined ? { 'content-type': 'application/json' } : c.type !== undefined ? { 'content-type': c.type } : undefined
      const response = await fetch(
        address + c.url,
        { method: c.method, headers, body: c.json !== undefined ? JSON.stringify(c.json) : c.payload }
      )
      got = { status: response.status, type: response.headers.get('content-type') ?? '', body: await response.json() }
    }
    t.equal(got.status, c.status, `${c.name}: ${c.status}`)
    t.match(got.type, /^application\/json/, `${c.name}: application/json`)
    t.strictSame(got.body, c.body, `${c.name}: its body`)
    t.ok(page.includes('`' + JSON.stringify(c.body) + '`'), `${c.name}: the page shows that body`)
  }

  // The document: every error response is the format's body, a component named by the schema's $id.
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  const statuses = Object.fromEntries(Object.entries(doc.paths).flatMap(([route, item]) => Object.entries(item).map(([method, op]) => [`${method.toUpperCase()} ${route}`, Object.keys(op.responses)])))
  t.strictSame(statuses, {
    'GET /articles': ['200'],
    'POST /articles': ['201', '400', '413', '415', '422'],
    'GET /articles/{slug}': ['200', '400', '404', '414', '422']
  }, 'the statuses each operation documents: a GET ignores content unread, so neither 413 nor 415')
  for (const item of Object.values(doc.paths)) {
    for (const op of Object.values(item)) {
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400) t.strictSame(response.content, { 'application/json': { schema: { $ref: '#/components/schemas/GenericErrorModel' } } }, `${status}: the format's body`)
      }
    }
  }
  const excerpt = {
    components: { schemas: { GenericErrorModel: doc.components.schemas.GenericErrorModel } },
    paths: {
      '/articles': { post: { responses: { 422: doc.paths['/articles'].post.responses['422'] } } },
      '/articles/{slug}': { get: { responses: { 404: doc.paths['/articles/{slug}'].get.responses['404'] } } }
    }
  }
  t.ok(page.includes('```json\n' + JSON.stringify(excerpt, null, 2) + '\n```'), 'the page shows the document as generated')

  // The client: generated from the document, compiled strictly, and run against the server.
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  writeFileSync(path.join(work, 'openapi.json'), JSON.stringify(doc))
  await run(process.execPath, [path.join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), 'openapi.json', '-o', 'api.d.ts'], { cwd: work, env })
  t.ok(page.includes('```ts\n' + CLIENT + '```'), 'the page shows the client as compiled')
  // The page's two excerpts of the generated types are consecutive lines of them (the page outdents them).
  const lines = (text: string): string => text.trimEnd().split('\n').map((line) => line.trim()).join('\n')
  const generated = lines(readFileSync(path.join(work, 'api.d.ts'), 'utf8'))
  const excerpts = [...page.matchAll(/```ts\n((?:GenericErrorModel|\/\*\*)[\s\S]*?)```/g)].map((m) => m[1])
  t.equal(excerpts.length, 2, 'two excerpts of api.d.ts')
  for (const excerpt of excerpts) t.ok(generated.includes(lines(excerpt)), 'an excerpt of the generated types')
  writeFileSync(path.join(work, 'client.ts'), CLIENT)
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false, types: [] },
    files: ['client.ts']
  }))
  await t.resolves(run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: work, env }), 'the client compiles with tsc --strict')
  const client: { tryArticles: (baseUrl: string) => Promise<unknown> } = await import(pathToFileURL(path.join(work, 'client.js')).href)
  t.strictSame(await client.tryArticles(address), {
    exact: true,
    created: { status: 422, errors: ['title: Expected string length greater or equal to 1'] },
    missing: { status: 404, errors: ['Article does not exist'] }
  }, 'through openapi-fetch, a 422 and a 404 are bodies of that shape')
})

test('problem+json with 422: the same view answers problems, 422 for invalid values and 400 for a body that is not JSON', async (t) => {
  const app = Fastify()
  t.teardown(() => app.close())
  configureApp(app, { errorFormat: problemFormat({ validationStatus: 422 }) })
  await app.register(views, { views: [{ view: Articles, prefix: '/articles' }] })
  const invalid = await app.inject({ method: 'POST', url: '/articles', payload: { title: '', body: 'Hello' } })
  t.equal(invalid.statusCode, 422)
  t.match(invalid.headers['content-type'], /^application\/problem\+json/)
  const malformed = await app.inject({ method: 'POST', url: '/articles', payload: '{"title":', headers: { 'content-type': 'application/json' } })
  t.equal(malformed.statusCode, 400)
  for (const body of [invalid.json(), malformed.json()]) t.ok(page.includes('```json\n' + JSON.stringify(body, null, 2) + '\n```'), `the page shows the ${body.status} problem`)
})

test('the innermost declaration wins: a registration entry, its router, the plugin, the context', async (t) => {
  const Message = Type.Object({ message: Type.String() })
  const messageFormat = new ErrorFormat({ schema: Message, body: (problem) => ({ message: problem.detail }) })
  const app = Fastify()
  t.teardown(() => app.close())
  configureApp(app, { errorFormat: conduitErrors })
  await app.register(async (api) => {
    await api.register(views, {
      errorFormat: messageFormat,
      views: [
        { view: Articles, prefix: '/plugin' },
        new ViewRouter({ prefix: '/router', errorFormat: PROBLEM_FORMAT }).registerView(Articles, { prefix: '/articles' }),
        new ViewRouter({ prefix: '/entry', errorFormat: PROBLEM_FORMAT }).registerView(Articles, { prefix: '/articles', errorFormat: problemFormat({ validationStatus: 422 }) })
      ]
    })
  }, { prefix: '/api' })
  await app.register(views, { views: [{ view: Articles, prefix: '/articles' }] })
  const answer = async (url: string): Promise<[number, string | undefined, unknown]> => {
    const response = await app.inject(url)
    return [response.statusCode, response.headers['content-type'], response.json()]
  }
  const problem = (status: number, title: string, detail: string, instance: string, errors?: unknown[]): unknown =>
    ({ type: 'about:blank', title, status, detail, instance, ...errors === undefined ? {} : { errors } })
  const slugError = [{ detail: 'Expected string to match \'^[a-z0-9-]+$\'', pointer: '#/slug', in: 'path', parameter: 'slug' }]
  t.strictSame(await answer('/articles/Not%20a%20slug'), [422, 'application/json; charset=utf-8', { errors: { body: ['slug: Expected string to match \'^[a-z0-9-]+$\''] } }], 'the context\'s format')
  t.strictSame(await answer('/api/plugin/Not%20a%20slug'), [400, 'application/json; charset=utf-8', { message: 'The path parameters are invalid.' }], 'the plugin\'s, over the context\'s')
  t.strictSame(await answer('/api/router/articles/Not%20a%20slug'), [400, 'application/problem+json; charset=utf-8', problem(400, 'Bad Request', 'The path parameters are invalid.', '/api/router/articles/Not%20a%20slug', slugError)], 'the router\'s, over the plugin\'s')
  t.strictSame(await answer('/api/entry/articles/Not%20a%20slug'), [422, 'application/problem+json; charset=utf-8', problem(422, 'Unprocessable Entity', 'The path parameters are invalid.', '/api/entry/articles/Not%20a%20slug', slugError)], 'the entry\'s, over its router\'s')
  t.strictSame(await answer('/api/nowhere'), [404, 'application/json; charset=utf-8', { message: 'Route GET /api/nowhere not found.' }], 'the plugin configures its context: its 404s')
  t.strictSame(await answer('/nowhere'), [404, 'application/json; charset=utf-8', { errors: { body: ['Route GET /nowhere not found.'] } }], 'the rest of the application keeps its own')
})
