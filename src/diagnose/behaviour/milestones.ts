import type { TrajectoryEvent } from '../../trajectory/schema.js'
import { type AttemptEvidence, matchesFile, requestClock, requestsUpTo, timed } from './context.js'

/** One point on an attempt's path: which event, when, and what had been spent by then. */
export interface Milestone {
  event_id: string
  /** ms since the attempt started (carried from an earlier event when this one has no time). */
  t_ms: number | null
  /** Proxy requests started up to this event; null when times cannot be joined. */
  requests: number | null
  /** USD spent on those requests; null when a request is unpriced or times cannot be joined. */
  spend_usd: number | null
}

export const MILESTONE_NAMES = [
  'first_relevant_read',
  'first_material_edit',
  'first_test',
  'first_passing_test',
  'final_edit',
  'final_verification',
] as const
export type MilestoneName = (typeof MILESTONE_NAMES)[number]

const isRelevantRead = (files: string[]) => (e: TrajectoryEvent) =>
  (e.kind === 'read' || e.kind === 'search') && e.paths.some((p) => matchesFile(p, files))
/** A material edit changes a relevant file (or any file when the relevant set is unknown) and did not fail. */
const isMaterialEdit = (files: string[]) => (e: TrajectoryEvent) =>
  e.kind === 'edit' && e.ok !== false && (files.length === 0 || e.paths.some((p) => matchesFile(p, files)))
const isTest = (e: TrajectoryEvent) => e.kind === 'test'
const isPassingTest = (e: TrajectoryEvent) => e.kind === 'test' && e.ok === true

/**
 * First relevant read (a read or search naming a file of the final or reference diff), first material
 * edit, first test run, first passing test, final edit and final verification (the last test run), each
 * with time, proxy requests and spend until it. Null when the attempt never reached it.
 */
export function milestones(ev: AttemptEvidence): Record<MilestoneName, Milestone | null> {
  const t = timed(ev.events)
  const clock = requestClock(ev.requests, ev.startedAtMs)
  const at = (i: number): Milestone | null => {
    if (i < 0) return null
    const x = t[i]!
    const n = clock && x.t_ms !== null ? requestsUpTo(clock, x.t_ms) : null
    return {
      event_id: x.event.event_id,
      t_ms: x.t_ms,
      requests: n,
      spend_usd: clock && n !== null ? round6(clock.spendBefore[n] ?? null) : null,
    }
  }
  const es = ev.events
  const edit = isMaterialEdit(ev.relevantFiles)
  return {
    first_relevant_read: at(es.findIndex(isRelevantRead(ev.relevantFiles))),
    first_material_edit: at(es.findIndex(edit)),
    first_test: at(es.findIndex(isTest)),
    first_passing_test: at(es.findIndex(isPassingTest)),
    final_edit: at(es.findLastIndex(edit)),
    final_verification: at(es.findLastIndex(isTest)),
  }
}

function round6(v: number | null): number | null {
  return v === null ? null : Math.round(v * 1e6) / 1e6
}
