import { logChoose, regularizedIncompleteBeta } from '../stats/index.js'

/**
 * Exact power of the fixed-size one-sided McNemar test (treatment worse) on N blocks whose two cells
 * resolve independently, and its critical values. Computed, not simulated:
 *   power = Σ_n P(N_d = n) · P(Bin(n, θ) ≥ k_n),  N_d ~ Bin(N, p_b + p_c), θ = p_b / (p_b + p_c),
 * k_n the smallest b with P(Bin(n, ½) ≥ b) ≤ α (the exact test's rejection region). Terms of N_d
 * below 1e-300 relative weight are skipped. Probabilities in, a probability out. Pure.
 */

/** ln(eᵃ + eᵇ), exact when either is −Infinity. */
function logAddExp(a: number, b: number): number {
  const m = Math.max(a, b)
  return m === Number.NEGATIVE_INFINITY ? m : m + Math.log(Math.exp(a - m) + Math.exp(b - m))
}

/** P(Bin(n, p) ≥ k) = I_p(k, n − k + 1) (the regularized incomplete beta). */
function upperTail(n: number, p: number, k: number): number {
  if (k <= 0) return 1
  if (k > n) return 0
  return regularizedIncompleteBeta(p, k, n - k + 1)
}

/**
 * The smallest b with an exact one-sided binomial (McNemar) p-value P(Bin(n, ½) ≥ b) ≤ α; n + 1 when
 * no b rejects. Throws a RangeError for α outside (0, 1) or a negative n.
 */
export function mcnemarCriticalB(n: number, alpha: number): number {
  if (!(alpha > 0 && alpha < 1))
    throw new RangeError(`mcnemarCriticalB: alpha must be in (0, 1), got ${alpha}`)
  if (!(Number.isInteger(n) && n >= 0)) throw new RangeError(`mcnemarCriticalB: n must be a count, got ${n}`)
  const la = Math.log(alpha) + 1e-12
  // The tail grows as b falls: walk down from n while the tail still rejects.
  let b = n + 1
  let tail = Number.NEGATIVE_INFINITY
  while (b > 0) {
    const next = logAddExp(tail, logChoose(n, b - 1) - n * Math.LN2)
    if (next > la) break
    tail = next
    b--
  }
  return b
}

/**
 * Power of the exact one-sided McNemar at α on `blocks` blocks, each baseline-only with probability
 * `pb` and treatment-only with `pc`. Throws a RangeError for probabilities outside [0, 1] or pb + pc > 1.
 */
export function fixedMcNemarPower(blocks: number, pb: number, pc: number, alpha: number): number {
  if (!(pb >= 0 && pc >= 0 && pb + pc <= 1))
    throw new RangeError(`fixedMcNemarPower: pb = ${pb}, pc = ${pc} are not discordance probabilities`)
  const r = pb + pc
  if (r === 0) return 0
  const theta = pb / r
  const lr = Math.log(r)
  const l1r = r === 1 ? Number.NEGATIVE_INFINITY : Math.log1p(-r)
  let power = 0
  for (let n = 0; n <= blocks; n++) {
    const lw = logChoose(blocks, n) + n * lr + (blocks - n === 0 ? 0 : (blocks - n) * l1r)
    if (lw < -700) continue
    power += Math.exp(lw) * upperTail(n, theta, mcnemarCriticalB(n, alpha))
  }
  return Math.min(1, power)
}
