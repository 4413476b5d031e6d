import { test } from 'tap'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import Fastify, { type FastifyRequest } from 'fastify'
import swagger from '@fastify/swagger'
import { Type } from '@sinclair/typebox'
import views, { PartialUpdateAPIView, RetrieveAPIView, mix } from '../lib/index.js'
import { GenericViewSet, MemoryRepository, type Repository } from '../lib/generics.js'
import { BulkAPIViewSet } from '../lib/bulk.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { swaggerOptions } from '../lib/openapi/swagger.js'
import { buildApp } from '../examples/app.js'
import { build, problem } from './helpers.js'
import { patchOverHttp } from './patch-cases.js'
import { RFC6902, RFC7396 } from './patch-appendix.js'

const Meta = Type.Object({ color: Type.Optional(Type.String()), size: Type.Optional(Type.Integer()) })
const Thing = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    nickname: Type.Optional(Type.String()),
    tags: Type.Array(Type.String()),
    meta: Meta
  }
)
const ThingIn = Type.Object(
  { name: Type.String(), nickname: Type.Optional(Type.String()), tags: Type.Array(Type.String()), meta: Meta }
)
type ThingT = { id: number, name: string, nickname?: string, tags: string[], meta: { color?: string, size?: number } }
const IdParams = Type.Object({ id: Type.Integer() })
const ExampleItemIn = Type.Object({ name: Type.String({ minLength: 1 }), price: Type.Number({ minimum: 0 }) })
const ExampleItemSchema = Type.Object({ id: Type.Integer(), ...ExampleItemIn.properties, updated_at: Type.String({ format: 'date-time' }) })
type ExampleItem = { id: number, name: string, price: number, updated_at: string }
const JSON_PATCH = { 'content-type': 'application/json-patch+json' }
const MERGE = { 'content-type': 'application/merge-patch+json' }

function thingsApp (rows = new MemoryRepository<ThingT>()) {
  class Things extends GenericViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = IdParams
    static override repository = rows
  }
  return { Things, rows }
}

test('JSON Patch: every RFC 6902 operation through HTTP, array indices and "-" included', async (t) => {
  const { Things } = thingsApp()
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', tags: ['x', 'y'], meta: { color: 'red' } } })).json().id
  const cases: Array<[string, unknown[], Partial<ThingT> & Record<string, unknown>]> = [
    ['add to the end with "-"', [{ op: 'add', path: '/tags/-', value: 'z' }], { tags: ['x', 'y', 'z'] }],
    ['add at an index', [{ op: 'add', path: '/tags/0', value: 'w' }], { tags: ['w', 'x', 'y', 'z'] }],
    ['remove an element', [{ op: 'remove', path: '/tags/1' }], { tags: ['w', 'y', 'z'] }],
    ['replace an element', [{ op: 'replace', path: '/tags/0', value: 'v' }], { tags: ['v', 'y', 'z'] }],
    ['move within an array', [{ op: 'move', from: '/tags/0', path: '/tags/-' }], { tags: ['y', 'z', 'v'] }],
    ['copy a member', [{ op: 'copy', from: '/name', path: '/nickname' }], { nickname: 'a' }],
    ['move a member', [{ op: 'replace', path: '/name', value: 'b' }, { op: 'move', from: '/name', path: '/nickname' }, { op: 'add', path: '/name', value: 'c' }], { name: 'c', nickname: 'b' }],
    ['add into a nested object', [{ op: 'add', path: '/meta/size', value: 3 }], { meta: { color: 'red', size: 3 } }],
    ['remove an optional member', [{ op: 'remove', path: '/nickname' }, { op: 'test', path: '/name', value: 'c' }], { nickname: undefined }]
  ]
  for (const [what, operations, expected] of cases) {
    const res = await app.inject({ method: 'PATCH', url: `/things/${id}`, headers: JSON_PATCH, payload: JSON.stringify(operations) })
    t.equal(res.statusCode, 200, what)
    const row = (await app.inject(`/things/${id}`)).json()
    for (const [key, value] of Object.entries(expected)) t.same(row[key], value, `${what}: ${key}`)
  }
})

test('JSON Merge Patch: members set, null removes, nested objects merge, arrays replace (RFC 7396)', async (t) => {
  const { Things } = thingsApp()
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', nickname: 'n', tags: ['x'], meta: { color: 'red', size: 1 } } })).json().id
  const res = await app.inject({ method: 'PATCH', url: `/things/${id}`, headers: MERGE, payload: JSON.stringify({ nickname: null, tags: ['p', 'q'], meta: { color: null, size: 2 } }) })
  t.equal(res.statusCode, 200)
  t.same(res.json(), { id, name: 'a', tags: ['p', 'q'], meta: { size: 2 } })
  const refused = await app.inject({ method: 'PATCH', url: `/things/${id}`, headers: MERGE, payload: JSON.stringify({ name: null }) })
  t.equal(problem(t, refused, 400).errors[0].pointer, '#/name', 'removing a required member points at it')
})

test('the partial-update action sees the changed members as a plain body would give them', async (t) => {
  const seen: unknown[] = []
  const { Things } = thingsApp()
  class Watched extends Things {
    override partialUpdate (request: Parameters<InstanceType<typeof Things>['partialUpdate']>[0]) {
      seen.push(request.body)
      return super.partialUpdate(request)
    }
  }
  const app = await build({ views: [{ view: Watched, prefix: '/things' }] })
  t.teardown(() => app.close())
  const id = (await app.inject({ method: 'POST', url: '/things', payload: { name: 'a', tags: [], meta: {} } })).json().id
  await app.inject({ method: 'PATCH', url: `/things/${id}`, headers: JSON_PATCH, payload: JSON.stringify([{ op: 'add', path: '/tags/-', value: 't' }, { op: 'test', path: '/name', value: 'a' }]) })
  await app.inject({ method: 'PATCH', url: `/things/${id}`, headers: MERGE, payload: JSON.stringify({ name: 'b', meta: {} }) })
  t.same(seen, [{ tags: ['t'] }, { name: 'b' }], 'only what changed; an unchanged member is not sent')
})

test('action views: json only by default; patch formats with getPatchTarget; refused without one', async (t) => {
  const rows = new Map<number, ThingT>([[1, { id: 1, name: 'a', tags: [], meta: {} }]])
  class Base extends mix(RetrieveAPIView, PartialUpdateAPIView)<{ item: ThingT, params: { id: number } }> {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = IdParams
    override retrieve (
      request: FastifyRequest<{ Params: { id: number } }>
    ) { return rows.get(request.params.id) ?? null }

    override partialUpdate (request: FastifyRequest<{ Params: { id: number } }>) {
      const row = rows.get(request.params.id)
      if (row === undefined) return null
      Object.assign(row, request.body)
      return row
    }
  }
  class Patching extends Base {
    static override patch = { formats: ['json', 'json-patch'] as const }
    override getPatchTarget (
      request: FastifyRequest<{ Params: { id: number } }>
    ) { return rows.get(request.params.id) ?? null }
  }
  const app = await build({ views: [{ view: Base, prefix: '/plain' }, { view: Patching, prefix: '/patching' }] })
  t.teardown(() => app.close())
  const plain = await app.inject({ method: 'PATCH', url: '/plain/1', headers: JSON_PATCH, payload: '[]' })
  t.equal(plain.statusCode, 415, 'an action view takes JSON only by default')
  t.equal(plain.headers['accept-patch'], 'application/json')
  const patched = await app.inject({ method: 'PATCH', url: '/patching/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'add', path: '/tags/-', value: 'q' }]) })
  t.equal(patched.statusCode, 200)
  t.same(patched.json().tags, ['q'])
  t.equal((await app.inject({ method: 'PATCH', url: '/patching/1', headers: MERGE, payload: '{}' })).statusCode, 415, 'a format not listed: 415')
  t.equal((await app.inject({ method: 'PATCH', url: '/patching/2', headers: JSON_PATCH, payload: '[]' })).statusCode, 404, 'no object: 404')

  class NoTarget extends Base { static override patch = { formats: ['merge-patch'] as const } }
  await t.rejects(build({ views: [NoTarget] }), { code: 'FV_ERR_PATCH_TARGET', message: /NoTarget.*getPatchTarget/ })
  class NoSchema extends mix(RetrieveAPIView, PartialUpdateAPIView) {
    static override createSchema = ThingIn
    static override patch = { formats: ['json-patch'] as const }
    override retrieve () { return null }
    override partialUpdate () { return null }
    override getPatchTarget () { return null }
  }
  await t.rejects(build({ views: [NoSchema] }), { code: 'FV_ERR_PATCH_TARGET', message: /NoSchema.*responseSchema/ })
  const unimplemented = new NoTarget({} as never, {} as never) as unknown as { getPatchTarget: () => unknown }
  t.throws(() => unimplemented.getPatchTarget(), { code: 'FV_ERR_PATCH_TARGET' })
})

test('generic views: patch formats only over a repository that writes atomically', async (t) => {
  const memory = new MemoryRepository<ThingT>()
  // The same store without the declaration that update checks a precondition in the write's step.
  const loose = Object.fromEntries(['create', 'get', 'list', 'count', 'update', 'delete'].map((name) => [name, (...args: unknown[]) =>
    (memory as unknown as Record<string,
      (...a: unknown[]) => unknown>)[name](...args)])) as unknown as Repository<ThingT>
  class Loose extends GenericViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = IdParams
    static override repository = loose
  }
  class Insisting extends Loose { static override patch = { formats: ['json', 'merge-patch'] as const } }
  await t.rejects(build({ views: [Insisting] }), { code: 'FV_ERR_NOT_ATOMIC', message: /Insisting.*patch formats merge-patch/ })
  const app = await build({ views: [{ view: Loose, prefix: '/loose' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/loose/1', headers: MERGE, payload: '{}' })
  t.equal(res.statusCode, 415, 'JSON only over a repository that does not declare atomic preconditions')
  t.equal(res.headers['accept-patch'], 'application/json')
})

test('bulk PATCH keeps its plain-object body', async (t) => {
  const rows = new MemoryRepository<ThingT>()
  class Bulk extends BulkAPIViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override bulkUpdateSchema = Type.Object({ id: Type.Integer(), ...ThingIn.properties })
    static override updateSchema = ThingIn
    static override filter = null
    static override allowUnfiltered = true
    static override repository = rows
  }
  const app = await build({ views: [{ view: Bulk, prefix: '/bulk-things' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/bulk-things/bulk', headers: MERGE, payload: '{"name":"x"}' })
  t.equal(res.statusCode, 415)
})

test('the API description lists the three media types, with the JSON Patch operation as a component', async (t) => {
  const { Things } = thingsApp()
  const app = Fastify()
  await app.register(swagger, swaggerOptions({ info: { title: 't', version: '1' } }))
  await app.register(views, { views: [{ view: Things, prefix: '/things' }] })
  await app.ready()
  t.teardown(() => app.close())
  const doc = app.swagger() as {
    paths: Record<string, Record<string, any>>,
    components: { schemas: Record<string, any> }
  }
  const patch = doc.paths['/things/{id}'].patch
  t.same(Object.keys(patch.requestBody.content), ['application/json', 'application/merge-patch+json', 'application/json-patch+json'])
  t.not(patch.requestBody.content['application/json'].schema.type, 'array', 'a plain JSON body is the partial object, not an operation list')
  const invalid = await app.inject({ method: 'PATCH', url: '/things/1', payload: { name: 5 } })
  t.same(problem(t, invalid, 400).errors.map((e: { pointer: string }) => e.pointer), ['#/name'], 'and it is validated as one')
  t.same(patch.requestBody.content['application/json-patch+json'].schema, { type: 'array', items: { $ref: '#/components/schemas/JsonPatchOperation' } })
  t.ok(doc.components.schemas.JsonPatchOperation, 'the operation is a named component')
  const { JsonPatchOperation } = await import('../lib/views/patch/patch.js')
  const op = (values: string[]) => values.length === 1 ? { const: values[0], type: 'string' } : { anyOf: values.map((v) => ({ const: v, type: 'string' })) }
  t.strictSame(JSON.parse(JSON.stringify(JsonPatchOperation)), {
    $id: 'JsonPatchOperation',
    title: 'JsonPatchOperation',
    description: 'One operation of a JSON Patch (RFC 6902 section 4).',
    anyOf: [
      {
        type: 'object',
        required: ['op', 'path', 'value'],
        properties: { op: op(['add', 'replace', 'test']), path: { description: 'A JSON Pointer (RFC 6901) into the representation.', examples: ['/name'], type: 'string' }, value: {} }
      },
      { type: 'object', required: ['op', 'path'], properties: { op: op(['remove']), path: { type: 'string' } } },
      { type: 'object', required: ['op', 'from', 'path'], properties: { op: op(['move', 'copy']), from: { type: 'string' }, path: { type: 'string' } } }
    ]
  }, 'every operation of RFC 6902 section 4, with the members it requires')
  const merge = patch.requestBody.content['application/merge-patch+json'].schema
  t.equal(merge.description, 'A JSON Merge Patch (RFC 7396): the members to change; null removes one.')
  t.same(merge.properties.name.anyOf.map((s: { type: string }) => s.type), ['string', 'null'], 'a merge patch member may be null')
  t.ok(patch.responses['200'].headers['accept-patch'], 'Accept-Patch documented on the success response')
  t.ok(patch.responses['415'], '415 documented')
})

test('the patch formats work under a mixin that adds its own preValidation hook: ConditionalMixin mixed last', async (t) => {
  const rows = new MemoryRepository<ThingT>({ rows: [{ id: 1, name: 'a', tags: [], meta: {} }] })
  class Things extends mix(GenericViewSet, ConditionalMixin).with(
    {
      responseSchema: Thing,
      createSchema: ThingIn,
      detailParams: IdParams,
      conditional: { etag: true },
      repository: rows
    }
  ) {}
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  const etag = (await app.inject('/things/1')).headers.etag as string
  const merged = await app.inject({ method: 'PATCH', url: '/things/1', headers: { ...MERGE, 'if-match': etag }, payload: '{"nickname":"b","meta":{"size":2}}' })
  t.equal(merged.statusCode, 200, 'a merge patch')
  t.match(merged.json(), { name: 'a', nickname: 'b', meta: { size: 2 } })
  const patched = await app.inject({ method: 'PATCH', url: '/things/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'add', path: '/tags/-', value: 'x' }]) })
  t.same([patched.statusCode, patched.json().tags], [200, ['x']], 'a JSON Patch')
})

test('a PATCH without a body, and a JSON Patch whose result is no object, are 400 problems that say so', async (t) => {
  const { Things } = thingsApp(new MemoryRepository<ThingT>({ rows: [{ id: 1, name: 'a', tags: [], meta: {} }] }))
  const app = await build({ views: [{ view: Things, prefix: '/things' }] })
  t.teardown(() => app.close())
  const empty = problem(t, await app.inject({ method: 'PATCH', url: '/things/1' }), 400)
  t.match(empty.errors, [{ detail: 'Expected a body', pointer: '#' }], 'no body, no media type')
  const scalar = problem(t, await app.inject({ method: 'PATCH', url: '/things/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'replace', path: '', value: 5 }]) }), 400)
  t.equal(scalar.detail, 'The patch cannot be applied.')
  t.match(scalar.errors, [{ detail: 'The result is not an object', pointer: '#' }])
  // A patch is a JSON body: its values keep JSON's types, never converted as a query string's are.
  problem(t, await app.inject({ method: 'PATCH', url: '/things/1', headers: MERGE, payload: '{"tags":"x"}' }), 400)
  t.same((await app.inject('/things/1')).json().name, 'a', 'nothing was written')
})

test('memory store: the example cases, with the example\'s item over MemoryRepository and ConditionalMixin', async (t) => {
  const stamp = <V extends Record<string, unknown>>(values: V): V & { updated_at: string } => ({
    ...values,
    updated_at: new Date().toISOString()
  })
  // The example's store stamps updated_at on every write; this one does too.
  class Stamped extends MemoryRepository<ExampleItem> {
    override create (values: Record<string, unknown>, options?: Record<string, unknown>) {
      return super.create(
        stamp(values),
        options
      )
    }

    override update (
      criteria: Record<string, unknown>,
      values: Record<string, unknown>,
      options?: Record<string, unknown>
    ) { return super.update(criteria, stamp(values), options) }
  }
  class Items extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = ExampleItemSchema
    static override createSchema = ExampleItemIn
    static override updateSchema = ExampleItemIn
    static override partialUpdateSchema = Type.Partial(ExampleItemIn)
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override repository = new Stamped()
  }
  const app = await build({ views: [{ view: Items, prefix: '/items' }] })
  t.teardown(() => app.close())
  await patchOverHttp(t, [app])
})

test('SQLite (the example API): the three formats, refusals, and one winner among concurrent test-and-set patches, over two instances', async (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'fastify-views-patch-'))
  const url = `sqlite:${path.join(dir, 'shop.db')}`
  const one = await buildApp({ databaseUrl: url })
  const two = await buildApp({ databaseUrl: url })
  t.teardown(async () => { await one.close(); await two.close(); rmSync(dir, { recursive: true, force: true }) })
  await patchOverHttp(t, [one, two])
})

test('corners: no body, a view with only partialUpdateSchema, raiseOnNone off, a matching If-Match, an untouched invalid member', async (t) => {
  const rows = new MemoryRepository<ThingT>({ rows: [{ id: 1, name: '', tags: [], meta: {} }] })
  class Partial extends GenericViewSet {
    static override responseSchema = Thing
    static override partialUpdateSchema = Type.Partial(ThingIn)
    static override detailParams = IdParams
    static override repository = new MemoryRepository<ThingT>({ rows: [{ id: 1, name: 'a', tags: [], meta: {} }] })
  }
  class Lenient extends GenericViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = IdParams
    static override raiseOnNone = false
    static override repository = new MemoryRepository<ThingT>()
  }
  class Strict extends mix(ConditionalMixin, GenericViewSet) {
    static override responseSchema = Thing
    static override createSchema = Type.Object({ ...ThingIn.properties, name: Type.String({ minLength: 1 }) })
    static override detailParams = IdParams
    static override conditional = { etag: true }
    static override repository = rows
  }
  const app = await build({ views: [{ view: Partial, prefix: '/partial' }, { view: Lenient, prefix: '/lenient' }, { view: Strict, prefix: '/strict' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject({ method: 'PATCH', url: '/partial/1' })).statusCode, 400, 'no body and no media type: the plain body is missing')
  const removed = await app.inject({ method: 'PATCH', url: '/partial/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'remove', path: '/name' }]) })
  t.equal(problem(t, removed, 400).errors[0].pointer, '#/0/path', 'with only a partial schema, the result is checked against the representation\'s schema')
  t.equal(removed.json().detail, 'The patch does not give a valid update.')
  const renamed = await app.inject({ method: 'PATCH', url: '/partial/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'replace', path: '/name', value: 'b' }]) })
  t.equal(renamed.statusCode, 200, 'and a valid result is written')
  const lenient = await app.inject({ method: 'PATCH', url: '/lenient/9', headers: MERGE, payload: '{"name":"x"}' })
  const plain = await app.inject({ method: 'PATCH', url: '/lenient/9', payload: {} })
  t.same([lenient.statusCode, lenient.body], [plain.statusCode, plain.body], 'nothing to patch with raiseOnNone off: what the action answers for nothing found')
  const etag = (await app.inject('/strict/1')).headers.etag as string
  const untouched = await app.inject({ method: 'PATCH', url: '/strict/1', headers: { ...JSON_PATCH, 'if-match': etag }, payload: JSON.stringify([{ op: 'add', path: '/tags/-', value: 'a' }]) })
  t.equal(problem(t, untouched, 400).errors[0].pointer, '#/name', 'a stored member the update schema refuses, untouched by the patch, points at itself')
  const fixed = await app.inject({ method: 'PATCH', url: '/strict/1', headers: { ...JSON_PATCH, 'if-match': etag }, payload: JSON.stringify([{ op: 'replace', path: '/name', value: 'named' }]) })
  t.equal(fixed.statusCode, 200, 'a matching If-Match and a patch: both checks pass')
  const moved = await app.inject({ method: 'PATCH', url: '/strict/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'move', from: '/name', path: '/nickname' }]) })
  t.equal(problem(t, moved, 400).errors[0].pointer, '#/0/from', 'moving a required member away points at the move\'s from')
})

test('SqliteRepository: a member a patch removed is written as NULL', async (t) => {
  const { default: Database } = await import('better-sqlite3')
  const { SqliteRepository } = await import('../lib/stores/sql/index.js')
  const db = new Database(':memory:')
  db.exec('CREATE TABLE notes (id INTEGER PRIMARY KEY, title TEXT NOT NULL, note TEXT)')
  db.exec("INSERT INTO notes VALUES (1, 'a', 'remove me')")
  const Note = Type.Object(
    { id: Type.Integer(), title: Type.String(), note: Type.Optional(Type.Union([Type.String(), Type.Null()])) }
  )
  class Notes extends GenericViewSet {
    static override responseSchema = Note
    static override createSchema = Type.Object(
      { title: Type.String(), note: Type.Optional(Type.Union([Type.String(), Type.Null()])) }
    )

    static override detailParams = IdParams
    static override repository = new SqliteRepository(db, { table: 'notes', columns: ['id', 'title', 'note'] })
  }
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/notes/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'remove', path: '/note' }]) })
  t.equal(res.statusCode, 200)
  t.same(db.prepare('SELECT note FROM notes WHERE id = 1').get(), { note: null })
})

test('the appendix examples of RFC 6902 and RFC 7396 through HTTP, on a resource that is an open JSON document', async (t) => {
  const Open = Type.Object({ id: Type.Integer() }, { additionalProperties: true })
  const Members = Type.Object({}, { additionalProperties: true })
  class Documents extends GenericViewSet {
    static override responseSchema = Open
    static override createSchema = Members
    static override detailParams = IdParams
    static override repository = new MemoryRepository<Record<string, unknown>>()
  }
  const app = await build({ views: [{ view: Documents, prefix: '/documents' }] })
  t.teardown(() => app.close())
  const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)
  for (const [name, document, patch, expected] of RFC6902) {
    const { id } = (await app.inject({ method: 'POST', url: '/documents', payload: document as object })).json()
    const res = await app.inject({ method: 'PATCH', url: `/documents/${id}`, headers: JSON_PATCH, payload: JSON.stringify(patch) })
    if ('result' in expected) {
      t.equal(res.statusCode, 200, name)
      t.same((await app.inject(`/documents/${id}`)).json(), { id, ...(expected.result as object) }, `${name}: the stored document`)
    } else {
      t.same(problem(t, res, 400).errors, [{ detail: expected.error.message, pointer: expected.error.pointer }], name)
      t.same((await app.inject(`/documents/${id}`)).json(), { id, ...(document as object) }, `${name}: nothing written`)
    }
  }
  // A resource is an object: the rows whose original or result is not one cannot be a resource's patch.
  const objects = RFC7396.filter(
    ([original, patch, result]) => isObject(original) && isObject(patch) && isObject(result)
  )
  t.equal(objects.length, 10, 'ten of the fifteen examples')
  for (const [original, patch, result] of objects) {
    const { id } = (await app.inject({ method: 'POST', url: '/documents', payload: original as object })).json()
    const res = await app.inject({ method: 'PATCH', url: `/documents/${id}`, headers: MERGE, payload: JSON.stringify(patch) })
    t.equal(res.statusCode, 200, `${JSON.stringify(original)} + ${JSON.stringify(patch)}`)
    t.same((await app.inject(`/documents/${id}`)).json(), { id, ...(result as object) }, `gives ${JSON.stringify(result)}`)
  }
})

test('a write that lands between the patch\'s read and its write: 409, and the patch writes nothing', async (t) => {
  const rows = new MemoryRepository<ThingT>({ rows: [{ id: 1, name: 'a', tags: [], meta: {} }] })
  class Racy extends GenericViewSet {
    static override responseSchema = Thing
    static override createSchema = ThingIn
    static override detailParams = IdParams
    static override repository = rows
    // Another client's write lands right after this request read the object.
    override getPatchTarget (request: Parameters<InstanceType<typeof GenericViewSet>['getPatchTarget']>[0]) {
      const current = super.getPatchTarget(request)
      rows.update({ id: 1 }, { name: 'theirs' })
      return current
    }
  }
  const app = await build({ views: [{ view: Racy, prefix: '/racy' }] })
  t.teardown(() => app.close())
  const res = await app.inject({ method: 'PATCH', url: '/racy/1', headers: JSON_PATCH, payload: JSON.stringify([{ op: 'add', path: '/tags/-', value: 'mine' }]) })
  t.equal(problem(t, res, 409).detail, 'The resource changed while the patch was applied; send the patch again.')
  t.same((await app.inject('/racy/1')).json(), { id: 1, name: 'theirs', tags: [], meta: {} }, 'the other write stands; the patch wrote nothing')
})
