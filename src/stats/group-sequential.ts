/**
 * A one-sided group-sequential McNemar test with O'Brien–Fleming boundaries (O'Brien & Fleming 1979;
 * Jennison & Turnbull 2000, ch. 2) at K equally spaced looks, one look per weekly run.
 *
 * At look k (cumulative discordant counts b, baseline-only, and c, treatment-only) the statistic is
 * the continuity-corrected Z_k = (b − c − 1)/√(b + c), and the test rejects "no resolve-rate
 * difference" when Z_k ≥ C·√(K/k). Under H0 every discordant pair is a fair coin given the discordant
 * totals, so (Z_1 … Z_K) is approximately the standardized partial sums of a Brownian motion at
 * fractions k/K; C is the constant whose crossing probability under H0 is α at those fractions.
 * K is the fewest looks whose power at a true deficit δ reaches the target: with ψ the share of
 * discordant blocks, each look of n blocks adds a drift μ = δ·√n/√ψ to the partial sums. Both C and
 * the power are computed on PATHS seeded Brownian paths (common random numbers, so the power grows
 * with K exactly as the paths say); the Monte Carlo error of C's level is about ±0.15 points of α.
 * The plan depends only on n, ψ, δ, α and the target: with ψ taken from the first look's discordant
 * total (which, given that total, carries no information on the direction under H0), the level
 * holds. Pure and deterministic.
 */

import { normalQuantile } from './normal.js'
import { createRng } from './rng.js'

const PATHS = 20000
const SEED = 1

export interface ObfPlanInput {
  /** Outcome-complete blocks per look (the weekly panel). */
  blocksPerLook: number
  /** Share of discordant blocks ψ (clamped to [δ, 1]). */
  discordance: number
  /** Deficit the plan is powered for, in points (thresholds.resolved_deficit_pp). */
  deficitPp: number
  alpha: number
  /** Target power at the deficit, e.g. 0.9. */
  power: number
  /** Most looks allowed (e.g. 52 weekly runs). */
  maxLooks: number
}

export interface ObfPlan {
  looks: number
  /** C: the boundary at look k is C·√(looks/k). */
  constant: number
  blocks_per_look: number
  /** looks × blocks_per_look. */
  max_blocks: number
  discordance: number
  deficit_pp: number
  alpha: number
  power_target: number
  /** Power of the plan at the deficit, on the seeded paths (below the target only at maxLooks). */
  planned_power: number
}

/** Most looks a plan may have (the seeded paths' length). */
export const OBF_MAX_LOOKS = 64

/**
 * Seeded standard-normal increments, PATHS × OBF_MAX_LOOKS (Box–Muller), drawn once: every K reads
 * the first K increments of the same paths, so results never depend on the order of calls.
 */
let increments: Float64Array | null = null
function paths(): Float64Array {
  if (increments) return increments
  const rng = createRng(SEED)
  const out = new Float64Array(PATHS * OBF_MAX_LOOKS)
  for (let i = 0; i < out.length; i += 2) {
    const u = 1 - rng.nextFloat()
    const v = rng.nextFloat()
    const r = Math.sqrt(-2 * Math.log(u))
    out[i] = r * Math.cos(2 * Math.PI * v)
    out[i + 1] = r * Math.sin(2 * Math.PI * v)
  }
  increments = out
  return out
}

/** Largest partial sum over the first K looks of each path, with drift μ per look. */
function maxima(z: Float64Array, stride: number, K: number, mu: number): Float64Array {
  const out = new Float64Array(PATHS)
  for (let p = 0; p < PATHS; p++) {
    let s = 0
    let m = Number.NEGATIVE_INFINITY
    const base = p * stride
    for (let k = 0; k < K; k++) {
      s += (z[base + k] as number) + mu
      if (s > m) m = s
    }
    out[p] = m
  }
  return out
}

/**
 * The O'Brien–Fleming constant C for K equally spaced looks at one-sided α (never below the fixed
 * test's z₁₋α). Throws a RangeError for K < 1 or α not in (0, 1).
 */
const constants = new Map<string, number>()
export function obfConstant(K: number, alpha: number): number {
  if (!(Number.isSafeInteger(K) && K >= 1 && K <= OBF_MAX_LOOKS))
    throw new RangeError(`obfConstant: looks ${K} (1 to ${OBF_MAX_LOOKS})`)
  if (!(alpha > 0 && alpha < 1)) throw new RangeError(`obfConstant: alpha ${alpha}`)
  const key = `${K}:${alpha}`
  const known = constants.get(key)
  if (known !== undefined) return known
  const c = computeConstant(K, alpha)
  constants.set(key, c)
  return c
}

function computeConstant(K: number, alpha: number): number {
  if (K === 1) return normalQuantile(1 - alpha)
  const m = Array.from(maxima(paths(), OBF_MAX_LOOKS, K, 0)).sort((a, b) => a - b)
  const q = m[Math.min(PATHS - 1, Math.ceil((1 - alpha) * PATHS))] as number
  return Math.max(q / Math.sqrt(K), normalQuantile(1 - alpha))
}

/**
 * Power of K looks with constant C at drift μ per look, on the seeded paths; `shift` raises the
 * boundary of the partial sums (the continuity correction: 1/√(ψ·n) on that scale).
 */
export function obfPower(K: number, constant: number, mu: number, shift = 0): number {
  if (!(Number.isSafeInteger(K) && K >= 1 && K <= OBF_MAX_LOOKS)) throw new RangeError(`obfPower: looks ${K}`)
  const bound = constant * Math.sqrt(K) + shift
  const m = maxima(paths(), OBF_MAX_LOOKS, K, mu)
  let n = 0
  for (const x of m) if (x >= bound) n++
  return n / PATHS
}

/** The plan (see the file comment). Throws a RangeError for inputs out of range. */
export function planObf(o: ObfPlanInput): ObfPlan {
  const delta = o.deficitPp / 100
  if (!(delta > 0 && delta < 1)) throw new RangeError(`planObf: deficit ${o.deficitPp} pp`)
  if (!(Number.isSafeInteger(o.blocksPerLook) && o.blocksPerLook >= 1))
    throw new RangeError(`planObf: blocks per look ${o.blocksPerLook}`)
  if (!(o.power > 0 && o.power < 1)) throw new RangeError(`planObf: power ${o.power}`)
  if (!(Number.isSafeInteger(o.maxLooks) && o.maxLooks >= 1 && o.maxLooks <= OBF_MAX_LOOKS))
    throw new RangeError(`planObf: most looks ${o.maxLooks} (1 to ${OBF_MAX_LOOKS})`)
  const psi = Math.min(1, Math.max(delta, Number.isFinite(o.discordance) ? o.discordance : 1))
  const mu = (delta * Math.sqrt(o.blocksPerLook)) / Math.sqrt(psi)
  // Z_k = (b − c − 1)/√(b + c): on the partial-sum scale the −1 raises every boundary by 1/√(ψ·n).
  const shift = 1 / Math.sqrt(psi * o.blocksPerLook)
  let K = 1
  let C = obfConstant(1, o.alpha)
  let power = obfPower(1, C, mu, shift)
  while (power < o.power && K < o.maxLooks) {
    K++
    C = obfConstant(K, o.alpha)
    power = obfPower(K, C, mu, shift)
  }
  return {
    looks: K,
    constant: C,
    blocks_per_look: o.blocksPerLook,
    max_blocks: K * o.blocksPerLook,
    discordance: psi,
    deficit_pp: o.deficitPp,
    alpha: o.alpha,
    power_target: o.power,
    planned_power: power,
  }
}

/** One look: the statistic, its boundary, and whether it crosses. Pure. */
export function obfLook(
  b: number,
  c: number,
  look: number,
  plan: Pick<ObfPlan, 'looks' | 'constant'>,
): { z: number; bound: number; crosses: boolean } {
  const z = b + c > 0 ? (b - c - 1) / Math.sqrt(b + c) : 0
  const bound = plan.constant * Math.sqrt(plan.looks / Math.min(look, plan.looks))
  return { z, bound, crosses: z >= bound }
}
