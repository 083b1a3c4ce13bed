/**
 * Resample plans for the block bootstrap: which blocks each bootstrap replicate draws.
 *
 * Replicate r (0 ≤ r < B) draws n block indices uniformly with replacement; draws are taken from
 * `createRng(seed)` in order r = 0..B−1, position j = 0..n−1. The plan depends only on (n, B, seed), so
 * every metric of a comparison that shares the blocks is resampled with the same replicates (a
 * coherent joint bootstrap), and the index array is drawn once and reused across metrics.
 *
 * Plans up to MAX_MATERIALIZED_INDICES entries are held as one Uint32Array (10,000 × 500 blocks is
 * 20 MB); larger plans are regenerated row by row from the seed, with identical draws.
 */

import { assertSeed, createRng } from './rng.js'

/** Above this many indices (n·B) a plan is streamed rather than held in memory (2^25 = 128 MB). */
export const MAX_MATERIALIZED_INDICES = 2 ** 25

/** Which blocks each of B replicates draws, for n blocks and one seed. */
export interface ResamplePlan {
  readonly n: number
  readonly B: number
  readonly seed: number
  /** Row-major B×n block indices, or null when the plan is streamed from the seed. */
  readonly indices: Uint32Array | null
}

function check(where: string, n: number, B: number, seed: number): void {
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`${where}: n must be an integer ≥ 1, got ${n}`)
  if (!Number.isSafeInteger(B) || B < 1) throw new RangeError(`${where}: B must be an integer ≥ 1, got ${B}`)
  assertSeed(where, seed)
}

/** Draws a new plan (no cache). Throws a RangeError for n < 1, B < 1 or an invalid seed. */
export function createResamplePlan(n: number, B: number, seed: number): ResamplePlan {
  check('createResamplePlan', n, B, seed)
  if (n * B > MAX_MATERIALIZED_INDICES) return { n, B, seed, indices: null }
  const indices = new Uint32Array(n * B)
  createRng(seed).fillIndices(indices, 0, n * B, n)
  return { n, B, seed, indices }
}

const CACHE_SIZE = 4
const cache = new Map<string, ResamplePlan>()

/**
 * The plan for (n, B, seed), drawn once and kept in a small least-recently-used cache (4 plans), so
 * that many metrics and cells with the same block count share one index array. The result is the
 * same as `createResamplePlan` (the cache only saves work).
 */
export function getResamplePlan(n: number, B: number, seed: number): ResamplePlan {
  check('getResamplePlan', n, B, seed)
  const key = `${n}:${B}:${seed}`
  const hit = cache.get(key)
  if (hit !== undefined) {
    cache.delete(key)
    cache.set(key, hit)
    return hit
  }
  const plan = createResamplePlan(n, B, seed)
  cache.set(key, plan)
  if (cache.size > CACHE_SIZE) {
    const oldest = cache.keys().next().value
    if (oldest !== undefined) cache.delete(oldest)
  }
  return plan
}

/** Rows per chunk when a streamed plan is regenerated from its seed. */
const STREAM_CHUNK_ROWS = 256

/**
 * Visits the plan's replicates in order, in chunks: `visit(indices, firstRow, rowCount)` where
 * replicate firstRow + k (0 ≤ k < rowCount) has its n blocks at indices[k·n .. k·n + n − 1].
 * A materialized plan is one chunk of all B rows. The array must be treated as read-only and not kept.
 */
export function forEachReplicateChunk(
  plan: ResamplePlan,
  visit: (indices: Uint32Array, firstRow: number, rowCount: number) => void,
): void {
  const { n, B } = plan
  if (plan.indices !== null) {
    visit(plan.indices, 0, B)
    return
  }
  const rng = createRng(plan.seed)
  const rows = Math.max(1, Math.min(STREAM_CHUNK_ROWS, Math.floor(MAX_MATERIALIZED_INDICES / 64 / n)))
  const buffer = new Uint32Array(rows * n)
  for (let first = 0; first < B; first += rows) {
    const count = Math.min(rows, B - first)
    rng.fillIndices(buffer, 0, count * n, n)
    visit(buffer, first, count)
  }
}
