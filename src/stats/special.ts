/**
 * Special functions: log-gamma, log-factorial, log-binomial coefficient, the regularized incomplete
 * beta function and Student's t distribution built on it.
 */

// Lanczos (1964) approximation with g = 7 and the 9 coefficients computed by P. Godfrey (2001,
// "A note on the computation of the convergent Lanczos complex Gamma approximation").
// Relative error about 1e-15 for x ≥ ½.
const LANCZOS_G = 7
const LANCZOS = [
  0.9999999999998099, 676.5203681218851, -1259.1392167224028, 771.3234287776531, -176.6150291621406,
  12.507343278686905, -0.13857109526572012, 0.000009984369578019572, 1.5056327351493116e-7,
]
const HALF_LOG_TWO_PI = 0.5 * Math.log(2 * Math.PI)

/**
 * ln Γ(x) for x > 0 (Lanczos approximation, g = 7, n = 9; relative error about 1e-15).
 * Throws a RangeError for x ≤ 0 or non-finite x.
 */
export function lnGamma(x: number): number {
  if (!Number.isFinite(x) || x <= 0) throw new RangeError(`lnGamma: x must be finite and > 0, got ${x}`)
  if (x < 0.5) {
    // Reflection: Γ(x)Γ(1 − x) = π / sin(πx).
    return Math.log(Math.PI / Math.sin(Math.PI * x)) - lnGamma(1 - x)
  }
  const z = x - 1
  let a = LANCZOS[0]!
  for (let i = 1; i < LANCZOS.length; i++) a += LANCZOS[i]! / (z + i)
  const t = z + LANCZOS_G + 0.5
  return HALF_LOG_TWO_PI + (z + 0.5) * Math.log(t) - t + Math.log(a)
}

// k! as doubles for k ≤ 170 (170! is the largest factorial below the double range).
const FACTORIALS: Float64Array = (() => {
  const f = new Float64Array(171)
  f[0] = 1
  for (let k = 1; k <= 170; k++) f[k] = f[k - 1]! * k
  return f
})()

// ln k! memoized below 2^20 (power by enumeration asks for the same few hundred values millions of
// times); the table grows on demand, NaN marking an entry not yet computed.
const LOG_FACTORIAL_TABLE_MAX = 1 << 20
let logFactorials = new Float64Array(0)

/** ln k! for a non-negative integer k (exact product to 170!, then ln Γ(k + 1)). */
export function logFactorial(k: number): number {
  if (!Number.isSafeInteger(k) || k < 0)
    throw new RangeError(`logFactorial: k must be a non-negative integer, got ${k}`)
  if (k >= LOG_FACTORIAL_TABLE_MAX) return logFactorialUncached(k)
  if (k >= logFactorials.length) {
    const grown = new Float64Array(Math.min(LOG_FACTORIAL_TABLE_MAX, Math.max(1024, 2 * k))).fill(Number.NaN)
    grown.set(logFactorials)
    logFactorials = grown
  }
  let v = logFactorials[k]!
  if (Number.isNaN(v)) {
    v = logFactorialUncached(k)
    logFactorials[k] = v
  }
  return v
}

/**
 * ln k! for k = 0..n as one array (entries equal to logFactorial(k)), for loops that need many; null
 * when n is too large to tabulate. The array is shared: read it, never write it.
 */
export function logFactorialTable(n: number): Float64Array | null {
  if (!Number.isSafeInteger(n) || n < 0 || n >= LOG_FACTORIAL_TABLE_MAX) return null
  for (let k = 0; k <= n; k++) {
    if (k >= logFactorials.length || Number.isNaN(logFactorials[k]!)) logFactorial(k)
  }
  return logFactorials
}

function logFactorialUncached(k: number): number {
  return k <= 170 ? Math.log(FACTORIALS[k]!) : lnGamma(k + 1)
}

/** ln C(n, k) for integers 0 ≤ k ≤ n; −Infinity is never returned (k outside [0, n] throws). */
export function logChoose(n: number, k: number): number {
  if (k < 0 || k > n) throw new RangeError(`logChoose: need 0 ≤ k ≤ n, got n=${n}, k=${k}`)
  return logFactorial(n) - logFactorial(k) - logFactorial(n - k)
}

const BETACF_EPS = 1e-16
const BETACF_TINY = 1e-300
const BETACF_MAX_ITERATIONS = 10_000

/**
 * Continued fraction for the incomplete beta function, evaluated by the modified Lentz method
 * (Lentz 1976; Thompson & Barnett 1986), as in Press et al., Numerical Recipes 3rd ed. §6.4 (`betacf`).
 */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const qab = a + b
  const qap = a + 1
  const qam = a - 1
  let c = 1
  let d = 1 - (qab * x) / qap
  if (Math.abs(d) < BETACF_TINY) d = BETACF_TINY
  d = 1 / d
  let h = d
  for (let m = 1; m <= BETACF_MAX_ITERATIONS; m++) {
    const m2 = 2 * m
    let aa = (m * (b - m) * x) / ((qam + m2) * (a + m2))
    d = 1 + aa * d
    if (Math.abs(d) < BETACF_TINY) d = BETACF_TINY
    c = 1 + aa / c
    if (Math.abs(c) < BETACF_TINY) c = BETACF_TINY
    d = 1 / d
    h *= d * c
    aa = (-(a + m) * (qab + m) * x) / ((a + m2) * (qap + m2))
    d = 1 + aa * d
    if (Math.abs(d) < BETACF_TINY) d = BETACF_TINY
    c = 1 + aa / c
    if (Math.abs(c) < BETACF_TINY) c = BETACF_TINY
    d = 1 / d
    const delta = d * c
    h *= delta
    if (Math.abs(delta - 1) < BETACF_EPS) break
  }
  return h
}

/**
 * Regularized incomplete beta function I_x(a, b) for 0 ≤ x ≤ 1, a > 0, b > 0.
 * Source: Press et al., Numerical Recipes 3rd ed. §6.4 (`betai`): the prefactor
 * x^a (1−x)^b / B(a, b) times a continued fraction, using the symmetry
 * I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges faster. Relative error about 1e-14.
 */
export function regularizedIncompleteBeta(x: number, a: number, b: number): number {
  if (!(a > 0) || !(b > 0) || !Number.isFinite(a) || !Number.isFinite(b)) {
    throw new RangeError(`regularizedIncompleteBeta: a and b must be finite and > 0, got a=${a}, b=${b}`)
  }
  if (!(x >= 0 && x <= 1)) throw new RangeError(`regularizedIncompleteBeta: x must be in [0, 1], got ${x}`)
  if (x === 0) return 0
  if (x === 1) return 1
  const logFront = lnGamma(a + b) - lnGamma(a) - lnGamma(b) + a * Math.log(x) + b * Math.log1p(-x)
  const front = Math.exp(logFront)
  if (x < (a + 1) / (a + b + 2)) return (front * betaContinuedFraction(x, a, b)) / a
  return 1 - (front * betaContinuedFraction(1 - x, b, a)) / b
}

/**
 * Two-sided tail probability of Student's t with `df` degrees of freedom: P(|T| ≥ |t|)
 * = I_{df/(df+t²)}(df/2, ½) (Numerical Recipes 3rd ed. §6.14). df > 0; t finite.
 */
export function studentTTwoSidedP(t: number, df: number): number {
  if (!Number.isFinite(t)) throw new RangeError(`studentTTwoSidedP: t must be finite, got ${t}`)
  if (!(df > 0) || !Number.isFinite(df))
    throw new RangeError(`studentTTwoSidedP: df must be finite and > 0, got ${df}`)
  const x = df / (df + t * t)
  return regularizedIncompleteBeta(x, df / 2, 0.5)
}

/** Cumulative distribution function of Student's t with `df` degrees of freedom, P(T ≤ t). */
export function studentTCdf(t: number, df: number): number {
  const tail = studentTTwoSidedP(t, df) / 2
  return t >= 0 ? 1 - tail : tail
}
