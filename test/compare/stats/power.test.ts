import { describe, expect, it } from 'vitest'
import { connorSampleSize, mcnemarPower, minimumDetectableEffect } from '../../../src/compare/stats/power.js'
import { expectAllFinite } from './helpers.js'

describe('power of the exact McNemar test by enumeration (statistics.md)', () => {
  it.each([
    [50, 0.2, 0.05, 0.4775, 0.5734],
    [100, 0.15, 0.05, 0.5444, 0.6177],
    [30, 0.2, 0, 0.5725, 0.7448],
  ])('n=%i p10=%d p01=%d → %d (mid-p %d)', (n, p10, p01, exact, mid) => {
    expect(mcnemarPower({ n, p10, p01 })).toBeCloseTo(exact, 4)
    expect(mcnemarPower({ n, p10, p01, midP: true })).toBeCloseTo(mid, 4)
  })

  it('is symmetric in p10 and p01, and 0 without discordance', () => {
    expect(mcnemarPower({ n: 50, p10: 0.05, p01: 0.2 })).toBeCloseTo(
      mcnemarPower({ n: 50, p10: 0.2, p01: 0.05 }),
      14,
    )
    expect(mcnemarPower({ n: 50, p10: 0, p01: 0 })).toBe(0)
    expect(mcnemarPower({ n: 0, p10: 0.1, p01: 0.1 })).toBe(0)
  })

  it('under H0 (p10 = p01) the exact test is conservative: power ≤ α', () => {
    expect(mcnemarPower({ n: 200, p10: 0.1, p01: 0.1 })).toBeLessThanOrEqual(0.05)
  })

  it('rejects invalid probabilities', () => {
    expect(() => mcnemarPower({ n: 10, p10: 0.7, p01: 0.7 })).toThrow(RangeError)
    expect(() => mcnemarPower({ n: 10, p10: -0.1, p01: 0.1 })).toThrow(RangeError)
    expect(() => mcnemarPower({ n: 10, p10: 0.1, p01: 0.1, alpha: 0 })).toThrow(RangeError)
  })
})

describe('Connor (1987) sample size', () => {
  it('p10 = 0.10, p01 = 0.05 at 80% power → 469 pairs; 0.20 / 0.05 → 85', () => {
    expect(connorSampleSize({ p10: 0.1, p01: 0.05 }).n).toBe(469)
    expect(connorSampleSize({ p10: 0.2, p01: 0.05 }).n).toBe(85)
    expect(connorSampleSize({ p10: 0.1, p01: 0.05 }).exact).toBeCloseTo(468.568, 3)
  })
  it('no difference → null with a reason', () => {
    expect(connorSampleSize({ p10: 0.1, p01: 0.1 })).toEqual({
      n: null,
      exact: null,
      reason: 'p10 = p01: no difference to detect',
    })
  })
})

describe('minimum detectable effect', () => {
  it('defaults the discordance rate to the observed (b + c)/n and reaches the target power', () => {
    const r = minimumDetectableEffect({ n: 100, b: 12, c: 8 })
    expect(r.discordanceRate).toBe(0.2)
    expect(r.reason).toBeNull()
    expect(r.assumption).toMatch(/observed \(12 \+ 8\)\/100/)
    const points = r.points!
    expect(points).toBeGreaterThan(0)
    expect(points).toBeLessThanOrEqual(20)
    expect(r.p10! - r.p01!).toBeCloseTo(points / 100, 12)
    expect(r.p10! + r.p01!).toBeCloseTo(0.2, 12)
    // Defining property: power ≥ 0.8 at the MDE, < 0.8 just below it.
    expect(r.achievedPower!).toBeGreaterThanOrEqual(0.8)
    expect(mcnemarPower({ n: 100, p10: r.p10!, p01: r.p01! })).toBeGreaterThanOrEqual(0.8)
    const below = (points - 0.01) / 100
    expect(mcnemarPower({ n: 100, p10: (0.2 + below) / 2, p01: (0.2 - below) / 2 })).toBeLessThan(0.8)
  })

  it('an assumed discordance rate overrides the observed one; mid-p detects smaller effects', () => {
    const exact = minimumDetectableEffect({ n: 50, discordanceRate: 0.25 })
    const mid = minimumDetectableEffect({ n: 50, discordanceRate: 0.25, midP: true })
    expect(exact.assumption).toMatch(/assumed/)
    expect(exact.points!).toBeCloseTo(19.858, 2)
    expect(mid.points!).toBeLessThan(exact.points!)
  })

  it('larger panels detect smaller effects', () => {
    const small = minimumDetectableEffect({ n: 100, discordanceRate: 0.2 }).points!
    const large = minimumDetectableEffect({ n: 500, discordanceRate: 0.2 }).points!
    expect(large).toBeLessThan(small)
  })

  it('null with a reason when undefined, never NaN', () => {
    const none = minimumDetectableEffect({ n: 20, b: 0, c: 0 })
    expect(none.points).toBeNull()
    expect(none.reason).toMatch(/discordance rate 0/)
    const tooSmall = minimumDetectableEffect({ n: 5, discordanceRate: 0.2 })
    expect(tooSmall.points).toBeNull()
    expect(tooSmall.reason).toMatch(/not detectable/)
    expect(minimumDetectableEffect({ n: 0, discordanceRate: 0.2 }).reason).toBe('no blocks')
    for (const r of [none, tooSmall]) expectAllFinite(r)
    expect(() => minimumDetectableEffect({ n: 20 })).toThrow(RangeError)
  })
})
