import { decisionTrialCount, decisionTrials } from '../compare/trial-halves.js'
import type { InstanceCell, InstanceRow, TrialHalves } from '../records/comparison.js'

const SUMMED = ['spend_usd', 'input_fresh_tokens', 'proxy_requests'] as const

function agrees(whole: InstanceCell, d: InstanceCell, e: InstanceCell): string | null {
  if (d.trials + e.trials !== whole.trials) return `${d.trials} + ${e.trials} trials, the row ${whole.trials}`
  if (d.resolved_trials + e.resolved_trials !== whole.resolved_trials)
    return `${d.resolved_trials} + ${e.resolved_trials} resolved trials, the row ${whole.resolved_trials}`
  for (const m of SUMMED) {
    const w = whole[m]
    const a = d[m]
    const b = e[m]
    if (w === null || a === null || b === null) continue
    // Rows hold means over their trials: the parts' sums add up to the row's.
    const total = w * whole.trials
    const parts = a * d.trials + b * e.trials
    if (!(Math.abs(total - parts) <= 1e-6 * Math.max(1, Math.abs(total))))
      return `${m} does not add up to the row's`
  }
  return null
}

/**
 * Why a rerun's `trial_halves` cannot be trusted (a sentence), or null when they are what the plan
 * drew and add up to the rerun's own rows: the seed is the confirmation plan's, the split is the one
 * that seed draws for the planned instances (compare/trial-halves.ts), and for every planned block and
 * cell the two parts' trials, resolved trials and summed costs make the whole row's. comparison.json
 * is read back from artifacts, so a split chosen after the fact, or parts that contradict the rows,
 * decide nothing (pure).
 */
export function trialHalvesProblem(
  h: TrialHalves,
  rows: readonly InstanceRow[],
  planned: readonly string[],
  seed: number | null,
): string | null {
  if (seed !== null && h.seed !== seed) return `name seed ${h.seed}, the confirmation plan's is ${seed}`
  const k = h.trials.decision + h.trials.estimate
  if (k < 2 || h.trials.decision !== decisionTrialCount(k))
    return `split ${h.trials.decision} + ${h.trials.estimate} trials, not the design's for ${k}`
  const drawn = decisionTrials(planned, k, h.seed)
  const whole = new Map(rows.map((r) => [r.instance, r]))
  const dec = new Map(h.decision.map((r) => [r.instance, r]))
  const est = new Map(h.estimate.map((r) => [r.instance, r]))
  for (const id of planned) {
    const want = drawn.get(id) ?? []
    const got = h.decision_trials[id]
    if (!got || got.length !== want.length || got.some((t, i) => t !== want[i]))
      return `name other decision trials for ${id} than the plan's seed draws`
    const w = whole.get(id)
    if (!w) continue
    const d = dec.get(id)
    const e = est.get(id)
    if (!d || !e) return `lack a row for ${id}`
    for (const [cell, x] of Object.entries(w.cells)) {
      const a = d.cells[cell]
      const b = e.cells[cell]
      if (!a || !b) return `lack cell ${cell} of ${id}`
      const why = agrees(x, a, b)
      if (why) return `do not add up for ${id}, cell ${cell}: ${why}`
    }
  }
  return null
}
