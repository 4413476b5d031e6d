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

export function mean (values: number[]): number {
  return values.reduce((a, b) => a + b, 0) / values.length
}

/** The sample standard deviation (n − 1); NaN for fewer than two values. */
export function standardDeviation (values: number[]): number {
  if (values.length < 2) return Number.NaN
  const m = mean(values)
  return Math.sqrt(values.reduce((a, b) => a + (b - m) ** 2, 0) / (values.length - 1))
}

/** A number with its sign and two decimals: `+3.41`, `−0.20`. */
export function signed (value: number): string {
  return `${value >= 0 ? '+' : '−'}${fixed(Math.abs(value), 2)}`
}

/** A mean and its standard error, signed: `+3.41 ± 1.20`; `n/a` without values. */
export function meanSe (values: number[]): string {
  if (values.length === 0) return 'n/a'
  return `${signed(mean(values))} ± ${fixed(standardDeviation(values) / Math.sqrt(values.length), 2)}`
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
