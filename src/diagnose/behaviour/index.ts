import { churn } from './churn.js'
import { composition } from './composition.js'
import type { AttemptEvidence } from './context.js'
import { failingLoops } from './loops.js'
import { milestones } from './milestones.js'
import { repeats } from './repeats.js'
import { verification } from './verification.js'

export type { AttemptEvidence } from './context.js'

/**
 * Behaviour measures of one attempt: deterministic, from its normalized trajectory and its proxy
 * requests only. (Not detect's "signals": these describe how an attempt went, they raise no alarm.)
 */
export function behaviourMeasures(ev: AttemptEvidence) {
  const requests = ev.requests
  const cacheRead = requests.reduce<number | null>(
    (s, r) => (s === null || r.tokens.cache_read === null ? null : s + r.tokens.cache_read),
    0,
  )
  const input = requests.reduce<number | null>(
    (s, r) => (s === null || r.tokens.input_total === null ? null : s + r.tokens.input_total),
    0,
  )
  return {
    milestones: milestones(ev),
    repeats: repeats(ev.events),
    churn: churn(ev.events),
    failing_loops: failingLoops(ev.events),
    verification: verification(ev.events),
    composition: composition(ev.events),
    requests: {
      count: requests.length,
      input_tokens: input,
      cache_read_tokens: cacheRead,
      /** cache reads / input tokens; null when either is unknown or no input. */
      cache_read_share: cacheRead !== null && input ? Math.round((cacheRead / input) * 1000) / 1000 : null,
      max_tools: requests.reduce<number | null>((m, r) => {
        const t = r.request_shape?.tools ?? null
        return t === null ? m : Math.max(m ?? 0, t)
      }, null),
      first_request_bytes:
        [...requests].sort((a, b) => a.started_at.localeCompare(b.started_at))[0]?.request_shape?.bytes ??
        null,
    },
  }
}
export type BehaviourMeasures = ReturnType<typeof behaviourMeasures>
