import type { RatioMetric } from '../detect/effects.js'
import type { PairedBlock } from '../detect/pairs.js'
import type { InstanceCell } from '../records/comparison.js'
import type { SeededRng } from '../stats/index.js'

/**
 * Seeded simulated experiments for calibration: a "world" of instances with a latent resolve
 * propensity and a cost level per metric, and independent runs drawn from it (a first run, then a
 * rerun of the blocks a confirmation design selects). Runs are PairedBlock[], the shape the detect
 * rules and the confirmation designs read. Pure given the rng.
 *
 * Model (no pilot): instance i resolves with probability p_i ~ Beta(κ·r, κ·(1 − r)) for the baseline
 * and p_i·(r − δ)/r for the treatment (a mean deficit of exactly δ), κ = 1 (instances mostly
 * always or never solved; A/A discordance ≈ 2·E[p(1 − p)] = 25% at r = 0.5); resource m of a run is
 * level_i,m · exp(σ·ε) for the baseline and ratio_m · level_i,m · exp(σ·ε′) for the treatment, with
 * ln level ~ N(0, 1) across instances (lognormal, σ = 1) and fresh ε, ε′ ~ N(0, 1) per run
 * (run-to-run noise σ, default 0.35 on the log scale). With a pilot the instances are its blocks
 * resampled (see pilot.ts).
 */

export const RATIO_KEYS: RatioMetric[] = ['spend_usd', 'input_fresh_tokens', 'proxy_requests']

export interface WorldInstance {
  id: string
  /** Baseline resolve propensity in [0, 1]. */
  p: number
  /** Cost level per resource (the scale of both cells before the ratio and noise). */
  level: Record<RatioMetric, number>
  /** This instance's own treatment/baseline ratio, multiplying the world's (heterogeneous effects). */
  ratio?: Partial<Record<RatioMetric, number>>
}

export interface TrueEffects {
  /** Mean resolve-rate deficit, in points (treatment − baseline = −deficitPp). */
  deficitPp: number
  /** True ratio of the treatment's resource to the baseline's, per metric. */
  ratio: Record<RatioMetric, number>
}

export interface World {
  instances: WorldInstance[]
  /** Mean baseline propensity (r). */
  rate: number
  /** Run-to-run noise on the log scale (σ). */
  noise: number
  effects: TrueEffects
}

export interface ParametricSpec {
  n: number
  /** Baseline resolve rate r (default 0.5). */
  rate?: number
  /** Beta concentration κ of the instance propensities (default 1). */
  concentration?: number
  /** Spread of ln(cost level) across instances (default 1, lognormal σ = 1). */
  instanceSd?: number
  /** Run-to-run noise on the log scale (default 0.35). */
  noise?: number
}

export const NO_EFFECT: TrueEffects = {
  deficitPp: 0,
  ratio: { spend_usd: 1, input_fresh_tokens: 1, proxy_requests: 1 },
}

/** A standard normal draw (Box–Muller on two uniforms of the stream). */
export function normal(rng: SeededRng): number {
  const u = 1 - rng.nextFloat()
  const v = rng.nextFloat()
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v)
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

function beta(a: number, b: number, rng: SeededRng): number {
  const x = gamma(a, rng)
  const y = gamma(b, rng)
  return x + y > 0 ? x / (x + y) : a / (a + b)
}

/** A parametric world of `spec.n` instances. */
export function parametricWorld(spec: ParametricSpec, effects: TrueEffects, rng: SeededRng): World {
  const rate = spec.rate ?? 0.5
  const k = spec.concentration ?? 1
  const sd = spec.instanceSd ?? 1
  const instances: WorldInstance[] = []
  for (let i = 0; i < spec.n; i++) {
    instances.push({
      id: `sim-${String(i + 1).padStart(4, '0')}`,
      p: beta(k * rate, k * (1 - rate), rng),
      level: {
        spend_usd: Math.exp(sd * normal(rng)),
        input_fresh_tokens: 1000 * Math.exp(sd * normal(rng)),
        proxy_requests: 10 * Math.exp(sd * normal(rng)),
      },
    })
  }
  return { instances, rate, noise: spec.noise ?? 0.35, effects }
}

function cell(resolved: boolean, values: Record<RatioMetric, number>): InstanceCell {
  return {
    outcome: resolved ? 'resolved' : 'unresolved',
    exit_class: 'clean',
    trials: 1,
    resolved_trials: resolved ? 1 : 0,
    attempts: 1,
    coverage: 'complete',
    spend_usd: values.spend_usd,
    proxy_requests: values.proxy_requests,
    input_tokens: null,
    input_fresh_tokens: values.input_fresh_tokens,
    cache_read_tokens: null,
    cache_write_tokens: null,
    output_tokens: null,
    wall_s: null,
  }
}

/** One independent run of `ids` (every block complete): fresh outcomes and costs for both cells. */
export function drawRun(world: World, ids: readonly string[] | null, rng: SeededRng): PairedBlock[] {
  const wanted = ids ? new Set(ids) : null
  const e = world.effects
  const scale = world.rate > 0 ? Math.max(0, world.rate - e.deficitPp / 100) / world.rate : 1
  const out: PairedBlock[] = []
  for (const x of world.instances) {
    if (wanted && !wanted.has(x.id)) continue
    const baseResolved = rng.nextFloat() < x.p
    const treatResolved = rng.nextFloat() < Math.min(1, x.p * scale)
    const base = {} as Record<RatioMetric, number>
    const treat = {} as Record<RatioMetric, number>
    for (const m of RATIO_KEYS) {
      base[m] = x.level[m] * Math.exp(world.noise * normal(rng))
      treat[m] = e.ratio[m] * (x.ratio?.[m] ?? 1) * x.level[m] * Math.exp(world.noise * normal(rng))
    }
    out.push({
      instance: x.id,
      base: cell(baseResolved, base),
      treat: cell(treatResolved, treat),
      outcome: true,
      cost: true,
      quarantined: false,
    })
  }
  return out
}
