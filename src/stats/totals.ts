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
import { studentTTwoSidedP } from './special.js'

export interface TotalsTest {
  /** Σt/Σb (null when Σb = 0). */
  estimate: number | null
  /** Student's t of the mean of Dᵢ = tᵢ − θ·bᵢ. */
  statistic: number
  df: number
  /** One-sided p of H0 Σt ≤ θ·Σb. */
  p: number
  n: number
}

/**
 * One-sided test of Σt ≤ θ·Σb on aligned per-block values (≥ 0): Student's t of the mean of
 * Dᵢ = tᵢ − θ·bᵢ, df = n − 1. Null when fewer than 2 blocks or every Dᵢ is equal (no spread: the
 * statistic is undefined). Throws a RangeError for θ not > 0, unequal lengths or a negative or
 * non-finite value.
 */
export function ratioOfTotalsTest(
  base: ArrayLike<number>,
  treat: ArrayLike<number>,
  threshold: number,
): TotalsTest | null {
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
  if (n < 2) return null
  const mean = (st - threshold * sb) / n
  let ss = 0
  for (let i = 0; i < n; i++) ss += ((treat[i] as number) - threshold * (base[i] as number) - mean) ** 2
  const sd = Math.sqrt(ss / (n - 1))
  // No spread relative to the size of the values: rounding residue, not a standard error.
  if (!(sd > (1e-12 * (st + threshold * sb)) / n)) return null
  const statistic = mean / (sd / Math.sqrt(n))
  const df = n - 1
  // The upper tail directly, never 1 − (something near 1).
  const half = studentTTwoSidedP(statistic, df) / 2
  return { estimate: sb > 0 ? st / sb : null, statistic, df, p: statistic >= 0 ? half : 1 - half, n }
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
