import type { CostEffectiveness, CostPoint, Estimate, NetBenefit } from '../records/cost-effectiveness.js'
import {
  bootstrapMean,
  bootstrapMeanDifference,
  chosenInterval,
  type PairedBootstrap,
  pairedNetBenefit,
  paretoFrontier,
} from '../stats/index.js'
import type { Block } from './blocks.js'
import { costBlocksOf, outcomeBlocksOf, type PairOptions } from './pair.js'

export const COST_EFFECTIVENESS_RULE =
  'points: per cell, mean resolved share and mean spend per attempted instance (every attempt summed) over the outcome-complete blocks with known spend for every cell; intervals and paired differences with the baseline from one block bootstrap (the same resampled blocks for every cell, BCa else percentile); frontier: cells no other cell matches on both axes while beating it on one (lower spend, higher resolve rate), by the point estimates; net benefit per comparison: mean over blocks with known spend on both sides of V·(resolved_T − resolved_B) − (spend_T − spend_B), V the declared value per resolution, with its paired block-bootstrap interval; unpriced spend is unknown, never 0'

/**
 * comparison.json's cost-effectiveness section (pure): the Pareto points of every cell, and the paired
 * net benefit of every comparison when the manifest declares a value per resolution.
 */
export function costEffectiveness(
  blocks: Block[],
  cellIds: readonly string[],
  baseline: string,
  treatments: readonly string[],
  opts: PairOptions,
  valuePerResolutionUsd: number | null,
): CostEffectiveness {
  const boot = { B: opts.resamples, seed: opts.seed, level: opts.level }
  const outcome = outcomeBlocksOf(blocks)
  const shared = outcome.filter((b) =>
    cellIds.every((id) => {
      const c = b.cells.get(id)
      return c?.costComplete === true && c.metrics.spend_usd !== null
    }),
  )
  const column = (id: string, f: 'spend' | 'resolved') =>
    Float64Array.from(shared, (b) => {
      const c = b.cells.get(id)!
      return f === 'spend' ? c.metrics.spend_usd! : c.resolvedShare
    })
  const reason =
    cellIds.length === 0
      ? 'no cells'
      : outcome.length === 0
        ? 'no outcome-complete block'
        : shared.length === 0
          ? `spend unknown: none of the ${outcome.length} outcome-complete blocks has complete, priced telemetry for every cell`
          : null
  const unplaced: Estimate = { estimate: null, ci: null, method: null, reason }
  const base = cellIds.includes(baseline) && shared.length > 0
  const points: CostPoint[] = cellIds.map((id) => {
    if (shared.length === 0)
      return {
        cell: id,
        resolve_rate: unplaced,
        expected_spend_usd: unplaced,
        vs_baseline: null,
        frontier: null,
      }
    const spend = column(id, 'spend')
    const resolved = column(id, 'resolved')
    return {
      cell: id,
      resolve_rate: estimateOf(bootstrapMean(resolved, boot)),
      expected_spend_usd: estimateOf(bootstrapMean(spend, boot)),
      vs_baseline:
        id === baseline || !base
          ? null
          : {
              resolve_rate_diff: estimateOf(
                bootstrapMeanDifference(column(baseline, 'resolved'), resolved, boot),
              ),
              spend_diff_usd: estimateOf(bootstrapMeanDifference(column(baseline, 'spend'), spend, boot)),
            },
      frontier: null,
    }
  })
  const frontier = paretoFrontier(
    points.map((p) => ({ spend: p.expected_spend_usd.estimate, rate: p.resolve_rate.estimate })),
  )
  points.forEach((p, i) => {
    p.frontier = frontier[i] ?? null
  })
  const net =
    valuePerResolutionUsd === null
      ? []
      : treatments.map((t) => netBenefit(blocks, baseline, t, valuePerResolutionUsd, boot))
  return {
    rule: COST_EFFECTIVENESS_RULE,
    blocks: shared.length,
    reason,
    points,
    value_per_resolution_usd: valuePerResolutionUsd,
    net_benefit: net,
  }
}

/**
 * Several models: each model's section (its cells on its own blocks) merged into one; the frontier is
 * recomputed across every placed cell, `blocks` is the smallest model's count.
 */
export function mergeCostEffectiveness(
  parts: CostEffectiveness[],
  valuePerResolutionUsd: number | null,
): CostEffectiveness {
  const points = parts.flatMap((p) => p.points.map((x) => ({ ...x })))
  const frontier = paretoFrontier(
    points.map((p) => ({ spend: p.expected_spend_usd.estimate, rate: p.resolve_rate.estimate })),
  )
  points.forEach((p, i) => {
    p.frontier = frontier[i] ?? null
  })
  const reasons = parts.map((p) => p.reason).filter((r) => r !== null)
  return {
    rule: `${COST_EFFECTIVENESS_RULE}; several models: each model's cells on that model's blocks, the frontier across all cells`,
    blocks: parts.length === 0 ? 0 : Math.min(...parts.map((p) => p.blocks)),
    reason: parts.length === 0 ? 'no model with a baseline' : (reasons[0] ?? null),
    points,
    value_per_resolution_usd: valuePerResolutionUsd,
    net_benefit: parts.flatMap((p) => p.net_benefit),
  }
}

function netBenefit(
  blocks: Block[],
  baseline: string,
  treatment: string,
  value: number,
  boot: { B: number; seed: number; level: number },
): NetBenefit {
  const outcome = outcomeBlocksOf(blocks)
  const pairs = costBlocksOf(outcome, baseline, treatment).filter(
    (b) =>
      b.cells.get(baseline)?.metrics.spend_usd != null && b.cells.get(treatment)?.metrics.spend_usd != null,
  )
  const col = (id: string, f: 'spend' | 'resolved') =>
    Float64Array.from(pairs, (b) => {
      const c = b.cells.get(id)!
      return f === 'spend' ? c.metrics.spend_usd! : c.resolvedShare
    })
  const n = pairs.length
  if (n === 0) {
    const why =
      outcome.length === 0
        ? 'no outcome-complete block'
        : `spend unknown: none of the ${outcome.length} outcome-complete blocks has complete, priced telemetry on both sides`
    return {
      baseline,
      treatment,
      n,
      value_per_resolution_usd: value,
      net_benefit_usd: { estimate: null, ci: null, method: null, reason: why },
      resolved_diff: null,
      spend_diff_usd: null,
    }
  }
  const sb = col(baseline, 'spend')
  const st = col(treatment, 'spend')
  const rb = col(baseline, 'resolved')
  const rt = col(treatment, 'resolved')
  const mean = (a: Float64Array, b: Float64Array) => {
    let s = 0
    for (let i = 0; i < a.length; i++) s += b[i]! - a[i]!
    return s / a.length
  }
  return {
    baseline,
    treatment,
    n,
    value_per_resolution_usd: value,
    net_benefit_usd: estimateOf(
      pairedNetBenefit(
        { spendBaseline: sb, spendTreatment: st, resolvedBaseline: rb, resolvedTreatment: rt },
        value,
        boot,
      ),
    ),
    resolved_diff: mean(rb, rt),
    spend_diff_usd: mean(sb, st),
  }
}

function estimateOf(pb: PairedBootstrap): Estimate {
  const chosen = chosenInterval(pb)
  const estimate = pb.percentile.estimate ?? pb.bca.estimate
  return {
    estimate,
    ci: chosen.ci ? [chosen.ci[0], chosen.ci[1]] : null,
    method: chosen.ci ? chosen.method : null,
    reason: chosen.ci ? null : chosen.reason,
  }
}
