// What a SQL table says of its columns, for the repository families: the rows of the dialect's column lookup as column facts.
// Whether a column may hold NULL, and the JSON type its values arrive as. A view checks its response
// schema against them at registration, so a schema that could never describe a row (a NULL where the
// schema wants a string) fails there, not as a 500. Which statement lists the columns, and what its
// rows say, is each dialect's (`Dialect.columnsOf`, `Dialect.columnFact`); the runner runs it.
import type { ColumnFacts } from '../repository.js'
import type { Dialect } from './dialect.js'

/**
 * The columns the lookup's rows describe, or `undefined` when there are none: the table does not
 * exist yet (an application may create it after making the repository). A computed field is not
 * the table's column of the same name, if it has one: it says nothing.
 */
export function columnFacts (rows: ReadonlyArray<Record<string, unknown>>, dialect: Dialect,
  computed: ReadonlyMap<string, unknown>): ReadonlyMap<string, ColumnFacts> | undefined {
  if (rows.length === 0) return undefined
  const facts = new Map<string, ColumnFacts>()
  for (const row of rows) {
    const [name, fact] = dialect.columnFact(row)
    if (!computed.has(name)) facts.set(name, fact)
  }
  return facts
}
