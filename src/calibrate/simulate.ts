import type { ConfirmationDesign } from '../detect/designs/contract.js'
import { DEFAULT_DESIGN } from '../detect/designs/registry.js'
import { none, RATIO_METRICS, type Thresholds } from '../detect/effects.js'
import { metricColumns, outcomeColumns, type PairedBlock } from '../detect/pairs.js'
import type { Effect, SignalMetric } from '../detect/schema.js'
import { crossings, type MetricEffects } from '../detect/signals.js'
import { createRng, type SeededRng } from '../stats/index.js'
import { drawRun, NO_EFFECT, type TrueEffects, type World } from './scenario.js'

/** What one simulated experiment (first run, then at most one confirmation round) ended in, per rule. */
export interface RunOutcome {
  breach: Set<SignalMetric>
  confirmed: Set<SignalMetric>
  rerunBlocks: number
}

export interface Policy {
  thresholds: Thresholds
  maxBlocks: number
  alpha: number
}

/** Point estimates only: the detect rules cross on estimates; intervals are for the report. */
function pointEffects(pairs: PairedBlock[]): MetricEffects {
  return {
    effect: (metric): Effect => {
      if (metric === 'resolved') {
        const c = outcomeColumns(pairs)
        const n = c.instances.length
        if (n === 0) return none('pp', 'no outcome-complete blocks')
        let d = 0
        for (let i = 0; i < n; i++) d += (c.treat[i] as number) - (c.base[i] as number)
        return { estimate: (100 * d) / n, ci: null, unit: 'pp', method: 'point estimate', n, reason: null }
      }
      const c = metricColumns(pairs, metric)
      let b = 0
      let t = 0
      for (let i = 0; i < c.base.length; i++) {
        b += c.base[i] as number
        t += c.treat[i] as number
      }
      if (b <= 0) return none('ratio', 'no baseline total')
      return {
        estimate: t / b,
        ci: null,
        unit: 'ratio',
        method: 'point estimate',
        n: c.base.length,
        reason: null,
      }
    },
    pRegression: null,
  }
}

/**
 * One simulated experiment through the detect rules (`crossings`) and the confirmation design
 * (`select` on the first run, a fresh independent rerun of the selected blocks, `decide` on it) —
 * the same calls `detect` and `confirm` make on real runs.
 */
export function simulateOnce(
  world: World,
  policy: Policy,
  rng: SeededRng,
  design: ConfirmationDesign = DEFAULT_DESIGN,
): RunOutcome {
  const first = drawRun(world, null, rng)
  const found = crossings(first, pointEffects(first), {
    key: 'sim/a-vs-b',
    kind: 'competitive',
    baseline: 'a',
    treatment: 'b',
    thresholds: policy.thresholds,
    unstable: new Set(),
    costDecided: true,
    alpha: policy.alpha,
  })
  const breach = new Set(found.signals.map((s) => s.metric))
  const confirmed = new Set<SignalMetric>()
  if (found.signals.length === 0) return { breach, confirmed, rerunBlocks: 0 }
  const selection = design.select(
    { signals: found.signals, pairs: () => first, unstable: new Set(), maxBlocks: policy.maxBlocks },
    rng,
  )
  const rerun = drawRun(world, selection.instances, rng)
  const sample = new Set(selection.sample)
  for (const s of found.signals) {
    const v = design.decide({
      signal: s,
      rerun,
      outcome: rerun,
      sample,
      unstable: new Set(),
      alpha: policy.alpha,
    })
    if (v.holds) confirmed.add(s.metric)
  }
  return { breach, confirmed, rerunBlocks: selection.instances.length }
}

export interface ScenarioRates {
  /** Share of simulated runs where the rule crossed on the first run. */
  breach: Record<SignalMetric, number>
  /** Share of simulated runs where the rule was confirmed. */
  confirmed: Record<SignalMetric, number>
  /** Share of simulated runs where any rule was confirmed. */
  anyConfirmed: number
  /** Share of simulated runs where any rule crossed on the first run. */
  anyBreach: number
  /** Mean blocks rerun per simulated run (0 when nothing crossed). */
  meanRerunBlocks: number
}

/** Rates over `sims` seeded experiments of worlds from `makeWorld`. */
export function runScenario(
  makeWorld: (effects: TrueEffects, rng: SeededRng) => World,
  effects: TrueEffects,
  policy: Policy,
  sims: number,
  seed: number,
  onProgress?: (done: number) => void,
): ScenarioRates {
  const rng = createRng(seed >>> 0)
  const metrics: SignalMetric[] = ['resolved', ...RATIO_METRICS]
  const breach = Object.fromEntries(metrics.map((m) => [m, 0])) as Record<SignalMetric, number>
  const confirmed = { ...breach }
  let any = 0
  let anyBreach = 0
  let blocks = 0
  for (let i = 0; i < sims; i++) {
    const r = simulateOnce(makeWorld(effects, rng), policy, rng)
    for (const m of r.breach) breach[m]++
    for (const m of r.confirmed) confirmed[m]++
    if (r.confirmed.size > 0) any++
    if (r.breach.size > 0) anyBreach++
    blocks += r.rerunBlocks
    onProgress?.(i + 1)
  }
  for (const m of metrics) {
    breach[m] /= sims
    confirmed[m] /= sims
  }
  return {
    breach,
    confirmed,
    anyConfirmed: any / sims,
    anyBreach: anyBreach / sims,
    meanRerunBlocks: blocks / sims,
  }
}

/** The true effect of one rule at size `size` (points for the resolve rate, a ratio otherwise). */
export function effectOf(metric: SignalMetric, size: number): TrueEffects {
  if (metric === 'resolved') return { ...NO_EFFECT, deficitPp: size }
  return { deficitPp: 0, ratio: { ...NO_EFFECT.ratio, [metric]: size } }
}
