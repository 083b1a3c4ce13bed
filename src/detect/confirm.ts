import type { Comparison, ComparisonEntry, InstanceRow } from '../records/comparison.js'
import { bootstrapMeanDifference, bootstrapRatioOfMeans, mcnemarPOneSided } from '../stats/index.js'
import { concentration } from './concentration.js'
import {
  bootstrapSettings,
  type ComparisonRef,
  RERUN_FIGURE_LABEL,
  runRef,
  summarize,
  unstableSet,
} from './decide.js'
import type { ConfirmationDesign } from './designs/contract.js'
import { designNamed } from './designs/registry.js'
import {
  type BootstrapSettings,
  effectOfBootstrap,
  entryEffect,
  none,
  pairsEffect,
  type RatioMetric,
} from './effects.js'
import { evaluationHealth } from './health.js'
import { comparisonKey } from './keys.js'
import {
  competitivePairs,
  metricColumns,
  metricValue,
  type PairedBlock,
  resolvedValue,
  selfPairs,
} from './pairs.js'
import type {
  ComparisonVerdict,
  Decision,
  DecisionStatus,
  Effect,
  Health,
  RerunResult,
  Signal,
} from './schema.js'
import { shownRatio } from './shown-ratio.js'
import { trialHalvesProblem } from './trial-halves-check.js'

export interface ConfirmInput {
  /** The first run's decision (status breach) and the comparisons it rests on. */
  original: Decision
  originalComparison: Comparison
  /** The earlier run the self-regression signals compared with (when there are self signals). */
  previous?: Comparison
  /** The rerun's comparison.json (round ≥ 1), aggregated from the confirmation plan's legs only. */
  rerun: ComparisonRef
  /** The first run's comparison, with its path relative to the decision being written. */
  originalRef: ComparisonRef
}

/**
 * Decide a confirmation round on the RERUN data (statistics.md "Decisions"; github.md "Confirm before
 * filing": select on run 1, test on run 2). Every block of the confirmation plan is a rerun block;
 * its rerun values replace its first-run values. For each signal the rerun had to confirm, two
 * figures are kept, each with its block count (see RerunResultSchema):
 *  - rerun blocks only (n = k): the rerun blocks complete for the metric; for a competitive signal
 *    this is the rerun comparison.json's own figure for that comparison;
 *  - combined (n = N): the first run's complete blocks with the rerun blocks' values in place.
 * The rules:
 *  - fewer than min_coverage of the rerun blocks complete for the metric → `inconclusive`
 *    (`rerun_incomplete`);
 *  - ratios decide on the rerun blocks only: over the threshold, and the combined resolve-rate
 *    difference shows no resolved advantage;
 *  - a resolve-rate deficit decides on the combined figure (its threshold is in points of the whole
 *    panel; affected blocks without a complete rerun — capped or unstable — count as ties) with the
 *    direction holding on the rerun blocks (b′ > c′);
 *  - a deficit whose rerun losses all fall on unstable instances (quarantined, mixed trials, or
 *    flipped between the runs) is never confirmed (F07).
 * Both runs are kept: the first-run effect stays in `effect`, the rerun in `rerun`. Pure.
 */
export function confirm(input: ConfirmInput): Decision {
  const o = input.original
  const rerun = input.rerun.comparison
  const round = rerun.round > 0 ? rerun.round : 1
  const settings = bootstrapSettings(input.originalComparison)
  const rerunSettings = bootstrapSettings(rerun)
  const thresholds = o.thresholds
  const planned = o.confirmation?.instances ?? o.affected_blocks
  const plannedSet = new Set(planned)
  // The rerun comparison's own statistics are the rerun-only figures when it holds only rerun blocks.
  const ownFigures = rerun.instances.every((r) => plannedSet.has(r.instance))
  const design = designNamed(o.confirmation?.design?.name)
  // A design that splits trials decides on each block's decision trials and estimates on the rest,
  // when the selection held no blocks out (a one-trial rerun, or an earlier version, split blocks).
  const splitByTrials = design.splitTrials === true && (o.confirmation?.estimate ?? []).length === 0
  const rerunTrials = Math.max(
    0,
    ...rerun.instances.flatMap((r) => Object.values(r.cells).map((c) => c.trials)),
  )
  const wantHalves = splitByTrials && rerunTrials >= 2
  const halvesProblem = !wantHalves
    ? null
    : rerun.trial_halves
      ? trialHalvesProblem(rerun.trial_halves, rerun.instances, planned, o.confirmation?.seed ?? null)
      : `are absent although it ran ${rerunTrials} trials per block (aggregate it again with this version)`
  const halves = wantHalves && halvesProblem === null ? (rerun.trial_halves ?? null) : null
  // What the decision sees: with a trial split, instability and flips are read on the decision
  // trials only, so the held-out trials never sway it.
  const decisionRerun = halves ? { ...rerun, instances: halves.decision } : rerun
  const flipped = flips(input.originalComparison, decisionRerun)
  const unstable = new Set([...o.unstable_instances, ...unstableSet(decisionRerun, []), ...flipped])
  const health: Health[] = [...o.health, ...rerunHealth(rerun, thresholds)]
  const signals = o.signals.map((s): Signal => {
    if (s.state !== 'unconfirmed') return s
    const entry =
      s.kind === 'competitive' && ownFigures
        ? (rerun.comparisons.find((e) => e.baseline === s.baseline && e.treatment === s.treatment) ?? null)
        : null
    const result = judge({
      signal: s,
      original: originalPairs(input, s),
      again: rerunPairs(input, s).filter((p) => plannedSet.has(p.instance)),
      halvesProblem: halvesProblem ? `the rerun's trial halves ${halvesProblem}` : null,
      halves: halves
        ? {
            decision: rerunPairs(input, s, halves.decision).filter((p) => plannedSet.has(p.instance)),
            estimate: rerunPairs(input, s, halves.estimate).filter((p) => plannedSet.has(p.instance)),
            trials: halves.trials,
          }
        : null,
      entry,
      planned,
      affected: new Set([...s.instances.driving, ...s.instances.opposing]),
      unstable,
      settings,
      rerunSettings,
      minCoverage: thresholds.min_coverage,
      round,
      design,
      sample: o.confirmation?.sample ? new Set(o.confirmation.sample) : null,
      estimate: new Set(o.confirmation?.estimate ?? []),
      alpha: o.policy.confirmation.alpha,
    })
    if (result.state === 'inconclusive') {
      health.push({
        code: 'rerun_incomplete',
        severity: 'error',
        key: s.key,
        cell: null,
        message: `rerun of ${s.id}: ${result.rerun.reason}`,
        count: result.rerun.planned_blocks - result.rerun.complete_blocks,
        instances: planned.filter((i) => !result.rerun.instances.includes(i)).slice(0, 50),
      })
    }
    return { ...s, state: result.state, rerun: result.rerun }
  })

  const comparisons = o.comparisons.map((v): ComparisonVerdict => {
    if (v.status !== 'breach') return v
    const mine = signals.filter((s) => s.key === v.key && s.rerun)
    if (mine.some((s) => s.state === 'confirmed')) {
      return { ...v, status: 'confirmed', reason: `confirmed on the rerun: ${names(mine, 'confirmed')}` }
    }
    if (mine.some((s) => s.state === 'inconclusive')) {
      return { ...v, status: 'inconclusive', reason: 'the rerun was incomplete' }
    }
    return { ...v, status: 'cleared', reason: `did not hold on the rerun: ${names(mine, 'cleared')}` }
  })

  const decision: Decision = {
    ...o,
    round,
    run_id: rerun.run_id,
    status: overall(comparisons),
    comparisons,
    signals,
    health,
    unstable_instances: [...unstable].sort(),
    runs: [runRef(input.originalRef), runRef(input.rerun)],
  }
  decision.summary = summarize(decision)
  return decision
}

function names(signals: Signal[], state: Signal['state']): string {
  return signals
    .filter((s) => s.state === state)
    .map((s) => s.metric)
    .join(', ')
}

/** confirmed > inconclusive > cleared > breach > ok. */
function overall(verdicts: ComparisonVerdict[]): DecisionStatus {
  for (const s of ['confirmed', 'inconclusive', 'cleared', 'breach'] as const) {
    if (verdicts.some((v) => v.status === s)) return s
  }
  return 'ok'
}

function originalPairs(input: ConfirmInput, s: Signal): PairedBlock[] {
  if (s.kind === 'self')
    return input.previous ? selfPairs(input.previous, input.originalComparison, s.treatment) : []
  return competitivePairs(input.originalComparison, s.baseline, s.treatment)
}

/** The signal's pairs in the rerun; `rows`: one trial half's rows in place of the whole rerun's. */
function rerunPairs(input: ConfirmInput, s: Signal, rows?: InstanceRow[]): PairedBlock[] {
  const rerun = rows ? { ...input.rerun.comparison, instances: rows } : input.rerun.comparison
  if (s.kind === 'self') return input.previous ? selfPairs(input.previous, rerun, s.treatment) : []
  return competitivePairs(rerun, s.baseline, s.treatment)
}

/** Instances where some cell's graded outcome differs between the first run and the rerun. */
export function flips(first: Comparison, rerun: Comparison): string[] {
  const before = new Map(first.instances.map((r) => [r.instance, r]))
  const out: string[] = []
  for (const row of rerun.instances) {
    const prev = before.get(row.instance)
    if (!prev) continue
    for (const [cell, x] of Object.entries(row.cells)) {
      const y = prev.cells[cell]
      if (!y || !graded(x.outcome) || !graded(y.outcome)) continue
      if (resolvedValue(x) !== resolvedValue(y)) {
        out.push(row.instance)
        break
      }
    }
  }
  return out
}

function graded(o: string): boolean {
  return o === 'resolved' || o === 'unresolved'
}

/** Health of the rerun itself; its coverage is judged per signal (rerun_incomplete) instead. */
function rerunHealth(rerun: Comparison, thresholds: Decision['thresholds']): Health[] {
  const keyOf = (e: ComparisonEntry) => comparisonKey(rerun.experiment_id, e.baseline, e.treatment)
  return evaluationHealth(rerun, thresholds, keyOf)
    .filter((h) => h.code !== 'coverage_low' && !(h.code === 'telemetry_missing' && h.key !== null))
    .map((h) => ({ ...h, message: `rerun: ${h.message}` }))
}

interface JudgeInput {
  signal: Signal
  /** The signal's pairs in the first run (whole panel). */
  original: PairedBlock[]
  /** The signal's pairs in the rerun, rerun blocks only. */
  again: PairedBlock[]
  /** Why the rerun's trial halves cannot be used (the signal is then inconclusive); null: usable or not needed. */
  halvesProblem: string | null
  /**
   * The same pairs over each block's decision trials and over its estimation trials (designs that
   * split trials, when the rerun has two or more); null: no split.
   */
  halves: {
    decision: PairedBlock[]
    estimate: PairedBlock[]
    trials: { decision: number; estimate: number }
  } | null
  /** The rerun comparison.json's entry for a competitive signal (its own rerun-only figures). */
  entry: ComparisonEntry | null
  /** The blocks of the confirmation plan. */
  planned: string[]
  /** The signal's driving and opposing blocks in the first run. */
  affected: Set<string>
  unstable: Set<string>
  settings: BootstrapSettings
  rerunSettings: BootstrapSettings
  minCoverage: number
  round: number
  design: ConfirmationDesign
  /** The selection's random sample (ratio signals are tested on it); null: every planned block. */
  sample: ReadonlySet<string> | null
  /** The estimation half of the sample (held out of the decision; the figure shown is estimated on it). */
  estimate: ReadonlySet<string>
  alpha: number
}

function judge(input: JudgeInput): { state: Signal['state']; rerun: RerunResult } {
  const { signal: s, original, again, planned } = input
  const byId = new Map(again.map((p) => [p.instance, p]))
  const outcomeComplete = (p: PairedBlock | undefined): p is PairedBlock =>
    !!p?.outcome && !!p.base && !!p.treat
  const completeFor = (p: PairedBlock | undefined): p is PairedBlock => {
    if (!outcomeComplete(p)) return false
    if (s.metric === 'resolved') return true
    return p.cost && metricValue(p.base, s.metric) !== null && metricValue(p.treat, s.metric) !== null
  }
  // With a trial split, which blocks decide (and whether enough do) is judged on the decision trials.
  const decisionById = input.halves ? new Map(input.halves.decision.map((p) => [p.instance, p])) : null
  const complete = planned.filter((i) => completeFor((decisionById ?? byId).get(i)))
  const completeSet = new Set(complete)
  const rerunBlocks = again.filter((p) => completeSet.has(p.instance))
  let b = 0
  let c = 0
  const losses: string[] = []
  for (const p of rerunBlocks) {
    if (!p.base || !p.treat) continue
    const d = resolvedValue(p.treat) - resolvedValue(p.base)
    if (d < 0) {
      b++
      losses.push(p.instance)
    } else if (d > 0) c++
  }
  const binary = rerunBlocks.every((p) => (p.base?.trials ?? 1) <= 1 && (p.treat?.trials ?? 1) <= 1)
  const p = binary && rerunBlocks.length > 0 ? mcnemarPOneSided(b, c, 'treatment_worse') : null
  const unit: Effect['unit'] = s.metric === 'resolved' ? 'pp' : 'ratio'
  // Every design decides on the rerun data: the rerun-only figure is the one shown as deciding.
  const decidedOn: RerunResult['decided_on'] = 'rerun_only'
  const base = {
    round: input.round,
    planned_blocks: planned.length,
    complete_blocks: complete.length,
    instances: complete,
    decided_on: decidedOn,
    b,
    c,
    p_one_sided: p,
  }
  if (planned.length === 0 || input.halvesProblem || complete.length / planned.length < input.minCoverage) {
    return {
      state: 'inconclusive',
      rerun: {
        ...base,
        rerun_only: none(unit, 'rerun incomplete'),
        combined: none(unit, 'rerun incomplete'),
        resolved_advantage: null,
        holds: false,
        reason:
          planned.length === 0
            ? 'none of its blocks were rerun'
            : (input.halvesProblem ??
              `${complete.length} of ${planned.length} rerun blocks ${input.halves ? 'complete in their decision trials' : 'complete'}, below min_coverage ${input.minCoverage}`),
      },
    }
  }

  const own = input.entry ? entryEffect(input.entry, s.metric) : null
  const rerunOnly: Effect =
    own && own.n === rerunBlocks.length
      ? { ...own, method: `${own.method}; the rerun comparison.json's own figure` }
      : pairsEffect(rerunBlocks, s.metric, input.rerunSettings)
  // The design decides on the rerun data alone; the figures below are shown, never tested.
  const outcomeBlocks = planned.map((i) => byId.get(i)).filter(outcomeComplete)
  // A trial split decides on the decision trials of the blocks complete in them.
  const halves = input.halves
  const decisionRows = halves ? halves.decision.filter((p) => completeSet.has(p.instance)) : null
  const verdict = input.design.decide({
    signal: s,
    rerun: decisionRows ?? rerunBlocks,
    outcome: decisionById ? planned.map((i) => decisionById.get(i)).filter(outcomeComplete) : outcomeBlocks,
    sample: input.sample ?? new Set(planned),
    unstable: input.unstable,
    alpha: input.alpha,
    first: original,
    decide: new Set(planned),
    estimate: input.estimate,
    splitTrials: halves !== null,
  })
  const estimate = shownEstimate(input, rerunBlocks, completeSet, completeFor, unit)
  const state: Signal['state'] = verdict.holds ? 'confirmed' : 'cleared'
  if (s.metric === 'resolved') {
    const combined = combinedOutcome(original, byId, completeSet, input.affected, input.settings)
    return {
      state,
      rerun: {
        ...base,
        rerun_only: rerunOnly,
        combined,
        resolved_advantage: null,
        holds: verdict.holds,
        reason: verdict.reason,
        test: verdict.test,
        ...(estimate ? { estimate } : {}),
      },
    }
  }
  const metric = s.metric as RatioMetric
  const concentrated = concentration(metricColumns(original, metric), s.threshold)
  const combined = combinedRatio(original, byId, completeSet, new Set(planned), metric, input.settings)
  const outcomeSet = new Set(outcomeBlocks.map((p) => p.instance))
  const advantage = combinedOutcome(original, byId, outcomeSet, new Set(), input.settings)
  return {
    state,
    rerun: {
      ...base,
      rerun_only: rerunOnly,
      combined,
      resolved_advantage: advantage,
      holds: verdict.holds,
      reason: verdict.reason,
      test: verdict.test,
      ...(estimate ? { estimate } : {}),
      concentration: concentrated,
    },
  }
}

/**
 * The figure shown after the decision, on rerun data the decision never used: the estimation trials
 * of the sample's blocks (a trial split), or the estimation half of the blocks (a block split).
 * Undefined for designs that hold nothing out.
 */
function shownEstimate(
  input: JudgeInput,
  rerunBlocks: PairedBlock[],
  completeSet: ReadonlySet<string>,
  completeFor: (p: PairedBlock | undefined) => p is PairedBlock,
  unit: Effect['unit'],
): Effect | undefined {
  const s = input.signal
  if (input.design.splitTrials && !input.halves && input.estimate.size === 0)
    return none(
      unit,
      'the rerun holds no trial halves (one trial per block): nothing was held out of the decision',
    )
  if (input.halves) {
    const sample = input.sample
    const held = input.halves.estimate.filter(
      (p) => completeSet.has(p.instance) && (!sample || sample.has(p.instance)) && completeFor(p),
    )
    const t = input.halves.trials
    if (held.length === 0) return none(unit, 'no sampled block is complete in the rerun')
    const label = `estimation trials of the rerun (${t.estimate} of each block's ${t.decision + t.estimate} trials, n = ${held.length} sampled blocks), not used by the decision`
    const e = pairsEffect(held, s.metric, input.rerunSettings)
    if (s.metric === 'resolved' || e.estimate === null) return labelled(e, label)
    const c = shownRatio(input.original, held, s.metric)
    // One clause: the report shows the method's last "; " part.
    if (!c || c.sigma === null)
      return labelled(e, `${label}, not corrected for a ratio's own bias (run-to-run noise not measured)`)
    return labelled(
      {
        ...e,
        estimate: e.estimate * c.factor,
        ci: e.ci ? [e.ci[0] * c.factor, e.ci[1] * c.factor] : null,
      },
      `${label}, divided by ${(1 / c.factor).toFixed(3)} for a ratio's own bias under the baseline's run-to-run noise (σ ${c.sigma.toFixed(2)} per attempt, log scale)`,
    )
  }
  if (input.estimate.size === 0) return undefined
  const held = rerunBlocks.filter((p) => input.estimate.has(p.instance))
  return held.length === 0
    ? none(unit, 'no block of the estimation half is complete in the rerun')
    : labelled(
        pairsEffect(held, s.metric, input.rerunSettings),
        `estimation half of the rerun (n = ${held.length}), not used by the decision`,
      )
}

function labelled(e: Effect, label: string): Effect {
  return { ...e, method: `${e.method}; ${label}` }
}

/**
 * Combined resolve-rate difference (pp) over the first run's outcome-complete blocks: blocks in
 * `replaced` take their rerun outcomes; `ties` blocks without a complete rerun count as ties (a
 * first-run discordance the rerun did not test is not evidence); the rest keep their first-run outcomes.
 */
function combinedOutcome(
  original: PairedBlock[],
  rerun: Map<string, PairedBlock>,
  replaced: Set<string>,
  ties: Set<string>,
  s: BootstrapSettings,
): Effect {
  const base: number[] = []
  const treat: number[] = []
  for (const p of original) {
    if (!p.outcome || !p.base || !p.treat) continue
    const r = rerun.get(p.instance)
    if (replaced.has(p.instance) && r?.base && r.treat && r.outcome) {
      base.push(resolvedValue(r.base))
      treat.push(resolvedValue(r.treat))
    } else if (ties.has(p.instance)) {
      base.push(0)
      treat.push(0)
    } else {
      base.push(resolvedValue(p.base))
      treat.push(resolvedValue(p.treat))
    }
  }
  if (base.length === 0) return none('pp', 'no outcome-complete blocks')
  return effectOfBootstrap(
    bootstrapMeanDifference(base, treat, s),
    100,
    'pp',
    `resolve-rate difference, ${RERUN_FIGURE_LABEL.combined}`,
  )
}

/**
 * Combined ratio of means over the first run's cost-complete blocks: blocks in `replaced` take their
 * rerun values; rerun blocks (`rerunBlocks`) not complete for the metric in the rerun are left out;
 * the rest keep their first-run values.
 */
function combinedRatio(
  original: PairedBlock[],
  rerun: Map<string, PairedBlock>,
  replaced: Set<string>,
  rerunBlocks: Set<string>,
  metric: RatioMetric,
  s: BootstrapSettings,
): Effect {
  const cols = metricColumns(original, metric)
  const base: number[] = []
  const treat: number[] = []
  cols.instances.forEach((id, i) => {
    if (replaced.has(id)) {
      const r = rerun.get(id)
      const b = metricValue(r?.base ?? null, metric)
      const t = metricValue(r?.treat ?? null, metric)
      if (b !== null && t !== null) {
        base.push(b)
        treat.push(t)
      }
    } else if (!rerunBlocks.has(id)) {
      base.push(cols.base[i] as number)
      treat.push(cols.treat[i] as number)
    }
  })
  if (base.length === 0) return none('ratio', 'no cost-complete blocks')
  return effectOfBootstrap(
    bootstrapRatioOfMeans(base, treat, s),
    1,
    'ratio',
    `ratio of means, ${RERUN_FIGURE_LABEL.combined}`,
  )
}
