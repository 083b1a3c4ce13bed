import type { Decision } from '../detect/schema.js'
import type { ExistingIssue } from './marked-issue.js'
import { type NoticeState, parseNoticeState } from './marker.js'

/** Label added when a tracked problem has cleared (tracking issues and health notices alike). */
export const RECOVERED_LABEL = 'recovered'

/** The label of an evaluation-health notice: never the label set of a regression tracking issue. */
export const EVALUATION_HEALTH_LABEL = 'evaluation-health'

/** What a decision may publish besides the PR comment. */
export interface NoticeChoice {
  /**
   * `regression`: a confirmed breach (a tracking issue, with the manifest's labels);
   * `evaluation_health`: infrastructure-only problems (health errors and no confirmed breach), a
   * notice with its own label, never a regression issue; null: nothing to publish.
   */
  kind: 'regression' | 'evaluation_health' | null
  labels: string[]
  /** The health messages the notice carries (errors first), empty for the other kinds. */
  problems: string[]
}

/**
 * Choose the kind and labels of what a decision publishes (pure). A confirmed breach is a regression
 * issue; a run whose only problems are evaluation health (failed legs, harnesses that never started,
 * cells not evaluated, low coverage) is an evaluation-health notice labelled
 * `evaluation-health` beside the manifest's first label — so a search for regression issues never
 * finds it; anything else publishes nothing.
 */
export function noticeKind(d: Decision): NoticeChoice {
  const labels = d.policy.reporting.labels
  if (d.status === 'confirmed') return { kind: 'regression', labels: [...labels], problems: [] }
  const errors = d.health.filter((h) => h.severity === 'error')
  if (errors.length === 0) return { kind: null, labels: [], problems: [] }
  return {
    kind: 'evaluation_health',
    labels: healthNoticeLabels(d),
    problems: errors.map((h) => `${h.code}: ${h.message}`),
  }
}

/** The labels of an experiment's evaluation-health notice: the manifest's first label and `evaluation-health`. */
export function healthNoticeLabels(d: Decision): string[] {
  const base = d.policy.reporting.labels[0] ?? 'harness-watch'
  return [base, EVALUATION_HEALTH_LABEL].filter((l, i, all) => all.indexOf(l) === i)
}

/**
 * What this run says about the experiment's evaluation health, for its notice:
 *  - `unhealthy`: health errors and no confirmed breach (noticeKind's `evaluation_health`);
 *  - `clean`: no health error at all (whatever the comparison found);
 *  - `untouched`: a confirmed breach with health errors — the regression issue carries them, and the
 *    notice is neither updated nor recovered (its health is not clean).
 */
export type NoticeRunStatus = 'unhealthy' | 'clean' | 'untouched'

export function noticeRunStatus(d: Decision): NoticeRunStatus {
  if (!d.health.some((h) => h.severity === 'error')) return 'clean'
  return noticeKind(d).kind === 'evaluation_health' ? 'unhealthy' : 'untouched'
}

export type NoticeAction =
  | { kind: 'none'; reason: string }
  | { kind: 'create'; state: NoticeState }
  | {
      kind: 'update'
      state: NoticeState
      reopen: boolean
      close: boolean
      comment: 'reopened' | 'recovered' | null
      addLabels: string[]
      removeLabels: string[]
    }

/**
 * What to do with the experiment's evaluation-health notice. Pure.
 *  - unhealthy: create the notice if there is none; otherwise update its body (and count the run),
 *    reopening it with a comment if it was closed or marked recovered (removing `recovered`);
 *  - clean: an open notice not yet recovered is marked recovered at once (label, comment, closed when
 *    `closeOnRecovery`) — health is a fact of the run, not a noisy estimate, so one clean run is
 *    enough; nothing is ever opened on a clean run;
 *  - untouched: nothing.
 */
export function planNotice(input: {
  existing: ExistingIssue | null
  status: NoticeRunStatus
  closeOnRecovery: boolean
  run: string | null
}): NoticeAction {
  const { existing, status } = input
  const prior = existing ? parseNoticeState(existing.body) : null
  if (status === 'untouched') {
    return { kind: 'none', reason: 'a confirmed regression: its tracking issue carries the health findings' }
  }
  if (status === 'unhealthy') {
    const state: NoticeState = {
      unhealthy_runs: (prior?.unhealthy_runs ?? 0) + 1,
      last_status: 'unhealthy',
      last_run: input.run,
      recovered: false,
    }
    if (!existing) return { kind: 'create', state }
    const reopened = existing.state === 'closed' || prior?.recovered === true
    return {
      kind: 'update',
      state,
      reopen: existing.state === 'closed',
      close: false,
      comment: reopened ? 'reopened' : null,
      addLabels: [],
      removeLabels: existing.labels.includes(RECOVERED_LABEL) ? [RECOVERED_LABEL] : [],
    }
  }
  if (!existing) return { kind: 'none', reason: 'evaluation health is clean and no notice is open' }
  if (existing.state === 'closed') return { kind: 'none', reason: 'the evaluation-health notice is closed' }
  if (prior?.recovered)
    return { kind: 'none', reason: 'the evaluation-health notice is already marked recovered' }
  return {
    kind: 'update',
    state: {
      unhealthy_runs: prior?.unhealthy_runs ?? 1,
      last_status: 'clean',
      last_run: input.run,
      recovered: true,
    },
    reopen: false,
    close: input.closeOnRecovery,
    comment: 'recovered',
    addLabels: existing.labels.includes(RECOVERED_LABEL) ? [] : [RECOVERED_LABEL],
    removeLabels: [],
  }
}
