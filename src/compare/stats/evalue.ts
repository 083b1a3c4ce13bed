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
