import { test } from 'tap'
import { scopedBy } from '../lib/access/scope-criteria.js'
import { MemoryRepository } from '../lib/generics.js'

// Two sets of criteria that must both hold (docs/permissions.md, "Rules as criteria scope lists"):
// the permissions' criteria over a view's own, read by every store as one conjunction. What each
// combination becomes, and that a store reading it selects exactly the rows where both hold.

interface Row { id: number, owner: number, title: string, tags: string | null }
const ROWS: Row[] = [
  { id: 1, owner: 1, title: 'Emma', tags: 'a' },
  { id: 2, owner: 1, title: 'Kim', tags: null },
  { id: 3, owner: 2, title: 'Dubliners', tags: 'b' },
  { id: 4, owner: 2, title: 'Ulysses', tags: 'a' }
]

const CASES: Array<[string, Record<string, unknown>, Record<string, unknown>, Record<string, unknown>]> = [
  ['no scope: the base as it is', { owner: 1 }, {}, { owner: 1 }],
  ['a field only the scope names', { owner: 1 }, { title: 'Emma' }, { owner: 1, title: 'Emma' }],
  ['one value both name, kept once', { owner: 1 }, { owner: 1 }, { owner: 1 }],
  ['a path\'s string and a row\'s integer: both kept, the store compares each', { id: '2' }, { id: 2 }, { id: '2', id__eq: 2 }],
  ['two values of one field: both spellings', { owner: 1 }, { owner: 2 }, { owner: 1, owner__eq: 2 }],
  ['the other spelling first', { owner__eq: 1 }, { owner__eq: 2 }, { owner__eq: 1, owner: 2 }],
  ['both spellings taken: nothing', { owner: 1, owner__eq: 1 }, { owner: 2 }, { owner: 1, owner__eq: 1, owner__in: [] }],
  ['two lower bounds: the higher', { id__gt: 1 }, { id__gt: 2 }, { id__gt: 2 }],
  ['two lower bounds, the other way', { id__ge: 3 }, { id__ge: 2 }, { id__ge: 3 }],
  ['two upper bounds: the lower', { id__lt: 4 }, { id__lt: 3 }, { id__lt: 3 }],
  ['two upper bounds, the other way', { id__le: 2 }, { id__le: 3 }, { id__le: 2 }],
  ['two lists: their intersection', { id__in: [1, 2, 3] }, { id__in: [2, 3, 4] }, { id__in: [2, 3] }],
  ['two lists with nothing in common', { id__in: [1] }, { id__in: [2] }, { id__in: [] }],
  ['bounds of two types: nothing', { title__ge: 1 }, { title__ge: 'A' }, { title__ge: 1, title__in: [] }],
  ['a list and no list: nothing', { id__in: [1] }, { id__in: 1 }, { id__in: [] }],
  ['an object value and a scalar: nothing', { id__lt: { at: 1 } }, { id__lt: 2 }, { id__lt: { at: 1 }, id__in: [] }],
  ['two patterns: nothing', { title__like: 'E%' }, { title__like: '%a' }, { title__like: 'E%', title__in: [] }],
  ['two nulls tests', { tags__is_null: true }, { tags__is_null: false }, { tags__is_null: true, tags__in: [] }],
  ['null and null: kept once', { tags: null }, { tags: null }, { tags: null }]
]

test('what two sets of criteria become, and what a store selects with them', async (t) => {
  const store = new MemoryRepository<Row>({ rows: ROWS })
  for (const [name, base, scope, expected] of CASES) {
    const both = scopedBy(base, scope)
    t.same(both, expected, name)
    t.equal(both === base, Object.keys(scope).length === 0, `${name}: copied only when the scope adds something`)
    t.same(base, CASES.find(([n]) => n === name)?.[1], `${name}: the base is not changed`)
    // What the store selects is what both select, unless both cannot hold as criteria (then nothing).
    const ids = (criteria: Record<string, unknown>) => store.list(criteria, { orderBy: [{ field: 'id', descending: false }] }).map((row) => row.id)
    const either = (criteria: Record<string, unknown>) => { try { return ids(criteria) } catch { return undefined } }
    const [left, right, selected] = [either(base), either(scope), either(both)]
    if (left !== undefined && right !== undefined && selected !== undefined) {
      const meant = left.filter((id) => right.includes(id))
      t.ok(selected.every((id) => meant.includes(id)), `${name}: never a row one of them refuses`)
    }
  }
  t.equal(scopedBy({}, { owner: 1 }).owner, 1)
})
