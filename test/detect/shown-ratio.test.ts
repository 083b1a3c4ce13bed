import { describe, expect, it } from 'vitest'
import { normal } from '../../src/calibrate/scenario.js'
import { shownRatio } from '../../src/detect/shown-ratio.js'
import { createRng } from '../../src/stats/index.js'
import { blockOf as block } from './fixtures.js'

describe('shownRatio: the ratio of totals shown, less a ratio’s own bias under run noise', () => {
  it('no run noise between the first run and the held-out trials: the raw ratio, factor 1', () => {
    const first = [1, 2, 3, 4].map((b, i) => block(`i${i}`, b, 2 * b, 1))
    const held = [1, 2, 3, 4].map((b, i) => block(`i${i}`, b, 2.5 * b, 2))
    const s = shownRatio(first, held, 'spend_usd')!
    expect(s.sigma).toBe(0)
    expect(s.factor).toBe(1)
    expect(s.ratio).toBe(2.5)
  })

  it('noise too large for e^{σ²} (forged or wild costs): a finite factor, never NaN', () => {
    const first = [1, 2, 3, 4].map((b, i) => block(`i${i}`, b, 2 * b, 1))
    const held = [1e17, 2e-17, 3e17, 4e-17].map((b, i) => block(`i${i}`, b, 2 * b, 1))
    const s = shownRatio(first, held, 'spend_usd')!
    expect(Number.isFinite(s.factor) && Number.isFinite(s.ratio)).toBe(true)
    expect(s.factor).toBeGreaterThan(0.5)
    expect(s.factor).toBeLessThan(1)
  })

  it('fewer than two blocks measured in both runs: σ unknown, the raw ratio; no baseline total: null', () => {
    const s = shownRatio([block('x', 1, 2, 1)], [block('y', 2, 5, 2), block('z', 2, 3, 2)], 'spend_usd')!
    expect(s).toEqual({ raw: 2, ratio: 2, factor: 1, sigma: null })
    expect(shownRatio([], [block('y', 0, 5, 2)], 'spend_usd')).toBeNull()
  })

  // Baseline run noise σ 1.0 (treatment 0.35), a true ratio of 2, 40 blocks of two held-out trials.
  const rng = createRng(42)
  const draw = (m: number, sigma: number, k: number) => {
    let s = 0
    for (let t = 0; t < k; t++) s += m * Math.exp(sigma * normal(rng) - (sigma * sigma) / 2)
    return s / k
  }
  const shown = (mu: number[]) => {
    const first = mu.map((m, i) => block(`i${i}`, draw(m, 1, 1), draw(2 * m, 0.35, 1), 1))
    const held = mu.map((m, i) => block(`i${i}`, draw(m, 1, 2), draw(2 * m, 0.35, 2), 2))
    return shownRatio(first, held, 'spend_usd')!
  }
  const panel = () => Array.from({ length: 40 }, () => Math.exp(normal(rng)))

  it('over panels of lognormal costs (σ 1): the raw ratio is ~6% high, the corrected one within 2%', () => {
    let raw = 0
    let corrected = 0
    const runs = 3000
    for (let r = 0; r < runs; r++) {
      const s = shown(panel())
      raw += s.raw / 2
      corrected += s.ratio / 2
    }
    expect(raw / runs).toBeGreaterThan(1.04)
    expect(Math.abs(corrected / runs - 1)).toBeLessThan(0.02)
  })

  it('a panel where one instance carries 40% of the cost: a first-order correction takes most, not all, of the bias', () => {
    let mu = panel()
    while (Math.max(...mu) / mu.reduce((a, b) => a + b, 0) < 0.35) mu = panel()
    let raw = 0
    let corrected = 0
    const runs = 3000
    for (let r = 0; r < runs; r++) {
      const s = shown(mu)
      raw += s.raw / 2
      corrected += s.ratio / 2
    }
    expect(raw / runs).toBeGreaterThan(1.08)
    expect(corrected / runs - 1).toBeLessThan((raw / runs - 1) / 2)
    expect(corrected / runs).toBeGreaterThan(1)
  })
})
