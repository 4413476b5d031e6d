// Records (core): the one test that a value is an object read by member name, as parsed JSON and schemas are.

/** An object that is not an array: members by name (a parsed JSON object, a value a schema names the members of). */
export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
