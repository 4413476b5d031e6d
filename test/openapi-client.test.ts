import { test } from 'tap'
import { execFile } from 'node:child_process'
import { mkdirSync, rmSync, writeFileSync } from 'node:fs'
import path from 'node:path'
import { promisify } from 'node:util'
import createClient from 'openapi-fetch'
import { buildApp } from '../examples/app.js'

const run = promisify(execFile)
const root = path.resolve(import.meta.dirname, '..')
// Inside the repository, so that the generated client resolves openapi-fetch from node_modules.
const work = path.join(root, 'build', 'generated-client')
// tap's loader options are for this process, not for the tools it starts.
const env = { ...process.env, NODE_OPTIONS: '' }

type Doc = { paths: Record<string, Record<string, { responses: Record<string, unknown> }>> }

/**
 * What a client generated from the document is told, against what the server answers. The
 * example's document goes through openapi-typescript; each bad input is sent through
 * openapi-fetch to the running server; every status received must be a member of that
 * operation's status union, which a strict compile of the generated types proves.
 */
test('a client generated with openapi-typescript types every status the server sends for bad input', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:' })
  t.teardown(() => app.close())
  const address = await app.listen({ port: 0, host: '127.0.0.1' })
  const doc = JSON.parse(JSON.stringify(app.swagger())) as Doc
  rmSync(work, { recursive: true, force: true })
  mkdirSync(work, { recursive: true })
  writeFileSync(path.join(work, 'openapi.json'), JSON.stringify(doc))
  await run(process.execPath, [path.join(root, 'node_modules', 'openapi-typescript', 'bin', 'cli.js'), 'openapi.json', '-o', 'api.d.ts'], { cwd: work, env })

  // The generated paths are checked at compile time below; here the client speaks to the server untyped.
  const client = createClient<Record<string, never>>({ baseUrl: address }) as unknown as Record<string, (
    url: string,
    init?: object
  ) => Promise<{ response: Response }>>
  const created = await app.inject({ method: 'POST', url: '/items', payload: { name: 'lamp', price: 3 } })
  const { id } = created.json<{ id: number }>()
  const etag = (await app.inject(`/items/${id}`)).headers.etag as string
  const cases: Array<{ path: string, method: string, status: number, call: () => Promise<{ response: Response }> }> = [
    { path: '/items', method: 'post', status: 400, call: () => client.POST('/items', { body: { name: '' } }) },
    { path: '/items', method: 'post', status: 415, call: () => client.POST('/items', { body: 'name=lamp', bodySerializer: (b: string) => b, headers: { 'content-type': 'application/x-www-form-urlencoded' } }) },
    // Over the example's 4 MiB bodyLimit.
    { path: '/items', method: 'post', status: 413, call: () => client.POST('/items', { body: { name: 'x'.repeat(4_300_000), price: 1 } }) },
    { path: '/items', method: 'get', status: 400, call: () => client.GET('/items', { params: { query: { page_size: 0 } } }) },
    { path: '/items/{id}', method: 'get', status: 404, call: () => client.GET('/items/{id}', { params: { path: { id: 999999 } } }) },
    { path: '/items/{id}', method: 'get', status: 400, call: () => client.GET('/items/{id}', { params: { path: { id: 'abc' } } }) },
    { path: '/items/{id}', method: 'get', status: 304, call: () => client.GET('/items/{id}', { params: { path: { id }, header: { 'if-none-match': etag } } }) },
    { path: '/items/{id}', method: 'put', status: 412, call: () => client.PUT('/items/{id}', { params: { path: { id }, header: { 'if-match': '"stale"' } }, body: { name: 'desk', price: 4 } }) },
    { path: '/items/{id}', method: 'patch', status: 400, call: () => client.PATCH('/items/{id}', { params: { path: { id } }, body: { price: -1 } }) },
    { path: '/items/{id}', method: 'delete', status: 404, call: () => client.DELETE('/items/{id}', { params: { path: { id: 999999 } } }) },
    { path: '/items/bulk', method: 'delete', status: 400, call: () => client.DELETE('/items/bulk', {}) },
    { path: '/items/bulk', method: 'put', status: 404, call: () => client.PUT('/items/bulk', { body: [{ id: 999999, name: 'ghost', price: 1 }] }) },
    { path: '/items/bulk', method: 'post', status: 400, call: () => client.POST('/items/bulk', { body: [{ name: 'ok', price: 1 }, { name: '', price: 1 }] }) },
    // The statuses the issue found missing: 413 on PATCH /items/bulk, 415 on every route with a body.
    { path: '/items/bulk', method: 'patch', status: 413, call: () => client.PATCH('/items/bulk', { params: { query: { name: 'lamp' } }, body: { name: 'x'.repeat(4_300_000) } }) },
    { path: '/items/{id}', method: 'put', status: 415, call: () => client.PUT('/items/{id}', { params: { path: { id } }, body: '<item/>', bodySerializer: (b: string) => b, headers: { 'content-type': 'application/xml' } }) },
    { path: '/items/{id}', method: 'delete', status: 412, call: () => client.DELETE('/items/{id}', { params: { path: { id }, header: { 'if-match': '"stale"' } } }) },
    { path: '/health', method: 'get', status: 200, call: () => client.GET('/health') }
  ]
  const checks: string[] = []
  for (const { path: route, method, status, call } of cases) {
    const { response } = await call()
    t.equal(response.status, status, `${method.toUpperCase()} ${route}: ${status}`)
    t.ok(doc.paths[route][method].responses[String(response.status)], `${method.toUpperCase()} ${route}: ${response.status} is documented`)
    if (status >= 400) t.match(response.headers.get('content-type'), /^application\/problem\+json/, 'a problem')
    checks.push(`const s${checks.length}: Statuses<'${route}', '${method}'> = ${response.status}`)
  }

  // Compile-time: every status received is a member of the generated union, the body types
  // need no cast, and the bulk selection the server requires cannot be left out.
  writeFileSync(path.join(work, 'client.ts'), `import createClient from 'openapi-fetch'
import type { components, paths } from './api.js'

type Statuses<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { responses: infer R } ? keyof R : never
${checks.join('\n')}

// The unions are exact, not \`number\`: a status the server cannot send is not assignable.
// @ts-expect-error: GET /health validates nothing and reads no body, so it answers no 400
export const health400: Statuses<'/health', 'get'> = 400
// @ts-expect-error: a collection has no row to miss
export const list404: Statuses<'/items', 'get'> = 404

type Same<A, B> = [A] extends [B] ? [B] extends [A] ? true : false : false
// The JSON forms: GET /items also answers NDJSON and a streamed array (listStream), which a client reading JSON leaves out.
type Client = ReturnType<typeof createClient<paths, 'application/json' | 'application/problem+json'>>
type Item = components['schemas']['Item']
// Reads take ?fields=: what they send is the item with only its key certain.
type ItemFieldset = components['schemas']['ItemFieldset']
export const keyed: Same<ItemFieldset['id'], number> = true

/** Every operation of the document, called with typed arguments and read without a cast. */
export async function everyOperation (client: Client, id: number, etag: string): Promise<ItemFieldset[]> {
  const page = await client.GET('/items', { params: { query: { name: 'lamp', page: 1, page_size: 20, fields: 'name' } } })
  const created = await client.POST('/items', { body: { name: 'lamp', price: 1 } })
  const read = await client.GET('/items/{id}', { params: { path: { id }, header: { 'if-none-match': etag } } })
  const replaced = await client.PUT('/items/{id}', { params: { path: { id }, header: { 'if-match': etag } }, body: { name: 'desk', price: 2 } })
  const patched = await client.PATCH('/items/{id}', { params: { path: { id } }, body: { price: 3 } })
  await client.DELETE('/items/{id}', { params: { path: { id }, header: { 'if-match': etag } } })
  const many = await client.POST('/items/bulk', { body: [{ name: 'chair', price: 4 }] })
  await client.PUT('/items/bulk', { body: [{ id, name: 'stool', price: 5 }] })
  const updated = await client.PATCH('/items/bulk', { params: { query: { name: 'stool' } }, body: { price: 6 } })
  await client.DELETE('/items/bulk', { params: { query: { name: 'stool' } } })
  // @ts-expect-error: the one filter parameter that selects the rows is required
  await client.DELETE('/items/bulk', {})
  const health: 'ok' | undefined = (await client.GET('/health')).data?.status
  // An error body is a problem whose status member is exactly the operation's error statuses
  // (the issue's \`const declared: 400 | 409 = error.status\` compiled while 415 was sent).
  const exact: Same<NonNullable<typeof created.error>['status'], 400 | 409 | 413 | 415> = true
  const status = exact ? created.error?.status : undefined
  const written: Item[] = many.data ?? []
  const items: ItemFieldset[] = [...(page.data?.items ?? []), ...written]
  for (const one of [created.data, read.data, replaced.data, patched.data]) if (one !== undefined) items.push(one)
  return health === undefined || status !== undefined || updated.error !== undefined ? [] : items
}
export const used = [${checks.map((_, i) => `s${i}`).join(', ')}]
`)
  writeFileSync(path.join(work, 'tsconfig.json'), JSON.stringify({
    compilerOptions: { strict: true, noEmit: true, target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', skipLibCheck: false, types: [] },
    files: ['client.ts']
  }))
  await t.resolves(run(process.execPath, [path.join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: work, env }), 'the client compiles with tsc --strict')
})
