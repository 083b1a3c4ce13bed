import { describe, expect, it } from 'vitest'
import { ratioToNumber } from '../../../src/stats/exact.js'
import {
  connorSampleSize,
  criticalValues,
  mcnemarPower,
  minimumDetectableEffect,
} from '../../../src/stats/power.js'
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

describe('the MDE bisection', () => {
  /** The bisection as stated: the power evaluated at every midpoint. */
  function plainBisection(n: number, psi: number, target: number, alpha: number, midP: boolean) {
    const powerAt = (d: number) =>
      mcnemarPower({ n, p10: (psi + d) / 2, p01: Math.max(0, (psi - d) / 2), alpha, midP })
    const best = powerAt(psi)
    if (best < target) return { points: null, achievedPower: null }
    let lo = 0
    let hi = psi
    let hiPower = best
    while ((hi - lo) * 100 > 1e-6) {
      const mid = (lo + hi) / 2
      const pw = powerAt(mid)
      if (pw >= target) {
        hi = mid
        hiPower = pw
      } else lo = mid
    }
    return { points: hi * 100, achievedPower: hiPower }
  }

  it('gives bit for bit the result of evaluating the power at every midpoint, over panels, rates, α, targets and mid-p', () => {
    // A fixed pseudo-random set (a linear congruential sequence), panels of 2 to 600 blocks.
    let state = 12345
    const next = () => {
      state = (state * 1103515245 + 12345) % 2147483648
      return state / 2147483648
    }
    const cases: Array<[number, number, number, number, boolean]> = [
      [500, 0.3, 0.8, 0.05, false],
      [500, 0.2, 0.8, 0.05, false],
      [100, 0.3, 0.9, 0.01, true],
      [2, 1, 0.5, 0.5, false],
      // the power at δ = 0 already reaches a target below α: every midpoint is evaluated
      [40, 0.5, 0.01, 0.1, true],
      // flat stretches of the power curve (near δ = 0, and saturating near 1, where the computed
      // power is not monotone at the 1e-14 level): no decision may follow from a slope there
      [5, 0.9999999999999999, 0.375, 0.38, false],
      [6, 0.9999999999999999, 0.6875, 0.69, false],
      [16, 0.9999999999999999, 0.210113525390625, 0.22, false],
      [71, 0.91, 0.9999999999999953, 0.2, false],
      [83, 0.87, 0.9999999999999993, 0.01, true],
      [183, 0.22, 0.9999999999998936, 0.8, true],
      [138, 0.99, 0.9999999999999956, 0.3, true],
    ]
    // targets within an ulp of a computed power: the decision there rests on the last bit
    const ulp = (x: number, by: number) => {
      const v = new DataView(new ArrayBuffer(8))
      v.setFloat64(0, x)
      v.setBigInt64(0, v.getBigInt64(0) + BigInt(by))
      return v.getFloat64(0)
    }
    for (let i = 0; i < 12; i++) {
      const n = 3 + Math.floor(next() * 200)
      const psi = Math.round(next() * 100) / 100 || 0.01
      const delta = next() * psi
      const alpha = [0.05, 0.2][i % 2]!
      const p = mcnemarPower({ n, p10: (psi + delta) / 2, p01: (psi - delta) / 2, alpha })
      if (p > 0 && p < 1) cases.push([n, psi, ulp(p, (i % 3) - 1), alpha, false])
    }
    for (let i = 0; i < 120; i++) {
      const n = 2 + Math.floor(next() ** 2 * 600)
      const psi = Math.round(next() * 100) / 100 || 0.01
      cases.push([n, psi, [0.8, 0.9, 0.5, 0.95][i % 4]!, [0.05, 0.01, 0.1][i % 3]!, i % 5 === 0])
    }
    let detectable = 0
    for (const [n, psi, target, alpha, midP] of cases) {
      const r = minimumDetectableEffect({ n, discordanceRate: psi, power: target, alpha, midP })
      const want = plainBisection(n, psi, target, alpha, midP)
      expect([n, psi, target, alpha, midP, r.points, r.achievedPower]).toEqual([
        n,
        psi,
        target,
        alpha,
        midP,
        want.points,
        want.achievedPower,
      ])
      if (want.points !== null) detectable++
    }
    // most of the set is detectable, so the shortcut is exercised, not only the early returns
    expect(detectable).toBeGreaterThan(80)
  })
})

describe('critical values of the exact McNemar test', () => {
  /** k*(m) as defined: the largest k < m/2 whose exact two-sided p (BigInt sums, rounded once) is ≤ α. */
  function reference(n: number, alpha: number, midP: boolean): Int32Array {
    const crit = new Int32Array(n + 1).fill(-1)
    for (let m = 1; m <= n; m++) {
      const total = 1n << BigInt(m)
      let term = 1n
      let cumulative = 1n
      for (let k = 0; 2 * k < m; k++) {
        if (k > 0) {
          term = (term * BigInt(m - k + 1)) / BigInt(k)
          cumulative += term
        }
        if (ratioToNumber(midP ? 2n * cumulative - term : 2n * cumulative, total) > alpha) break
        crit[m] = k
      }
    }
    return crit
  }

  it('equal the exact definition, also when α is itself an attainable p-value', () => {
    // 0.0703125 = 2·9/2^8 and 0.021484375 = 2·11/2^10 sit exactly on a boundary: decided in BigInt.
    for (const alpha of [0.05, 0.01, 0.1, 0.0703125, 0.021484375, 0.5, 1e-6, 1e-250]) {
      for (const midP of [false, true]) {
        expect(criticalValues(400, alpha, midP)).toEqual(reference(400, alpha, midP))
      }
    }
  })

  it('large panels: k*(m) is just below m/2 − z·√m/2 and the power approaches 1', () => {
    const crit = criticalValues(3000, 0.05, false)
    // normal approximation: k* ≈ m/2 − 1.96·√m/2 (within a couple of pairs)
    expect(Math.abs(crit[3000]! - (1500 - (1.96 * Math.sqrt(3000)) / 2))).toBeLessThan(3)
    expect(mcnemarPower({ n: 3000, p10: 0.1, p01: 0.05 })).toBeGreaterThan(0.99)
  })
})
