/**
 * Tests about a ratio of totals Σt/Σb on paired blocks — what a user pays, treatment against baseline
 * — and the inverse-normal combination of independent stages.
 *
 * ratioOfTotalsTest: H0 "Σt ≤ θ·Σb" (the expected totals of these blocks), one-sided, against
 * "Σt > θ·Σb". With Dᵢ = tᵢ − θ·bᵢ, Σt > θ·Σb ⟺ mean D > 0, so the test is Student's one-sided t
 * of the mean of D (df n − 1). It is a test of totals: a fixed overhead that makes cheap blocks
 * relatively dearer moves a per-block median but not this statistic. It is exact for normal D and
 * asymptotically valid otherwise; on a left-skewed D (a baseline with a heavier cost tail than the
 * treatment) it is liberal at small n. Its size is measured by simulation over the worlds of
 * calibrate/worlds.ts and stated in calibrate's table (the log-ratio form with the delta-method
 * standard error was measured too and was more liberal in every world with symmetric D).
 *
 * inverseNormalCombination (Lehmacher & Wassmer 1999; Bauer & Köhne 1994): independent stage
 * p-values pₖ with weights wₖ fixed before any stage's data, Z = Σ wₖ·Φ⁻¹(1 − pₖ) / √Σwₖ²,
 * p = 1 − Φ(Z). Under H0 each Φ⁻¹(1 − pₖ) is stochastically no larger than N(0, 1), so P(p ≤ α) ≤ α
 * whatever the earlier stages decided (e.g. that a first run crossed a threshold). Pure.
 */

import { normalCdf, normalQuantile } from './normal.js'
import { createRng } from './rng.js'
import { studentTTwoSidedP } from './special.js'

/**
 * How the mean of Dᵢ is tested (each compared by simulation in every world of calibrate/worlds.ts,
 * through the two-stage design: the measured false-confirmation rates are in two-stage.ts):
 *  - `student`: Student's one-sided t, df n − 1 (liberal on a left-skewed D at small n);
 *  - `johnson`: Johnson's (1978, JASA 73:536) skewness-modified t,
 *      t_J = [d̄ + μ̂₃/(6·s²·n) + μ̂₃·d̄²/(3·s⁴)] / (s/√n), μ̂₃ = Σ(Dᵢ − d̄)³/n, against t(n − 1);
 *  - `johnson-down`: min(t, t_J) — Johnson's correction applied only when it lowers the statistic
 *      (μ̂₃ < 0, the liberal side for an upper-tailed test); never more liberal than `student`;
 *  - `johnson-critical`: Johnson's correction evaluated at the one-sided 5% critical value q of
 *      t(n − 1) rather than at the observed mean: t + min(0, t_J(q·se) − q); monotone in the mean;
 *  - `hall`: Hall's (1992, JRSS B 54:221) monotone cubic transformation of T = d̄/s, with γ̂ = μ̂₃/s³,
 *      √n·[T + γ̂·T²/3 + γ̂²·T³/27 + γ̂/(6n)], against t(n − 1);
 *  - `hall-down`: min(t, Hall's) — Hall's correction applied only when it lowers the statistic; unlike
 *      `johnson-down` it never falls as the mean grows (t_J's d̄² term makes a strong effect with any
 *      left skew strongly negative);
 *  - `bootstrap-t`: the studentized bootstrap of the mean of D (Efron & Tibshirani 1993, §12.5),
 *      B resamples of the n blocks from a fixed seed, p = (1 + #{t*ᵦ ≥ t}) / (B + 1) with
 *      t*ᵦ = (d̄*ᵦ − d̄)/(s*ᵦ/√n); a resample with no spread has t* = ±∞ by the sign of d̄* − d̄, 0 at d̄;
 *  - `sign-flip`: the randomization test of Σd under sign flips (exact for D symmetric about 0),
 *      B seeded flips, p = (1 + #{Σ±dᵢ ≥ Σd}) / (B + 1);
 *  - `log-ratio`: the variance-stabilised form (ln(Σt/Σb) − ln θ) / SE against t(n − 1), SE the
 *      delta-method s of tᵢ/t̄ − bᵢ/b̄ over √n (`sdFloor` carried to that scale as floor/(θ·b̄)).
 *      Measured as liberal as Student's t where D is left-skewed (two-stage.ts).
 * `sdFloor` replaces s by max(s, floor) in every studentized statistic (the statistic only falls).
 */
export type TotalsMethod =
  | 'student'
  | 'johnson'
  | 'johnson-down'
  | 'johnson-critical'
  | 'hall'
  | 'hall-down'
  | 'bootstrap-t'
  | 'sign-flip'
  | 'log-ratio'

export interface TotalsOptions {
  /** Default `student`. */
  method?: TotalsMethod
  /** bootstrap-t: resamples (default 999) and seed (default 1). */
  resamples?: number
  seed?: number
  /** A floor on the standard deviation of D (e.g. another stage's), so the statistic only falls. */
  sdFloor?: number
}

/** The sample standard deviation of Dᵢ = tᵢ − θ·bᵢ (null under 2 blocks). */
export function sdOfD(base: ArrayLike<number>, treat: ArrayLike<number>, threshold: number): number | null {
  const n = base.length
  if (n < 2) return null
  let m = 0
  for (let i = 0; i < n; i++) m += (treat[i] as number) - threshold * (base[i] as number)
  m /= n
  let ss = 0
  for (let i = 0; i < n; i++) ss += ((treat[i] as number) - threshold * (base[i] as number) - m) ** 2
  return Math.sqrt(ss / (n - 1))
}

export interface TotalsTest {
  /** Σt/Σb (null when Σb = 0). */
  estimate: number | null
  /** The method's statistic of the mean of Dᵢ = tᵢ − θ·bᵢ (Student's t for `bootstrap-t`). */
  statistic: number
  df: number
  /** One-sided p of H0 Σt ≤ θ·Σb. */
  p: number
  n: number
  method: TotalsMethod
}

/** Upper-tail p of Student's t with df degrees of freedom, computed from the tail directly. */
function upperT(statistic: number, df: number): number {
  const half = studentTTwoSidedP(statistic, df) / 2
  return statistic >= 0 ? half : 1 - half
}

/**
 * One-sided test of Σt ≤ θ·Σb on aligned per-block values (≥ 0), of the mean of Dᵢ = tᵢ − θ·bᵢ by
 * `options.method` (see TotalsMethod), df = n − 1. Null when fewer than 2 blocks (fewer than 3 for
 * the skewness corrections) or every Dᵢ is equal (no spread: the statistic is undefined). Throws a
 * RangeError for θ not > 0, unequal lengths or a negative or non-finite value.
 */
export function ratioOfTotalsTest(
  base: ArrayLike<number>,
  treat: ArrayLike<number>,
  threshold: number,
  options: TotalsOptions = {},
): TotalsTest | null {
  const method = options.method ?? 'student'
  if (!(threshold > 0 && Number.isFinite(threshold)))
    throw new RangeError(`ratioOfTotalsTest: threshold must be > 0, got ${threshold}`)
  if (base.length !== treat.length)
    throw new RangeError(
      `ratioOfTotalsTest: ${base.length} baseline values, ${treat.length} treatment values`,
    )
  const n = base.length
  let st = 0
  let sb = 0
  for (let i = 0; i < n; i++) {
    const b = base[i] as number
    const t = treat[i] as number
    if (!(b >= 0 && t >= 0 && Number.isFinite(b) && Number.isFinite(t)))
      throw new RangeError(`ratioOfTotalsTest: block ${i} has a negative or non-finite value`)
    st += t
    sb += b
  }
  if (n < (method === 'student' ? 2 : 3)) return null
  const d = new Float64Array(n)
  for (let i = 0; i < n; i++) d[i] = (treat[i] as number) - threshold * (base[i] as number)
  const mean = (st - threshold * sb) / n
  let ss = 0
  let s3 = 0
  for (let i = 0; i < n; i++) {
    const e = (d[i] as number) - mean
    ss += e * e
    s3 += e * e * e
  }
  const sd = Math.sqrt(ss / (n - 1))
  // No spread relative to the size of the values: rounding residue, not a standard error.
  if (!(sd > (1e-12 * (st + threshold * sb)) / n)) return null
  const se = Math.max(sd, options.sdFloor ?? 0) / Math.sqrt(n)
  const t = mean / se
  const df = n - 1
  const estimate = sb > 0 ? st / sb : null
  const out = (statistic: number, p: number): TotalsTest => ({ estimate, statistic, df, p, n, method })
  if (method === 'student') return out(t, upperT(t, df))
  if (method === 'log-ratio') {
    if (!(st > 0 && sb > 0)) return null
    const mt = st / n
    const mb = sb / n
    let v = 0
    for (let i = 0; i < n; i++) v += ((treat[i] as number) / mt - (base[i] as number) / mb) ** 2
    const floor = (options.sdFloor ?? 0) / (threshold * mb)
    const seLog = Math.max(Math.sqrt(v / (n - 1)), floor) / Math.sqrt(n)
    const stat = (Math.log(st / sb) - Math.log(threshold)) / seLog
    return out(stat, upperT(stat, df))
  }
  const mu3 = s3 / n
  const s2 = sd * sd
  if (method === 'johnson' || method === 'johnson-down') {
    const tJ = (mean + mu3 / (6 * s2 * n) + (mu3 * mean * mean) / (3 * s2 * s2)) / se
    const stat = method === 'johnson' ? tJ : Math.min(t, tJ)
    return out(stat, upperT(stat, df))
  }
  if (method === 'johnson-critical') {
    // Johnson's correction evaluated where the test decides (t at its one-sided critical value q),
    // not at the observed mean: the same shift near the boundary, and a statistic that only grows
    // with the mean (t_J's d̄² term turns it down for a strong effect with any left skew).
    const q = upperTQuantile(CRITICAL_ALPHA, df)
    const m = q * se
    const shift = (mu3 / (6 * s2 * n) + (mu3 * m * m) / (3 * s2 * s2)) / se
    const stat = t + Math.min(0, shift)
    return out(stat, upperT(stat, df))
  }
  if (method === 'sign-flip') return out(t, signFlipP(d, options.resamples ?? 999, options.seed ?? 1))
  if (method === 'hall' || method === 'hall-down') {
    const g = mu3 / (s2 * sd)
    const T = t / Math.sqrt(n)
    const h = Math.sqrt(n) * (T + (g * T * T) / 3 + (g * g * T * T * T) / 27 + g / (6 * n))
    const stat = method === 'hall' ? h : Math.min(t, h)
    return out(stat, upperT(stat, df))
  }
  return out(t, bootstrapTP(d, mean, t, options.resamples ?? 999, options.seed ?? 1))
}

/** The one-sided level at which `johnson-critical` evaluates Johnson's correction. */
const CRITICAL_ALPHA = 0.05
const quantiles = new Map<number, number>()

/** q with P(T > q) = alpha for Student's t with df degrees of freedom (bisection; cached by df). */
function upperTQuantile(alpha: number, df: number): number {
  const key = df * 1000 + alpha
  const hit = quantiles.get(key)
  if (hit !== undefined) return hit
  let lo = 0
  let hi = 1000
  for (let i = 0; i < 100 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2
    if (upperT(mid, df) > alpha) lo = mid
    else hi = mid
  }
  const q = (lo + hi) / 2
  quantiles.set(key, q)
  return q
}

/** The sign-flip p of Σd: (1 + #{Σ±dᵢ ≥ Σd}) / (B + 1). */
function signFlipP(d: Float64Array, B: number, seed: number): number {
  const n = d.length
  const rng = createRng(seed >>> 0)
  let obs = 0
  for (let i = 0; i < n; i++) obs += d[i] as number
  const tol = 1e-12 * d.reduce((a, x) => a + Math.abs(x), 0)
  let above = 0
  for (let r = 0; r < B; r++) {
    let sum = 0
    let bits = 0
    for (let i = 0; i < n; i++) {
      if (i % 30 === 0) bits = rng.nextInt(1 << 30)
      sum += bits & 1 ? (d[i] as number) : -(d[i] as number)
      bits >>>= 1
    }
    if (sum >= obs - tol) above++
  }
  return (1 + above) / (B + 1)
}

/** The bootstrap-t p of the mean of d (see TotalsMethod): (1 + #{t* ≥ t}) / (B + 1). */
function bootstrapTP(d: Float64Array, mean: number, t: number, B: number, seed: number): number {
  if (!(Number.isSafeInteger(B) && B >= 1)) throw new RangeError(`ratioOfTotalsTest: resamples ${B}`)
  const n = d.length
  const rng = createRng(seed >>> 0)
  const idx = new Uint32Array(n)
  const scale = Math.max(Math.abs(mean), ...Array.from(d, Math.abs))
  let above = 0
  for (let r = 0; r < B; r++) {
    rng.fillIndices(idx, 0, n, n)
    let sum = 0
    let sq = 0
    for (let i = 0; i < n; i++) {
      const x = d[idx[i] as number] as number
      sum += x
      sq += x * x
    }
    const m = sum / n
    const v = Math.max(0, (sq - n * m * m) / (n - 1))
    const sdStar = Math.sqrt(v)
    const diff = m - mean
    let tStar: number
    if (sdStar > 1e-12 * scale) tStar = diff / (sdStar / Math.sqrt(n))
    else tStar = Math.abs(diff) <= 1e-12 * scale ? 0 : diff > 0 ? Infinity : -Infinity
    if (tStar >= t) above++
  }
  return (1 + above) / (B + 1)
}

/** Φ⁻¹(1 − p), with p = 0 and p = 1 mapped to ±40 (beyond every double-precision tail). */
function zOf(p: number): number {
  if (p <= 0) return 40
  if (p >= 1) return -40
  return -normalQuantile(p)
}

/**
 * Combined one-sided p of independent stages (see the file comment). Weights must be > 0 and
 * fixed before the data; throws a RangeError for unequal lengths, no stage, a weight not > 0 or a
 * p outside [0, 1].
 */
export function inverseNormalCombination(
  ps: readonly number[],
  weights: readonly number[],
): { z: number; p: number } {
  if (ps.length === 0 || ps.length !== weights.length)
    throw new RangeError(`inverseNormalCombination: ${ps.length} p-values, ${weights.length} weights`)
  let num = 0
  let den = 0
  ps.forEach((p, i) => {
    const w = weights[i] as number
    if (!(w > 0 && Number.isFinite(w))) throw new RangeError(`inverseNormalCombination: weight ${w}`)
    if (!(p >= 0 && p <= 1)) throw new RangeError(`inverseNormalCombination: p ${p} is not in [0, 1]`)
    num += w * zOf(p)
    den += w * w
  })
  const z = num / Math.sqrt(den)
  return { z, p: normalCdf(-z) }
}
