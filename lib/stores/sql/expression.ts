// SQL expressions of a repository over a query, below the builder: the `sql` tag and `option()`.
// SQL expressions for the read side of a repository (computed fields, joins): trusted SQL text
// written by the application, and values that are always bound, never spliced into the text.
import { ConfigurationError } from '../../core/configuration-error.js'
import type { RepositoryOptions } from '../repository.js'

/**
 * A repository option bound as a parameter where an expression names it: the value the view's
 * `getRepositoryOptions(action)` gives that call under `name` (the reader's id), NULL when absent.
 */
export class SqlOption {
  readonly name: string
  constructor (name: string) { this.name = name }
}

/** Binds, at each call, the repository option `name` (`option('reader')`); NULL when the call's options lack it. */
export function option (name: string): SqlOption {
  if (typeof name !== 'string' || name === '') {
    throw new ConfigurationError('FV_ERR_SQL_FRAGMENT', `option(name) takes the name of a repository option; got ${JSON.stringify(name)}`)
  }
  return new SqlOption(name)
}

/**
 * Trusted SQL text with bound values: `text` holds one `?` per entry of `values`, in order. Each
 * value is a constant, bound as it is, or an `SqlOption`, bound from the options of each call.
 * Made by the `sql` tag.
 */
export class SqlExpression {
  readonly text: string
  readonly values: readonly unknown[]
  constructor (text: string, values: readonly unknown[]) {
    this.text = text
    this.values = values
  }

  /** The option names its values read. */
  get optionNames (): string[] {
    return this.values.filter((v): v is SqlOption => v instanceof SqlOption).map((v) => v.name)
  }

  /** Writes the text into a statement, adding the values its placeholders bind to `params`, in order. */
  render (params: unknown[], options: RepositoryOptions | undefined): string {
    for (const value of this.values) params.push(value instanceof SqlOption ? options?.[value.name] ?? null : value)
    return this.text
  }
}

/**
 * Trusted text as written: a `?` in it would be read as a placeholder (and renumbered on
 * PostgreSQL), misplacing every value bound after it, so it is refused.
 */
function trusted (text: string, where: string): string {
  if (text.includes('?')) {
    throw new ConfigurationError('FV_ERR_SQL_FRAGMENT', `${where}: the SQL text has a "?", which would be read as a placeholder: ` +
      'bind the value instead (interpolate it in a sql`...` template), ' +
      'or write such an operator as its function (jsonb_exists for jsonb\'s ?)')
  }
  return text
}

/**
 * A SQL expression: the template's text is trusted (written by the application), each interpolated
 * value is bound as a parameter, `option(name)` binds a repository option per call, and an
 * interpolated `sql` expression is spliced in with its own values.
 *
 * ```ts
 * sql`EXISTS (SELECT 1 FROM favorites f WHERE f.article_id = articles.id AND f.user_id = ${option('reader')})`
 * ```
 */
export function sql (strings: TemplateStringsArray, ...values: unknown[]): SqlExpression {
  let text = trusted(strings[0], 'sql`...`')
  const bound: unknown[] = []
  values.forEach((value, i) => {
    if (value instanceof SqlExpression) {
      text += value.text
      bound.push(...value.values)
    } else {
      text += '?'
      bound.push(value)
    }
    text += trusted(strings[i + 1], 'sql`...`')
  })
  return new SqlExpression(text, bound)
}

/** Text or an expression from an application's table options, as an expression; `where` names it in errors. */
export function expressionOf (value: unknown, where: string): SqlExpression {
  if (value instanceof SqlExpression) return value
  if (typeof value === 'string') return new SqlExpression(trusted(value, where), [])
  const got = value === null ? 'null' : typeof value
  throw new ConfigurationError('FV_ERR_SQL_OPTION', `${where} must be SQL text or a sql\`...\` expression; got ${got}`)
}
