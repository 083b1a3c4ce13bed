import type { LedgerRow } from '../../records/ledger.js'
import type { TrajectoryEvent } from '../../trajectory/schema.js'
import { timed } from './context.js'

/** One proxy request on the attempt's time axis, joined to the last trajectory event before it. */
export interface CurvePoint {
  request_id: string
  t_ms: number | null
  input_tokens: number | null
  cache_read_tokens: number | null
  output_tokens: number | null
  spend_usd: number | null
  tools: number | null
  status: 'success' | 'failure'
  /** The last event (with a time) at or before the request; null before the first event or untimed. */
  after_event: string | null
}

/**
 * The request curve: input tokens, cache reads, output, spend and tool count per request over time
 * (from the ledger), each joined by time to the trajectory. Ordered by start time.
 */
export function requestCurve(
  requests: LedgerRow[],
  events: TrajectoryEvent[],
  startedAtMs: number | null,
): CurvePoint[] {
  const tl = timed(events).filter((x) => x.t_ms !== null && !x.carried)
  return requests
    .map((r) => {
      const t = startedAtMs === null ? null : Date.parse(r.started_at) - startedAtMs
      return { r, t: t !== null && Number.isFinite(t) ? t : null }
    })
    .sort((a, b) => (a.t ?? 0) - (b.t ?? 0) || a.r.request_id.localeCompare(b.r.request_id))
    .map(({ r, t }) => {
      let after: string | null = null
      if (t !== null) for (const x of tl) if ((x.t_ms as number) <= t) after = x.event.event_id
      return {
        request_id: r.request_id,
        t_ms: t,
        input_tokens: r.tokens.input_total,
        cache_read_tokens: r.tokens.cache_read,
        output_tokens: r.tokens.output,
        spend_usd: r.spend_usd,
        tools: r.request_shape?.tools ?? null,
        status: r.status,
        after_event: after,
      }
    })
}
