/** The examples of RFC 6902 Appendix A and RFC 7396 Appendix A, shared by the unit and the HTTP tests. */

// RFC 6902 Appendix A, each example as the RFC writes it.
export type Expected = { result: unknown } | { error: { pointer: string, message: string } }
export const RFC6902: Array<[string, unknown, unknown, Expected]> = [
  ['A.1 Adding an Object Member', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }], { result: { baz: 'qux', foo: 'bar' } }],
  ['A.2 Adding an Array Element', { foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }], { result: { foo: ['bar', 'qux', 'baz'] } }],
  ['A.3 Removing an Object Member', { baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }], { result: { foo: 'bar' } }],
  ['A.4 Removing an Array Element', { foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }], { result: { foo: ['bar', 'baz'] } }],
  ['A.5 Replacing a Value', { baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }], { result: { baz: 'boo', foo: 'bar' } }],
  ['A.6 Moving a Value', { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } }, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }],
    { result: { foo: { bar: 'baz' }, qux: { corge: 'grault', thud: 'fred' } } }],
  ['A.7 Moving an Array Element', { foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }],
    { result: { foo: ['all', 'cows', 'eat', 'grass'] } }],
  ['A.8 Testing a Value: Success', { baz: 'qux', foo: ['a', 2, 'c'] }, [{ op: 'test', path: '/baz', value: 'qux' }, { op: 'test', path: '/foo/1', value: 2 }],
    { result: { baz: 'qux', foo: ['a', 2, 'c'] } }],
  ['A.9 Testing a Value: Error', { baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }],
    { error: { pointer: '#/0/value', message: 'Test failed: /baz is not "bar"' } }],
  ['A.10 Adding a Nested Member Object', { foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }],
    { result: { foo: 'bar', child: { grandchild: {} } } }],
  ['A.11 Ignoring Unrecognized Elements', { foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux', xyz: 123 }], { result: { foo: 'bar', baz: 'qux' } }],
  ['A.12 Adding to a Nonexistent Target', { foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }],
    { error: { pointer: '#/0/path', message: 'Path /baz does not exist' } }],
  // The RFC's patch text repeats "op"; JSON.parse keeps the last one (ECMA-262), so the duplicate
  // the RFC calls an error never reaches a function taking parsed JSON: it sees a plain `remove`.
  ['A.13 Invalid JSON Patch Document', { baz: 'qux', foo: 'bar' }, JSON.parse('[{ "op": "add", "path": "/baz", "value": "qux", "op": "remove" }]'),
    { result: { foo: 'bar' } }],
  ['A.14 ~ Escape Ordering', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: 10 }], { result: { '/': 9, '~1': 10 } }],
  ['A.15 Comparing Strings and Numbers', { '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }],
    { error: { pointer: '#/0/value', message: 'Test failed: /~01 is not "10"' } }],
  ['A.16 Adding an Array Value', { foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }], { result: { foo: ['bar', ['abc', 'def']] } }]
]

// RFC 7396 Appendix A: original, patch, result.
export const RFC7396: Array<[unknown, unknown, unknown]> = [
  [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
  [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
  [{ a: 'b' }, { a: null }, {}],
  [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
  [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
  [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
  [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
  [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
  [['a', 'b'], ['c', 'd'], ['c', 'd']],
  [{ a: 'b' }, ['c'], ['c']],
  [{ a: 'foo' }, null, null],
  [{ a: 'foo' }, 'bar', 'bar'],
  [{ e: null }, { a: 1 }, { e: null, a: 1 }],
  [[1, 2], { a: 'b', c: null }, { a: 'b' }],
  [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }]
]
