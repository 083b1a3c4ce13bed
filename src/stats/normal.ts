/**
 * The standard normal distribution: CDF Φ and quantile Φ⁻¹, both to about double precision.
 */

const INV_SQRT_TWO_PI = 1 / Math.sqrt(2 * Math.PI)
const MILLS_TERMS = 100

/**
 * Φ(x) = P(Z ≤ x) for the standard normal; the tail min(Φ(x), 1 − Φ(x)) is computed directly, never as
 * 1 − (something near 1), so Φ(−8) keeps full relative precision.
 * Sources: for |x| < 3, Hart et al. (1968) "Computer Approximations", algorithm 5666, in the
 * double-precision form of G. West (2005), "Better approximations to cumulative normal functions",
 * Wilmott Magazine (relative error of the tail ≤ 2e-14); for |x| ≥ 3, Laplace's continued fraction
 * for the Mills ratio, 1 − Φ(x) = φ(x) / (x + 1/(x + 2/(x + 3/(x + …)))), evaluated bottom-up with
 * 100 terms (full double precision for x ≥ 3). Underflows to 0 below x ≈ −38.5.
 */
export function normalCdf(x: number): number {
  if (Number.isNaN(x)) throw new RangeError('normalCdf: x must be a number, got NaN')
  const ax = Math.abs(x)
  let tail: number
  if (ax === Number.POSITIVE_INFINITY) {
    tail = 0
  } else if (ax < 3) {
    let num = 0.0352624965998911 * ax + 0.700383064443688
    num = num * ax + 6.37396220353165
    num = num * ax + 33.912866078383
    num = num * ax + 112.079291497871
    num = num * ax + 221.213596169931
    num = num * ax + 220.206867912376
    let den = 0.0883883476483184 * ax + 1.75566716318264
    den = den * ax + 16.064177579207
    den = den * ax + 86.7807322029461
    den = den * ax + 296.564248779674
    den = den * ax + 637.333633378831
    den = den * ax + 793.826512519948
    den = den * ax + 440.413735824752
    tail = (Math.exp(-0.5 * ax * ax) * num) / den
  } else {
    let cf = ax
    for (let k = MILLS_TERMS; k >= 1; k--) cf = ax + k / cf
    tail = (INV_SQRT_TWO_PI * Math.exp(-0.5 * ax * ax)) / cf
  }
  return x > 0 ? 1 - tail : tail
}

// Wichura (1988), Algorithm AS 241 "The percentage points of the normal distribution", Applied
// Statistics 37(3):477–484, PPND16: three rational approximations of degree 7, accurate to about
// 1 part in 1e16. Coefficients are listed from the constant term upwards, as the nearest doubles
// to the published 20-digit values.
const CENTRAL_NUM = [
  3.3871328727963665, 133.14166789178438, 1971.5909503065513, 13731.69376550946, 45921.95393154987,
  67265.7709270087, 33430.57558358813, 2509.0809287301227,
]
const CENTRAL_DEN = [
  1, 42.31333070160091, 687.1870074920579, 5394.196021424751, 21213.794301586597, 39307.89580009271,
  28729.085735721943, 5226.495278852854,
]
const INTERMEDIATE_NUM = [
  1.4234371107496835, 4.630337846156546, 5.769497221460691, 3.6478483247632045, 1.2704582524523684,
  0.2417807251774506, 0.022723844989269184, 0.0007745450142783414,
]
const INTERMEDIATE_DEN = [
  1, 2.053191626637759, 1.6763848301838038, 0.6897673349851, 0.14810397642748008, 0.015198666563616457,
  0.0005475938084995345, 1.0507500716444169e-9,
]
const FAR_NUM = [
  6.657904643501103, 5.463784911164114, 1.7848265399172913, 0.29656057182850487, 0.026532189526576124,
  0.0012426609473880784, 0.000027115555687434876, 2.0103343992922881e-7,
]
const FAR_DEN = [
  1, 0.599832206555888, 0.1369298809227358, 0.014875361290850615, 0.0007868691311456133,
  0.000018463183175100548, 1.421511758316446e-7, 2.0442631033899397e-15,
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
