import type { Comparison, ComparisonEntry } from '../compare/schema.js'
import { bootstrapMeanDifference, bootstrapRatioOfMeans } from '../compare/stats/bootstrap.js'
import { mcnemarPOneSided } from '../compare/stats/mcnemar.js'
import { fmtPoints } from '../report/format.js'
import { bootstrapSettings, type ComparisonRef, runRef, summarize, unstableSet } from './decide.js'
import {
  type BootstrapSettings,
  effectOfBootstrap,
  hasResolvedAdvantage,
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
import type { ComparisonVerdict, Decision, DecisionStatus, Effect, Health, Signal } from './schema.js'

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
 * Decide a confirmation round on the RERUN data (github.md "Confirm before filing": select on run 1,
 * test on run 2). For each signal the rerun had to confirm:
 *  - the rerun blocks must be complete (graded, complete telemetry) for at least min_coverage of
 *    them, else the signal is `inconclusive` (`rerun_incomplete`);
 *  - resolve-rate deficit: projected deficit (b′ − c′)/N ≥ threshold, where b′, c′ count the rerun
 *    blocks' discordant pairs and N is the first run's outcome denominator (blocks not rerun were
 *    concordant and add nothing; affected blocks not rerun — capped or unstable — count as ties);
 *  - ratios: the panel ratio with the rerun blocks' values in place of their first-run values is
 *    over the threshold (affected blocks not rerun are left out), the rerun blocks alone are over
 *    it too, and the projected resolve rate shows no resolved advantage;
 *  - a deficit whose rerun losses all fall on unstable instances (quarantined, mixed trials, or
 *    flipped between the runs) is never confirmed (F07).
 * Both runs are kept: the first-run effect stays in `effect`, the rerun in `rerun`. Pure.
 */
export function confirm(input: ConfirmInput): Decision {
  const o = input.original
  const rerun = input.rerun.comparison
  const round = rerun.round > 0 ? rerun.round : 1
  const settings = bootstrapSettings(input.originalComparison)
  const thresholds = o.thresholds
  const rerunSet = new Set(o.confirmation?.instances ?? o.affected_blocks)
  const flipped = flips(input.originalComparison, rerun)
  const unstable = new Set([...o.unstable_instances, ...unstableSet(rerun, []), ...flipped])
  const health: Health[] = [...o.health, ...rerunHealth(rerun, thresholds)]

  const signals = o.signals.map((s): Signal => {
    if (s.state !== 'unconfirmed') return s
    const original = originalPairs(input, s)
    const again = rerunPairs(input, s).filter((p) => rerunSet.has(p.instance))
    const affected = new Set([...s.instances.driving, ...s.instances.opposing])
    const planned = [...affected].filter((i) => rerunSet.has(i))
    const result = judge(
      s,
      original,
      again,
      planned,
      affected,
      unstable,
      settings,
      thresholds.min_coverage,
      round,
    )
    if (result.state === 'inconclusive') {
      health.push({
        code: 'rerun_incomplete',
        severity: 'error',
        key: s.key,
        cell: null,
        message: `rerun of ${s.id}: ${result.rerun.reason}`,
        count: result.rerun.planned_blocks - result.rerun.complete_blocks,
        instances: planned.slice(0, 50),
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

function rerunPairs(input: ConfirmInput, s: Signal): PairedBlock[] {
  const rerun = input.rerun.comparison
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

function judge(
  s: Signal,
  original: PairedBlock[],
  again: PairedBlock[],
  planned: string[],
  affected: Set<string>,
  unstable: Set<string>,
  settings: BootstrapSettings,
  minCoverage: number,
  round: number,
): { state: Signal['state']; rerun: NonNullable<Signal['rerun']> } {
  const byId = new Map(again.map((p) => [p.instance, p]))
  const plannedSet = new Set(planned)
  const complete = planned.filter((i) => {
    const p = byId.get(i)
    if (!p) return false
    if (s.metric === 'resolved') return p.outcome
    return p.cost && metricValue(p.base, s.metric) !== null && metricValue(p.treat, s.metric) !== null
  })
  const completeSet = new Set(complete)
  const rerunBlocks = again.filter((p) => completeSet.has(p.instance))
  let b = 0
  let c = 0
  const losses: string[] = []
  for (const p of rerunBlocks) {
    if (!p.outcome || !p.base || !p.treat) continue
    const d = resolvedValue(p.treat) - resolvedValue(p.base)
    if (d < 0) {
      b++
      losses.push(p.instance)
    } else if (d > 0) c++
  }
  const binary = rerunBlocks.every((p) => (p.base?.trials ?? 1) <= 1 && (p.treat?.trials ?? 1) <= 1)
  const p = binary && rerunBlocks.length > 0 ? mcnemarPOneSided(b, c, 'treatment_worse') : null
  const base = {
    round,
    planned_blocks: planned.length,
    complete_blocks: complete.length,
    b,
    c,
    p_one_sided: p,
  }
  const unit: Effect['unit'] = s.metric === 'resolved' ? 'pp' : 'ratio'
  if (planned.length === 0 || complete.length / planned.length < minCoverage) {
    return {
      state: 'inconclusive',
      rerun: {
        ...base,
        projected: none(unit, 'rerun incomplete'),
        rerun_only: none(unit, 'rerun incomplete'),
        holds: false,
        reason:
          planned.length === 0
            ? 'none of its blocks were rerun'
            : `${complete.length} of ${planned.length} rerun blocks complete, below min_coverage ${minCoverage}`,
      },
    }
  }

  const rerunOnly = pairsEffect(rerunBlocks, s.metric, settings)
  if (s.metric === 'resolved') {
    const projected = projectOutcome(original, byId, completeSet, plannedSet, affected, settings)
    const deficitHolds = projected.estimate !== null && -projected.estimate >= s.threshold - 1e-9 && b > c
    const flakyOnly = losses.length > 0 && losses.every((i) => unstable.has(i))
    const holds = deficitHolds && !flakyOnly
    const reason = holds
      ? `projected ${fmtPp(projected.estimate)} pp ≤ −${s.threshold} with b′ = ${b} > c′ = ${c} on ${complete.length} rerun blocks`
      : flakyOnly && deficitHolds
        ? `the rerun losses fall only on unstable instances (${losses.join(', ')}): not confirmed`
        : `projected ${fmtPp(projected.estimate)} pp (threshold −${s.threshold}), b′ = ${b}, c′ = ${c}: did not hold`
    return {
      state: holds ? 'confirmed' : 'cleared',
      rerun: { ...base, projected, rerun_only: rerunOnly, holds, reason },
    }
  }
  const metric = s.metric as RatioMetric
  const projected = projectRatio(original, byId, completeSet, affected, metric, settings)
  const advantage = projectOutcome(original, byId, completeSet, plannedSet, new Set(), settings)
  const over = (e: Effect) => e.estimate !== null && e.estimate > s.threshold + 1e-9
  const excused = hasResolvedAdvantage(advantage)
  const holds = over(projected) && over(rerunOnly) && !excused
  const reason = holds
    ? `projected ${fmt(projected.estimate)}× and rerun-only ${fmt(rerunOnly.estimate)}× > ${s.threshold}× without a resolved advantage`
    : excused
      ? `the projected resolve rate shows a resolved advantage (${fmtPp(advantage.estimate)} pp): not a regression`
      : `projected ${fmt(projected.estimate)}×, rerun-only ${fmt(rerunOnly.estimate)}× (threshold ${s.threshold}×): did not hold`
  return {
    state: holds ? 'confirmed' : 'cleared',
    rerun: { ...base, projected, rerun_only: rerunOnly, holds, reason },
  }
}

/**
 * Resolve-rate difference (pp) over the first run's outcome blocks with rerun values in place:
 * rerun-complete blocks take their rerun outcomes; affected blocks not rerun complete count as ties;
 * the rest keep their first-run outcomes (all concordant for a deficit signal).
 */
function projectOutcome(
  original: PairedBlock[],
  rerun: Map<string, PairedBlock>,
  complete: Set<string>,
  planned: Set<string>,
  affected: Set<string>,
  s: BootstrapSettings,
): Effect {
  const base: number[] = []
  const treat: number[] = []
  for (const p of original) {
    if (!p.outcome || !p.base || !p.treat) continue
    const r = rerun.get(p.instance)
    if (complete.has(p.instance) && r?.base && r.treat && r.outcome) {
      base.push(resolvedValue(r.base))
      treat.push(resolvedValue(r.treat))
    } else if (affected.has(p.instance) || planned.has(p.instance)) {
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
    'projected resolve-rate difference',
  )
}

/** Ratio of means over the first run's cost blocks with rerun values in place (affected blocks not rerun left out). */
function projectRatio(
  original: PairedBlock[],
  rerun: Map<string, PairedBlock>,
  complete: Set<string>,
  affected: Set<string>,
  metric: RatioMetric,
  s: BootstrapSettings,
): Effect {
  const cols = metricColumns(original, metric)
  const base: number[] = []
  const treat: number[] = []
  cols.instances.forEach((id, i) => {
    if (complete.has(id)) {
      const r = rerun.get(id)
      const b = metricValue(r?.base ?? null, metric)
      const t = metricValue(r?.treat ?? null, metric)
      if (b !== null && t !== null) {
        base.push(b)
        treat.push(t)
      }
    } else if (!affected.has(id)) {
      base.push(cols.base[i] as number)
      treat.push(cols.treat[i] as number)
    }
  })
  if (base.length === 0) return none('ratio', 'no cost-complete blocks')
  return effectOfBootstrap(bootstrapRatioOfMeans(base, treat, s), 1, 'ratio', 'projected ratio of means')
}

function fmt(x: number | null): string {
  return x === null ? 'n/a' : x.toFixed(x >= 10 || x <= -10 ? 1 : 2)
}

/** Percentage points as every report prints them (one decimal, half away from zero, U+2212). */
function fmtPp(x: number | null): string {
  return x === null ? 'n/a' : fmtPoints(x, { unit: false })
}
