// The fields a generic view's filter names (views layer): each one its repository has, or one of its relations, checked at registration.
import { schemaStatic } from '../../core/typebox-lines.js'
import { ConfigurationError } from '../../core/configuration-error.js'
import type { FilterClass } from '../../query/filters.js'
import { partialKeyTieBreaker } from '../../query/cursor.js'
import { fieldNamesOf, keyFieldsOf, relationFieldsOf, storedFieldNamesOf } from '../../stores/repository.js'
import type { ViewBase } from '../mixins.js'

/** What the check reads of a generic view: its filter and its repository. */
type Filtered = ViewBase & { readonly filter: FilterClass | null, readonly repository: unknown }

/**
 * A field a filter names that the repository does not have would fail on the first request that
 * uses it (or, on a store without fixed fields, match nothing and order nothing): refused, by name.
 */
export function assertFilterFieldsKnown (klass: Filtered): void {
  if (klass.filter == null) return
  const partialKey = partialKeyTieBreaker(klass.filter, keyFieldsOf(klass.repository))
  if (partialKey !== undefined) throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${klass.name}: ${partialKey}`)
  assertRelationFieldsKnown(klass, klass.filter)
  const fixed = fieldNamesOf(klass.repository)
  // A store of rows of any shape: a field that neither the response schema nor any stored row has.
  const stored = fixed === undefined ? storedFieldNamesOf(klass.repository) : undefined
  const described = Object.keys(Object(schemaStatic(klass, 'responseSchema')?.properties) as object)
  const known = fixed !== undefined
    ? new Set(fixed)
    : stored !== undefined ? new Set([...stored, ...described]) : undefined
  if (known === undefined) return
  // Relation paths were checked above, against the relations the repository declares.
  const unknown = klass.filter.namedFields().find(({ field }) => !known.has(field) && !field.includes('.'))
  if (unknown === undefined) return
  const lacking = fixed === undefined ? 'which neither its responseSchema nor a row of its repository has (their fields' : 'which its repository does not have (its fields'
  throw new ConfigurationError('FV_ERR_UNKNOWN_FIELD', `Cannot register ${klass.name}: ${klass.filter.name}.${unknown.static} names "${unknown.field}", ${lacking}: ${[...known].join(', ')})`)
}

/** The statics of a filter whose fields are compared as criteria: a relation path may be named there only. */
const CRITERIA_STATICS = new Set(['fields', 'operators', 'operatorFields'])

/**
 * A filter naming `<relation>.<field>` (through `fieldOf`) over a repository that declares its
 * relations: the path must be one of them, and only a parameter can compare it (a relation has
 * many rows per row: nothing to sort by or search). A repository that declares none (one of
 * yours) is trusted with the criteria it takes.
 */
function assertRelationFieldsKnown (klass: Filtered, filter: FilterClass): void {
  const relations = relationFieldsOf(klass.repository)
  if (relations === undefined) return
  for (const { field, static: where } of filter.namedFields()) {
    if (!field.includes('.')) continue
    if (!CRITERIA_STATICS.has(where)) {
      throw new ConfigurationError('FV_ERR_RELATION', `Cannot register ${klass.name}: ${filter.name}.${where} names "${field}", a field of related rows, ` +
        'which a row has many of: a relation is compared by a parameter (fields, operators), never sorted or searched')
    }
    if (!relations.includes(field)) {
      throw new ConfigurationError('FV_ERR_RELATION', `Cannot register ${klass.name}: ${filter.name}.${where} names "${field}", which is not a field of ` +
        `its repository's relations (${relations.join(', ') || 'it declares none'})`)
    }
  }
}
