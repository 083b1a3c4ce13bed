import { describe, expect, it } from 'vitest'
import { JointBootstrap } from '../../../src/compare/joint-bootstrap.js'
import { bootstrapRatioOfMeans, chosenInterval } from '../../../src/stats/bootstrap.js'
import { createResamplePlan } from '../../../src/stats/resample-plan.js'
import { logRatioWithSe } from '../../../src/stats/studentized.js'

/** Skewed positive costs, deterministic. */
function costs(n: number, seed: number): number[] {
  let a = seed
  return Array.from({ length: n }, () => {
    a = (a * 1103515245 + 12345) % 2 ** 31
    return Math.round(Math.exp((a / 2 ** 31) * 3) * 1000) / 1000
  })
}

/** ln(Σt/Σb) and its SE from the blocks themselves: √(n/(n − 1)·Σ(tᵢ/Σt − bᵢ/Σb)²). */
function direct(t: number[], b: number[]): { log: number; se: number } {
  const st = t.reduce((s, x) => s + x, 0)
  const sb = b.reduce((s, x) => s + x, 0)
  const n = t.length
  let q = 0
  for (let i = 0; i < n; i++) q += (t[i]! / st - b[i]! / sb) ** 2
  return { log: Math.log(st / sb), se: Math.sqrt((n / (n - 1)) * q) }
}

/** Type 7 quantile of ascending values. */
function type7(sorted: number[], p: number): number {
  const h = (sorted.length - 1) * p
  const lo = Math.floor(h)
  return sorted[lo]! + (h - lo) * ((sorted[Math.min(lo + 1, sorted.length - 1)] ?? sorted[lo]!) - sorted[lo]!)
}

describe('studentized (symmetric bootstrap-t) interval of a ratio of means', () => {
  it('the SE from the five sums equals the SE from the blocks', () => {
    const t = costs(25, 3)
    const b = costs(25, 8)
    const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0)
    const m = {
      st: sum(t),
      sb: sum(b),
      stt: sum(t.map((x) => x * x)),
      sbb: sum(b.map((x) => x * x)),
      stb: sum(t.map((x, i) => x * b[i]!)),
    }
    const fromSums = logRatioWithSe(m, 25)!
    const d = direct(t, b)
    expect(fromSums.log).toBeCloseTo(d.log, 14)
    expect(fromSums.se).toBeCloseTo(d.se, 12)
  })

  it('equals a direct computation over the same resample plan', () => {
    const n = 30
    const B = 400
    const seed = 9
    const t = costs(n, 1)
    const b = costs(n, 2)
    const got = bootstrapRatioOfMeans(b, t, { B, seed, level: 0.95 })
    const plan = createResamplePlan(n, B, seed)
    const full = direct(t, b)
    const pivots: number[] = []
    for (let r = 0; r < B; r++) {
      const idx = Array.from(plan.indices!.subarray(r * n, (r + 1) * n))
      const rep = direct(
        idx.map((i) => t[i]!),
        idx.map((i) => b[i]!),
      )
      pivots.push(Math.abs(rep.log - full.log) / rep.se)
    }
    pivots.sort((x, y) => x - y)
    const q = type7(pivots, 0.95)
    const ci = got.studentized!.ci!
    expect(ci[0]).toBeCloseTo(Math.exp(full.log - q * full.se), 9)
    expect(ci[1]).toBeCloseTo(Math.exp(full.log + q * full.se), 9)
    // symmetric on the log scale around the estimate
    expect(Math.log(ci[1]) - full.log).toBeCloseTo(full.log - Math.log(ci[0]), 12)
    expect(got.studentized!.method).toBe('studentized')
    expect(chosenInterval(got)).toBe(got.studentized)
  })

  it('is undefined, with the reason, when the blocks have no spread or a sum is zero; BCa is shown then', () => {
    const b = costs(12, 4)
    const proportional = b.map((x) => 2 * x)
    const r = bootstrapRatioOfMeans(b, proportional, { B: 200, seed: 1 })
    expect(r.studentized!.ci).toBeNull()
    expect(r.studentized!.reason).toMatch(/no spread/)
    expect(chosenInterval(r).method).toBe('bca')
    const zeroT = bootstrapRatioOfMeans(b, new Array(12).fill(0), { B: 200, seed: 1 })
    expect(zeroT.studentized!.ci).toBeNull()
    const one = bootstrapRatioOfMeans([2], [3], { B: 200, seed: 1 })
    expect(one.studentized!.reason).toMatch(/one block/)
    // two blocks: half the resamples repeat one block (no spread, pivot +∞): unbounded, BCa shown
    const two = bootstrapRatioOfMeans([1, 3], [2, 1], { B: 200, seed: 1 })
    expect(two.studentized!.reason).toMatch(/unbounded: more than 5% of the resamples have no spread/)
    expect(chosenInterval(two).method).not.toBe('studentized')
  })

  it('a resample of one block drawn n times keeps its pivot (+∞): the method does not depend on the seed', () => {
    // six blocks: P(some resample is one block six times) ≈ 1 − (1 − 6/6⁶)^B, about 72% at B = 10,000
    const t = costs(6, 11)
    const b = costs(6, 12)
    const methods = new Set<string>()
    for (let seed = 1; seed <= 12; seed++) {
      const r = bootstrapRatioOfMeans(b, t, { B: 10_000, seed })
      methods.add(chosenInterval(r).method)
      const [lo, hi] = r.studentized!.ci!
      expect(lo).toBeLessThan(r.percentile.estimate!)
      expect(hi).toBeGreaterThan(r.percentile.estimate!)
    }
    expect([...methods]).toEqual(['studentized'])
  })
})

describe('no spread is recognised through rounding, so the fallback is shown', () => {
  it('every block equal (0.0371 vs 0.0113): the sums leave a rounding residue, not a standard error', () => {
    // three copies: Σt²/(Σt)² + Σb²/(Σb)² − 2Σtb/(ΣtΣb) is 0 in exact arithmetic, ~1e-16 in doubles
    const m = (k: number) => ({
      st: [0.0371, 0.0371, 0.0371].slice(0, k).reduce((s, x) => s + x, 0),
      sb: [0.0113, 0.0113, 0.0113].slice(0, k).reduce((s, x) => s + x, 0),
      stt: [0.0371, 0.0371, 0.0371].slice(0, k).reduce((s, x) => s + x * x, 0),
      sbb: [0.0113, 0.0113, 0.0113].slice(0, k).reduce((s, x) => s + x * x, 0),
      stb: [0.0371, 0.0371, 0.0371].slice(0, k).reduce((s, x) => s + x * 0.0113, 0),
    })
    expect(logRatioWithSe(m(3), 3)).toBeNull()
    for (const n of [3, 13, 40]) {
      const r = bootstrapRatioOfMeans(new Array(n).fill(0.0113), new Array(n).fill(0.0371), {
        B: 400,
        seed: 1,
      })
      expect(r.studentized!.ci).toBeNull()
      expect(r.studentized!.reason).toMatch(/no spread/)
      const shown = chosenInterval(r)
      expect(shown.method).not.toBe('studentized')
      expect(shown.ci![0]).toBeLessThanOrEqual(r.percentile.estimate!)
      expect(shown.ci![1]).toBeGreaterThanOrEqual(r.percentile.estimate! * (1 - 1e-15))
    }
  })

  it('the joint bootstrap (what aggregate uses) falls back the same way on all-equal costs', () => {
    for (const n of [3, 13, 40]) {
      const jb = new JointBootstrap(n, { B: 400, seed: 1, level: 0.95 })
      jb.addRatio('t', new Float64Array(n).fill(0.0371), 'b', new Float64Array(n).fill(0.0113))
      jb.compute()
      const r = jb.ratioOfMeans('t', 'b')
      expect(r.studentized!.ci).toBeNull()
      expect(chosenInterval(r).method).not.toBe('studentized')
    }
  })

  it('every block in the same proportion 1.1 (not a power of two): no studentized interval', () => {
    for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
      const b = costs(10 + seed * 3, seed)
      const t = b.map((x) => x * 1.1)
      expect(direct(t, b).se).toBeLessThan(1e-15)
      const r = bootstrapRatioOfMeans(b, t, { B: 200, seed })
      expect(r.studentized!.ci).toBeNull()
    }
  })

  it('a real but small spread still has its studentized interval', () => {
    const b = costs(30, 9)
    const t = b.map((x, i) => x * 1.1 * (1 + (i % 2 === 0 ? 1e-3 : -1e-3)))
    const r = bootstrapRatioOfMeans(b, t, { B: 400, seed: 1 })
    expect(r.studentized!.ci).not.toBeNull()
    expect(logRatioWithSe(sums(t, b), 30)!.se).toBeCloseTo(direct(t, b).se, 12)
  })
})

function sums(t: number[], b: number[]) {
  let st = 0
  let sb = 0
  let stt = 0
  let sbb = 0
  let stb = 0
  for (let i = 0; i < t.length; i++) {
    st += t[i]!
    sb += b[i]!
    stt += t[i]! * t[i]!
    sbb += b[i]! * b[i]!
    stb += t[i]! * b[i]!
  }
  return { st, sb, stt, sbb, stb }
}

describe('the studentized interval is what comparison.json and the reports show for a ratio', () => {
  it('comparison.json records it as the method, beside BCa and percentile; the label is bootstrap-t', async () => {
    const { bootstrapSummary } = await import('../../../src/compare/pair.js')
    const { effectOfBootstrap } = await import('../../../src/detect/effects.js')
    const { intervalLabel } = await import('../../../src/detect/decide.js')
    const pb = bootstrapRatioOfMeans(costs(40, 5), costs(40, 6), { B: 500, seed: 3 })
    const summary = bootstrapSummary(pb, { resamples: 500, seed: 3, level: 0.95 })
    expect(summary.method).toBe('studentized')
    expect(summary.ci).toEqual([pb.studentized!.ci![0], pb.studentized!.ci![1]])
    expect(summary.bca.ci).not.toBeNull()
    expect(summary.studentized!.ci).toEqual(summary.ci)
    const e = effectOfBootstrap(pb, 1, 'ratio', 'ratio of means')
    expect(e.method).toBe('paired block bootstrap of the ratio of means, studentized (B = 500)')
    expect(intervalLabel(e)).toBe('bootstrap-t')
  })
})
