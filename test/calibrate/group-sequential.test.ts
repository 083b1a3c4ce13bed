import { describe, expect, it } from 'vitest'
import { fixedMcNemarPower, mcnemarCriticalB } from '../../src/calibrate/fixed-power.js'
import { compareDesigns, formatDesigns } from '../../src/calibrate/group-sequential.js'
import { adaptiveAlternative, deficitAlternative } from '../../src/stats/evalue.js'
import { mcnemarPOneSided } from '../../src/stats/mcnemar.js'

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

describe('calibrate: the weekly designs in blocks at the same α and power (40 blocks a week, p ½, 10 points, 90%)', () => {
  const world = {
    blocksPerWeek: 40,
    resolveRate: 0.5,
    deficitPp: 10,
    alpha: 0.05,
    power: 0.9,
    horizonWeeks: 52,
    sims: 2000,
    seed: 1,
    costPerBlock: null,
  }
  const d = compareDesigns(world)
  const row = (name: string) => d.rows.find((r) => r.design === name)!

  it('the group-sequential rule the weekly evidence decides with needs ≥ 20% fewer blocks under H1, ≤ 10% more under H0', () => {
    const fixed = row('fixed')
    const gs = row('group-sequential')
    // fixed: exact McNemar sized in blocks (not weeks)
    expect(fixed.expected_blocks_h1).toBe(443)
    expect(fixed.power).toBeGreaterThanOrEqual(0.9)
    // seeded expected values (detect/evidence.ts's plan and looks, 2,000 sequences each way)
    expect(gs.power).toBeGreaterThanOrEqual(0.9)
    expect(gs.false_alarm).toBeLessThanOrEqual(0.05)
    expect(Math.round(gs.expected_blocks_h1)).toBe(318)
    expect(Math.round(gs.expected_blocks_h0)).toBe(486)
    expect(gs.saving_h1).toBeGreaterThanOrEqual(0.2)
    expect(gs.saving_h0).toBeGreaterThanOrEqual(-0.1)
    expect(d.chosen).toBe('group-sequential')
    expect(d.targets).toEqual({ h1_saving_at_least_20pct: true, h0_excess_at_most_10pct: true })
  })

  it('the e-value rule it replaced runs far longer under H0', () => {
    const e = row('e-value')
    expect(e.saving_h0).toBeLessThan(-0.3)
    expect(e.false_alarm).toBeLessThanOrEqual(0.05)
  })

  it('the table names the design used and each row in blocks', () => {
    const text = formatDesigns(d)
    expect(text).toMatch(
      / {2}group-sequential +H1 318 blocks \(28\.\d% fewer than fixed\), H0 486 \(9\.\d% more\)/,
    )
    expect(text).toContain('used: group-sequential')
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

  it('is reproducible from its seed and refuses an impossible deficit', () => {
    const small = { ...world, sims: 50 }
    expect(compareDesigns(small)).toEqual(compareDesigns(small))
    expect(() => compareDesigns({ ...world, deficitPp: 60 })).toThrow(/is not a rate/)
  })
})
