import { describe, expect, it } from 'vitest'
import {
  createRng,
  lognormalNullP,
  noiseModelSd,
  pairedLogSigma,
  type StageColumns,
} from '../../../src/stats/index.js'

function normals(seed: number) {
  const rng = createRng(seed)
  return () => Math.sqrt(-2 * Math.log(1 - rng.nextFloat())) * Math.cos(2 * Math.PI * rng.nextFloat())
}

describe('pairedLogSigma: each arm’s run-to-run σ from blocks measured twice', () => {
  it('one attempt in each stage: √(mean of squared log ratios / 2), exactly', () => {
    const x1 = [1, 2, 4, 8]
    const x2 = [2, 2, 1, 8]
    const paired = [0, 1, 2, 3]
    const logs = x1.map((a, i) => Math.log(a / (x2[i] as number)) ** 2)
    const want = Math.sqrt(logs.reduce((s, v) => s + v, 0) / 4 / 2)
    expect(pairedLogSigma(x1, x2, paired, 1, 1)).toBeCloseTo(want, 9)
  })

  it('blocks without a pair or with a zero cost are skipped; under two usable pairs gives null', () => {
    expect(pairedLogSigma([1, 0, 3], [2, 5, 3], [0, 1, -1], 1, 1)).toBeNull()
    expect(pairedLogSigma([1, 2, 3], [2, 1], [0, -1], 1, 1)).toBeNull()
    expect(pairedLogSigma([1, 2, 3], [1, 2, 3], [0, 1, 2], 1, 1)).toBe(0)
  })

  it('one attempt against sums of four: recovers a lognormal σ of 0.7 on 4,000 simulated blocks', () => {
    const z = normals(3)
    const sigma = 0.7
    const draw = () => Math.exp(sigma * z() - (sigma * sigma) / 2)
    const n = 4000
    const levels = Array.from({ length: n }, () => Math.exp(z()))
    const x1 = levels.map((m) => m * draw())
    const x2 = levels.map((m) => m * (draw() + draw() + draw() + draw()))
    const est = pairedLogSigma(
      x1,
      x2,
      Array.from({ length: n }, (_, i) => i),
      1,
      4,
    ) as number
    // Monte Carlo s.e. of σ̂ here is about 0.01; the Fenton–Wilkinson step is approximate.
    expect(Math.abs(est - sigma)).toBeLessThan(0.04)
  })
})

describe('noiseModelSd: a stage’s s of D under lognormal noise', () => {
  it('averages k·μ²·(e^{σ²} − 1) per arm in quadrature, μ the observed cost per attempt × e^{g·σ²}', () => {
    const cols = { base: [2, 4], treat: [3, 6] }
    const [sb, st] = [1, 0.5]
    const g = 0.5
    const k = 2
    const v = (x: number, s: number) => k * ((x / k) * Math.exp(g * s * s)) ** 2 * Math.expm1(s * s)
    const want = Math.sqrt((1.5 ** 2 * (v(2, sb) + v(4, sb)) + v(3, st) + v(6, st)) / 2)
    expect(noiseModelSd(cols, k, [sb, st], 1.5, g)).toBeCloseTo(want, 10)
    expect(noiseModelSd({ base: [], treat: [] }, 1, [sb, st], 1.5, g)).toBeNull()
  })
})

describe('lognormalNullP: a seeded parametric null of a two-stage statistic', () => {
  const sample = {
    first: { base: [1, 2, 3, 4, 5, 6], treat: [1.6, 2.9, 4.4, 6.1, 7.6, 8.8] },
    second: { base: [1.2, 2.5, 2.7], treat: [1.7, 3.9, 4.2] },
    paired: [0, 1, 2],
    k1: 1,
    k2: 1,
  }
  const meanD = (a: StageColumns) =>
    a.treat.reduce((s, t, i) => s + t - 1.5 * (a.base[i] as number), 0) / a.treat.length
  const stat = (a: StageColumns, b: StageColumns) => meanD(a) + meanD(b)

  it('is deterministic for a seed; an extreme statistic gets p = 1 / (B + 1), a very low one p = 1', () => {
    const obs = stat(sample.first, sample.second)
    const a = lognormalNullP(sample, 1.5, stat, obs, { resamples: 99, seed: 4 })
    const b = lognormalNullP(sample, 1.5, stat, obs, { resamples: 99, seed: 4 })
    expect(a).toEqual(b)
    expect(a?.p).toBeGreaterThan(0)
    expect(a?.p).toBeLessThanOrEqual(1)
    expect(lognormalNullP(sample, 1.5, stat, 1e9, { resamples: 99 })?.p).toBeCloseTo(1 / 100, 12)
    expect(lognormalNullP(sample, 1.5, stat, -1e9, { resamples: 99 })?.p).toBe(1)
  })

  it('no pairs to read the noise from: null', () => {
    expect(lognormalNullP({ ...sample, paired: [-1, -1, -1] }, 1.5, stat, 0)).toBeNull()
  })
})
