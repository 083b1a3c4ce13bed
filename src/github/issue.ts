import type { ComparisonVerdict, Evidence } from '../detect/schema.js'
import { type Author, viewerLogin } from './comment.js'
import { applyIssueUpdate, createMarkedIssue, type ExistingIssue, findMarkedIssue } from './marked-issue.js'
import { parseState, type TrackingState } from './marker.js'
import { RECOVERED_LABEL } from './notice.js'
import type { GitHubClient, Repo } from './octokit.js'
import {
  confirmedComment,
  type RenderContext,
  recoveredComment,
  trackingIssueBody,
  trackingTitle,
} from './render.js'

export type { ExistingIssue } from './marked-issue.js'

/** Label added when a tracked regression has cleared for `recovered_after` consecutive runs. */
export { RECOVERED_LABEL } from './notice.js'

/** What this run says about one comparison key, for its tracking issue. */
export type KeyRunStatus = 'confirmed' | 'clean' | 'unconfirmed' | 'inconclusive'

/**
 * A comparison verdict as tracking-issue input: a confirmed breach, or weekly evidence that has crossed
 * its bound (detect/evidence.ts), opens or updates an issue — the evidence even when no single week's
 * rerun confirmed, and a cleared week never counts as clean once the bound was crossed. An evaluation
 * that failed this run stays inconclusive (not evidence either way).
 */
export function keyRunStatus(v: ComparisonVerdict, evidence?: Evidence | null): KeyRunStatus {
  if (evidence?.sufficient && v.status !== 'inconclusive') return 'confirmed'
  switch (v.status) {
    case 'confirmed':
      return 'confirmed'
    case 'ok':
    case 'cleared':
      return 'clean'
    case 'breach':
      return 'unconfirmed'
    default:
      return 'inconclusive'
  }
}

export type TrackingAction =
  | { kind: 'none'; reason: string }
  | { kind: 'create'; state: TrackingState }
  | {
      kind: 'update'
      state: TrackingState
      reopen: boolean
      close: boolean
      comment: 'confirmed' | 'recovered' | null
      addLabels: string[]
      removeLabels: string[]
    }

/**
 * What to do with the tracking issue of one key, given this run's status. Pure.
 *  - confirmed: create the issue if there is none; otherwise update its body, add a comment (edits
 *    notify nobody: conbench#307) and reopen it if closed, removing `recovered` (Beam pattern: no
 *    duplicates);
 *  - clean (ok or cleared): count a clean run on an open issue; after `recoveredAfter` in a row,
 *    label it `recovered`, comment, and close it when `closeOnRecovery`; never opens anything;
 *  - unconfirmed or inconclusive: nothing — an unconfirmed signal never opens or touches the issue
 *    (F08), and an evaluation failure is not evidence either way (F06).
 */
export function planTracking(input: {
  existing: ExistingIssue | null
  status: KeyRunStatus
  recoveredAfter: number
  closeOnRecovery: boolean
  run: string | null
}): TrackingAction {
  const { existing, status } = input
  const prior = existing ? parseState(existing.body) : null
  if (status === 'confirmed') {
    const state: TrackingState = {
      clean_runs: 0,
      confirmed_breaches: (prior?.confirmed_breaches ?? 0) + 1,
      last_status: 'confirmed',
      last_run: input.run,
      recovered: false,
    }
    if (!existing) return { kind: 'create', state }
    return {
      kind: 'update',
      state,
      reopen: existing.state === 'closed',
      close: false,
      comment: 'confirmed',
      addLabels: [],
      removeLabels: existing.labels.includes(RECOVERED_LABEL) ? [RECOVERED_LABEL] : [],
    }
  }
  if (status !== 'clean') return { kind: 'none', reason: `${status}: the tracking issue is not touched` }
  if (!existing) return { kind: 'none', reason: 'no breach has been confirmed for this comparison' }
  if (existing.state === 'closed') return { kind: 'none', reason: 'the tracking issue is closed' }
  const before: TrackingState = prior ?? {
    clean_runs: 0,
    confirmed_breaches: 1,
    last_status: 'confirmed',
    last_run: null,
    recovered: false,
  }
  if (before.recovered) return { kind: 'none', reason: 'already marked recovered' }
  const state: TrackingState = {
    ...before,
    clean_runs: before.clean_runs + 1,
    last_status: 'clean',
    last_run: input.run,
  }
  if (state.clean_runs >= input.recoveredAfter) {
    return {
      kind: 'update',
      state: { ...state, recovered: true },
      reopen: false,
      close: input.closeOnRecovery,
      comment: 'recovered',
      addLabels: [RECOVERED_LABEL],
      removeLabels: [],
    }
  }
  return {
    kind: 'update',
    state,
    reopen: false,
    close: false,
    comment: null,
    addLabels: [],
    removeLabels: [],
  }
}

/**
 * Find the tracking issue of `key` (findMarkedIssue with the `tracking` marker): every issue carrying
 * ALL of `labels`, open and closed, whose first line is our marker for that key and whose author is ours.
 */
export function findTrackingIssue(
  gh: GitHubClient,
  repo: Repo,
  key: string,
  labels: string | string[],
  author: Author = null,
): Promise<ExistingIssue | null> {
  return findMarkedIssue(gh, repo, { kind: 'tracking', key }, labels, author)
}

export interface TrackingResult {
  key: string
  action: 'created' | 'updated' | 'reopened' | 'recovered' | 'none'
  number: number | null
  url: string | null
  reason: string | null
}

/**
 * Bring the tracking issue of one comparison key up to date with this run. Writes are sequential
 * (GitHub's secondary limits: 80 content-creating requests per minute). Errors are HwErrors naming
 * the missing permission (issues: write) or GitHub's 422 message — a visible failure, never a
 * silently skipped issue.
 */
export async function syncTrackingIssue(
  gh: GitHubClient,
  repo: Repo,
  ctx: RenderContext,
  verdict: ComparisonVerdict,
  opts: { labels: string[]; recoveredAfter: number; closeOnRecovery: boolean; author?: Author },
): Promise<TrackingResult> {
  const key = verdict.key
  const labels = opts.labels.length > 0 ? opts.labels : ['harness-watch']
  const author = opts.author === undefined ? await viewerLogin(gh) : opts.author
  const existing = await findTrackingIssue(gh, repo, key, labels, author)
  const action = planTracking({
    existing,
    status: keyRunStatus(verdict, ctx.decision.evidence?.find((e) => e.key === key) ?? null),
    recoveredAfter: opts.recoveredAfter,
    closeOnRecovery: opts.closeOnRecovery,
    run: ctx.decision.run_id,
  })
  if (action.kind === 'none') {
    return {
      key,
      action: 'none',
      number: existing?.number ?? null,
      url: existing?.html_url ?? null,
      reason: action.reason,
    }
  }
  const body = trackingIssueBody(ctx, key, action.state)
  if (action.kind === 'create') {
    const created = await createMarkedIssue(gh, repo, {
      what: 'the tracking issue',
      identity: { kind: 'tracking', key },
      title: trackingTitle(ctx.decision, verdict),
      body,
      labels,
      author,
    })
    return { key, action: 'created', number: created.number, url: created.html_url, reason: null }
  }
  const number = (existing as ExistingIssue).number
  const comment =
    action.comment === 'confirmed'
      ? confirmedComment(ctx, key, action.reopen)
      : action.comment === 'recovered'
        ? recoveredComment(ctx, action.state, action.close)
        : null
  await applyIssueUpdate(gh, repo, number, 'the tracking issue', {
    body,
    reopen: action.reopen,
    close: action.close,
    comment,
    addLabels: action.addLabels,
    removeLabels: action.removeLabels,
  })
  const kind = action.reopen ? 'reopened' : action.comment === 'recovered' ? 'recovered' : 'updated'
  return { key, action: kind, number, url: (existing as ExistingIssue).html_url, reason: null }
}
