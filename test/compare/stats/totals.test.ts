import { describe, expect, it } from 'vitest'
import { inverseNormalCombination, ratioOfTotalsTest } from '../../../src/stats/index.js'

// Reference values: scipy 1.17 (numpy 2.4):
//   stats.ttest_1samp(t − θ·b, 0, alternative='greater');
//   z = (w1·norm.isf(p1) + w2·norm.isf(p2)) / √(w1² + w2²), p = norm.sf(z).
describe('ratioOfTotalsTest: one-sided test of Σt ≤ θ·Σb (Student t of mean t − θ·b)', () => {
  const b = [100, 200, 1000]
  const t = [110, 180, 1500]
  it('matches scipy on the statistics.md worked example at three thresholds', () => {
    const cases: Array<[number, number, number]> = [
      [1.5, -1.511857892036909, 0.8651483716701107],
      [1.0, 0.9690154823758407, 0.21738084608255703],
      [1.2, 0.6809026333799376, 0.28309607167437495],
    ]
    for (const [theta, stat, p] of cases) {
      const r = ratioOfTotalsTest(b, t, theta)!
      expect(r.statistic).toBeCloseTo(stat, 12)
      expect(r.p).toBeCloseTo(p, 12)
      expect(r.df).toBe(2)
      expect(r.estimate).toBeCloseTo(1790 / 1300, 14)
    }
  })

  it('matches scipy on eight blocks just over the threshold', () => {
    const r = ratioOfTotalsTest([1, 2, 3, 4, 5, 6, 7, 8], [2.5, 2.9, 5.1, 6.8, 7.0, 9.9, 10.2, 13.0], 1.5)!
    expect(r.statistic).toBeCloseTo(1.9301809569839548, 12)
    expect(r.p).toBeCloseTo(0.04744852147379726, 12)
    expect(r.estimate).toBeCloseTo(1.594444444444444, 12)
  })

  it('tests totals, not per-block ratios: a fixed overhead on cheap blocks does not move it', () => {
    // Per-block ratios mostly far above 1.5 (cheap blocks + a fixed 1.0 overhead), ratio of totals 1.2.
    const base = [0.2, 0.3, 0.2, 0.25, 10, 12, 9, 11]
    const treat = base.map((x) => x + 1)
    const r = ratioOfTotalsTest(base, treat, 1.5)!
    expect(r.estimate).toBeLessThan(1.5)
    expect(r.p).toBeGreaterThan(0.5)
  })

  it('undefined without spread or with fewer than 2 blocks; rejects bad input', () => {
    expect(ratioOfTotalsTest([1, 2, 3], [1.5, 3, 4.5], 1.5)).toBeNull()
    expect(ratioOfTotalsTest([1], [2], 1.5)).toBeNull()
    expect(() => ratioOfTotalsTest([1, 2], [1], 1.5)).toThrow(RangeError)
    expect(() => ratioOfTotalsTest([1, -2], [1, 2], 1.5)).toThrow(RangeError)
    expect(() => ratioOfTotalsTest([1, 2], [1, 2], 0)).toThrow(RangeError)
  })
})

describe('inverseNormalCombination', () => {
  it('matches scipy', () => {
    const a = inverseNormalCombination([0.03, 0.2], [Math.sqrt(40), Math.sqrt(20)])
    expect(a.z).toBeCloseTo(2.0215717962452446, 12)
    expect(a.p).toBeCloseTo(0.02161030410171494, 12)
    expect(inverseNormalCombination([0.5, 0.5], [1, 1]).p).toBeCloseTo(0.5, 14)
    const c = inverseNormalCombination([0.001, 0.9], [1, 2])
    expect(c.z).toBeCloseTo(0.2357393336798331, 12)
    expect(c.p).toBeCloseTo(0.4068174730282002, 12)
  })
  it('p = 0 and p = 1 stay finite; bad input throws', () => {
    expect(inverseNormalCombination([0, 0.5], [1, 1]).p).toBeLessThan(1e-100)
    expect(inverseNormalCombination([1, 1], [1, 1]).p).toBe(1)
    expect(() => inverseNormalCombination([0.5], [1, 1])).toThrow(RangeError)
    expect(() => inverseNormalCombination([0.5], [0])).toThrow(RangeError)
    expect(() => inverseNormalCombination([1.5], [1])).toThrow(RangeError)
  })
})
