/**
 * Holm (1979) step-down adjustment for multiple tests ("A simple sequentially rejective multiple test
 * procedure", Scandinavian Journal of Statistics 6:65–70). Controls the family-wise error rate for
 * any dependence between the tests (cells × metrics).
 * Sorting the m p-values ascending, p₍ⱼ₎ is adjusted to max_{i ≤ j} min(1, (m − i + 1)·p₍ᵢ₎) and
 * rejected when the adjusted value is ≤ α. Adjusted values come back in the input order.
 * Reference: [0.01, 0.04, 0.03, 0.005] → [0.03, 0.06, 0.06, 0.02]; reject at 0.05: [T, F, F, T].
 */

import { assertOpenUnit, assertProbability } from './types.js'

export interface HolmResult {
  /** Holm-adjusted p-values, same order as the input. */
  readonly adjusted: number[]
  /** adjusted ≤ alpha, same order as the input. */
  readonly reject: boolean[]
  readonly alpha: number
}

/**
 * Holm step-down adjusted p-values and reject flags at `alpha` (default 0.05). Empty input gives
 * empty arrays. Throws a RangeError for p-values outside [0, 1] or alpha outside (0, 1).
 */
export function holm(pValues: readonly number[], alpha = 0.05): HolmResult {
  assertOpenUnit('holm', 'alpha', alpha)
  pValues.forEach((p, i) => {
    assertProbability('holm', `pValues[${i}]`, p)
  })
  const m = pValues.length
  // Stable ascending order, so tied p-values keep their input order.
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i)
  const adjusted = new Array<number>(m).fill(1)
  let running = 0
  order.forEach(({ p, i }, rank) => {
    running = Math.max(running, Math.min(1, (m - rank) * p))
    adjusted[i] = running
  })
  return { adjusted, reject: adjusted.map((p) => p <= alpha), alpha }
}
