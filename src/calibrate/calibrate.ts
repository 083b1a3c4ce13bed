import { DEFAULT_DESIGN } from '../detect/designs/registry.js'
import { METRIC_RULES, RATIO_METRICS, type Thresholds } from '../detect/effects.js'
import type { SignalMetric } from '../detect/schema.js'
import type { SeededRng } from '../stats/index.js'
import { type PilotModel, pilotWorld } from './pilot.js'
import { NO_EFFECT, type ParametricSpec, parametricWorld, type TrueEffects, type World } from './scenario.js'
import { effectOf, type Policy, runScenario, type ScenarioRates } from './simulate.js'

export const CALIBRATION_SCHEMA_VERSION = 1

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
}

export interface Calibration {
  schema_version: number
  design: { name: string; version: number; alpha: number; statement: string }
  blocks: number
  sims: number
  seed: number
  /** How the experiments were simulated. */
  model: string
  rules: RuleCalibration[]
  overall: { false_alarm_rate: number; false_confirmation_rate: number }
  /** Dollars of one rerun at the pilot's mean spend per block (both cells), A/A; null without a pilot. */
  expected_rerun_usd: number | null
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

/**
 * Seeded simulated experiments of the manifest's size through the detect rules and the
 * confirmation design (simulate.ts): A/A for false alarms and false confirmations, then each rule's
 * headline effect and its threshold as true effects for power. Deterministic for a seed.
 */
export function calibrate(input: CalibrateInput): Calibration {
  const policy: Policy = { thresholds: input.thresholds, maxBlocks: input.maxBlocks, alpha: input.alpha }
  const makeWorld = worldMaker(input)
  const rules = input.rules ?? (['resolved', ...RATIO_METRICS] as SignalMetric[])
  const scenarios = 1 + 2 * rules.length
  let offset = 0
  const progress = (done: number) => input.onProgress?.(offset + done, scenarios * input.sims)
  const run = (effects: TrueEffects, label: number): ScenarioRates => {
    const r = runScenario(makeWorld, effects, policy, input.sims, (input.seed + label * 7919) >>> 0, progress)
    offset += input.sims
    return r
  }
  const aa = run(NO_EFFECT, 0)
  const out: RuleCalibration[] = rules.map((metric, i) => {
    const threshold = input.thresholds[METRIC_RULES[metric].field]
    const effect = headlineEffect(metric, threshold)
    const at = run(effectOf(metric, effect), 2 * i + 1)
    const atThreshold = effect === threshold ? at : run(effectOf(metric, threshold), 2 * i + 2)
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
    model: modelText(input),
    rules: out,
    overall: { false_alarm_rate: aa.anyBreach, false_confirmation_rate: aa.anyConfirmed },
    expected_rerun_usd:
      input.pilot?.spendPerBlock != null ? round(aa.meanRerunBlocks * input.pilot.spendPerBlock, 6) : null,
    warnings,
  }
}

function worldMaker(input: CalibrateInput): (effects: TrueEffects, rng: SeededRng) => World {
  const pilot = input.pilot
  if (pilot) return (effects, rng) => pilotWorld(pilot, input.blocks, effects, rng)
  return (effects, rng) => parametricWorld({ ...input.spec, n: input.blocks }, effects, rng)
}

function modelText(input: CalibrateInput): string {
  if (input.pilot) {
    return `pilot ${input.pilot.source}: ${input.pilot.instances.length} blocks resampled to ${input.blocks}, resolve rate ${input.pilot.rate.toFixed(3)}, run-to-run noise σ = ${input.pilot.noise.toFixed(3)} on log cost`
  }
  const s = input.spec ?? {}
  return `parametric: resolve rate ${s.rate ?? 0.5}, instance propensities Beta with concentration ${s.concentration ?? 1}, lognormal cost levels (σ = ${s.instanceSd ?? 1}), run-to-run noise σ = ${s.noise ?? 0.35} on log cost`
}

function pct(x: number): string {
  return `${(100 * x).toFixed(1)}%`
}

function round(x: number, digits: number): number {
  const f = 10 ** digits
  return Math.round(x * f) / f
}
