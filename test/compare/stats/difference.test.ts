import { describe, expect, it } from 'vitest'
import { RESOLVE_RATE_DIFFERENCE_METHOD, resolveRateDifference } from '../../../src/stats/difference.js'
import { expectAllFinite, expectRelative } from './helpers.js'

describe("difference in resolve rate with Newcombe's paired hybrid score interval (method 10)", () => {
  it('Cavo et al. (2012) example of Fagerland, Lydersen & Laake: 6.21 points [0.46, 11.86]', () => {
    // Table [[59, 6], [16, 80]] with the treatment as the second measurement's complement:
    // both 59, baseline-only 6, treatment-only 16, neither 80. Fagerland et al. report −0.0621
    // (−0.1186 to −0.0046) for the opposite orientation.
    const r = resolveRateDifference({
      bothResolved: 59,
      baselineOnly: 6,
      treatmentOnly: 16,
      neitherResolved: 80,
    })
    expect(r.n).toBe(161)
    expectRelative(r.points, 1000 / 161, 1e-14)
    expectRelative(r.ci![0], 0.4625113933050061, 1e-12)
    expectRelative(r.ci![1], 11.862119563870994, 1e-12)
    expect(r.method).toBe(RESOLVE_RATE_DIFFERENCE_METHOD)
    expect(r.level).toBe(0.95)
  })

  it('Bentur et al. (2009) example: 28.57 points [2.56, 50.69]', () => {
    const r = resolveRateDifference({
      bothResolved: 1,
      baselineOnly: 1,
      treatmentOnly: 7,
      neitherResolved: 12,
    })
    expectRelative(r.points, 200 / 7, 1e-14)
    expectRelative(r.ci![0], 2.5559124164859837, 1e-12)
    expectRelative(r.ci![1], 50.6920226686141, 1e-12)
  })

  it('F08 A/A table: −7 points [−10.60, −3.42]', () => {
    const r = resolveRateDifference({
      bothResolved: 70,
      baselineOnly: 60,
      treatmentOnly: 25,
      neitherResolved: 345,
    })
    expect(r.points).toBe(-7)
    expectRelative(r.ci![0], -10.60354852381183, 1e-12)
    expectRelative(r.ci![1], -3.415835176408864, 1e-12)
  })

  it('degenerate tables stay finite', () => {
    const concordant = resolveRateDifference({
      bothResolved: 12,
      baselineOnly: 0,
      treatmentOnly: 0,
      neitherResolved: 8,
    })
    expect(concordant.points).toBe(0)
    expectRelative(concordant.ci![1], 9.53661919389822, 1e-12)
    expectRelative(concordant.ci![0], -9.53661919389822, 1e-12)
    const allTreatment = resolveRateDifference({
      bothResolved: 0,
      baselineOnly: 0,
      treatmentOnly: 3,
      neitherResolved: 0,
    })
    expect(allTreatment.points).toBe(100)
    expect(allTreatment.ci![1]).toBe(100)
    expectRelative(allTreatment.ci![0], 20.59232824597783, 1e-12)
    for (const r of [concordant, allTreatment]) expectAllFinite(r)
  })

  it('empty table → null with a reason; bad counts throw', () => {
    expect(
      resolveRateDifference({ bothResolved: 0, baselineOnly: 0, treatmentOnly: 0, neitherResolved: 0 }),
    ).toMatchObject({
      n: 0,
      points: null,
      ci: null,
      reason: 'no blocks',
    })
    expect(() =>
      resolveRateDifference({ bothResolved: -1, baselineOnly: 0, treatmentOnly: 0, neitherResolved: 0 }),
    ).toThrow(RangeError)
  })
})
