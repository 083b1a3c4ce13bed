/**
 * Exact McNemar test for paired binary outcomes (resolved / not resolved per block).
 *
 * Notation (statistics.md): b = baseline-only wins (baseline resolved, treatment not),
 * c = treatment-only wins, n_d = b + c discordant pairs. Under H0 (equal resolve rates) the
 * treatment-only count is X ~ Binomial(n_d, ½) given n_d. Every probability is an exact binomial
 * sum in BigInt arithmetic, rounded once (see exact.ts): no chi-square, no continuity correction.
 * n_d = 0 gives p = 1 everywhere, never an exception (field case F15).
 */

import { halfBinomialCounts, halfBinomialSf, ratioToNumber } from './exact.js'
import { assertCount } from './types.js'

/** Direction of a one-sided alternative. */
export type McNemarDirection = 'treatment_better' | 'treatment_worse'

/** Full exact McNemar result for one 2×2 table's discordant cells. */
export interface McNemarResult {
  /** Baseline-only wins. */
  readonly b: number
  /** Treatment-only wins. */
  readonly c: number
  /** Discordant pairs, b + c. */
  readonly discordant: number
  /** Exact two-sided p = min(1, 2·P(X ≤ min(b, c))). */
  readonly pTwoSided: number
  /** Two-sided mid-p = min(1, 2·[P(X < k) + ½·P(X = k)]), k = min(b, c). */
  readonly pMidTwoSided: number
  /** One-sided p against "treatment better": P(X ≥ c). */
  readonly pTreatmentBetter: number
  /** One-sided p against "treatment worse" (the regression direction): P(X ≥ b). */
  readonly pTreatmentWorse: number
  /** "no discordant pairs" when b = c = 0, else null. */
  readonly note: string | null
}

function check(where: string, b: number, c: number): void {
  assertCount(where, 'b', b)
  assertCount(where, 'c', c)
}

/**
 * Exact two-sided McNemar p-value: min(1, 2·P(X ≤ min(b, c))), X ~ Binomial(b + c, ½).
 * Source: McNemar (1947) in its exact (conditional binomial) form; Fagerland, Lydersen & Laake
 * (2013), "The McNemar test for binary matched-pairs data: mid-p and asymptotic are better than
 * exact conditional", BMC Medical Research Methodology 13:91. Throws a RangeError for negative or
 * non-integer counts.
 */
export function mcnemarPTwoSided(b: number, c: number): number {
  check('mcnemarPTwoSided', b, c)
  const n = b + c
  if (n === 0 || b === c) return 1
  const { cumulative, total } = halfBinomialCounts(n, Math.min(b, c))
  return Math.min(1, ratioToNumber(2n * cumulative, total))
}

/**
 * Two-sided mid-p McNemar value: min(1, 2·[P(X < k) + ½·P(X = k)]) = min(1, 2·P(X ≤ k) − P(X = k)),
 * k = min(b, c). Source: Fagerland, Lydersen & Laake (2013), BMC Med Res Methodol 13:91, who
 * recommend it over the exact test (closer to nominal size, still conservative in practice).
 */
export function mcnemarPMidTwoSided(b: number, c: number): number {
  check('mcnemarPMidTwoSided', b, c)
  const n = b + c
  if (n === 0) return 1
  const { cumulative, atK, total } = halfBinomialCounts(n, Math.min(b, c))
  return Math.min(1, ratioToNumber(2n * cumulative - atK, total))
}

/**
 * Exact one-sided McNemar p-value in an explicit direction.
 * - 'treatment_better' (default): P(X ≥ c) — small when treatment-only wins dominate (c > b).
 * - 'treatment_worse': P(X ≥ b) = P(X ≤ c) — small in the regression direction (b > c).
 * n_d = 0 → 1.
 */
export function mcnemarPOneSided(
  b: number,
  c: number,
  direction: McNemarDirection = 'treatment_better',
): number {
  check('mcnemarPOneSided', b, c)
  const n = b + c
  if (n === 0) return 1
  return halfBinomialSf(n, direction === 'treatment_better' ? c : b)
}

/** All exact McNemar p-values for b baseline-only and c treatment-only wins. */
export function mcnemarExact(b: number, c: number): McNemarResult {
  check('mcnemarExact', b, c)
  return {
    b,
    c,
    discordant: b + c,
    pTwoSided: mcnemarPTwoSided(b, c),
    pMidTwoSided: mcnemarPMidTwoSided(b, c),
    pTreatmentBetter: mcnemarPOneSided(b, c, 'treatment_better'),
    pTreatmentWorse: mcnemarPOneSided(b, c, 'treatment_worse'),
    note: b + c === 0 ? 'no discordant pairs' : null,
  }
}
