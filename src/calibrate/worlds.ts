import type { RatioMetric } from '../detect/effects.js'
import type { SeededRng } from '../stats/index.js'
import {
  beta,
  NO_EFFECT,
  normal,
  parametricWorld,
  RATIO_KEYS,
  simId,
  type TrueEffects,
  type World,
  type WorldInstance,
} from './scenario.js'

/**
 * The family of cost worlds calibration runs every rule through (issue: the uniform multiplier with
 * equal noise hides what the rules test). Each world gives every ratio resource the same structure
 * (independent levels per resource), so one simulation measures the three ratio rules; the true ratio
 * of means of a world is exact by construction (the treatment means are scaled to it per world):
 *  - uniform: treatment mean = R × baseline mean on every instance;
 *  - overhead: treatment mean = baseline mean + a fixed cost o per attempt, o = (R − 1)·mean(baseline),
 *    so cheap instances cost relatively more (per-block median ratio above R);
 *  - runaway-instances: 5% of the instances (at least one) carry the whole excess (R − 1)·Σbaseline,
 *    the rest cost the same in both arms;
 *  - runaway-attempts: every instance R×, but a treatment attempt costs 20× with probability q = 5%
 *    (mean-preserving: a heavy tail around the same mean);
 *  - heterogeneous: instance i's ratio is exp(0.7·Zᵢ) rescaled so the total ratio is R;
 *  - unequal noise: uniform R with run-to-run σ differing between the arms.
 * Baseline levels: ln mean ~ N(0, 1); resolve propensities Beta(0.5, 0.5) (no deficit) unless the
 * world is a resolve-rate world.
 */
export interface WorldSpec {
  name: string
  /** One phrase for the table. */
  label: string
  /** The ratio every resource has, or null for a resolve-rate world. */
  ratio: number | null
  /** The resolve-rate deficit in points (resolve-rate worlds), else 0. */
  deficitPp: number
  make: (n: number, rng: SeededRng) => World
}

type Shape = (base: number[], ratio: number, rng: SeededRng) => number[]

const uniform: Shape = (base, r) => base.map((b) => r * b)

const overhead: Shape = (base, r) => {
  const o = ((r - 1) * base.reduce((s, b) => s + b, 0)) / base.length
  return base.map((b) => b + o)
}

const runawayInstances: Shape = (base, r, rng) => {
  const k = Math.max(1, Math.round(0.05 * base.length))
  const extra = ((r - 1) * base.reduce((s, b) => s + b, 0)) / k
  const picked = new Set<number>()
  while (picked.size < Math.min(k, base.length)) picked.add(rng.nextInt(base.length))
  return base.map((b, i) => (picked.has(i) ? b + extra : b))
}

function heterogeneous(sd: number): Shape {
  return (base, r, rng) => {
    const raw = base.map((b) => b * Math.exp(sd * normal(rng)))
    const scale = (r * base.reduce((s, b) => s + b, 0)) / raw.reduce((s, x) => s + x, 0)
    return raw.map((x) => x * scale)
  }
}

const SCALE: Record<RatioMetric, number> = { spend_usd: 1, input_fresh_tokens: 1000, proxy_requests: 10 }

type Ratios = Record<RatioMetric, number>

function same(r: number): Ratios {
  return { spend_usd: r, input_fresh_tokens: r, proxy_requests: r }
}

function shaped(
  shape: Shape,
  ratio: Ratios,
  noise: [number, number],
  runaway?: World['runaway'],
): (n: number, rng: SeededRng) => World {
  return (n, rng) => {
    const p = Array.from({ length: n }, () => beta(0.5, 0.5, rng))
    const mean = {} as Record<RatioMetric, { base: number[]; treat: number[] }>
    for (const m of RATIO_KEYS) {
      const base = Array.from({ length: n }, () => SCALE[m] * Math.exp(normal(rng)))
      mean[m] = { base, treat: shape(base, ratio[m], rng) }
    }
    const instances: WorldInstance[] = p.map((pi, i) => ({
      id: simId(i),
      p: [pi, pi],
      mean: Object.fromEntries(
        RATIO_KEYS.map((m) => [m, [mean[m].base[i] as number, mean[m].treat[i] as number]]),
      ) as WorldInstance['mean'],
    }))
    return { instances, noise, ...(runaway ? { runaway } : {}) }
  }
}

export function resolveWorld(deficitPp: number, noise: number): (n: number, rng: SeededRng) => World {
  const effects: TrueEffects = { ...NO_EFFECT, deficitPp }
  return (n, rng) => parametricWorld({ n, noise }, effects, rng)
}

const RUNAWAY = { q: [0, 0.05] as [number, number], factor: 20 }

/**
 * The null worlds (true ratio of means at or below each rule's threshold θ): a confirmation there is
 * false. `below` worlds sit that far under θ (fixed overhead at 1.37× and 1.49× for θ = 1.5).
 */
export function nullWorlds(theta: Ratios): WorldSpec[] {
  const t = theta.spend_usd
  const at = theta
  const minus = (d: number): Ratios => ({
    spend_usd: theta.spend_usd - d,
    input_fresh_tokens: theta.input_fresh_tokens - d,
    proxy_requests: theta.proxy_requests - d,
  })
  const w = (name: string, label: string, ratio: Ratios, make: WorldSpec['make']): WorldSpec => ({
    name,
    label,
    ratio: ratio.spend_usd,
    deficitPp: 0,
    make,
  })
  const fmt = (x: number) => Number(x.toFixed(2))
  return [
    w('aa', 'A/A, σ 0.35', same(1), shaped(uniform, same(1), [0.35, 0.35])),
    w('uniform-at-threshold', `uniform ${t}×, σ 0.35`, at, shaped(uniform, at, [0.35, 0.35])),
    w('uniform-at-threshold-noisy', `uniform ${t}×, σ 1.0`, at, shaped(uniform, at, [1, 1])),
    w(
      'overhead-below-threshold',
      `fixed overhead, ${fmt(t - 0.13)}×`,
      minus(0.13),
      shaped(overhead, minus(0.13), [0.35, 0.35]),
    ),
    w(
      'overhead-just-below-threshold',
      `fixed overhead, ${fmt(t - 0.01)}×`,
      minus(0.01),
      shaped(overhead, minus(0.01), [0.35, 0.35]),
    ),
    w('overhead-at-threshold', `fixed overhead, ${t}×`, at, shaped(overhead, at, [0.35, 0.35])),
    w(
      'runaway-instances-at-threshold',
      `5% runaway instances, ${t}×`,
      at,
      shaped(runawayInstances, at, [0.35, 0.35]),
    ),
    w(
      'runaway-attempts-at-threshold',
      `5% runaway attempts (20×), ${t}×`,
      at,
      shaped(uniform, at, [0.35, 0.35], RUNAWAY),
    ),
    w(
      'heterogeneous-at-threshold',
      `heterogeneous (sd 0.7), ${t}×`,
      at,
      shaped(heterogeneous(0.7), at, [0.35, 0.35]),
    ),
    w(
      'unequal-noise-base-at-threshold',
      `uniform ${t}×, σ 1.0 baseline / 0.35 treatment`,
      at,
      shaped(uniform, at, [1, 0.35]),
    ),
    w(
      'unequal-noise-treat-at-threshold',
      `uniform ${t}×, σ 0.35 baseline / 1.0 treatment`,
      at,
      shaped(uniform, at, [0.35, 1]),
    ),
  ]
}

/** Worlds with a real effect (power). */
export function powerWorlds(): WorldSpec[] {
  const w = (name: string, label: string, ratio: number, make: WorldSpec['make']): WorldSpec => ({
    name,
    label,
    ratio,
    deficitPp: 0,
    make,
  })
  const two = same(2)
  return [
    w('uniform-2x', 'uniform 2×, σ 0.35', 2, shaped(uniform, two, [0.35, 0.35])),
    w('uniform-2x-noisy', 'uniform 2×, σ 0.7', 2, shaped(uniform, two, [0.7, 0.7])),
    w('uniform-2x-very-noisy', 'uniform 2×, σ 1.0', 2, shaped(uniform, two, [1, 1])),
    w('overhead-2x', 'fixed overhead, 2×', 2, shaped(overhead, two, [0.35, 0.35])),
    w('runaway-instances-2x', '5% runaway instances, 2×', 2, shaped(runawayInstances, two, [0.35, 0.35])),
    w('runaway-attempts-2x', '5% runaway attempts (20×), 2×', 2, shaped(uniform, two, [0.35, 0.35], RUNAWAY)),
    w('heterogeneous-2x', 'heterogeneous (sd 0.7), 2×', 2, shaped(heterogeneous(0.7), two, [0.35, 0.35])),
    w('unequal-noise-2x', 'uniform 2×, σ 1.0 baseline / 0.35 treatment', 2, shaped(uniform, two, [1, 0.35])),
  ]
}

/** A uniform-multiplier world at `ratio` and noise σ (the recommendation's world). */
export function uniformWorld(ratio: number, sigma: number): WorldSpec['make'] {
  return shaped(uniform, same(ratio), [sigma, sigma])
}

/** Resolve-rate worlds: A/A and true deficits of 10 and 20 points (costs A/A). */
export function resolveWorlds(): WorldSpec[] {
  return [0, 10, 20].map((d) => ({
    name: d === 0 ? 'resolve-aa' : `resolve-deficit-${d}`,
    label: d === 0 ? 'resolve rate A/A' : `resolve-rate deficit ${d} points`,
    ratio: null,
    deficitPp: d,
    make: resolveWorld(d, 0.35),
  }))
}
