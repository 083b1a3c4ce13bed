import { describe, expect, it } from 'vitest'
import { inverseNormalCombination, ratioOfTotalsTest, sdOfD } from '../../../src/stats/index.js'

// Reference values: scipy 1.17 (numpy 2.4):
//   stats.ttest_1samp(t − θ·b, 0, alternative='greater');
//   z = (w1·norm.isf(p1) + w2·norm.isf(p2)) / √(w1² + w2²), p = norm.sf(z).
describe('ratioOfTotalsTest: one-sided test of Σt ≤ θ·Σb (Student t of mean t − θ·b)', () => {
  const b = [100, 200, 1000]
  const t = [110, 180, 1500]
  it('matches scipy on the statistics.md worked example at three thresholds', () => {
    const cases: Array<[number, number, number]> = [
      [1.5, -1.511857892036909, 0.8651483716701107],
      [1.0, 0.9690154823758407, 0.21738084608255703],
      [1.2, 0.6809026333799376, 0.28309607167437495],
    ]
    for (const [theta, stat, p] of cases) {
      const r = ratioOfTotalsTest(b, t, theta)!
      expect(r.statistic).toBeCloseTo(stat, 12)
      expect(r.p).toBeCloseTo(p, 12)
      expect(r.df).toBe(2)
      expect(r.estimate).toBeCloseTo(1790 / 1300, 14)
    }
  })

  it('matches scipy on eight blocks just over the threshold', () => {
    const r = ratioOfTotalsTest([1, 2, 3, 4, 5, 6, 7, 8], [2.5, 2.9, 5.1, 6.8, 7.0, 9.9, 10.2, 13.0], 1.5)!
    expect(r.statistic).toBeCloseTo(1.9301809569839548, 12)
    expect(r.p).toBeCloseTo(0.04744852147379726, 12)
    expect(r.estimate).toBeCloseTo(1.594444444444444, 12)
  })

  it('tests totals, not per-block ratios: a fixed overhead on cheap blocks does not move it', () => {
    // Per-block ratios mostly far above 1.5 (cheap blocks + a fixed 1.0 overhead), ratio of totals 1.2.
    const base = [0.2, 0.3, 0.2, 0.25, 10, 12, 9, 11]
    const treat = base.map((x) => x + 1)
    const r = ratioOfTotalsTest(base, treat, 1.5)!
    expect(r.estimate).toBeLessThan(1.5)
    expect(r.p).toBeGreaterThan(0.5)
  })

  it('undefined without spread or with fewer than 2 blocks; rejects bad input', () => {
    expect(ratioOfTotalsTest([1, 2, 3], [1.5, 3, 4.5], 1.5)).toBeNull()
    expect(ratioOfTotalsTest([1], [2], 1.5)).toBeNull()
    expect(() => ratioOfTotalsTest([1, 2], [1], 1.5)).toThrow(RangeError)
    expect(() => ratioOfTotalsTest([1, -2], [1, 2], 1.5)).toThrow(RangeError)
    expect(() => ratioOfTotalsTest([1, 2], [1, 2], 0)).toThrow(RangeError)
  })
})

// Reference values: numpy 2.4 / scipy 1.17, by the formulas of stats/totals.ts TotalsMethod:
//   d = t − θ·b, m = d.mean(), s = d.std(ddof=1), μ3 = ((d − m)**3).sum()/n, se = s/√n;
//   Johnson t_J = (m + μ3/(6·s²·n) + μ3·m²/(3·s⁴))/se; Hall √n·(T + γT²/3 + γ²T³/27 + γ/(6n)),
//   T = m/s, γ = μ3/s³; p = stats.t.sf(statistic, n − 1).
describe('ratioOfTotalsTest: skewness-corrected and resampling methods', () => {
  const b8 = [1, 2, 3, 4, 5, 6, 7, 8]
  const t8 = [2.5, 2.9, 5.1, 6.8, 7.0, 9.9, 10.2, 13.0]
  // One block with a dear baseline: D has a heavy left tail (μ3 < 0).
  const bSkew = [1, 1.2, 0.8, 1.1, 0.9, 1.0, 1.3, 0.7, 1.05, 6.0]
  const tSkew = [2.0, 2.1, 1.7, 2.0, 1.6, 1.9, 2.3, 1.4, 1.9, 2.2]

  it('the log-ratio form: (ln(Σt/Σb) − ln θ) / SE, SE the delta method of the per-block shares', () => {
    // Σb 15, Σt 24.5: ln(1.63333/1.5) = 0.0851578; residuals tᵢ/t̄ − bᵢ/b̄ = 0.059864, −0.125170,
    // 0.076190, −0.010884; s = 0.0916054, SE = s/2 = 0.0458027; statistic 1.859229 against t(3).
    const r = ratioOfTotalsTest([1, 2, 4, 8], [2, 2.5, 7, 13], 1.5, { method: 'log-ratio' })!
    expect(r.estimate).toBeCloseTo(24.5 / 15, 14)
    expect(r.statistic).toBeCloseTo(1.859229422990206, 9)
    expect(r.p).toBeCloseTo(0.07997609368667113, 9)
    // a floor on the spread of D, carried to the log scale as floor/(θ·b̄), only lowers it
    const floored = ratioOfTotalsTest([1, 2, 4, 8], [2, 2.5, 7, 13], 1.5, {
      method: 'log-ratio',
      sdFloor: 2,
    })!
    expect(floored.statistic).toBeCloseTo(0.0851578 / (2 / (1.5 * 3.75) / 2), 5)
  })

  it("Johnson's modified t and Hall's transformation match the hand-computed values", () => {
    const j = ratioOfTotalsTest(b8, t8, 1.5, { method: 'johnson' })!
    expect(j.statistic).toBeCloseTo(1.7312964539244182, 12)
    expect(j.p).toBeCloseTo(0.0635049496863305, 12)
    const h = ratioOfTotalsTest(b8, t8, 1.5, { method: 'hall' })!
    expect(h.statistic).toBeCloseTo(1.736606499507479, 12)
    expect(h.p).toBeCloseTo(0.06301539830019094, 12)
    const js = ratioOfTotalsTest(bSkew, tSkew, 1.5, { method: 'johnson' })!
    expect(js.statistic).toBeCloseTo(-0.6603001118557627, 12)
    expect(js.p).toBeCloseTo(0.7372008217575383, 12)
    const hs = ratioOfTotalsTest(bSkew, tSkew, 1.5, { method: 'hall' })!
    expect(hs.statistic).toBeCloseTo(-0.662472225861176, 12)
    expect(hs.p).toBeCloseTo(0.7378656306516475, 12)
    expect(ratioOfTotalsTest(bSkew, tSkew, 1.5)!.statistic).toBeCloseTo(-0.4843963605168875, 12)
  })

  it('johnson-down lowers the statistic only: min(t, t_J)', () => {
    const down = ratioOfTotalsTest(b8, t8, 1.5, { method: 'johnson-down' })!
    // μ3 < 0 here, so t_J < t and johnson-down is Johnson's.
    expect(down.statistic).toBeCloseTo(1.7312964539244182, 12)
    // Right-skewed D (μ3 > 0): Johnson's would raise the statistic; johnson-down keeps Student's t.
    const bR = [1, 1, 1, 1, 1, 1, 1, 0.2]
    const tR = [1.6, 1.4, 1.5, 1.7, 1.3, 1.5, 1.6, 4]
    const st = ratioOfTotalsTest(bR, tR, 1.5)!
    expect(ratioOfTotalsTest(bR, tR, 1.5, { method: 'johnson' })!.statistic).toBeGreaterThan(st.statistic)
    expect(ratioOfTotalsTest(bR, tR, 1.5, { method: 'johnson-down' })!.statistic).toBe(st.statistic)
  })

  // Sixteen blocks of fresh input tokens from a real run: the treatment uses 3.6× the baseline on every
  // block, with a slight left skew of D (γ ≈ −0.35).
  const fresh = {
    b: [2613, 2419, 2453, 2166, 2328, 2820, 2145, 2800, 1945, 2573, 2122, 2166, 2295, 2437, 2174, 2600],
    t: [8964, 8494, 8567, 8522, 8574, 9093, 8408, 9068, 8216, 8523, 8344, 8496, 8645, 8360, 8478, 8897],
  }

  it("johnson-critical: Johnson's correction evaluated at the critical value (numpy/scipy: q = t.isf(0.05, n − 1), shift at m = q·se)", () => {
    const r = ratioOfTotalsTest(b8, t8, 1.5, { method: 'johnson-critical' })!
    expect(r.statistic).toBeCloseTo(1.7377055316661953, 12)
    expect(r.p).toBeCloseTo(0.06291452419787862, 12)
    const skew = ratioOfTotalsTest(bSkew, tSkew, 1.5, { method: 'johnson-critical' })!
    expect(skew.statistic).toBeCloseTo(-1.4087156687018685, 12)
    expect(skew.p).toBeCloseTo(0.9037414755617412, 12)
    const f = ratioOfTotalsTest(fresh.b, fresh.t, 1.5, { method: 'johnson-critical' })!
    expect(f.statistic).toBeCloseTo(98.08236815076452, 9)
    expect(f.p).toBeLessThan(1e-20)
  })

  it("a strong effect with a slight left skew: t_J's d̄² term turns Johnson's statistic negative; johnson-critical and hall-down stay monotone", () => {
    // Student's t is 98; Johnson's modified t is −181 (p = 1): min(t, t_J) would never confirm a 3.6× ratio.
    expect(ratioOfTotalsTest(fresh.b, fresh.t, 1.5)!.statistic).toBeCloseTo(98.1857369222127, 9)
    expect(ratioOfTotalsTest(fresh.b, fresh.t, 1.5, { method: 'johnson-down' })!.p).toBe(1)
    expect(ratioOfTotalsTest(fresh.b, fresh.t, 1.5, { method: 'hall-down' })!.p).toBeLessThan(1e-20)
    // Shifting every treatment value up (the same D shape, a larger mean) never raises p.
    for (const method of ['johnson-critical', 'hall-down'] as const) {
      let last = 1
      for (let k = 0; k <= 80; k++) {
        const shifted = tSkew.map((x) => x + 0.05 * k)
        const p = ratioOfTotalsTest(bSkew, shifted, 1.5, { method })!.p
        expect(p, `${method} at shift ${k}`).toBeLessThanOrEqual(last + 1e-15)
        last = p
      }
      // Hall's transformation is monotone but flat where γ·T = −3: it rejects later than johnson-critical.
      expect(last).toBeLessThan(method === 'johnson-critical' ? 0.002 : 0.2)
    }
    // johnson-down is not monotone on the same path: p falls, then rises again.
    const pDown = Array.from(
      { length: 81 },
      (_, k) =>
        ratioOfTotalsTest(
          bSkew,
          tSkew.map((x) => x + 0.05 * k),
          1.5,
          { method: 'johnson-down' },
        )!.p,
    )
    const lowest = Math.min(...pDown)
    expect(pDown[80]!).toBeGreaterThan(lowest + 0.5)
  })

  it('a floor on s replaces a smaller s (hand-computed with s floored at 2s)', () => {
    const s = sdOfD(b8, t8, 1.5)!
    const floored = ratioOfTotalsTest(b8, t8, 1.5, { sdFloor: 2 * s })!
    expect(floored.statistic).toBeCloseTo(1.930180956983955 / 2, 12)
    const down = ratioOfTotalsTest(b8, t8, 1.5, { method: 'johnson-down', sdFloor: 2 * s })!
    expect(down.statistic).toBeCloseTo(0.8656482269622091, 12)
    expect(down.p).toBeCloseTo(0.20768163482386753, 12)
    // A floor below s changes nothing.
    expect(ratioOfTotalsTest(b8, t8, 1.5, { sdFloor: s / 2 })!.statistic).toBeCloseTo(1.930180956983955, 12)
  })

  it('bootstrap-t and sign-flip: seeded, deterministic, p in [1/(B+1), 1]', () => {
    for (const method of ['bootstrap-t', 'sign-flip'] as const) {
      const a = ratioOfTotalsTest(b8, t8, 1.5, { method, resamples: 999, seed: 7 })!
      const again = ratioOfTotalsTest(b8, t8, 1.5, { method, resamples: 999, seed: 7 })!
      expect(again.p).toBe(a.p)
      expect(a.p).toBeGreaterThan(0.001)
      expect(a.p).toBeLessThan(0.2)
      expect(a.method).toBe(method)
    }
    // Every D > 0 on 12 blocks: only the identity of 2¹² sign patterns reaches Σd, so the sign-flip
    // p is near 1/4096 — with B = 999 flips it is 1/1000 unless a flip draws all signs positive.
    const b = Array.from({ length: 12 }, (_, i) => 1 + i)
    const t = b.map((x, i) => 2 * x + 0.1 * (i % 3))
    expect(ratioOfTotalsTest(b, t, 1.5, { method: 'sign-flip' })!.p).toBeCloseTo(0.001, 3)
    // A left tail makes the studentized bootstrap less ready to reject than Student's t.
    const boot = ratioOfTotalsTest(bSkew, tSkew, 1.5, { method: 'bootstrap-t' })!
    expect(boot.p).toBeGreaterThan(0.5)
  })

  it('the skewness corrections need 3 blocks', () => {
    expect(ratioOfTotalsTest([1, 2], [2, 5], 1.5, { method: 'johnson' })).toBeNull()
    expect(ratioOfTotalsTest([1, 2], [2, 5], 1.5)).not.toBeNull()
  })
})

describe('inverseNormalCombination', () => {
  it('matches scipy', () => {
    const a = inverseNormalCombination([0.03, 0.2], [Math.sqrt(40), Math.sqrt(20)])
    expect(a.z).toBeCloseTo(2.0215717962452446, 12)
    expect(a.p).toBeCloseTo(0.02161030410171494, 12)
    expect(inverseNormalCombination([0.5, 0.5], [1, 1]).p).toBeCloseTo(0.5, 14)
    const c = inverseNormalCombination([0.001, 0.9], [1, 2])
    expect(c.z).toBeCloseTo(0.2357393336798331, 12)
    expect(c.p).toBeCloseTo(0.4068174730282002, 12)
  })
  it('p = 0 and p = 1 stay finite; bad input throws', () => {
    expect(inverseNormalCombination([0, 0.5], [1, 1]).p).toBeLessThan(1e-100)
    expect(inverseNormalCombination([1, 1], [1, 1]).p).toBe(1)
    expect(() => inverseNormalCombination([0.5], [1, 1])).toThrow(RangeError)
    expect(() => inverseNormalCombination([0.5], [0])).toThrow(RangeError)
    expect(() => inverseNormalCombination([1.5], [1])).toThrow(RangeError)
  })
})
