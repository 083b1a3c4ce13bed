import type { Comparison } from '../records/comparison.js'
import { type ObfPlan, obfLook, planObf } from '../stats/index.js'
import { comparisonKey } from './keys.js'
import type { Decision, Evidence, GroupSequentialEvidence } from './schema.js'

/**
 * The weekly evidence of one experiment (same panel, same cells) that the treatment resolves fewer
 * instances than the baseline: a one-sided group-sequential McNemar test with O'Brien–Fleming
 * boundaries, one look per weekly run (stats/group-sequential.ts) — the design calibrate measures
 * against a fixed-size test and the weekly e-value rule, chosen there because it needs the fewest
 * expected blocks under H1 while staying within 10% of the fixed test under H0.
 *
 * A test ("cycle") starts with a run: its plan (K looks, the constant C) is fixed from that run's
 * outcome-complete blocks n and discordant share ψ = (b + c)/n — under H0 the discordant total says
 * nothing about the direction, so the plan does not spend α — for the declared deficit
 * (thresholds.resolved_deficit_pp) at POWER, at most MAX_LOOKS looks. Look k pools the cycle's first k
 * runs' discordant counts and rejects when Z_k = (b − c − 1)/√(b + c) ≥ C·√(K/k). The plan is
 * recomputed from the cycle's first run every time, never read from a record.
 *  - Crossed: the treatment resolves fewer, at α. Sticky: later runs (a cleared week, an improvement)
 *    are listed but never reset it, and the tracking issue stays open (github/issue.ts).
 *  - The K-th look passes without crossing: the cycle ends ("no deficit of δ points shown at α"), and
 *    the next run starts a new cycle with its own plan and its own α.
 * A record of the earlier e-value rule (no `design`) is not extended: its crossing, if any, is kept;
 * otherwise a new cycle starts with this run. Pure.
 */

/** Power the weekly test is planned for at the declared deficit. */
export const POWER = 0.9
/** Most weekly looks of one cycle (a year). */
export const MAX_LOOKS = 52

export interface RunCounts {
  run_id: string
  /** Baseline-only (b) and treatment-only (c) resolved blocks, and outcome-complete blocks, of that run. */
  b: number
  c: number
  blocks: number
}

/** The plan of a cycle from its first run. */
export function cyclePlan(first: RunCounts, alpha: number, deficitPp: number): ObfPlan {
  const n = Math.max(1, first.blocks)
  return planObf({
    blocksPerLook: n,
    discordance: (first.b + first.c) / n,
    deficitPp,
    alpha,
    power: POWER,
    maxLooks: MAX_LOOKS,
  })
}

/**
 * The looks of one cycle's runs, in order (`carried`: a crossing recorded before this cycle, kept).
 * Throws a RangeError when α is not in (0, 1) or a run id appears twice (a run counted twice would
 * inflate the evidence).
 */
export function sequentialEvidence(
  runs: readonly RunCounts[],
  alpha: number,
  deficitPp: number,
  cycle = 1,
  carried: { crossed_at: string; statement: string } | null = null,
): Omit<GroupSequentialEvidence, 'key'> {
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`sequentialEvidence: alpha must be in (0, 1), got ${alpha}`)
  if (runs.length === 0) throw new RangeError('sequentialEvidence: no run')
  const seen = new Set<string>()
  for (const r of runs) {
    if (seen.has(r.run_id)) throw new RangeError(`sequentialEvidence: run ${r.run_id} appears twice`)
    seen.add(r.run_id)
  }
  const plan = cyclePlan(runs[0] as RunCounts, alpha, deficitPp)
  let b = 0
  let c = 0
  let blocks = 0
  let crossedAt: string | null = null
  let crossedLook: number | null = null
  const out: GroupSequentialEvidence['runs'] = []
  let last = { z: 0, bound: plan.constant * Math.sqrt(plan.looks) }
  runs.forEach((r, i) => {
    b += r.b
    c += r.c
    blocks += r.blocks
    const look = i + 1
    const l = obfLook(b, c, look, plan)
    out.push({ run_id: r.run_id, b: r.b, c: r.c, blocks: r.blocks, look, z: l.z, bound: l.bound })
    last = l
    // Only the planned looks decide; once crossed, later runs are listed and never reset it.
    if (crossedAt === null && look <= plan.looks && l.crosses) {
      crossedAt = r.run_id
      crossedLook = look
    }
  })
  const fromCarried = crossedAt === null && carried !== null
  if (fromCarried) crossedAt = carried.crossed_at
  const sufficient = crossedAt !== null
  const ended = !sufficient && runs.length >= plan.looks
  const head = `weekly group-sequential McNemar test (O'Brien–Fleming, ${plan.looks} look${plan.looks === 1 ? '' : 's'} of ${plan.blocks_per_look} blocks planned for a ${plan.deficit_pp}-point deficit at ${Math.round(100 * plan.planned_power)}% power, one-sided α = ${alpha}${cycle > 1 ? `, test ${cycle}` : ''}): look ${Math.min(runs.length, plan.looks)} of ${plan.looks}, b = ${b}, c = ${c} over ${blocks} blocks, Z = ${last.z.toFixed(2)} against the bound ${last.bound.toFixed(2)}`
  const tail = fromCarried
    ? `crossed earlier (${carried.statement}); later runs never reset it`
    : sufficient
      ? `crossed at run ${crossedAt} (look ${crossedLook}): the treatment resolves fewer, at α; later runs never reset it`
      : ended
        ? `the last planned look passed without crossing: no ${plan.deficit_pp}-point deficit shown at α; the next run starts a new test`
        : 'not crossed yet'
  return {
    alpha,
    design: 'obrien-fleming',
    plan,
    cycle,
    runs: out,
    b,
    c,
    blocks,
    z: last.z,
    bound: last.bound,
    sufficient,
    crossed_at: crossedAt,
    ended,
    statement: `${head} — ${tail}`,
  }
}

function isGroupSequential(e: Evidence): e is GroupSequentialEvidence {
  return 'design' in e && e.design === 'obrien-fleming'
}

/**
 * The decision's evidence so far: for each competitive comparison of `current`, the previous
 * decision's cycle of that key (when given) extended by this run, counted once with the counts of
 * `current` (a recorded run of the same id is replaced, never counted twice). Pure.
 */
export function evidenceFor(
  current: Comparison,
  previous: Decision | null,
  alpha: number,
  deficitPp: number,
): Evidence[] {
  return current.comparisons.map((e) => {
    const key = comparisonKey(current.experiment_id, e.baseline, e.treatment)
    const recorded = previous?.evidence?.find((x) => x.key === key) ?? null
    const id = current.run_id ?? `run ${(recorded?.runs.length ?? 0) + 1}`
    // This run's counts always come from its own comparison: a record of the same run id (the run
    // passed as its own previous run, or a forged entry) is replaced, never trusted in its place.
    const own: RunCounts = { run_id: id, b: e.outcome.losses, c: e.outcome.wins, blocks: e.outcome.n }
    if (recorded && !isGroupSequential(recorded)) {
      // The earlier e-value rule: its crossing is kept; otherwise a new test starts.
      const carried =
        recorded.sufficient && recorded.crossed_at
          ? {
              crossed_at: recorded.crossed_at,
              statement: `the weekly e-value rule reached 1/α at run ${recorded.crossed_at}`,
            }
          : null
      return { key, ...sequentialEvidence([own], alpha, deficitPp, 1, carried) }
    }
    if (!recorded || (recorded.ended && !recorded.sufficient)) {
      const cycle = recorded ? recorded.cycle + 1 : 1
      return { key, ...sequentialEvidence([own], alpha, deficitPp, cycle) }
    }
    const before = recorded.runs
      .filter((r) => r.run_id !== id)
      .map(({ run_id, b, c, blocks }) => ({ run_id, b, c, blocks }))
    // A crossing on record is kept even if this run replaced the run that crossed (sticky).
    const carried =
      recorded.sufficient && recorded.crossed_at
        ? { crossed_at: recorded.crossed_at, statement: `at run ${recorded.crossed_at}` }
        : null
    const runs = [...before, own]
    return { key, ...sequentialEvidence(runs, alpha, deficitPp, recorded.cycle, carried) }
  })
}
