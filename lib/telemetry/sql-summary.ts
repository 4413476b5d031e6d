// What a SQL statement is, as telemetry names it (telemetry layer): its operation and its table, read from
// its text once per text, and a bounded number of names in all, whatever the statements are.

/** A statement's summary: OpenTelemetry's `db.operation.name`, `db.collection.name` and `db.query.summary`. */
export interface SqlSummary {
  /** The first keyword, upper case: `SELECT`, `INSERT`, `UPDATE`, `DELETE`, `BEGIN`, `SAVEPOINT`... */
  readonly operation: string
  /** The table the statement reads or writes (its first `FROM`, `INTO` or `UPDATE` outside parentheses), if it names one. */
  readonly table: string | undefined
  /** `SELECT items`, or the operation alone: a span's name, a label's value. */
  readonly name: string
}

/** How many texts are remembered (a list's IN (...) and its filters make texts without end). */
const KEPT_TEXTS = 1000
/** How many summaries there may be: past them, a statement is summarised as `OTHER`, so that labels stay bounded. */
const MOST_SUMMARIES = 200

const OTHER: SqlSummary = { operation: 'OTHER', table: undefined, name: 'OTHER' }
const TABLE_KEYWORDS = new Set(['FROM', 'INTO', 'UPDATE'])

/** Summaries of statements' texts, bounded in texts kept and in distinct summaries made. */
export class SqlSummaries {
  readonly #texts = new Map<string, SqlSummary>()
  readonly #names = new Map<string, SqlSummary>()

  of (sql: string): SqlSummary {
    const known = this.#texts.get(sql)
    if (known !== undefined) return known
    const read = summarise(sql)
    let summary = this.#names.get(read.name)
    if (summary === undefined) {
      summary = this.#names.size < MOST_SUMMARIES ? read : OTHER
      if (summary === read) this.#names.set(read.name, read)
    }
    if (this.#texts.size >= KEPT_TEXTS) this.#texts.clear()
    this.#texts.set(sql, summary)
    return summary
  }
}

/** Reads a statement's operation and table: words outside quotes and outside parentheses only. */
export function summarise (sql: string): SqlSummary {
  const first = /^\s*([A-Za-z]+)/.exec(sql)
  if (first === null) return OTHER
  const operation = first[1].toUpperCase()
  let depth = 0
  let word = ''
  let wanted = false
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i]
    if (/[A-Za-z0-9_.$]/.test(c)) {
      word += c
      continue
    }
    if (word !== '' && depth === 0) {
      if (wanted) return made(operation, word)
      wanted = TABLE_KEYWORDS.has(word.toUpperCase())
    }
    word = ''
    if (c === '"' || c === '`' || c === '\'') {
      const close = sql.indexOf(c, i + 1)
      if (close < 0) break
      // `wanted` is only ever set outside parentheses; a quoted name may be a table (SQLite takes 'name' too).
      if (wanted) return made(operation, qualified(sql, i))
      i = close
    } else if (c === '(') {
      // A table read from a subquery (`FROM (SELECT ...)`) is no table of the statement's own.
      if (depth === 0) wanted = false
      depth++
    } else if (c === ')') depth--
  }
  if (wanted && word !== '') return made(operation, word)
  return { operation, table: undefined, name: operation }
}

const made = (operation: string, table: string): SqlSummary => ({ operation, table, name: `${operation} ${table}` })

/** A schema-qualified name from `at` (`"shop"."items"`, `"shop".items`): its parts without their quotes. */
function qualified (sql: string, at: number): string {
  const name = /(?:"[^"]*"|`[^`]*`|'[^']*'|[A-Za-z0-9_$]+)(?:\.(?:"[^"]*"|`[^`]*`|[A-Za-z0-9_$]+))*/y
  name.lastIndex = at
  const match = name.exec(sql) as RegExpExecArray // the quote at `at` closes, so the pattern matches there
  return match[0].replace(/["`']/g, '')
}
