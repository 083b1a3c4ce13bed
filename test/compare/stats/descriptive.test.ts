import { expect, describe as group, it } from 'vitest'
import { describe, QUANTILE_METHOD, quantile, quantileSorted } from '../../../src/stats/descriptive.js'

group('descriptive statistics', () => {
  it('n, mean, median, P90 (type 7) and total', () => {
    const s = describe([3, 1, 4, 1, 5, 9, 2, 6])
    expect(s).toMatchObject({
      n: 8,
      mean: 31 / 8,
      median: 3.5,
      total: 31,
      quantileMethod: QUANTILE_METHOD,
      reason: null,
    })
    expect(s.p90).toBeCloseTo(6.9, 12) // numpy.percentile([3,1,4,1,5,9,2,6], 90), to the last bit or so
  })

  it('type 7 quantiles match numpy.percentile', () => {
    const xs = [3, 1, 4, 1, 5, 9, 2, 6]
    const expected = [1, 1, 3.5, 6.9, 9]
    ;[0, 0.1, 0.5, 0.9, 1].forEach((p, i) => {
      expect(quantile(xs, p).value).toBeCloseTo(expected[i]!, 12)
    })
    expect(quantileSorted([10, 20], 0.25)).toBe(12.5)
  })

  it('one value: every statistic is that value', () => {
    expect(describe([7])).toMatchObject({ n: 1, mean: 7, median: 7, p90: 7, total: 7, reason: null })
  })

  it('empty input gives nulls with a reason, never NaN', () => {
    expect(describe([])).toEqual({
      n: 0,
      mean: null,
      median: null,
      p90: null,
      total: null,
      quantileMethod: QUANTILE_METHOD,
      reason: 'no values',
    })
    expect(quantile([], 0.5)).toEqual({ value: null, reason: 'no values' })
  })

  it('all zeros', () => {
    expect(describe(new Float64Array(5))).toMatchObject({ mean: 0, median: 0, p90: 0, total: 0 })
  })

  it('rejects non-finite values and bad p', () => {
    expect(() => describe([1, Number.NaN])).toThrow(RangeError)
    expect(() => describe([1, Number.POSITIVE_INFINITY])).toThrow(RangeError)
    expect(() => quantile([1], 1.5)).toThrow(RangeError)
  })

  it('a total beyond the double range is null with a reason', () => {
    expect(describe([1.7e308, 1.7e308]).reason).toBe('total exceeds the double range')
  })
})
