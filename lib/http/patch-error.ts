/**
 * The error of a patch document that cannot be applied, with a JSON Pointer into the patch
 * (RFC 6901, URI fragment form, as in `ProblemErrorEntry`), and the JSON values patches work on.
 */

/** A patch that cannot be applied: `pointer` says where in the patch document, the message says why. */
export class PatchError extends Error {
  /** JSON Pointer into the patch document, in URI fragment form: `#/2/path`. */
  readonly pointer: string

  constructor (message: string, pointer: string) {
    super(message)
    this.name = 'PatchError'
    this.pointer = pointer
  }
}

/** A JSON object as parsed: members by name. */
export type JsonObject = Record<string, unknown>

/** A JSON object: not `null`, not an array (what a resource's representation and a merge patch of it are). */
export const isObject = (value: unknown): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
