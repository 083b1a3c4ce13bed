/**
 * Power of the exact McNemar test, the minimum detectable effect (MDE) for a panel, and Connor's
 * (1987) sample-size approximation.
 *
 * Model: each of n blocks is independently baseline-only with probability p10, treatment-only with
 * probability p01, concordant otherwise. The discordance rate is ψ = p10 + p01, and the difference in
 * resolve rate is δ = p01 − p10 (its size |p10 − p01| is what the MDE reports, in points).
 *
 * Power by enumeration (no simulation): the number of discordant pairs N_d ~ Binomial(n, ψ); given
 * N_d = m, the baseline-only count ~ Binomial(m, p10/ψ), and the two-sided test at level α rejects
 * when min(b, c) ≤ k*(m), the largest k whose exact (or mid-p) two-sided p-value is ≤ α, computed
 * exactly in BigInt (exact.ts). Power = Σ_m P(N_d = m)·P(min(b, c) ≤ k*(m) | m). Terms with
 * P(N_d = m) < 1e-20 are skipped (their total effect is below 1e-17).
 */

import { halfBinomialCounts, ratioToNumber } from './exact.js'
import { normalQuantile } from './normal.js'
import { logChoose, logFactorialTable } from './special.js'
import { assertCount, assertOpenUnit, assertProbability } from './types.js'

export interface McNemarPowerInput {
  /** Blocks (pairs) in the panel. */
  readonly n: number
  /** P(baseline resolved, treatment not) per block. */
  readonly p10: number
  /** P(treatment resolved, baseline not) per block. */
  readonly p01: number
  /** Two-sided significance level (default 0.05). */
  readonly alpha?: number
  /** Use the mid-p test's rejection region instead of the exact test's (default false). */
  readonly midP?: boolean
}

/**
 * P(X = j) for X ~ Binomial(m, p), including p = 0 and p = 1 (no 0·log 0). `logP` = ln p and
 * `log1mP` = ln(1 − p), computed once per p by the caller.
 */
function binomialPmf(m: number, j: number, p: number, logP: number, log1mP: number): number {
  if (p === 0) return j === 0 ? 1 : 0
  if (p === 1) return j === m ? 1 : 0
  return Math.exp(logChoose(m, j) + j * logP + (m - j) * log1mP)
}

const critCache = new Map<string, Int32Array>()

/**
 * k*(m) for m = 0..n: the largest k < m/2 with two-sided p(k, m − k) ≤ α, or −1 if none.
 * The decision at each k is the exact one (BigInt sums rounded once, `exactDecision`); a double
 * approximation makes it without BigInt when it is more than 1e-6 (relative) away from α — its
 * error is below 1e-8 for m ≤ 100,000 — so the result is the same, in O(n²) floating-point steps.
 * Cached per (n, α, midP).
 */
export function criticalValues(n: number, alpha: number, midP: boolean): Int32Array {
  const key = `${n}:${alpha}:${midP}`
  const hit = critCache.get(key)
  if (hit !== undefined) return hit
  const crit = new Int32Array(n + 1)
  crit[0] = -1
  for (let m = 1; m <= n; m++) crit[m] = criticalValue(m, alpha, midP)
  if (critCache.size > 32) critCache.clear()
  critCache.set(key, crit)
  return crit
}

/** Relative distance from α within which the floating-point tail is not trusted to decide. */
const CRITICAL_BAND = 1e-6
/** Largest m for which the floating-point tail's error is known to stay far inside the band. */
const CRITICAL_FAST_MAX_M = 100_000

function criticalValue(m: number, alpha: number, midP: boolean): number {
  const lf = m <= CRITICAL_FAST_MAX_M && alpha >= 1e-200 ? logFactorialTable(m) : null
  const logTotal = m * Math.LN2
  let cumulative = 0
  let crit = -1
  for (let k = 0; 2 * k < m; k++) {
    let exceeds: boolean
    if (lf) {
      // P(X = k) and the two-sided tail for X ~ Binomial(m, ½), in doubles.
      const term = Math.exp(lf[m]! - lf[k]! - lf[m - k]! - logTotal)
      cumulative += term
      const p = midP ? 2 * cumulative - term : 2 * cumulative
      if (p > alpha * (1 + CRITICAL_BAND)) exceeds = true
      else if (p < alpha * (1 - CRITICAL_BAND)) exceeds = false
      else exceeds = exactDecision(m, k, alpha, midP)
    } else exceeds = exactDecision(m, k, alpha, midP)
    if (exceeds) break
    crit = k
  }
  return crit
}

/** Whether the exact two-sided p at (k, m − k), summed in BigInt and rounded once, exceeds α. */
function exactDecision(m: number, k: number, alpha: number, midP: boolean): boolean {
  const { cumulative, atK, total } = halfBinomialCounts(m, k)
  const numerator = midP ? 2n * cumulative - atK : 2n * cumulative
  return ratioToNumber(numerator, total) > alpha
}

function checkPowerInput(where: string, input: McNemarPowerInput): { alpha: number; midP: boolean } {
  assertCount(where, 'n', input.n)
  assertProbability(where, 'p10', input.p10)
  assertProbability(where, 'p01', input.p01)
  if (input.p10 + input.p01 > 1 + 1e-12) {
    throw new RangeError(`${where}: p10 + p01 must be ≤ 1, got ${input.p10 + input.p01}`)
  }
  const alpha = input.alpha ?? 0.05
  assertOpenUnit(where, 'alpha', alpha)
  return { alpha, midP: input.midP ?? false }
}

function powerWith(n: number, p10: number, p01: number, crit: Int32Array): number {
  const psi = Math.min(1, p10 + p01)
  if (psi === 0) return 0
  const pi = p10 / psi
  const logPsi = Math.log(psi)
  const log1mPsi = Math.log1p(-psi)
  const logPi = Math.log(pi)
  const log1mPi = Math.log1p(-pi)
  // The pmf below, spelled out over a table of ln k! for speed: the same operations in the same
  // order as binomialPmf(m, j, pi) = exp((ln m! − ln j! − ln (m − j)!) + j·ln pi + (m − j)·ln(1 − pi)).
  const lf = pi > 0 && pi < 1 ? logFactorialTable(n) : null
  let power = 0
  for (let m = 1; m <= n; m++) {
    const k = crit[m]!
    if (k < 0) continue
    const weight = binomialPmf(n, m, psi, logPsi, log1mPsi)
    if (weight < 1e-20) continue
    let reject = 0
    if (lf) {
      const lm = lf[m]!
      for (let j = 0; j <= k; j++) {
        const lj = lf[j]!
        const lmj = lf[m - j]!
        reject +=
          Math.exp(lm - lj - lmj + j * logPi + (m - j) * log1mPi) +
          Math.exp(lm - lmj - lj + (m - j) * logPi + j * log1mPi)
      }
    } else {
      for (let j = 0; j <= k; j++)
        reject += binomialPmf(m, j, pi, logPi, log1mPi) + binomialPmf(m, m - j, pi, logPi, log1mPi)
    }
    power += weight * reject
  }
  return Math.min(1, power)
}

/**
 * Power of the two-sided exact McNemar test (or its mid-p version) by enumeration: the probability of
 * p ≤ α for n blocks with discordant-cell probabilities p10 and p01. In [0, 1]; 0 when p10 = p01 = 0.
 * Reference (statistics.md): n = 50, p10 = 0.20, p01 = 0.05 → 0.4775 (mid-p 0.5734).
 * Throws a RangeError for invalid n, probabilities or α.
 */
export function mcnemarPower(input: McNemarPowerInput): number {
  const { alpha, midP } = checkPowerInput('mcnemarPower', input)
  return powerWith(input.n, input.p10, input.p01, criticalValues(input.n, alpha, midP))
}

export interface MdeInput {
  /** Complete blocks in the panel. */
  readonly n: number
  /** Observed baseline-only wins (used for the default discordance rate). */
  readonly b?: number
  /** Observed treatment-only wins (used for the default discordance rate). */
  readonly c?: number
  /** Assumed discordance rate ψ = p10 + p01 in [0, 1]; default the observed (b + c)/n. */
  readonly discordanceRate?: number
  /** Two-sided level (default 0.05). */
  readonly alpha?: number
  /** Target power (default 0.8). */
  readonly power?: number
  /** Use the mid-p test (default false: the exact test). */
  readonly midP?: boolean
}

export interface MdeResult {
  /** Smallest |p10 − p01| detectable, in percentage points; null when none is. */
  readonly points: number | null
  /** The discordant-cell probabilities at the MDE (p10 ≥ p01; by symmetry either direction). */
  readonly p10: number | null
  readonly p01: number | null
  /** Power actually reached at the reported MDE (≥ the target). */
  readonly achievedPower: number | null
  readonly n: number
  readonly discordanceRate: number
  readonly alpha: number
  readonly targetPower: number
  readonly midP: boolean
  /** The assumption, in words, for the report. */
  readonly assumption: string
  readonly reason: string | null
}

/**
 * Minimum detectable effect of a panel of n blocks.
 * Definition: the smallest difference in resolve rate |p10 − p01|, in percentage points, that the
 * two-sided exact McNemar test at level α (default 0.05) detects with probability ≥ the target power
 * (default 0.8), assuming the discordance rate ψ = p10 + p01 is fixed at `discordanceRate` (default:
 * the observed (b + c)/n). Found by bisection on δ ∈ [0, ψ] with p10 = (ψ + δ)/2, p01 = (ψ − δ)/2
 * (power rises with δ at fixed ψ), to 1e-6 points. Null with a reason when ψ = 0 or when even
 * δ = ψ (every discordant pair in one direction) does not reach the target.
 * A non-significant result smaller than the MDE is not evidence of parity.
 * Throws a RangeError for invalid counts or rates, or when neither discordanceRate nor b and c are given.
 */
export function minimumDetectableEffect(input: MdeInput): MdeResult {
  const where = 'minimumDetectableEffect'
  const { n } = input
  assertCount(where, 'n', n)
  const alpha = input.alpha ?? 0.05
  const targetPower = input.power ?? 0.8
  const midP = input.midP ?? false
  assertOpenUnit(where, 'alpha', alpha)
  assertOpenUnit(where, 'power', targetPower)
  let psi: number
  let source: string
  if (input.discordanceRate !== undefined) {
    assertProbability(where, 'discordanceRate', input.discordanceRate)
    psi = input.discordanceRate
    source = 'assumed'
  } else {
    if (input.b === undefined || input.c === undefined) {
      throw new RangeError(`${where}: give discordanceRate, or the observed b and c`)
    }
    assertCount(where, 'b', input.b)
    assertCount(where, 'c', input.c)
    if (input.b + input.c > n) throw new RangeError(`${where}: b + c exceeds n`)
    psi = n === 0 ? 0 : (input.b + input.c) / n
    source = `observed (${input.b} + ${input.c})/${n}`
  }
  const test = midP ? 'mid-p McNemar' : 'exact McNemar'
  const assumption =
    `smallest |difference in resolve rate| detected by the two-sided ${test} test at α = ${alpha} with ` +
    `power ${targetPower}, for ${n} blocks, assuming a discordance rate of ${psi} (${source})`
  const base = { n, discordanceRate: psi, alpha, targetPower, midP, assumption }
  const none = { points: null, p10: null, p01: null, achievedPower: null }
  if (n === 0) return { ...base, ...none, reason: 'no blocks' }
  if (psi === 0) {
    return {
      ...base,
      ...none,
      reason: 'discordance rate 0: no discordant pairs expected; give an assumed rate',
    }
  }
  const crit = criticalValues(n, alpha, midP)
  const powerAt = (delta: number): number =>
    powerWith(n, (psi + delta) / 2, Math.max(0, (psi - delta) / 2), crit)
  const best = powerAt(psi)
  if (best < targetPower) {
    return {
      ...base,
      ...none,
      reason: `not detectable: even with every discordant pair in one direction the power is ${best.toFixed(4)}`,
    }
  }
  const { hi, hiPower } = bisectMde(powerAt, psi, best, targetPower)
  return {
    ...base,
    points: hi * 100,
    p10: (psi + hi) / 2,
    p01: Math.max(0, (psi - hi) / 2),
    achievedPower: hiPower,
    reason: null,
  }
}

/**
 * How far from the target a computed power must be for the decision at other effects to follow from
 * it: far above the computed power's error. Each term's exponent holds three values of ln k!, at most
 * ln n! (about 1.05e6 at n = 100,000) and each within about 1e-16 of itself (lnGamma agrees with a
 * compensated sum of logarithms to that), so each term is within about 5e-10 of its exact value at
 * that n, and the power, a sum of such terms of total at most 1, is too.
 */
const POWER_MARGIN = 1e-8
/** Regula falsi steps at most before the bisection (it needs 3 to 8 on the panels tested). */
const BRACKET_STEPS = 30

/**
 * The bisection of minimumDetectableEffect: δ ∈ [0, ψ] halved until (hi − lo)·100 ≤ 1e-6, moving hi
 * to each midpoint whose computed power reaches the target, else lo — the same midpoints, decisions
 * and result as evaluating the power at every midpoint (tested against that plain bisection, also on
 * flat stretches of the power curve and targets within rounding of a computed power), with about 40%
 * of the evaluations at the usual α and power.
 * The exact power rises with δ at fixed ψ, and the computed one is within POWER_MARGIN / 2 of it on
 * any panel that can be enumerated. So a midpoint at or above an effect whose computed power is
 * ≥ target + POWER_MARGIN reaches the target, and one at or below an effect whose computed power is
 * ≤ target − POWER_MARGIN does not: those decisions are taken without evaluating; every other
 * midpoint is evaluated. The effects that decide come first from regula falsi (the Illinois variant)
 * on the probit of the power, which is nearly linear in δ and so closes in on the crossing in a few
 * evaluations, and from two probes beside the crossing once it is found, then from the midpoints
 * evaluated.
 */
function bisectMde(
  powerAt: (delta: number) => number,
  psi: number,
  best: number,
  target: number,
): { hi: number; hiPower: number } {
  const evaluated = new Map<number, number>([[psi, best]])
  // The largest effect known not to reach the target, and the smallest known to reach it.
  let below = Number.NEGATIVE_INFINITY
  let above = Number.POSITIVE_INFINITY
  const power = (delta: number): number => {
    let p = evaluated.get(delta)
    if (p === undefined) {
      p = powerAt(delta)
      evaluated.set(delta, p)
    }
    if (p <= target - POWER_MARGIN && delta > below) below = delta
    if (p >= target + POWER_MARGIN && delta < above) above = delta
    return p
  }
  power(psi) // already evaluated: only records ψ as deciding, when its power is a margin above
  const probit = (p: number) => normalQuantile(Math.min(1 - 1e-15, Math.max(1e-300, p)))
  let a = 0
  let pa = power(0)
  let b = psi
  let pb = best
  if (pa < target) {
    const goal = probit(target)
    let fa = probit(pa) - goal
    let fb = probit(pb) - goal
    let side = 0
    for (let step = 0; step < BRACKET_STEPS && b - a > 1e-10; step++) {
      let x = (a * fb - b * fa) / (fb - fa)
      if (!(x > a && x < b)) x = (a + b) / 2
      const px = power(x)
      if (Math.abs(px - target) < POWER_MARGIN) {
        // At the crossing, within the margin: effects a few margins' worth of slope to either side
        // decide nearly every midpoint (each probe only narrows the midpoints left to evaluate).
        const d = (4 * POWER_MARGIN * (b - a)) / (pb - pa)
        if (x + d < b) power(x + d)
        if (x - d > a) power(x - d)
        break
      }
      if (px >= target) {
        b = x
        pb = px
        fb = probit(px) - goal
        if (side === 1) fa /= 2
        side = 1
      } else {
        a = x
        pa = px
        fa = probit(px) - goal
        if (side === -1) fb /= 2
        side = -1
      }
    }
  }
  let lo = 0
  let hi = psi
  while ((hi - lo) * 100 > 1e-6) {
    const mid = (lo + hi) / 2
    const reaches = mid >= above ? true : mid <= below ? false : power(mid) >= target
    if (reaches) hi = mid
    else lo = mid
  }
  return { hi, hiPower: power(hi) }
}

export interface ConnorInput {
  readonly p10: number
  readonly p01: number
  /** Two-sided level (default 0.05). */
  readonly alpha?: number
  /** Target power (default 0.8). */
  readonly power?: number
}

export interface ConnorResult {
  /** Pairs needed, rounded up; null when p10 = p01. */
  readonly n: number | null
  /** The unrounded value of the formula. */
  readonly exact: number | null
  readonly reason: string | null
}

/**
 * Connor (1987), "Sample size for testing differences in proportions for the paired-sample design",
 * Biometrics 43:207–211: n = [z_{1−α/2}·√ψ + z_{power}·√(ψ − δ²)]² / δ², ψ = p10 + p01, δ = p10 − p01,
 * rounded up. Reference: p10 = 0.10, p01 = 0.05 → 469; 0.20 / 0.05 → 85. Null with a reason when
 * p10 = p01 (no difference to detect). Throws a RangeError for invalid probabilities or levels.
 */
export function connorSampleSize(input: ConnorInput): ConnorResult {
  const where = 'connorSampleSize'
  assertProbability(where, 'p10', input.p10)
  assertProbability(where, 'p01', input.p01)
  const alpha = input.alpha ?? 0.05
  const power = input.power ?? 0.8
  assertOpenUnit(where, 'alpha', alpha)
  assertOpenUnit(where, 'power', power)
  const psi = input.p10 + input.p01
  const delta = input.p10 - input.p01
  if (psi > 1 + 1e-12) throw new RangeError(`${where}: p10 + p01 must be ≤ 1, got ${psi}`)
  if (delta === 0) return { n: null, exact: null, reason: 'p10 = p01: no difference to detect' }
  const root =
    normalQuantile(1 - alpha / 2) * Math.sqrt(psi) + normalQuantile(power) * Math.sqrt(psi - delta * delta)
  const exact = (root * root) / (delta * delta)
  return { n: Math.ceil(exact), exact, reason: null }
}
