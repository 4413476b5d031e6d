// Groups of statics (`conditional`, `patch`): `.with()` merges a group into the inherited one, a class
// field replaces it, and what nothing would read is refused: an unknown member, a group that is no
// object, a static a group replaced (with its new spelling), through the types' back door too.
import { test } from 'tap'
import { Type, type Static } from '@sinclair/typebox'
import { mix } from '../lib/index.js'
import { ConfigurationError } from '../lib/errors.js'
import { GenericViewSet, MemoryRepository } from '../lib/generics.js'
import { ConditionalMixin } from '../lib/conditional.js'
import { build, caught, problem } from './helpers.js'

const Note = Type.Object({ id: Type.Integer(), text: Type.String(), tags: Type.Array(Type.String()) })
const NoteIn = Type.Object({ text: Type.String(), tags: Type.Array(Type.String()) })
type NoteT = Static<typeof Note>
const notes = (): MemoryRepository<NoteT> => new MemoryRepository<NoteT>({ rows: [{ id: 1, text: 'a', tags: [] }] })
const IdParams = Type.Object({ id: Type.Integer() })
const statics = () => ({ responseSchema: Note, createSchema: NoteIn, detailParams: IdParams, repository: notes() })
const Conditional = mix(ConditionalMixin, GenericViewSet)
/** What a JavaScript caller (or a cast) can pass to `.with()`: the types refuse every case below. */
const loose = (Base: object, given: object): unknown => (Reflect.get(Base, 'with') as (statics: object) => unknown).call(Base, given)

test('.with() merges a group into the inherited one: it sets the members it names, keeps the others', async (t) => {
  const Tagged = Conditional.with({ ...statics(), conditional: { etag: true } })
  const Strict = Tagged.with({ conditional: { require: true } })
  t.same(Strict.conditional, { etag: true, require: true }, 'both members')
  t.same(Tagged.conditional, { etag: true }, 'the class it extends is left as it was')
  t.same(Conditional.conditional, {}, 'and the mixin\'s defaults')
  const app = await build({ views: [{ view: Strict, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const read = await app.inject('/notes/1')
  t.match(read.headers.etag, /^"/, 'etag: a GET carries an ETag')
  problem(t, await app.inject({ method: 'PUT', url: '/notes/1', payload: { text: 'b', tags: [] } }), 428)
  const put = await app.inject({ method: 'PUT', url: '/notes/1', headers: { 'if-match': read.headers.etag as string }, payload: { text: 'b', tags: [] } })
  t.equal(put.statusCode, 200, 'require: a write names the version it read')
})

test('a class field replaces the group; spreading super\'s keeps the inherited members', async (t) => {
  const Tagged = Conditional.with({ ...statics(), conditional: { etag: true } })
  class Replaced extends Tagged { static override conditional = { require: true } }
  t.match(await caught(() => build({ views: [{ view: Replaced, prefix: '/notes' }] })),
    { code: 'FV_ERR_CONDITIONAL_OFF', message: /^Cannot register Replaced: it mixes in ConditionalMixin but turns nothing on/ }, 'etag is gone with the group it was in')
  class Extended extends Tagged { static override conditional = { ...super.conditional, require: true } }
  t.same(Extended.conditional, { etag: true, require: true })
  const app = await build({ views: [{ view: Extended, prefix: '/notes' }] })
  t.teardown(() => app.close())
  problem(t, await app.inject({ method: 'DELETE', url: '/notes/1' }), 428)
})

test('a member the group does not have, or a group that is no object, is FV_ERR_UNKNOWN_STATIC naming the member meant', async (t) => {
  class Typo extends Conditional.with(statics()) { static override conditional = { etag: true, requiire: true } }
  t.match(await caught(() => build({ views: [{ view: Typo, prefix: '/notes' }] })), {
    code: 'FV_ERR_UNKNOWN_STATIC',
    message: 'Cannot register Typo: Typo.conditional: "requiire" is not one of its options (etag, requests, lastModifiedField, versionField, require), ' +
      'so it would never be read; did you mean "require"?'
  }, 'in a class body, at registration')
  class Unlike extends Conditional.with(statics()) { static override conditional = { etag: true, cache: true } }
  t.match(await caught(() => build({ views: [{ view: Unlike, prefix: '/notes' }] })), { code: 'FV_ERR_UNKNOWN_STATIC', message: /"cache" is not one of its options \([^)]*\), so it would never be read$/ },
    'a name near none: no guess')
  class Flag extends Conditional.with(statics()) { static override conditional = true as never }
  t.match(await caught(() => build({ views: [{ view: Flag, prefix: '/notes' }] })), {
    code: 'FV_ERR_UNKNOWN_STATIC',
    message: 'Cannot register Flag: Flag.conditional is a group of options, an object such as { etag, requests, lastModifiedField, versionField, require }, not true'
  })
  class Listed extends Conditional.with(statics()) { static override patch = ['json'] as never }
  t.match(await caught(() => build({ views: [{ view: Listed, prefix: '/notes' }] })), { code: 'FV_ERR_UNKNOWN_STATIC', message: /Listed\.patch is a group of options, an object such as \{ formats, maxOperations, maxDepth, maxSize \}, not \["json"\]$/ },
    'an array is no group either')
  class Unset extends Conditional.with(statics()) { static override conditional = undefined as never }
  t.match(await caught(() => build({ views: [{ view: Unset, prefix: '/notes' }] })), { message: /Unset\.conditional is a group of options, .* not undefined$/ })
  t.throws(() => loose(Conditional, { conditional: { etga: true } }), Object.assign(new ConfigurationError('FV_ERR_UNKNOWN_STATIC', ''), {
    message: 'mix(ConditionalMixin, GenericViewSet).with(conditional): conditional: "etga" is not one of its options (etag, requests, lastModifiedField, versionField, require), ' +
      'so it would never be read; did you mean "etag"?'
  }), 'in .with(), when the class is made')
  t.throws(() => loose(Conditional, { patch: null }), { code: 'FV_ERR_UNKNOWN_STATIC', message: /with\(patch\): patch is a group of options, an object such as \{ formats, maxOperations, maxDepth, maxSize \}, not null$/ })
})

test('a static a group replaced is FV_ERR_RENAMED_STATIC with its new spelling, where the class has the group', async (t) => {
  class Old extends Conditional.with(statics()) { static lastModifiedField = 'text' }
  t.match(await caught(() => build({ views: [{ view: Old, prefix: '/notes' }] })), {
    code: 'FV_ERR_RENAMED_STATIC',
    message: 'Cannot register Old: Old.lastModifiedField is now conditional: { lastModifiedField }, and the old name is no longer read (CHANGELOG.md, "Upgrading")'
  }, 'in a class body')
  class Above extends Conditional.with(statics()) { static conditionalRequests = true }
  class Below extends Above { static override conditional = { etag: true } }
  t.match(await caught(() => build({ views: [{ view: Below, prefix: '/notes' }] })), { code: 'FV_ERR_RENAMED_STATIC', message: /^Cannot register Below: Above\.conditionalRequests is now conditional: \{ requests \}/ },
    'on a class of the user\'s above the registered one, named')
  class Bounded extends GenericViewSet.with(statics()) { static maxPatchOperations = 10 }
  t.match(await caught(() => build({ views: [{ view: Bounded, prefix: '/notes' }] })), { code: 'FV_ERR_RENAMED_STATIC', message: /Bounded\.maxPatchOperations is now patch: \{ maxOperations \}/ },
    'the patch group\'s old names too')
  for (const [old, member] of [['maxPatchDepth', 'maxDepth'], ['maxPatchSize', 'maxSize'], ['patchFormats', 'formats']]) {
    t.throws(() => loose(GenericViewSet, { [old]: 1 }), { code: 'FV_ERR_RENAMED_STATIC', message: `GenericViewSet.with(${old}): "${old}" is now patch: { ${member} }, and the old name is no longer read (CHANGELOG.md, "Upgrading")` }, old)
  }
  for (const [old, member] of [['etag', 'etag'], ['conditionalRequests', 'requests'], ['lastModifiedField', 'lastModifiedField'], ['versionField', 'versionField'], ['requirePreconditions', 'require']]) {
    t.throws(() => loose(Conditional, { [old]: 1 }), { code: 'FV_ERR_RENAMED_STATIC', message: new RegExp(`"${old}" is now conditional: \\{ ${member} \\}`) }, old)
  }
  class Near extends GenericViewSet.with(statics()) { static patchFormat = ['json'] }
  t.match(await caught(() => build({ views: [{ view: Near, prefix: '/notes' }] })), { code: 'FV_ERR_RENAMED_STATIC', message: /Near\.patchFormat looks like patchFormats, which is now patch: \{ formats \}/ },
    'a name near an old one')
  t.throws(() => loose(Conditional, { etag: true }), Object.assign(new ConfigurationError('FV_ERR_RENAMED_STATIC', ''), {
    message: 'mix(ConditionalMixin, GenericViewSet).with(etag): "etag" is now conditional: { etag }, and the old name is no longer read (CHANGELOG.md, "Upgrading")'
  }), 'in .with()')

  // Where the class has no such group, the name is the user's own.
  class Plain extends GenericViewSet.with(statics()) {
    static etag = 'mine'
    static requirePrecondition = true // near a name only the conditional group replaced
  }
  const app = await build({ views: [{ view: Plain, prefix: '/plain' }] })
  t.teardown(() => app.close())
  t.equal((await app.inject('/plain/1')).statusCode, 200, 'a view without ConditionalMixin may have statics named etag, or near requirePreconditions')
  t.throws(() => loose(GenericViewSet, { etag: true }), { code: 'FV_ERR_UNKNOWN_STATIC', message: /"etag" is not a static of GenericViewSet/ }, 'and .with() calls it unknown there')
})

test('the patch group: .with() sets one bound and keeps the default formats and the other bounds', async (t) => {
  const Notes = GenericViewSet.with({ ...statics(), patch: { maxOperations: 2 } })
  t.same(Notes.acceptedPatchFormats(), ['json', 'merge-patch', 'json-patch'], 'the default formats of a generic view over an atomic store')
  const app = await build({ views: [{ view: Notes, prefix: '/notes' }] })
  t.teardown(() => app.close())
  const patch = async (operations: unknown[]): Promise<ReturnType<typeof app.inject>> =>
    await app.inject({ method: 'PATCH', url: '/notes/1', headers: { 'content-type': 'application/json-patch+json' }, payload: JSON.stringify(operations) })
  t.equal((await patch([{ op: 'add', path: '/tags/-', value: 'x' }, { op: 'replace', path: '/text', value: 'b' }])).statusCode, 200, 'two operations')
  const three = [{ op: 'test', path: '/id', value: 1 }, { op: 'test', path: '/id', value: 1 }, { op: 'test', path: '/id', value: 1 }]
  t.match(problem(t, await patch(three), 400).errors[0], { pointer: '#', detail: 'A JSON Patch may hold at most 2 operations; this one holds 3' })
  t.match(problem(t, await patch([{ op: 'add', path: '/tags/-', value: JSON.parse('['.repeat(130) + ']'.repeat(130)) }]), 400).errors[0],
    { detail: /nest at most 128 levels/ }, 'the default depth, kept')
})
