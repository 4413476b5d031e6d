/** A Fastify option that may be one value or a list (hooks), as a list. */
export function toList<T> (value: T | T[] | undefined): T[] {
  return value === undefined ? [] : Array.isArray(value) ? value : [value]
}
