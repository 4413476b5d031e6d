/** Small statistics and formatting helpers of the benchmark report. */

export function median (values: number[]): number {
  if (values.length === 0) return Number.NaN
  const sorted = [...values].sort((a, b) => a - b)
  const mid = sorted.length >> 1
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2
}

export function min (values: number[]): number {
  return Math.min(...values)
}

export function max (values: number[]): number {
  return Math.max(...values)
}

/** `12345.6` -> `12,346`. */
export function integer (value: number): string {
  return Math.round(value).toLocaleString('en-US')
}

export function fixed (value: number, digits: number): string {
  return value.toFixed(digits)
}

/** A ratio as `1.034 (+3.4%)`. */
export function ratio (value: number): string {
  const pct = (value - 1) * 100
  const sign = pct >= 0.05 ? '+' : pct <= -0.05 ? '−' : '±'
  return `${value.toFixed(3)} (${sign}${Math.abs(pct).toFixed(1)}%)`
}

/** A signed percentage of a ratio: `1.034` -> `+3.4%`. */
export function percent (value: number): string {
  const pct = (value - 1) * 100
  return `${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(1)}%`
}

/** A Markdown table, columns padded so it also reads as plain text. */
export function table (header: string[], rows: string[][], rightAligned: boolean[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)))
  const line = (cells: string[]): string =>
    '| ' + cells.map((c, i) => rightAligned[i] ? c.padStart(widths[i]) : c.padEnd(widths[i])).join(' | ') + ' |'
  const rule = '|' + widths.map((w, i) => rightAligned[i] ? '-'.repeat(w + 1) + ':' : '-'.repeat(w + 2)).join('|') + '|'
  return [line(header), rule, ...rows.map(line)].join('\n')
}
