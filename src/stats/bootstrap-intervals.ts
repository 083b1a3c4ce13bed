/**
 * Bootstrap confidence intervals from a set of replicates: percentile and BCa, with the jackknife
 * acceleration that BCa needs. Pure functions over sorted Float64Arrays, or over the quantiles of
 * unsorted replicates found by selection (select.ts); the drivers that produce the replicates are in
 * bootstrap.ts.
 */

import { normalCdf, normalQuantile } from './normal.js'
import { type ReplicateQuantiles, sortedQuantiles } from './select.js'
import type { Numbers } from './types.js'

/** Replicates as an ascending-sorted array, or their quantiles found by selection (select.ts). */
export type Replicates = Float64Array | ReplicateQuantiles

function quantilesOf(replicates: Replicates): ReplicateQuantiles {
  return replicates instanceof Float64Array ? sortedQuantiles(replicates) : replicates
}

/** A two-sided interval [lo, hi], or null with the reason it is undefined. */
export type IntervalOutcome =
  | { readonly ci: readonly [number, number]; readonly reason: null }
  | { readonly ci: null; readonly reason: string }

/**
 * Percentile interval (Efron & Tibshirani 1993, "An Introduction to the Bootstrap", §13.3): the
 * (1 − level)/2 and (1 + level)/2 type 7 quantiles of the ascending-sorted replicates.
 */
export function percentileInterval(sortedReplicates: Replicates, level: number): IntervalOutcome {
  if (sortedReplicates.length === 0) return { ci: null, reason: 'no bootstrap replicates' }
  const q = quantilesOf(sortedReplicates)
  const tail = (1 - level) / 2
  return { ci: [q.quantile(tail), q.quantile(1 - tail)], reason: null }
}

/**
 * Jackknife estimate of the BCa acceleration from the n leave-one-out estimates θ₍ᵢ₎:
 * a = Σ(θ̄ − θ₍ᵢ₎)³ / (6·[Σ(θ̄ − θ₍ᵢ₎)²]^{3/2}), θ̄ the mean of the θ₍ᵢ₎
 * (Efron 1987, "Better bootstrap confidence intervals", JASA 82:171; Efron & Tibshirani
 * 1993, §14.3, eq. 14.15). When every θ₍ᵢ₎ is equal the acceleration is taken as 0 (no skewness of influence).
 * Throws a RangeError for fewer than 2 leave-one-out values.
 */
export function jackknifeAcceleration(leaveOneOut: Numbers): number {
  const n = leaveOneOut.length
  if (n < 2) throw new RangeError(`jackknifeAcceleration: need at least 2 leave-one-out estimates, got ${n}`)
  let mean = 0
  for (let i = 0; i < n; i++) mean += leaveOneOut[i]!
  mean /= n
  let s2 = 0
  let s3 = 0
  for (let i = 0; i < n; i++) {
    const d = mean - leaveOneOut[i]!
    const d2 = d * d
    s2 += d2
    s3 += d2 * d
  }
  if (s2 === 0) return 0
  const a = s3 / (6 * s2 ** 1.5)
  return Number.isFinite(a) ? a : 0
}

/** Leave-one-out means of `values` (the jackknife replicates of the mean), length n ≥ 2. */
export function leaveOneOutMeans(values: Numbers): Float64Array {
  const n = values.length
  if (n < 2) throw new RangeError(`leaveOneOutMeans: need at least 2 values, got ${n}`)
  let total = 0
  for (let i = 0; i < n; i++) total += values[i]!
  const out = new Float64Array(n)
  for (let i = 0; i < n; i++) out[i] = (total - values[i]!) / (n - 1)
  return out
}

/**
 * Bias correction z0 = Φ⁻¹(p̂) with p̂ = (#{θ* < θ̂} + ½·#{θ* = θ̂})/B, the share of replicates below the
 * estimate, ties counted half (as SciPy's `bootstrap`). Null when p̂ is 0 or 1 (every replicate on one
 * side of the estimate): z0 would be infinite.
 */
export function biasCorrection(sortedReplicates: Replicates, estimate: number): number | null {
  const B = sortedReplicates.length
  if (B === 0) return null
  const { below, atOrBelow } = quantilesOf(sortedReplicates).countBelow(estimate)
  const share = (below + atOrBelow) / (2 * B)
  if (!(share > 0 && share < 1)) return null
  return normalQuantile(share)
}

/** A BCa interval with its two ingredients. */
export type BcaOutcome = IntervalOutcome & { readonly z0: number | null }

/**
 * Bias-corrected and accelerated (BCa) interval (Efron 1987; Efron & Tibshirani 1993, §14.3):
 * for each tail α ∈ {(1 − level)/2, (1 + level)/2}, the replicate quantile (type 7) at
 * Φ(z0 + (z0 + z_α)/(1 − a·(z0 + z_α))), with z0 from `biasCorrection` and a from
 * `jackknifeAcceleration`. Null with a reason when z0 is infinite or 1 − a·(z0 + z_α) ≤ 0.
 */
export function bcaInterval(
  sortedReplicates: Replicates,
  estimate: number,
  acceleration: number,
  level: number,
): BcaOutcome {
  const q = quantilesOf(sortedReplicates)
  const z0 = biasCorrection(q, estimate)
  if (z0 === null) {
    return {
      ci: null,
      z0: null,
      reason: 'BCa undefined: every bootstrap replicate lies on one side of the estimate (z0 infinite)',
    }
  }
  const tail = (1 - level) / 2
  const ends: number[] = []
  for (const alpha of [tail, 1 - tail]) {
    const w = z0 + normalQuantile(alpha)
    const denominator = 1 - acceleration * w
    if (!(denominator > 0)) {
      return {
        ci: null,
        z0,
        reason: `BCa undefined: acceleration a = ${acceleration} too large for this level`,
      }
    }
    ends.push(q.quantile(normalCdf(z0 + w / denominator)))
  }
  return { ci: [ends[0]!, ends[1]!], z0, reason: null }
}
