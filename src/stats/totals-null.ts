/**
 * A seeded parametric null distribution for a two-stage statistic of the ratio of totals, built from
 * the run-to-run noise the data reveal: blocks measured in both stages (a first run and a rerun of
 * the same block) show each arm's spread between two draws of the same block.
 *
 * Model (per arm a, per attempt): cost = μᵢₐ · exp(σₐ·ε − σₐ²/2), ε ~ N(0, 1), a block of k attempts
 * summing k such draws. σₐ is estimated on the log scale, where a tail the sample missed does not
 * bias it down as it does a raw variance: with k₁ and k₂ attempts per block in the two stages,
 * uₐᵢ = ln(x₁ᵢ/k₁) − ln(x₂ᵢ/k₂) has (Fenton–Wilkinson) variance v(k₁) + v(k₂) and mean (v(k₂) − v(k₁))/2,
 * v(k) = ln(1 + (e^{σ²} − 1)/k), and σₐ solves mean(uₐᵢ²) = v(k₁) + v(k₂) + ((v(k₂) − v(k₁))/2)².
 * Block means μ̂ᵢₐ are each block's observed cost per attempt over both stages; the treatment means
 * are rescaled so that Σμ̂ₜ = θ·Σμ̂_b exactly (the boundary of H0 Σt ≤ θ·Σb). B replicates of both
 * stages are drawn from that null and the same statistic computed on each; p = (1 + #{Z* ≥ Z}) / (B + 1).
 * The statistic (e.g. D̄ = mean of tᵢ − θ·bᵢ) is unchanged: only its null distribution comes from the
 * model. Pure given the seed.
 */

import { createRng, type SeededRng } from './rng.js'

export interface StageColumns {
  base: readonly number[]
  treat: readonly number[]
}

export interface TwoStageSample {
  first: StageColumns
  second: StageColumns
  /** For each second-stage block, the index of the same block in the first stage (or −1). */
  paired: readonly number[]
  /** Attempts per block and cell in each stage. */
  k1: number
  k2: number
}

export interface LognormalNull {
  p: number
  /** Estimated per-attempt log-scale noise [baseline, treatment]. */
  sigma: [number, number]
  resamples: number
}

function logVar(sigma2: number, k: number): number {
  return Math.log1p(Math.expm1(sigma2) / k)
}

function meanSquare(sigma2: number, k1: number, k2: number): number {
  const v1 = logVar(sigma2, k1)
  const v2 = logVar(sigma2, k2)
  return v1 + v2 + ((v2 - v1) / 2) ** 2
}

/** σ of one arm from the paired blocks' log ratios (null under two usable pairs). */
export function pairedLogSigma(
  x1: readonly number[],
  x2: readonly number[],
  paired: readonly number[],
  k1: number,
  k2: number,
): number | null {
  let ss = 0
  let m = 0
  paired.forEach((i, j) => {
    if (i < 0) return
    const a = x1[i] as number
    const b = x2[j] as number
    if (!(a > 0 && b > 0)) return
    ss += Math.log(a / k1 / (b / k2)) ** 2
    m++
  })
  if (m < 2) return null
  const target = ss / m
  if (!(target > 0)) return 0
  let lo = 0
  let hi = 1
  while (meanSquare(hi * hi, k1, k2) < target && hi < 20) hi *= 2
  for (let it = 0; it < 60; it++) {
    const mid = (lo + hi) / 2
    if (meanSquare(mid * mid, k1, k2) < target) lo = mid
    else hi = mid
  }
  return (lo + hi) / 2
}

function normalPair(rng: SeededRng): [number, number] {
  const u = 1 - rng.nextFloat()
  const v = rng.nextFloat()
  const r = Math.sqrt(-2 * Math.log(u))
  return [r * Math.cos(2 * Math.PI * v), r * Math.sin(2 * Math.PI * v)]
}

/**
 * The p of `statistic` (larger = more evidence against H0 Σt ≤ θ·Σb) under the lognormal null
 * fitted to `sample` (see the file comment). Null when σ cannot be estimated (under two blocks with
 * positive costs in both stages, per arm) or no baseline cost.
 */
export function lognormalNullP(
  sample: TwoStageSample,
  threshold: number,
  statistic: (first: StageColumns, second: StageColumns) => number,
  observed: number,
  options: { resamples?: number; seed?: number } = {},
): LognormalNull | null {
  const B = options.resamples ?? 199
  const { first, second, paired, k1, k2 } = sample
  const sb = pairedLogSigma(first.base, second.base, paired, k1, k2)
  const st = pairedLogSigma(first.treat, second.treat, paired, k1, k2)
  if (sb === null || st === null) return null
  const n1 = first.base.length
  const n2 = second.base.length
  const sumB = new Float64Array(n1)
  const sumT = new Float64Array(n1)
  const att = new Float64Array(n1)
  for (let i = 0; i < n1; i++) {
    sumB[i] = first.base[i] as number
    sumT[i] = first.treat[i] as number
    att[i] = k1
  }
  paired.forEach((i, j) => {
    if (i < 0) return
    sumB[i] = (sumB[i] as number) + (second.base[j] as number)
    sumT[i] = (sumT[i] as number) + (second.treat[j] as number)
    att[i] = (att[i] as number) + k2
  })
  const muB = new Float64Array(n1)
  const muT = new Float64Array(n1)
  let totB = 0
  let totT = 0
  for (let i = 0; i < n1; i++) {
    muB[i] = (sumB[i] as number) / (att[i] as number)
    muT[i] = (sumT[i] as number) / (att[i] as number)
    totB += muB[i] as number
    totT += muT[i] as number
  }
  if (!(totB > 0)) return null
  const scale = totT > 0 ? (threshold * totB) / totT : 0
  // A block with no treatment cost in either stage keeps none; the null total then rests on the others.
  for (let i = 0; i < n1; i++) muT[i] = (muT[i] as number) * scale
  // Second-stage blocks without a first-stage match take their own observed means.
  const mu2B = second.base.map((x, j) =>
    (paired[j] ?? -1) >= 0 ? (muB[paired[j] as number] as number) : x / k2,
  )
  const mu2T = second.treat.map((x, j) =>
    (paired[j] ?? -1) >= 0 ? (muT[paired[j] as number] as number) : (x / k2) * scale,
  )
  const rng = createRng((options.seed ?? 1) >>> 0)
  let spare: number | null = null
  const z = (): number => {
    if (spare !== null) {
      const s = spare
      spare = null
      return s
    }
    const [a, b] = normalPair(rng)
    spare = b
    return a
  }
  const draw = (mu: number, sigma: number, k: number): number => {
    if (!(mu > 0)) return 0
    let s = 0
    for (let r = 0; r < k; r++) s += Math.exp(sigma * z() - (sigma * sigma) / 2)
    return mu * s
  }
  const b1 = new Array<number>(n1)
  const t1 = new Array<number>(n1)
  const b2 = new Array<number>(n2)
  const t2 = new Array<number>(n2)
  let above = 0
  for (let r = 0; r < B; r++) {
    for (let i = 0; i < n1; i++) {
      b1[i] = draw(muB[i] as number, sb, k1)
      t1[i] = draw(muT[i] as number, st, k1)
    }
    for (let j = 0; j < n2; j++) {
      b2[j] = draw(mu2B[j] as number, sb, k2)
      t2[j] = draw(mu2T[j] as number, st, k2)
    }
    const zStar = statistic({ base: b1, treat: t1 }, { base: b2, treat: t2 })
    if (zStar >= observed) above++
  }
  return { p: (1 + above) / (B + 1), sigma: [sb, st], resamples: B }
}

/**
 * The standard deviation of one block's Dᵢ = tᵢ − θ·bᵢ under the lognormal noise model, averaged in
 * quadrature over the blocks: a block of k attempts with per-attempt mean μ has variance
 * k·μ²·(e^{σ²} − 1) per arm. μ is the block's observed cost per attempt × e^{g·σ²}: g = ½ takes the
 * observed value as the median of its draw (a block whose draw missed the tail is not read as cheap),
 * g = 0 as its mean. Null for no block.
 */
export function noiseModelSd(
  cols: StageColumns,
  k: number,
  sigma: [number, number],
  threshold: number,
  g: number,
): number | null {
  const n = cols.base.length
  if (n === 0) return null
  const [sb, st] = sigma
  const vb = Math.expm1(sb * sb)
  const vt = Math.expm1(st * st)
  const ib = Math.exp(g * sb * sb)
  const it = Math.exp(g * st * st)
  let v = 0
  for (let i = 0; i < n; i++) {
    const mb = ((cols.base[i] as number) / k) * ib
    const mt = ((cols.treat[i] as number) / k) * it
    v += k * (threshold * threshold * mb * mb * vb + mt * mt * vt)
  }
  return Math.sqrt(v / n)
}
