import { describe, expect, it } from 'vitest'
import { fixedMcNemarPower, mcnemarCriticalB } from '../../src/calibrate/fixed-power.js'
import { compareSequential, formatSequential } from '../../src/calibrate/sequential.js'
import { adaptiveAlternative, deficitAlternative } from '../../src/stats/evalue.js'
import { mcnemarPOneSided } from '../../src/stats/mcnemar.js'

const base = {
  blocksPerWeek: 40,
  resolveRate: 0.5,
  designDeficitPp: 10,
  alpha: 0.05,
  powers: [0.8, 0.9, 0.95],
  horizonWeeks: 52,
  sims: 1000,
  seed: 7,
  costPerBlock: 2,
}

describe('fixed-size exact McNemar: critical values and power, computed', () => {
  it('the critical b is where the exact one-sided p first reaches α', () => {
    for (const n of [0, 1, 4, 5, 6, 10, 20, 57, 200]) {
      const k = mcnemarCriticalB(n, 0.05)
      if (k <= n) expect(mcnemarPOneSided(k, n - k, 'treatment_worse')).toBeLessThanOrEqual(0.05)
      if (k >= 1) expect(mcnemarPOneSided(k - 1, n - k + 1, 'treatment_worse')).toBeGreaterThan(0.05)
    }
    // (5, 0): p = 1/32 ≤ 0.05; (4, 0): p = 1/16 > 0.05
    expect(mcnemarCriticalB(5, 0.05)).toBe(5)
    expect(mcnemarCriticalB(4, 0.05)).toBe(5)
    expect(mcnemarCriticalB(200, 0.05)).toBe(113)
  })

  it('power equals brute-force enumeration of the multinomial on 12 blocks', () => {
    const fact = (n: number): number => (n <= 1 ? 1 : n * fact(n - 1))
    const [N, pb, pc] = [12, 0.35, 0.15]
    let brute = 0
    for (let b = 0; b <= N; b++)
      for (let c = 0; b + c <= N; c++)
        if (b + c > 0 && mcnemarPOneSided(b, c, 'treatment_worse') <= 0.05)
          brute +=
            (fact(N) / (fact(b) * fact(c) * fact(N - b - c))) *
            pb ** b *
            pc ** c *
            (1 - pb - pc) ** (N - b - c)
    expect(fixedMcNemarPower(N, pb, pc, 0.05)).toBeCloseTo(brute, 12)
    expect(brute).toBeCloseTo(0.119725868666566, 12)
  })

  it('a 10-point deficit at resolve rate ½ needs 12 weeks of 40 blocks for 90% power (11 fall short)', () => {
    expect(fixedMcNemarPower(440, 0.3, 0.2, 0.05)).toBeCloseTo(0.8988, 3)
    expect(fixedMcNemarPower(480, 0.3, 0.2, 0.05)).toBeCloseTo(0.9205, 3)
    // A/A: the exact test never exceeds α
    for (const N of [40, 200, 480]) expect(fixedMcNemarPower(N, 0.25, 0.25, 0.05)).toBeLessThanOrEqual(0.05)
    expect(() => fixedMcNemarPower(10, 0.7, 0.4, 0.05)).toThrow(RangeError)
  })
})

describe('calibrate: weekly e-value rule vs a fixed-size test at the same α and power', () => {
  it('at the declared 10-point threshold it needs ≥ 30% fewer blocks for 90% and 95% power', () => {
    const rows = compareSequential({ ...base, deficitPp: 10 })
    expect(rows.map((r) => r.power_target)).toEqual([0.8, 0.9, 0.95])
    for (const r of rows) {
      expect(r.sequential!.power).toBeGreaterThanOrEqual(r.power_target)
      expect(r.fixed!.power).toBeGreaterThanOrEqual(r.power_target)
      expect(r.sequential!.dollars).toBeCloseTo(r.sequential!.mean_blocks * 2, 8)
      expect(r.fixed!.blocks).toBe(r.fixed!.weeks * 40)
      // Ville: the A/A product reaches 1/α by the cap week in at most α of sequences
      expect(r.false_alarm!).toBeLessThanOrEqual(0.05)
    }
    expect(rows.map((r) => r.fixed!.weeks)).toEqual([9, 12, 14])
    expect(rows[1]!.saving!).toBeGreaterThanOrEqual(0.3)
    expect(rows[2]!.saving!).toBeGreaterThanOrEqual(0.3)
    // measured, not assumed: at 80% power the saving is smaller
    expect(rows[0]!.saving!).toBeLessThan(rows[1]!.saving!)
  })

  it('at twice the threshold both need about three weeks: weekly granularity leaves little to save', () => {
    const rows = compareSequential({ ...base, deficitPp: 20 })
    expect(rows[1]!.fixed!.weeks).toBe(3)
    expect(Math.abs(rows[1]!.saving!)).toBeLessThan(0.1)
  })

  it('A/A: neither rule claims power, and no row a saving', () => {
    const rows = compareSequential({ ...base, deficitPp: 0, powers: [0.5], horizonWeeks: 20, sims: 300 })
    // no power under H0: neither rule reaches 50% power within the horizon
    expect(rows[0]!.sequential).toBeNull()
    expect(rows[0]!.fixed).toBeNull()
    expect(rows[0]!.saving).toBeNull()
  })

  it('far from resolve rate ½, θ₁ follows the earlier weeks’ discordance: the weekly rule saves at 90–95% power', () => {
    // At p = 0.12 a 10-point deficit makes θ = 0.12·0.98/(0.12·0.98 + 0.02·0.88) = 0.870; the floor θ₁ 0.599
    // needed 26–83% more blocks than the fixed test here. After the first week θ₁ comes from the
    // discordance seen so far (about 0.75–0.8), so the rule needs fewer blocks at 90% and 95% power,
    // still more at 80% (whole weeks: the fixed test needs only 6).
    const rows = compareSequential({
      ...base,
      blocksPerWeek: 16,
      resolveRate: 0.12,
      deficitPp: 10,
    })
    expect(rows.map((r) => r.fixed!.weeks)).toEqual([6, 8, 9])
    expect(rows[0]!.saving!).toBeLessThan(0)
    expect(rows[1]!.saving!).toBeGreaterThan(0.03)
    expect(rows[2]!.saving!).toBeGreaterThan(0.1)
    for (const r of rows) expect(r.false_alarm!).toBeLessThanOrEqual(0.05)
  })

  it('the adaptive θ₁: the floor before any block, Wilson’s upper discordance after, capped at 0.95', () => {
    expect(adaptiveAlternative(10, { discordant: 0, blocks: 0 })).toBe(deficitAlternative(10))
    expect(adaptiveAlternative(10, { discordant: 60, blocks: 400 })).toBeCloseTo(0.7655145308, 9)
    // half the blocks discordant (independent cells at p = ½): never below the floor
    expect(adaptiveAlternative(10, { discordant: 200, blocks: 400 })).toBe(deficitAlternative(10))
    // almost no discordance: capped
    expect(adaptiveAlternative(10, { discordant: 1, blocks: 4000 })).toBe(0.95)
    expect(() => adaptiveAlternative(10, { discordant: 5, blocks: 4 })).toThrow(RangeError)
    expect(() => adaptiveAlternative(10, { discordant: -1, blocks: 4 })).toThrow(RangeError)
  })

  it('without a pilot the table names no dollars and says once how to get them', () => {
    const rows = compareSequential({ ...base, deficitPp: 20, sims: 200, costPerBlock: null })
    const text = formatSequential(rows, 40, 10, 52)
    expect(text).not.toContain('n/a')
    expect(text).toMatch(/sequential \d+\.\d\d weeks on average \(\d+ blocks; stop by week \d+/)
    expect(text.match(/dollars need a pilot/g)).toHaveLength(1)
    const priced = formatSequential(compareSequential({ ...base, deficitPp: 20, sims: 200 }), 40, 10, 52)
    expect(priced).toMatch(/\(\d+ blocks, \$\d+\.\d\d; stop by week/)
    expect(priced).not.toContain('dollars need a pilot')
  })

  it('is reproducible from its seed and refuses an impossible deficit or power', () => {
    expect(compareSequential({ ...base, sims: 50, deficitPp: 20 })).toEqual(
      compareSequential({ ...base, sims: 50, deficitPp: 20 }),
    )
    expect(() => compareSequential({ ...base, deficitPp: 60 })).toThrow(/is not a rate/)
    expect(() => compareSequential({ ...base, deficitPp: 10, powers: [1] })).toThrow(/power target/)
  })
})
