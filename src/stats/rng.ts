/**
 * The one seeded pseudo-random source of the library: a thin wrapper over `pure-rand` (v8),
 * generator xoroshiro128+ (Blackman & Vigna 2018) with pure-rand's unbiased `uniformInt`
 * (rejection sampling, no modulo bias) and `uniformFloat64`. Same seed → same sequence on every
 * platform, so reports are byte-identical for the same inputs and seed.
 */

import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus, xoroshiro128plusFromState } from 'pure-rand/generator/xoroshiro128plus'
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator'

/** Largest accepted seed: seeds are unsigned 32-bit integers (pure-rand keeps 32 bits of a seed). */
export const MAX_SEED = 0xffff_ffff

/** Throws a RangeError unless `seed` is an integer in [0, 2^32 − 1]. */
export function assertSeed(where: string, seed: number): void {
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > MAX_SEED) {
    throw new RangeError(`${where}: seed must be an integer in [0, ${MAX_SEED}], got ${seed}`)
  }
}

/** A deterministic stream of random numbers. Stateful: each call advances the stream. */
export interface SeededRng {
  /** The seed the stream started from (recorded in reports). */
  readonly seed: number
  /** Uniform integer in [0, maxExclusive − 1]; maxExclusive is an integer ≥ 1. */
  nextInt(maxExclusive: number): number
  /** Uniform double in [0, 1). */
  nextFloat(): number
  /** Fills out[offset .. offset + count − 1] with uniform integers in [0, n − 1] (resample indices). */
  fillIndices(out: Uint32Array, offset: number, count: number, n: number): void
}

function assertRange(where: string, size: number): void {
  if (!Number.isSafeInteger(size) || size < 1 || size > 2 ** 32) {
    throw new RangeError(`${where}: range size must be an integer in [1, 2^32], got ${size}`)
  }
}

class XoroshiroStream implements SeededRng {
  readonly seed: number
  private generator: RandomGenerator

  constructor(seed: number) {
    this.seed = seed
    this.generator = xoroshiro128plus(seed)
  }

  nextInt(maxExclusive: number): number {
    assertRange('nextInt', maxExclusive)
    return uniformInt(this.generator, 0, maxExclusive - 1)
  }

  nextFloat(): number {
    return uniformFloat64(this.generator)
  }

  fillIndices(out: Uint32Array, offset: number, count: number, n: number): void {
    assertRange('fillIndices', n)
    const state = Int32Array.from(this.generator.getState())
    fillIndicesFromState(out, offset, count, n, state)
    this.generator = xoroshiro128plusFromState(Array.from(state))
  }
}

/** The generator state [s01, s00, s11, s10] of a fresh stream for `seed` (the layout `fill` reads). */
export function seedState(seed: number): Int32Array {
  assertSeed('seedState', seed)
  return Int32Array.from(xoroshiro128plus(seed).getState())
}

/**
 * pure-rand's xoroshiro128plus `next` and `uniformInt(g, 0, n − 1)` (rejection sampling on the
 * unsigned 32-bit output, then the remainder) inlined over the state [s01, s00, s11, s10], which it
 * advances: the same draws as the library without a call per draw. The aggregate's sums draw their
 * plan with the WebAssembly copy of this loop (sum-kernel.ts `fill`, tested against this one).
 */
function fillIndicesFromState(
  out: Uint32Array,
  offset: number,
  count: number,
  n: number,
  state: Int32Array,
): void {
  const maxAllowed = n > 2 ? Math.trunc(4294967296 / n) * n : 4294967296
  const end = offset + count
  // In short runs, so the loop is optimized early in one long call.
  for (let from = offset; from < end; from += 4096) {
    drawIndices(out, from, Math.min(end, from + 4096), n, maxAllowed, state)
  }
}

function drawIndices(
  out: Uint32Array,
  from: number,
  to: number,
  n: number,
  maxAllowed: number,
  state: Int32Array,
): void {
  let s01 = state[0]!
  let s00 = state[1]!
  let s11 = state[2]!
  let s10 = state[3]!
  for (let i = from; i < to; i++) {
    let delta: number
    do {
      const next = (s00 + s10) | 0
      const a0 = s10 ^ s00
      const a1 = s11 ^ s01
      const t00 = s00
      const t01 = s01
      s00 = (t00 << 24) ^ (t01 >>> 8) ^ a0 ^ (a0 << 16)
      s01 = (t01 << 24) ^ (t00 >>> 8) ^ a1 ^ ((a1 << 16) | (a0 >>> 16))
      s10 = (a1 << 5) ^ (a0 >>> 27)
      s11 = (a0 << 5) ^ (a1 >>> 27)
      delta = (next ^ 0x80000000) >>> 0 // next + 2^31, in [0, 2^32)
    } while (delta >= maxAllowed)
    // delta % n, exactly (both are integers below 2^32), without a floating-point remainder
    out[i] = delta - Math.floor(delta / n) * n
  }
  state[0] = s01
  state[1] = s00
  state[2] = s11
  state[3] = s10
}

/** A new stream for `seed` (integer in [0, 2^32 − 1]; anything else throws a RangeError). */
export function createRng(seed: number): SeededRng {
  assertSeed('createRng', seed)
  return new XoroshiroStream(seed)
}
