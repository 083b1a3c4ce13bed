import { describe, expect, it } from 'vitest'
import {
  bootstrapCostPerResolutionRatio,
  bootstrapMeanDifference,
  bootstrapRatioOfMeans,
  bootstrapRatiosOfMeans,
  DEFAULT_B,
  DEFAULT_SEED,
  pairedBootstrap,
} from '../../../src/stats/bootstrap.js'
import {
  bcaInterval,
  biasCorrection,
  jackknifeAcceleration,
  leaveOneOutMeans,
  percentileInterval,
} from '../../../src/stats/bootstrap-intervals.js'
import { normalQuantile } from '../../../src/stats/normal.js'
import { createResamplePlan } from '../../../src/stats/resample-plan.js'
import { expectAllFinite, expectRelative } from './helpers.js'

// A skewed sample (lognormal quantiles times a small cycle), and paired resource values with a
// treatment that costs more on some blocks.
const SKEWED = Array.from(
  { length: 40 },
  (_, i) => (Math.exp(1.2 * normalQuantile((i + 0.5) / 40)) * (((i * 7) % 5) + 1)) / 3,
)
const BASELINE = Array.from({ length: 40 }, (_, i) => 50 + ((i * 37) % 23) * 10)
const TREATMENT = BASELINE.map((v, i) => v * (0.8 + ((i * 11) % 9) / 10) + (i % 4 === 0 ? 300 : 0))
const DARWIN = [6, 8, 14, 16, 23, 24, 28, 29, 41, -48, 49, 56, 60, -67, 75]

function contains(ci: readonly [number, number] | null, x: number): boolean {
  return ci !== null && ci[0] <= x && x <= ci[1]
}

describe('jackknife acceleration and interval helpers', () => {
  it("Darwin's Zea mays: jackknife acceleration of the mean a = −0.0426929", () => {
    expect(jackknifeAcceleration(leaveOneOutMeans(DARWIN))).toBeCloseTo(-0.0426929, 7)
  })

  it('acceleration is 0 when every leave-one-out estimate is equal', () => {
    expect(jackknifeAcceleration([2, 2, 2])).toBe(0)
    expect(() => jackknifeAcceleration([1])).toThrow(RangeError)
  })

  it('percentile interval uses type 7 quantiles of the sorted replicates', () => {
    const sorted = Float64Array.from({ length: 101 }, (_, i) => i)
    const r = percentileInterval(sorted, 0.9)
    expect(r.reason).toBeNull()
    expect(r.ci![0]).toBeCloseTo(5, 12)
    expect(r.ci![1]).toBeCloseTo(95, 12)
  })

  it('BCa with z0 = 0 and a = 0 is the percentile interval', () => {
    const sorted = Float64Array.from({ length: 101 }, (_, i) => i)
    const bca = bcaInterval(sorted, 50, 0, 0.9)
    expect(bca.z0).toBe(0)
    expect(bca.ci![0]).toBeCloseTo(5, 9)
    expect(bca.ci![1]).toBeCloseTo(95, 9)
  })

  it('z0 counts ties at the estimate as half; infinite z0 gives a reason', () => {
    expect(biasCorrection(Float64Array.from([1, 2, 2, 3]), 2)).toBe(0)
    expect(biasCorrection(Float64Array.from([1, 2, 3]), 0)).toBeNull()
    const r = bcaInterval(Float64Array.from([1, 2, 3]), 5, 0, 0.95)
    expect(r.ci).toBeNull()
    expect(r.reason).toMatch(/z0 infinite/)
  })
})

describe('paired bootstrap of the ratio of means', () => {
  it('is deterministic: the same seed gives identical output', () => {
    const a = bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 2000, seed: 11 })
    const b = bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 2000, seed: 11 })
    expect(JSON.stringify(a)).toBe(JSON.stringify(b))
    const c = bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 2000, seed: 12 })
    expect(c.percentile.ci).not.toEqual(a.percentile.ci)
  })

  it('reports estimate, both intervals, method, B and seed; both intervals contain the estimate', () => {
    const r = bootstrapRatioOfMeans(BASELINE, TREATMENT, { seed: 3 })
    const estimate = TREATMENT.reduce((s, x) => s + x, 0) / BASELINE.reduce((s, x) => s + x, 0)
    expect(r.n).toBe(40)
    for (const res of [r.percentile, r.bca]) {
      expect(res.reason).toBeNull()
      expect(res.estimate).toBe(estimate)
      expect(res.B).toBe(DEFAULT_B)
      expect(res.seed).toBe(3)
      expect(res.level).toBe(0.95)
      expect(contains(res.ci, estimate)).toBe(true)
    }
    expect(r.percentile.method).toBe('percentile')
    expect(r.bca.method).toBe('bca')
    // SciPy 1.17.1 stats.bootstrap(paired=True, n_resamples=20000) on the same data gives percentile
    // [1.436, 1.978] and BCa [1.449, 1.998]; a different resample stream agrees to Monte Carlo error.
    expect(r.percentile.ci![0]).toBeCloseTo(1.436, 1)
    expect(r.percentile.ci![1]).toBeCloseTo(1.978, 1)
    expect(r.bca.ci![0]).toBeCloseTo(1.449, 1)
    expect(r.bca.ci![1]).toBeCloseTo(1.998, 1)
    // Jackknife acceleration is deterministic: (Python) 0.023536094532947655.
    expectRelative(r.acceleration, 0.023536094532947655, 1e-9)
  })

  it('uses the default seed when none is given', () => {
    expect(bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 500 }).percentile.seed).toBe(DEFAULT_SEED)
  })

  it('a shared plan gives the same result as the seed it was drawn from', () => {
    const plan = createResamplePlan(40, 1000, 8)
    const viaPlan = bootstrapRatioOfMeans(BASELINE, TREATMENT, { plan })
    const viaSeed = bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 1000, seed: 8 })
    expect(viaPlan).toEqual(viaSeed)
    const streamed = bootstrapRatioOfMeans(BASELINE, TREATMENT, { plan: { ...plan, indices: null } })
    expect(streamed).toEqual(viaSeed)
    expect(() => bootstrapRatioOfMeans([1, 2], [1, 2], { plan })).toThrow(RangeError)
  })

  it('Σbaseline = 0 → null with a reason', () => {
    const r = bootstrapRatioOfMeans([0, 0, 0], [1, 2, 3], { B: 200 })
    expect(r.percentile).toMatchObject({
      estimate: null,
      ci: null,
      reason: 'Σbaseline = 0: the ratio of means is undefined',
    })
    expect(r.bca.ci).toBeNull()
    expectAllFinite(r)
  })

  it('replicates with Σbaseline* = 0 make the interval null, counted in the reason', () => {
    const r = bootstrapRatioOfMeans([0, 0, 0, 5], [1, 2, 3, 4], { B: 500, seed: 1 })
    expect(r.percentile.estimate).toBe(2)
    expect(r.percentile.ci).toBeNull()
    expect(r.percentile.reason).toMatch(/^statistic undefined in \d+ of 500 bootstrap replicates/)
  })

  it('degenerate inputs never produce NaN or Infinity', () => {
    const cases = [
      bootstrapRatioOfMeans([], [], { B: 100 }),
      bootstrapRatioOfMeans([5], [6], { B: 100 }),
      bootstrapRatioOfMeans([0, 0], [0, 0], { B: 100 }),
      bootstrapRatioOfMeans([2, 2, 2], [3, 3, 3], { B: 100 }),
      bootstrapMeanDifference([], [], { B: 100 }),
      bootstrapMeanDifference([1], [1], { B: 100 }),
      bootstrapMeanDifference([0, 0, 0], [0, 0, 0], { B: 100 }),
    ]
    for (const r of cases) expectAllFinite(r)
    expect(cases[0]!.percentile.reason).toBe('no blocks')
    expect(cases[1]!.percentile).toMatchObject({ estimate: 1.2, ci: null })
    expect(cases[1]!.percentile.reason).toMatch(/at least 2 blocks/)
    // Constant ratios: every replicate equals the estimate; both intervals collapse onto it.
    expect(cases[3]!.percentile.ci).toEqual([1.5, 1.5])
    expect(cases[3]!.bca.ci).toEqual([1.5, 1.5])
    expect(cases[6]!.bca.ci).toEqual([0, 0])
  })

  it('rejects mismatched lengths, negative values and bad options', () => {
    expect(() => bootstrapRatioOfMeans([1, 2], [1])).toThrow(RangeError)
    expect(() => bootstrapRatioOfMeans([1, -2], [1, 2])).toThrow(RangeError)
    expect(() => bootstrapRatioOfMeans([1, 2], [1, Number.NaN])).toThrow(RangeError)
    expect(() => bootstrapRatioOfMeans([1, 2], [1, 2], { B: 0 })).toThrow(RangeError)
    expect(() => bootstrapRatioOfMeans([1, 2], [1, 2], { level: 1 })).toThrow(RangeError)
    expect(() => bootstrapRatioOfMeans([1, 2], [1, 2], { seed: -3 })).toThrow(RangeError)
  })
})

describe('several metrics on the same blocks in one pass', () => {
  it('is bit-identical to separate calls, in input order, with undefined metrics passed through', () => {
    const metrics = [
      { baseline: BASELINE, treatment: TREATMENT },
      { baseline: TREATMENT, treatment: BASELINE },
      { baseline: BASELINE.map(() => 0), treatment: TREATMENT },
      { baseline: BASELINE.map((x) => x * 3), treatment: SKEWED },
      { baseline: SKEWED, treatment: BASELINE },
      { baseline: BASELINE, treatment: BASELINE },
    ]
    const options = { B: 3000, seed: 21 }
    const batch = bootstrapRatiosOfMeans(metrics, options)
    const separate = metrics.map((m) => bootstrapRatioOfMeans(m.baseline, m.treatment, options))
    expect(JSON.stringify(batch)).toBe(JSON.stringify(separate))
    expect(batch[2]!.percentile.reason).toMatch(/Σbaseline = 0/)
    // A lone remaining metric (5 pending → groups of 4 and 1) takes the two-column kernel: same result.
    expect(bootstrapRatiosOfMeans([metrics[0]!], options)).toEqual([separate[0]])
  })

  it('needs the same number of blocks for every metric', () => {
    expect(bootstrapRatiosOfMeans([])).toEqual([])
    expect(() =>
      bootstrapRatiosOfMeans([
        { baseline: [1, 2], treatment: [1, 2] },
        { baseline: [1, 2, 3], treatment: [1, 2, 3] },
      ]),
    ).toThrow(RangeError)
  })
})

describe('BCa versus percentile on a skewed sample', () => {
  it('BCa shifts the interval of a right-skewed mean to the right (a > 0, z0 > 0)', () => {
    const zeros = SKEWED.map(() => 0)
    const r = bootstrapMeanDifference(zeros, SKEWED, { B: 20_000, seed: 3 })
    const pct = r.percentile.ci!
    const bca = r.bca.ci!
    expect(r.acceleration!).toBeGreaterThan(0)
    expect(r.z0!).toBeGreaterThan(0)
    expect(bca[0]).toBeGreaterThan(pct[0])
    expect(bca[1]).toBeGreaterThan(pct[1])
    // SciPy 1.17.1 stats.bootstrap(n_resamples=20000) on this sample: percentile [1.170, 3.307],
    // BCa [1.328, 3.828]. Agreement to Monte Carlo error.
    expect(pct[0]).toBeCloseTo(1.17, 1)
    expect(pct[1]).toBeCloseTo(3.307, 1)
    expect(bca[0]).toBeCloseTo(1.328, 1)
    expect(bca[1]).toBeCloseTo(3.828, 1)
  })
})

describe('generic paired bootstrap', () => {
  it('a sum statistic through the generic path equals the fast path', () => {
    const generic = pairedBootstrap(
      BASELINE,
      TREATMENT,
      (b, t) => {
        let sb = 0
        let st = 0
        for (let i = 0; i < b.length; i++) {
          sb += b[i]!
          st += t[i]!
        }
        return sb > 0 ? st / sb : null
      },
      { B: 1000, seed: 2 },
    )
    const fast = bootstrapRatioOfMeans(BASELINE, TREATMENT, { B: 1000, seed: 2 })
    expect(generic.percentile.ci![0]).toBeCloseTo(fast.percentile.ci![0], 12)
    expect(generic.percentile.ci![1]).toBeCloseTo(fast.percentile.ci![1], 12)
    expect(generic.acceleration!).toBeCloseTo(fast.acceleration!, 12)
  })

  it('a median difference (non-smooth statistic) gives an interval containing the estimate', () => {
    const median = (b: Float64Array, t: Float64Array): number => {
      const d = Float64Array.from(t, (x, i) => x - b[i]!).sort()
      const m = d.length >> 1
      return d.length % 2 ? d[m]! : (d[m - 1]! + d[m]!) / 2
    }
    const r = pairedBootstrap(BASELINE, TREATMENT, median, { B: 2000, seed: 4 })
    expect(contains(r.percentile.ci, r.percentile.estimate!)).toBe(true)
    expectAllFinite(r)
  })

  it('a statistic undefined on the data gives null with a reason', () => {
    const r = pairedBootstrap([1, 2], [3, 4], () => null, { B: 100 })
    expect(r.percentile.reason).toBe('the statistic is undefined on the observed blocks')
    expect(pairedBootstrap([], [], () => 1, { B: 100 }).bca.reason).toBe('no blocks')
  })
})

describe('portfolio cost per resolution: ratio between arms', () => {
  // 24 blocks (a pattern of 8 repeated), so that no replicate loses every resolution.
  const thrice = (xs: number[]): number[] => [...xs, ...xs, ...xs]
  const spendB = thrice([1, 2, 3, 4, 5, 6, 7, 8])
  const spendT = thrice([2, 2, 4, 4, 6, 6, 8, 8])
  const resB = thrice([1, 0, 1, 0, 1, 1, 0, 1])
  const resT = thrice([1, 1, 1, 0, 1, 1, 1, 1])

  it('estimate = (Σspend_t/Σresolved_t)/(Σspend_b/Σresolved_b), with both intervals', () => {
    const r = bootstrapCostPerResolutionRatio(
      { spendBaseline: spendB, spendTreatment: spendT, resolvedBaseline: resB, resolvedTreatment: resT },
      { B: 2000, seed: 5 },
    )
    expect(r.percentile.estimate).toBeCloseTo(120 / 21 / (108 / 15), 12)
    expect(r.bca.reason).toBeNull()
    expect(r.percentile.reason).toBeNull()
    expect(contains(r.percentile.ci, r.percentile.estimate!)).toBe(true)
    expectAllFinite(r)
  })

  it('no resolutions → null with reason "no resolutions …"', () => {
    const zero = resB.map(() => 0)
    const r = bootstrapCostPerResolutionRatio(
      { spendBaseline: spendB, spendTreatment: spendT, resolvedBaseline: zero, resolvedTreatment: resT },
      { B: 100 },
    )
    expect(r.percentile).toMatchObject({
      estimate: null,
      ci: null,
      reason: 'no resolutions in the baseline arm',
    })
    const both = bootstrapCostPerResolutionRatio(
      { spendBaseline: spendB, spendTreatment: spendT, resolvedBaseline: zero, resolvedTreatment: zero },
      { B: 100 },
    )
    expect(both.bca.reason).toBe('no resolutions in either arm')
  })
})
