// String formats (schema layer): the set Fastify validates with (ajv-formats), registered in TypeBox's
// one registry only as the library's own schemas use them, and never over a format of the application's.
import { FormatRegistry } from '@sinclair/typebox'
import { fullFormats } from 'ajv-formats/dist/formats.js'
import { isSchemaNode } from '../core/schema-node.js'

type FormatDefinition = RegExp | ((value: string) => boolean) | {
  type?: string,
  validate: RegExp | ((value: string) => boolean)
}

/**
 * Registers string formats with TypeBox, leaving alone those already registered (by
 * the application, say). Formats of other types (`int32` on numbers) are skipped:
 * TypeBox applies `format` to strings only.
 */
export function registerFormats (formats: Record<string, unknown>): void {
  // ajv-formats declares its table loosely; each entry is one of the definition shapes above.
  for (const [name, definition] of Object.entries(formats as Record<string, FormatDefinition>)) {
    if (FormatRegistry.Has(name)) continue
    const check = typeof definition === 'function' || definition instanceof RegExp ? definition : (definition.type ?? 'string') === 'string' ? definition.validate : undefined
    if (check instanceof RegExp) FormatRegistry.Set(name, (v) => check.test(v))
    else if (check !== undefined) FormatRegistry.Set(name, check)
  }
}

const DAYS_IN_MONTH = [0, 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]

/** Two ASCII digits at `at` as a number, or -1. */
function twoDigits (value: string, at: number): number {
  const tens = value.charCodeAt(at) - 48
  const ones = value.charCodeAt(at + 1) - 48
  return tens >= 0 && tens <= 9 && ones >= 0 && ones <= 9 ? tens * 10 + ones : -1
}

/**
 * True when `value` has exactly the shape `Date.prototype.toISOString()` gives
 * (`YYYY-MM-DDTHH:MM:SS.sssZ`) and names a real instant without a leap second.
 * Every string it accepts, ajv-formats' `date-time` accepts too; anything else goes
 * to ajv-formats, so the format means the same, only the common case is cheaper
 * (the response check runs it on every item of every response: ≈10x faster).
 */
export function isCanonicalDateTime (value: string): boolean {
  if (value.length !== 24 || value.charCodeAt(4) !== 45 || value.charCodeAt(7) !== 45 || value.charCodeAt(10) !== 84 ||
    value.charCodeAt(13) !== 58 || value.charCodeAt(16) !== 58 || value.charCodeAt(19) !== 46 ||
      value.charCodeAt(23) !== 90) return false
  const century = twoDigits(value, 0)
  const yearInCentury = twoDigits(value, 2)
  const month = twoDigits(value, 5)
  const day = twoDigits(value, 8)
  const hour = twoDigits(value, 11)
  const minute = twoDigits(value, 14)
  const second = twoDigits(value, 17)
  const millis = twoDigits(value, 20)
  const lastDigit = value.charCodeAt(22) - 48
  if (century < 0 || yearInCentury < 0 || millis < 0 || lastDigit < 0 || lastDigit > 9) return false
  if (month < 1 || month > 12 || day < 1 || day > DAYS_IN_MONTH[month]) return false
  if (hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 || second > 59) return false
  if (month !== 2 || day !== 29) return true
  const year = century * 100 + yearInCentury
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
}

const fullDateTime = (fullFormats['date-time'] as { validate: (value: string) => boolean }).validate // ajv-formats declares its entries as a union of definition shapes; date-time is an object with `validate`

// TypeBox rejects every string format it does not know; ajv-formats is the format
// set Fastify itself validates with, so both validators agree on what a date-time is.
const LIBRARY_FORMATS: Record<string, unknown> = { ...fullFormats, 'date-time': (value: string) => isCanonicalDateTime(value) || fullDateTime(value) }

/**
 * Makes the string formats `schema` uses known to TypeBox, just before one of the
 * library's validators compiles it. TypeBox keeps formats in one registry for the whole
 * process, so the library adds only what its own schemas need, when they are compiled
 * (never on import), and never replaces a format registered already (by the application).
 */
export function useFormatsOf (schema: unknown): void {
  const used: Record<string, unknown> = {}
  const seen = new Set<object>()
  const visit = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || seen.has(node)) return
    seen.add(node)
    const format = isSchemaNode(node) ? node.format : undefined
    if (typeof format === 'string' && LIBRARY_FORMATS[format] !== undefined) used[format] = LIBRARY_FORMATS[format]
    for (const value of Object.values(node)) visit(value)
  }
  visit(schema)
  registerFormats(used)
}
