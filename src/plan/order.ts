import { uniformInt } from 'pure-rand/distribution/uniformInt'
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus'
import { sha256 } from '../util/json.js'

/**
 * A 32-bit seed derived from a base seed and labels (e.g. experiment id, shard), so that independent
 * streams (panel split, per-shard order, confirmation order) never share a sequence.
 */
export function deriveSeed(seed: number, ...labels: (string | number)[]): number {
  return Number.parseInt(sha256(`${seed}\u0000${labels.join('\u0000')}`).slice(0, 8), 16) | 0
}

/** Fisher–Yates shuffle driven by xoroshiro128+ (pure-rand); the input is not modified. */
export function seededShuffle<T>(items: readonly T[], seed: number): T[] {
  const out = items.slice()
  const rng = xoroshiro128plus(seed)
  for (let i = out.length - 1; i > 0; i--) {
    const j = uniformInt(rng, 0, i)
    const t = out[i] as T
    out[i] = out[j] as T
    out[j] = t
  }
  return out
}
