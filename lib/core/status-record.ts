/** An index far past any status code: set and deleted once, it leaves the object's elements sparse. */
const FAR_INDEX = 1_000_000

/**
 * An empty object for keys that are status codes. V8 keeps integer-like keys as array elements
 * sized to the largest index, so `{ 200, 415 }` holds some 5 kB of empty slots; an object whose
 * elements were made sparse first keeps them in a dictionary, at a few dozen bytes a key. Every
 * route holds such maps from registration on, thousands of them in a large application.
 */
export function statusRecord<T> (): Record<string, T> {
  const record: Record<string, T> = {}
  // V8 switches the elements to a dictionary for an index this far out, and keeps them so after the delete.
  record[FAR_INDEX] = undefined as T // removed on the next line: never read
  Reflect.deleteProperty(record, FAR_INDEX)
  return record
}
