/**
 * E-value for the discordant signs, for sequential monitoring (statistics.md, "Decisions").
 *
 * Each discordant pair is treatment-only with probability θ; H0: θ = ½. Mixing the likelihood ratio
 * over a uniform Beta(1, 1) prior on θ (Robbins' method of mixtures; Ramdas, Grünwald, Vovk & Shafer
 * 2023, "Game-theoretic statistics and safe anytime-valid inference", Statistical Science 38:576) gives
 *   E = ∫₀¹ θ^c (1 − θ)^b dθ / 2^{−n_d} = 2^{n_d} · b! · c! / (n_d + 1)!,  n_d = b + c,
 * a non-negative martingale under H0 in the order the pairs arrive, so P(sup E ≥ 1/α) ≤ α (Ville).
 * It is two-sided (symmetric in b and c). Independent confirmation runs multiply e-values.
 * Reference: (1,7) → 3.5556; (0,7) → 16; (0,8) → 28.444; (2,12) → 12.003; (5,20) → 24.291.
 */

import { wilson } from './difference.js'
import { normalQuantile } from './normal.js'
import { logFactorial } from './special.js'
import { assertCount } from './types.js'

export interface DiscordantEValue {
  /** E, or null when it exceeds the double range (see logE). */
  readonly e: number | null
  /** ln E, always finite. */
  readonly logE: number
  readonly b: number
  readonly c: number
  readonly reason: string | null
}

/**
 * Beta(1,1)-mixture e-value 2^{n_d}·b!·c!/(n_d + 1)! for b baseline-only and c treatment-only wins,
 * computed in log space. E = 1 when b = c = 0. Throws a RangeError for negative or non-integer counts.
 */
export function discordantEValue(b: number, c: number): DiscordantEValue {
  assertCount('discordantEValue', 'b', b)
  assertCount('discordantEValue', 'c', c)
  const nd = b + c
  const logE = nd * Math.LN2 + logFactorial(b) + logFactorial(c) - logFactorial(nd + 1)
  const e = Math.exp(logE)
  if (!Number.isFinite(e)) return { e: null, logE, b, c, reason: 'E exceeds the double range; see logE' }
  return { e, logE, b, c, reason: null }
}

/**
 * One-sided likelihood-ratio e-value for a regression on the discordant signs, at a declared
 * alternative θ₁ ∈ (½, 1): each discordant pair is baseline-only (b) with probability θ; under H0
 * θ = ½ and
 *   E = (2θ₁)^b · (2(1 − θ₁))^c,
 * whose expectation under H0 is exactly 1 given the number of discordant pairs, so a product of such
 * e-values over successive runs is a test martingale and P(the product ever reaches 1/α) ≤ α (Ville).
 * It grows fastest (GROW, Kelly) when the true θ is θ₁ and still grows for any θ > ½ near it; evidence
 * of a treatment *advantage* (c > b) shrinks it. Shapes: counts in, E and ln E out (log space).
 * Reference (θ₁ = 0.6): (7, 0) → 1.2^7 = 3.583181; (10, 0) → 6.191736; (20, 5) → 1.2^20·0.8^5 = 12.5631;
 * (0, 7) → 0.8^7 = 0.2097152.
 * Throws a RangeError for negative or non-integer counts or θ₁ outside (½, 1).
 */
export function discordantLikelihoodRatio(b: number, c: number, theta1: number): DiscordantEValue {
  assertCount('discordantLikelihoodRatio', 'b', b)
  assertCount('discordantLikelihoodRatio', 'c', c)
  if (!(theta1 > 0.5 && theta1 < 1))
    throw new RangeError(`discordantLikelihoodRatio: θ₁ must be in (0.5, 1), got ${theta1}`)
  const logE = b * Math.log(2 * theta1) + c * Math.log(2 * (1 - theta1))
  const e = Math.exp(logE)
  if (!Number.isFinite(e)) return { e: null, logE, b, c, reason: 'E exceeds the double range; see logE' }
  return { e, logE, b, c, reason: null }
}

/**
 * The alternative θ₁ (share of discordant pairs that are baseline-only) of a resolve-rate deficit of
 * `deficitPp` points d: the smallest θ = p(1 − q) / (p(1 − q) + q(1 − p)), q = p − d, over resolve rates
 * p with independent cells, reached at p = (1 + d)/2: θ₁ = (1 + d)² / ((1 + d)² + (1 − d)²), capped at
 * 0.95. A 10-point deficit gives 1.21/2.02 = 0.59901. Throws a RangeError for a deficit not in (0, 100).
 */
export function deficitAlternative(deficitPp: number): number {
  if (!(deficitPp > 0 && deficitPp < 100))
    throw new RangeError(`deficitAlternative: deficit must be in (0, 100) points, got ${deficitPp}`)
  const d = deficitPp / 100
  return Math.min((1 + d) ** 2 / ((1 + d) ** 2 + (1 - d) ** 2), 0.95)
}

/**
 * The alternative θ₁ for the next run, from the discordance the earlier runs of the experiment
 * showed. A deficit of d points means P(b) − P(c) = d; with r = P(b) + P(c) the share of discordant
 * blocks, θ = P(b)/r = ½ + d/(2r). r is taken at the Wilson 95% upper bound of the earlier runs'
 * discordant blocks over their blocks (a larger r gives a smaller, safer θ₁: an alternative above the
 * truth makes the e-value shrink), floored at deficitAlternative(d) (independent cells at any resolve
 * rate) and capped at 0.95. With no earlier blocks it is deficitAlternative(d). Because it uses only
 * earlier runs, the product of the runs' e-values stays a test martingale. Counts in; throws a
 * RangeError for negative or non-integer counts, discordant > blocks, or a deficit not in (0, 100).
 * Example: 10 points after 60 discordant of 400 blocks (r̂ 0.15, Wilson upper 0.18831) → 0.76551.
 */
export function adaptiveAlternative(
  deficitPp: number,
  earlier: { discordant: number; blocks: number },
): number {
  const floor = deficitAlternative(deficitPp)
  assertCount('adaptiveAlternative', 'discordant', earlier.discordant)
  assertCount('adaptiveAlternative', 'blocks', earlier.blocks)
  if (earlier.discordant > earlier.blocks)
    throw new RangeError(
      `adaptiveAlternative: ${earlier.discordant} discordant blocks of ${earlier.blocks} blocks`,
    )
  if (earlier.blocks === 0) return floor
  const upper = wilson(earlier.discordant, earlier.blocks, normalQuantile(0.975))[1]
  const theta = 0.5 + deficitPp / 100 / (2 * upper)
  return Math.min(0.95, Math.max(floor, theta))
}
