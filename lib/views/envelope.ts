// Named envelopes (views layer): single objects wrapped in a name on the wire (`{ "loan": {...} }`), for the actions that send or take one.
import { Type, type TObject, type TSchema } from '@sinclair/typebox'

// Named envelopes (docs/actions.md, "Envelopes"): APIs that send `{ "loan": { ... } }` rather
// than the object itself. The view declares the name once (`envelope = 'loan'`); its actions
// keep returning and receiving the object, and the library wraps the answers and unwraps the
// bodies of the actions on one object, so that types, checks and ETags see one shape each.

/** The standard actions whose answer is one object, and whose body (when they take one) is one. */
export const ENVELOPED_ACTIONS = new Set(['create', 'retrieve', 'update', 'partialUpdate', 'restore'])

const built = new WeakMap<TSchema, Map<string, TObject>>()

/** `{ [name]: schema }`, built once per schema and name: what the wire carries. */
export function envelopeSchema (schema: TSchema, name: string): TObject {
  let byName = built.get(schema)
  if (byName === undefined) built.set(schema, byName = new Map())
  let envelope = byName.get(name)
  if (envelope === undefined) byName.set(name, envelope = Type.Object({ [name]: schema }))
  return envelope
}

/** A function putting a value in its envelope. */
export const wrapIn = (name: string) => (value: unknown): Record<string, unknown> => ({ [name]: value })
