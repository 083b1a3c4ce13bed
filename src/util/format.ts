/**
 * Number formatting for the reports. Locale-independent on purpose (no toLocaleString: ICU data and
 * the runner's locale would change the bytes of a report).
 */

const DASH = '—'

/** The minus sign we print (U+2212), never the hyphen-minus. */
export const MINUS = '−'

const group = (digits: string): string => digits.replace(/\B(?=(\d{3})+(?!\d))/g, ',')

/** Integer with grouping and the U+2212 minus: -1234567 → "−1,234,567". Null → "—". */
export function fmtInt(x: number | null | undefined): string {
  if (x === null || x === undefined) return DASH
  const r = Math.round(x)
  const s = group(String(Math.abs(r)))
  return r < 0 ? `${MINUS}${s}` : s
}

/**
 * A number with `sig` significant digits, plain notation between 1e-4 and 1e7, the integer part
 * grouped (6689.5 → "6,690" at 3 digits) and the U+2212 minus. Null → "—".
 */
export function fmtNum(x: number | null | undefined, sig = 3): string {
  if (x === null || x === undefined) return DASH
  if (x === 0) return '0'
  const a = Math.abs(x)
  if (a >= 1e7 || a < 1e-4) return x.toExponential(sig - 1).replace(/^-/, MINUS)
  if (a >= 10 ** sig) return fmtInt(x)
  const p = a.toPrecision(sig)
  const plain = p.includes('e') ? String(Number(p)) : p.includes('.') ? p.replace(/\.?0+$/, '') : p
  // Grouping only changes an integer part of four digits or more.
  const dot = plain.indexOf('.')
  const whole = dot < 0 ? plain : plain.slice(0, dot)
  const grouped = whole.length > 3 ? group(whole) : whole
  const body = dot < 0 ? grouped : `${grouped}${plain.slice(dot)}`
  return x < 0 ? `${MINUS}${body}` : body
}

/** A value in its metric's unit: USD with $ and 4 significant digits, tokens/requests grouped, seconds. */
export function fmtValue(
  x: number | null | undefined,
  unit: 'usd' | 'requests' | 'tokens' | 'seconds',
): string {
  if (x === null || x === undefined) return DASH
  switch (unit) {
    case 'usd':
      return x < 0 ? `${MINUS}$${fmtNum(-x, 4)}` : `$${fmtNum(x, 4)}`
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
export function fmtMde(x: { n: number; mde_pp: number | null } | null | undefined): string {
  if (!x || x.n === 0) return DASH
  return x.mde_pp === null ? 'none at this n' : fmtPoints(x.mde_pp, { sign: false })
}

/** Why a comparison has no minimum detectable effect, with its n; null when it has one (or no blocks). */
export function mdeNote(x: { n: number; mde_pp: number | null; reason: string | null }): string | null {
  if (x.n === 0 || x.mde_pp !== null) return null
  return `at n = ${x.n}, ${x.reason ?? 'no effect is detectable'}`
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

/**
 * The model route in words: "m via openai (chat API)"; parts the source does not state are left out
 * ("m (provider and API not stated)"), never shown as "?". Null when no model is declared.
 */
export function routeText(m: {
  declared: string | null
  provider: string | null
  api: string | null
}): string | null {
  if (!m.declared) return null
  if (m.provider && m.api) return `${m.declared} via ${m.provider} (${m.api} API)`
  if (m.provider) return `${m.declared} via ${m.provider} (API not stated)`
  if (m.api) return `${m.declared} (${m.api} API; provider not stated)`
  return `${m.declared} (provider and API not stated)`
}

/** The panel in words: "swe-bench@rev (builtin): 16 instances"; a missing family is left out, not "—". */
export function panelText(p: {
  family: string | null
  revision: string | null
  source: string | null
  instances: number
  quarantine: readonly string[]
}): string {
  const fam = p.family ? `${p.family}${p.revision ? `@${p.revision}` : ''}` : null
  const where = fam && p.source ? `${fam} (${p.source})` : (fam ?? p.source ?? '—')
  const q = p.quarantine.length ? `, ${p.quarantine.length} quarantined` : ''
  return `${where}: ${p.instances} instances${q}`
}
