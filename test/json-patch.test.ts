import { test } from 'tap'
import { applyJsonPatch, parsePointer } from '../lib/http/json-patch.js'
import { applyMergePatch } from '../lib/http/merge-patch.js'
import { DEFAULT_PATCH_LIMITS, jsonEqual, jsonSize } from '../lib/http/patch-budget.js'
import { PatchError } from '../lib/http/patch-error.js'
import { patchError } from './helpers.js'
import { RFC6902, RFC7396 } from './patch-appendix.js'

/** Applies a patch and also checks that neither input was modified, whatever the outcome. */
function patched (document: unknown, patch: unknown): unknown {
  const documentBefore = structuredClone(document)
  const patchBefore = structuredClone(patch)
  const unchanged = (): void => {
    if (!jsonEqual(document, documentBefore) || !jsonEqual(patch, patchBefore)) throw new Error('an input was modified')
  }
  let result: unknown
  try {
    result = applyJsonPatch(document, patch)
  } catch (error) {
    unchanged()
    throw error
  }
  unchanged()
  return result
}

test('RFC 6902 Appendix A', async (t) => {
  t.equal(RFC6902.length, 16)
  for (const [name, document, patch, expected] of RFC6902) {
    if ('result' in expected) t.same(patched(document, patch), expected.result, name)
    else t.same(patchError(() => patched(document, patch)), expected.error, name)
  }
})

test('RFC 7396 Appendix A', async (t) => {
  for (const [original, patch, result] of RFC7396) {
    const originalBefore = structuredClone(original)
    const patchBefore = structuredClone(patch)
    t.same(applyMergePatch(original, patch), result, `${JSON.stringify(original)} + ${JSON.stringify(patch)}`)
    t.same(original, originalBefore, 'the original is not modified')
    t.same(patch, patchBefore, 'the patch is not modified')
  }
})

test('RFC 7396 §3: the example of the section', async (t) => {
  const original = { title: 'Goodbye!', author: { givenName: 'John', familyName: 'Doe' }, tags: ['example', 'sample'], content: 'This will be unchanged' }
  const patch = { title: 'Hello!', phoneNumber: '+01-123-456-7890', author: { familyName: null }, tags: ['example'] }
  t.same(applyMergePatch(original, patch), {
    title: 'Hello!', author: { givenName: 'John' }, tags: ['example'], content: 'This will be unchanged', phoneNumber: '+01-123-456-7890'
  })
})

test('parsePointer follows RFC 6901', async (t) => {
  t.same(parsePointer(''), [], 'the empty pointer is the whole document')
  t.same(parsePointer('/'), [''], 'a member with an empty name')
  t.same(parsePointer('//'), ['', ''])
  t.same(parsePointer('/a~1b/c~0d/0'), ['a/b', 'c~d', '0'])
  t.same(parsePointer('/~01'), ['~1'], '~01 is ~1, not /')
  t.same(parsePointer('/~10'), ['/0'])
  t.same(patchError(() => parsePointer('a/b')), { pointer: '#', message: 'Pointer "a/b" must be empty or start with "/"' }, 'the default pointer is the whole patch')
  t.same(patchError(() => parsePointer('/a~2', '#/4/from')), { pointer: '#/4/from', message: 'Pointer /a~2 has a "~" not followed by 0 or 1' })
  t.same(patchError(() => parsePointer('/a/b~', '#/1/path')), { pointer: '#/1/path', message: 'Pointer /a/b~ has a "~" not followed by 0 or 1' })
  t.same(patchError(() => parsePointer('/~')), { pointer: '#', message: 'Pointer /~ has a "~" not followed by 0 or 1' })
  const error = new PatchError('Path /a does not exist', '#/0/path')
  t.ok(error instanceof Error)
  t.equal(error.name, 'PatchError')
})

test('a malformed operation list is refused before anything is applied', async (t) => {
  const cases: Array<[string, unknown, string, string]> = [
    ['not an array', { op: 'add', path: '/a', value: 1 }, '#', 'A JSON Patch must be an array of operations'],
    ['null', null, '#', 'A JSON Patch must be an array of operations'],
    ['an operation that is null', [null], '#/0', 'An operation must be an object'],
    ['an operation that is an array', [{ op: 'test', path: '', value: {} }, ['add', '/a', 1]], '#/1', 'An operation must be an object'],
    ['an operation that is a string', ['add'], '#/0', 'An operation must be an object'],
    ['missing op', [{ op: 'test', path: '', value: {} }, { path: '/a', value: 1 }], '#/1/op', 'Missing "op"'],
    ['unknown op', [{ op: 'get', path: '/a' }], '#/0/op', 'Unknown op "get"'],
    ['op that is not a string', [{ op: 5, path: '/a' }], '#/0/op', 'Unknown op 5'],
    ['op in another case', [{ op: 'ADD', path: '/a', value: 1 }], '#/0/op', 'Unknown op "ADD"'],
    ['missing path', [{ op: 'remove' }], '#/0/path', 'Missing "path"'],
    ['path that is not a string', [{ op: 'remove', path: 3 }], '#/0/path', '"path" must be a string'],
    ['path that is null', [{ op: 'add', path: null, value: 1 }], '#/0/path', '"path" must be a string'],
    ['missing from (move)', [{ op: 'move', path: '/a' }], '#/0/from', 'Missing "from"'],
    ['from that is not a string (copy)', [{ op: 'copy', from: ['a'], path: '/a' }], '#/0/from', '"from" must be a string'],
    ['missing value (add)', [{ op: 'add', path: '/a' }], '#/0/value', 'Missing "value"'],
    ['missing value (replace)', [{ op: 'replace', path: '/a' }], '#/0/value', 'Missing "value"'],
    ['missing value (test)', [{ op: 'test', path: '/a' }], '#/0/value', 'Missing "value"'],
    ['undefined value', [{ op: 'add', path: '/a', value: undefined }], '#/0/value', 'Missing "value"'],
    ['path without a leading slash', [{ op: 'add', path: 'a', value: 1 }], '#/0/path', 'Pointer "a" must be empty or start with "/"'],
    ['path with a ~2 escape', [{ op: 'remove', path: '/a~2' }], '#/0/path', 'Pointer /a~2 has a "~" not followed by 0 or 1'],
    ['from without a leading slash', [{ op: 'copy', from: 'a', path: '/b' }], '#/0/from', 'Pointer "a" must be empty or start with "/"'],
    ['move into its own child', [{ op: 'move', from: '/a', path: '/a/b' }], '#/0/path', 'Cannot move /a into its own child /a/b'],
    ['move of the document into a member', [{ op: 'move', from: '', path: '/a' }], '#/0/path', 'Cannot move the document into its own child /a']
  ]
  for (const [name, patch, pointer, message] of cases) {
    t.same(patchError(() => patched({ a: { b: 1 } }, patch)), { pointer, message }, name)
  }
  // A later malformed operation stops an earlier failing one from even running.
  t.same(patchError(() => patched({}, [{ op: 'remove', path: '/missing' }, { op: 'nope' }])), { pointer: '#/1/op', message: 'Unknown op "nope"' })
  // `op`, `path` and `value` are the operation's own members, never inherited ones.
  const inherited = Object.create({ op: 'add', path: '/a', value: 1 }) as object
  t.same(patchError(() => patched({}, [inherited])), { pointer: '#/0/op', message: 'Missing "op"' })
  // Members an operation does not use are ignored (RFC 6902 §4): `from` on an add, `value` on a remove.
  t.same(patched({ a: 1 }, [{ op: 'add', path: '/b', value: 2, from: 7 }, { op: 'remove', path: '/a', value: 'x' }]), { b: 2 })
  t.same(patched({ a: 1 }, []), { a: 1 }, 'an empty patch changes nothing')
})

test('where an operation points: every error names its path or from', async (t) => {
  const document = { a: { b: 1 }, list: [1, 2, 3], n: 5, '': { x: 1 } }
  const cases: Array<[string, unknown, string, string]> = [
    ['missing parent', { op: 'add', path: '/a/x/y', value: 1 }, '#/0/path', 'Path /a/x does not exist'],
    ['missing grandparent', { op: 'add', path: '/x/y/z', value: 1 }, '#/0/path', 'Path /x does not exist'],
    ['parent that is a number', { op: 'add', path: '/n/x', value: 1 }, '#/0/path', 'Path /n is neither an object nor an array'],
    ['stepping through a number', { op: 'add', path: '/a/b/c/d', value: 1 }, '#/0/path', 'Path /a/b/c does not exist'],
    ['add past the end of an array', { op: 'add', path: '/list/4', value: 0 }, '#/0/path', 'Path /list/4 is past the end of the array (length 3)'],
    ['add at a leading-zero index', { op: 'add', path: '/list/01', value: 0 }, '#/0/path', 'Path /list/01 has an invalid array index "01"'],
    ['add at a negative index', { op: 'add', path: '/list/-1', value: 0 }, '#/0/path', 'Path /list/-1 has an invalid array index "-1"'],
    ['add at a member name of an array', { op: 'add', path: '/list/length', value: 0 }, '#/0/path', 'Path /list/length has an invalid array index "length"'],
    ['a leading zero on the way', { op: 'replace', path: '/list/00/x', value: 0 }, '#/0/path', 'Path /list/00 has an invalid array index "00"'],
    ['remove past the end', { op: 'remove', path: '/list/3' }, '#/0/path', 'Path /list/3 does not exist'],
    ['replace past the end', { op: 'replace', path: '/list/9', value: 0 }, '#/0/path', 'Path /list/9 does not exist'],
    ['test past the end', { op: 'test', path: '/list/3', value: 0 }, '#/0/path', 'Path /list/3 does not exist'],
    ['an index past the end on the way', { op: 'add', path: '/list/3/x', value: 0 }, '#/0/path', 'Path /list/3 does not exist'],
    ['remove of "-"', { op: 'remove', path: '/list/-' }, '#/0/path', 'Path /list/- names no element: "-" is past the end of the array'],
    ['replace of "-"', { op: 'replace', path: '/list/-', value: 0 }, '#/0/path', 'Path /list/- names no element: "-" is past the end of the array'],
    ['test of "-"', { op: 'test', path: '/list/-', value: 3 }, '#/0/path', 'Path /list/- names no element: "-" is past the end of the array'],
    ['"-" on the way of an add', { op: 'add', path: '/list/-/x', value: 0 }, '#/0/path', 'Path /list/- names no element: "-" is past the end of the array'],
    ['move from "-"', { op: 'move', from: '/list/-', path: '/z' }, '#/0/from', 'Path /list/- names no element: "-" is past the end of the array'],
    ['copy from "-"', { op: 'copy', from: '/list/-', path: '/z' }, '#/0/from', 'Path /list/- names no element: "-" is past the end of the array'],
    ['remove of a missing member', { op: 'remove', path: '/a/x' }, '#/0/path', 'Path /a/x does not exist'],
    ['replace of a missing member', { op: 'replace', path: '/x', value: 1 }, '#/0/path', 'Path /x does not exist'],
    ['test of a missing member', { op: 'test', path: '/a/x', value: null }, '#/0/path', 'Path /a/x does not exist'],
    ['move from a missing member', { op: 'move', from: '/x', path: '/y' }, '#/0/from', 'Path /x does not exist'],
    ['copy from a missing member', { op: 'copy', from: '/a/x', path: '/y' }, '#/0/from', 'Path /a/x does not exist'],
    ['move to a missing parent', { op: 'move', from: '/n', path: '/x/n' }, '#/0/path', 'Path /x does not exist'],
    ['remove of the whole document', { op: 'remove', path: '' }, '#/0/path', 'Cannot remove the whole document'],
    ['remove under a number', { op: 'remove', path: '/n/x' }, '#/0/path', 'Path /n is neither an object nor an array'],
    ['an escaped name in the message', { op: 'remove', path: '/a~1b~0c/x' }, '#/0/path', 'Path /a~1b~0c does not exist'],
    ['an inherited member does not exist (remove)', { op: 'remove', path: '/hasOwnProperty' }, '#/0/path', 'Path /hasOwnProperty does not exist'],
    ['an inherited member does not exist (test)', { op: 'test', path: '/a/toString', value: 1 }, '#/0/path', 'Path /a/toString does not exist'],
    ['an inherited member does not exist (replace)', { op: 'replace', path: '/valueOf', value: 1 }, '#/0/path', 'Path /valueOf does not exist'],
    ['an inherited member does not exist (copy)', { op: 'copy', from: '/toString', path: '/x' }, '#/0/from', 'Path /toString does not exist'],
    ['an inherited member on the way', { op: 'add', path: '/isPrototypeOf/x', value: 1 }, '#/0/path', 'Path /isPrototypeOf does not exist']
  ]
  for (const [name, operation, pointer, message] of cases) {
    t.same(patchError(() => patched(document, [operation])), { pointer, message }, name)
  }
  // The index in the pointer is the failing operation's.
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/n', value: 5 }, { op: 'add', path: '/q', value: 1 }, { op: 'remove', path: '/q/r' }])),
    { pointer: '#/2/path', message: 'Path /q is neither an object nor an array' })
  t.same(patchError(() => patched(7, [{ op: 'add', path: '/x', value: 1 }])), { pointer: '#/0/path', message: 'The document is neither an object nor an array' })
  t.same(patchError(() => patched(null, [{ op: 'replace', path: '/x', value: 1 }])), { pointer: '#/0/path', message: 'The document is neither an object nor an array' })
})

test('a failed test points at its value', async (t) => {
  const document = { price: 10, tags: ['a', 'b'], nested: { x: [1, { y: 2 }] } }
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/price', value: 10 }, { op: 'test', path: '/price', value: 11 }])),
    { pointer: '#/1/value', message: 'Test failed: /price is not 11' })
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/tags', value: ['b', 'a'] }])), { pointer: '#/0/value', message: 'Test failed: /tags is not ["b","a"]' })
  t.same(patchError(() => patched(document, [{ op: 'test', path: '', value: {} }])), { pointer: '#/0/value', message: 'Test failed: the document is not {}' })
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/price', value: null }])), { pointer: '#/0/value', message: 'Test failed: /price is not null' })
  const long = 'x'.repeat(100)
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/price', value: long }])),
    { pointer: '#/0/value', message: `Test failed: /price is not "${'x'.repeat(56)}...` }, 'a long value is shortened')
  t.same(patchError(() => patched(document, [{ op: 'test', path: '/price', value: 'x'.repeat(58) }])),
    { pointer: '#/0/value', message: `Test failed: /price is not "${'x'.repeat(58)}"` }, 'a value of 60 characters is not')
  // Equality is JSON's: member order does not matter, numbers compare by value.
  t.same(patched(document, [
    { op: 'test', path: '', value: { nested: { x: [1.0, { y: 2 }] }, tags: ['a', 'b'], price: 1e1 } },
    { op: 'test', path: '/nested/x/1/y', value: 2 }
  ]), document)
})

test('jsonEqual is the equality of JSON values', async (t) => {
  t.ok(jsonEqual({ a: 1, b: [1, { c: null }] }, { b: [1, { c: null }], a: 1 }), 'member order does not matter')
  t.ok(jsonEqual(1, 1.0))
  t.ok(jsonEqual([], []))
  t.ok(jsonEqual({}, {}))
  t.ok(jsonEqual('a', 'a'))
  t.notOk(jsonEqual('10', 10), 'a string is not a number')
  t.notOk(jsonEqual(0, false))
  t.notOk(jsonEqual(null, {}))
  t.notOk(jsonEqual({}, null))
  t.notOk(jsonEqual(null, false))
  t.notOk(jsonEqual([], {}), 'an array is not an object')
  t.notOk(jsonEqual({}, []), 'an object is not an array')
  t.notOk(jsonEqual(1, {}), 'a number is not an empty object')
  t.notOk(jsonEqual({}, 1), 'nor the other way round')
  t.notOk(jsonEqual('', []), 'nor is an empty string an empty array')
  t.notOk(jsonEqual([1, 2], [2, 1]), 'arrays compare element by element')
  t.notOk(jsonEqual([1], [1, 1]))
  t.notOk(jsonEqual({ a: 1 }, { a: 1, b: 2 }))
  t.notOk(jsonEqual({ a: 1 }, { b: 1 }), 'the same number of members, not the same names')
  t.notOk(jsonEqual({ a: { b: 1 } }, { a: { b: 2 } }))
  // `b` inherits `__proto__` (Object.prototype, with no enumerable members): only an own member counts.
  t.notOk(jsonEqual(JSON.parse('{ "__proto__": {} }'), { a: 1 }), 'an inherited member is not a member')
  t.ok(jsonEqual(JSON.parse('{ "__proto__": {} }'), JSON.parse('{ "__proto__": {} }')))
})

test('operations do what RFC 6902 §4 says', async (t) => {
  const document = { a: { b: 1 }, list: [1, 2, 3] }
  t.same(patched(document, [{ op: 'add', path: '/a/b', value: 2 }]), { a: { b: 2 }, list: [1, 2, 3] }, 'add replaces an existing member')
  t.same(patched(document, [{ op: 'add', path: '/list/3', value: 4 }]), { a: { b: 1 }, list: [1, 2, 3, 4] }, 'add at the length appends')
  t.same(patched(document, [{ op: 'add', path: '/list/0', value: 0 }]), { a: { b: 1 }, list: [0, 1, 2, 3] })
  t.same(patched(document, [{ op: 'add', path: '', value: [1] }]), [1], 'add at the root replaces the document')
  t.same(patched(document, [{ op: 'replace', path: '', value: 'x' }]), 'x', 'replace at the root')
  t.same(patched(document, [{ op: 'replace', path: '/list/1', value: { z: 1 } }]), { a: { b: 1 }, list: [1, { z: 1 }, 3] })
  t.same(patched(document, [{ op: 'replace', path: '/a/b', value: null }]), { a: { b: null }, list: [1, 2, 3] }, 'null is a value')
  t.same(patched(document, [{ op: 'add', path: '/toString', value: 1 }]), { a: { b: 1 }, list: [1, 2, 3], toString: 1 }, 'a name the prototype has is a new member')
  t.same(patched({ '': 1, x: { '': 2 } }, [{ op: 'replace', path: '/', value: 3 }, { op: 'remove', path: '/x/' }]), { '': 3, x: {} }, 'the empty member name')
  t.same(patched({ '-': 1 }, [{ op: 'replace', path: '/-', value: 2 }]), { '-': 2 }, '"-" is an ordinary member name of an object')
  t.same(patched({ 0: 'a' }, [{ op: 'remove', path: '/0' }]), {}, 'a digit is an ordinary member name of an object')
  const twelve = Array.from({ length: 12 }, (_, i) => i)
  const twoDigits = [{ op: 'replace', path: '/list/10', value: 'x' }, { op: 'add', path: '/list/12', value: 'y' }]
  t.same(patched({ list: twelve }, twoDigits), { list: [...twelve.slice(0, 10), 'x', 11, 'y'] }, 'two-digit indices')
  t.same(patched(document, [{ op: 'move', from: '/a', path: '/a' }]), document, 'a move onto itself changes nothing')
  t.same(patched(document, [{ op: 'move', from: '', path: '' }]), document, 'so does a move of the root onto itself')
  t.same(patched(document, [{ op: 'move', from: '/a/b', path: '' }]), 1, 'a move to the root replaces the document')
  t.same(patched(document, [{ op: 'move', from: '/list/0', path: '/list/-' }]), { a: { b: 1 }, list: [2, 3, 1] }, 'move to "-" appends')
  t.same(patched(document, [{ op: 'move', from: '/a', path: '/ab' }]), { ab: { b: 1 }, list: [1, 2, 3] }, '/a is not a parent of /ab')
  t.same(patchError(() => patched(document, [{ op: 'move', from: '/list/0', path: '/list/3' }])),
    { pointer: '#/0/path', message: 'Path /list/3 is past the end of the array (length 2)' }, 'a move is a remove, then an add')
  t.same(patched(document, [{ op: 'copy', from: '/list', path: '/a/list' }]), { a: { b: 1, list: [1, 2, 3] }, list: [1, 2, 3] })
  t.same(patched(document, [{ op: 'copy', from: '/a/b', path: '/list/-' }]), { a: { b: 1 }, list: [1, 2, 3, 1] }, 'copy to "-" appends')
  t.same(patched(document, [{ op: 'copy', from: '', path: '/a/all' }]), { a: { b: 1, all: { a: { b: 1 }, list: [1, 2, 3] } }, list: [1, 2, 3] },
    'a copy of the whole document into itself')
  t.same(patched(document, [{ op: 'test', path: '', value: { list: [1, 2, 3], a: { b: 1 } } }]), document, 'test of the whole document')
  t.same(patched(document, [{ op: 'remove', path: '/list/0' }, { op: 'remove', path: '/list/0' }, { op: 'remove', path: '/a/b' }]), { a: {}, list: [3] },
    'operations apply in order')
})

test('an insertion into an array, or a removal, is charged for the elements it moves: none at the end', async (t) => {
  // 64,000 elements: an insertion or a removal at the front moves all of them (1,000 steps of work), at the end none.
  const document = { list: new Array<number>(64_000).fill(0) }
  const tooCostly = /^Applying the patch takes more than \d+ steps/
  const adds = (path: string) => Array.from({ length: 800 }, () => ({ op: 'add', path, value: 1 }))
  const appended = applyJsonPatch(document, adds('/list/-')) as { list: number[] }
  t.equal(appended.list.length, 64_800, '800 appends fit the work of a patch on this document many times over')
  t.match(patchError(() => applyJsonPatch(document, adds('/list/0'))).message, tooCostly, '800 at the front do not')
  const removals = (index: (i: number) => number) =>
    Array.from({ length: 800 }, (_, i) => ({ op: 'remove', path: `/list/${index(i)}` }))
  const shortened = applyJsonPatch(document, removals((i) => 63_999 - i)) as { list: number[] }
  t.equal(shortened.list.length, 63_200, '800 removals of the last element fit')
  t.match(patchError(() => applyJsonPatch(document, removals(() => 0))).message, tooCostly, '800 of the first do not')
})

test('the size a patch is bounded by is the size of the document it makes, operation by operation', async (t) => {
  // Each operation changes the size by exactly what it adds and removes (the measure of jsonSize): a maxSize
  // equal to the result's size lets the patch apply, one character less refuses it.
  const document = { a: { b: 'bb' }, list: [1, 'two', { three: 3 }], n: 12 }
  const cases: Array<[string, unknown[]]> = [
    ['a member added', [{ op: 'add', path: '/a/c', value: [1, 2] }]],
    ['a member replaced by add', [{ op: 'add', path: '/a/b', value: 'a longer string' }]],
    ['a member replaced', [{ op: 'replace', path: '/n', value: { x: 'y' } }]],
    ['an element inserted', [{ op: 'add', path: '/list/1', value: 'inserted' }]],
    ['an element replaced', [{ op: 'replace', path: '/list/2', value: 'longer than the object it replaces' }]],
    ['a member removed', [{ op: 'remove', path: '/a' }]],
    ['an element removed', [{ op: 'remove', path: '/list/2' }]],
    ['the document replaced by add', [{ op: 'add', path: '', value: { whole: 'a new document, longer than before' } }]],
    ['the document replaced', [{ op: 'replace', path: '', value: 'short' }]],
    ['a member copied', [{ op: 'copy', from: '/list', path: '/a/list' }]],
    ['an element moved into an object', [{ op: 'move', from: '/list/2', path: '/a/moved' }]]
  ]
  for (const [name, patch] of cases) {
    const result = applyJsonPatch(document, patch)
    const size = jsonSize(result)
    const limits = (maxSize: number) => ({ limits: { ...DEFAULT_PATCH_LIMITS, maxSize } })
    t.same(applyJsonPatch(document, patch, limits(size)), result, `${name}: applies with maxSize ${size}`)
    t.match(patchError(() => applyJsonPatch(document, patch, limits(size - 1))),
      { pointer: '#/0/path', message: /larger than/ }, `${name}: refused with maxSize ${size - 1}`)
  }
})

test('values are copied: the result shares nothing with the document or the patch', async (t) => {
  const document = { a: { b: [1] } }
  const patch = [{ op: 'add', path: '/v', value: { deep: [1] } }, { op: 'add', path: '/v/deep/-', value: 2 }, { op: 'copy', from: '/a', path: '/c' },
    { op: 'add', path: '/c/b/-', value: 3 }, { op: 'replace', path: '/r', value: { z: [] } }]
  const error = patchError(() => patched(document, patch))
  t.same(error, { pointer: '#/4/path', message: 'Path /r does not exist' })
  patch.pop()
  const result = patched(document, patch) as { a: { b: number[] }, v: { deep: number[] }, c: { b: number[] } }
  t.same(result, { a: { b: [1] }, v: { deep: [1, 2] }, c: { b: [1, 3] } }, 'the copy was changed, not its source')
  result.a.b.push(9)
  result.v.deep.push(9)
  t.same(document, { a: { b: [1] } }, 'the document is untouched by a change to the result')
  t.same(patch[0], { op: 'add', path: '/v', value: { deep: [1] } }, 'the patch is untouched by a change to the result')
  const value = { z: [1] }
  const replaced = patched({ r: 0 }, [{ op: 'replace', path: '/r', value }]) as { r: { z: number[] } }
  replaced.r.z.push(2)
  t.same(value, { z: [1] }, 'a replaced value is a copy')
  const root = patched({}, [{ op: 'add', path: '', value }]) as { z: number[] }
  t.not(root, value, 'even at the root')
})

test('all or nothing: a failing operation leaves nothing applied', async (t) => {
  const document = { list: [1, 2], a: { b: 1 } }
  const before = structuredClone(document)
  const patch = [{ op: 'remove', path: '/list/0' }, { op: 'add', path: '/a/c', value: 2 }, { op: 'test', path: '/a/b', value: 2 }]
  t.same(patchError(() => applyJsonPatch(document, patch)), { pointer: '#/2/value', message: 'Test failed: /a/b is not 2' })
  t.same(document, before)
})

test('prototype pollution through a JSON Patch is refused', async (t) => {
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort()
  const cases: Array<[string, unknown, string, string]> = [
    ['add to __proto__', JSON.parse('[{ "op": "add", "path": "/__proto__/polluted", "value": true }]'), '#/0/path', 'Member name __proto__ is not allowed'],
    ['add at __proto__', [{ op: 'add', path: '/__proto__', value: { polluted: true } }], '#/0/path', 'Member name __proto__ is not allowed'],
    ['replace through constructor/prototype', [{ op: 'replace', path: '/constructor/prototype/polluted', value: true }], '#/0/path',
      'Member name constructor is not allowed'],
    ['add through a nested prototype', [{ op: 'test', path: '/a', value: {} }, { op: 'add', path: '/a/prototype/polluted', value: true }], '#/1/path',
      'Member name prototype is not allowed'],
    ['copy to __proto__', [{ op: 'copy', from: '/a', path: '/__proto__' }], '#/0/path', 'Member name __proto__ is not allowed'],
    ['copy from __proto__', [{ op: 'copy', from: '/__proto__', path: '/x' }], '#/0/from', 'Member name __proto__ is not allowed'],
    ['move to constructor/prototype', [{ op: 'move', from: '/a', path: '/x/constructor/prototype' }], '#/0/path', 'Member name constructor is not allowed'],
    ['move from __proto__', [{ op: 'move', from: '/a/__proto__', path: '/x' }], '#/0/from', 'Member name __proto__ is not allowed'],
    ['remove of __proto__', [{ op: 'remove', path: '/__proto__' }], '#/0/path', 'Member name __proto__ is not allowed'],
    ['test of constructor', [{ op: 'test', path: '/constructor', value: {} }], '#/0/path', 'Member name constructor is not allowed']
  ]
  for (const [name, patch, pointer, message] of cases) {
    t.same(patchError(() => patched({ a: {} }, patch)), { pointer, message }, name)
    t.equal(({} as Record<string, unknown>).polluted, undefined, `${name}: Object.prototype is clean`)
  }
  // A document that holds an own "__proto__" member (JSON.parse makes one) cannot be reached through it either.
  const document = JSON.parse('{ "__proto__": { "x": 1 } }') as unknown
  t.same(patchError(() => patched(document, [{ op: 'add', path: '/__proto__/polluted', value: true }])),
    { pointer: '#/0/path', message: 'Member name __proto__ is not allowed' })
  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeNames, 'Object.prototype has no new member')
  t.equal(Object.getPrototypeOf({}), Object.prototype)
})

test('prototype pollution through a merge patch is refused', async (t) => {
  const prototypeNames = Object.getOwnPropertyNames(Object.prototype).sort()
  const cases: Array<[string, string, string]> = [
    ['__proto__ at the top', '{ "__proto__": { "polluted": true } }', '#/__proto__'],
    ['__proto__ nested', '{ "a": { "__proto__": { "polluted": true } } }', '#/a/__proto__'],
    ['constructor/prototype', '{ "constructor": { "prototype": { "polluted": true } } }', '#/constructor'],
    ['prototype under a new member', '{ "fresh": { "prototype": { "polluted": true } } }', '#/fresh/prototype'],
    ['a removal of __proto__', '{ "a": { "__proto__": null } }', '#/a/__proto__'],
    ['a name that needs escaping on the way', '{ "a~b/c": { "constructor": 1 } }', '#/a~0b~1c/constructor'],
    ['after harmless members', '{ "b": 2, "a": { "x": 1, "prototype": {} } }', '#/a/prototype']
  ]
  for (const [name, text, pointer] of cases) {
    const target = { a: { x: 0 }, b: 1 }
    const name_ = pointer.split('/').pop() as string
    t.same(patchError(() => applyMergePatch(target, JSON.parse(text))), { pointer, message: `Member name ${name_} is not allowed` }, name)
    t.same(target, { a: { x: 0 }, b: 1 }, `${name}: the target is not modified, even by the members merged before`)
    t.equal(({} as Record<string, unknown>).polluted, undefined, `${name}: Object.prototype is clean`)
  }
  t.same(Object.getOwnPropertyNames(Object.prototype).sort(), prototypeNames, 'Object.prototype has no new member')
})

test('a merge patch copies what it inserts and merges into own members only', async (t) => {
  const target = { a: { b: [1] }, keep: { deep: { x: 1 } } }
  const patch = { a: { c: { d: [2] } }, list: [{ e: 1 }] }
  const result = applyMergePatch(target, patch) as {
    a: { b: number[], c: { d: number[] } },
    list: Array<{ e: number }>,
    keep: { deep: { x: number } }
  }
  t.same(result, { a: { b: [1], c: { d: [2] } }, list: [{ e: 1 }], keep: { deep: { x: 1 } } })
  result.a.b.push(9)
  result.a.c.d.push(9)
  result.list[0].e = 9
  result.keep.deep.x = 9
  t.same(target, { a: { b: [1] }, keep: { deep: { x: 1 } } }, 'the target shares nothing with the result')
  t.same(patch, { a: { c: { d: [2] } }, list: [{ e: 1 }] }, 'neither does the patch')
  const replacement = [1, [2]]
  const replaced = applyMergePatch({ a: 1 }, replacement) as unknown[]
  t.same(replaced, [1, [2]])
  t.not(replaced, replacement, 'a patch that replaces the target is copied too')
  t.same(applyMergePatch({}, { toString: { a: 1 } }), { toString: { a: 1 } }, 'a name the prototype has is a new member')
  t.same(applyMergePatch('text', { a: null }), {}, 'a target that is not an object becomes one')
  t.same(applyMergePatch({ a: 1 }, {}), { a: 1 }, 'an empty patch changes nothing')
})
