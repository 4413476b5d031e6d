/**
 * How deeply a parsed JSON value nests, read without recursion: a value nested deeper than the
 * stack allows must be refused, not walked into a RangeError.
 */

/** RFC 6901 §3: `~` and `/` in a member name are written `~0` and `~1`. */
export const escapeToken = (token: string): string => token.replace(/~/g, '~0').replace(/\//g, '~1')

/**
 * Where the first array or object nested more than `levels` deep lies inside `value`, in
 * document order, as a JSON Pointer suffix (`/a/0`; `''` when `value` itself is one and
 * `levels` is 0); `undefined` when there is none. A top-level array or object is one level.
 * Every value is visited at most once, and no deeper than `levels + 1`.
 */
export function firstTooDeep (value: unknown, levels: number): string | undefined {
  // The open arrays and objects: their member names (objects), and the next member to visit.
  const open: Array<{ node: Record<string, unknown> | unknown[], keys: string[] | undefined, next: number }> = []
  let node = value
  for (;;) {
    if (typeof node === 'object' && node !== null) {
      if (open.length === levels) return open.map((f) => '/' + escapeToken(f.keys === undefined ? String(f.next - 1) : f.keys[f.next - 1])).join('')
      open.push(
        {
          node: node as Record<string, unknown> | unknown[],
          keys: Array.isArray(node) ? undefined : Object.keys(node),
          next: 0
        }
      )
    }
    let frame = open.at(-1)
    while (frame !== undefined && frame.next === (frame.keys ?? (frame.node as unknown[])).length) {
      open.pop()
      frame = open.at(-1)
    }
    if (frame === undefined) return undefined
    const index = frame.next++
    node = frame.keys === undefined
      ? (frame.node as unknown[])[index]
      : (frame.node as Record<string,
      unknown>)[frame.keys[index]]
  }
}
