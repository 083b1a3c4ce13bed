import type { LedgerRow } from '../../records/ledger.js'
import type { TrajectoryEvent } from '../../trajectory/schema.js'

/**
 * What every behaviour measure reads about one attempt. Pure data: the caller loads files.
 * `relevantFiles` are the files of the final patch(es) and the reference diff, relative to the
 * workspace root (a trajectory path matches when it equals one or ends with `/<file>`).
 */
export interface AttemptEvidence {
  events: TrajectoryEvent[]
  /** The attempt's proxy requests (ledger rows), any order. */
  requests: LedgerRow[]
  /** Attempt start, UTC ms; null when the record has none (then no event can be joined to a request). */
  startedAtMs: number | null
  relevantFiles: string[]
}

/** An event's time since start: its own, else the last earlier event's ("carried"), else null. */
export interface Timed {
  event: TrajectoryEvent
  t_ms: number | null
  carried: boolean
}

export function timed(events: TrajectoryEvent[]): Timed[] {
  let last: number | null = null
  return events.map((event) => {
    if (event.t_ms !== null) {
      last = event.t_ms
      return { event, t_ms: event.t_ms, carried: false }
    }
    return { event, t_ms: last, carried: last !== null }
  })
}

/** Request start times (ms since attempt start) in order, with the running spend before each. */
export interface RequestClock {
  t: number[]
  spendBefore: (number | null)[]
}

export function requestClock(requests: LedgerRow[], startedAtMs: number | null): RequestClock | null {
  if (startedAtMs === null) return null
  const rows = requests
    .map((r) => ({ t: Date.parse(r.started_at) - startedAtMs, spend: r.spend_usd }))
    .filter((r) => Number.isFinite(r.t))
    .sort((a, b) => a.t - b.t)
  const spendBefore: (number | null)[] = []
  let acc: number | null = 0
  for (const r of rows) {
    spendBefore.push(acc)
    acc = acc === null || r.spend === null ? null : acc + r.spend
  }
  spendBefore.push(acc)
  return { t: rows.map((r) => r.t), spendBefore }
}

/** Proxy requests started at or before `tMs` (the request that produced an event starts before it). */
export function requestsUpTo(clock: RequestClock, tMs: number): number {
  let lo = 0
  let hi = clock.t.length
  while (lo < hi) {
    const mid = (lo + hi) >> 1
    if ((clock.t[mid] as number) <= tMs) lo = mid + 1
    else hi = mid
  }
  return lo
}

export function matchesFile(eventPath: string, files: string[]): boolean {
  const p = eventPath.replace(/\\/g, '/').replace(/^\.\//, '')
  return files.some((f) => p === f || p.endsWith(`/${f}`))
}

/** Files named in a unified diff (`+++ b/<path>`, or `--- a/<path>` for a deletion). */
export function filesOfDiff(diff: string): string[] {
  const out = new Set<string>()
  for (const m of diff.matchAll(/^diff --git a\/(\S+) b\/(\S+)$/gm)) if (m[2]) out.add(m[2])
  for (const m of diff.matchAll(/^\+\+\+ b\/(\S+)$/gm)) if (m[1]) out.add(m[1])
  return [...out]
}
