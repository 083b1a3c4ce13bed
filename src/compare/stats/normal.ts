/**
 * The standard normal distribution: CDF Φ and quantile Φ⁻¹, both to about double precision.
 */

/**
 * Φ(x) = P(Z ≤ x) for the standard normal.
 * Source: Hart et al. (1968) "Computer Approximations", algorithm 5666 for the lower tail, in the
 * double-precision form given by G. West (2005), "Better approximations to cumulative normal
 * functions", Wilmott Magazine: a rational function of |x| for |x| < 7.07, a continued fraction
 * beyond, and 0 past |x| = 37 (where Φ(−x) is below 1e-300). Absolute error about 1e-15; the tails are
 * computed directly, never as 1 − (something near 1).
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) throw new RangeError('normalCdf: x must be a number, got NaN')
  const ax = Math.abs(x)
  let tail: number
  if (ax > 37) {
    tail = 0
  } else {
    const e = Math.exp(-0.5 * ax * ax)
    if (ax < 7.07106781186547) {
      let num = 3.52624965998911e-2 * ax + 0.700383064443688
      num = num * ax + 6.37396220353165
      num = num * ax + 33.912866078383
      num = num * ax + 112.079291497871
      num = num * ax + 221.213596169931
      num = num * ax + 220.206867912376
      let den = 8.83883476483184e-2 * ax + 1.75566716318264
      den = den * ax + 16.064177579207
      den = den * ax + 86.7807322029461
      den = den * ax + 296.564248779674
      den = den * ax + 637.333633378831
      den = den * ax + 793.826512519948
      den = den * ax + 440.413735824752
      tail = (e * num) / den
    } else {
      let cf = ax + 0.65
      cf = ax + 4 / cf
      cf = ax + 3 / cf
      cf = ax + 2 / cf
      cf = ax + 1 / cf
      tail = e / cf / 2.506628274631
    }
  }
  return x > 0 ? 1 - tail : tail
}

// Wichura (1988), Algorithm AS 241 "The percentage points of the normal distribution", Applied
// Statistics 37(3):477–484, PPND16: three rational approximations of degree 7, accurate to about
// 1 part in 1e16. Coefficients are listed from the constant term upwards.
const CENTRAL_NUM = [
  3.387132872796366608, 133.14166789178437745, 1971.5909503065514427, 13731.693765509461125,
  45921.953931549871457, 67265.770927008700853, 33430.575583588128105, 2509.0809287301226727,
]
const CENTRAL_DEN = [
  1, 42.313330701600911252, 687.1870074920579083, 5394.1960214247511077, 21213.794301586595867,
  39307.89580009271061, 28729.085735721942674, 5226.495278852854561,
]
const INTERMEDIATE_NUM = [
  1.42343711074968357734, 4.6303378461565452959, 5.7694972214606914055, 3.64784832476320460504,
  1.27045825245236838258, 0.24178072517745061177, 0.0227238449892691845833, 7.7454501427834140764e-4,
]
const INTERMEDIATE_DEN = [
  1, 2.05319162663775882187, 1.6763848301838038494, 0.68976733498510000455, 0.14810397642748007459,
  0.0151986665636164571966, 5.475938084995344946e-4, 1.05075007164441684324e-9,
]
const FAR_NUM = [
  6.6579046435011037772, 5.4637849111641143699, 1.7848265399172913358, 0.29656057182850489123,
  0.026532189526576123093, 0.0012426609473880784386, 2.71155556874348757815e-5, 2.01033439929228813265e-7,
]
const FAR_DEN = [
  1, 0.59983220655588793769, 0.13692988092273580531, 0.0148753612908506148525, 7.868691311456132591e-4,
  1.8463183175100546818e-5, 1.4215117583164458887e-7, 2.04426310338993978564e-15,
]

/** Evaluates Σ c[i]·x^i by Horner's rule. */
function polynomial(c: readonly number[], x: number): number {
  let acc = 0
  for (let i = c.length - 1; i >= 0; i--) acc = acc * x + c[i]!
  return acc
}

/**
 * Φ⁻¹(p): the standard normal quantile, for 0 < p < 1.
 * Source: Wichura (1988), Algorithm AS 241 (PPND16), relative error about 1e-16 — the algorithm
 * behind R's `qnorm`. Throws a RangeError for p outside (0, 1): the quantile would be ±Infinity.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile: p must be strictly between 0 and 1, got ${p}`)
  const q = p - 0.5
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q
    return (q * polynomial(CENTRAL_NUM, r)) / polynomial(CENTRAL_DEN, r)
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p))
  let z: number
  if (r <= 5) {
    r -= 1.6
    z = polynomial(INTERMEDIATE_NUM, r) / polynomial(INTERMEDIATE_DEN, r)
  } else {
    r -= 5
    z = polynomial(FAR_NUM, r) / polynomial(FAR_DEN, r)
  }
  return q < 0 ? -z : z
}
