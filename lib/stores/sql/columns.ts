import type { ColumnFacts, FieldKind } from '../repository.js'
import type { PgPool, SqliteDatabase } from './drivers.js'

// What a SQL table says of its columns: whether one may hold NULL, and the JSON type its values
// arrive as. A view checks its response schema against them at registration, so a schema that
// could never describe a row (a NULL where the schema wants a string) fails there, not as a 500.
// A computed field is not the table's column of the same name, if it has one: it says nothing.

/** SQLite's type affinity of a declared column type (SQLite's datatype rules, §3.1), as the values the SQLite drivers return. */
function sqliteKind (declared: string): FieldKind | undefined {
  const type = declared.toUpperCase()
  if (type.includes('INT')) return 'integer'
  if (/CHAR|CLOB|TEXT/.test(type)) return 'string'
  if (/REAL|FLOA|DOUB/.test(type)) return 'number'
  // BLOB, no type at all, and NUMERIC affinity hold values of any kind.
  return undefined
}

/**
 * The columns of a SQLite table (`PRAGMA table_info`), or `undefined` when the table does not
 * exist yet (an application may create it after making the repository).
 */
export function sqliteColumns (db: SqliteDatabase, table: string,
  computed: ReadonlyMap<string, unknown>): ReadonlyMap<string, ColumnFacts> | undefined {
  // The table name is a checked identifier (SqlBuilder), quoted here as everywhere.
  const rows = db.prepare(`PRAGMA table_info("${table}")`).all() as Array<{ name: string, type: string, notnull: number, pk: number }>
  if (rows.length === 0) return undefined
  return new Map(rows.filter((row) => !computed.has(row.name))
    .map((row) => [row.name, { nullable: row.notnull === 0 && row.pk === 0, kind: sqliteKind(row.type) }]))
}

/** The JSON type `pg` gives values of a PostgreSQL data type; types it returns as strings or objects (bigint, numeric, dates) are not said. */
const PG_KINDS: Record<string, FieldKind> = {
  integer: 'integer',
  smallint: 'integer',
  real: 'number',
  'double precision': 'number',
  text: 'string',
  'character varying': 'string',
  character: 'string',
  uuid: 'string',
  boolean: 'boolean'
}

/** The columns of a PostgreSQL table (`information_schema.columns`, in the search path), or `undefined` when it does not exist yet. */
export async function postgresColumns (pool: PgPool, table: string,
  computed: ReadonlyMap<string, unknown>): Promise<ReadonlyMap<string, ColumnFacts> | undefined> {
  const client = await pool.connect()
  try {
    const { rows } = await client.query(
      'SELECT column_name, is_nullable, data_type FROM information_schema.columns WHERE table_name = $1 AND table_schema = ANY (current_schemas(false))', [table])
    if (rows.length === 0) return undefined
    return new Map(rows.filter((row) => !computed.has(String(row.column_name)))
      .map((row) => [String(row.column_name), { nullable: row.is_nullable === 'YES', kind: PG_KINDS[String(row.data_type)] }]))
  } finally {
    client.release()
  }
}
