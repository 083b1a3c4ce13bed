/**
 * pass@k and pass^k from repeated trials per instance.
 *
 * Per instance: n trials were scheduled and c of them succeeded.
 * - pass@k (Chen et al. 2021, "Evaluating Large Language Models Trained on Code", unbiased estimator):
 *   the probability that at least one of k trials drawn without replacement from the n succeeds,
 *   1 − C(n − c, k)/C(n, k), which is 1 when n − c < k. Requires 1 ≤ k ≤ n.
 * - pass^k (Yao et al. 2024, τ-bench): the probability that all k drawn trials succeed,
 *   C(c, k)/C(n, k), which is 0 when c < k. Requires 1 ≤ k ≤ n.
 *
 * Denominator rule: n counts every scheduled trial of the instance. A trial lost to an infrastructure
 * error counts as a failure (it is in n, not in c); it is never silently dropped from n. The average
 * over instances divides by the number of instances passed in; if any instance has n < k the average
 * is null with a reason (such an instance is never dropped to make the average defined).
 */

import { assertCount, defined, type Maybe, undefinedBecause } from './types.js'

/** Trials of one instance: n scheduled, c succeeded. */
export interface TrialCounts {
  readonly n: number
  readonly c: number
}

function checkCounts(where: string, n: number, c: number, k: number): void {
  assertCount(where, 'n', n)
  assertCount(where, 'c', c)
  assertCount(where, 'k', k)
  if (c > n) throw new RangeError(`${where}: successes c=${c} exceed trials n=${n}`)
  if (k < 1) throw new RangeError(`${where}: k must be ≥ 1, got ${k}`)
}

function undefinedReason(n: number, k: number): string | null {
  if (n === 0) return 'no trials (n = 0)'
  if (k > n) return `k = ${k} exceeds the ${n} trials of the instance (needs k ≤ n)`
  return null
}

/**
 * Unbiased pass@k for one instance: 1 − C(n − c, k)/C(n, k), evaluated as 1 − Π_{i=n−c+1..n} (1 − k/i)
 * (Chen et al. 2021, numerically stable form). In [0, 1]. Null with a reason when n = 0 or k > n.
 * Throws a RangeError for negative or non-integer counts, c > n or k < 1.
 */
export function passAtK(n: number, c: number, k: number): Maybe<number> {
  checkCounts('passAtK', n, c, k)
  const reason = undefinedReason(n, k)
  if (reason !== null) return undefinedBecause(reason)
  if (n - c < k) return defined(1)
  let allFail = 1
  for (let i = n - c + 1; i <= n; i++) allFail *= 1 - k / i
  return defined(1 - allFail)
}

/**
 * pass^k for one instance: C(c, k)/C(n, k) = Π_{i=0..k−1} (c − i)/(n − i) (τ-bench). In [0, 1].
 * Null with a reason when n = 0 or k > n. Throws a RangeError for invalid counts as `passAtK`.
 */
export function passHatK(n: number, c: number, k: number): Maybe<number> {
  checkCounts('passHatK', n, c, k)
  const reason = undefinedReason(n, k)
  if (reason !== null) return undefinedBecause(reason)
  if (c < k) return defined(0)
  let allPass = 1
  for (let i = 0; i < k; i++) allPass *= (c - i) / (n - i)
  return defined(allPass)
}

/** An average of a per-instance estimator over instances, with its denominator stated. */
export interface AveragedPassK {
  /** Mean over instances, or null when undefined. */
  readonly value: number | null
  readonly k: number
  /** The denominator: number of instances averaged (every instance passed in). */
  readonly instances: number
  readonly reason: string | null
}

function average(
  where: string,
  estimator: (n: number, c: number, k: number) => Maybe<number>,
  instances: readonly TrialCounts[],
  k: number,
): AveragedPassK {
  if (!Number.isSafeInteger(k) || k < 1) throw new RangeError(`${where}: k must be an integer ≥ 1, got ${k}`)
  if (instances.length === 0) return { value: null, k, instances: 0, reason: 'no instances' }
  let sum = 0
  let undefinedCount = 0
  let firstReason: string | null = null
  for (const { n, c } of instances) {
    const r = estimator(n, c, k)
    if (r.value === null) {
      undefinedCount++
      firstReason ??= r.reason
    } else {
      sum += r.value
    }
  }
  if (undefinedCount > 0) {
    return {
      value: null,
      k,
      instances: instances.length,
      reason: `${where} undefined for ${undefinedCount} of ${instances.length} instances (${firstReason})`,
    }
  }
  return { value: sum / instances.length, k, instances: instances.length, reason: null }
}

/** Mean pass@k over instances (denominator: all instances given). See the module notes. */
export function meanPassAtK(instances: readonly TrialCounts[], k: number): AveragedPassK {
  return average('pass@k', passAtK, instances, k)
}

/** Mean pass^k over instances (denominator: all instances given). See the module notes. */
export function meanPassHatK(instances: readonly TrialCounts[], k: number): AveragedPassK {
  return average('pass^k', passHatK, instances, k)
}
