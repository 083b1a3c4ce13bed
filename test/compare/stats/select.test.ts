import { describe, expect, it } from 'vitest'
import {
  bcaInterval,
  biasCorrection,
  percentileInterval,
  quantileSorted,
  select,
  selectedQuantiles,
} from '../../../src/stats/index.js'

/** Deterministic doubles with ties, both signs, infinities and wide exponents (no NaN). */
function values(n: number, seed: number): Float64Array {
  let a = seed
  const next = () => {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0
    return a / 2 ** 32
  }
  const special = [0, -0, Infinity, -Infinity, -1, 1, 2 ** 52, 1e-300]
  return Float64Array.from({ length: n }, () => {
    const r = next()
    if (r < 0.05) return special[Math.floor(next() * special.length)]!
    if (r < 0.35) return Math.round((next() - 0.5) * 20)
    return (next() - 0.5) * 10 ** (next() * 10 - 5)
  })
}

const PS = [0, 0.001, 0.025, 0.05, 0.1, 0.3333, 0.5, 0.9, 0.95, 0.975, 0.999, 1]

describe('select', () => {
  it('puts the k-th smallest at k with no larger value left of it and no smaller value right of it', () => {
    // (Comparisons do not order −0 and +0: `select` returns a zero of either sign, the quantiles below fix it.)
    for (const n of [1, 2, 601, 5000, 10_000]) {
      const a = values(n, n)
      const sorted = a.slice().sort()
      for (const k of [0, 1, Math.floor(n / 40), Math.floor(n / 2), n - 2, n - 1].filter(
        (k) => k >= 0 && k < n,
      )) {
        const b = a.slice()
        expect(select(b, k) === sorted[k]).toBe(true)
        for (let i = 0; i < k; i++) expect(b[i]! <= b[k]!).toBe(true)
        for (let i = k + 1; i < n; i++) expect(b[i]! >= b[k]!).toBe(true)
        // The values are moved, never changed.
        expect(
          b
            .slice()
            .sort()
            .every((v, i) => v === sorted[i]),
        ).toBe(true)
      }
    }
  })

  it('handles an array of one repeated value and an already sorted or reversed one', () => {
    const same = new Float64Array(5000).fill(3)
    expect(select(same, 2500)).toBe(3)
    const up = Float64Array.from({ length: 5000 }, (_, i) => i)
    expect(select(up.slice(), 125)).toBe(125)
    expect(select(up.slice().reverse(), 4875)).toBe(4875)
  })
})

describe('selectedQuantiles', () => {
  it('gives exactly the sorted array’s type 7 quantiles, in any order of questions', () => {
    for (const n of [10, 599, 600, 1000, 10_000]) {
      for (const seed of [1, 2, 3]) {
        const a = values(n, seed * 7919 + n)
        const sorted = a.slice().sort()
        const q = selectedQuantiles(a.slice())
        for (const p of [...PS, ...PS.slice().reverse()])
          expect(q.quantile(p)).toBe(quantileSorted(sorted, p))
      }
    }
  })

  it('counts the values below and at an estimate as the sorted array does', () => {
    const a = values(10_000, 11)
    const sorted = a.slice().sort()
    const q = selectedQuantiles(a.slice())
    for (const x of [0, 1, -1, 0.5, Infinity, -Infinity, sorted[5000]!]) {
      expect(biasCorrection(q, x)).toBe(biasCorrection(sorted, x))
    }
  })

  it('gives the same percentile and BCa intervals as the sorted replicates', () => {
    for (const seed of [5, 6, 7]) {
      const a = values(10_000, seed)
      const sorted = a.slice().sort()
      const estimate = sorted[4900]!
      expect(percentileInterval(selectedQuantiles(a.slice()), 0.95)).toEqual(percentileInterval(sorted, 0.95))
      expect(bcaInterval(selectedQuantiles(a.slice()), estimate, 0.03, 0.9)).toEqual(
        bcaInterval(sorted, estimate, 0.03, 0.9),
      )
    }
  })

  it('sorts an array holding NaN instead (NaN last, as the built-in sort)', () => {
    const a = values(2000, 9)
    a[17] = Number.NaN
    const sorted = a.slice().sort()
    const q = selectedQuantiles(a.slice())
    expect(q.quantile(0.5)).toBe(quantileSorted(sorted, 0.5))
    expect(q.quantile(1)).toBeNaN()
  })
})
