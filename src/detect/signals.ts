import {
  type BootstrapSettings,
  crossing,
  METRIC_RULES,
  pairsEffect,
  RATIO_METRICS,
  type RatioMetric,
  regressionP,
  resolvedAdvantageP,
  type Thresholds,
} from './effects.js'
import { discordant, metricColumns, overThreshold, type PairedBlock } from './pairs.js'
import type { Effect, Signal, SignalMetric } from './schema.js'

/** thresholds.min_blocks when the manifest does not set it. */
export const DEFAULT_MIN_BLOCKS = 10

export interface SignalContext {
  key: string
  kind: Signal['kind']
  baseline: string
  treatment: string
  thresholds: Thresholds
  /** Quarantined or unstable instances (F07): breaches driven only by these are never confirmed. */
  unstable: ReadonlySet<string>
  /** Whether cost-type metrics have enough complete telemetry to be decided. */
  costDecided: boolean
  /** One-sided level of the exact tests (confirmation.alpha): a resolved advantage at p ≤ α excuses cost. */
  alpha: number
}

/** The effect of each metric for one comparison, however it was obtained. */
export interface MetricEffects {
  effect: (metric: SignalMetric) => Effect
  /** One-sided exact McNemar p in the regression direction, when defined. */
  pRegression: number | null
}

/**
 * Threshold crossings of one comparison: regressions (signals) and improvements, each with its
 * effect, interval and the blocks that drive it. Pure; `pairs` only names the blocks.
 * A regression whose driving blocks are all unstable is `not_confirmable` (F07); every other
 * regression starts `unconfirmed` — a single run never confirms anything (F08).
 */
export function crossings(
  pairs: PairedBlock[],
  effects: MetricEffects,
  ctx: SignalContext,
): { signals: Signal[]; improvements: Signal[] } {
  const signals: Signal[] = []
  const improvements: Signal[] = []
  const resolved = effects.effect('resolved')
  const metrics: SignalMetric[] = ['resolved', ...(ctx.costDecided ? RATIO_METRICS : [])]
  const d = discordant(pairs)
  const advantaged = resolvedAdvantageP(pairs) <= ctx.alpha
  for (const metric of metrics) {
    const threshold = ctx.thresholds[METRIC_RULES[metric].field]
    const effect = metric === 'resolved' ? resolved : effects.effect(metric)
    const advantage = metric === 'resolved' ? null : resolved
    const direction = crossing(metric, effect, threshold, metric !== 'resolved' && advantaged)
    if (!direction) continue
    const driving =
      metric === 'resolved'
        ? direction === 'regression'
          ? d.b
          : d.c
        : direction === 'regression'
          ? overThreshold(metricColumns(pairs, metric as RatioMetric), threshold)
          : []
    const opposing = metric === 'resolved' ? (direction === 'regression' ? d.c : d.b) : []
    const flaky = driving.filter((i) => ctx.unstable.has(i))
    const flakyOnly = direction === 'regression' && driving.length > 0 && flaky.length === driving.length
    const signal: Signal = {
      id: `${ctx.key}:${metric}`,
      key: ctx.key,
      kind: ctx.kind,
      baseline: ctx.baseline,
      treatment: ctx.treatment,
      metric,
      direction,
      rule: METRIC_RULES[metric].rule(threshold),
      threshold,
      effect,
      resolved_advantage: advantage,
      p_one_sided: metric === 'resolved' ? effects.pRegression : null,
      instances: { driving, opposing, flaky },
      flaky_only: flakyOnly,
      state: flakyOnly ? 'not_confirmable' : 'unconfirmed',
      rerun: null,
    }
    if (direction === 'regression') signals.push(signal)
    else improvements.push(signal)
  }
  return { signals: smallSample(signals, ctx.thresholds.min_blocks ?? DEFAULT_MIN_BLOCKS), improvements }
}

/**
 * Signals on fewer blocks than `thresholds.min_blocks` keep their effect and interval with a
 * small-sample note; they cannot raise a breach alone: when no signal of the comparison on enough
 * blocks is live they become `small_sample` (shown, never rerun), else they ride along unconfirmed.
 */
export function smallSample(signals: Signal[], minBlocks: number): Signal[] {
  const note = (s: Signal): Signal =>
    s.effect.n >= minBlocks
      ? s
      : {
          ...s,
          effect: {
            ...s.effect,
            reason: `small sample: n = ${s.effect.n} < thresholds.min_blocks ${minBlocks}; the interval is shown, it cannot raise a breach alone`,
          },
        }
  const noted = signals.map(note)
  const backed = noted.some((s) => s.state === 'unconfirmed' && s.effect.n >= minBlocks)
  if (backed) return noted
  return noted.map((s) =>
    s.state === 'unconfirmed' && s.effect.n < minBlocks ? { ...s, state: 'small_sample' } : s,
  )
}

/** Effects recomputed from pairs (self comparisons: a cell against its own previous run). */
export function effectsFromPairs(pairs: PairedBlock[], s: BootstrapSettings): MetricEffects {
  const cache = new Map<SignalMetric, Effect>()
  return {
    effect: (metric) => {
      let e = cache.get(metric)
      if (!e) {
        e = pairsEffect(pairs, metric, s)
        cache.set(metric, e)
      }
      return e
    },
    pRegression: regressionP(pairs).p,
  }
}
