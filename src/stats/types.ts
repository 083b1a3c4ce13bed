/**
 * Shared shapes and argument checks for the statistics library.
 *
 * House rule (statistics.md): no result ever holds NaN or Infinity. A value that is undefined for
 * the data at hand is `null` with a `reason` beside it. Arguments that can only come from a caller's
 * bug (negative counts, arrays of different lengths, non-finite measurements) throw a `RangeError`
 * whose message names the function and the argument.
 */

/** Any array-like of numbers: `number[]`, `readonly number[]`, `Float64Array`, … */
export type Numbers = ArrayLike<number>

/** A value that is either defined (`reason: null`) or undefined with a reason a person can read. */
export type Maybe<T> =
  | { readonly value: T; readonly reason: null }
  | { readonly value: null; readonly reason: string }

/** A defined `Maybe`. */
export function defined<T>(value: T): Maybe<T> {
  return { value, reason: null }
}

/** An undefined `Maybe`, with the reason it is undefined. */
export function undefinedBecause<T>(reason: string): Maybe<T> {
  return { value: null, reason }
}

/** Throws a RangeError unless `value` is a non-negative safe integer (a count). */
export function assertCount(where: string, name: string, value: number): void {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new RangeError(`${where}: ${name} must be a non-negative integer, got ${value}`)
  }
}

/** Throws a RangeError unless `value` is in the closed interval [0, 1]. */
export function assertProbability(where: string, name: string, value: number): void {
  if (!Number.isFinite(value) || value < 0 || value > 1) {
    throw new RangeError(`${where}: ${name} must be a probability in [0, 1], got ${value}`)
  }
}

/** Throws a RangeError unless 0 < value < 1 (confidence levels, significance levels). */
export function assertOpenUnit(where: string, name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0 || value >= 1) {
    throw new RangeError(`${where}: ${name} must be strictly between 0 and 1, got ${value}`)
  }
}

/** Throws a RangeError unless every element is finite (and, with `nonNegative`, ≥ 0). */
export function assertFiniteArray(where: string, name: string, xs: Numbers, nonNegative = false): void {
  for (let i = 0; i < xs.length; i++) {
    const x = xs[i]!
    if (!Number.isFinite(x) || (nonNegative && x < 0)) {
      const want = nonNegative ? 'finite and non-negative' : 'finite'
      throw new RangeError(`${where}: ${name}[${i}] must be ${want}, got ${x}`)
    }
  }
}

/** Throws a RangeError unless the two paired arrays have the same length (one entry per block). */
export function assertSameLength(
  where: string,
  a: Numbers,
  b: Numbers,
  names = ['baseline', 'treatment'],
): void {
  if (a.length !== b.length) {
    throw new RangeError(
      `${where}: ${names[0]} and ${names[1]} must have one entry per block (lengths ${a.length} and ${b.length})`,
    )
  }
}

/** Copies any array-like of numbers into a fresh Float64Array. */
export function toFloat64(xs: Numbers): Float64Array {
  const out = new Float64Array(xs.length)
  for (let i = 0; i < xs.length; i++) out[i] = xs[i]!
  return out
}
