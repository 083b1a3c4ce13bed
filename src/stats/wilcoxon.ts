/**
 * Wilcoxon signed-rank test on paired differences (Wilcoxon 1945), two-sided.
 *
 * Zeros are dropped and counted (Wilcoxon's rule, SciPy's zero_method='wilcox'); the remaining |d| are
 * ranked with average ranks for ties; W+ and W− are the rank sums of positive and negative
 * differences, and the reported statistic is W = min(W+, W−).
 * - n ≤ 50 non-zero differences (default): exact. The permutation null distribution of W+ given the
 *   (mid)ranks — every sign pattern equally likely — is enumerated by the generating-function
 *   recursion on doubled ranks (Hollander, Wolfe & Chicken 2014, "Nonparametric Statistical Methods",
 *   §3.1), in integer counts below 2^53, so it is exact with or without ties.
 *   p = min(1, 2·P(W+ ≤ W)).
 * - n > 50: normal approximation with tie correction and continuity correction:
 *   z = (|W+ − n(n+1)/4| − ½) / σ, σ² = n(n+1)(2n+1)/24 − Σ(t³ − t)/48 over tie groups of size t,
 *   p = min(1, 2·Φ(−z)).
 * To test ratios of a resource, pass log ratios (paired.ts `logRatios`).
 * Darwin's Zea mays (Fisher 1935): exact two-sided p = 0.041259765625, W = 24.
 */

import { normalCdf } from './normal.js'
import { assertFiniteArray, type Numbers } from './types.js'

/** Largest n for which the default is the exact distribution. */
export const WILCOXON_EXACT_MAX_N = 50

export interface WilcoxonResult {
  /** Non-zero differences ranked (the test's n). */
  readonly n: number
  /** Zero differences dropped. */
  readonly zeros: number
  /** Rank sum of positive differences. */
  readonly wPlus: number
  /** Rank sum of negative differences. */
  readonly wMinus: number
  /** W = min(W+, W−). */
  readonly statistic: number
  /** Two-sided p; 1 when there is no non-zero difference. */
  readonly pTwoSided: number
  /**
   * One-sided p against "the differences are centred above 0": P(W+ ≥ observed W+) under the
   * sign-flip null (exact, or normal with continuity correction for n > exactMaxN); 1 when n = 0.
   */
  readonly pGreater: number
  readonly method: 'exact' | 'normal-approximation'
  /** True when some |d| are tied (average ranks used). */
  readonly tiedRanks: boolean
  /** "no non-zero differences" when n = 0, else null. */
  readonly note: string | null
}

export interface WilcoxonOptions {
  /** Use the exact distribution up to this many non-zero differences (default 50, at most 50). */
  readonly exactMaxN?: number
}

/** Average ranks (1-based) of `values` and the sizes of tie groups larger than 1. */
function averageRanks(values: Float64Array): { ranks: Float64Array; tieSizes: number[] } {
  const n = values.length
  const order = Array.from({ length: n }, (_, i) => i).sort((a, b) => values[a]! - values[b]!)
  const ranks = new Float64Array(n)
  const tieSizes: number[] = []
  let i = 0
  while (i < n) {
    let j = i + 1
    while (j < n && values[order[j]!] === values[order[i]!]) j++
    const rank = (i + 1 + j) / 2 // mean of ranks i+1 .. j
    for (let k = i; k < j; k++) ranks[order[k]!] = rank
    if (j - i > 1) tieSizes.push(j - i)
    i = j
  }
  return { ranks, tieSizes }
}

/** P(W+ ≤ w) under the sign-flip null for the given (mid)ranks, exactly (n ≤ 50). */
function exactLowerTail(ranks: Float64Array, w: number): number {
  const doubled = Array.from(ranks, (r) => Math.round(2 * r))
  const max = doubled.reduce((s, r) => s + r, 0)
  const counts = new Float64Array(max + 1)
  counts[0] = 1
  let reach = 0
  for (const r of doubled) {
    reach += r
    for (let s = reach; s >= r; s--) counts[s] = counts[s]! + counts[s - r]!
  }
  const limit = Math.round(2 * w)
  let below = 0
  for (let s = 0; s <= limit && s <= max; s++) below += counts[s]!
  return below / 2 ** ranks.length
}

/**
 * Two-sided Wilcoxon signed-rank test of paired differences d (treatment − baseline), any unit.
 * Throws a RangeError for non-finite differences or an exactMaxN outside [0, 50].
 */
export function wilcoxonSignedRank(differences: Numbers, options: WilcoxonOptions = {}): WilcoxonResult {
  assertFiniteArray('wilcoxonSignedRank', 'differences', differences)
  const exactMaxN = options.exactMaxN ?? WILCOXON_EXACT_MAX_N
  if (!Number.isSafeInteger(exactMaxN) || exactMaxN < 0 || exactMaxN > WILCOXON_EXACT_MAX_N) {
    throw new RangeError(`wilcoxonSignedRank: exactMaxN must be an integer in [0, 50], got ${exactMaxN}`)
  }
  const nonZero: number[] = []
  for (let i = 0; i < differences.length; i++) {
    const d = differences[i]!
    if (d !== 0) nonZero.push(d)
  }
  const n = nonZero.length
  const zeros = differences.length - n
  const exact = n <= exactMaxN
  const method = exact ? 'exact' : 'normal-approximation'
  if (n === 0) {
    return {
      n,
      zeros,
      wPlus: 0,
      wMinus: 0,
      statistic: 0,
      pTwoSided: 1,
      pGreater: 1,
      method,
      tiedRanks: false,
      note: 'no non-zero differences',
    }
  }
  const { ranks, tieSizes } = averageRanks(Float64Array.from(nonZero, Math.abs))
  let wPlus = 0
  for (let i = 0; i < n; i++) if (nonZero[i]! > 0) wPlus += ranks[i]!
  const total = (n * (n + 1)) / 2
  const wMinus = total - wPlus
  const statistic = Math.min(wPlus, wMinus)
  let pTwoSided: number
  let pGreater: number
  if (exact) {
    pTwoSided = Math.min(1, 2 * exactLowerTail(ranks, statistic))
    // P(W+ ≥ w+) = P(W− ≤ w−): the null distribution is symmetric under sign flips.
    pGreater = Math.min(1, exactLowerTail(ranks, wMinus))
  } else {
    const tieTerm = tieSizes.reduce((s, t) => s + t * t * t - t, 0)
    const sd = Math.sqrt((n * (n + 1) * (2 * n + 1)) / 24 - tieTerm / 48)
    const z = Math.max(0, Math.abs(wPlus - total / 2) - 0.5) / sd
    pTwoSided = Math.min(1, 2 * normalCdf(-z))
    pGreater = Math.min(1, normalCdf(-(wPlus - total / 2 - 0.5) / sd))
  }
  return {
    n,
    zeros,
    wPlus,
    wMinus,
    statistic,
    pTwoSided,
    pGreater,
    method,
    tiedRanks: tieSizes.length > 0,
    note: null,
  }
}
