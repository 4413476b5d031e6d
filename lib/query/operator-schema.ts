// Operator parameters (query layer): the schema of a `field__op` query parameter, its lists bounded and its LIKE patterns bounded and well-formed.
import { Type, type TSchema } from '@sinclair/typebox'
import type { Operator } from '../stores/repository.js'

/** The bounds a filter puts on the size of its parameters (`maxListLength`, `maxPatternLength`). */
export interface SizeBounds { maxListLength: number, maxPatternLength: number }

/**
 * A well-formed LIKE pattern: every `\` escapes the character after it, and that character is `%`,
 * `_` or `\`. The stores do not agree on any other `\`: PostgreSQL fails on a trailing one, but only
 * for a row the match reaches it on, SQLite matches nothing with it and the memory store reads it as a
 * literal `\`; so it is refused before a store sees it. A `\` before another character is refused
 * too, though the stores all read it as that character: it drops the client's backslash without a
 * word (`C:\dir` matches `C:dir`), and a client who meant a literal one writes `\\`. Each step of the
 * expression is decided by the character it reads, so a check is linear in the pattern's length.
 */
export const LIKE_PATTERN = '^(?:[^\\\\]|\\\\[%_\\\\])*$'

/** What the document says of a LIKE pattern parameter. */
const LIKE_DESCRIPTION = 'A LIKE pattern: % matches any run of characters, _ one character; \\ escapes %, _ or \\ ' +
  '(\\%, \\_, \\\\), and nothing else.'

/** The schema of the parameter `field__op`, given the schema of its field. */
export function operatorSchema (op: Operator, field: TSchema, bounds: SizeBounds): TSchema {
  switch (op) {
    case 'in':
    case 'not_in': return Type.Array(field, { minItems: 1, maxItems: bounds.maxListLength })
    case 'is_null': return Type.Boolean()
    case 'like':
    case 'ilike':
      return Type.String({ maxLength: bounds.maxPatternLength, pattern: LIKE_PATTERN, description: LIKE_DESCRIPTION })
    default: return field
  }
}
