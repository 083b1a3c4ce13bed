import { describe, expect, it } from 'vitest'
import { sortAscending } from '../../../src/stats/sort.js'

/** Deterministic doubles of every kind: both signs, ±0, ties, infinities, subnormals, wide exponents. */
function values(n: number, seed: number): Float64Array {
  let a = seed
  const next = () => {
    a = (Math.imul(a, 1103515245) + 12345) >>> 0
    return a / 2 ** 32
  }
  const special = [0, -0, Infinity, -Infinity, 5e-324, -5e-324, Number.MAX_VALUE, -1, 1, 2 ** 52]
  return Float64Array.from({ length: n }, () => {
    const r = next()
    if (r < 0.1) return special[Math.floor(next() * special.length)]!
    if (r < 0.3) return Math.round((next() - 0.5) * 10)
    return (next() - 0.5) * 10 ** (next() * 40 - 20)
  })
}

/** Element-wise Object.is, so −0 and +0 are told apart. */
function sameBits(a: Float64Array, b: Float64Array): boolean {
  return a.length === b.length && a.every((v, i) => Object.is(v, b[i]))
}

describe('sortAscending', () => {
  it('gives exactly what Float64Array.prototype.sort gives (−0 before +0, infinities at the ends)', () => {
    for (const n of [0, 1, 100, 511, 512, 1000, 10_000]) {
      for (const seed of [1, 2, 3]) {
        const a = values(n, seed)
        const expected = a.slice().sort()
        expect(sameBits(sortAscending(a), expected)).toBe(true)
      }
    }
  })

  it('bootstrap-like replicates: many close values around 1', () => {
    const a = Float64Array.from({ length: 10_000 }, (_, i) => 1 + Math.sin(i) * 0.05)
    expect(sameBits(sortAscending(a.slice()), a.slice().sort())).toBe(true)
  })

  it('sorts a view in place without touching the rest of its buffer; NaN goes last', () => {
    const whole = values(3000, 9)
    const before = whole.slice()
    const view = whole.subarray(1000, 2000)
    const expected = view.slice().sort()
    expect(sortAscending(view)).toBe(view)
    expect(sameBits(view, expected)).toBe(true)
    expect(sameBits(whole.subarray(0, 1000), before.subarray(0, 1000))).toBe(true)
    expect(sameBits(whole.subarray(2000), before.subarray(2000))).toBe(true)
    const withNaN = values(1000, 4)
    withNaN[10] = Number.NaN
    const sorted = sortAscending(withNaN)
    expect(Number.isNaN(sorted[999])).toBe(true)
  })
})
