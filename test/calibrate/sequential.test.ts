import { describe, expect, it } from 'vitest'
import { compareSequential } from '../../src/calibrate/sequential.js'

const base = {
  blocksPerWeek: 40,
  resolveRate: 0.5,
  alpha: 0.05,
  maxWeeks: 12,
  sims: 400,
  seed: 7,
  costPerBlock: 2,
}

describe('calibrate: sequential e-value rule vs a fixed-size test', () => {
  it('A/A: the weekly product reaches 1/α in at most α of sequences (Ville)', () => {
    const r = compareSequential({ ...base, deficitPp: 0 })
    expect(r.false_alarm).toBeLessThanOrEqual(0.05)
  })

  it('a true 20-point deficit: the same power costs the fixed test fewer blocks than the two-sided e-value rule', () => {
    const r = compareSequential({ ...base, deficitPp: 20 })
    expect(r.power).toBeGreaterThan(0.8)
    expect(r.fixed.power).toBeGreaterThanOrEqual(r.power)
    expect(r.sequential.mean_weeks).toBeGreaterThan(1)
    expect(r.sequential.mean_weeks).toBeLessThanOrEqual(12)
    expect(r.sequential.dollars).toBeCloseTo(r.sequential.mean_blocks * 2, 8)
    expect(r.fixed.blocks).toBe(r.fixed.weeks * 40)
    // measured, not assumed: the Beta(1,1) mixture pays for anytime validity and two-sidedness
    expect(r.saving).toBeLessThan(0)
  })

  it('is reproducible from its seed and refuses an impossible deficit', () => {
    expect(compareSequential({ ...base, sims: 50, deficitPp: 20 })).toEqual(
      compareSequential({ ...base, sims: 50, deficitPp: 20 }),
    )
    expect(() => compareSequential({ ...base, deficitPp: 60 })).toThrow(/is not a rate/)
  })
})
