/**
 * Cost per resolution, per arm (statistics.md, "Cost per resolution"). Three different questions:
 * - expected cost per attempted instance = mean spend over all blocks (every attempt summed);
 * - portfolio cost per resolution = Σ spend / Σ resolved, the cost of one resolution across the panel;
 * - cost conditional on success = mean spend over resolved blocks only, reported separately.
 * Inputs: one entry per complete block; spend ≥ 0 in one currency unit (results are in that unit);
 * resolved ≥ 0 (0/1, or a count of resolved attempts). The between-arm ratio with its paired
 * bootstrap interval is `bootstrapCostPerResolutionRatio` in bootstrap.ts.
 */

import {
  assertFiniteArray,
  assertSameLength,
  defined,
  type Maybe,
  type Numbers,
  undefinedBecause,
} from './types.js'

function check(where: string, spend: Numbers, resolved?: Numbers): void {
  assertFiniteArray(where, 'spend', spend, true)
  if (resolved !== undefined) {
    assertSameLength(where, spend, resolved, ['spend', 'resolved'])
    assertFiniteArray(where, 'resolved', resolved, true)
  }
}

/** Mean spend over all blocks. Null with "no blocks" on empty input. */
export function expectedCostPerAttempt(spend: Numbers): Maybe<number> {
  check('expectedCostPerAttempt', spend)
  if (spend.length === 0) return undefinedBecause('no blocks')
  let total = 0
  for (let i = 0; i < spend.length; i++) total += spend[i]!
  return defined(total / spend.length)
}

/** Σ spend / Σ resolved over the blocks of one arm. Null with "no resolutions" when Σ resolved = 0. */
export function portfolioCostPerResolution(spend: Numbers, resolved: Numbers): Maybe<number> {
  check('portfolioCostPerResolution', spend, resolved)
  let totalSpend = 0
  let totalResolved = 0
  for (let i = 0; i < spend.length; i++) {
    totalSpend += spend[i]!
    totalResolved += resolved[i]!
  }
  if (totalResolved === 0) return undefinedBecause('no resolutions')
  return defined(totalSpend / totalResolved)
}

/** Mean spend over blocks with resolved > 0. Null with "no resolutions" when there are none. */
export function costConditionalOnSuccess(spend: Numbers, resolved: Numbers): Maybe<number> {
  check('costConditionalOnSuccess', spend, resolved)
  let total = 0
  let count = 0
  for (let i = 0; i < spend.length; i++) {
    if (resolved[i]! > 0) {
      total += spend[i]!
      count++
    }
  }
  if (count === 0) return undefinedBecause('no resolutions')
  return defined(total / count)
}
