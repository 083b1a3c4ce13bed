import type { Comparison, ComparisonEntry } from '../records/comparison.js'
import { fmtPointsCi, fmtPp } from '../util/format.js'

/**
 * Whether a comparison is an A/A pair: both cells run the same harness, version and config (equal
 * config hashes, which leave the cell id out), so its difference is run-to-run noise, not an effect.
 */
export function isAaPair(c: Comparison, x: ComparisonEntry): boolean {
  const hash = (id: string) => c.cells.find((cell) => cell.id === id)?.config_hash ?? null
  const a = hash(x.baseline)
  return a !== null && a === hash(x.treatment)
}

/**
 * One sentence per A/A pair with outcome-complete blocks, e.g. "A/A pair a → a2 (same harness, version
 * and config): Δ −6.3 pp [−18.2, +5.9], W/L/T 2/3/27 (n = 32). This is the run-to-run noise floor:
 * read the other comparisons' differences against it." Empty when the run has no A/A pair.
 */
export function noiseFloorLines(c: Comparison): string[] {
  return c.comparisons
    .filter((x) => isAaPair(c, x) && x.outcome.n > 0)
    .map((x) => {
      const o = x.outcome
      return (
        `A/A pair ${x.baseline} → ${x.treatment} (same harness, version and config): ` +
        `Δ ${fmtPp(o.diff_pp)} ${fmtPointsCi(o.diff_ci)}, W/L/T ${o.wins}/${o.losses}/${o.ties} (n = ${o.n}). ` +
        'This is the run-to-run noise floor: read the other comparisons’ differences against it.'
      )
    })
}
