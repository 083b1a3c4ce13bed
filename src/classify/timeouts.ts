import type { AttemptInput, ClassFinding } from './classes.js'
import type { ClassifyOptions } from './options.js'

/**
 * Timeouts that cluster at one wall-clock value (within 2% or 1 s): at least 3 timed-out attempts and
 * at least half of them at that value — a configuration cap, not agent behaviour.
 */
export function clusteredTimeouts(attempts: readonly AttemptInput[], opts: ClassifyOptions): ClassFinding[] {
  const secs = attempts
    .filter((a) => a.record.timed_out)
    .map((a) => a.record.phases_ms.harness / 1000)
    .sort((x, y) => x - y)
  if (secs.length < 3) return []
  let best = 0
  let at = 0
  // secs is sorted: the values within tolerance of secs[i] are a contiguous run (binary searches).
  const firstAtLeast = (x: number): number => {
    let lo = 0
    let hi = secs.length
    while (lo < hi) {
      const mid = (lo + hi) >> 1
      if (secs[mid]! < x) lo = mid + 1
      else hi = mid
    }
    return lo
  }
  for (let i = 0; i < secs.length; i++) {
    const tol = Math.max(1, secs[i]! * 0.02)
    const n = firstAtLeast(secs[i]! + tol + 1e-9) - firstAtLeast(secs[i]! - tol)
    if (n > best) {
      best = n
      at = secs[i]!
    }
  }
  if (best < 3 || best * 2 < secs.length) return []
  const below =
    opts.timeoutS !== null && at < opts.timeoutS * 0.95
      ? `, below the manifest's ${opts.timeoutS} s: another limit (runner, job or sandbox) stopped them`
      : ''
  return [
    {
      code: 'timeouts_clustered',
      cell: null,
      message: `${best} of ${secs.length} timeouts ended at ~${fmtS(at)} s${below}; a configuration cap, not agent behaviour`,
      attempts: best,
    },
  ]
}

function fmtS(s: number): string {
  return s >= 10 ? s.toFixed(0) : s.toFixed(1)
}
