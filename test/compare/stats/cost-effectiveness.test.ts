import { describe, expect, it } from 'vitest'
import {
  bootstrapMean,
  chosenInterval,
  createRng,
  pairedNetBenefit,
  paretoFrontier,
} from '../../../src/stats/index.js'

// Four blocks, V = $2 per resolution (hand-computed):
//   block  r_B r_T  s_B  s_T   NB_i = 2·(r_T − r_B) − (s_T − s_B)
//   1      1   1    0.5  0.9   −0.4
//   2      0   1    0.4  0.7   +1.7
//   3      1   1    0.6  0.8   −0.2
//   4      0   0    0.3  0.6   −0.3
//   mean NB = 0.8 / 4 = 0.2
const blocks = {
  resolvedBaseline: [1, 0, 1, 0],
  resolvedTreatment: [1, 1, 1, 0],
  spendBaseline: [0.5, 0.4, 0.6, 0.3],
  spendTreatment: [0.9, 0.7, 0.8, 0.6],
}
const perBlock = [-0.4, 1.7, -0.2, -0.3]

/** Exact bootstrap distribution of the mean of 4 values: all 4^4 equally likely resamples. */
function exactPercentile(values: number[], p: number): number {
  const means: number[] = []
  for (let a = 0; a < 4; a++)
    for (let b = 0; b < 4; b++)
      for (let c = 0; c < 4; c++)
        for (let d = 0; d < 4; d++) means.push((values[a]! + values[b]! + values[c]! + values[d]!) / 4)
  means.sort((x, y) => x - y)
  return means[Math.min(means.length - 1, Math.floor(p * means.length))]!
}

describe('pairedNetBenefit', () => {
  it('gives the hand-computed mean V·Δresolved − Δspend = 0.2 at V = 2', () => {
    const nb = pairedNetBenefit(blocks, 2, { B: 4000, seed: 7 })
    expect(nb.n).toBe(4)
    expect(nb.percentile.estimate).toBeCloseTo(0.2, 12)
    expect(nb.bca.estimate).toBeCloseTo(0.2, 12)
  })

  it('its interval is the block bootstrap of the per-block net benefits, near the exact bootstrap quantiles', () => {
    const nb = pairedNetBenefit(blocks, 2, { B: 20_000, seed: 11 })
    const direct = bootstrapMean(perBlock, { B: 20_000, seed: 11 })
    expect(nb.percentile.ci![0]).toBeCloseTo(direct.percentile.ci![0], 10)
    expect(nb.percentile.ci![1]).toBeCloseTo(direct.percentile.ci![1], 10)
    // exact 2.5% and 97.5% points of the 256 resamples: −0.35 and 1.2 (atoms 0.025 apart near them)
    expect(exactPercentile(perBlock, 0.025)).toBeCloseTo(-0.35, 10)
    expect(exactPercentile(perBlock, 0.975)).toBeCloseTo(1.2, 10)
    expect(Math.abs(nb.percentile.ci![0] - -0.35)).toBeLessThanOrEqual(0.05)
    expect(Math.abs(nb.percentile.ci![1] - 1.2)).toBeLessThanOrEqual(0.05)
  })

  it('at V = 0 it is minus the mean extra spend; a larger V raises it by V × Δresolved', () => {
    expect(pairedNetBenefit(blocks, 0, { B: 200 }).percentile.estimate).toBeCloseTo(-0.3, 12)
    // Δresolved = 1/4 per block: V = 10 → 2.5 − 0.3
    expect(pairedNetBenefit(blocks, 10, { B: 200 }).percentile.estimate).toBeCloseTo(2.2, 12)
  })

  it('one block: the estimate without an interval; no blocks: nothing, with the reason', () => {
    const one = pairedNetBenefit(
      { resolvedBaseline: [0], resolvedTreatment: [1], spendBaseline: [1], spendTreatment: [1.5] },
      1,
      { B: 200 },
    )
    expect(one.percentile.estimate).toBeCloseTo(0.5, 12)
    expect(one.percentile.ci).toBeNull()
    expect(one.percentile.reason).toMatch(/2 blocks/)
    const none = pairedNetBenefit(
      { resolvedBaseline: [], resolvedTreatment: [], spendBaseline: [], spendTreatment: [] },
      1,
      { B: 200 },
    )
    expect(none.percentile.estimate).toBeNull()
    expect(none.percentile.reason).toBe('no blocks')
  })

  it('rejects a negative or non-finite value, negative spend and unequal lengths', () => {
    expect(() => pairedNetBenefit(blocks, -1)).toThrow(/valuePerResolution/)
    expect(() => pairedNetBenefit(blocks, Number.POSITIVE_INFINITY)).toThrow(/valuePerResolution/)
    expect(() => pairedNetBenefit({ ...blocks, spendTreatment: [0.9, -0.7, 0.8, 0.6] }, 1)).toThrow(
      /spendTreatment\[1\]/,
    )
    expect(() => pairedNetBenefit({ ...blocks, resolvedTreatment: [1, 1] }, 1)).toThrow(RangeError)
  })
})

describe('pairedNetBenefit: coverage by seeded simulation', () => {
  it('the 95% interval covers the true net benefit in about 95% of simulated panels', () => {
    // World: 60 blocks; baseline resolves with p 0.5, treatment with p 0.6 (paired: a shared block
    // difficulty), spend lognormal-ish; V = $1. True NB = 1 · (0.6 − 0.5) − (E s_T − E s_B) = 0.1 − 0.1 = 0.
    const rng = createRng(2026)
    const n = 60
    const worlds = 300
    let covered = 0
    for (let w = 0; w < worlds; w++) {
      const rb: number[] = []
      const rt: number[] = []
      const sb: number[] = []
      const st: number[] = []
      for (let i = 0; i < n; i++) {
        const u = rng.nextFloat()
        rb.push(u < 0.5 ? 1 : 0)
        rt.push(u < 0.6 ? 1 : 0)
        // spend: baseline uniform on [0.1, 0.3] (mean 0.2), treatment 1.5× the same draw (mean 0.3)
        const s = 0.1 + 0.2 * rng.nextFloat()
        sb.push(s)
        st.push(1.5 * s)
      }
      const nb = chosenInterval(
        pairedNetBenefit(
          { resolvedBaseline: rb, resolvedTreatment: rt, spendBaseline: sb, spendTreatment: st },
          1,
          { B: 1000, seed: 1 + w },
        ),
      )
      if (nb.ci && nb.ci[0] <= 0 && 0 <= nb.ci[1]) covered++
    }
    const coverage = covered / worlds
    // 300 worlds: the binomial standard error at 0.95 is 0.0126; allow about 3 of them either side
    expect(coverage).toBeGreaterThan(0.9)
    expect(coverage).toBeLessThan(0.99)
  })
})

describe('paretoFrontier', () => {
  it('keeps the cells no other cell beats on both axes; ties stay; unknown spend is unplaced', () => {
    const f = paretoFrontier([
      { spend: 1.0, rate: 0.5 }, // cheapest: on it
      { spend: 2.0, rate: 0.7 }, // best rate: on it
      { spend: 1.5, rate: 0.4 }, // dominated by the first (cheaper and better)
      { spend: 2.0, rate: 0.7 }, // equal to the second: on it too
      { spend: null, rate: 0.9 }, // spend unknown: never placed, never dominates
      { spend: 3.0, rate: 0.7 }, // same rate as the second at more spend: dominated
      { spend: 0.5, rate: 0.5 - 1e-9 }, // cheaper than the first, a hair worse: on it
    ])
    expect(f).toEqual([true, true, false, true, null, false, true])
  })

  it('a single placed cell is the frontier; no cells, no frontier', () => {
    expect(paretoFrontier([{ spend: 0.2, rate: 0 }])).toEqual([true])
    expect(paretoFrontier([])).toEqual([])
  })
})
