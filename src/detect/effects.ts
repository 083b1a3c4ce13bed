import type { Manifest } from '../manifest/schema.js'
import type { ComparisonEntry } from '../records/comparison.js'
import {
  bootstrapMeanDifference,
  bootstrapRatioOfMeans,
  chosenInterval,
  mcnemarPOneSided,
  type PairedBootstrap,
} from '../stats/index.js'
import { discordant, metricColumns, outcomeColumns, type PairedBlock } from './pairs.js'
import type { Effect, SignalMetric } from './schema.js'

export type Thresholds = Manifest['thresholds']
export type RatioMetric = Exclude<SignalMetric, 'resolved'>

/** Each decided metric, its threshold field and the rule in words (statistics.md "Decisions"). */
export const METRIC_RULES: Record<
  SignalMetric,
  { field: keyof Omit<Thresholds, 'min_coverage' | 'min_blocks'>; label: string; rule: (t: number) => string }
> = {
  resolved: {
    field: 'resolved_deficit_pp',
    label: 'resolve rate',
    rule: (t) => `resolve-rate deficit ≥ ${t} points (treatment − baseline ≤ −${t} pp)`,
  },
  spend_usd: {
    field: 'cost_ratio',
    label: 'spend',
    rule: (t) => `spend ratio of totals Σtreatment/Σbaseline > ${t}× without a resolved advantage`,
  },
  input_fresh_tokens: {
    field: 'fresh_input_ratio',
    label: 'fresh input tokens',
    rule: (t) =>
      `fresh-input-token ratio of totals Σtreatment/Σbaseline > ${t}× without a resolved advantage`,
  },
  proxy_requests: {
    field: 'request_ratio',
    label: 'proxy requests',
    rule: (t) => `proxy-request ratio of totals Σtreatment/Σbaseline > ${t}× without a resolved advantage`,
  },
}
export const RATIO_METRICS: RatioMetric[] = ['spend_usd', 'input_fresh_tokens', 'proxy_requests']

/** Floating-point slack for threshold comparisons ((c − b)/n × 100 may land a hair under 10). */
const EPS = 1e-9

/**
 * Which way an effect crosses its threshold: `regression` (resolve deficit ≥ t pp; ratio > t without a
 * resolved advantage), `improvement` (resolve gain ≥ t pp; ratio < 1/t), or null. `advantaged`: the
 * treatment's resolved advantage is significant by the outcome rule's own exact test
 * (`resolvedAdvantageP` ≤ α), which excuses a higher ratio.
 */
export function crossing(
  metric: SignalMetric,
  effect: Effect,
  threshold: number,
  advantaged: boolean,
): 'regression' | 'improvement' | null {
  const x = effect.estimate
  if (x === null) return null
  if (metric === 'resolved') {
    if (-x >= threshold - EPS) return 'regression'
    if (x >= threshold - EPS) return 'improvement'
    return null
  }
  if (x > threshold + EPS) return advantaged ? null : 'regression'
  if (x > 0 && x < 1 / threshold - EPS) return 'improvement'
  return null
}

/**
 * The exact one-sided McNemar p of a resolved advantage (c > b, treatment resolves more): the same
 * exact test as the outcome rule, in the other direction. A higher cost is excused only when this
 * p ≤ α (never by an interval of another method). Trial shares count by the sign of each block.
 */
export function resolvedAdvantageP(pairs: readonly PairedBlock[]): number {
  const d = discordant([...pairs])
  return mcnemarPOneSided(d.b.length, d.c.length, 'treatment_better')
}

/** Effects of a competitive comparison, as comparison.json states them (not recomputed). */
export function entryEffect(e: ComparisonEntry, metric: SignalMetric): Effect {
  if (metric === 'resolved') {
    return {
      estimate: e.outcome.diff_pp,
      ci: e.outcome.diff_ci,
      unit: 'pp',
      method: e.outcome.diff_ci_method,
      n: e.outcome.n,
      reason: e.outcome.reason,
    }
  }
  const m = e.metrics[metric]
  const r = m.ratio_of_means
  return {
    estimate: r.estimate,
    ci: r.ci,
    unit: 'ratio',
    method: `paired block bootstrap, ${r.method} (B = ${r.resamples})`,
    n: m.n,
    reason: r.reason,
  }
}

export interface BootstrapSettings {
  B: number
  seed: number
  level: number
}

/** The interval of a bootstrap by comparison.json's rule (chosenInterval: studentized, BCa, percentile). */
export function effectOfBootstrap(
  b: PairedBootstrap,
  scale: number,
  unit: Effect['unit'],
  what: string,
): Effect {
  const chosen = chosenInterval(b)
  const estimate = chosen.estimate ?? b.percentile.estimate
  return {
    estimate: estimate === null ? null : estimate * scale,
    ci: chosen.ci ? [chosen.ci[0] * scale, chosen.ci[1] * scale] : null,
    unit,
    method: `paired block bootstrap of the ${what}, ${chosen.method} (B = ${chosen.B})`,
    n: b.n,
    reason: chosen.reason,
  }
}

/**
 * Recompute an effect from paired blocks (self comparisons and confirmation projections):
 * resolve-rate difference in pp with a paired bootstrap interval of the mean difference; ratios of
 * means with a paired block bootstrap. Null estimate with a reason when there are no blocks.
 */
export function pairsEffect(pairs: PairedBlock[], metric: SignalMetric, s: BootstrapSettings): Effect {
  const opts = { B: s.B, seed: s.seed, level: s.level }
  if (metric === 'resolved') {
    const cols = outcomeColumns(pairs)
    if (cols.instances.length === 0) return none('pp', 'no outcome-complete blocks')
    return effectOfBootstrap(
      bootstrapMeanDifference(cols.base, cols.treat, opts),
      100,
      'pp',
      'resolve-rate difference',
    )
  }
  const cols = metricColumns(pairs, metric)
  if (cols.instances.length === 0) return none('ratio', 'no cost-complete blocks')
  return effectOfBootstrap(bootstrapRatioOfMeans(cols.base, cols.treat, opts), 1, 'ratio', 'ratio of means')
}

/** Exact one-sided McNemar p in the regression direction (b > c); null when trials are shares. */
export function regressionP(pairs: PairedBlock[]): { b: number; c: number; p: number | null } {
  const d = discordant(pairs)
  const binary = pairs.every((p) => !p.outcome || ((p.base?.trials ?? 1) <= 1 && (p.treat?.trials ?? 1) <= 1))
  return {
    b: d.b.length,
    c: d.c.length,
    p: binary ? mcnemarPOneSided(d.b.length, d.c.length, 'treatment_worse') : null,
  }
}

export function none(unit: Effect['unit'], reason: string): Effect {
  return { estimate: null, ci: null, unit, method: 'none', n: 0, reason }
}
