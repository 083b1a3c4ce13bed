import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import { describe, expect, it } from 'vitest'
import {
  createResamplePlan,
  forEachReplicateChunk,
  getResamplePlan,
} from '../../../src/stats/resample-plan.js'
import { createRng, MAX_SEED } from '../../../src/stats/rng.js'

describe('seeded PRNG (pure-rand xoroshiro128+)', () => {
  it('is deterministic given a seed', () => {
    const a = createRng(42)
    const b = createRng(42)
    const xs = Array.from({ length: 50 }, () => a.nextInt(1000))
    const ys = Array.from({ length: 50 }, () => b.nextInt(1000))
    expect(xs).toEqual(ys)
    expect(createRng(43).nextInt(1_000_000)).not.toBe(createRng(42).nextInt(1_000_000))
  })

  it('draws integers in range and floats in [0, 1)', () => {
    const r = createRng(7)
    for (let i = 0; i < 2000; i++) {
      const k = r.nextInt(6)
      expect(Number.isInteger(k) && k >= 0 && k < 6).toBe(true)
      const u = r.nextFloat()
      expect(u >= 0 && u < 1).toBe(true)
    }
  })

  it('is roughly uniform (each of 10 values within 10% of 1,000 in 10,000 draws)', () => {
    const r = createRng(1)
    const counts = new Array(10).fill(0)
    for (let i = 0; i < 10_000; i++) counts[r.nextInt(10)]++
    for (const c of counts) expect(Math.abs(c - 1000)).toBeLessThan(100)
  })

  it('accepts unsigned 32-bit seeds only', () => {
    expect(() => createRng(-1)).toThrow(RangeError)
    expect(() => createRng(1.5)).toThrow(RangeError)
    expect(() => createRng(MAX_SEED + 1)).toThrow(RangeError)
    expect(createRng(MAX_SEED).seed).toBe(MAX_SEED)
    expect(() => createRng(1).nextInt(0)).toThrow(RangeError)
  })
})

describe('resample plans', () => {
  it('rows are the seeded stream in order, indices in [0, n)', () => {
    const plan = createResamplePlan(7, 5, 9)
    const rng = createRng(9)
    const expected = Array.from({ length: 35 }, () => rng.nextInt(7))
    expect(Array.from(plan.indices!)).toEqual(expected)
  })

  it('a streamed plan visits the same replicates as a materialized one', () => {
    const materialized = createResamplePlan(13, 600, 5)
    const streamed = { n: 13, B: 600, seed: 5, indices: null }
    const seen: number[] = []
    forEachReplicateChunk(streamed, (idx, firstRow, rowCount) => {
      expect(firstRow).toBe(seen.length / 13)
      for (let k = 0; k < rowCount * 13; k++) seen.push(idx[k]!)
    })
    expect(seen).toEqual(Array.from(materialized.indices!))
  })

  it('the cache returns the same plan object for the same (n, B, seed)', () => {
    expect(getResamplePlan(20, 100, 3)).toBe(getResamplePlan(20, 100, 3))
    expect(getResamplePlan(20, 100, 4)).not.toBe(getResamplePlan(20, 100, 3))
  })

  it('rejects n < 1 or B < 1', () => {
    expect(() => createResamplePlan(0, 10, 1)).toThrow(RangeError)
    expect(() => createResamplePlan(3, 0, 1)).toThrow(RangeError)
  })
})

describe('fillIndices draws what pure-rand draws', () => {
  it('the same indices as uniformInt(0, n − 1) on xoroshiro128+, and the stream continues from there', () => {
    for (const n of [1, 2, 3, 7, 500, 65_537, 2 ** 31 + 11, 2 ** 32 - 1, 2 ** 32]) {
      for (const seed of [0, 7, MAX_SEED]) {
        const r = createRng(seed)
        const fast = new Uint32Array(6000)
        r.fillIndices(fast, 0, 5000, n) // more than one internal run of 4096
        r.fillIndices(fast, 5000, 1000, n)
        const g = xoroshiro128plus(seed)
        const reference = Uint32Array.from({ length: 6000 }, () => uniformInt(g, 0, n - 1))
        expect(fast).toEqual(reference)
        expect(r.nextInt(1000)).toBe(uniformInt(g, 0, 999))
      }
    }
  })
})
