import { decisionTrialCount } from '../compare/trial-halves.js'
import { concentration } from '../detect/concentration.js'
import type { ConfirmationDesign } from '../detect/designs/contract.js'
import { DEFAULT_DESIGN } from '../detect/designs/registry.js'
import { none, RATIO_METRICS, type RatioMetric, type Thresholds } from '../detect/effects.js'
import { metricColumns, outcomeColumns, type PairedBlock } from '../detect/pairs.js'
import type { Effect, SignalMetric } from '../detect/schema.js'
import { shownRatio } from '../detect/shown-ratio.js'
import { crossings, type MetricEffects } from '../detect/signals.js'
import { createRng, type SeededRng } from '../stats/index.js'
import { drawRun, NO_EFFECT, type TrueEffects, trueDeficitPp, trueRatio, type World } from './scenario.js'

const METRICS: SignalMetric[] = ['resolved', ...RATIO_METRICS]

/** What one simulated experiment (first run, then at most one confirmation round) ended in, per rule. */
export interface RunOutcome {
  breach: Set<SignalMetric>
  confirmed: Set<SignalMetric>
  /** The figure shown for each confirmed rule (estimation half; points or a ratio). */
  shown: Map<SignalMetric, number>
  /** Ratio rules that crossed and whose first-run ratio rests on a few blocks (named in the report). */
  concentrated: Set<SignalMetric>
  rerunBlocks: number
  /** Attempts of the rerun: blocks × 2 cells × trials. */
  rerunAttempts: number
}

export interface Policy {
  thresholds: Thresholds
  maxBlocks: number
  alpha: number
  /** Trials per block and cell in the rerun (default: the design's, confirmation.trials' default). */
  rerunTrials?: number
  /** The confirmation design (default DEFAULT_DESIGN). */
  design?: ConfirmationDesign
}

/** Point estimates of one run: the resolve-rate difference (points) and each ratio of totals. */
export function pointEstimate(pairs: readonly PairedBlock[], metric: SignalMetric): number | null {
  if (metric === 'resolved') {
    const c = outcomeColumns([...pairs])
    const n = c.instances.length
    if (n === 0) return null
    let d = 0
    for (let i = 0; i < n; i++) d += (c.treat[i] as number) - (c.base[i] as number)
    return (100 * d) / n
  }
  const c = metricColumns([...pairs], metric)
  let b = 0
  let t = 0
  for (let i = 0; i < c.base.length; i++) {
    b += c.base[i] as number
    t += c.treat[i] as number
  }
  return b > 0 ? t / b : null
}

/** Point estimates only: the detect rules cross on estimates; intervals are for the report. */
function pointEffects(pairs: PairedBlock[]): MetricEffects {
  return {
    effect: (metric): Effect => {
      const x = pointEstimate(pairs, metric)
      const unit = metric === 'resolved' ? 'pp' : 'ratio'
      if (x === null) return none(unit, 'undefined')
      return { estimate: x, ci: null, unit, method: 'point estimate', n: pairs.length, reason: null }
    },
    pRegression: null,
  }
}

/**
 * One simulated experiment through the detect rules (`crossings`) and the confirmation design
 * (`select` on the first run, a fresh independent rerun of the selected blocks, `decide` on it, the
 * figure shown on the estimation half) — the same calls `detect` and `confirm` make on real runs.
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
  const shown = new Map<SignalMetric, number>()
  const concentrated = new Set<SignalMetric>()
  const trials = policy.rerunTrials ?? design.trials
  if (found.signals.length === 0)
    return { breach, confirmed, shown, concentrated, rerunBlocks: 0, rerunAttempts: 0 }
  const selection = design.select(
    { signals: found.signals, pairs: () => first, unstable: new Set(), maxBlocks: policy.maxBlocks, trials },
    rng,
  )
  // A trial split draws each block's decision trials and its estimation trials apart (as the
  // rerun's trial_halves hold them); with one trial nothing is held out and the rerun decides alone.
  const split = design.splitTrials === true && trials >= 2
  const decideTrials = split ? decisionTrialCount(trials) : trials
  const rerun = drawRun(world, selection.instances, rng, decideTrials)
  const held = split ? drawRun(world, selection.sample, rng, trials - decideTrials) : null
  const sample = new Set(selection.sample)
  const estimate = new Set(selection.estimate)
  const decide = new Set(selection.instances)
  for (const s of found.signals) {
    if (s.metric !== 'resolved') {
      const c = concentration(metricColumns(first, s.metric as RatioMetric), s.threshold)
      if (c) concentrated.add(s.metric)
    }
    const v = design.decide({
      signal: s,
      rerun,
      outcome: rerun,
      sample,
      unstable: new Set(),
      alpha: policy.alpha,
      first,
      decide,
      estimate,
      splitTrials: split,
    })
    if (!v.holds) continue
    confirmed.add(s.metric)
    const shownOn = held ?? (estimate.size > 0 ? rerun.filter((p) => estimate.has(p.instance)) : rerun)
    const corrected =
      held && s.metric !== 'resolved' ? shownRatio(first, shownOn, s.metric as RatioMetric) : null
    const x = corrected ? corrected.ratio : pointEstimate(shownOn, s.metric)
    if (x !== null) shown.set(s.metric, x)
  }
  return {
    breach,
    confirmed,
    shown,
    concentrated,
    rerunBlocks: selection.instances.length,
    rerunAttempts: selection.instances.length * 2 * trials,
  }
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
  /** Mean rerun attempts per simulated run. */
  meanRerunAttempts: number
  /** Mean true effect of the simulated worlds: deficit points for `resolved`, ratio of means otherwise. */
  truth: Record<SignalMetric, number>
  /** Mean figure shown among confirmed runs (null when none confirmed). */
  meanShown: Record<SignalMetric, number | null>
  /** Mean over confirmed runs of shown ÷ that world's true ratio (ratios only; null when none). */
  meanShownOverTruth: Record<SignalMetric, number | null>
  /** Monte Carlo standard error of `meanShownOverTruth` (null under two confirmed runs). */
  shownOverTruthSe: Record<SignalMetric, number | null>
  /** Share of runs where the rule crossed and the first-run ratio rested on a few blocks. */
  concentrated: Record<SignalMetric, number>
}

function zeros(): Record<SignalMetric, number> {
  return Object.fromEntries(METRICS.map((m) => [m, 0])) as Record<SignalMetric, number>
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
  const breach = zeros()
  const confirmed = zeros()
  const truth = zeros()
  const shownSum = zeros()
  const overSum = zeros()
  const overSq = zeros()
  const concentrated = zeros()
  let any = 0
  let anyBreach = 0
  let blocks = 0
  let attempts = 0
  for (let i = 0; i < sims; i++) {
    const world = makeWorld(effects, rng)
    const truths = Object.fromEntries(
      METRICS.map((m) => [m, m === 'resolved' ? trueDeficitPp(world) : trueRatio(world, m as RatioMetric)]),
    ) as Record<SignalMetric, number>
    const r = simulateOnce(world, policy, rng, policy.design)
    for (const m of METRICS) truth[m] += truths[m]
    for (const m of r.breach) breach[m]++
    for (const m of r.confirmed) confirmed[m]++
    for (const m of r.concentrated) concentrated[m]++
    for (const [m, x] of r.shown) {
      shownSum[m] += x
      overSum[m] += m === 'resolved' ? 0 : x / truths[m]
      overSq[m] += m === 'resolved' ? 0 : (x / truths[m]) ** 2
    }
    if (r.confirmed.size > 0) any++
    if (r.breach.size > 0) anyBreach++
    blocks += r.rerunBlocks
    attempts += r.rerunAttempts
    onProgress?.(i + 1)
  }
  const meanShown = {} as Record<SignalMetric, number | null>
  const meanShownOverTruth = {} as Record<SignalMetric, number | null>
  const shownOverTruthSe = {} as Record<SignalMetric, number | null>
  for (const m of METRICS) {
    meanShown[m] = confirmed[m] > 0 ? shownSum[m] / confirmed[m] : null
    meanShownOverTruth[m] = confirmed[m] > 0 && m !== 'resolved' ? overSum[m] / confirmed[m] : null
    const c = confirmed[m]
    const mean = c > 0 ? overSum[m] / c : 0
    shownOverTruthSe[m] =
      c > 1 && m !== 'resolved' ? Math.sqrt(Math.max(0, overSq[m] / c - mean * mean) / (c - 1)) : null
    breach[m] /= sims
    confirmed[m] /= sims
    truth[m] /= sims
    concentrated[m] /= sims
  }
  return {
    breach,
    confirmed,
    anyConfirmed: any / sims,
    anyBreach: anyBreach / sims,
    meanRerunBlocks: blocks / sims,
    meanRerunAttempts: attempts / sims,
    truth,
    meanShown,
    meanShownOverTruth,
    shownOverTruthSe,
    concentrated,
  }
}

/** The true effect of one rule at size `size` (points for the resolve rate, a ratio otherwise). */
export function effectOf(metric: SignalMetric, size: number): TrueEffects {
  if (metric === 'resolved') return { ...NO_EFFECT, deficitPp: size }
  return { deficitPp: 0, ratio: { ...NO_EFFECT.ratio, [metric]: size } }
}
