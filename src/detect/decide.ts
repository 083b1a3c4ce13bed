import type { Manifest } from '../manifest/schema.js'
import type { Comparison, ComparisonEntry } from '../records/comparison.js'
import { fmtPoints, fmtPointsBound } from '../util/format.js'
import { freshInputNotComparable } from './comparable.js'
import { type BootstrapSettings, entryEffect, none, type Thresholds } from './effects.js'
import { coverageShare, evaluationHealth } from './health.js'
import { comparisonKey, selfKey } from './keys.js'
import { competitivePairs, selfPairs } from './pairs.js'
import {
  type ComparisonVerdict,
  DECISION_SCHEMA_VERSION,
  type Decision,
  type DecisionStatus,
  type Health,
  type RerunResult,
  type Signal,
} from './schema.js'
import { crossings, effectsFromPairs } from './signals.js'

/** Where a comparison.json came from, as decision.json records it. */
export interface ComparisonRef {
  comparison: Comparison
  /** Path relative to the decision.json being written. */
  path: string
  sha256: string
}

export interface DetectInput {
  current: ComparisonRef
  /** The same experiment's earlier run, for the self-regression check (a cell vs its own past). */
  previous?: ComparisonRef
  policy: Pick<Manifest, 'thresholds' | 'confirmation' | 'reporting'>
  /** Quarantined (known-flaky) instance ids from the plan. */
  quarantine: readonly string[]
}

/**
 * Decide on a first run: evaluation health, then threshold crossings on complete blocks for every
 * competitive comparison (from comparison.json's own statistics) and, given a previous run, every
 * cell against itself (recomputed from the per-instance rows). The result is at most `breach`: a
 * single run gives unconfirmed signals only (F08). Comparisons whose evaluation failed are
 * `inconclusive` and raise no signal (F06). Pure and deterministic.
 */
export function detect(input: DetectInput): Decision {
  const c = input.current.comparison
  const thresholds = input.policy.thresholds
  const keyOf = (e: ComparisonEntry) => comparisonKey(c.experiment_id, e.baseline, e.treatment)
  const health = evaluationHealth(c, thresholds, keyOf)
  const unstable = unstableSet(c, input.quarantine)
  const verdicts: ComparisonVerdict[] = []
  const signals: Signal[] = []
  const improvements: Signal[] = []
  const runLevelFailure = health.some((x) => x.code === 'no_legs_executed')

  for (const e of c.comparisons) {
    const key = keyOf(e)
    const pairs = competitivePairs(c, e.baseline, e.treatment)
    const blocked = blockedReason(health, key, [e.baseline, e.treatment], runLevelFailure)
    const coverage = {
      planned: e.denominators.coverage,
      outcome: e.denominators.outcome,
      cost: e.denominators.cost,
      share: coverageShare(e),
    }
    const base = { key, kind: 'competitive' as const, baseline: e.baseline, treatment: e.treatment, coverage }
    if (blocked) {
      verdicts.push({ ...base, status: 'inconclusive', reason: blocked })
      continue
    }
    const costDecided = !health.some((x) => x.key === key && x.code === 'telemetry_missing')
    const found = crossings(
      pairs,
      {
        effect: (m) => {
          const why = m === 'input_fresh_tokens' ? freshInputNotComparable(c, e.baseline, e.treatment) : null
          return why ? none('ratio', why) : entryEffect(e, m)
        },
        pRegression: e.outcome.mcnemar.p_one_sided,
      },
      {
        key,
        kind: 'competitive',
        baseline: e.baseline,
        treatment: e.treatment,
        thresholds,
        unstable,
        costDecided,
        alpha: input.policy.confirmation.alpha,
      },
    )
    signals.push(...found.signals)
    improvements.push(...found.improvements)
    verdicts.push({ ...base, ...verdictOf(found.signals, costDecided) })
  }

  const notes: string[] = []
  if (input.previous) {
    const prev = input.previous.comparison
    const why = notComparable(prev, c)
    if (why) {
      health.push({
        code: 'previous_not_comparable',
        severity: 'warning',
        key: null,
        cell: null,
        message: `the previous run cannot be compared with this one: ${why}; no self-regression check`,
        count: 0,
        instances: [],
      })
    } else {
      const settings = bootstrapSettings(c)
      for (const cell of c.cells) {
        const before = prev.cells.find((x) => x.id === cell.id)
        if (!before) continue
        if (before.version_declared !== cell.version_declared || before.config_hash !== cell.config_hash) {
          notes.push(
            `cell ${cell.id} changed since the previous run: version ${before.version_declared ?? '?'} → ${cell.version_declared ?? '?'}` +
              (before.config_hash !== cell.config_hash ? ', config changed' : ''),
          )
        }
        const key = selfKey(c.experiment_id, cell.id)
        const pairs = selfPairs(prev, c, cell.id)
        const outcomeN = pairs.filter((p) => p.outcome).length
        const costN = pairs.filter((p) => p.cost).length
        const planned = c.blocks.planned
        const share = planned > 0 ? outcomeN / planned : null
        const coverage = { planned, outcome: outcomeN, cost: costN, share }
        const base = { key, kind: 'self' as const, baseline: cell.id, treatment: cell.id, coverage }
        let blocked = blockedReason(health, key, [cell.id], runLevelFailure)
        if (!blocked && (share === null || share < thresholds.min_coverage)) {
          blocked = `${outcomeN} of ${planned} blocks comparable with the previous run, below min_coverage ${thresholds.min_coverage}`
          health.push({
            code: 'coverage_low',
            severity: 'error',
            key,
            cell: cell.id,
            message: `${blocked}: inconclusive`,
            count: planned - outcomeN,
            instances: [],
          })
        }
        if (blocked) {
          verdicts.push({ ...base, status: 'inconclusive', reason: blocked })
          continue
        }
        const costDecided = planned > 0 && costN / planned >= thresholds.min_coverage
        const found = crossings(pairs, effectsFromPairs(pairs, settings), {
          key,
          kind: 'self',
          baseline: cell.id,
          treatment: cell.id,
          thresholds,
          unstable,
          costDecided,
          alpha: input.policy.confirmation.alpha,
        })
        signals.push(...found.signals)
        improvements.push(...found.improvements)
        verdicts.push({ ...base, ...verdictOf(found.signals, costDecided) })
      }
    }
  }

  const status = overallStatus(verdicts, runLevelFailure)
  const decision: Decision = {
    schema_version: DECISION_SCHEMA_VERSION,
    experiment_id: c.experiment_id,
    run_id: c.run_id,
    round: c.round,
    status,
    summary: '',
    comparisons: verdicts,
    signals,
    improvements,
    health,
    affected_blocks: [],
    unstable_instances: [...unstable].sort(),
    thresholds,
    policy: { confirmation: input.policy.confirmation, reporting: input.policy.reporting },
    runs: [runRef(input.current)],
    previous: input.previous ? runRef(input.previous) : null,
    confirmation: null,
    notes,
  }
  decision.summary = summarize(decision)
  return decision
}

/** Quarantined ids, the comparison's own quarantine list, and instances with mixed trial results. */
export function unstableSet(c: Comparison, quarantine: readonly string[]): Set<string> {
  const out = new Set<string>([...quarantine, ...c.blocks.quarantined])
  for (const row of c.instances) {
    if (row.status === 'quarantined') out.add(row.instance)
    // Mixed trials on any cell (0 < resolved < k) show the instance does not give a stable verdict.
    for (const x of Object.values(row.cells)) {
      if (x.trials > 1 && x.resolved_trials > 0 && x.resolved_trials < x.trials) out.add(row.instance)
    }
  }
  return out
}

function blockedReason(health: Health[], key: string, cells: string[], runLevel: boolean): string | null {
  if (runLevel) return 'no attempt was recorded'
  const low = health.find((x) => x.key === key && x.code === 'coverage_low')
  if (low) return low.message
  const dead = health.find(
    (x) =>
      (x.code === 'harness_startup_failure' || x.code === 'not_evaluated') &&
      x.cell &&
      cells.includes(x.cell),
  )
  if (dead) return dead.message
  return null
}

function verdictOf(
  signals: Signal[],
  costDecided: boolean,
): { status: DecisionStatus; reason: string | null } {
  const live = signals.filter((s) => s.state === 'unconfirmed')
  if (live.length > 0) {
    return { status: 'breach', reason: `unconfirmed: ${live.map((s) => s.metric).join(', ')}` }
  }
  const flaky = signals.filter((s) => s.state === 'not_confirmable')
  const small = signals.filter((s) => s.state === 'small_sample')
  if (!costDecided) {
    // The outcome was decided on valid pairs; only the resources lack coverage: a result with gaps.
    return {
      status: 'completed_with_gaps',
      reason:
        'outcome decided; cost, fresh-input and request ratios not decided: telemetry coverage below min_coverage',
    }
  }
  if (small.length > 0 && flaky.length === 0) {
    const what = small.map((s) => `${s.metric} on n = ${s.effect.n}`).join(', ')
    return {
      status: 'ok',
      reason: `threshold crossed only on a small sample (${what}, below thresholds.min_blocks): shown with its interval, not a breach alone`,
    }
  }
  if (flaky.length > 0) {
    return {
      status: 'ok',
      reason: `threshold crossed only on quarantined/unstable instances (${flaky.map((s) => s.metric).join(', ')}): never confirmed`,
    }
  }
  return { status: 'ok', reason: null }
}

/** breach > inconclusive > ok; nothing decided (or nothing run) is inconclusive, never a green ok. */
function overallStatus(verdicts: ComparisonVerdict[], runLevelFailure: boolean): DecisionStatus {
  if (verdicts.some((v) => v.status === 'breach')) return 'breach'
  if (runLevelFailure || verdicts.length === 0) return 'inconclusive'
  if (verdicts.some((v) => v.status === 'inconclusive')) return 'inconclusive'
  if (verdicts.some((v) => v.status === 'completed_with_gaps')) return 'completed_with_gaps'
  return 'ok'
}

function notComparable(prev: Comparison, cur: Comparison): string | null {
  if (prev.experiment_id !== cur.experiment_id) {
    return `experiment ${prev.experiment_id} ≠ ${cur.experiment_id}`
  }
  const a = prev.stamp
  const b = cur.stamp
  if (a.panel.family !== b.panel.family || a.panel.revision !== b.panel.revision) {
    return `panel ${a.panel.family}@${a.panel.revision} ≠ ${b.panel.family}@${b.panel.revision}`
  }
  if (a.model.declared !== b.model.declared) return `model ${a.model.declared} ≠ ${b.model.declared}`
  return null
}

/** Bootstrap settings for recomputed effects: the comparison's own resamples, seed and level. */
export function bootstrapSettings(c: Comparison): BootstrapSettings {
  return {
    B: c.stamp.bootstrap_resamples > 0 ? c.stamp.bootstrap_resamples : 10_000,
    seed: c.stamp.seed >>> 0,
    level: c.stamp.confidence_level > 0 && c.stamp.confidence_level < 1 ? c.stamp.confidence_level : 0.95,
  }
}

export function runRef(r: ComparisonRef): Decision['runs'][number] {
  return {
    round: r.comparison.round,
    run_id: r.comparison.run_id,
    comparison: r.path,
    comparison_sha256: r.sha256,
  }
}

/**
 * One line: the status and the headline effect of each signal (for logs, titles and outputs), each
 * figure with its block count. After a confirmation round a signal quotes the figure that decided
 * (see RerunResultSchema) with the first run's beside it, e.g.
 * "confirmed regression: b vs a 2.27× [2.00, 2.65] spend_usd on rerun blocks only (n = 6), first run 2.26× [1.97, 2.59] (n = 16)".
 */
export function summarize(d: Decision): string {
  const head: Record<DecisionStatus, string> = {
    ok: 'ok: no threshold crossed',
    completed_with_gaps: 'completed with gaps: outcome decided, some figures lack coverage',
    breach: 'breach (unconfirmed)',
    confirmed: 'confirmed regression',
    cleared: 'cleared: the breach did not hold on the rerun',
    inconclusive: 'inconclusive: evaluation health failed',
  }
  const live = d.signals.filter((s) =>
    d.status === 'confirmed' ? s.state === 'confirmed' : s.state === 'unconfirmed' || s.state === 'cleared',
  )
  const parts = live.slice(0, 3).map((s) => {
    const who = `${s.treatment} vs ${s.baseline}${s.kind === 'self' ? ' (previous run)' : ''}`
    const first = `${formatEffect(s.effect)} (n = ${s.effect.n})`
    if (!s.rerun) return `${who} ${formatEffect(s.effect)} ${s.metric} (n = ${s.effect.n})`
    if (s.rerun.test) {
      return `${who} ${formatEffect(s.effect)} ${s.metric} on the first run (n = ${s.effect.n}); ${formatRerunTest(s.rerun)}`
    }
    const decided = s.rerun[s.rerun.decided_on]
    return (
      `${who} ${formatEffect(decided)} ${s.metric} on ${RERUN_FIGURE_LABEL[s.rerun.decided_on]} (n = ${decided.n}), ` +
      `first run ${first}`
    )
  })
  const more = live.length > 3 ? `, +${live.length - 3} more` : ''
  const errors = d.health.filter((x) => x.severity === 'error').length
  const tail = errors > 0 ? ` [${errors} evaluation health error(s)]` : ''
  const small = d.signals.filter((s) => s.state === 'small_sample')
  const smallText =
    small.length > 0
      ? ` (${small.length} crossing(s) on a small sample, shown, not a breach alone: ${small
          .slice(0, 3)
          .map(
            (s) =>
              `${s.treatment} vs ${s.baseline} ${formatEffect(s.effect)} ${s.metric} (n = ${s.effect.n})`,
          )
          .join('; ')})`
      : ''
  return `${head[d.status]}${parts.length > 0 ? `: ${parts.join('; ')}${more}` : ''}${smallText}${tail}`
}

/**
 * The rerun's deciding test in one phrase, with the rerun-only figure beside it:
 * "rerun exact one-sided McNemar p = 0.0312 ≤ α 0.05 (b′ = 5, c′ = 0; rerun blocks only (n = 7): −71.4 pp [..])".
 */
export function formatRerunTest(r: RerunResult): string {
  const t = r.test
  if (!t) return formatRerun(r)
  const p = t.p_one_sided < 0.0001 ? t.p_one_sided.toExponential(2) : t.p_one_sided.toPrecision(3)
  if (t.stages) {
    const fp = (x: number) => (x < 0.0001 ? x.toExponential(2) : x.toPrecision(3))
    const stages = t.stages.map((s) => `${s.stage} n = ${s.n}, p = ${fp(s.p)}`).join('; ')
    const shown = !r.estimate
      ? ''
      : r.estimate.estimate === null
        ? `; no figure apart from the decision (${r.estimate.reason ?? 'undefined'})`
        : `; figure shown, ${r.estimate.method.replace(/^.*; /, '')}: ${formatEffect(r.estimate)}`
    return `two-stage test of the ${t.estimand ?? 'effect'}: combined p = ${p} ${t.rejects ? '≤' : '>'} α ${t.alpha} (${stages})${shown}`
  }
  const counts = t.method.includes('McNemar') ? `b′ = ${r.b}, c′ = ${r.c}; ` : `${t.n} non-tied blocks; `
  return (
    `rerun ${t.method.replace(/ \(.*$/, '')} p = ${p} ${t.rejects ? '≤' : '>'} α ${t.alpha} ` +
    `(${counts}${formatRerunFigure(r, 'rerun_only')})`
  )
}

/** The names of the two rerun figures (RerunResultSchema), as every output labels them. */
export const RERUN_FIGURE_LABEL: Record<RerunResult['decided_on'], string> = {
  rerun_only: 'rerun blocks only',
  combined: 'combined: rerun blocks replaced in the full panel',
}

/** One rerun figure with its label and block count: "rerun blocks only (n = 6): 2.27× [2.00, 2.65]". */
export function formatRerunFigure(r: RerunResult, which: RerunResult['decided_on']): string {
  return `${RERUN_FIGURE_LABEL[which]} (n = ${r[which].n}): ${formatEffect(r[which])}`
}

/**
 * Both rerun figures, the deciding one first:
 * "decided on rerun blocks only (n = 6): 2.27× [2.00, 2.65]; also combined: rerun blocks replaced in the full panel (n = 16): 2.25× [1.99, 2.55]".
 */
export function formatRerun(r: RerunResult): string {
  const other = r.decided_on === 'rerun_only' ? 'combined' : 'rerun_only'
  return `decided on ${formatRerunFigure(r, r.decided_on)}; also ${formatRerunFigure(r, other)}`
}

/**
 * The interval method of an effect in a few words, so no figure is shown without it:
 * "Newcombe", "bootstrap-t" (studentized), "bootstrap BCa", "bootstrap percentile", or the method as
 * recorded.
 */
export function intervalLabel(e: Signal['effect']): string {
  if (!e.ci) return 'no interval'
  const m = e.method
  if (/newcombe/i.test(m)) return 'Newcombe'
  if (/studentized/i.test(m)) return 'bootstrap-t'
  if (/\bbca\b/i.test(m)) return 'bootstrap BCa'
  if (/percentile/i.test(m)) return 'bootstrap percentile'
  return m
}

/** "−12.0 pp [−20.1, −3.9]" or "1.62× [1.31, 2.05]". */
export function formatEffect(e: Signal['effect']): string {
  if (e.estimate === null) return `n/a (${e.reason ?? 'undefined'})`
  // Points print one way everywhere (util/format.ts): one decimal, half away from zero, U+2212.
  const f = (x: number) => (e.unit === 'pp' ? fmtPoints(x, { unit: false }) : `${x.toFixed(2)}`)
  const bound = (x: number) => (e.unit === 'pp' ? fmtPointsBound(x) : `${x.toFixed(2)}`)
  const unit = e.unit === 'pp' ? ' pp' : '×'
  const ci = e.ci ? ` [${bound(e.ci[0])}, ${bound(e.ci[1])}]` : ''
  return `${f(e.estimate)}${unit}${ci}`
}

export type { Thresholds }
