/**
 * Cost-effectiveness of harnesses on the same blocks: the paired net benefit at a declared value per
 * resolution, the per-cell means behind a resolve-rate-against-spend (Pareto) view, and the frontier.
 *
 * All block bootstraps here are the mean of one column over the blocks (`bootstrapColumnMean`, as
 * `bootstrapMeanDifference`), whose resample plan depends only on (n, B, seed): every column over the
 * same blocks with the same options is resampled with the same replicates, so the cells' intervals on
 * both axes are paired (a joint block bootstrap). The columns are exported (`meanColumn`,
 * `pairedDifferenceColumn`, `netBenefitColumn`) so a driver that sums many columns over one plan at
 * once gives the same intervals.
 */

import {
  type BootstrapOptions,
  bootstrapColumnMean,
  type CostPerResolutionBlocks,
  type PairedBootstrap,
  pairedDifferenceColumn,
} from './bootstrap.js'
import { assertFiniteArray, assertSameLength, type Numbers } from './types.js'

/**
 * Paired net benefit of treatment over baseline at a value V (USD) per resolution, per block i:
 *
 *   NB_i = V · (resolved_T,i − resolved_B,i) − (spend_T,i − spend_B,i)
 *
 * and its mean over the n blocks, NB = V · (r̄_T − r̄_B) − (s̄_T − s̄_B), with a paired block bootstrap
 * interval (percentile and BCa from the same replicates). Positive: the treatment's extra
 * resolutions are worth more than its extra spend (or it saves more than it loses). resolved is 0/1
 * per block, or the share of resolved trials for k > 1; spend is every attempt summed (mean over
 * trials), in USD. Blocks must have known spend on both sides: an unpriced block is left out by the
 * caller, never entered as 0. Null interval with a reason for fewer than 2 blocks (the estimate is
 * still given for one block; null for none).
 * Throws a RangeError for arrays of different lengths, negative or non-finite values, or a V that is
 * not finite and ≥ 0.
 */
export function pairedNetBenefit(
  blocks: CostPerResolutionBlocks,
  valuePerResolution: number,
  options: BootstrapOptions = {},
): PairedBootstrap {
  return bootstrapColumnMean('bootstrapMeanDifference', netBenefitColumn(blocks, valuePerResolution), options)
}

/**
 * The column `pairedNetBenefit` resamples: per block, NB_i = (V·resolved_T,i − spend_T,i) −
 * (V·resolved_B,i − spend_B,i). Summed over the same resample plan by any driver, with the statistic
 * the resampled Σ NB divided by n, it gives `pairedNetBenefit`'s intervals bit for bit. Throws as `pairedNetBenefit`.
 */
export function netBenefitColumn(blocks: CostPerResolutionBlocks, valuePerResolution: number): Float64Array {
  const where = 'pairedNetBenefit'
  if (!Number.isFinite(valuePerResolution) || valuePerResolution < 0)
    throw new RangeError(`${where}: valuePerResolution must be finite and ≥ 0, got ${valuePerResolution}`)
  const { spendBaseline, spendTreatment, resolvedBaseline, resolvedTreatment } = blocks
  assertSameLength(where, spendBaseline, spendTreatment, ['spendBaseline', 'spendTreatment'])
  assertSameLength(where, spendBaseline, resolvedBaseline, ['spendBaseline', 'resolvedBaseline'])
  assertSameLength(where, spendBaseline, resolvedTreatment, ['spendBaseline', 'resolvedTreatment'])
  for (const [name, xs] of [
    ['spendBaseline', spendBaseline],
    ['spendTreatment', spendTreatment],
    ['resolvedBaseline', resolvedBaseline],
    ['resolvedTreatment', resolvedTreatment],
  ] as const)
    assertFiniteArray(where, name, xs, true)
  // Each arm's value per block, V·resolved − spend; the mean of their paired difference is NB.
  const armValue = (resolved: Numbers, spend: Numbers) => {
    const out = new Float64Array(spend.length)
    for (let i = 0; i < out.length; i++) out[i] = valuePerResolution * resolved[i]! - spend[i]!
    return out
  }
  return pairedDifferenceColumn(
    armValue(resolvedBaseline, spendBaseline),
    armValue(resolvedTreatment, spendTreatment),
  )
}

/**
 * The mean of one column over blocks with its block-bootstrap interval. With the same n and options
 * the replicates are those of every other column and of `pairedNetBenefit` (one shared plan).
 */
export function bootstrapMean(values: Numbers, options: BootstrapOptions = {}): PairedBootstrap {
  return bootstrapColumnMean('bootstrapMeanDifference', meanColumn(values), options)
}

/**
 * The column `bootstrapMean(values)` resamples (values − 0, as a paired difference from zero); with
 * the statistic Σ (resampled) / n over the same plan it gives `bootstrapMean`'s intervals bit for bit.
 * Throws a RangeError for non-finite values.
 */
export function meanColumn(values: Numbers): Float64Array {
  assertFiniteArray('bootstrapMean', 'values', values)
  return pairedDifferenceColumn(new Float64Array(values.length), values)
}

/** One point of a cost-effectiveness view: spend (lower is better) and resolve rate (higher is better). */
export interface CostRatePoint {
  readonly spend: number | null
  readonly rate: number | null
}

/**
 * Which points are on the Pareto frontier of resolve rate against spend: a point is on it unless some
 * other point is at least as good on both axes and strictly better on one (spend ≤, rate ≥, one
 * strict). Equal points are all on it. A point with an unknown spend or rate is never on it and never
 * dominates (null in the result: not placed, not "dominated"). Pure; O(n²), n is the number of cells.
 */
export function paretoFrontier(points: readonly CostRatePoint[]): Array<boolean | null> {
  return points.map((p, i) => {
    if (p.spend === null || p.rate === null) return null
    for (let j = 0; j < points.length; j++) {
      const q = points[j]!
      if (j === i || q.spend === null || q.rate === null) continue
      if (q.spend <= p.spend && q.rate >= p.rate && (q.spend < p.spend || q.rate > p.rate)) return false
    }
    return true
  })
}
