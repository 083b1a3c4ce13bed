/**
 * Benjamini–Hochberg (1995) step-up adjustment ("Controlling the false discovery rate", Journal of the
 * Royal Statistical Society B 57:289–300): controls the expected share of false rejections among the
 * rejections for independent or positively dependent tests; offered beside Holm when a report states
 * many comparisons × metrics. Sorting the m p-values ascending, p₍ⱼ₎ is adjusted to
 * min_{i ≥ j} min(1, m·p₍ᵢ₎ / i) and rejected when the adjusted value is ≤ α (R's p.adjust "BH").
 * Reference: [0.01, 0.04, 0.03, 0.005] → [0.02, 0.04, 0.04, 0.02].
 */

import type { HolmResult } from './holm.js'
import { assertOpenUnit, assertProbability } from './types.js'

/** BH-adjusted p-values and reject flags at `alpha`, in input order (same shape as Holm's result). */
export function benjaminiHochberg(pValues: readonly number[], alpha = 0.05): HolmResult {
  assertOpenUnit('benjaminiHochberg', 'alpha', alpha)
  pValues.forEach((p, i) => {
    assertProbability('benjaminiHochberg', `pValues[${i}]`, p)
  })
  const m = pValues.length
  const order = pValues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i)
  const adjusted = new Array<number>(m).fill(1)
  let running = 1
  for (let rank = m - 1; rank >= 0; rank--) {
    const { p, i } = order[rank] as { p: number; i: number }
    running = Math.min(running, Math.min(1, (m * p) / (rank + 1)))
    adjusted[i] = running
  }
  return { adjusted, reject: adjusted.map((p) => p <= alpha), alpha }
}
