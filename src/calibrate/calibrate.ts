import { DEFAULT_DESIGN } from '../detect/designs/registry.js'
import { METRIC_RULES, RATIO_METRICS, type RatioMetric, type Thresholds } from '../detect/effects.js'
import type { SignalMetric } from '../detect/schema.js'
import type { SeededRng } from '../stats/index.js'
import { type PilotModel, pilotWorld } from './pilot.js'
import {
  DEFAULT_NOISE,
  NO_EFFECT,
  noisePair,
  type ParametricSpec,
  parametricWorld,
  type TrueEffects,
  type World,
} from './scenario.js'
import { effectOf, type Policy, runScenario, type ScenarioRates } from './simulate.js'
import { type WorldFile, worldOf } from './world-file.js'
import { nullWorlds, powerWorlds, resolveWorlds, uniformWorld, type WorldSpec } from './worlds.js'

export const CALIBRATION_SCHEMA_VERSION = 2

export interface RuleCalibration {
  rule: SignalMetric
  label: string
  threshold: number
  /** A/A: share of runs where the rule crosses on the first run (an unconfirmed breach). */
  false_alarm_rate: number
  /** A/A: share of runs where the rule is confirmed. */
  false_confirmation_rate: number
  /** The true effect `power` is measured at: points of deficit, or a ratio. */
  effect: number
  effect_unit: 'pp' | 'ratio'
  /** Share of runs confirmed when the true effect is `effect`. */
  power: number
  /** Share of runs confirmed when the true effect equals the threshold. */
  power_at_threshold: number
  /** Mean blocks rerun per run: A/A, and at `effect` (0 when nothing crossed). */
  expected_blocks_rerun: { aa: number; at_effect: number }
  /** Mean figure shown among confirmed runs at `effect` (estimation half), or null. */
  shown_at_effect: number | null
}

/** One rule in one world of the family. */
export interface WorldRule {
  rule: SignalMetric
  /** Ratio rules: the true ratio of means (mean over simulated worlds). */
  true_ratio_of_means?: number
  /** Resolve rule: the true deficit in points. */
  true_deficit_pp?: number
  breach_rate: number
  confirmation_rate: number
  /** Mean figure shown among confirmed runs (rerun data held out of the decision), or null. */
  mean_shown: number | null
  /** Ratio rules: mean of shown ÷ true ratio among confirmed runs, or null. */
  shown_over_truth: number | null
  /** Its Monte Carlo standard error (null under two confirmed runs). */
  shown_over_truth_se: number | null
  /** Ratio rules: share of runs whose first-run ratio rested on a few blocks (named in the report). */
  concentrated_rate: number
}

export interface WorldCalibration {
  name: string
  label: string
  /** `null`: every ratio at or below its threshold and no deficit (a confirmation is false). */
  kind: 'null' | 'power' | 'resolve'
  rules: WorldRule[]
  mean_rerun_blocks: number
  mean_rerun_attempts: number
}

/** Power of the ratio rules at a uniform 2× for each rerun size. */
export interface RerunSizeRow {
  noise: number
  blocks: number
  trials: number
  /** Spend rule's confirmation rate at a true uniform 2×. */
  power: number
  /** Mean rerun attempts per run (blocks × 2 cells × trials when a rule crossed). */
  attempts: number
}

export interface Calibration {
  schema_version: number
  design: { name: string; version: number; alpha: number; statement: string }
  blocks: number
  sims: number
  seed: number
  /** Trials per block and cell in the rerun (confirmation.trials). */
  rerun_trials: number
  /** How the experiments were simulated. */
  model: string
  rules: RuleCalibration[]
  overall: { false_alarm_rate: number; false_confirmation_rate: number }
  /** Dollars of one rerun at the pilot's mean spend per block (both cells), A/A; null without a pilot. */
  expected_rerun_usd: number | null
  /** The family of worlds (null when not asked for). */
  worlds: WorldCalibration[] | null
  /** The null world and rule with the highest confirmation rate (a false confirmation), or null. */
  worst_null: { world: string; label: string; rule: SignalMetric; confirmation_rate: number } | null
  /** Power at a uniform 2× by rerun size, σ 0.35 and σ 0.7 (null without the family). */
  rerun_sizes: RerunSizeRow[] | null
  /** The smallest rerun reaching 80% power at σ 0.7, or null when none tried does. */
  recommendation: RerunSizeRow | null
  warnings: string[]
}

export interface CalibrateInput {
  blocks: number
  thresholds: Thresholds
  maxBlocks: number
  alpha: number
  sims: number
  seed: number
  pilot?: PilotModel | null
  /** Parametric settings when there is no pilot. */
  spec?: Omit<ParametricSpec, 'n'>
  /** Trials per block and cell in the rerun (default: the design's, confirmation.trials' default). */
  rerunTrials?: number
  /** Also run the family of worlds, the rerun sizes and the recommendation. */
  family?: boolean
  /**
   * Parts of the family to run (default all): the null, power and resolve worlds, the rerun sizes.
   * Lets a caller split the work across processes and merge the parts (bench/calibrate.ts).
   */
  parts?: Array<'null' | 'power' | 'resolve' | 'sizes'>
  /** Called after each simulated run: (done, total). */
  onProgress?: (done: number, total: number) => void
  /** Rules to calibrate (default: all four). */
  rules?: SignalMetric[]
}

/** The "clear" effect power is reported at: a 2× ratio (4/3 of the threshold above 1.5×); the resolve rule at its threshold. */
export function headlineEffect(metric: SignalMetric, threshold: number): number {
  if (metric === 'resolved') return threshold
  return threshold < 1.5 ? 2 : Math.max(2, (threshold * 4) / 3)
}

/** Rerun trials tried for the table of rerun sizes, and the σ of the recommendation. */
const TRIALS_TRIED = [1, 2, 3, 4]
export const RECOMMEND_NOISE = 0.7
export const RECOMMEND_POWER = 0.8
/** Panel sizes (× the manifest's blocks) tried when no trial count reaches the recommendation's power. */
const RECOMMEND_FACTORS = [2, 3, 4, 5]

/** Settings (each `sims` simulated runs) the calibration runs, for progress. */
export function settingsCount(input: Pick<CalibrateInput, 'family' | 'rules'>): number {
  const rules = input.rules?.length ?? 4
  const base = 1 + 2 * rules
  if (!input.family) return base
  return (
    base +
    nullWorlds(sameRatios(1.5)).length +
    powerWorlds().length +
    resolveWorlds().length +
    2 * TRIALS_TRIED.length +
    RECOMMEND_FACTORS.length +
    1
  )
}

function sameRatios(r: number): Record<RatioMetric, number> {
  return { spend_usd: r, input_fresh_tokens: r, proxy_requests: r }
}

/**
 * Seeded simulated experiments of the manifest's size through the detect rules and the
 * confirmation design (simulate.ts): A/A for false alarms and false confirmations, then each rule's
 * headline effect and its threshold as true effects for power; with `family`, every world of
 * worlds.ts, the power of each rerun size and the recommended one. Deterministic for a seed.
 */
export function calibrate(input: CalibrateInput): Calibration {
  const trials = input.rerunTrials ?? DEFAULT_DESIGN.trials
  const policy: Policy = {
    thresholds: input.thresholds,
    maxBlocks: input.maxBlocks,
    alpha: input.alpha,
    rerunTrials: trials,
  }
  const makeWorld = worldMaker(input)
  const rules = input.rules ?? (['resolved', ...RATIO_METRICS] as SignalMetric[])
  const total = settingsCount({ family: input.family, rules }) * input.sims
  let offset = 0
  const progress = (done: number) => input.onProgress?.(offset + done, total)
  let label = 0
  const run = (
    make: (effects: TrueEffects, rng: SeededRng) => World,
    effects: TrueEffects,
    p: Policy = policy,
  ): ScenarioRates => {
    const r = runScenario(make, effects, p, input.sims, (input.seed + label++ * 7919) >>> 0, progress)
    offset += input.sims
    return r
  }
  const aa = run(makeWorld, NO_EFFECT)
  const out: RuleCalibration[] = rules.map((metric) => {
    const threshold = input.thresholds[METRIC_RULES[metric].field]
    const effect = headlineEffect(metric, threshold)
    const at = run(makeWorld, effectOf(metric, effect))
    const atThreshold = effect === threshold ? at : run(makeWorld, effectOf(metric, threshold))
    if (effect === threshold) offset += input.sims
    return {
      rule: metric,
      label: METRIC_RULES[metric].rule(threshold),
      threshold,
      false_alarm_rate: aa.breach[metric],
      false_confirmation_rate: aa.confirmed[metric],
      effect,
      effect_unit: metric === 'resolved' ? 'pp' : 'ratio',
      power: at.confirmed[metric],
      power_at_threshold: atThreshold.confirmed[metric],
      expected_blocks_rerun: { aa: aa.meanRerunBlocks, at_effect: at.meanRerunBlocks },
      shown_at_effect: at.meanShown[metric],
    }
  })
  const warnings: string[] = []
  for (const r of out) {
    if (r.rule === 'resolved' && r.power_at_threshold < 0.5) {
      warnings.push(
        `thresholds.resolved_deficit_pp ${r.threshold} is below what ${input.blocks} blocks can confirm: a true ${r.threshold}-point deficit is confirmed in ${pct(r.power_at_threshold)} of simulated runs (under 50%); add blocks or expect such deficits to clear (harness-watch calibrate shows the rates)`,
      )
    }
  }
  let worlds: WorldCalibration[] | null = null
  let sizes: RerunSizeRow[] | null = null
  let recommendation: RerunSizeRow | null = null
  if (input.family) {
    const theta = {
      spend_usd: input.thresholds.cost_ratio,
      input_fresh_tokens: input.thresholds.fresh_input_ratio,
      proxy_requests: input.thresholds.request_ratio,
    }
    const parts = new Set(input.parts ?? ['null', 'power', 'resolve', 'sizes'])
    const family: Array<[WorldSpec, WorldCalibration['kind']]> = [
      ...nullWorlds(theta).map((w): [WorldSpec, WorldCalibration['kind']] => [w, 'null']),
      ...powerWorlds().map((w): [WorldSpec, WorldCalibration['kind']] => [w, 'power']),
      ...resolveWorlds().map((w): [WorldSpec, WorldCalibration['kind']] => [w, 'resolve']),
    ].filter(([, kind]) => parts.has(kind))
    worlds = family.map(([w, kind]) => {
      const r = run((_e, rng) => w.make(input.blocks, rng), NO_EFFECT)
      const metrics: SignalMetric[] = kind === 'resolve' ? ['resolved'] : [...RATIO_METRICS]
      return {
        name: w.name,
        label: w.label,
        kind,
        rules: metrics.map((m) => worldRule(r, m)),
        mean_rerun_blocks: r.meanRerunBlocks,
        mean_rerun_attempts: r.meanRerunAttempts,
      }
    })
    if (parts.has('sizes')) {
      sizes = []
      for (const sigma of [DEFAULT_NOISE, RECOMMEND_NOISE]) {
        for (const k of TRIALS_TRIED) {
          const r = run((_e, rng) => uniformWorld(2, sigma)(input.blocks, rng), NO_EFFECT, {
            ...policy,
            rerunTrials: k,
          })
          sizes.push({
            noise: sigma,
            blocks: input.blocks,
            trials: k,
            power: r.confirmed.spend_usd,
            attempts: r.meanRerunAttempts,
          })
        }
      }
      recommendation = sizes.find((s) => s.noise === RECOMMEND_NOISE && s.power >= RECOMMEND_POWER) ?? null
      // Not reachable by trials alone: more blocks (the panel and its rerun grow together).
      for (const factor of RECOMMEND_FACTORS) {
        const n = Math.ceil(input.blocks * factor)
        const k = DEFAULT_DESIGN.trials
        const r = run((_e, rng) => uniformWorld(2, RECOMMEND_NOISE)(n, rng), NO_EFFECT, {
          ...policy,
          maxBlocks: Math.max(policy.maxBlocks, n),
          rerunTrials: k,
        })
        const row = {
          noise: RECOMMEND_NOISE,
          blocks: n,
          trials: k,
          power: r.confirmed.spend_usd,
          attempts: r.meanRerunAttempts,
        }
        sizes.push(row)
        if (!recommendation && row.power >= RECOMMEND_POWER) recommendation = row
      }
      const power2x = sizes.find((s) => s.noise === DEFAULT_NOISE && s.trials === trials)
      if (power2x && power2x.power < 0.9) {
        const enough = sizes.find(
          (s) => s.noise === DEFAULT_NOISE && s.blocks === input.blocks && s.power >= 0.9,
        )
        warnings.push(
          `a true uniform 2× spend at run noise σ ${DEFAULT_NOISE} is confirmed in ${pct(power2x.power)} of runs with confirmation.trials ${trials} (target 90%)${enough ? `; confirmation.trials ${enough.trials} reaches ${pct(enough.power)} at ${enough.attempts.toFixed(0)} rerun attempts per run` : ''}`,
        )
      }
    }
  }
  const worst = worstNull(worlds)
  return {
    schema_version: CALIBRATION_SCHEMA_VERSION,
    design: {
      name: DEFAULT_DESIGN.name,
      version: DEFAULT_DESIGN.version,
      alpha: input.alpha,
      statement: DEFAULT_DESIGN.statement(input.alpha),
    },
    blocks: input.blocks,
    sims: input.sims,
    seed: input.seed,
    rerun_trials: trials,
    model: modelText(input),
    rules: out,
    overall: { false_alarm_rate: aa.anyBreach, false_confirmation_rate: aa.anyConfirmed },
    expected_rerun_usd:
      input.pilot?.spendPerBlock != null ? round(aa.meanRerunBlocks * input.pilot.spendPerBlock, 6) : null,
    worlds,
    worst_null: worst,
    rerun_sizes: sizes,
    recommendation,
    warnings,
  }
}

function worldRule(r: ScenarioRates, m: SignalMetric): WorldRule {
  const truth = m === 'resolved' ? { true_deficit_pp: r.truth[m] } : { true_ratio_of_means: r.truth[m] }
  return {
    rule: m,
    ...truth,
    breach_rate: r.breach[m],
    confirmation_rate: r.confirmed[m],
    mean_shown: r.meanShown[m],
    shown_over_truth: r.meanShownOverTruth[m],
    shown_over_truth_se: r.shownOverTruthSe[m],
    concentrated_rate: r.concentrated[m],
  }
}

function worstNull(worlds: WorldCalibration[] | null): Calibration['worst_null'] {
  let worst: Calibration['worst_null'] = null
  for (const w of worlds ?? []) {
    if (w.kind !== 'null') continue
    for (const r of w.rules) {
      if (!worst || r.confirmation_rate > worst.confirmation_rate) {
        worst = { world: w.name, label: w.label, rule: r.rule, confirmation_rate: r.confirmation_rate }
      }
    }
  }
  return worst
}

function worldMaker(input: CalibrateInput): (effects: TrueEffects, rng: SeededRng) => World {
  const pilot = input.pilot
  if (pilot) return (effects, rng) => pilotWorld(pilot, input.blocks, effects, rng)
  return (effects, rng) => parametricWorld({ ...input.spec, n: input.blocks }, effects, rng)
}

function modelText(input: CalibrateInput): string {
  if (input.pilot) {
    return `pilot ${input.pilot.source}: ${input.pilot.instances.length} blocks resampled to ${input.blocks}, resolve rate ${input.pilot.rate.toFixed(3)}, run-to-run noise from ${input.pilot.noiseSource}`
  }
  const s = input.spec ?? {}
  const [nb, nt] = noisePair(s.noise)
  const noise = nb === nt ? `σ = ${nb}` : `σ = ${nb} baseline, ${nt} treatment`
  return `parametric: resolve rate ${s.rate ?? 0.5}, instance propensities Beta with concentration ${s.concentration ?? 1}, lognormal cost levels (σ = ${s.instanceSd ?? 1}), uniform multiplier, run-to-run noise ${noise} on log cost`
}

export function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`
}

function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}

/** A user's world (calibrate --world): each rule it gives, through the same detect and confirm path. */
export interface WorldFileCalibration {
  world: string
  blocks: number
  sims: number
  seed: number
  noise: [number, number]
  rerun_trials: number
  design: { name: string; version: number; alpha: number }
  rules: Array<WorldRule & { threshold: number }>
}

export function calibrateWorldFile(
  file: WorldFile,
  input: Pick<
    CalibrateInput,
    'thresholds' | 'maxBlocks' | 'alpha' | 'sims' | 'seed' | 'rerunTrials' | 'onProgress'
  > & {
    noise: [number, number]
  },
): WorldFileCalibration {
  const trials = input.rerunTrials ?? DEFAULT_DESIGN.trials
  const world = worldOf(file, input.noise)
  const r = runScenario(
    () => world,
    NO_EFFECT,
    { thresholds: input.thresholds, maxBlocks: input.maxBlocks, alpha: input.alpha, rerunTrials: trials },
    input.sims,
    input.seed >>> 0,
    (done) => input.onProgress?.(done, input.sims),
  )
  const metrics: SignalMetric[] = ['resolved', ...file.metrics]
  return {
    world: file.file,
    blocks: world.instances.length,
    sims: input.sims,
    seed: input.seed,
    noise: input.noise,
    rerun_trials: trials,
    design: { name: DEFAULT_DESIGN.name, version: DEFAULT_DESIGN.version, alpha: input.alpha },
    rules: metrics.map((m) => ({
      ...worldRule(r, m),
      threshold: input.thresholds[METRIC_RULES[m].field],
    })),
  }
}
