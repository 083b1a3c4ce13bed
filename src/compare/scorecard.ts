import type { TrialObservation } from '../ingest/observations.js'
import type { Scorecard, ScorecardDiff } from '../records/scorecard.js'

/**
 * The scorecard: per-cell metrics of the agentic-evaluation tradition, as pure functions over trials
 * (observations). Definitions:
 * - pass@1: mean over instances of (resolved trials / graded trials); infra_error and ungraded trials
 *   are left out of the denominator and counted apart.
 * - pass^k (τ²-bench): mean over instances with n ≥ k graded trials of C(c, k) / C(n, k), c resolved;
 *   the chance that k trials drawn without replacement all pass. Reported for k = 1..max trials.
 * - cost per solved task: the cell's summed spend (USD) over resolved trials; null when nothing was
 *   solved or any trial has no spend.
 * - tool-call error rate: failed tool calls (error or invalid_arguments) / tool calls, over trials of
 *   bridge tasks; null when no trial reports tool calls.
 * - exits: trials by exit class of the final attempt (clean, budget, error, timeout, infra, …).
 * Every undefined value is null, never NaN.
 */

/** C(n, k) / C(m, k) computed as a product (no overflow for the trial counts we see). */
export function choiceRatio(c: number, n: number, k: number): number {
  if (k > n) throw new RangeError(`k ${k} > n ${n}`)
  if (c < k) return 0
  let r = 1
  for (let i = 0; i < k; i++) r *= (c - i) / (n - i)
  return r
}

const graded = (o: TrialObservation): boolean => o.outcome === 'resolved' || o.outcome === 'unresolved'

/** Per instance: resolved and graded trials. */
export function taskCounts(trials: TrialObservation[]): Map<string, { resolved: number; graded: number }> {
  const out = new Map<string, { resolved: number; graded: number }>()
  for (const o of trials) {
    const t = out.get(o.instance) ?? { resolved: 0, graded: 0 }
    if (graded(o)) t.graded++
    if (o.outcome === 'resolved') t.resolved++
    out.set(o.instance, t)
  }
  return out
}

export function passAt1(trials: TrialObservation[], counts = taskCounts(trials)): number | null {
  const per = [...counts.values()].filter((t) => t.graded > 0)
  if (per.length === 0) return null
  return per.reduce((s, t) => s + t.resolved / t.graded, 0) / per.length
}

export function passHatK(
  trials: TrialObservation[],
  k: number,
  counts = taskCounts(trials),
): { value: number | null; instances: number } {
  const per = [...counts.values()].filter((t) => t.graded >= k)
  if (per.length === 0) return { value: null, instances: 0 }
  return {
    value: per.reduce((s, t) => s + choiceRatio(t.resolved, t.graded, k), 0) / per.length,
    instances: per.length,
  }
}

export function costPerSolved(trials: TrialObservation[]): number | null {
  const solved = trials.filter((o) => o.outcome === 'resolved').length
  if (solved === 0) return null
  let spend = 0
  for (const o of trials) {
    const v = o.metrics.spend_usd
    if (v === null || v === undefined) return null
    spend += v
  }
  return spend / solved
}

export function toolCallErrorRate(trials: TrialObservation[]): { calls: number | null; rate: number | null } {
  const withTools = trials.filter((o) => o.tools)
  if (withTools.length === 0) return { calls: null, rate: null }
  const calls = withTools.reduce((s, o) => s + (o.tools?.calls ?? 0), 0)
  const failed = withTools.reduce((s, o) => s + (o.tools?.failed ?? 0), 0)
  return { calls, rate: calls === 0 ? null : failed / calls }
}

/**
 * The simulated user's dialogues, requests and spend over a cell's trials (multi-turn tasks), or null
 * when none held a dialogue. Reported apart: never in cost per solved task.
 */
export function userSimulationTotal(
  trials: TrialObservation[],
): { dialogues: number; requests: number; spend_usd: number | null } | null {
  const withUser = trials.filter((o) => o.userSimulation)
  if (withUser.length === 0) return null
  let dialogues = 0
  let requests = 0
  let spend: number | null = 0
  for (const o of withUser) {
    const u = o.userSimulation
    if (!u) continue
    dialogues += u.dialogues
    requests += u.requests
    spend = spend === null || u.spend_usd === null ? null : spend + u.spend_usd
  }
  return { dialogues, requests, spend_usd: spend }
}

function userSimulationField(trials: TrialObservation[]): {
  user_simulation?: ReturnType<typeof userSimulationTotal>
} {
  const u = userSimulationTotal(trials)
  return u ? { user_simulation: u } : {}
}

export function exitDistribution(trials: TrialObservation[]): Record<string, number> {
  const out: Record<string, number> = {}
  for (const o of trials) {
    const k = o.exitClass ?? 'unknown'
    out[k] = (out[k] ?? 0) + 1
  }
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => a.localeCompare(b)))
}

/** The scorecard of each cell, in the order given. */
export function buildScorecard(
  cells: { id: string; trials: number }[],
  observations: TrialObservation[],
): Scorecard {
  const byCell = new Map<string, TrialObservation[]>(cells.map((c) => [c.id, []]))
  for (const o of observations) byCell.get(o.cell)?.push(o)
  const countsOf = new Map([...byCell].map(([id, trials]) => [id, taskCounts(trials)]))
  const taskOrder = tasksInOrder(countsOf.values())
  return cells.map((c) => {
    const trials = byCell.get(c.id)!
    const counts = countsOf.get(c.id)!
    const tools = toolCallErrorRate(trials)
    const maxK = Math.max(1, c.trials)
    return {
      cell: c.id,
      trials: trials.length,
      graded_trials: trials.filter(graded).length,
      resolved_trials: trials.filter((o) => o.outcome === 'resolved').length,
      pass_at_1: passAt1(trials, counts),
      pass_hat_k: Array.from({ length: maxK }, (_, i) => ({ k: i + 1, ...passHatK(trials, i + 1, counts) })),
      cost_per_solved_usd: costPerSolved(trials),
      tool_calls: tools.calls,
      tool_call_error_rate: tools.rate,
      exits: exitDistribution(trials),
      ...userSimulationField(trials),
      tasks: Object.fromEntries(taskOrder(counts)),
    }
  })
}

/**
 * The strings in localeCompare order, or null when two of them compare equal. Sorted by code unit
 * first, which is cheap: when that order is also strictly increasing by localeCompare (the usual case,
 * ids of one pattern), it is the one localeCompare order, checked with n − 1 comparisons instead of
 * the n·log n of a sort (collation is slow); otherwise sorted by localeCompare.
 */
function localeOrder(values: Iterable<string>): string[] | null {
  const byCodeUnit = [...values].sort()
  let i = 1
  while (i < byCodeUnit.length && byCodeUnit[i - 1]!.localeCompare(byCodeUnit[i]!) < 0) i++
  if (i >= byCodeUnit.length) return byCodeUnit
  const sorted = byCodeUnit.sort((a, b) => a.localeCompare(b))
  for (let j = 1; j < sorted.length; j++) if (sorted[j - 1]!.localeCompare(sorted[j]!) === 0) return null
  return sorted
}

/**
 * A cell's task counts in task order (localeCompare), the tasks of every cell sorted once: when no
 * two tasks compare equal the order is total, so each cell's tasks keep the places they have in the
 * whole list; otherwise each cell's tasks are sorted on their own, as stably as before.
 */
function tasksInOrder(
  cellCounts: Iterable<Map<string, { resolved: number; graded: number }>>,
): (
  counts: Map<string, { resolved: number; graded: number }>,
) => Array<[string, { resolved: number; graded: number }]> {
  const each = (counts: Map<string, { resolved: number; graded: number }>) =>
    [...counts.entries()].sort(([a], [b]) => a.localeCompare(b))
  const all = new Set<string>()
  for (const counts of cellCounts) for (const task of counts.keys()) all.add(task)
  const sorted = localeOrder(all)
  if (sorted === null) return each
  return (counts) => {
    const out: Array<[string, { resolved: number; graded: number }]> = []
    for (const task of sorted) {
      const t = counts.get(task)
      if (t) out.push([task, t])
    }
    return out
  }
}

/**
 * Compare two scorecards. A task regresses when its pass rate falls (e.g. 2/2 → 1/2) and is fixed when
 * it rises; tasks graded on one side only are left out.
 */
export function diffScorecards(oldCard: Scorecard, newCard: Scorecard): ScorecardDiff[] {
  const out: ScorecardDiff[] = []
  for (const n of newCard) {
    const o = oldCard.find((c) => c.cell === n.cell)
    if (!o) continue
    const regressions: string[] = []
    const fixes: string[] = []
    for (const [task, nt] of Object.entries(n.tasks)) {
      const ot = o.tasks[task]
      if (!ot || ot.graded === 0 || nt.graded === 0) continue
      const before = ot.resolved / ot.graded
      const after = nt.resolved / nt.graded
      if (after < before) regressions.push(task)
      else if (after > before) fixes.push(task)
    }
    out.push({
      cell: n.cell,
      pass_at_1: { old: o.pass_at_1, new: n.pass_at_1 },
      tool_call_error_rate: { old: o.tool_call_error_rate, new: n.tool_call_error_rate },
      cost_per_solved_usd: { old: o.cost_per_solved_usd, new: n.cost_per_solved_usd },
      regressions: regressions.sort(),
      fixes: fixes.sort(),
    })
  }
  return out
}
