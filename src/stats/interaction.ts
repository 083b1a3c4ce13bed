/**
 * The harness × model interaction: a paired difference-in-differences of two paired binary
 * comparisons of the same pair of harnesses on two models, over the instances both models ran.
 *
 * For each shared instance i, with y = 1 when a cell resolves it (the block rule):
 *   d_A,i = y(treatment on A, i) − y(baseline on A, i)  ∈ {−1, 0, 1}
 *   d_B,i = y(treatment on B, i) − y(baseline on B, i)  ∈ {−1, 0, 1}
 *   D_i   = d_A,i − d_B,i                                ∈ {−2, …, 2}
 * The estimate is Î = (1/n) Σ D_i = gap_A − gap_B: the resolve-rate gap between the two harnesses on
 * model A minus the same gap on model B (percentage points / 100). Î = 0: the gap is the same on both
 * models; a gap that is positive on one model and negative on the other has reversed.
 *
 * Test (exact sign-flip randomization test of H0: D is symmetric about 0, no interaction): given the
 * |D_i|, each nonzero D_i is +|D_i| or −|D_i| with probability ½ independently, so with n₁ = #{|D_i| = 1}
 * and n₂ = #{|D_i| = 2} the sum S = Σ D_i = (2X₁ − n₁) + 2(2X₂ − n₂), X₁ ~ Bin(n₁, ½), X₂ ~ Bin(n₂, ½)
 * independent. p = P(|S| ≥ |s_obs|), summed exactly over the 2^(n₁+n₂) sign patterns in BigInt
 * arithmetic and rounded once. No nonzero D → p = 1.
 * Reference: D = [2, 2, 1, 1, 0, 0, −1, 2] → n₁ = 3, n₂ = 3, s = 7, P(S ≥ 7) = 4/64, p = 8/64 = 0.125.
 *
 * Interval: percentile bootstrap of the mean of D over instances (resampling instances keeps each
 * instance's four outcomes together), B resamples from the library's seeded generator.
 */

import { ratioToNumber } from './exact.js'
import { createRng } from './rng.js'
import { assertOpenUnit } from './types.js'

export interface InteractionOptions {
  /** Bootstrap resamples (≥ 1). */
  resamples: number
  seed: number
  /** Interval level, e.g. 0.95. */
  level: number
}

export interface InteractionResult {
  /** Shared instances. */
  readonly n: number
  /** Mean of d_A (treatment − baseline resolve rate on model A). */
  readonly gapA: number
  /** Mean of d_B. */
  readonly gapB: number
  /** Î = gapA − gapB. */
  readonly estimate: number
  /** Percentile bootstrap interval of Î; null when n = 0. */
  readonly interval: readonly [number, number] | null
  /** Exact two-sided sign-flip p-value; 1 when no D_i is nonzero. */
  readonly pTwoSided: number
  /** n₁ (|D| = 1) and n₂ (|D| = 2). */
  readonly nAbs1: number
  readonly nAbs2: number
  /** The gap's sign differs between the models (both nonzero). */
  readonly reverses: boolean
}

/** One shared instance: resolved flags of baseline and treatment on model A and on model B. */
export interface InteractionBlock {
  baseA: boolean
  treatA: boolean
  baseB: boolean
  treatB: boolean
}

const bit = (x: boolean) => (x ? 1 : 0)

/**
 * Paired difference-in-differences of resolve rates with its exact sign-flip test and bootstrap
 * interval (see the module comment for the formula). Pure and deterministic for given options.
 */
export function pairedInteraction(
  blocks: readonly InteractionBlock[],
  opts: InteractionOptions,
): InteractionResult {
  assertOpenUnit('pairedInteraction', 'level', opts.level)
  if (!Number.isInteger(opts.resamples) || opts.resamples < 1) {
    throw new RangeError(`pairedInteraction: resamples must be a positive integer, got ${opts.resamples}`)
  }
  const n = blocks.length
  const d = new Int8Array(n)
  let sumA = 0
  let sumB = 0
  let n1 = 0
  let n2 = 0
  blocks.forEach((b, i) => {
    const dA = bit(b.treatA) - bit(b.baseA)
    const dB = bit(b.treatB) - bit(b.baseB)
    sumA += dA
    sumB += dB
    d[i] = dA - dB
    const a = Math.abs(dA - dB)
    if (a === 1) n1++
    else if (a === 2) n2++
  })
  const s = sumA - sumB
  const gapA = n > 0 ? sumA / n : 0
  const gapB = n > 0 ? sumB / n : 0
  return {
    n,
    gapA,
    gapB,
    estimate: n > 0 ? s / n : 0,
    interval: n > 0 ? bootstrapMeanInterval(d, opts) : null,
    pTwoSided: signFlipP(n1, n2, s),
    nAbs1: n1,
    nAbs2: n2,
    reverses: gapA !== 0 && gapB !== 0 && Math.sign(gapA) !== Math.sign(gapB),
  }
}

/** Binomial coefficients C(n, 0..n) as BigInt. */
function binomials(n: number): bigint[] {
  const out = [1n]
  let term = 1n
  for (let i = 1; i <= n; i++) {
    term = (term * BigInt(n - i + 1)) / BigInt(i)
    out.push(term)
  }
  return out
}

/**
 * Exact P(|S| ≥ |s|) for S = (2X₁ − n₁) + 2(2X₂ − n₂), X₁ ~ Bin(n₁, ½), X₂ ~ Bin(n₂, ½) independent.
 */
export function signFlipP(n1: number, n2: number, s: number): number {
  const t = Math.abs(s)
  // No nonzero difference, or an observed sum of 0: every sign pattern is at least as extreme.
  if (n1 + n2 === 0 || t === 0) return 1
  const c1 = binomials(n1)
  const c2 = binomials(n2)
  // prefix[k] = Σ_{x<k} C(n1, x)
  const prefix: bigint[] = [0n]
  for (const c of c1) prefix.push((prefix[prefix.length - 1] as bigint) + c)
  const total1 = prefix[n1 + 1] as bigint
  let count = 0n
  for (let x2 = 0; x2 <= n2; x2++) {
    const s2 = 2 * (2 * x2 - n2)
    // S1 = 2x1 − n1 ≥ t − s2  ⇔  x1 ≥ ceil((t − s2 + n1) / 2)
    const hiFrom = Math.max(0, Math.ceil((t - s2 + n1) / 2))
    // S1 ≤ −t − s2  ⇔  x1 ≤ floor((−t − s2 + n1) / 2)
    const loTo = Math.min(n1, Math.floor((-t - s2 + n1) / 2))
    // t > 0: the two tails (S ≥ t, S ≤ −t) are disjoint.
    let ways = 0n
    if (hiFrom <= n1) ways += total1 - (prefix[hiFrom] as bigint)
    if (loTo >= 0) ways += prefix[loTo + 1] as bigint
    count += ways * (c2[x2] as bigint)
  }
  const total = 1n << BigInt(n1 + n2)
  return Math.min(1, ratioToNumber(count, total))
}

function bootstrapMeanInterval(d: Int8Array, opts: InteractionOptions): [number, number] {
  const n = d.length
  const rng = createRng(opts.seed)
  const idx = new Uint32Array(n)
  const means = new Float64Array(opts.resamples)
  for (let r = 0; r < opts.resamples; r++) {
    rng.fillIndices(idx, 0, n, n)
    let sum = 0
    for (let i = 0; i < n; i++) sum += d[idx[i] as number] as number
    means[r] = sum / n
  }
  means.sort()
  const a = (1 - opts.level) / 2
  const at = (q: number) =>
    means[Math.min(opts.resamples - 1, Math.max(0, Math.floor(q * opts.resamples)))] as number
  return [at(a), at(1 - a)]
}
