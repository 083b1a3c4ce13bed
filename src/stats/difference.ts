/**
 * Difference in resolve rate between arms on the same blocks, in percentage points, with a
 * confidence interval for paired proportions.
 *
 * Method: Newcombe's hybrid score interval for the difference of paired proportions
 * (Newcombe 1998, "Improved confidence intervals for the difference between binomial proportions
 * based on paired data", Statistics in Medicine 17:2635–2650, method 10; the "square-and-add"
 * interval of Fagerland, Lydersen & Laake 2014/2017). Wilson score limits (l, u) of each arm's
 * resolve rate are combined with the correlation φ between the arms:
 *   L = θ̂ − √[(p_t − l_t)² − 2φ(p_t − l_t)(u_b − p_b) + (u_b − p_b)²]
 *   U = θ̂ + √[(u_t − p_t)² − 2φ(u_t − p_t)(p_b − l_b) + (p_b − l_b)²]
 * where θ̂ = p_t − p_b = (c − b)/n and φ = (AD − BC)/√(product of the four margins) with Newcombe's
 * correction: (AD − BC − n/2) when AD − BC > n/2, 0 when 0 ≤ AD − BC ≤ n/2, unchanged when negative;
 * φ = 0 when a margin is 0.
 */

import { normalQuantile } from './normal.js'
import { assertCount, assertOpenUnit } from './types.js'

/** Method label carried into reports. */
export const RESOLVE_RATE_DIFFERENCE_METHOD = 'newcombe-hybrid-score-paired (Newcombe 1998, method 10)'

/** The paired 2×2 table of resolved outcomes over complete blocks. */
export interface PairedOutcomeTable {
  /** Both arms resolved. */
  readonly bothResolved: number
  /** b: baseline resolved, treatment not. */
  readonly baselineOnly: number
  /** c: treatment resolved, baseline not. */
  readonly treatmentOnly: number
  /** Neither arm resolved. */
  readonly neitherResolved: number
}

export interface ResolveRateDifference {
  /** Blocks (the denominator). */
  readonly n: number
  /** (c − b)/n·100, in percentage points (treatment − baseline). */
  readonly points: number | null
  /** Interval in percentage points. */
  readonly ci: readonly [number, number] | null
  readonly level: number
  readonly method: string
  readonly reason: string | null
}

/** Wilson (1927) score interval for x successes in n trials, z the normal quantile. */
export function wilson(x: number, n: number, z: number): [number, number] {
  const p = x / n
  const z2 = z * z
  const denominator = 1 + z2 / n
  const centre = (p + z2 / (2 * n)) / denominator
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denominator
  // Exact ends at 0 and 1 (the formula's rounding can leave 1e-17 on the wrong side).
  return [x === 0 ? 0 : Math.max(0, centre - half), x === n ? 1 : Math.min(1, centre + half)]
}

/**
 * Difference in resolve rate (treatment − baseline) in points with Newcombe's paired hybrid score
 * interval (see the module notes). `level` is the two-sided confidence level (default 0.95).
 * Null with a reason when the table is empty. Throws a RangeError for negative or non-integer counts.
 */
export function resolveRateDifference(table: PairedOutcomeTable, level = 0.95): ResolveRateDifference {
  const where = 'resolveRateDifference'
  const { bothResolved: e, baselineOnly: b, treatmentOnly: c, neitherResolved: h } = table
  assertCount(where, 'bothResolved', e)
  assertCount(where, 'baselineOnly', b)
  assertCount(where, 'treatmentOnly', c)
  assertCount(where, 'neitherResolved', h)
  assertOpenUnit(where, 'level', level)
  const n = e + b + c + h
  const method = RESOLVE_RATE_DIFFERENCE_METHOD
  if (n === 0) return { n, points: null, ci: null, level, method, reason: 'no blocks' }

  const z = normalQuantile(1 - (1 - level) / 2)
  const resolvedT = e + c
  const resolvedB = e + b
  const pT = resolvedT / n
  const pB = resolvedB / n
  const [lT, uT] = wilson(resolvedT, n, z)
  const [lB, uB] = wilson(resolvedB, n, z)

  // Margins: treatment resolved / unresolved, baseline resolved / unresolved.
  const margins = resolvedT * (n - resolvedT) * resolvedB * (n - resolvedB)
  let phi = 0
  if (margins > 0) {
    const cross = e * h - c * b
    const corrected = cross > n / 2 ? cross - n / 2 : Math.min(cross, 0)
    phi = corrected / Math.sqrt(margins)
  }
  const theta = pT - pB
  const dlT = pT - lT
  const duB = uB - pB
  const duT = uT - pT
  const dlB = pB - lB
  const lower = theta - Math.sqrt(Math.max(0, dlT * dlT - 2 * phi * dlT * duB + duB * duB))
  const upper = theta + Math.sqrt(Math.max(0, duT * duT - 2 * phi * duT * dlB + dlB * dlB))
  return {
    n,
    points: ((c - b) * 100) / n,
    ci: [Math.max(-1, lower) * 100, Math.min(1, upper) * 100],
    level,
    method,
    reason: null,
  }
}
