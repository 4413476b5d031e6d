import { test } from 'tap'
import { Type } from '@sinclair/typebox'
import { APIView, Get } from '../lib/index.js'
import { GenericListAPIView, MemoryRepository } from '../lib/generics.js'
import { operationIdOf, plural, pluralName, summaryOf, tagOf } from '../lib/views/naming.js'
import { buildApp } from '../examples/app.js'

test('plural: regular nouns, already-plural and uncountable names, irregulars, the last word of an identifier, acronyms', async (t) => {
  const cases: Array<[string, string]> = [
    ['Item', 'Items'], ['Items', 'Items'], ['Category', 'Categories'], ['Categories', 'Categories'], ['Day', 'Days'], ['Key', 'Keys'],
    ['Box', 'Boxes'], ['Match', 'Matches'], ['Wish', 'Wishes'], ['Quiz', 'Quizzes'], ['Address', 'Addresses'], ['Class', 'Classes'],
    ['Status', 'Statuses'], ['Campus', 'Campuses'], ['Bus', 'Buses'], ['Analysis', 'Analyses'],
    ['Health', 'Health'], ['Data', 'Data'], ['Metadata', 'Metadata'], ['News', 'News'], ['Series', 'Series'], ['Metrics', 'Metrics'],
    ['Person', 'People'], ['People', 'People'], ['Child', 'Children'], ['Leaf', 'Leaves'], ['Hero', 'Heroes'], ['Index', 'Indexes'],
    ['Roof', 'Roofs'], ['Photo', 'Photos'],
    ['OrderItem', 'OrderItems'], ['SalesPerson', 'SalesPeople'], ['order_item', 'order_items'], ['Documents', 'Documents'],
    ['API', 'APIs'], ['URL', 'URLs'], ['HTTPRequest', 'HTTPRequests'],
    // Names of Object.prototype's members are plain words too.
    ['CHILD', 'CHILDREN'], ['person', 'people'], ['Item_', 'Item_s'],
    ['Constructor', 'Constructors'], ['ToString', 'ToStrings'], ['ValueOf', 'ValueOfs'], ['HasOwnProperty', 'HasOwnProperties']
  ]
  t.same(cases.map(([name]) => plural(name)), cases.map(([, expected]) => expected))
})

test('names of operations and tags: apiPluralName overrides the plural, a custom route named after its resource is named once', async (t) => {
  const Thing = Type.Object({ id: Type.Integer() }, { $id: 'Cactus' })
  class Cacti extends GenericListAPIView<{ item: { id: number } }> {
    static override responseSchema = Thing
    static override apiPluralName = 'Cacti'
    static override repository = new MemoryRepository<{ id: number }>()
  }
  t.equal(pluralName(Cacti), 'Cacti')
  t.equal(tagOf(Cacti), 'Cacti')
  t.equal(operationIdOf(Cacti, 'list', { detail: false, standard: true }), 'listCacti')
  t.equal(summaryOf(Cacti, 'list', true), 'List Cacti')
  t.equal(operationIdOf(Cacti, 'retrieve', { detail: true, standard: true }), 'retrieveCactus', 'detail actions keep the singular')

  class Health extends APIView {
    @Get('/') health () { return { ok: true } }
    @Get('/detail') details () { return { ok: true } }
  }
  t.equal(operationIdOf(Health, 'health', { detail: false, standard: false }), 'health')
  t.equal(operationIdOf(Health, 'details', { detail: false, standard: false }), 'detailsHealth')
  t.equal(tagOf(Health), 'Health')
  class Reports extends APIView {
    @Get('/') reports () { return [] }
  }
  t.equal(operationIdOf(Reports, 'reports', { detail: false, standard: false }), 'reports', 'the plural resource name counts too')
  class Empty extends APIView {
    static override apiPluralName = ''
  }
  t.equal(pluralName(Empty), 'Empties', 'an empty override falls back to the plural')
})

test('the example API: its operationIds and tags read naturally and are pinned', async (t) => {
  const app = await buildApp({ databaseUrl: 'sqlite::memory:', logger: false })
  t.teardown(() => app.close())
  await app.ready()
  const doc = JSON.parse(JSON.stringify(app.swagger())) as {
    paths: Record<string, Record<string, { operationId: string, tags: string[] }>>
  }
  const names = Object.entries(doc.paths).flatMap(([path, operations]) =>
    Object.entries(operations).map(([method, op]) => `${method.toUpperCase()} ${path} ${op.operationId} ${op.tags.join(',')}`)).sort()
  t.same(names, [
    'DELETE /items/bulk bulkDeleteItems Items',
    'DELETE /items/{id} destroyItem Items',
    'GET /health health Health',
    'GET /items listItems Items',
    'GET /items/events streamItemChanges Items',
    'GET /items/{id} retrieveItem Items',
    'PATCH /items/bulk updateManyItems Items',
    'PATCH /items/{id} partialUpdateItem Items',
    'POST /items createItem Items',
    'POST /items/bulk bulkCreateItems Items',
    'PUT /items/bulk bulkUpdateItems Items',
    'PUT /items/{id} updateItem Items'
  ])
})
