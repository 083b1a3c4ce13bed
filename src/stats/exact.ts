/**
 * Exact Binomial(n, ½) tail sums in BigInt rational arithmetic.
 *
 * Under the null hypothesis of McNemar's test and of the sign test, the count of one kind of
 * discordant pair among n is Binomial(n, ½), so every probability is an integer count of subsets
 * over 2^n. We sum binomial coefficients exactly and round once, at the end, to the nearest double
 * (relative error ≤ 2^-52), however large n is. Probabilities below the smallest double (2^-1074)
 * come out as 0.
 */

/** Number of bits of a positive bigint. */
function bitLength(x: bigint): number {
  const approx = Number(x)
  if (approx >= 2 ** 1023) {
    const hex = x.toString(16)
    return 4 * (hex.length - 1) + 32 - Math.clz32(Number.parseInt(hex[0]!, 16))
  }
  // Number(x) is x rounded, so log2 may land one above the true length − 1: check with a shift.
  let bits = Math.floor(Math.log2(approx)) + 1
  while (bits > 1 && x >> BigInt(bits - 1) === 0n) bits--
  while (x >> BigInt(bits) !== 0n) bits++
  return bits
}

/** Multiplies `x` by 2^e without overflowing the power-of-two factor itself. */
function scaleByPowerOfTwo(x: number, e: number): number {
  let y = x
  let k = e
  while (k > 1000) {
    y *= 2 ** 1000
    k -= 1000
  }
  while (k < -1000) {
    y *= 2 ** -1000
    k += 1000
  }
  return y * 2 ** k
}

/**
 * num/den as the nearest double (to within one unit in the last place), for 0 ≤ num and 0 < den.
 * The quotient is taken on 64+ significant bits before the single rounding to 53 bits.
 */
export function ratioToNumber(num: bigint, den: bigint): number {
  if (den <= 0n) throw new RangeError(`ratioToNumber: denominator must be positive, got ${den}`)
  if (num < 0n) throw new RangeError(`ratioToNumber: numerator must be non-negative, got ${num}`)
  if (num === 0n) return 0
  const shift = 64 - (bitLength(num) - bitLength(den))
  const q = shift >= 0 ? (num << BigInt(shift)) / den : num / (den << BigInt(-shift))
  return scaleByPowerOfTwo(Number(q), -shift)
}

/** Counts for the lower tail of Binomial(n, ½) at k, as exact integers over `total` = 2^n. */
export interface HalfBinomialCounts {
  /** Σ_{i=0..k} C(n, i); 0 when k < 0, 2^n when k ≥ n. */
  readonly cumulative: bigint
  /** C(n, k); 0 when k < 0 or k > n. */
  readonly atK: bigint
  /** 2^n. */
  readonly total: bigint
}

/**
 * Exact lower-tail counts of Binomial(n, ½): P(X ≤ k) = cumulative/total, P(X = k) = atK/total.
 * Cost: k BigInt multiply-divides on numbers of about n bits.
 */
export function halfBinomialCounts(n: number, k: number): HalfBinomialCounts {
  const total = 1n << BigInt(n)
  if (k < 0) return { cumulative: 0n, atK: 0n, total }
  if (k >= n) return { cumulative: total, atK: k === n ? 1n : 0n, total }
  let term = 1n
  let cumulative = 1n
  const bn = BigInt(n)
  for (let i = 1; i <= k; i++) {
    const bi = BigInt(i)
    term = (term * (bn - bi + 1n)) / bi
    cumulative += term
  }
  return { cumulative, atK: term, total }
}

/** P(X ≤ k) for X ~ Binomial(n, ½), exact then rounded once. */
export function halfBinomialCdf(n: number, k: number): number {
  const { cumulative, total } = halfBinomialCounts(n, k)
  return ratioToNumber(cumulative, total)
}

/**
 * P(X ≥ k) for X ~ Binomial(n, ½), exact then rounded once. Uses the symmetry P(X ≥ k) = P(X ≤ n − k)
 * so that only the shorter tail is summed.
 */
export function halfBinomialSf(n: number, k: number): number {
  if (k <= 0) return 1
  if (k > n) return 0
  if (2 * k > n) return halfBinomialCdf(n, n - k)
  const { cumulative, total } = halfBinomialCounts(n, k - 1)
  return ratioToNumber(total - cumulative, total)
}
