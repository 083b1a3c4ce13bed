/**
 * Paired effect sizes for a resource measured on the same blocks in both arms (spend, requests,
 * tokens, wall time): ratio of means, mean of per-block ratios, geometric mean of per-block ratios,
 * paired differences. Inputs: one value per complete block and arm, aligned by index, in one unit.
 *
 * Which to report (statistics.md): the ratio of means Σt/Σb is the budget statement and the one to
 * use for cost; the geometric mean of per-block ratios is the "typical instance" statement; the mean
 * of ratios is shown for reference (it is pulled up by small-denominator blocks).
 * Worked example: baseline [100, 200, 1000], treatment [110, 180, 1500] → mean of ratios 1.1667,
 * geometric mean 1.1409, ratio of means 1.3769.
 */

import { quantileSorted, sortedCopy } from './descriptive.js'
import {
  assertFiniteArray,
  assertSameLength,
  defined,
  type Maybe,
  type Numbers,
  undefinedBecause,
} from './types.js'

function checkPaired(where: string, baseline: Numbers, treatment: Numbers, nonNegative: boolean): void {
  assertSameLength(where, baseline, treatment)
  assertFiniteArray(where, 'baseline', baseline, nonNegative)
  assertFiniteArray(where, 'treatment', treatment, nonNegative)
}

/**
 * Ratio of means Σtreatment/Σbaseline over the blocks (unitless). Values must be ≥ 0.
 * Null with a reason for no blocks or Σbaseline = 0. Throws a RangeError for arrays of different
 * lengths or negative / non-finite values.
 */
export function ratioOfMeans(baseline: Numbers, treatment: Numbers): Maybe<number> {
  checkPaired('ratioOfMeans', baseline, treatment, true)
  if (baseline.length === 0) return undefinedBecause('no blocks')
  let sb = 0
  let st = 0
  for (let i = 0; i < baseline.length; i++) {
    sb += baseline[i]!
    st += treatment[i]!
  }
  if (!Number.isFinite(sb) || !Number.isFinite(st))
    return undefinedBecause('a sum is not finite: values too large to add in double precision')
  if (sb === 0) return undefinedBecause('Σbaseline = 0: the ratio of means is undefined')
  return defined(st / sb)
}

/** A mean of per-block ratios, with how many blocks it used and how many it excluded. */
export interface RatioSummary {
  readonly value: number | null
  /** Blocks whose ratio entered the mean. */
  readonly included: number
  /** Blocks excluded because the ratio is undefined for them (see each function). */
  readonly excluded: number
  readonly reason: string | null
}

/**
 * Geometric mean of per-block ratios t_i/b_i, exp(mean(ln(t_i/b_i))) (unitless). Blocks with a zero
 * on either side are excluded (the log ratio is undefined) and counted in `excluded`. Values must be
 * ≥ 0. Null with a reason when no block has both sides positive.
 */
export function geometricMeanOfRatios(baseline: Numbers, treatment: Numbers): RatioSummary {
  checkPaired('geometricMeanOfRatios', baseline, treatment, true)
  let sumLog = 0
  let included = 0
  for (let i = 0; i < baseline.length; i++) {
    const b = baseline[i]!
    const t = treatment[i]!
    if (b > 0 && t > 0) {
      sumLog += Math.log(t) - Math.log(b)
      included++
    }
  }
  const excluded = baseline.length - included
  if (included === 0) {
    const reason = baseline.length === 0 ? 'no blocks' : `every block (${excluded}) has a zero on one side`
    return { value: null, included, excluded, reason }
  }
  return { value: Math.exp(sumLog / included), included, excluded, reason: null }
}

/**
 * Arithmetic mean of per-block ratios t_i/b_i (unitless). Blocks with b_i = 0 are excluded (the ratio
 * is undefined) and counted; t_i = 0 gives a ratio of 0 and is kept. Values must be ≥ 0. Null with a
 * reason when every baseline value is 0.
 */
export function meanOfRatios(baseline: Numbers, treatment: Numbers): RatioSummary {
  checkPaired('meanOfRatios', baseline, treatment, true)
  let sum = 0
  let included = 0
  for (let i = 0; i < baseline.length; i++) {
    const b = baseline[i]!
    if (b > 0) {
      sum += treatment[i]! / b
      included++
    }
  }
  const excluded = baseline.length - included
  if (included === 0) {
    const reason = baseline.length === 0 ? 'no blocks' : `every block (${excluded}) has baseline 0`
    return { value: null, included, excluded, reason }
  }
  const value = sum / included
  if (!Number.isFinite(value))
    return { value: null, included, excluded, reason: 'ratios exceed the double range' }
  return { value, included, excluded, reason: null }
}

/** Per-block differences treatment − baseline, in the unit of the input. */
export function differences(baseline: Numbers, treatment: Numbers): Float64Array {
  checkPaired('differences', baseline, treatment, false)
  const d = new Float64Array(baseline.length)
  for (let i = 0; i < d.length; i++) d[i] = treatment[i]! - baseline[i]!
  return d
}

/**
 * Per-block log ratios ln(t_i/b_i) for blocks with both sides positive (for a Wilcoxon signed-rank
 * test on log ratios), and the count of blocks excluded for a zero on either side. Values ≥ 0.
 */
export function logRatios(baseline: Numbers, treatment: Numbers): { values: Float64Array; excluded: number } {
  checkPaired('logRatios', baseline, treatment, true)
  const out: number[] = []
  for (let i = 0; i < baseline.length; i++) {
    const b = baseline[i]!
    const t = treatment[i]!
    if (b > 0 && t > 0) out.push(Math.log(t) - Math.log(b))
  }
  return { values: Float64Array.from(out), excluded: baseline.length - out.length }
}

/** Mean and median of the paired differences treatment − baseline, in the unit of the input. */
export interface PairedDifferenceSummary {
  readonly n: number
  readonly mean: number | null
  /** Type 7 median of the differences (not the difference of medians). */
  readonly median: number | null
  readonly reason: string | null
}

/**
 * Mean and median of d_i = t_i − b_i. Null statistics with the reason "no blocks" on empty input.
 * Throws a RangeError for arrays of different lengths or non-finite values.
 */
export function pairedDifferences(baseline: Numbers, treatment: Numbers): PairedDifferenceSummary {
  const d = differences(baseline, treatment)
  const n = d.length
  if (n === 0) return { n, mean: null, median: null, reason: 'no blocks' }
  let sum = 0
  for (let i = 0; i < n; i++) sum += d[i]!
  if (!Number.isFinite(sum))
    return { n, mean: null, median: null, reason: 'differences exceed the double range' }
  return { n, mean: sum / n, median: quantileSorted(sortedCopy(d), 0.5), reason: null }
}
