import { describe, expect, it } from 'vitest'
import {
  createResamplePlan,
  forEachReplicateChunk,
  getResamplePlan,
} from '../../../src/compare/stats/resample-plan.js'
import { createRng, MAX_SEED } from '../../../src/compare/stats/rng.js'

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
