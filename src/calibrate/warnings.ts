import type { Manifest } from '../manifest/schema.js'
import { calibrate } from './calibrate.js'

/** Simulations behind validate's warning: enough to tell 50% apart from 40% or 60% (SE ≈ 3.5 points). */
const VALIDATE_SIMS = 200

/**
 * Warnings for `validate`: a declared resolve-rate threshold the panel cannot confirm with 50% power
 * (measured by a small seeded calibration of the resolve rule; `harness-watch calibrate` gives the
 * full picture). The ratio rules test "ratio ≤ threshold", so their power at the threshold is α by
 * construction and no warning applies. Empty when the panel has fewer than 2 blocks.
 */
export function thresholdWarnings(m: Manifest, blocks: number): string[] {
  if (blocks < 2) return []
  const c = calibrate({
    blocks,
    thresholds: m.thresholds,
    maxBlocks: m.confirmation.max_blocks,
    alpha: m.confirmation.alpha,
    sims: VALIDATE_SIMS,
    seed: m.seed,
    rules: ['resolved'],
  })
  return c.warnings
}
