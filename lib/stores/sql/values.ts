// SQLite's values, for its dialect (sqlite-dialect.ts): LIKE patterns as GLOB patterns, booleans and dates as SQLite stores them.

/** `La%` -> `La*`: SQL LIKE wildcards as GLOB wildcards; `\\`-escaped and GLOB's own characters literal. */
export function likeToGlob (pattern: string): string {
  let glob = ''
  for (let i = 0; i < pattern.length; i++) {
    const escaped = pattern[i] === '\\' && i + 1 < pattern.length
    const c = escaped ? pattern[++i] : pattern[i]
    if (!escaped && c === '%') glob += '*'
    else if (!escaped && c === '_') glob += '?'
    else glob += /[*?[\]]/.test(c) ? `[${c}]` : c
  }
  return glob
}

/** SQLite binds no booleans or dates: `true` is 1, a date its ISO string. */
export function toSqlite (value: unknown): unknown {
  if (typeof value === 'boolean') return value ? 1 : 0
  if (value instanceof Date) return value.toISOString()
  return value
}
