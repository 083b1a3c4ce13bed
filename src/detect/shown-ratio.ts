import { pairedLogSigma } from '../stats/index.js'
import type { RatioMetric } from './effects.js'
import { metricColumns, type PairedBlock } from './pairs.js'

export interface ShownRatio {
  /** The ratio of totals of the held-out blocks, Σt / Σb. */
  raw: number
  /** `raw` divided by 1 + the baseline total's squared coefficient of variation under run noise. */
  ratio: number
  /** The divisor's reciprocal (ratio = raw × factor, ≤ 1). */
  factor: number
  /** The baseline's per-attempt run-to-run σ (log scale) the correction used; null: not measured. */
  sigma: number | null
}

/** Mean trials per block of one arm (1 when the cells do not say). */
function trialsOf(pairs: readonly PairedBlock[], arm: 'base' | 'treat'): number {
  let s = 0
  let n = 0
  for (const p of pairs) {
    const k = p[arm]?.trials
    if (k && k > 0) {
      s += k
      n++
    }
  }
  return n > 0 ? s / n : 1
}

/**
 * The ratio of totals shown after a confirmation, on rerun data the decision never used (`held`),
 * with a ratio's own bias under run-to-run noise taken out. Given the panel, the treatment total is
 * an unbiased sum, but the baseline total sits in the denominator, so E[Σt / Σb] ≈ (μt / μb)·(1 + CV²),
 * CV² = Var(Σb) / (Σb)² (a first-order expansion; up to +6% at a per-attempt σ of 1.0 over 40 blocks
 * of two trials). Var(Σb) follows each block's lognormal run noise, h·μᵢ²·(e^{σ²} − 1) over its h
 * trials, with σ the baseline's per-attempt σ measured on the log scale between the first run and
 * the held-out trials of the same blocks (stats/totals-null.ts `pairedLogSigma`) and μᵢ² read from
 * the observed block means less their own noise. The correction is first order: where one instance
 * carries a large share of the baseline (40% of it at σ 1.0), part of the bias remains (measured in
 * test/detect/shown-ratio.test.ts). Without σ (under two blocks measured in both), the raw ratio is
 * shown (factor 1). Null when the held-out baseline total is not positive (pure).
 */
export function shownRatio(
  first: readonly PairedBlock[],
  held: readonly PairedBlock[],
  metric: RatioMetric,
): ShownRatio | null {
  const h = metricColumns([...held], metric)
  let sb = 0
  let st = 0
  let sb2 = 0
  for (let i = 0; i < h.base.length; i++) {
    const b = h.base[i] as number
    sb += b
    sb2 += b * b
    st += h.treat[i] as number
  }
  if (!(sb > 0) || !Number.isFinite(sb) || !Number.isFinite(st)) return null
  const raw = st / sb
  const f = metricColumns([...first], metric)
  const at = new Map(f.instances.map((id, i) => [id, i]))
  const k1 = trialsOf(first, 'base')
  const k2 = trialsOf(held, 'base')
  // pairedLogSigma reads sums over each block's trials.
  const sigma = pairedLogSigma(
    f.base.map((x) => x * k1),
    h.base.map((x) => x * k2),
    h.instances.map((id) => at.get(id) ?? -1),
    k1,
    k2,
  )
  if (sigma === null) return { raw, ratio: raw, factor: 1, sigma: null }
  // Per-block variance of a k2-trial mean over the squared mean: v = (e^{σ²} − 1) / k2.
  const v = Math.expm1(sigma * sigma) / k2
  // v / (1 + v) stays finite (≤ 1) however large the measured noise.
  const share = Number.isFinite(v) ? v / (1 + v) : 1
  const cv2 = (sb2 / (sb * sb)) * share
  const factor = 1 / (1 + cv2)
  if (!Number.isFinite(factor)) return { raw, ratio: raw, factor: 1, sigma: null }
  return { raw, ratio: raw * factor, factor, sigma }
}
