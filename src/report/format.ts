/**
 * Number formatting for the reports. Locale-independent on purpose (no toLocaleString: ICU data and
 * the runner's locale would change the bytes of a report).
 */

const DASH = '—'

/** Integer with thin grouping: 1234567 → "1,234,567". Null → "—". */
export function fmtInt(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  const r = Math.round(x)
  const s = String(Math.abs(r)).replace(/\B(?=(\d{3})+(?!\d))/g, ',')
  return r < 0 ? `-${s}` : s
}

/** A number with `sig` significant digits, plain notation between 1e-4 and 1e7. Null → "—". */
export function fmtNum(x: number | null | undefined, sig = 3): string {
  if (x === null || x === undefined) return DASH
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e7 || a < 1e-4) return x.toExponential(sig - 1)
  if (a >= 10 ** sig) return fmtInt(x)
  const s = x.toPrecision(sig)
  return s.includes('e') ? String(Number(s)) : s.includes('.') ? s.replace(/\.?0+$/, '') : s
}

/** A value in its metric's unit: USD with $ and 4 significant digits, tokens/requests grouped, seconds. */
export function fmtValue(
  x: number | null | undefined,
  unit: 'usd' | 'requests' | 'tokens' | 'seconds',
): string {
  if (x === null || x === undefined) return DASH
  switch (unit) {
    case 'usd':
      return `$${fmtNum(x, 4)}`
    case 'seconds':
      return `${fmtNum(x, 3)} s`
    default:
      return Math.abs(x) >= 100 ? fmtInt(x) : fmtNum(x, 3)
  }
}

/** p-value: 4 significant digits, scientific below 1e-4. */
export function fmtP(p: number | null | undefined): string {
  if (p === null || p === undefined) return DASH
  if (p === 1) return '1'
  if (p < 1e-4) return p.toExponential(2)
  return fmtNum(p, 4)
}

/** Rate in [0, 1] as a percentage with one decimal: 0.742 → "74.2%". */
export function fmtRate(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  return `${(x * 100).toFixed(1)}%`
}

/** Percentage points with sign and one decimal: "+3.4 pp". */
export function fmtPp(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  const v = Math.round(x * 10) / 10
  return `${v > 0 ? '+' : v < 0 ? '−' : '±'}${Math.abs(v).toFixed(1)} pp`
}

/** Ratio: "1.38×". */
export function fmtRatio(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  return `${fmtNum(x, 3)}×`
}

/** Interval "[lo, hi]" with a formatter, or "—". */
export function fmtCi(ci: readonly [number, number] | null | undefined, f: (x: number) => string): string {
  if (!ci) return DASH
  return `[${f(ci[0])}, ${f(ci[1])}]`
}
