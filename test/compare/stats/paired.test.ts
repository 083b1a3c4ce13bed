import { describe, expect, it } from 'vitest'
import {
  differences,
  geometricMeanOfRatios,
  logRatios,
  meanOfRatios,
  pairedDifferences,
  ratioOfMeans,
} from '../../../src/stats/paired.js'
import { pairedTTest } from '../../../src/stats/paired-t.js'
import { signTest } from '../../../src/stats/sign-test.js'
import { wilcoxonSignedRank } from '../../../src/stats/wilcoxon.js'
import { expectAllFinite, expectRelative } from './helpers.js'

const DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]

describe('ratios: the worked example of statistics.md', () => {
  const baseline = [100, 200, 1000]
  const treatment = [110, 180, 1500]

  it('mean of ratios 1.1667, geometric mean 1.1409, ratio of means 1.3769', () => {
    expect(meanOfRatios(baseline, treatment)).toMatchObject({ included: 3, excluded: 0, reason: null })
    expect(meanOfRatios(baseline, treatment).value).toBeCloseTo(1.1667, 4)
    expect(geometricMeanOfRatios(baseline, treatment).value).toBeCloseTo(1.1409, 4)
    expect(ratioOfMeans(baseline, treatment).value).toBeCloseTo(1.3769, 4)
    expectRelative(ratioOfMeans(baseline, treatment).value, 1790 / 1300, 1e-15)
    expectRelative(geometricMeanOfRatios(baseline, treatment).value, Math.cbrt(1.1 * 0.9 * 1.5), 1e-14)
  })

  it('geometric mean excludes and counts blocks with a zero on either side', () => {
    const r = geometricMeanOfRatios([100, 0, 200, 50], [110, 30, 0, 100])
    expect(r.included).toBe(2)
    expect(r.excluded).toBe(2)
    expectRelative(r.value, Math.sqrt(1.1 * 2), 1e-14)
  })

  it('mean of ratios excludes only baseline zeros', () => {
    const r = meanOfRatios([100, 0, 200], [110, 30, 0])
    expect(r).toMatchObject({ included: 2, excluded: 1, reason: null })
    expectRelative(r.value, (1.1 + 0) / 2, 1e-15)
  })

  it('undefined cases are null with a reason, never NaN', () => {
    expect(ratioOfMeans([], [])).toEqual({ value: null, reason: 'no blocks' })
    expect(ratioOfMeans([0, 0], [1, 2]).reason).toMatch(/Σbaseline = 0/)
    // Sums past the largest double are Infinity: no ratio, never 0 or Infinity.
    expect(ratioOfMeans([1e308, 1e308], [1, 2])).toEqual({
      value: null,
      reason: 'a sum is not finite: values too large to add in double precision',
    })
    expect(geometricMeanOfRatios([0, 0], [0, 0])).toEqual({
      value: null,
      included: 0,
      excluded: 2,
      reason: 'every block (2) has a zero on one side',
    })
    expect(meanOfRatios([], []).reason).toBe('no blocks')
    expect(() => ratioOfMeans([1], [1, 2])).toThrow(RangeError)
    expect(() => geometricMeanOfRatios([-1], [1])).toThrow(RangeError)
  })

  it('log ratios keep blocks with both sides positive', () => {
    const r = logRatios([100, 0, 200], [110, 30, 200])
    expect(r.excluded).toBe(1)
    expect(Array.from(r.values)).toEqual([Math.log(110) - Math.log(100), 0])
  })
})

describe('paired differences', () => {
  it('mean and median of treatment − baseline', () => {
    expect(Array.from(differences([1, 2, 3], [2, 2, 7]))).toEqual([1, 0, 4])
    expect(pairedDifferences([1, 2, 3, 4], [2, 2, 7, 4])).toEqual({
      n: 4,
      mean: 5 / 4,
      median: 0.5,
      reason: null,
    })
    expect(pairedDifferences([], [])).toEqual({ n: 0, mean: null, median: null, reason: 'no blocks' })
    expect(pairedDifferences([5], [7])).toEqual({ n: 1, mean: 2, median: 2, reason: null })
  })
})

describe("Darwin's Zea mays (Fisher 1935)", () => {
  it('Wilcoxon signed-rank exact two-sided p = 0.041259765625, W = 24', () => {
    const r = wilcoxonSignedRank(DARWIN)
    expect(r).toMatchObject({ n: 15, zeros: 0, wPlus: 96, wMinus: 24, statistic: 24, method: 'exact' })
    expect(r.pTwoSided).toBe(0.041259765625)
    // One-sided "greater" (scipy.stats.wilcoxon(d, alternative='greater')): 0.0206298828125.
    expect(r.pGreater).toBe(0.0206298828125)
    // … and the other direction is its complement plus P(W+ = 96).
    expect(wilcoxonSignedRank(DARWIN.map((x) => -x)).pGreater).toBeGreaterThan(0.97)
  })

  it('sign test (13 of 15 positive) p = 0.00738525390625', () => {
    expect(signTest(DARWIN)).toEqual({
      increases: 13,
      decreases: 2,
      ties: 0,
      n: 15,
      pTwoSided: 0.00738525390625,
      note: null,
    })
  })

  it('paired t = 2.147987, p = 0.049703', () => {
    const r = pairedTTest(DARWIN)
    expect(r.t).toBeCloseTo(2.147987, 6)
    expect(r.df).toBe(14)
    expect(r.pTwoSided).toBeCloseTo(0.049703, 6)
    expectRelative(r.t, 2.14798746133112, 1e-13) // scipy.stats.ttest_1samp
    expectRelative(r.pTwoSided, 0.049702944021800866, 1e-12)
  })
})

describe('sign test', () => {
  it('drops ties and counts them', () => {
    const r = signTest([1, 0, 0, -2, 3])
    expect(r).toMatchObject({ increases: 2, decreases: 1, ties: 2, n: 3, pTwoSided: 1 })
  })
  it('all ties or no data: p = 1 with a note', () => {
    expect(signTest([0, 0])).toMatchObject({ n: 0, pTwoSided: 1, note: 'no non-tied blocks' })
    expect(signTest([]).pTwoSided).toBe(1)
  })
})

describe('Wilcoxon signed-rank', () => {
  it('exact with tied ranks equals brute-force enumeration of the 2^n sign patterns', () => {
    const d = [1, -2, 2, 3, -3, 3, 4, -1, 5, 2]
    const r = wilcoxonSignedRank(d)
    expect(r.tiedRanks).toBe(true)
    // Brute force: ranks of |d| with average ranks, every sign pattern equally likely.
    const abs = d.map(Math.abs)
    const sorted = [...abs].sort((a, b) => a - b)
    const rank = (x: number): number => {
      const first = sorted.indexOf(x) + 1
      const last = sorted.lastIndexOf(x) + 1
      return (first + last) / 2
    }
    const ranks = abs.map(rank)
    let atMost = 0
    for (let mask = 0; mask < 1 << d.length; mask++) {
      let w = 0
      for (let i = 0; i < d.length; i++) if (mask & (1 << i)) w += ranks[i]!
      if (w <= r.statistic + 1e-9) atMost++
    }
    expect(r.pTwoSided).toBe(Math.min(1, (2 * atMost) / 1024))
  })

  it('normal approximation beyond 50, with tie and continuity corrections (scipy 1.17.1)', () => {
    const d = Array.from({ length: 60 }, (_, i) => ((i * 37) % 23) - 9)
    const r = wilcoxonSignedRank(d)
    expect(r).toMatchObject({ n: 58, zeros: 2, statistic: 595, method: 'normal-approximation' })
    expectRelative(r.pTwoSided, 0.04393667979583833, 1e-12)
    const d2 = Array.from({ length: 70 }, (_, i) => ((i * 13) % 11) - 3)
    const r2 = wilcoxonSignedRank(d2)
    expect(r2.statistic).toBe(410)
    expectRelative(r2.pTwoSided, 2.3831172375861394e-5, 1e-12)
  })

  it('exactMaxN selects the method', () => {
    expect(wilcoxonSignedRank(DARWIN, { exactMaxN: 10 }).method).toBe('normal-approximation')
    expect(() => wilcoxonSignedRank(DARWIN, { exactMaxN: 51 })).toThrow(RangeError)
  })

  it('no non-zero differences: p = 1 with a note', () => {
    expect(wilcoxonSignedRank([0, 0, 0])).toMatchObject({
      n: 0,
      zeros: 3,
      pTwoSided: 1,
      note: 'no non-zero differences',
    })
    expect(wilcoxonSignedRank([]).pTwoSided).toBe(1)
    expect(wilcoxonSignedRank([4]).pTwoSided).toBe(1)
  })
})

describe('paired t degenerate inputs', () => {
  it('n < 2 or equal differences: null with a reason, never NaN', () => {
    expect(pairedTTest([]).reason).toBe('needs at least 2 differences, got 0')
    expect(pairedTTest([3]).t).toBeNull()
    const r = pairedTTest([2, 2, 2])
    expect(r).toMatchObject({ meanDifference: 2, t: null, pTwoSided: null })
    expect(r.reason).toMatch(/every difference is equal/)
    expectAllFinite(pairedTTest([0, 0]))
  })
})
