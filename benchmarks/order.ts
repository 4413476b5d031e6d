/**
 * The order of round `index` (from 0): the entries rotated by the index, and reversed in every
 * other round, so that no entry always runs in the same place or right after the same other one.
 * A negative index (a warm-up round before the first) rotates the other way.
 */
export function roundOrder<T> (entries: readonly T[], index: number): T[] {
  const shift = ((index % entries.length) + entries.length) % entries.length
  const order = [...entries.slice(shift), ...entries.slice(0, shift)]
  if (index % 2 !== 0) order.reverse()
  return order
}
