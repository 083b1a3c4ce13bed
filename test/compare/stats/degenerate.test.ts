import { describe, expect, it } from 'vitest'
import * as stats from '../../../src/stats/index.js'
import { expectAllFinite } from './helpers.js'

// JSON never holds NaN or Infinity (statistics.md): every public function, fed empty arrays, all
// zeros and a single block, returns finite numbers or null with a reason — and never throws for them.
const INPUTS: [string, number[], number[]][] = [
  ['empty', [], []],
  ['all zeros', [0, 0, 0, 0], [0, 0, 0, 0]],
  ['one block', [3], [5]],
  ['one zero block', [0], [0]],
  ['constant', [2, 2, 2], [2, 2, 2]],
]

describe.each(INPUTS)('degenerate input: %s', (_name, baseline, treatment) => {
  const d = treatment.map((t, i) => t - baseline[i]!)
  const opts = { B: 200, seed: 1 }

  it('resource statistics', () => {
    const results = [
      stats.describe(baseline),
      stats.quantile(baseline, 0.9),
      stats.ratioOfMeans(baseline, treatment),
      stats.meanOfRatios(baseline, treatment),
      stats.geometricMeanOfRatios(baseline, treatment),
      stats.pairedDifferences(baseline, treatment),
      stats.logRatios(baseline, treatment),
      stats.expectedCostPerAttempt(baseline),
      stats.portfolioCostPerResolution(baseline, treatment),
      stats.costConditionalOnSuccess(baseline, treatment),
    ]
    for (const r of results) expectAllFinite(r)
  })

  it('paired tests', () => {
    for (const r of [stats.signTest(d), stats.wilcoxonSignedRank(d), stats.pairedTTest(d)]) expectAllFinite(r)
  })

  it('bootstraps', () => {
    const results = [
      stats.bootstrapRatioOfMeans(baseline, treatment, opts),
      stats.bootstrapMeanDifference(baseline, treatment, opts),
      stats.bootstrapCostPerResolutionRatio(
        {
          spendBaseline: baseline,
          spendTreatment: treatment,
          resolvedBaseline: baseline.map(() => 1),
          resolvedTreatment: treatment.map(() => 0),
        },
        opts,
      ),
      stats.pairedBootstrap(
        baseline,
        treatment,
        (b, t) => (b.length ? (t[0] ?? 0) - (b[0] ?? 0) : null),
        opts,
      ),
    ]
    for (const r of results) {
      expectAllFinite(r)
      // A null interval always comes with a reason.
      for (const res of [r.percentile, r.bca]) expect(res.ci !== null || res.reason !== null).toBe(true)
    }
  })
})

describe('degenerate counts', () => {
  it('McNemar, e-value, difference, power and pass@k at zero', () => {
    const results = [
      stats.mcnemarExact(0, 0),
      stats.discordantEValue(0, 0),
      stats.resolveRateDifference({ bothResolved: 0, baselineOnly: 0, treatmentOnly: 0, neitherResolved: 0 }),
      stats.resolveRateDifference({ bothResolved: 1, baselineOnly: 0, treatmentOnly: 0, neitherResolved: 0 }),
      stats.mcnemarPower({ n: 0, p10: 0, p01: 0 }),
      stats.mcnemarPower({ n: 1, p10: 1, p01: 0 }),
      stats.minimumDetectableEffect({ n: 1, b: 1, c: 0 }),
      stats.minimumDetectableEffect({ n: 10, discordanceRate: 1 }),
      stats.connorSampleSize({ p10: 0, p01: 0 }),
      stats.connorSampleSize({ p10: 1, p01: 0 }),
      stats.passAtK(1, 1, 1),
      stats.passHatK(1, 0, 1),
      stats.meanPassAtK([{ n: 0, c: 0 }], 1),
      stats.holm([0, 1]),
    ]
    for (const r of results) expectAllFinite(r)
  })
})
