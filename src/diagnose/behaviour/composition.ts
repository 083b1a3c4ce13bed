import { EVENT_KINDS, type EventKind, type TrajectoryEvent } from '../../trajectory/schema.js'

/**
 * What the attempt's tool calls were, by kind: counts and shares of the attempt's own calls. Calls are
 * nested in attempts, so shares are compared attempt by attempt (compositional), never pooled into a
 * call-count test across attempts.
 */
export interface Composition {
  calls: number
  counts: Record<EventKind, number>
  shares: Record<EventKind, number | null>
}

export function composition(events: TrajectoryEvent[]): Composition {
  const counts = Object.fromEntries(EVENT_KINDS.map((k) => [k, 0])) as Record<EventKind, number>
  let calls = 0
  for (const e of events) {
    if (e.tool === null || e.kind === 'message' || e.kind === 'finish') continue
    if (e.kind === 'other') continue
    counts[e.kind]++
    calls++
  }
  const shares = Object.fromEntries(
    EVENT_KINDS.map((k) => [k, calls === 0 ? null : Math.round((counts[k] / calls) * 1000) / 1000]),
  ) as Record<EventKind, number | null>
  return { calls, counts, shares }
}
