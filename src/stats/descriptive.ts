/**
 * Per-arm descriptive statistics of a resource (spend, requests, tokens, wall time): n, mean, median,
 * P90 and total, in the unit of the input.
 */

import {
  assertFiniteArray,
  assertProbability,
  defined,
  type Maybe,
  type Numbers,
  undefinedBecause,
} from './types.js'

/**
 * The quantile definition used everywhere in this library: Hyndman & Fan (1996) type 7 — linear
 * interpolation between order statistics at h = (n − 1)·p (0-based), the default of R's `quantile`
 * and numpy's `percentile` ("linear").
 */
export const QUANTILE_METHOD = 'hyndman-fan type 7 (linear interpolation, R/numpy default)'

/**
 * Type 7 quantile of an already ascending-sorted, non-empty array: with h = (n − 1)·p,
 * x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋ + 1] − x[⌊h⌋]). p in [0, 1]. No checks on sortedness (hot path).
 */
export function quantileSorted(sorted: Numbers, p: number): number {
  const n = sorted.length
  if (n === 0) throw new RangeError('quantileSorted: empty array')
  const h = (n - 1) * p
  const lo = Math.floor(h)
  if (lo >= n - 1) return sorted[n - 1]!
  if (lo < 0) return sorted[0]!
  const xlo = sorted[lo]!
  const xhi = sorted[lo + 1]!
  const frac = h - lo
  // Equal neighbours give the value itself exactly (no rounding from the interpolation).
  return frac === 0 || xlo === xhi ? xlo : xlo + frac * (xhi - xlo)
}

/** Ascending sorted copy as a Float64Array (numeric order). */
export function sortedCopy(values: Numbers): Float64Array {
  const out = new Float64Array(values.length)
  for (let i = 0; i < values.length; i++) out[i] = values[i]!
  return out.sort()
}

/**
 * Type 7 quantile (see QUANTILE_METHOD) of unsorted values, p in [0, 1].
 * Null with a reason on empty input. Throws a RangeError for non-finite values or p outside [0, 1].
 */
export function quantile(values: Numbers, p: number): Maybe<number> {
  assertProbability('quantile', 'p', p)
  assertFiniteArray('quantile', 'values', values)
  if (values.length === 0) return undefinedBecause('no values')
  return defined(quantileSorted(sortedCopy(values), p))
}

/** Descriptive summary of one arm's values for one resource, in the unit of the input. */
export interface Summary {
  /** Number of values (the denominator of the mean). */
  readonly n: number
  readonly mean: number | null
  readonly median: number | null
  /** 90th percentile, type 7 (see `quantileMethod`). */
  readonly p90: number | null
  /** Sum of the values. */
  readonly total: number | null
  readonly quantileMethod: string
  /** Why the statistics are null ("no values"), else null. */
  readonly reason: string | null
}

/**
 * n, mean, median, P90 and total of `values`. Empty input gives n = 0 and null statistics with the
 * reason "no values" (never NaN). Throws a RangeError for non-finite values.
 */
export function describe(values: Numbers): Summary {
  assertFiniteArray('describe', 'values', values)
  const n = values.length
  let total = 0
  for (let i = 0; i < n; i++) total += values[i]!
  const reason = n === 0 ? 'no values' : Number.isFinite(total) ? null : 'total exceeds the double range'
  if (reason !== null) {
    return { n, mean: null, median: null, p90: null, total: null, quantileMethod: QUANTILE_METHOD, reason }
  }
  const sorted = sortedCopy(values)
  return {
    n,
    mean: total / n,
    median: quantileSorted(sorted, 0.5),
    p90: quantileSorted(sorted, 0.9),
    total,
    quantileMethod: QUANTILE_METHOD,
    reason: null,
  }
}
