import type { Comparison } from '../records/comparison.js'
import { betweenRuns } from './diff.js'

/**
 * The comparison as its report shows it after a previous run: its capability section gains one line
 * per cell whose capabilities changed since the same cell in `previous` (pure; comparison.json itself
 * is not rewritten). Unchanged when either run carries no capabilities.
 */
export function withPreviousCapabilities(current: Comparison, previous: Comparison | undefined): Comparison {
  const now = current.capabilities
  const before = previous?.capabilities
  if (!now || !before) return current
  return { ...current, capabilities: { ...now, since_previous: betweenRuns(before.cells, now.cells) } }
}
