/**
 * Exact sign test on paired differences (Dixon & Mood 1946; Conover 1999, "Practical
 * Nonparametric Statistics", §3.4): under H0 an increase and a decrease are equally likely, so the
 * number of increases among the non-tied blocks is Binomial(m, ½). Ties (d = 0) are dropped and
 * counted. Two-sided p = min(1, 2·P(X ≤ min(increases, decreases))), an exact BigInt sum (exact.ts).
 */

import { halfBinomialCounts, ratioToNumber } from './exact.js'
import { assertFiniteArray, type Numbers } from './types.js'

export interface SignTestResult {
  /** Blocks with d > 0. */
  readonly increases: number
  /** Blocks with d < 0. */
  readonly decreases: number
  /** Blocks with d = 0, dropped from the test. */
  readonly ties: number
  /** Non-tied blocks, the binomial n. */
  readonly n: number
  /** Exact two-sided p; 1 when every block is tied (or there are none). */
  readonly pTwoSided: number
  /** "no non-tied blocks" when n = 0, else null. */
  readonly note: string | null
}

/**
 * Exact two-sided sign test of paired differences d (treatment − baseline), any unit.
 * Throws a RangeError for non-finite differences.
 */
export function signTest(differences: Numbers): SignTestResult {
  assertFiniteArray('signTest', 'differences', differences)
  let increases = 0
  let decreases = 0
  for (let i = 0; i < differences.length; i++) {
    const d = differences[i]!
    if (d > 0) increases++
    else if (d < 0) decreases++
  }
  const n = increases + decreases
  const ties = differences.length - n
  if (n === 0) return { increases, decreases, ties, n, pTwoSided: 1, note: 'no non-tied blocks' }
  let pTwoSided = 1
  if (increases !== decreases) {
    const { cumulative, total } = halfBinomialCounts(n, Math.min(increases, decreases))
    pTwoSided = Math.min(1, ratioToNumber(2n * cumulative, total))
  }
  return { increases, decreases, ties, n, pTwoSided, note: null }
}
