import { describe, expect, it } from 'vitest'
import { benjaminiHochberg } from '../../../src/stats/bh.js'
import { type InteractionBlock, pairedInteraction, signFlipP } from '../../../src/stats/interaction.js'
import { createRng } from '../../../src/stats/rng.js'

const T = true
const F = false
// D = [2, 2, 1, 1, 0, 0, −1, 2]: d_A = [1, 1, 1, 1, 0, 0, 0, 1], d_B = [−1, −1, 0, 0, 0, 0, 1, −1].
const reference: InteractionBlock[] = [
  { baseA: F, treatA: T, baseB: T, treatB: F },
  { baseA: F, treatA: T, baseB: T, treatB: F },
  { baseA: F, treatA: T, baseB: T, treatB: T },
  { baseA: F, treatA: T, baseB: F, treatB: F },
  { baseA: T, treatA: T, baseB: T, treatB: T },
  { baseA: F, treatA: F, baseB: F, treatB: F },
  { baseA: T, treatA: T, baseB: F, treatB: T },
  { baseA: F, treatA: T, baseB: T, treatB: F },
]

/** P(|S| ≥ |s|) by enumerating every sign pattern (the definition). */
function bruteForce(n1: number, n2: number, s: number): number {
  let hit = 0
  const total = 2 ** (n1 + n2)
  for (let mask = 0; mask < total; mask++) {
    let sum = 0
    for (let j = 0; j < n1 + n2; j++) sum += ((mask >> j) & 1 ? 1 : -1) * (j < n1 ? 1 : 2)
    if (Math.abs(sum) >= Math.abs(s)) hit++
  }
  return hit / total
}

describe('paired difference-in-differences (harness × model interaction)', () => {
  it('matches the hand-computed reference: gaps 5/8 and −2/8, Î = 7/8, exact p = 8/64, reversed', () => {
    const r = pairedInteraction(reference, { resamples: 2000, seed: 7, level: 0.95 })
    expect(r.n).toBe(8)
    expect(r.gapA).toBe(0.625)
    expect(r.gapB).toBe(-0.25)
    expect(r.estimate).toBe(0.875)
    expect([r.nAbs1, r.nAbs2]).toEqual([3, 3])
    expect(r.pTwoSided).toBe(0.125)
    expect(r.reverses).toBe(true)
    const [lo, hi] = r.interval!
    expect(lo).toBeLessThan(0.875)
    expect(hi).toBeGreaterThan(0.875)
    // Near the normal interval 0.875 ± 1.96·0.372 (plug-in SE of the mean of D) = [0.145, 1.605].
    expect(lo).toBeCloseTo(0.145, 0)
    expect(hi).toBeCloseTo(1.605, 0)
    expect(hi - lo).toBeGreaterThan(1.1)
    expect(hi - lo).toBeLessThan(1.6)
    // Seeded: the same seed gives the same interval, another seed (usually) another one.
    expect(pairedInteraction(reference, { resamples: 2000, seed: 7, level: 0.95 }).interval).toEqual(
      r.interval,
    )
  })

  it('the exact sign-flip p equals enumeration of every sign pattern', () => {
    for (const [n1, n2, s] of [
      [3, 3, 7],
      [0, 4, 8],
      [5, 0, 1],
      [4, 2, 2],
      [6, 5, -5],
      [1, 1, 3],
      [7, 3, 0],
    ] as const) {
      expect(signFlipP(n1, n2, s)).toBeCloseTo(bruteForce(n1, n2, s), 14)
    }
    expect(signFlipP(0, 0, 0)).toBe(1)
  })

  it('no shared instance: n = 0, no interval, p = 1; identical gaps: Î = 0, not reversed', () => {
    const none = pairedInteraction([], { resamples: 100, seed: 1, level: 0.95 })
    expect(none).toMatchObject({ n: 0, estimate: 0, interval: null, pTwoSided: 1, reverses: false })
    const same = pairedInteraction(
      [
        { baseA: F, treatA: T, baseB: F, treatB: T },
        { baseA: T, treatA: T, baseB: T, treatB: T },
      ],
      { resamples: 100, seed: 1, level: 0.95 },
    )
    expect(same).toMatchObject({ gapA: 0.5, gapB: 0.5, estimate: 0, pTwoSided: 1, reverses: false })
    expect(same.interval).toEqual([0, 0])
  })

  it('seeded simulation: rejects ≤ α (+ Monte Carlo error) with no interaction, and often with a reversal', () => {
    const rng = createRng(2026)
    const draw = (p: number) => rng.nextFloat() < p
    const world = (pBaseA: number, pTreatA: number, pBaseB: number, pTreatB: number, n: number) =>
      Array.from({ length: n }, () => ({
        baseA: draw(pBaseA),
        treatA: draw(pTreatA),
        baseB: draw(pBaseB),
        treatB: draw(pTreatB),
      }))
    const rate = (make: () => InteractionBlock[], reps: number) => {
      let rejected = 0
      for (let r = 0; r < reps; r++) {
        if (pairedInteraction(make(), { resamples: 1, seed: r, level: 0.95 }).pTwoSided <= 0.05) rejected++
      }
      return rejected / reps
    }
    // Same gap (+0.2) on both models: a type I error rate at or below 5% (3 SE of Monte Carlo error).
    const null0 = rate(() => world(0.4, 0.6, 0.5, 0.7, 60), 600)
    expect(null0).toBeLessThanOrEqual(0.05 + 3 * Math.sqrt((0.05 * 0.95) / 600))
    // The gap reverses (+0.3 on A, −0.3 on B): Î = 0.6, detected nearly always at n = 60.
    expect(rate(() => world(0.35, 0.65, 0.65, 0.35, 60), 300)).toBeGreaterThan(0.9)
  })
})

describe('Benjamini–Hochberg step-up', () => {
  it('matches R p.adjust(method = "BH") on reference vectors', () => {
    const a = benjaminiHochberg([0.01, 0.04, 0.03, 0.005])
    ;[0.02, 0.04, 0.04, 0.02].forEach((p, i) => {
      expect(a.adjusted[i]).toBeCloseTo(p, 15)
    })
    const b = benjaminiHochberg([0.001, 0.008, 0.039, 0.041, 0.042, 0.06, 0.074, 0.205])
    ;[0.008, 0.032, 0.0672, 0.0672, 0.0672, 0.08, 0.0845714285714286, 0.205].forEach((p, i) => {
      expect(b.adjusted[i]).toBeCloseTo(p, 14)
    })
    expect(b.reject).toEqual([true, true, false, false, false, false, false, false])
    expect(benjaminiHochberg([0.01, 0.02, 0.03, 0.04, 0.05]).adjusted.map((p) => +p.toFixed(12))).toEqual([
      0.05, 0.05, 0.05, 0.05, 0.05,
    ])
    expect(benjaminiHochberg([])).toEqual({ adjusted: [], reject: [], alpha: 0.05 })
    expect(() => benjaminiHochberg([-0.1])).toThrow(RangeError)
  })
})
