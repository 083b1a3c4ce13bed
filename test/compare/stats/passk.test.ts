import { describe, expect, it } from 'vitest'
import { meanPassAtK, meanPassHatK, passAtK, passHatK } from '../../../src/stats/passk.js'
import { expectRelative } from './helpers.js'

describe('pass@k and pass^k per instance (statistics.md)', () => {
  // (n, c, k) → pass@k, pass^k
  const CASES: [number, number, number, number, number][] = [
    [5, 3, 1, 0.6, 0.6],
    [5, 3, 2, 0.9, 0.3],
    [5, 3, 5, 1.0, 0.0],
    [8, 8, 8, 1, 1],
    [10, 9, 8, 1.0, 0.2],
    [5, 0, 1, 0, 0],
    [4, 2, 3, 1.0, 0.0],
  ]
  it.each(CASES)('n=%i c=%i k=%i', (n, c, k, at, hat) => {
    const a = passAtK(n, c, k)
    const h = passHatK(n, c, k)
    expect(a.reason).toBeNull()
    expect(h.reason).toBeNull()
    expectRelative(a.value, at, 1e-12)
    expectRelative(h.value, hat, 1e-12)
  })

  it('k > n is undefined, with a reason, for both', () => {
    expect(passHatK(3, 2, 4)).toEqual({
      value: null,
      reason: 'k = 4 exceeds the 3 trials of the instance (needs k ≤ n)',
    })
    expect(passAtK(3, 2, 4).value).toBeNull()
    expect(passAtK(0, 0, 1)).toEqual({ value: null, reason: 'no trials (n = 0)' })
  })

  it('rejects impossible counts', () => {
    expect(() => passAtK(3, 4, 1)).toThrow(RangeError)
    expect(() => passHatK(3, 1, 0)).toThrow(RangeError)
    expect(() => passAtK(-1, 0, 1)).toThrow(RangeError)
    expect(() => passHatK(3, 1.5, 1)).toThrow(RangeError)
  })
})

describe('pass@k and pass^k averaged over instances', () => {
  const instances = [
    { n: 5, c: 5 },
    { n: 5, c: 4 },
    { n: 5, c: 0 },
    { n: 5, c: 2 },
  ]
  it.each([
    [1, 0.55, 0.55],
    [2, 0.425, 0.675],
    [3, 0.35, 0.725],
    [5, 0.25, 0.75],
  ])('k=%i → pass^k %d, pass@k %d', (k, hat, at) => {
    const h = meanPassHatK(instances, k)
    const a = meanPassAtK(instances, k)
    expectRelative(h.value, hat, 1e-12)
    expectRelative(a.value, at, 1e-12)
    expect(h.instances).toBe(4)
    expect(a.instances).toBe(4)
    expect(h.k).toBe(k)
  })

  it('an instance with n < k makes the average null, never silently dropped', () => {
    const r = meanPassHatK([...instances, { n: 2, c: 2 }], 3)
    expect(r.value).toBeNull()
    expect(r.instances).toBe(5)
    expect(r.reason).toMatch(/1 of 5 instances/)
  })

  it('no instances → null with a reason', () => {
    expect(meanPassAtK([], 1)).toEqual({ value: null, k: 1, instances: 0, reason: 'no instances' })
    expect(() => meanPassAtK([], 0)).toThrow(RangeError)
  })
})
