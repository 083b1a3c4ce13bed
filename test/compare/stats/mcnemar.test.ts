import { describe, expect, it } from 'vitest'
import { halfBinomialCdf, halfBinomialSf, ratioToNumber } from '../../../src/stats/exact.js'
import {
  mcnemarExact,
  mcnemarPMidTwoSided,
  mcnemarPOneSided,
  mcnemarPTwoSided,
} from '../../../src/stats/mcnemar.js'
import { expectRelative } from './helpers.js'

// statistics.md reference table (scipy 1.17.1): b, c, exact two-sided, one-sided (c > b), mid-p two-sided.
const TABLE: [number, number, number, number, number][] = [
  [1, 7, 0.0703125, 0.03515625, 0.0390625],
  [0, 5, 0.0625, 0.03125, 0.03125],
  [0, 6, 0.03125, 0.015625, 0.015625],
  [1, 9, 0.021484375, 0.0107421875, 0.01171875],
  [2, 10, 0.03857421875, 0.019287109375, 0.0224609375],
  [3, 15, 0.007537841796875, 0.0037689208984375, 0.004425048828125],
  [10, 10, 1.0, 0.588098526, 1.0],
  [59, 121, 4.43444926e-6, 2.21722463e-6, 3.2666468e-6],
  [86, 150, 3.71593614e-5, 1.85796807e-5, 2.89338952e-5],
  [0, 0, 1.0, 1.0, 1.0],
]

// The table prints 9–10 significant digits; the small-n rows are exact dyadic fractions.
function tolerance(expected: number): number {
  return Number.isInteger(expected * 2 ** 20) ? 0 : 5e-9
}

describe('exact McNemar: statistics.md reference table', () => {
  it.each(TABLE)('b=%i c=%i', (b, c, twoSided, oneSided, midP) => {
    expectRelative(mcnemarPTwoSided(b, c), twoSided, tolerance(twoSided))
    expectRelative(mcnemarPOneSided(b, c), oneSided, tolerance(oneSided))
    expectRelative(mcnemarPOneSided(b, c, 'treatment_better'), oneSided, tolerance(oneSided))
    expectRelative(mcnemarPMidTwoSided(b, c), midP, tolerance(midP))
    const all = mcnemarExact(b, c)
    expect(all.pTwoSided).toBe(mcnemarPTwoSided(b, c))
    expect(all.pMidTwoSided).toBe(mcnemarPMidTwoSided(b, c))
    expect(all.pTreatmentBetter).toBe(mcnemarPOneSided(b, c, 'treatment_better'))
  })

  it('matches the large-n rows to 1e-9 relative (exact BigInt sums)', () => {
    expectRelative(mcnemarPTwoSided(59, 121), 4.43444926e-6, 1e-9)
    expectRelative(mcnemarPTwoSided(86, 150), 3.71593614e-5, 1e-9)
    expectRelative(mcnemarPOneSided(59, 121), 2.21722463e-6, 1e-9)
    expectRelative(mcnemarPOneSided(86, 150), 1.85796807e-5, 1e-9)
    expectRelative(mcnemarPMidTwoSided(59, 121), 3.2666468e-6, 1e-8)
    expectRelative(mcnemarPMidTwoSided(86, 150), 2.89338952e-5, 1e-9)
  })

  it('is bit-identical to the exact rational value rounded once (Python fractions)', () => {
    expect(mcnemarPTwoSided(59, 121)).toBe(4.434449263755176e-6)
    expect(mcnemarPMidTwoSided(59, 121)).toBe(3.2666467957745924e-6)
    expect(mcnemarPTwoSided(86, 150)).toBe(3.715936139571442e-5)
    expect(mcnemarPMidTwoSided(86, 150)).toBe(2.89338951761549e-5)
  })

  it('b = c = 10 one-sided is exactly P(X ≥ 10 | 20) = 616666/2^20', () => {
    expect(mcnemarPOneSided(10, 10)).toBe(616_666 / 2 ** 20)
  })
})

describe('exact McNemar: directions and symmetry', () => {
  it('treatment_worse is P(X ≥ b), the regression direction', () => {
    // b = 7 baseline-only wins: regression direction is significant at the one-sided 0.0352 level.
    expect(mcnemarPOneSided(7, 1, 'treatment_worse')).toBe(0.03515625)
    expect(mcnemarPOneSided(1, 7, 'treatment_worse')).toBe(1 - 1 / 256)
    expect(mcnemarPOneSided(7, 1, 'treatment_better')).toBe(1 - 1 / 256)
  })

  it('two-sided and mid-p are symmetric in b and c', () => {
    for (const [b, c] of [
      [3, 15],
      [59, 121],
      [0, 9],
    ] as const) {
      expect(mcnemarPTwoSided(b, c)).toBe(mcnemarPTwoSided(c, b))
      expect(mcnemarPMidTwoSided(b, c)).toBe(mcnemarPMidTwoSided(c, b))
    }
  })

  it('P(X ≥ c) + P(X ≥ b) = 1 + P(X = c) (the two one-sided tails overlap at the observed point)', () => {
    const b = 86
    const c = 150
    const pointMass = 2 * mcnemarPOneSided(b, c) - mcnemarPMidTwoSided(b, c)
    expectRelative(
      mcnemarPOneSided(b, c, 'treatment_better') + mcnemarPOneSided(b, c, 'treatment_worse'),
      1 + pointMass,
      1e-12,
    )
  })

  it('stays exact and finite for thousands of discordant pairs', () => {
    const p = mcnemarPTwoSided(1500, 1600)
    expectRelative(p, 0.07537169707532781, 1e-12) // scipy.stats.binomtest(1500, 3100)
    expect(mcnemarPTwoSided(0, 3000)).toBe(0) // 2^-2999 underflows the double range
    expect(mcnemarPTwoSided(5000, 5001)).toBe(1)
  })
})

describe('field cases', () => {
  it('F15: zero discordant pairs gives p = 1 everywhere, a note, and no exception', () => {
    const r = mcnemarExact(0, 0)
    expect(r).toEqual({
      b: 0,
      c: 0,
      discordant: 0,
      pTwoSided: 1,
      pMidTwoSided: 1,
      pTreatmentBetter: 1,
      pTreatmentWorse: 1,
      note: 'no discordant pairs',
    })
  })

  it('F15: b = 2, c = 9 uses the exact test, p ≈ 0.065', () => {
    expect(mcnemarPTwoSided(2, 9)).toBe(134 / 2048)
    expect(mcnemarPTwoSided(2, 9)).toBeCloseTo(0.065, 3)
  })

  it('F08: A/A noise b = 60, c = 25 gives two-sided p ≈ 1.9e-4', () => {
    const p = mcnemarPTwoSided(60, 25)
    expectRelative(p, 0.00018679938527835335, 1e-12) // scipy.stats.binomtest(60, 85)
    expect(p.toPrecision(2)).toBe('0.00019')
  })
})

describe('input checks', () => {
  it('throws a RangeError for negative or non-integer counts', () => {
    expect(() => mcnemarPTwoSided(-1, 3)).toThrow(RangeError)
    expect(() => mcnemarPOneSided(1.5, 3)).toThrow(RangeError)
    expect(() => mcnemarExact(1, Number.NaN)).toThrow(RangeError)
  })
})

describe('exact Binomial(n, ½) helpers', () => {
  it('ratioToNumber rounds big rationals once', () => {
    expect(ratioToNumber(1n, 3n)).toBe(1 / 3)
    expect(ratioToNumber(2n ** 2000n, 3n * 2n ** 2000n)).toBe(1 / 3)
    expect(ratioToNumber(0n, 7n)).toBe(0)
    expect(() => ratioToNumber(1n, 0n)).toThrow(RangeError)
  })

  it('cdf and survival function are complementary', () => {
    expectRelative(halfBinomialCdf(3100, 1500) + halfBinomialSf(3100, 1501), 1, 1e-15)
    expect(halfBinomialCdf(10, 10)).toBe(1)
    expect(halfBinomialCdf(10, -1)).toBe(0)
    expect(halfBinomialSf(10, 0)).toBe(1)
    expect(halfBinomialSf(10, 11)).toBe(0)
  })
})
