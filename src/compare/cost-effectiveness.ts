import type { CostEffectiveness, CostPoint, Estimate, NetBenefit } from '../records/cost-effectiveness.js'
import {
  bootstrapMean,
  bootstrapMeanDifference,
  chosenInterval,
  meanColumn,
  netBenefitColumn,
  type PairedBootstrap,
  pairedDifferenceColumn,
  pairedNetBenefit,
  paretoFrontier,
} from '../stats/index.js'
import type { Block } from './blocks.js'
import type { SharedBootstraps } from './joint-bootstrap.js'
import { columnKey, costBlocksOf, outcomeBlocksOf, type PairOptions } from './pair.js'

export const COST_EFFECTIVENESS_RULE =
  'points: per cell, mean resolved share and mean spend per attempted instance (every attempt summed) over the outcome-complete blocks with known spend for every cell; intervals and paired differences with the baseline from one block bootstrap (the same resampled blocks for every cell, BCa else percentile); frontier: cells no other cell matches on both axes while beating it on one (lower spend, higher resolve rate), by the point estimates; net benefit per comparison: mean over blocks with known spend on both sides of V·(resolved_T − resolved_B) − (spend_T − spend_B), V the declared value per resolution, with its paired block-bootstrap interval; unpriced spend is unknown, never 0'

type Quantity = 'spend' | 'resolved'

/** The outcome-complete blocks with complete, priced telemetry for every cell: the points' blocks. */
function placedBlocks(blocks: Block[], cellIds: readonly string[]): Block[] {
  return outcomeBlocksOf(blocks).filter((b) =>
    cellIds.every((id) => {
      const c = b.cells.get(id)
      return c?.costComplete === true && c.metrics.spend_usd !== null
    }),
  )
}

/** The cost blocks of a comparison with known spend on both sides: its net benefit's blocks. */
function netBlocks(blocks: Block[], baseline: string, treatment: string): Block[] {
  return costBlocksOf(outcomeBlocksOf(blocks), baseline, treatment).filter(
    (b) =>
      b.cells.get(baseline)?.metrics.spend_usd != null && b.cells.get(treatment)?.metrics.spend_usd != null,
  )
}

/** One cell's spend or resolved share on each of `blocks` (every block has it known). */
function columnOf(blocks: Block[], id: string, f: Quantity): Float64Array {
  return Float64Array.from(blocks, (b) => {
    const c = b.cells.get(id)!
    return f === 'spend' ? c.metrics.spend_usd! : c.resolvedShare
  })
}

// Keys of the section's columns in a shared bootstrap. A cell's mean is the cell's own column (the
// one every comparison registers: meanColumn(x) is x itself); differences and net benefits are
// columns of their own, so each interval is the library's, bit for bit.
const meanKey = (id: string, f: Quantity) => columnKey(id, f === 'spend' ? 'spend_usd' : 'resolved')
const diffKey = (baseline: string, treatment: string, f: Quantity) =>
  `cost-effectiveness\u0000difference\u0000${baseline}\u0000${treatment}\u0000${f}`
const netKey = (baseline: string, treatment: string, value: number) =>
  `cost-effectiveness\u0000net benefit\u0000${baseline}\u0000${treatment}\u0000${value}`

/**
 * Register with `shared` every column the section bootstraps (the cells' means and differences with
 * the baseline on the placed blocks, each comparison's net benefit on its blocks), so they are summed
 * with the comparisons' columns, once, over the same plan; `costEffectiveness(…, shared)` then reads
 * them. Same arguments as `costEffectiveness`.
 */
export function registerCostEffectiveness(
  blocks: Block[],
  cellIds: readonly string[],
  baseline: string,
  treatments: readonly string[],
  valuePerResolutionUsd: number | null,
  shared: SharedBootstraps,
): void {
  const placed = placedBlocks(blocks, cellIds)
  if (placed.length > 0) {
    const jb = shared.get(placed.map((b) => b.instance))
    const base = cellIds.includes(baseline)
    for (const id of cellIds) {
      for (const f of ['resolved', 'spend'] as const) {
        const col = columnOf(placed, id, f)
        jb.add(meanKey(id, f), meanColumn(col))
        if (base && id !== baseline)
          jb.add(diffKey(baseline, id, f), pairedDifferenceColumn(columnOf(placed, baseline, f), col))
      }
    }
  }
  if (valuePerResolutionUsd === null) return
  for (const t of treatments) {
    const pairs = netBlocks(blocks, baseline, t)
    if (pairs.length === 0) continue
    shared
      .get(pairs.map((b) => b.instance))
      .add(
        netKey(baseline, t, valuePerResolutionUsd),
        netBenefitColumn(costBlocks(pairs, baseline, t), valuePerResolutionUsd),
      )
  }
}

/** The four columns of a net benefit over its blocks. */
function costBlocks(pairs: Block[], baseline: string, treatment: string) {
  return {
    spendBaseline: columnOf(pairs, baseline, 'spend'),
    spendTreatment: columnOf(pairs, treatment, 'spend'),
    resolvedBaseline: columnOf(pairs, baseline, 'resolved'),
    resolvedTreatment: columnOf(pairs, treatment, 'resolved'),
  }
}

/**
 * A bootstrap of the section: from the shared sums when its column was registered there (the same
 * plan and arithmetic, so the same interval), else computed here.
 */
function fromShared(
  shared: SharedBootstraps | undefined,
  blocks: Block[],
  key: string,
  direct: () => PairedBootstrap,
): PairedBootstrap {
  const jb = shared?.get(blocks.map((b) => b.instance))
  return jb?.has(key) ? jb.mean(key) : direct()
}

/**
 * comparison.json's cost-effectiveness section (pure): the Pareto points of every cell, and the paired
 * net benefit of every comparison when the manifest declares a value per resolution. With `shared`,
 * the bootstraps whose columns `registerCostEffectiveness` registered there come from its sums.
 */
export function costEffectiveness(
  blocks: Block[],
  cellIds: readonly string[],
  baseline: string,
  treatments: readonly string[],
  opts: PairOptions,
  valuePerResolutionUsd: number | null,
  sums?: SharedBootstraps,
): CostEffectiveness {
  const boot = { B: opts.resamples, seed: opts.seed, level: opts.level }
  const outcome = outcomeBlocksOf(blocks)
  const shared = placedBlocks(blocks, cellIds)
  const column = (id: string, f: Quantity) => columnOf(shared, id, f)
  const mean = (key: string, direct: () => PairedBootstrap) => fromShared(sums, shared, key, direct)
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
    const diff = (f: Quantity, values: Float64Array) =>
      estimateOf(
        mean(diffKey(baseline, id, f), () => bootstrapMeanDifference(column(baseline, f), values, boot)),
      )
    return {
      cell: id,
      resolve_rate: estimateOf(mean(meanKey(id, 'resolved'), () => bootstrapMean(resolved, boot))),
      expected_spend_usd: estimateOf(mean(meanKey(id, 'spend'), () => bootstrapMean(spend, boot))),
      vs_baseline:
        id === baseline || !base
          ? null
          : { resolve_rate_diff: diff('resolved', resolved), spend_diff_usd: diff('spend', spend) },
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
      : treatments.map((t) => netBenefit(blocks, baseline, t, valuePerResolutionUsd, boot, sums))
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
  sums: SharedBootstraps | undefined,
): NetBenefit {
  const outcome = outcomeBlocksOf(blocks)
  const pairs = netBlocks(blocks, baseline, treatment)
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
  const cost = costBlocks(pairs, baseline, treatment)
  const { spendBaseline: sb, spendTreatment: st, resolvedBaseline: rb, resolvedTreatment: rt } = cost
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
      fromShared(sums, pairs, netKey(baseline, treatment, value), () => pairedNetBenefit(cost, value, boot)),
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
