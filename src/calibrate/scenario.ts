import type { RatioMetric } from '../detect/effects.js'
import type { PairedBlock } from '../detect/pairs.js'
import type { InstanceCell } from '../records/comparison.js'
import type { SeededRng } from '../stats/index.js'

/**
 * Seeded simulated experiments for calibration: a "world" of instances, each with a resolve
 * propensity and a mean cost per attempt for each arm, and independent runs drawn from it (a first
 * run, then a rerun of the blocks a confirmation design selects). Runs are PairedBlock[], the shape
 * the detect rules and the confirmation designs read. Pure given the rng.
 *
 * An attempt of arm a on instance i resolves with probability pᵢₐ and costs, per resource,
 *   meanᵢₐ · exp(σₐ·ε − σₐ²/2) · R
 * with ε ~ N(0, 1) fresh per attempt (run-to-run noise σₐ, which may differ between the arms) and R a
 * runaway factor (F with probability q, else 1, divided by 1 − q + qF); both factors have mean 1, so
 * meanᵢₐ is the expected cost and the true ratio of means of a world is Σᵢ meanᵢ,treat / Σᵢ meanᵢ,base
 * exactly (`trueRatio`). A block run k times sums its k attempts' costs and counts its resolved trials.
 *
 * The parametric world (no pilot, no world file): pᵢ,base ~ Beta(κ·r, κ·(1 − r)), κ = 1, and
 * pᵢ,treat = pᵢ,base·(r − δ)/r (a mean deficit of exactly δ in expectation); ln meanᵢ,base ~ N(0, 1)
 * across instances and meanᵢ,treat = ratio · meanᵢ,base (a uniform multiplier); σ = 0.35 in both arms.
 */

export const RATIO_KEYS: RatioMetric[] = ['spend_usd', 'input_fresh_tokens', 'proxy_requests']

export interface WorldInstance {
  id: string
  /** Resolve propensity of [baseline, treatment], each in [0, 1]. */
  p: [number, number]
  /** Expected cost of one attempt per resource, [baseline, treatment], each > 0. */
  mean: Record<RatioMetric, [number, number]>
}

export interface World {
  instances: WorldInstance[]
  /** Run-to-run noise on the log scale, [baseline, treatment]. */
  noise: [number, number]
  /** Runaway attempts of each arm: probability q and cost factor F (mean-preserving). */
  runaway?: { q: [number, number]; factor: number }
}

export interface TrueEffects {
  /** Mean resolve-rate deficit, in points (treatment − baseline = −deficitPp). */
  deficitPp: number
  /** True ratio of the treatment's resource to the baseline's, per metric. */
  ratio: Record<RatioMetric, number>
}

export interface ParametricSpec {
  n: number
  /** Baseline resolve rate r (default 0.5). */
  rate?: number
  /** Beta concentration κ of the instance propensities (default 1). */
  concentration?: number
  /** Spread of ln(cost level) across instances (default 1, lognormal σ = 1). */
  instanceSd?: number
  /** Run-to-run noise on the log scale (default 0.35), or one per arm. */
  noise?: number | [number, number]
}

export const NO_EFFECT: TrueEffects = {
  deficitPp: 0,
  ratio: { spend_usd: 1, input_fresh_tokens: 1, proxy_requests: 1 },
}

/** Default run-to-run noise σ on log cost when neither a pilot nor --noise gives one. */
export const DEFAULT_NOISE = 0.35

/** The second draw of the last Box–Muller pair, kept for the next call on the same stream. */
const spare = new WeakMap<SeededRng, number>()

/** A standard normal draw (Box–Muller on two uniforms of the stream; both values are used in turn). */
export function normal(rng: SeededRng): number {
  const kept = spare.get(rng)
  if (kept !== undefined) {
    spare.delete(rng)
    return kept
  }
  const u = 1 - rng.nextFloat()
  const v = rng.nextFloat()
  const r = Math.sqrt(-2 * Math.log(u))
  spare.set(rng, r * Math.sin(2 * Math.PI * v))
  return r * Math.cos(2 * Math.PI * v)
}

/** Gamma(shape, 1) (Marsaglia & Tsang 2000; shape < 1 by the boost u^(1/shape)). */
function gamma(shape: number, rng: SeededRng): number {
  if (shape < 1) return gamma(shape + 1, rng) * (1 - rng.nextFloat()) ** (1 / shape)
  const d = shape - 1 / 3
  const c = 1 / Math.sqrt(9 * d)
  for (;;) {
    const x = normal(rng)
    const v = (1 + c * x) ** 3
    if (v <= 0) continue
    const u = 1 - rng.nextFloat()
    if (Math.log(u) < 0.5 * x * x + d - d * v + d * Math.log(v)) return d * v
  }
}

export function beta(a: number, b: number, rng: SeededRng): number {
  const x = gamma(a, rng)
  const y = gamma(b, rng)
  return x + y > 0 ? x / (x + y) : a / (a + b)
}

export function simId(i: number): string {
  return `sim-${String(i + 1).padStart(4, '0')}`
}

/** Both arms' σ from a number or a pair. */
export function noisePair(noise: number | [number, number] | undefined): [number, number] {
  if (noise === undefined) return [DEFAULT_NOISE, DEFAULT_NOISE]
  return typeof noise === 'number' ? [noise, noise] : noise
}

/** The treatment side of a baseline: propensity scaled to a mean deficit δ, costs × the ratio. */
export function applyEffects(
  base: { p: number; mean: Record<RatioMetric, number> },
  rate: number,
  effects: TrueEffects,
): Omit<WorldInstance, 'id'> {
  const scale = rate > 0 ? Math.max(0, rate - effects.deficitPp / 100) / rate : 1
  const mean = {} as Record<RatioMetric, [number, number]>
  for (const m of RATIO_KEYS) mean[m] = [base.mean[m], effects.ratio[m] * base.mean[m]]
  return { p: [base.p, Math.min(1, base.p * scale)], mean }
}

/** A parametric world of `spec.n` instances. */
export function parametricWorld(spec: ParametricSpec, effects: TrueEffects, rng: SeededRng): World {
  const rate = spec.rate ?? 0.5
  const k = spec.concentration ?? 1
  const sd = spec.instanceSd ?? 1
  const instances: WorldInstance[] = []
  for (let i = 0; i < spec.n; i++) {
    const p = beta(k * rate, k * (1 - rate), rng)
    const mean = {
      spend_usd: Math.exp(sd * normal(rng)),
      input_fresh_tokens: 1000 * Math.exp(sd * normal(rng)),
      proxy_requests: 10 * Math.exp(sd * normal(rng)),
    }
    instances.push({ id: simId(i), ...applyEffects({ p, mean }, rate, effects) })
  }
  return { instances, noise: noisePair(spec.noise) }
}

/** The true ratio of means Σ mean_treat / Σ mean_base of a world's instances (or of `ids`). */
export function trueRatio(world: World, metric: RatioMetric, ids?: ReadonlySet<string>): number {
  let b = 0
  let t = 0
  for (const x of world.instances) {
    if (ids && !ids.has(x.id)) continue
    b += x.mean[metric][0]
    t += x.mean[metric][1]
  }
  return t / b
}

/** The true resolve-rate deficit in points: 100 · mean(p_base − p_treat). */
export function trueDeficitPp(world: World): number {
  let d = 0
  for (const x of world.instances) d += x.p[0] - x.p[1]
  return world.instances.length > 0 ? (100 * d) / world.instances.length : 0
}

function cell(resolvedTrials: number, trials: number, values: Record<RatioMetric, number>): InstanceCell {
  return {
    outcome: resolvedTrials > 0 ? 'resolved' : 'unresolved',
    exit_class: 'clean',
    trials,
    resolved_trials: resolvedTrials,
    attempts: trials,
    coverage: 'complete',
    spend_usd: values.spend_usd / trials,
    proxy_requests: values.proxy_requests / trials,
    input_tokens: null,
    input_fresh_tokens: values.input_fresh_tokens / trials,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    wall_s: null,
  }
}

/**
 * One independent run of `ids` (every block complete), each block run `trials` times per arm:
 * fresh outcomes and costs for both cells, each cost the mean over the trials of the attempts' costs
 * (as comparison.json's instance rows hold them).
 */
export function drawRun(
  world: World,
  ids: readonly string[] | null,
  rng: SeededRng,
  trials = 1,
): PairedBlock[] {
  const wanted = ids ? new Set(ids) : null
  const [sb, st] = world.noise
  const q = world.runaway?.q ?? [0, 0]
  const f = world.runaway?.factor ?? 1
  const norm = [1 - q[0] + q[0] * f, 1 - q[1] + q[1] * f]
  const attempt = (arm: 0 | 1, sigma: number): number => {
    const noise = sigma > 0 ? Math.exp(sigma * normal(rng) - (sigma * sigma) / 2) : 1
    if (q[arm] === 0) return noise
    return (noise * (rng.nextFloat() < q[arm] ? f : 1)) / (norm[arm] as number)
  }
  const out: PairedBlock[] = []
  for (const x of world.instances) {
    if (wanted && !wanted.has(x.id)) continue
    let rb = 0
    let rt = 0
    const base = { spend_usd: 0, input_fresh_tokens: 0, proxy_requests: 0 }
    const treat = { spend_usd: 0, input_fresh_tokens: 0, proxy_requests: 0 }
    for (let k = 0; k < trials; k++) {
      if (rng.nextFloat() < x.p[0]) rb++
      if (rng.nextFloat() < x.p[1]) rt++
      for (const m of RATIO_KEYS) {
        base[m] += x.mean[m][0] * attempt(0, sb)
        treat[m] += x.mean[m][1] * attempt(1, st)
      }
    }
    out.push({
      instance: x.id,
      base: cell(rb, trials, base),
      treat: cell(rt, trials, treat),
      outcome: true,
      cost: true,
      quarantined: false,
    })
  }
  return out
}
