import { describe, expect, it } from 'vitest'
import {
  costConditionalOnSuccess,
  expectedCostPerAttempt,
  portfolioCostPerResolution,
} from '../../../src/stats/cost-per-resolution.js'

describe('cost per resolution', () => {
  const spend = [2, 4, 6, 8]
  const resolved = [1, 0, 1, 0]

  it('three different questions, three different numbers', () => {
    expect(expectedCostPerAttempt(spend)).toEqual({ value: 5, reason: null })
    expect(portfolioCostPerResolution(spend, resolved)).toEqual({ value: 10, reason: null })
    expect(costConditionalOnSuccess(spend, resolved)).toEqual({ value: 4, reason: null })
  })

  it('no resolutions or no blocks → null with a reason', () => {
    expect(portfolioCostPerResolution(spend, [0, 0, 0, 0])).toEqual({ value: null, reason: 'no resolutions' })
    expect(costConditionalOnSuccess([], [])).toEqual({ value: null, reason: 'no resolutions' })
    expect(expectedCostPerAttempt([])).toEqual({ value: null, reason: 'no blocks' })
    expect(() => portfolioCostPerResolution([1], [1, 1])).toThrow(RangeError)
    expect(() => expectedCostPerAttempt([-1])).toThrow(RangeError)
  })
})
