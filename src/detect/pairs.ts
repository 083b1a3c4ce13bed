import type { Comparison, InstanceCell, InstanceRow } from '../records/comparison.js'
import type { SignalMetric } from './schema.js'

/**
 * One block seen as a pair: the baseline side and the treatment side of one instance.
 * Competitive pairs take both sides from one comparison.json row (two cells); self pairs take the
 * same cell from two runs (previous → baseline, current → treatment).
 */
export interface PairedBlock {
  instance: string
  base: InstanceCell | null
  treat: InstanceCell | null
  /** Outcome-complete: both sides graded (and, for competitive pairs, the block as a whole). */
  outcome: boolean
  /** Cost-complete: outcome-complete with complete telemetry on both sides. */
  cost: boolean
  quarantined: boolean
}

const GRADED = new Set(['resolved', 'unresolved'])

function graded(x: InstanceCell | null | undefined): x is InstanceCell {
  return !!x && GRADED.has(x.outcome)
}

/**
 * Pairs of a competitive comparison from one comparison.json, with the comparison's own denominators:
 * outcome-complete follows the row's status (every cell graded, identity matching), cost-complete
 * adds complete telemetry on the two cells compared.
 */
export function competitivePairs(c: Comparison, baseline: string, treatment: string): PairedBlock[] {
  return c.instances.map((row) => rowPair(row, baseline, treatment))
}

function rowPair(row: InstanceRow, baseline: string, treatment: string): PairedBlock {
  const base = row.cells[baseline] ?? null
  const treat = row.cells[treatment] ?? null
  const quarantined = row.status === 'quarantined'
  const outcome = !quarantined && (row.status === 'complete' || row.status === 'cost_incomplete')
  const both = outcome && graded(base) && graded(treat)
  return {
    instance: row.instance,
    base,
    treat,
    outcome: both,
    // The pair's cost denominator: outcome-complete blocks where these two cells have complete telemetry.
    cost: both && base?.coverage === 'complete' && treat?.coverage === 'complete',
    quarantined,
  }
}

/**
 * Pairs of a self comparison: the cell's rows in `previous` (baseline) and `current` (treatment),
 * on the instances both runs hold. Completeness is the cell's own (other cells do not matter here).
 */
export function selfPairs(previous: Comparison, current: Comparison, cell: string): PairedBlock[] {
  const before = new Map(previous.instances.map((r) => [r.instance, r]))
  const out: PairedBlock[] = []
  for (const row of current.instances) {
    const prev = before.get(row.instance)
    if (!prev) continue
    const base = prev.cells[cell] ?? null
    const treat = row.cells[cell] ?? null
    const quarantined = row.status === 'quarantined' || prev.status === 'quarantined'
    const outcome = !quarantined && graded(base) && graded(treat)
    out.push({
      instance: row.instance,
      base,
      treat,
      outcome,
      cost: outcome && base?.coverage === 'complete' && treat?.coverage === 'complete',
      quarantined,
    })
  }
  return out
}

/** Resolved value of one side: the share of resolved trials (0/1 for k = 1). */
export function resolvedValue(x: InstanceCell): number {
  if (x.trials > 1) return x.resolved_trials / x.trials
  return x.outcome === 'resolved' ? 1 : 0
}

/** A resource metric of one side; null when not measured. */
export function metricValue(
  x: InstanceCell | null,
  metric: Exclude<SignalMetric, 'resolved'>,
): number | null {
  if (!x) return null
  const v = x[metric]
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : null
}

/** Outcome-complete pairs split by direction: b = baseline-only wins, c = treatment-only wins. */
export function discordant(pairs: PairedBlock[]): { b: string[]; c: string[]; n: number } {
  const b: string[] = []
  const c: string[] = []
  let n = 0
  for (const p of pairs) {
    if (!p.outcome || !p.base || !p.treat) continue
    n++
    const d = resolvedValue(p.treat) - resolvedValue(p.base)
    if (d < 0) b.push(p.instance)
    else if (d > 0) c.push(p.instance)
  }
  return { b, c, n }
}

/** Cost-complete pairs that carry `metric` on both sides, as aligned arrays. */
export function metricColumns(
  pairs: PairedBlock[],
  metric: Exclude<SignalMetric, 'resolved'>,
): { instances: string[]; base: number[]; treat: number[] } {
  const instances: string[] = []
  const base: number[] = []
  const treat: number[] = []
  for (const p of pairs) {
    if (!p.cost) continue
    const b = metricValue(p.base, metric)
    const t = metricValue(p.treat, metric)
    if (b === null || t === null) continue
    instances.push(p.instance)
    base.push(b)
    treat.push(t)
  }
  return { instances, base, treat }
}

/** Outcome-complete pairs as aligned resolved arrays (0/1 or trial shares). */
export function outcomeColumns(pairs: PairedBlock[]): {
  instances: string[]
  base: number[]
  treat: number[]
} {
  const instances: string[] = []
  const base: number[] = []
  const treat: number[] = []
  for (const p of pairs) {
    if (!p.outcome || !p.base || !p.treat) continue
    instances.push(p.instance)
    base.push(resolvedValue(p.base))
    treat.push(resolvedValue(p.treat))
  }
  return { instances, base, treat }
}

/**
 * Blocks that push a ratio over `threshold`, most excess first: T_i > threshold × B_i, ordered by the
 * excess T_i − threshold × B_i (Σ excess > 0 ⟺ ratio of means > threshold, so these are the blocks
 * that carry the breach).
 */
export function overThreshold(
  cols: { instances: string[]; base: number[]; treat: number[] },
  threshold: number,
): string[] {
  return cols.instances
    .map((instance, i) => ({ instance, excess: (cols.treat[i] ?? 0) - threshold * (cols.base[i] ?? 0) }))
    .filter((x) => x.excess > 0)
    .sort((a, b) => b.excess - a.excess || (a.instance < b.instance ? -1 : 1))
    .map((x) => x.instance)
}
