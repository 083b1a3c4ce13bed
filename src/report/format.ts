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

/**
 * p-value, printed one way everywhere: 3 significant digits, scientific below 1e-4
 * (0.0703125 → "0.0703", 1.9e-4 → "0.00019", 3.2e-7 → "3.20e-7"); exactly 1 → "1".
 */
export function fmtP(p: number | null | undefined): string {
  if (p === null || p === undefined) return DASH
  if (p === 1) return '1'
  if (p < 1e-4) return p.toExponential(2)
  return fmtNum(p, 3)
}

/** The minus sign we print (U+2212), never the hyphen-minus. */
export const MINUS = '−'

/**
 * `x` rounded to `digits` decimals, half away from zero on its decimal form (−18.75 → −18.8,
 * 1.45 → 1.5): the number is shifted through its shortest decimal string, so binary
 * representation error never decides a half.
 */
export function roundHalfAway(x: number, digits = 1): number {
  const a = Math.abs(x)
  const r = Number(`${Math.round(Number(`${a}e${digits}`))}e-${digits}`)
  return x < 0 && r !== 0 ? -r : r
}

/**
 * Percentage points, printed one way everywhere: one decimal, rounded half away from zero, with a
 * sign (+, U+2212 minus, ± for zero): −18.75 → "−18.8". `unit` appends " pp".
 */
export function fmtPoints(
  x: number | null | undefined,
  opts: { unit?: boolean; sign?: boolean } = {},
): string {
  if (x === null || x === undefined) return DASH
  const v = roundHalfAway(x, 1)
  const sign = opts.sign === false ? (v < 0 ? MINUS : '') : v > 0 ? '+' : v < 0 ? MINUS : '±'
  return `${sign}${Math.abs(v).toFixed(1)}${opts.unit === false ? '' : ' pp'}`
}

/** Rate in [0, 1] as a percentage with one decimal: 0.742 → "74.2%". */
export function fmtRate(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  return `${(x * 100).toFixed(1)}%`
}

/** Percentage points with sign and one decimal: "+3.4 pp" (see fmtPoints). */
export function fmtPp(x: number | null | undefined): string {
  return fmtPoints(x)
}

/** An interval bound in points, no unit: "+4.2", "−30.1", and "0.0" for zero. */
export function fmtPointsBound(x: number): string {
  return roundHalfAway(x, 1) === 0 ? '0.0' : fmtPoints(x, { unit: false })
}

/** An interval in percentage points without unit: "[−30.1, +4.2]". */
export function fmtPointsCi(ci: readonly [number, number] | null | undefined): string {
  return fmtCi(ci, fmtPointsBound)
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

/** A minimum detectable effect in points, unsigned: "12.3 pp"; "—" when none is reachable. */
export function fmtMde(x: number | null | undefined): string {
  return x === null || x === undefined ? DASH : fmtPoints(x, { sign: false })
}

/**
 * McNemar p-values of an outcome comparison: "two-sided · one-sided · mid-p (note)"; with no
 * outcome-complete block there is no test: "— (no blocks)", never "p = 1".
 */
export function mcnemarText(o: {
  n: number
  mcnemar: { p_two_sided: number; p_one_sided: number; p_mid: number; note: string | null }
}): string {
  if (o.n === 0) return `${DASH} (no blocks)`
  const m = o.mcnemar
  return `${fmtP(m.p_two_sided)} · ${fmtP(m.p_one_sided)} · ${fmtP(m.p_mid)}${m.note ? ` (${m.note})` : ''}`
}
