import cliProgress from 'cli-progress'
import type { AttemptRecord, LegRecord } from '../records/attempt.js'
import type { LegProgressEvent, LegSession } from './leg.js'

/**
 * One line per finished attempt, e.g.
 * `[12/30] pi js-fix-slugify trial 0 attempt 1: resolved (clean) 14.2s, 6 requests, $0.0031`.
 * Unknown telemetry reads "requests unknown" / "spend unknown" (missing is never zero). Pure.
 */
export function formatAttemptLine(done: number, total: number, r: AttemptRecord, retrying = false): string {
  const secs = (Date.parse(r.ended_at) - Date.parse(r.started_at)) / 1000
  const exit =
    r.exit.class === 'clean' ? 'clean' : `${r.exit.class}${r.exit.reason ? `: ${r.exit.reason}` : ''}`
  const t = r.telemetry
  const requests =
    t.proxy_requests === null
      ? 'requests unknown'
      : `${t.proxy_requests} request${t.proxy_requests === 1 ? '' : 's'}`
  const spend = t.spend_usd === null ? 'spend unknown' : `$${t.spend_usd.toFixed(4)}`
  const coverage = t.coverage === 'complete' ? '' : `, telemetry ${t.coverage}`
  const quarantined = r.quarantined ? ' [quarantined]' : ''
  const tail = retrying ? ' → retrying' : ''
  return (
    `[${done}/${total}] ${r.cell_id} ${r.instance_id} trial ${r.trial} attempt ${r.attempt}: ` +
    `${r.outcome} (${exit}) ${secs.toFixed(1)}s, ${requests}, ${spend}${coverage}${quarantined}${tail}`
  )
}

/**
 * The per-leg summary line over its final attempts, e.g.
 * `leg pi-s0 complete: 2/3 resolved, 1 unresolved, 0 infra_error, 0 ungraded; 4 attempts; 52.0s;
 * 12 requests, $0.0123 (telemetry complete for 3/3)`. Totals over attempts with unknown telemetry are
 * given as lower bounds (`≥`). With `session` (what this call of runLeg did) a resume is told apart:
 * `leg pi-s0 already complete (nothing to run): …; 52.0s recorded; …` when it ran no attempt, and
 * `…; 12.1s this session (2 attempts); …` when it ran some. Without it, the time is leg.json's
 * started_at → ended_at. Pure.
 */
export function formatLegSummary(
  leg: LegRecord,
  finals: readonly AttemptRecord[],
  session?: LegSession,
): string {
  const count = (o: AttemptRecord['outcome']): number => finals.filter((r) => r.outcome === o).length
  const planned = leg.planned_instances.length
  const pairs = finals.length
  const recorded = leg.ended_at ? (Date.parse(leg.ended_at) - Date.parse(leg.started_at)) / 1000 : 0
  const idle = session?.resumed === true && session.attempts === 0
  const state = idle
    ? leg.status === 'complete'
      ? 'already complete (nothing to run)'
      : `${leg.status} (nothing run)`
    : leg.status
  const time = !session?.resumed
    ? `${recorded.toFixed(1)}s`
    : idle
      ? `${recorded.toFixed(1)}s recorded`
      : `${session.seconds.toFixed(1)}s this session (${session.attempts} attempt${session.attempts === 1 ? '' : 's'})`
  const complete = finals.filter((r) => r.telemetry.coverage === 'complete').length
  const known = finals.filter((r) => r.telemetry.proxy_requests !== null)
  const requests = known.reduce((s, r) => s + (r.telemetry.proxy_requests ?? 0), 0)
  const priced = finals.filter((r) => r.telemetry.spend_usd !== null)
  const spend = priced.reduce((s, r) => s + (r.telemetry.spend_usd ?? 0), 0)
  const bound = (all: boolean): string => (all ? '' : '≥')
  const parts = [
    `leg ${leg.leg} ${state}: ${count('resolved')}/${pairs} resolved, ${count('unresolved')} unresolved, ` +
      `${count('infra_error')} infra_error, ${count('ungraded')} ungraded`,
    `${leg.attempts} attempt${leg.attempts === 1 ? '' : 's'} over ${planned} instance${planned === 1 ? '' : 's'}`,
    time,
    `${known.length > 0 ? `${bound(known.length === pairs)}${requests}` : 'unknown'} requests, ` +
      `${priced.length > 0 ? `${bound(priced.length === pairs)}$${spend.toFixed(4)}` : 'spend unknown'} ` +
      `(telemetry complete for ${complete}/${pairs})`,
  ]
  return parts.join('; ') + (leg.error ? ` — ${leg.error}` : '')
}

export interface ProgressReporter {
  onProgress(e: LegProgressEvent): void
  /** Stop the live bars (call once all legs have ended). */
  stop(): void
}

/**
 * Progress for one or several legs. On a TTY: a live bar per leg (done/total pairs, resolved so far,
 * elapsed, ETA) with attempt lines printed above the bars. Elsewhere (CI, pipes): one plain line per
 * finished attempt. Always a final summary line per leg.
 */
export function createProgressReporter(
  opts: { stream?: NodeJS.WriteStream; tty?: boolean } = {},
): ProgressReporter {
  const stream = opts.stream ?? process.stderr
  const tty = opts.tty ?? (stream.isTTY === true && !process.env.CI)
  if (!tty) {
    return {
      onProgress(e) {
        if (e.type === 'start' && e.done > 0)
          stream.write(`leg ${e.leg}: resuming, ${e.done}/${e.total} already done\n`)
        if (e.type === 'attempt')
          stream.write(`${formatAttemptLine(e.done, e.total, e.record, e.retrying)}\n`)
        if (e.type === 'end') stream.write(`${formatLegSummary(e.leg, e.finals, e.session)}\n`)
      },
      stop() {},
    }
  }
  const multi = new cliProgress.MultiBar(
    {
      stream,
      format:
        '{leg} [{bar}] {value}/{total} | resolved {resolved} | {duration_formatted} | ETA {eta_formatted}',
      hideCursor: true,
      clearOnComplete: false,
      etaBuffer: 20,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  )
  const bars = new Map<string, cliProgress.SingleBar>()
  return {
    onProgress(e) {
      if (e.type === 'start') {
        bars.set(e.leg, multi.create(e.total, e.done, { leg: e.leg, resolved: e.resolved }))
      } else if (e.type === 'attempt') {
        multi.log(`${formatAttemptLine(e.done, e.total, e.record, e.retrying)}\n`)
        bars.get(e.leg)?.update(e.done, { resolved: e.resolved })
      } else {
        multi.log(`${formatLegSummary(e.leg, e.finals, e.session)}\n`)
        bars.get(e.leg.leg)?.stop()
      }
    },
    stop() {
      // MultiBar.stop() drops lines still buffered by log(): flush them with a last redraw first.
      multi.update()
      multi.stop()
    },
  }
}
