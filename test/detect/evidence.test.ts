import { describe, expect, it } from 'vitest'
import { discordantEValue } from '../../src/compare/stats/evalue.js'
import { combineEvidence } from '../../src/detect/evidence.js'

describe('evidence across weekly runs: product of per-run e-values', () => {
  it('multiplies the reference e-values and states whether they suffice at α', () => {
    // (0,7) → 16, (1,7) → 3.5556 (2^8·7!/9! = 256/72): 16 × 3.5556 = 56.889 ≥ 1/0.05 = 20
    const one = combineEvidence([{ run_id: 'w1', b: 0, c: 7 }], 0.05)
    expect(one.e).toBeCloseTo(16, 10)
    expect(one.sufficient).toBe(false)
    expect(one.statement).toBe(
      'evidence so far: E = 16.0 over 1 run; 20 needed at α = 0.05 — not yet sufficient',
    )
    const two = combineEvidence(
      [
        { run_id: 'w1', b: 0, c: 7 },
        { run_id: 'w2', b: 1, c: 7 },
      ],
      0.05,
    )
    expect(two.e).toBeCloseTo(256 / 4.5, 10)
    expect(two.sufficient).toBe(true)
    expect(two.statement).toMatch(
      /^evidence so far: E = 56\.9 over 2 runs; 20 needed at α = 0\.05 — sufficient/,
    )
    // at α = 0.01 (100 needed) the same weeks are not enough
    expect(combineEvidence(two.runs, 0.01).sufficient).toBe(false)
  })

  it('never pools weeks: two opposite weeks multiply, they are not one (7, 7) sample', () => {
    const ev = combineEvidence(
      [
        { run_id: 'w1', b: 0, c: 7 },
        { run_id: 'w2', b: 7, c: 0 },
      ],
      0.05,
    )
    expect(ev.e).toBeCloseTo(256, 8)
    const pooled = discordantEValue(7, 7).e!
    expect(pooled).toBeCloseTo((2 ** 14 * 5040 * 5040) / 1307674368000, 12)
    expect(ev.e).not.toBeCloseTo(pooled, 2)
  })

  it('refuses a run counted twice and an α outside (0, 1); empty history is E = 1', () => {
    expect(() =>
      combineEvidence(
        [
          { run_id: 'w1', b: 0, c: 7 },
          { run_id: 'w1', b: 0, c: 7 },
        ],
        0.05,
      ),
    ).toThrow(/run w1 appears twice/)
    expect(() => combineEvidence([], 0)).toThrow(RangeError)
    expect(() => combineEvidence([], 1)).toThrow(RangeError)
    expect(combineEvidence([], 0.05)).toMatchObject({ e: 1, log_e: 0, sufficient: false })
    expect(() => combineEvidence([{ run_id: 'w', b: -1, c: 0 }], 0.05)).toThrow(RangeError)
  })

  it('stays finite in log space beyond the double range', () => {
    const weeks = Array.from({ length: 40 }, (_, i) => ({ run_id: `w${i}`, b: 0, c: 200 }))
    const ev = combineEvidence(weeks, 0.05)
    expect(ev.e).toBeNull()
    expect(Number.isFinite(ev.log_e)).toBe(true)
    expect(ev.sufficient).toBe(true)
    expect(ev.statement).toMatch(/^evidence so far: E = exp\(\d+\.\d\) over 40 runs/)
  })
})
