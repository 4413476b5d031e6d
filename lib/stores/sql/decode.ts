// Stored values decoded, for the repositories: fields a database holds in another JSON type than the API sends, turned into it on every row.
// Values a database gives in another JSON type than the API sends: SQLite has no boolean (it
// stores 0 and 1) and no JSON type (an aggregate such as `json_group_array` returns its text). A
// repository told what a field holds (`decode: { available: 'boolean', genres: 'json' }`) turns
// them into that type on every row it returns, the rows a write's checks judge included, so that
// an ETag hashed from a read and a precondition comparing the row agree.
import type { ColumnFacts } from '../repository.js'

/** What a stored field holds, when the database cannot say it in JSON's types. */
export type StoredKind = 'boolean' | 'json'

/** Turns one row's declared fields into their JSON types, in place. */
export type RowDecoder = (row: Record<string, unknown>) => Record<string, unknown>

/**
 * The decoder of a repository's declared fields, or `undefined` when it declares none: a
 * repository that decodes nothing pays nothing per row. A value already of the type (PostgreSQL's
 * own booleans, a `json` column `pg` parsed) and `null` are left as they are.
 */
export function rowDecoder (
  decode: Readonly<Record<string, StoredKind | undefined>> | undefined
): RowDecoder | undefined {
  const fields = declared(decode)
  if (fields.length === 0) return undefined
  return (row) => {
    for (const [field, kind] of fields) {
      const value = row[field]
      if (kind === 'boolean' ? typeof value === 'number' || typeof value === 'bigint' : typeof value === 'string') {
        row[field] = kind === 'boolean' ? Number(value) !== 0 : JSON.parse(value as string) // a string, just checked
      }
    }
    return row
  }
}

/** What the table says of its columns, with the declared fields in the type they are decoded to (a JSON value: any type). */
export function decodedFacts (
  facts: ReadonlyMap<string, ColumnFacts> | undefined,
  decode: Readonly<Record<string, StoredKind | undefined>> | undefined
): ReadonlyMap<string, ColumnFacts> | undefined {
  if (facts === undefined || decode === undefined) return facts
  const kinds = new Map(declared(decode))
  return new Map([...facts].map(([field, fact]): [string, ColumnFacts] => {
    const kind = kinds.get(field)
    return [field, kind === undefined ? fact : { nullable: fact.nullable, kind: kind === 'boolean' ? 'boolean' : undefined }]
  }))
}

/** The fields `decode` declares, with their kinds. */
const declared = (decode: Readonly<Record<string, StoredKind | undefined>> | undefined): Array<[string, StoredKind]> =>
  Object.entries(decode ?? {}).filter((entry): entry is [string, StoredKind] => entry[1] !== undefined)
