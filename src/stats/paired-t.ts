/**
 * Paired t-test (Student 1908): t = mean(d) / (s_d/√n) with s_d the sample standard deviation
 * (denominator n − 1), df = n − 1, two-sided p = P(|T_df| ≥ |t|) from the Student t CDF via the
 * regularized incomplete beta function (special.ts; Press et al., Numerical Recipes §6.4 and §6.14,
 * continued fraction by the modified Lentz method).
 * Darwin's Zea mays (Fisher 1935): t = 2.147987, df = 14, p = 0.049703.
 */

import { studentTTwoSidedP } from './special.js'
import { assertFiniteArray, type Numbers } from './types.js'

export interface PairedTResult {
  readonly n: number
  /** Mean difference, in the unit of the input. */
  readonly meanDifference: number | null
  /** Standard error of the mean difference, s_d/√n. */
  readonly standardError: number | null
  readonly t: number | null
  readonly df: number | null
  readonly pTwoSided: number | null
  readonly reason: string | null
}

/**
 * Two-sided paired t-test of differences d (treatment − baseline). Null with a reason for fewer than
 * 2 differences or when every difference is equal (s_d = 0, t undefined). Throws a RangeError for
 * non-finite differences.
 */
export function pairedTTest(differences: Numbers): PairedTResult {
  assertFiniteArray('pairedTTest', 'differences', differences)
  const n = differences.length
  const none = { n, meanDifference: null, standardError: null, t: null, df: null, pTwoSided: null }
  if (n < 2) return { ...none, reason: `needs at least 2 differences, got ${n}` }
  let sum = 0
  for (let i = 0; i < n; i++) sum += differences[i]!
  const mean = sum / n
  let ss = 0
  for (let i = 0; i < n; i++) {
    const e = differences[i]! - mean
    ss += e * e
  }
  const standardError = Math.sqrt(ss / (n - 1) / n)
  if (!Number.isFinite(mean) || !Number.isFinite(standardError)) {
    return { ...none, reason: 'differences exceed the double range' }
  }
  if (standardError === 0) {
    return {
      ...none,
      meanDifference: mean,
      standardError,
      reason: 'every difference is equal: t is undefined',
    }
  }
  const t = mean / standardError
  const df = n - 1
  return { n, meanDifference: mean, standardError, t, df, pTwoSided: studentTTwoSidedP(t, df), reason: null }
}
