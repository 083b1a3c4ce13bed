/**
 * The one seeded pseudo-random source of the library: a thin wrapper over `pure-rand` (v8),
 * generator xoroshiro128+ (Blackman & Vigna 2018) with pure-rand's unbiased `uniformInt`
 * (rejection sampling, no modulo bias) and `uniformFloat64`. Same seed → same sequence on every
 * platform, so reports are byte-identical for the same inputs and seed.
 */

import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64'
import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
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
  private readonly generator: RandomGenerator

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
    const g = this.generator
    const last = n - 1
    const end = offset + count
    for (let i = offset; i < end; i++) out[i] = uniformInt(g, 0, last)
  }
}

/** A new stream for `seed` (integer in [0, 2^32 − 1]; anything else throws a RangeError). */
export function createRng(seed: number): SeededRng {
  assertSeed('createRng', seed)
  return new XoroshiroStream(seed)
}
