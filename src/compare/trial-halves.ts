import type { ComparisonInput, TrialObservation } from '../ingest/observations.js'
import type { TrialHalves } from '../records/comparison.js'
import { createRng } from '../stats/index.js'
import { buildBlocks } from './blocks.js'
import { instanceRows } from './cells.js'

/** A distinct stream of the plan's seed, so the split does not follow the bootstrap's draws. */
const SPLIT_STREAM = 0x7a1a1

/**
 * Decision trials of a block of k ≥ 2 rerun trials: all but the estimation trials, max(1, ⌊k/4⌋)
 * (three of the default four decide). Chosen by simulation (detect/designs/two-stage.ts, version 4):
 * a larger decision part buys power, and one held-out trial per block estimates the ratio of totals
 * without bias once its own noise is accounted for (detect/shown-ratio.ts).
 */
export function decisionTrialCount(k: number): number {
  return k - Math.max(1, Math.floor(k / 4))
}

/**
 * The decision trials of every planned instance: `decisionTrialCount(k)` of its k trial indices drawn
 * by a seeded partial Fisher–Yates shuffle, instances in panel order (pure; the same seed gives the
 * same split). The same indices serve every cell of the block.
 */
export function decisionTrials(instances: readonly string[], k: number, seed: number): Map<string, number[]> {
  const rng = createRng((seed ^ SPLIT_STREAM) >>> 0)
  const h = decisionTrialCount(k)
  const out = new Map<string, number[]>()
  for (const id of instances) {
    const order = Array.from({ length: k }, (_, i) => i)
    for (let i = 0; i < h; i++) {
      const j = i + rng.nextInt(k - i)
      const x = order[i] as number
      order[i] = order[j] as number
      order[j] = x
    }
    out.set(
      id,
      order.slice(0, h).sort((a, b) => a - b),
    )
  }
  return out
}

/**
 * The rows of one half: observations of the half's trials only, renumbered 0… in trial order, each
 * cell planned with the half's trial count, so a block is complete in a half when every trial of the
 * half is (reasons tied to a trial of the other half do not count against it).
 */
function halfRows(
  input: ComparisonInput,
  inHalf: (instance: string, trial: number) => boolean,
  size: number,
) {
  const renumber = (instance: string, trial: number): number => {
    let n = 0
    for (let t = 0; t < trial; t++) if (inHalf(instance, t)) n++
    return n
  }
  const observations: TrialObservation[] = []
  for (const o of input.observations) {
    if (!inHalf(o.instance, o.trial)) continue
    const trial = renumber(o.instance, o.trial)
    observations.push({
      ...o,
      trial,
      reasons: o.reasons.map((r) => (r.trial === null ? r : { ...r, trial: renumber(o.instance, r.trial) })),
    })
  }
  const preReasons = input.preReasons
    .filter((p) => p.reason.trial === null || inHalf(p.instance, p.reason.trial))
    .map((p) =>
      p.reason.trial === null
        ? p
        : { ...p, reason: { ...p.reason, trial: renumber(p.instance, p.reason.trial) } },
    )
  const half: ComparisonInput = {
    ...input,
    cells: input.cells.map((c) => ({ ...c, trials: size })),
    observations,
    preReasons,
  }
  return instanceRows(
    buildBlocks(half),
    input.cells.map((c) => c.id),
  )
}

/**
 * A confirmation rerun's trials split in two per block (an estimate apart from the decision): the
 * decision trials, drawn at random per instance (`decisionTrials`), and the estimation trials, the
 * rest. Each half's rows are built as comparison.json's rows are, from that half's trials
 * alone; a design that splits trials decides on one and shows its figure from the other. Null when
 * the plan has fewer than two trials (pure).
 */
export function trialHalves(input: ComparisonInput, seed: number): TrialHalves | null {
  const k = input.cells[0]?.trials ?? 1
  if (k < 2 || input.cells.some((c) => c.trials !== k)) return null
  const chosen = decisionTrials(input.instances, k, seed)
  const isDecision = (instance: string, trial: number) => chosen.get(instance)?.includes(trial) ?? false
  const h = decisionTrialCount(k)
  return {
    seed,
    trials: { decision: h, estimate: k - h },
    decision_trials: Object.fromEntries(chosen),
    decision: halfRows(input, isDecision, h),
    estimate: halfRows(input, (i, t) => t < k && !isDecision(i, t), k - h),
  }
}
