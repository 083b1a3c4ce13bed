/**
 * Studentized (bootstrap-t) interval of a ratio of means Σt/Σb on paired blocks, symmetric on the log
 * scale (Hall 1988, "Theoretical comparison of bootstrap confidence intervals", Annals of Statistics
 * 16:927, §3: the symmetric bootstrap-t; Efron & Tibshirani 1993, §12.5). With R = Σt/Σb and its
 * delta-method standard error on the log scale
 *   se(ln R)² = n/(n − 1) · Σᵢ (tᵢ/Σt − bᵢ/Σb)²
 *            = n/(n − 1) · (Σt²/(Σt)² + Σb²/(Σb)² − 2·Σtb/(Σt·Σb)),
 * each resample gives the pivot |ln R* − ln R| / se*, and the interval is R·exp(∓q·se), q the
 * `level` type 7 quantile of the pivots. Everything depends on the blocks only through the five
 * column sums (Σt, Σb, Σt², Σb², Σtb), so the joint bootstrap computes it from its column sums.
 * Measured coverage on paired lognormal costs (σ 1): see coverage.ts. Pure.
 */

import type { IntervalOutcome } from './bootstrap-intervals.js'
import { selectedQuantiles } from './select.js'

/** The five column sums of one sample or resample of n blocks. */
export interface RatioMoments {
  st: number
  sb: number
  stt: number
  sbb: number
  stb: number
}

/**
 * ln(Σt/Σb) and its delta-method standard error for n blocks; null when Σt or Σb is not > 0, n < 2,
 * or the blocks have no spread in tᵢ/Σt − bᵢ/Σb (every block in the same proportion).
 */
export function logRatioWithSe(m: RatioMoments, n: number): { log: number; se: number } | null {
  if (!(m.st > 0 && m.sb > 0) || n < 2) return null
  const shares = m.stt / (m.st * m.st) + m.sbb / (m.sb * m.sb)
  const q = shares - (2 * m.stb) / (m.st * m.sb)
  // q is a difference of terms of size ~2/n: when every block is in the same proportion, rounding
  // leaves a residue of a few ulps of `shares` (not an absolute one), which is no spread. 1e-10 of
  // `shares` is far above that residue (≈ n·2⁻⁵² for n blocks) and far below any real spread.
  if (!(q > 1e-10 * shares)) return null
  const se2 = (n / (n - 1)) * q
  return { log: Math.log(m.st / m.sb), se: Math.sqrt(se2) }
}

/**
 * The symmetric bootstrap-t interval of Σt/Σb from the full-sample sums and per-replicate sums
 * (arrays of length B, replicate r in index r). A resample whose pivot has no standard error (all its
 * blocks in one proportion, e.g. one block drawn n times) or whose Σt* is 0 has the pivot's own
 * value: 0 when its ratio equals the estimate, else +∞ — such resamples are kept, never dropped, so
 * the method does not depend on whether the seed happened to draw one. Null with a reason when the
 * full-sample SE is undefined, some resample has Σb* = 0, or more than 1 − level of the pivots are
 * infinite (the interval is unbounded).
 */
export function studentizedRatioInterval(
  total: RatioMoments,
  n: number,
  replicates: { st: Float64Array; sb: Float64Array; stt: Float64Array; sbb: Float64Array; stb: Float64Array },
  level: number,
): IntervalOutcome {
  const full = logRatioWithSe(total, n)
  if (full === null) {
    return {
      ci: null,
      reason:
        'studentized interval undefined: no spread between the blocks, or a zero sum, on the observed blocks',
    }
  }
  const B = replicates.st.length
  if (B === 0) return { ci: null, reason: 'no bootstrap replicates' }
  const pivots = new Float64Array(B)
  const m: RatioMoments = { st: 0, sb: 0, stt: 0, sbb: 0, stb: 0 }
  let undefinedPivots = 0
  for (let r = 0; r < B; r++) {
    m.st = replicates.st[r]!
    m.sb = replicates.sb[r]!
    m.stt = replicates.stt[r]!
    m.sbb = replicates.sbb[r]!
    m.stb = replicates.stb[r]!
    if (!(m.sb > 0)) {
      undefinedPivots++
      continue
    }
    const rep = logRatioWithSe(m, n)
    if (rep !== null) {
      pivots[r] = Math.abs(rep.log - full.log) / rep.se
      continue
    }
    // No standard error in this resample: the pivot is 0 at the estimate, else infinitely far.
    const log = m.st > 0 ? Math.log(m.st / m.sb) : Number.NEGATIVE_INFINITY
    pivots[r] =
      Math.abs(log - full.log) <= 1e-12 * Math.max(1, Math.abs(full.log)) ? 0 : Number.POSITIVE_INFINITY
  }
  if (undefinedPivots > 0) {
    return {
      ci: null,
      reason: `studentized interval undefined: Σbaseline = 0 in ${undefinedPivots} of ${B} bootstrap replicates`,
    }
  }
  const q = selectedQuantiles(pivots).quantile(level)
  if (!Number.isFinite(q)) {
    return {
      ci: null,
      reason: `studentized interval unbounded: more than ${Number(((1 - level) * 100).toPrecision(3))}% of the resamples have no spread (too few distinct blocks)`,
    }
  }
  const half = q * full.se
  const lo = Math.exp(full.log - half)
  const hi = Math.exp(full.log + half)
  if (!Number.isFinite(lo) || !Number.isFinite(hi)) {
    return { ci: null, reason: 'studentized interval beyond the double range' }
  }
  return { ci: [lo, hi], reason: null }
}
