/**
 * Order statistics of an unsorted Float64Array by selection (Floyd & Rivest 1975, "Algorithm 489:
 * SELECT", CACM 18:173): a type 7 quantile needs two neighbouring order statistics, which selection
 * finds in linear expected time, where a sort of the 10,000 replicates of a bootstrap does far more
 * work than the two or four quantiles an interval reads. The values found are the sorted array's own,
 * so every quantile equals `quantileSorted` on the sorted copy.
 */

import { quantileSorted } from './descriptive.js'
import { sortAscending } from './sort.js'

/** Below this length a sorted copy is as fast. */
const SELECT_MIN = 600

/**
 * Quantiles and counts of a set of replicates: what the percentile, BCa and studentized intervals
 * read. Either over an ascending-sorted array or over an unsorted one by selection.
 */
export interface ReplicateQuantiles {
  readonly length: number
  /** The type 7 quantile at p in [0, 1] (as `quantileSorted` on the sorted values). */
  quantile(p: number): number
  /** How many values are < x, and how many are ≤ x. */
  countBelow(x: number): { below: number; atOrBelow: number }
}

/** The quantiles of an already ascending-sorted array. */
export function sortedQuantiles(sorted: Float64Array): ReplicateQuantiles {
  return {
    length: sorted.length,
    quantile: (p) => quantileSorted(sorted, p),
    countBelow: (x) => ({ below: lowerBound(sorted, x, false), atOrBelow: lowerBound(sorted, x, true) }),
  }
}

/**
 * The quantiles of `values`, found by selection: the array is reordered in place (its multiset is
 * kept), so pass a buffer the caller no longer needs in order. An array holding NaN, or a short one,
 * is sorted instead (NaN then sorts last, as the built-in sort places it).
 */
export function selectedQuantiles(values: Float64Array): ReplicateQuantiles {
  const n = values.length
  let hasNaN = false
  for (let i = 0; i < n; i++) {
    if (Number.isNaN(values[i]!)) {
      hasNaN = true
      break
    }
  }
  if (hasNaN || n < SELECT_MIN) return sortedQuantiles(sortAscending(values))
  return new SelectedQuantiles(values)
}

/**
 * Quantiles by selection, each question narrowed by the answers before it: the indices already in
 * their sorted place (`fixed`, ascending) bound the segment the next selection has to look at, so
 * the two ends of an interval and the BCa ends near them cost little more than the first.
 */
class SelectedQuantiles implements ReplicateQuantiles {
  readonly length: number
  /** Indices k with values[k] in its sorted place: nothing larger left of it, nothing smaller right. */
  private readonly fixed: number[] = []

  constructor(private readonly values: Float64Array) {
    this.length = values.length
  }

  quantile(p: number): number {
    const n = this.length
    const h = (n - 1) * p
    const lo = Math.floor(h)
    if (lo >= n - 1) return this.orderStatistic(n - 1)
    if (lo < 0) return this.orderStatistic(0)
    const xlo = this.orderStatistic(lo)
    const xhi = this.orderStatistic(lo + 1)
    const frac = h - lo
    return frac === 0 || xlo === xhi ? xlo : xlo + frac * (xhi - xlo)
  }

  countBelow(x: number): { below: number; atOrBelow: number } {
    const values = this.values
    let below = 0
    let atOrBelow = 0
    // Counted without branches: the replicates lie on both sides of x in no order, so a branch
    // per comparison is mispredicted about half the time (the loop runs twice as fast this way).
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!
      below += +(v < x)
      atOrBelow += +(v <= x)
    }
    return { below, atOrBelow }
  }

  /** The k-th smallest value (0-based), with the sign the built-in sort gives a zero. */
  private orderStatistic(k: number): number {
    const fixed = this.fixed
    const values = this.values
    // The fixed neighbours of k: the segment between them holds k's value somewhere.
    let at = 0
    while (at < fixed.length && fixed[at]! < k) at++
    if (fixed[at] !== k) {
      const left = at > 0 ? fixed[at - 1]! : -1
      const right = at < fixed.length ? fixed[at]! : this.length
      if (k === left + 1) {
        // The segment's minimum belongs at its first index: one pass, no partitioning.
        let m = k
        for (let i = k + 1; i < right; i++) if (values[i]! < values[m]!) m = i
        swap(values, k, m)
      } else selectRange(values, k, left + 1, right - 1)
      fixed.splice(at, 0, k)
    }
    return signedZero(values, k, values[k]!)
  }
}

/**
 * The k-th order statistic `x` with the sign a sort gives a zero: the built-in sort puts −0 before +0,
 * which comparisons cannot tell apart, so a zero is −0 exactly when more than k values are negative
 * or −0.
 */
function signedZero(values: Float64Array, k: number, x: number): number {
  if (x !== 0) return x
  let negative = 0
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!
    if (v < 0 || Object.is(v, -0)) negative++
  }
  return negative > k ? -0 : 0
}

/**
 * The k-th smallest value (0-based) of a NaN-free array, which is reordered so that values[k] holds
 * it, every value left of k is ≤ it and every value right of k is ≥ it (Floyd–Rivest selection).
 */
export function select(values: Float64Array, k: number): number {
  selectRange(values, k, 0, values.length - 1)
  return values[k]!
}

/** `select` within values[left..right] (left ≤ k ≤ right). */
function selectRange(values: Float64Array, k: number, left: number, right: number): void {
  while (right > left) {
    // On a long range, first narrow it to a sample's neighbourhood of k (the Floyd–Rivest step).
    if (right - left > 600) {
      const n = right - left + 1
      const i = k - left + 1
      const z = Math.log(n)
      const s = 0.5 * Math.exp((2 * z) / 3)
      const sd = 0.5 * Math.sqrt((z * s * (n - s)) / n) * (i - n / 2 < 0 ? -1 : 1)
      const newLeft = Math.max(left, Math.floor(k - (i * s) / n + sd))
      const newRight = Math.min(right, Math.floor(k + ((n - i) * s) / n + sd))
      selectRange(values, k, newLeft, newRight)
    }
    const t = values[k]!
    let i = left
    let j = right
    swap(values, left, k)
    if (values[right]! > t) swap(values, left, right)
    while (i < j) {
      swap(values, i, j)
      i++
      j--
      while (values[i]! < t) i++
      while (values[j]! > t) j--
    }
    if (values[left] === t) swap(values, left, j)
    else {
      j++
      swap(values, j, right)
    }
    if (j <= k) left = j + 1
    if (k <= j) right = j - 1
  }
}

function swap(values: Float64Array, i: number, j: number): void {
  const t = values[i]!
  values[i] = values[j]!
  values[j] = t
}

/** Index of the first element ≥ x (or > x when `strict`), by binary search on a sorted array. */
export function lowerBound(sorted: Float64Array, x: number, strict: boolean): number {
  let lo = 0
  let hi = sorted.length
  while (lo < hi) {
    const mid = (lo + hi) >>> 1
    const v = sorted[mid]!
    if (v < x || (strict && v === x)) lo = mid + 1
    else hi = mid
  }
  return lo
}
